"""``analyze --jobs 1`` against ``--jobs N`` on the same logs, runs alternated, medians.

    python benchmarks/bench_jobs.py LOG [LOG …] [--jobs 1,2] [--repeat 3]

For each log and each ``--jobs`` value: the median wall time, the CPU time of the whole process tree and of the main
process alone (``bench_memory.measure``), and each value's wall time as a fraction of the first's (the target for two
workers on two cores: 0.58 or less). Runs are alternated (1, 2, 1, 2, …) so that a neighbour's load on a shared
machine hits every value alike; on a busy machine compare the CPU columns too: the main process's CPU is what stays
serial, and the tree's over the cores is the floor of the wall time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_memory import Measured, analyze_command, measure  # noqa: E402
from precompile import compile_package  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("logs", type=Path, nargs="+")
    parser.add_argument("--jobs", default="1,2")
    parser.add_argument("--repeat", type=int, default=3)
    arguments = parser.parse_args()
    compile_package()
    values = [int(value) for value in arguments.jobs.split(",")]
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; medians of "
          f"{arguments.repeat} alternated runs")
    for path in arguments.logs:
        runs: dict[int, list[Measured]] = {jobs: [] for jobs in values}
        for _ in range(arguments.repeat):
            for jobs in values:
                runs[jobs].append(measure(analyze_command(path, jobs)))
        first = statistics.median(run.seconds for run in runs[values[0]])
        for jobs in values:
            wall = statistics.median(run.seconds for run in runs[jobs])
            tree = statistics.median(run.tree_cpu for run in runs[jobs])
            main_cpu = statistics.median(run.main_cpu for run in runs[jobs])
            print(f"{path.name:28} {path.stat().st_size / 2**20:6.0f} MB  --jobs {jobs:<2} {wall:6.2f} s "
                  f"({wall / first:4.2f})  CPU tree {tree:6.2f} s, main {main_cpu:6.2f} s  "
                  f"[{', '.join(f'{run.seconds:.2f}' for run in runs[jobs])}]")


if __name__ == "__main__":
    main()
