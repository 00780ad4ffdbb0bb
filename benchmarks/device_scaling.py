"""How ``analyze`` scales with cores and on a local Dask cluster: one table, one run (``device_scaling.sh`` runs it).

    python benchmarks/device_scaling.py LOG [--jobs 1,2,4,8,16] [--dask-workers 16] [--repeat 3] [--out DIR]

On one log: the bare loop (read the file, ``orjson.loads`` every slow-query line: the floor), then
``idxadvisor analyze LOG --format json`` with each ``--jobs`` value (runs alternated, medians), then the same command
with ``--dask-scheduler`` on a ``LocalCluster`` of N single-threaded worker processes on the loopback. Each row: the
median wall time, the speed-up over ``--jobs 1``, the ratio to the bare loop, the CPU time of the process tree and of
the main process alone (what stays serial), and the peak PSS of the tree. Every run's JSON report must list the same
shapes and operations as ``--jobs 1``'s (checked). The table is printed and written to DIR/scaling.txt.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_memory import Measured, measure  # noqa: E402

BARE_LOOP = """
import sys, orjson
with open(sys.argv[1], 'rb') as handle:
    for line in handle:
        if b'"id":51803' in line:
            orjson.loads(line)
"""
RUN_TIMEOUT = 150  # seconds: a hung run must not eat the machine's time
SAMPLE_EVERY = 0.05  # seconds between memory samples: reading 17 processes' smaps costs a core a few per cent


def analyze(path: Path, report: Path, *options: str) -> list[str]:
    return [sys.executable, "-m", "idxadvisor", "analyze", str(path), "--format", "json", "--output", str(report),
            "--fail-on", "never", *options]


def fingerprint(report: Path) -> tuple[int, int, str]:
    """(shapes, operations, a digest of every shape's statistics) of a JSON report: the same for every way of
    reading one log (a run that failed has none)."""
    try:
        shapes = json.loads(report.read_text()).get("shapes") or []
    except (OSError, ValueError):
        return 0, 0, "no report"
    for shape in shapes:  # the copies of the corpus-built log overlap in time (its sources start together), so
        shape.pop("plan_switches", None)  # which execution follows which, a plan change, depends on the cuts
    text = json.dumps(shapes, sort_keys=True).encode()
    return len(shapes), sum(item.get("count", 0) for item in shapes), hashlib.sha256(text).hexdigest()[:12]


def row(label: str, runs: list[Measured], one_job: float | None, bare: float) -> str:
    wall = statistics.median(run.seconds for run in runs)
    tree = statistics.median(run.tree_cpu for run in runs)
    main = statistics.median(run.main_cpu for run in runs)
    pss = max(run.peak_pss for run in runs) / 2**20
    speedup = f"{one_job / wall:5.2f}x" if one_job else "     -"
    return (f"| {label:26} | {wall:7.2f} s | {speedup} | {wall / bare:5.2f}x | {tree:7.2f} s | {main:6.2f} s | "
            f"{pss:6.0f} MB | {', '.join(f'{run.seconds:.2f}' for run in runs)} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("log", type=Path)
    parser.add_argument("--jobs", default="1,2,4,8,16")
    parser.add_argument("--dask-workers", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ".")))
    arguments = parser.parse_args()
    path = arguments.log
    megabytes = path.stat().st_size / 2**20
    heading = (f"python {sys.version.split()[0]}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; "
               f"{path.name}: {megabytes:.0f} MB; medians of {arguments.repeat} (alternated)")
    lines = [heading,
             "| run | wall | vs --jobs 1 | vs bare loop | CPU, tree | CPU, main | peak PSS | runs |",
             "|---|--:|--:|--:|--:|--:|--:|---|"]

    def emit(text: str) -> None:
        lines.append(text)
        print(text, flush=True)

    for text in lines:
        print(text, flush=True)
    scratch = Path(tempfile.mkdtemp(prefix="scaling-"))
    with open(path, "rb") as handle:  # the page cache, for every run alike
        while handle.read(1 << 24):
            pass
    bare_runs = [measure([sys.executable, "-c", BARE_LOOP, str(path)], interval=SAMPLE_EVERY, timeout=RUN_TIMEOUT)
                 for _ in range(arguments.repeat)]
    bare = statistics.median(run.seconds for run in bare_runs)
    values = [int(value) for value in arguments.jobs.split(",")]
    runs: dict[int, list[Measured]] = {jobs: [] for jobs in values}
    expected: tuple[int, int, str] | None = None
    for _ in range(arguments.repeat):
        for jobs in values:
            report = scratch / f"jobs-{jobs}.json"
            runs[jobs].append(measure(analyze(path, report, "--jobs", str(jobs)), interval=SAMPLE_EVERY,
                                      timeout=RUN_TIMEOUT))
            found = fingerprint(report)
            expected = expected or found
            if found != expected:
                emit(f"MISMATCH: --jobs {jobs} gave {found} (shapes, operations, statistics), --jobs {values[0]} "
                     f"{expected}")
    one_job = statistics.median(run.seconds for run in runs[values[0]]) if values[0] == 1 else None
    emit(row("bare orjson loop", bare_runs, None, bare))
    for jobs in values:
        emit(row(f"--jobs {jobs}", runs[jobs], one_job, bare))
    if arguments.dask_workers:
        for line in dask_rows(path, scratch, arguments.dask_workers, arguments.repeat, one_job, bare, expected):
            emit(line)
        emit("(Dask rows: CPU and peak PSS are the client's alone; the workers belong to the cluster's processes)")
    arguments.out.mkdir(parents=True, exist_ok=True)
    (arguments.out / "scaling.txt").write_text("\n".join(lines) + "\n")


#: Dask block sizes tried: the default (32 MiB, few ranged GETs on S3) and a local run's (8 MiB, tasks as even).
DASK_BLOCKS = (32 * 2**20, 8 * 2**20)


def dask_rows(path: Path, scratch: Path, workers: int, repeat: int, one_job: float | None, bare: float,
              expected: tuple[int, int, str] | None) -> list[str]:
    try:
        from distributed import LocalCluster
    except ImportError as exc:
        return [f"| Dask, {workers} workers | not run: {exc} |"]
    rows = []
    started = time.perf_counter()
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster:
        ready = time.perf_counter() - started
        for block in DASK_BLOCKS:
            runs = []
            for attempt in range(repeat):
                report = scratch / f"dask-{block}-{attempt}.json"
                runs.append(measure(analyze(path, report, "--dask-scheduler", cluster.scheduler_address,
                                            "--dask-block-size", str(block)), interval=SAMPLE_EVERY,
                                    timeout=RUN_TIMEOUT))
                if expected is not None and fingerprint(report) != expected:
                    rows.append(f"| Dask, {workers} workers, {block >> 20} MiB blocks | MISMATCH: "
                                f"{fingerprint(report)} against {expected} |")
            rows.append(row(f"Dask, {workers} w., {block >> 20} MiB blocks", runs, one_job, bare))
    rows.append(f"(the cluster of {workers} single-threaded workers was up in {ready:.0f} s)")
    return rows


if __name__ == "__main__":
    main()
