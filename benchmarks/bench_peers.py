"""Benchmark ``idxadvisor analyze`` on realistic logs against a bare baseline and against the peers, in one run.

    python benchmarks/bench_peers.py                         # the corpus-built logs, idxadvisor and the baseline
    python benchmarks/bench_peers.py --mdbkit /path/to/mdbkit --mloginfo /path/to/mloginfo --runs 5

The logs are built from the shared corpus's real logs by ``corpus_logs.py`` (cached in ``bench-data/``): a 160 MB
8.x JSON log and 17 MB and 200 MB 4.0 text logs. For each it prints the median wall time of ``--runs`` runs of:

* the bare baseline, one process reading the file and ``orjson``-decoding every slow-query line (JSON), or matching
  every slow-operation line with a regular expression (text): no shaping, no statistics, no output;
* ``idxadvisor analyze --format json`` (all cores, and one process);
* the peers, when given: ``mdbkit queries --json`` (JSON logs; mdbkit reads no text logs) and ``mloginfo --queries``
  (mtools 1.7.2; text logs; run on a pseudo-terminal, since it refuses a stdin that is not one).

Install the peers in a virtual environment of their own: ``pip install mdbkit 'mtools==1.7.2' python-dateutil``.
Ratios are against the baseline (idxadvisor) and against idxadvisor (the peers).
"""

from __future__ import annotations

import argparse
import os
import pty
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench-data"
sys.path.insert(0, str(ROOT / "benchmarks"))
import corpus_logs  # noqa: E402
from bench_ingest import JSON_BASELINE, TEXT_BASELINE  # noqa: E402
from precompile import compile_package  # noqa: E402

LOGS = (("json", 160), ("text", 17), ("text", 200))


def ensure(kind: str, size_mb: int) -> Path:
    DATA.mkdir(exist_ok=True)
    path = DATA / f"corpus-{kind}-{size_mb}.log"
    if not path.exists():
        corpus_logs.write(kind, path, size_mb)
    return path


def wall(command: list[str], on_terminal: bool = False) -> float:
    """Seconds the command takes, its output thrown away (stdin a pseudo-terminal when asked)."""
    primary, secondary = pty.openpty() if on_terminal else (None, None)
    started = time.perf_counter()
    completed = subprocess.run(command, stdin=secondary if on_terminal else subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - started
    if primary is not None:
        os.close(primary)
        os.close(secondary)  # type: ignore[arg-type]
    if completed.returncode not in (0, 1):
        sys.stderr.write(completed.stderr.decode("utf-8", "replace")[-2000:])
    return elapsed


def median(command: list[str], runs: int, on_terminal: bool = False) -> float:
    return statistics.median(wall(command, on_terminal) for _ in range(runs))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--mdbkit", default=shutil.which("mdbkit"))
    parser.add_argument("--mloginfo", default=shutil.which("mloginfo"))
    arguments = parser.parse_args()
    compile_package()  # see precompile.py: time runs, not bytecode compilation
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores, median of {arguments.runs} runs")
    for kind, size in LOGS:
        path = ensure(kind, size)
        megabytes = path.stat().st_size / 2**20
        baseline = median([sys.executable, "-c", JSON_BASELINE if kind == "json" else TEXT_BASELINE, str(path)],
                          arguments.runs)
        analyze = [sys.executable, "-m", "idxadvisor", "analyze", str(path), "--format", "json", "-o", os.devnull]
        ours = median(analyze, arguments.runs)
        ours_one = median(analyze + ["--jobs", "1"], arguments.runs)
        print(f"{kind} {megabytes:4.0f} MB  baseline {baseline:6.2f} s   idxadvisor {ours:6.2f} s "
              f"({megabytes / ours:5.1f} MB/s, {ours / baseline:4.1f}x the baseline; one process {ours_one:6.2f} s)")
        if kind == "json" and arguments.mdbkit:
            peer = median([arguments.mdbkit, "queries", "--json", str(path)], arguments.runs)
            print(f"{'':9}  mdbkit queries      {peer:6.2f} s: idxadvisor is {peer / ours:4.1f}x faster")
        if kind == "text" and arguments.mloginfo:
            peer = median([arguments.mloginfo, "--queries", str(path)], arguments.runs, on_terminal=True)
            print(f"{'':9}  mloginfo --queries  {peer:6.2f} s: idxadvisor is {peer / ours:4.1f}x faster")


if __name__ == "__main__":
    main()
