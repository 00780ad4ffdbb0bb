"""Where one ``idxadvisor`` run spends its time, phase by phase, measured inside the process.

    python benchmarks/bench_phases.py [--repeat 3] -- analyze LOG --jobs 16 --format json -o R

Each run is a fresh interpreter (start-up included) that times the imports, then the pipeline's phases by wrapping
their functions: reading (``read_inputs``; inside it, the wait for the tasks' results and their merges, of which
the merges left when an input's last task is in, ``Runner._close``, and the pool's shutdown), the inventory, the
rules, the report's models, the whole advice (``_advise``) and what is left (rendering, writing). With two or three
jobs this process parses a share of the tasks itself: inside "read", outside the wait. Medians of ``--repeat`` runs,
in seconds; the main process's CPU time says how much of the run's wall time is serial.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

CHILD = r"""
import json, os, sys, time
started = time.perf_counter()
cpu_started = time.process_time()
main_pid = os.getpid()
import idxadvisor.api as api
import idxadvisor.parse.run as run_module
from idxadvisor.cli.app import run
imported = time.perf_counter()
spent = {}
def timed(owner, name, label):
    original = getattr(owner, name)
    def wrapper(*args, **kwargs):
        begun = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            if os.getpid() == main_pid:
                spent[label] = spent.get(label, 0.0) + time.perf_counter() - begun
    setattr(owner, name, wrapper)
timed(api, "read_inputs", "read")
timed(api, "build_inventory", "inventory")
timed(api, "run_rules", "rules")
timed(api, "build_report", "report models")
timed(api, "_advise", "advice")
timed(run_module.Runner, "_close", "read: final merges")
timed(run_module.Runner, "_merge_oldest", "read: waiting and merging")
from concurrent.futures import ProcessPoolExecutor
timed(ProcessPoolExecutor, "shutdown", "read: pool shutdown")
def leave(code):
    if os.getpid() != main_pid:
        os._exit_original(code)
    raise SystemExit(code)
os._exit_original, os._exit = os._exit, leave
sys.argv = ["idxadvisor", *sys.argv[1:]]
stdout, sys.stdout = sys.stdout, open(os.devnull, "w")
try:
    run()
except SystemExit:
    pass
sys.stdout = stdout
spent["start-up"] = imported - started
spent["total"] = time.perf_counter() - started
spent["main CPU"] = time.process_time() - cpu_started
spent["rest (render, write)"] = spent["total"] - spent["start-up"] - spent.get("read", 0) - spent.get("advice", 0)
print(json.dumps(spent))
"""

ORDER = ("start-up", "read", "read: waiting and merging", "read: final merges", "read: pool shutdown", "advice",
         "inventory", "rules", "report models", "rest (render, write)", "total", "main CPU")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("command", nargs="+", help="idxadvisor's arguments, after --")
    arguments = parser.parse_args()
    runs = []
    for _ in range(arguments.repeat):
        done = subprocess.run([sys.executable, "-c", CHILD, *arguments.command], capture_output=True, text=True,
                              check=False)
        lines = done.stdout.strip().splitlines()
        if done.returncode != 0 or not lines:
            sys.exit(f"the run failed ({done.returncode}): {done.stderr.strip()[-500:]}")
        runs.append(json.loads(lines[-1]))
    print(f"{' '.join(arguments.command)}: medians of {len(runs)}")
    for phase in ORDER:
        values = [run[phase] for run in runs if phase in run]
        if values:
            print(f"  {phase:<28} {statistics.median(values):7.3f} s   ({', '.join(f'{v:.2f}' for v in values)})")


if __name__ == "__main__":
    main()
