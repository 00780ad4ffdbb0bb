"""Benchmark loading a ``--data`` sample: our loader against decoding every document with ``bson.json_util``.

Usage: ``python benchmarks/bench_samples.py [--documents N] [--repeat R]``

Writes an orders-like sample (ObjectId ``_id``, relaxed ``$date``, nested items and address, a ``$numberLong``) as
one document per line and as one JSON array, then times in this one run:

* the baseline: ``json_util.loads`` of every line (Extended JSON decoded through bson's hooks, the way the loader
  did it before), and
* ``load_sample`` of the lines file and of the array file (keeping every document),

and prints CPU seconds, microseconds per document, the speed-up over the baseline (medians of ``--repeat`` runs) and
the process's peak memory.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bson import json_util  # noqa: E402

from idxadvisor.ingest.samples import load_sample  # noqa: E402


def documents(count: int) -> list[dict]:
    rng = random.Random(7)
    rows = []
    for n in range(count):
        rows.append({
            "_id": {"$oid": f"{0x6726000000000000a1b2c3d4 + n:024x}"},
            "customerId": rng.randrange(20_000),
            "status": rng.choice(["pending", "paid", "shipped", "delivered"]),
            "createdAt": {"$date": f"2025-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}T10:11:00.000Z"},
            "total": round(rng.uniform(5, 900), 2),
            "views": {"$numberLong": str(rng.randrange(10**12))},
            "items": [{"sku": f"SKU-{rng.randrange(30_000):05d}", "qty": rng.randrange(1, 5)}
                      for _ in range(rng.randrange(1, 4))],
            "shipping": {"city": rng.choice(["Graz", "Bergen", "Porto"]), "zip": f"{rng.randrange(10**5):05d}"},
        })
    return rows


def cpu_seconds(action) -> float:  # noqa: ANN001
    start = time.process_time()
    action()
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    arguments = parser.parse_args()
    count = arguments.documents
    rows = documents(count)
    with tempfile.TemporaryDirectory() as folder:
        lines = Path(folder) / "orders.json"
        lines.write_text("".join(json.dumps(row) + "\n" for row in rows))
        array = Path(folder) / "orders-array.json"
        array.write_text(json.dumps(rows))
        texts = lines.read_text().splitlines()
        runs = {
            "baseline (json_util per line)": lambda: [json_util.loads(text) for text in texts],
            "load_sample, one per line": lambda: load_sample(lines, sample_size=count),
            "load_sample, JSON array": lambda: load_sample(array, sample_size=count),
        }
        results = {name: statistics.median(cpu_seconds(run) for _ in range(arguments.repeat))
                   for name, run in runs.items()}
        size = lines.stat().st_size
    baseline = results["baseline (json_util per line)"]
    print(f"{count:,} documents, {size / 1e6:,.1f} MB; median of {arguments.repeat} runs, CPU seconds")
    for name, seconds in results.items():
        print(f"  {name:<32} {seconds:6.2f} s  {seconds / count * 1e6:6.2f} µs/doc  x{baseline / seconds:4.1f}")
    print(f"  peak memory {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MiB")


if __name__ == "__main__":
    main()
