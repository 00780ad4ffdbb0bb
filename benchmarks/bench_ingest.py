"""Benchmark ``idxadvisor analyze`` on large generated logs against a bare baseline measured in the same run.

    python benchmarks/bench_ingest.py                  # 200 MB JSON log and 200 MB text log
    python benchmarks/bench_ingest.py --size-mb 1000   # any size
    python benchmarks/bench_ingest.py --kinds json --memory-sizes 50,400

For each log it prints throughput (MB/s), wall time, the ratio to the baseline, and the peak memory of the whole
process tree, workers included: proportional set size (PSS, each page a forked worker shares with its parent counted
once) and resident set size (RSS, shared pages counted in every process). The baseline is one process reading the
file and parsing every slow-query line with orjson (JSON logs) or matching every slow-operation line with a regular
expression (text logs); it does no shaping, no statistics and no output. ``--memory-sizes`` runs ``analyze`` at
several sizes to show that peak memory does not grow with the input. Generated logs are cached in ``bench-data/``.

Targets on a 2-core machine: JSON within 1.5x the baseline's wall time (1.0x the aim); text at 50 MB/s or more;
peak memory (PSS) under 250 MB at any size.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench-data"
sys.path.insert(0, str(ROOT / "benchmarks"))
import generate_logs  # noqa: E402
from bench_memory import tree  # noqa: E402
from precompile import compile_package  # noqa: E402

JSON_BASELINE = """
import sys, orjson
with open(sys.argv[1], 'rb') as handle:
    for line in handle:
        if b'"id":51803' in line:
            orjson.loads(line)
"""
TEXT_BASELINE = r"""
import re, sys
slow = re.compile(r'^\S+ \S+\s+\S+\s+\[[^\]]+\] (?:query|getmore|update|remove|insert|command|killcursors) \S+ .* \d+ms$')
with open(sys.argv[1], encoding='utf-8', errors='replace') as handle:
    for line in handle:
        slow.match(line)
"""


def _memory(pid: int) -> tuple[int, int]:
    """(resident bytes, proportional bytes) of one process: RSS counts the pages a forked worker shares with its
    parent in both; PSS divides each shared page among its sharers, so a tree's PSS sums to what it really holds."""
    resident = proportional = 0
    try:
        with open(f"/proc/{pid}/statm", encoding="ascii") as handle:
            resident = int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("Pss:"):
                    proportional = int(line.split()[1]) * 1024
                    break
    except (OSError, IndexError, ValueError):
        pass
    return resident, proportional or resident


def measure(command: list[str]) -> tuple[float, int, int, int]:
    """(wall seconds, peak tree RSS bytes, peak tree PSS bytes, exit code) of a command."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak_rss = peak_pss = 0
    while process.poll() is None:
        sizes = [_memory(member) for member in tree(process.pid)]
        peak_rss = max(peak_rss, sum(rss for rss, _ in sizes))
        peak_pss = max(peak_pss, sum(pss for _, pss in sizes))
        time.sleep(0.02)
    elapsed = time.perf_counter() - started
    stderr = process.stderr.read().decode("utf-8", "replace") if process.stderr else ""
    if process.returncode not in (0, 1):
        print(stderr, file=sys.stderr)
    return elapsed, peak_rss, peak_pss, process.returncode


def ensure_log(kind: str, size_mb: float, slow_fraction: float) -> Path:
    DATA.mkdir(exist_ok=True)
    path = DATA / f"{kind}-{size_mb:g}mb-{slow_fraction:g}.log"
    if not path.exists():
        started = time.perf_counter()
        generate_logs.write(kind, path, size_mb, slow_fraction)
        print(f"generated {path.name} ({path.stat().st_size / 2**20:.0f} MB) in {time.perf_counter() - started:.1f} s")
    return path


def warm_page_cache(path: Path) -> None:
    with open(path, "rb") as handle:
        while handle.read(1 << 24):
            pass


def analyze_command(path: Path, jobs: int | None) -> list[str]:
    command = [sys.executable, "-m", "idxadvisor", "analyze", str(path), "--format", "json", "--output", os.devnull]
    return command + (["--jobs", str(jobs)] if jobs else [])


def bench(kind: str, size_mb: float, slow_fraction: float, jobs: int | None) -> None:
    path = ensure_log(kind, size_mb, slow_fraction)
    megabytes = path.stat().st_size / 2**20
    baseline = JSON_BASELINE if kind == "json" else TEXT_BASELINE
    warm_page_cache(path)  # else the baseline, run first, pays the disk and looks slower than it is
    base_seconds, _, base_peak, _ = measure([sys.executable, "-c", baseline, str(path)])
    seconds, rss, pss, code = measure(analyze_command(path, jobs))
    print(f"{kind:5} {megabytes:8.0f} MB  baseline {base_seconds:6.2f} s ({megabytes / base_seconds:6.1f} MB/s, "
          f"{base_peak / 2**20:4.0f} MB)  analyze {seconds:6.2f} s ({megabytes / seconds:6.1f} MB/s)  "
          f"ratio {seconds / base_seconds:4.2f}x  peak PSS {pss / 2**20:5.0f} MB (RSS {rss / 2**20:5.0f} MB)  "
          f"exit {code}")


def memory_scaling(kind: str, sizes: list[float], slow_fraction: float, jobs: int | None) -> None:
    for size in sizes:
        path = ensure_log(kind, size, slow_fraction)
        seconds, rss, pss, _ = measure(analyze_command(path, jobs))
        print(f"{kind:5} {path.stat().st_size / 2**20:8.0f} MB  analyze {seconds:6.2f} s  "
              f"peak PSS {pss / 2**20:5.0f} MB (RSS {rss / 2**20:5.0f} MB)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=float, default=200)
    parser.add_argument("--slow-fraction", type=float, default=0.1)
    parser.add_argument("--kinds", default="json,text")
    parser.add_argument("--jobs", type=int, default=None)
    parser.add_argument("--memory-sizes", default="", help="comma-separated sizes in MB for the memory check")
    arguments = parser.parse_args()
    compile_package()  # see precompile.py: time runs, not bytecode compilation
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores")
    for kind in arguments.kinds.split(","):
        bench(kind, arguments.size_mb, arguments.slow_fraction, arguments.jobs)
        if arguments.memory_sizes:
            memory_scaling(kind, [float(size) for size in arguments.memory_sizes.split(",")],
                           arguments.slow_fraction, arguments.jobs)


if __name__ == "__main__":
    main()
