"""Throughput of the shell-syntax document parser on one core.

Builds a mix of command documents shaped like those a 3.6–4.2 server logs (``find`` with ``lsid``/``$clusterTime``/
``BinData``/``Timestamp``, ``aggregate`` pipelines, ``update`` statements, a ``find`` with a large ``$in``), parses each
one repeatedly and prints MB/s of document text and µs per document, per kind and overall.

    python benchmarks/bench_shelldoc.py [--docs 400] [--rounds 5] [--shell]

``--shell`` parses with shell escapes (printjson dumps) instead of the server's raw strings.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

from idxadvisor.parse.shelldoc import parse_shell_value

_WORDS = ["alpha", "beta", "gamma", "delta", "pending", "shipped", "retail", "web", "mobile", "EU", "US"]
_FIELDS = ["status", "customerId", "items.sku", "createdAt", "region", "total", "tags", "score", "owner.name"]


def _hex(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


def _uuid(rng: random.Random) -> str:
    h = _hex(rng, 32)
    return f'UUID("{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}")'


def _envelope(rng: random.Random, db: str) -> str:
    """The fields a 3.6+ driver adds to every command."""
    return (
        f"lsid: {{ id: {_uuid(rng)} }}, $clusterTime: {{ clusterTime: "
        f"Timestamp({rng.randrange(1_500_000_000, 1_700_000_000)}, {rng.randrange(1, 300)}), "
        f"signature: {{ hash: BinData(0, {_hex(rng, 40).upper()}), "
        f"keyId: {rng.randrange(10**18, 9 * 10**18)} }} }}, $db: \"{db}\""
    )


def _scalar(rng: random.Random) -> str:
    pick = rng.randrange(6)
    if pick == 0:
        return f'"{rng.choice(_WORDS)}"'
    if pick == 1:
        return str(rng.randrange(-1000, 100_000))
    if pick == 2:
        return f"{rng.uniform(0, 1000):.3f}"
    if pick == 3:
        return f"ObjectId('{_hex(rng, 24)}')"
    if pick == 4:
        return f"new Date({rng.randrange(1_500_000_000_000, 1_700_000_000_000)})"
    return rng.choice(["true", "false", "null"])


def _filter(rng: random.Random) -> str:
    parts = []
    for field in rng.sample(_FIELDS, rng.randrange(1, 4)):
        op = rng.randrange(4)
        if op == 0:
            parts.append(f"{field}: {_scalar(rng)}")
        elif op == 1:
            parts.append(f"{field}: {{ $gte: {_scalar(rng)}, $lt: {_scalar(rng)} }}")
        elif op == 2:
            values = ", ".join(_scalar(rng) for _ in range(rng.randrange(2, 6)))
            parts.append(f"{field}: {{ $in: [ {values} ] }}")
        else:
            parts.append(f"{field}: {{ $exists: true }}")
    return "{ " + ", ".join(parts) + " }"


def find_doc(rng: random.Random) -> str:
    return (
        f'{{ find: "orders", filter: {_filter(rng)}, sort: {{ createdAt: -1 }}, limit: {rng.randrange(1, 100)}, '
        f"{_envelope(rng, 'shop')} }}"
    )


def aggregate_doc(rng: random.Random) -> str:
    return (
        f'{{ aggregate: "orders", pipeline: [ {{ $match: {_filter(rng)} }}, {{ $group: {{ _id: "$customerId", '
        f'total: {{ $sum: "$total" }}, n: {{ $sum: 1 }} }} }}, {{ $sort: {{ total: -1 }} }}, {{ $limit: 10 }} ], '
        f"cursor: {{}}, allowDiskUse: false, {_envelope(rng, 'shop')} }}"
    )


def update_doc(rng: random.Random) -> str:
    return (
        f"{{ q: {{ _id: ObjectId('{_hex(rng, 24)}') }}, u: {{ $set: {{ status: \"{rng.choice(_WORDS)}\", "
        f"updatedAt: new Date({rng.randrange(1_500_000_000_000, 1_700_000_000_000)}), "
        f"score: {rng.uniform(0, 5):.2f} }}, "
        f"$inc: {{ version: 1 }} }}, multi: false, upsert: false }}"
    )


def large_in_doc(rng: random.Random) -> str:
    if rng.random() < 0.5:
        values = ", ".join(str(rng.randrange(10**6)) for _ in range(rng.randrange(200, 1000)))
    else:
        values = ", ".join(f"ObjectId('{_hex(rng, 24)}')" for _ in range(rng.randrange(100, 400)))
    return f'{{ find: "events", filter: {{ userId: {{ $in: [ {values} ] }} }}, {_envelope(rng, "app")} }}'


KINDS: dict[str, Callable[[random.Random], str]] = {
    "find": find_doc,
    "aggregate": aggregate_doc,
    "update": update_doc,
    "large $in": large_in_doc,
}


def measure(docs: list[str], rounds: int, raw_strings: bool) -> float:
    """Best wall time over ``rounds`` passes over ``docs``."""
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for doc in docs:
            parse_shell_value(doc, raw_strings=raw_strings)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=400, help="documents of each kind")
    parser.add_argument("--rounds", type=int, default=5, help="passes; the best one counts")
    parser.add_argument("--shell", action="store_true", help="decode shell escapes instead of raw server strings")
    args = parser.parse_args()
    rng = random.Random(20240601)
    weights = {"find": 10, "aggregate": 5, "update": 8, "large $in": 1}  # the share of each among the documents
    mix: list[str] = []
    print(f"{'kind':<10} {'docs':>6} {'avg bytes':>10} {'MB/s':>8} {'µs/doc':>8}")
    for name, make in KINDS.items():
        docs = [make(rng) for _ in range(args.docs)]
        mix.extend(docs * weights[name])
        _report(name, docs, measure(docs, args.rounds, not args.shell))
    rng.shuffle(mix)
    _report("mix", mix, measure(mix, args.rounds, not args.shell))


def _report(name: str, docs: list[str], seconds: float) -> None:
    size = sum(len(doc.encode()) for doc in docs)
    per_doc = seconds / len(docs) * 1e6
    print(f"{name:<10} {len(docs):>6} {size / len(docs):>10.0f} {size / seconds / 1e6:>8.1f} {per_doc:>8.1f}")


if __name__ == "__main__":
    main()
