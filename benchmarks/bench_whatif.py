"""Benchmark the what-if estimator: one query against N candidate indexes plus the COLLSCAN baseline.

Usage: ``python benchmarks/bench_whatif.py [--documents N] [--indexes K] [--seed S] [--command-line [--runs R]]``

Generates an orders-like sample (status, customerId, createdAt, amount, currency, tags arrays, a nested
address), K candidate indexes of 1-3 fields with mixed directions, and a handful of representative
queries. For each query it times a fresh estimator (so key extraction and matching are included)
explaining the query without an index (the baseline) and then with each candidate in turn, and prints
seconds, milliseconds per candidate and peak memory.

``--command-line`` times the same queries end to end instead: the sample written as Extended JSON (one document per
line), then ``idxadvisor whatif --data FILE --sample-size N --index ...`` (K candidates) run as a new process for
each query, loading and all; it prints the median wall time of R runs per query against the target (under 3 s for
100,000 documents and 20 candidates on 2 cores).
"""

from __future__ import annotations

import argparse
import datetime
import json
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from idxadvisor.indexes.model import IndexSpec  # noqa: E402
from idxadvisor.whatif import Estimator, WhatIfQuery  # noqa: E402
from precompile import compile_package  # noqa: E402

STATUSES = ["pending", "paid", "shipped", "delivered", "cancelled", "returned"]
STATUS_WEIGHTS = [10, 15, 20, 45, 7, 3]
TAGS = ["gift", "express", "fragile", "bulk", "promo", "vip", "repeat", "intl", "b2b", "sample"]
COUNTRIES = ["US", "DE", "FR", "GB", "JP", "BR", "IN", "CA"]
CITIES = {c: [f"{c}-city-{i}" for i in range(25)] for c in COUNTRIES}

CANDIDATES: list[dict[str, int]] = [
    {"status": 1}, {"customerId": 1}, {"createdAt": -1}, {"status": 1, "createdAt": -1},
    {"customerId": 1, "createdAt": -1}, {"status": 1, "customerId": 1}, {"amount": 1}, {"tags": 1},
    {"address.city": 1}, {"address.country": 1, "address.city": 1}, {"status": 1, "amount": -1},
    {"customerId": 1, "status": 1}, {"createdAt": 1, "status": 1}, {"currency": 1, "amount": 1},
    {"status": 1, "address.country": 1, "createdAt": -1}, {"tags": 1, "createdAt": -1},
    {"amount": -1, "createdAt": 1}, {"customerId": 1, "amount": 1, "status": 1}, {"address.zip": 1},
    {"status": 1, "tags": 1},
]

START = datetime.datetime(2023, 1, 1)


