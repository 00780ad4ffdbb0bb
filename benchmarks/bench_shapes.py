"""Benchmark how analysis grows with the number of distinct shapes on one collection (not with bytes).

Usage: ``python benchmarks/bench_shapes.py [--shapes 1000 5000 20000] [--runs 3] [--memory]``

Writes, for each count, a JSON log of that many distinct find shapes on one collection (1-4 of 60 fields, equalities
and ranges, some sorted), each run 3 times as a collection scan, so that every shape gets an index suggestion and
the engine must decide which suggestions share an index. Prints the seconds ``analyze`` takes (in this process, one
job, the median of ``--runs``) with the workload's index set (the default) and with per-finding advice (the
baseline, measured in the same run), the findings and suggested indexes of each, the time per shape, and the growth
factor from one count to the next against the growth in shapes: linear growth has the two equal. (Per-finding advice
suggests hundreds of indexes for the one collection; the set stops at the server's 64.)

``--memory`` adds, for each count, the peak memory (PSS) of ``idxadvisor analyze --format json`` run once as a new
process, and its cost per shape: the issue's bound is 250 MB for 100,000 shapes, 2.5 KB a shape.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_ingest import measure  # noqa: E402
from idxadvisor.api import analyze  # noqa: E402
from idxadvisor.config import Settings  # noqa: E402
from tests.helpers import json_line, slow_attr  # noqa: E402
from precompile import compile_package  # noqa: E402

FIELDS = [f"f{number}" for number in range(60)]


def write_log(path: Path, shapes: int) -> None:
    rng = random.Random(1)
    seen: set[str] = set()
    with path.open("w") as out:
        while len(seen) < shapes:
            chosen = rng.sample(FIELDS, rng.randint(1, 4))
            command: dict = {"find": "c", "filter": {name: ({"$gt": 1} if rng.random() < 0.3 else 1)
                                                     for name in chosen}}
            if rng.random() < 0.3:
                command["sort"] = {rng.choice(FIELDS): -1}
            signature = repr(command)
            if signature in seen:
                continue
            seen.add(signature)
            second = len(seen) % 3600
            for run in range(3):
                attr = slow_attr(command, ns="db.c", docsExamined=50_000, nreturned=1)
                out.write(json_line(attr, ctx=f"conn{run}", ts=f"2025-01-01T{10 + second // 3600:02d}:"
                                    f"{second // 60 % 60:02d}:{second % 60:02d}.{run:03d}+00:00") + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shapes", type=int, nargs="+", default=[1_000, 5_000, 20_000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--memory", action="store_true", help="also print the peak memory of a command-line run")
    arguments = parser.parse_args()
    if arguments.memory:  # the one measure taken from a new process
        compile_package()  # see precompile.py: time runs, not bytecode compilation
    previous: tuple[int, float] | None = None
    print(f"{'shapes':>8} {'mode':>12} {'seconds':>8} {'findings':>9} {'indexes':>8} {'ms/shape':>9}  growth (time / "
          "shapes)")
    with tempfile.TemporaryDirectory() as folder:
        for count in arguments.shapes:
            path = Path(folder) / f"shapes-{count}.log"
            write_log(path, count)
            for mode in ("per-finding", "workload"):
                timings = []
                for _ in range(arguments.runs):
                    start = time.perf_counter()
                    report = analyze([str(path)], Settings(format="json", jobs=1, fail_on="never",
                                                           index_selection=mode))
                    timings.append(time.perf_counter() - start)
                seconds = statistics.median(timings)
                growth = ""
                if mode == "workload" and previous is not None:
                    growth = f"x{seconds / previous[1]:.1f} / x{count / previous[0]:.1f}"
                print(f"{count:>8,} {mode:>12} {seconds:>8.2f} {len(report.findings):>9,} "
                      f"{len(report.suggested_indexes):>8,} {seconds / count * 1000:>9.2f}  {growth}")
            previous = (count, seconds)
            if arguments.memory:
                print_memory(path, count)


def print_memory(path: Path, count: int) -> None:
    command = [sys.executable, "-m", "idxadvisor", "analyze", str(path), "--format", "json", "--fail-on", "never"]
    seconds, _, peak_pss, code = measure(command)
    print(f"{count:>8,} {'memory':>12} {seconds:>8.2f}  peak PSS {peak_pss / 2**20:,.0f} MB, "
          f"{peak_pss / count / 1024:.1f} KB per shape (exit {code})")


if __name__ == "__main__":
    main()
