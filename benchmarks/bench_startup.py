"""Benchmark start-up: ``idxadvisor analyze small.log --format json`` against ``python -c pass``, in one run.

Usage: ``python benchmarks/bench_startup.py [--runs N]``

Writes a small 8.0 JSON log (the demo log's first 200 lines) and prints the median wall time of ``--runs`` runs of:

* ``python -c pass``, the interpreter alone (the baseline);
* ``python -c "import typer, typer._adapters"``: the command-line framework, which builds a pydantic adapter per
  option, so pydantic comes with it: the floor any Typer command line pays;
* ``python -m idxadvisor --help`` and ``python -m idxadvisor analyze small.log --format json``;

each as milliseconds and as milliseconds over the baseline (the issue's measure: within 150 ms of ``python -c pass``).
``--imports`` adds where the analyze run's import time goes, by top-level package (``python -X importtime``).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from precompile import compile_package

ROOT = Path(__file__).resolve().parents[1]
DEMO_LOG = ROOT / "fixtures" / "demo" / "shop.log"


def wall_ms(command: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def import_breakdown(command: list[str]) -> Counter[str]:
    """Self import time (ms) by top-level package, from ``-X importtime`` (which adds its own overhead)."""
    completed = subprocess.run([command[0], "-X", "importtime", *command[1:]], capture_output=True, text=True,
                               check=False)
    totals: Counter[str] = Counter()
    for line in completed.stderr.splitlines():
        match = re.match(r"import time:\s+(\d+) \|\s+\d+ \|\s+(\S+)", line)
        if match:
            totals[match.group(2).split(".")[0]] += int(match.group(1)) / 1000
    return totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--imports", action="store_true", help="also print import time by package")
    arguments = parser.parse_args()
    compile_package()  # see precompile.py: time runs, not bytecode compilation
    with tempfile.TemporaryDirectory() as directory:
        small = Path(directory) / "small.log"
        with DEMO_LOG.open("rb") as demo:
            small.write_bytes(b"".join(demo.readline() for _ in range(200)))
        python = sys.executable
        analyze = [python, "-m", "idxadvisor", "analyze", str(small), "--format", "json", "-o", os.devnull]
        baseline = wall_ms([python, "-c", "pass"], arguments.runs)
        print(f"python {sys.version.split()[0]}, median of {arguments.runs} runs")
        print(f"{'python -c pass':42} {baseline:6.1f} ms")
        for label, command in (("import typer (with its pydantic adapters)",
                                [python, "-c", "import typer, typer._adapters"]),
                               ("idxadvisor --help", [python, "-m", "idxadvisor", "--help"]),
                               ("idxadvisor analyze small.log --format json", analyze)):
            took = wall_ms(command, arguments.runs)
            print(f"{label:42} {took:6.1f} ms  ({took - baseline:+6.1f} ms over python)")
        if arguments.imports:
            for package, milliseconds in import_breakdown(analyze).most_common(12):
                print(f"  imports of {package:28} {milliseconds:6.1f} ms (self, with -X importtime's overhead)")


if __name__ == "__main__":
    main()