def make_documents(count: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    docs = []
    for i in range(count):
        country = rng.choice(COUNTRIES)
        doc: dict[str, Any] = {
            "_id": i,
            "status": rng.choices(STATUSES, STATUS_WEIGHTS)[0],
            "customerId": rng.randrange(20_000),
            "createdAt": START + datetime.timedelta(seconds=rng.randrange(730 * 86_400)),
            "amount": round(rng.lognormvariate(4, 1), 2),
            "currency": rng.choice(["USD", "EUR", "GBP"]),
            "tags": rng.sample(TAGS, rng.choice([0, 1, 1, 2, 3])),
            "address": {"country": country, "city": rng.choice(CITIES[country]),
                        "zip": f"{rng.randrange(100000):05d}"},
            "items": rng.randrange(1, 8),
        }
        if rng.random() < 0.05:
            del doc["address"]["zip"]
        docs.append(doc)
    return docs


def make_queries(docs: list[dict[str, Any]]) -> list[tuple[str, WhatIfQuery]]:
    month = datetime.datetime(2024, 6, 1)
    customer = docs[len(docs) // 3]["customerId"]
    return [
        ("status + date range, newest first, limit 50", WhatIfQuery(
            filter={"status": "shipped", "createdAt": {"$gte": month, "$lt": month + datetime.timedelta(days=30)}},
            sort={"createdAt": -1}, limit=50)),
        ("one customer's open orders", WhatIfQuery(
            filter={"customerId": customer, "status": {"$in": ["delivered", "paid"]}}, sort={"createdAt": -1})),
        ("count gift orders over 100", WhatIfQuery(
            command="count", filter={"tags": "gift", "amount": {"$gt": 100}})),
        ("city lookup, covered projection", WhatIfQuery(
            filter={"address.country": "FR", "address.city": "FR-city-3"},
            projection={"_id": 0, "address.city": 1})),
        ("amount band sorted by amount", WhatIfQuery(
            filter={"amount": {"$gte": 50, "$lte": 60}, "currency": "EUR"}, sort={"amount": 1})),
    ]


def run(documents: int, indexes: int, seed: int) -> None:
    docs = make_documents(documents, seed)
    specs = candidate_specs(indexes)
    print(f"documents: {documents}   candidate indexes: {len(specs)}   (+ COLLSCAN baseline)")
    overall = time.perf_counter()
    for label, query in make_queries(docs):
        started = time.perf_counter()
        estimator = Estimator(docs)
        baseline = estimator.explain(query)
        outcomes = [estimator.explain(query, [spec]) for spec in specs]
        elapsed = time.perf_counter() - started
        unsupported = sum(1 for o in outcomes if "unsupported" in o)
        best = min((o for o in outcomes if "unsupported" not in o),
                   key=lambda o: o["totalKeysExamined"] + o["totalDocsExamined"], default=None)
        warm_started = time.perf_counter()
        estimator._matches.clear()
        for spec in specs:
            estimator.explain(query, [spec])
        warm = time.perf_counter() - warm_started
        print(f"- {label}: {elapsed:.2f} s total, {1000 * elapsed / (len(specs) + 1):.1f} ms per candidate "
              f"(warm estimator: {warm:.2f} s); "
              f"baseline {baseline.get('planSummary')} docs {baseline.get('totalDocsExamined')}; "
              f"best {best and best['planSummary']} keys {best and best['totalKeysExamined']} "
              f"docs {best and best['totalDocsExamined']}; unsupported {unsupported}")
    total = time.perf_counter() - overall
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"all queries: {total:.2f} s; peak RSS (ru_maxrss) {rss:.0f} MiB")


def candidate_documents(indexes: int) -> list[dict[str, Any]]:
    """``indexes`` candidates as index documents: CANDIDATES, then as many extra ones as needed."""
    documents: list[dict[str, Any]] = [{"key": pattern} for pattern in CANDIDATES[:indexes]]
    while len(documents) < indexes:
        documents.append({"key": {"items": 1, "amount": -1 if len(documents) % 2 else 1, "status": 1},
                          "name": f"extra_{len(documents)}"})
    return documents


def candidate_specs(indexes: int) -> list[IndexSpec]:
    return [IndexSpec.from_key(document["key"], name=document.get("name", ""))
            for document in candidate_documents(indexes)]


COMMAND_LINE_TARGET_S = 3.0


def run_command_line(documents: int, indexes: int, seed: int, runs: int) -> None:
    """Each query as a user runs it: a new ``idxadvisor whatif`` process that loads the sample file and explains."""
    from bson import json_util

    docs = make_documents(documents, seed)
    index_options = [argument for document in candidate_documents(indexes)
                     for argument in ("--index", json.dumps(document))]
    with tempfile.TemporaryDirectory() as directory:
        sample = Path(directory) / "orders.json"
        with sample.open("w", encoding="utf-8") as handle:
            for doc in docs:
                handle.write(json_util.dumps(doc, json_options=json_util.RELAXED_JSON_OPTIONS) + "\n")
        print(f"idxadvisor whatif: {documents} documents ({sample.stat().st_size / 1e6:.1f} MB of Extended JSON), "
              f"{indexes} candidate indexes, median of {runs} runs per query; target under {COMMAND_LINE_TARGET_S:g} s")
        medians = []
        for label, query in make_queries(docs):
            command = [sys.executable, "-m", "idxadvisor", "whatif", "--data", str(sample), "--sample-size",
                       str(documents), "--query", json_util.dumps(query.to_json()), *index_options, "--format", "json"]
            walls = []
            for _ in range(runs):
                started = time.perf_counter()
                subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
                walls.append(time.perf_counter() - started)
            median = statistics.median(walls)
            medians.append(median)
            print(f"- {label}: {median:.2f} s ({median / COMMAND_LINE_TARGET_S:.2f}x the target; "
                  f"runs {', '.join(f'{wall:.2f}' for wall in walls)})")
        print(f"slowest query: {max(medians):.2f} s; median over queries {statistics.median(medians):.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--indexes", type=int, default=20)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--command-line", action="store_true", help="time idxadvisor whatif end to end, per query")
    parser.add_argument("--runs", type=int, default=3, help="runs per query with --command-line")
    args = parser.parse_args()
    if args.command_line:
        compile_package()  # see precompile.py: time runs, not bytecode compilation
        run_command_line(args.documents, args.indexes, args.seed, args.runs)
    else:
        run(args.documents, args.indexes, args.seed)


if __name__ == "__main__":
    main()
