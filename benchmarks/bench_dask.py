"""Benchmark reading a log on a Dask cluster against reading it locally, in the same process and the same run.

    python benchmarks/bench_dask.py                    # a 300 MB JSON log; 1 and 2 workers
    python benchmarks/bench_dask.py --size-mb 600 --workers 1,2 --repeat 5
    python benchmarks/bench_dask.py --s3               # also through an S3-compatible server on the loopback (moto)

It times the input stage of ``analyze`` (everything up to the digest: reading, parsing, shaping, merging), which is
what a cluster spreads: the local Runner with one and with every core (the baselines), then ``--dask-scheduler``
on a ``LocalCluster`` of N single-threaded worker processes for each N of ``--workers``. Each figure is the median
of ``--repeat`` runs, with throughput in MB/s and the ratio to the one-core local run. After the cluster runs it
prints the peak resident memory of a worker, the figure to size a real cluster's workers by. Every run must give the
same digest as the local one (the benchmark checks it). Generated logs are cached in ``bench-data/``.
"""

from __future__ import annotations

import argparse
import logging
import os
import statistics
import sys
import time
from pathlib import Path
from collections.abc import Callable
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))
from bench_ingest import ensure_log  # noqa: E402

from idxadvisor.api import read_inputs  # noqa: E402
from idxadvisor.config import Settings  # noqa: E402
from idxadvisor.workload import workload_document  # noqa: E402


def timed(run: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """The median wall time of ``repeat`` runs, and the last run's result."""
    seconds, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = run()
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds), result


def shapes_of(result: tuple) -> list:
    digest, summaries = result
    return workload_document(digest, summaries)["shapes"]


def line(label: str, megabytes: float, seconds: float, baseline: float, extra: str = "") -> None:
    print(f"{label:34} {seconds:7.2f} s  {megabytes / seconds:7.1f} MB/s  {baseline / seconds:5.2f}x{extra}")


def peak_worker_memory(client: Any) -> float:
    """The largest resident memory a worker process has had, in MB: Linux's VmHWM of its address space (not
    ``ru_maxrss``, which survives ``execve`` and so starts at the high-water mark of the process that spawned it)."""
    def peak() -> int:
        with open("/proc/self/status", encoding="ascii") as status:
            line = next(line for line in status if line.startswith("VmHWM:"))
        return int(line.split()[1])  # KiB

    return max(client.run(peak).values()) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=float, default=300)
    parser.add_argument("--slow-fraction", type=float, default=0.1)
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--block-mb", type=float, default=32)
    parser.add_argument("--s3", action="store_true", help="also read the log from moto's S3 server on the loopback")
    arguments = parser.parse_args()
    from distributed import Client, LocalCluster

    path = ensure_log("json", arguments.size_mb, arguments.slow_fraction)
    megabytes = path.stat().st_size / 2**20
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores; {path.name}: {megabytes:.0f} MB; median of "
          f"{arguments.repeat} runs; blocks of {arguments.block_mb:g} MB on the cluster")
    local = Settings(jobs=1, fail_on="never")
    baseline, expected = timed(lambda: read_inputs([str(path)], local), arguments.repeat)
    line("local, 1 core (baseline)", megabytes, baseline, baseline)
    seconds, result = timed(lambda: read_inputs([str(path)], replace_settings(local, jobs=os.cpu_count())),
                            arguments.repeat)
    assert shapes_of(result) == shapes_of(expected)
    line(f"local, {os.cpu_count()} cores", megabytes, seconds, baseline)
    sources = {"path": str(path)}
    server = _start_s3(path) if arguments.s3 else None
    if server is not None:
        sources["s3"] = "s3://bench/" + path.name
    try:
        for workers in [int(count) for count in arguments.workers.split(",")]:
            with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                              dashboard_address=None) as cluster, Client(cluster) as client:
                settings = replace_settings(local, dask_scheduler=cluster.scheduler_address,
                                            dask_block_size=int(arguments.block_mb * 2**20))
                for kind, source in sources.items():
                    seconds, result = timed(lambda source=source: read_inputs([source], settings), arguments.repeat)
                    assert shapes_of(result) == shapes_of(expected), "the cluster's digest differs from the local one"
                    line(f"dask, {workers} worker{'s' if workers > 1 else ''}, {kind}", megabytes, seconds, baseline,
                         f"  peak worker {peak_worker_memory(client):5.0f} MB")
    finally:
        if server is not None:
            server.stop()


def replace_settings(settings: Settings, **changes: Any) -> Settings:
    return settings.model_copy(update=changes)


def _start_s3(path: Path) -> Any:
    """moto's S3 server on the loopback holding the log; workers started after this inherit its endpoint."""
    import boto3
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request otherwise, thousands per run
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    os.environ.update({"AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench",
                       "AWS_DEFAULT_REGION": "us-east-1", "AWS_ENDPOINT_URL_S3": f"http://{host}:{port}"})
    client = boto3.client("s3")
    client.create_bucket(Bucket="bench")
    client.upload_file(str(path), "bench", path.name)
    return server


if __name__ == "__main__":
    main()
