"""Generate large, realistic logs for benchmarks from the project's own fixtures.

    python benchmarks/generate_logs.py json OUT.log [--size-mb 200] [--slow-fraction 0.1]
    python benchmarks/generate_logs.py text OUT.log [--size-mb 200] [--slow-fraction 0.1]

The slow-query lines are the demo workload's (``fixtures/demo/shop.log``), re-timed and spread over many
connections; the other lines are the ordinary messages of the same log (connections, client metadata,
authentication, checkpoints). A text log holds the same operations written the way a 4.2 server writes them.
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

from idxadvisor.testing.logwriter import iso_utc, text_entry, text_timestamp

ROOT = Path(__file__).resolve().parents[1]

DEMO_LOG = ROOT / "fixtures" / "demo" / "shop.log"
START = datetime(2026, 1, 5, tzinfo=timezone.utc)


def templates() -> tuple[list[dict], list[dict]]:
    """(slow-query entries, ordinary entries) of the demo log, parsed."""
    slow, ordinary = [], []
    for line in DEMO_LOG.read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        (slow if entry.get("id") == 51803 else ordinary).append(entry)
    return slow, ordinary


def _json_line(entry: dict, ts: datetime, connection: str | None) -> str:
    head = (f'{{"t":{{"$date":"{iso_utc(ts)}"}},' + f'"s":"{entry["s"]}",'.ljust(10)
            + f'"c":"{entry["c"]}",'.ljust(16) + f'"id":{entry["id"]},'.ljust(14))
    body = {key: value for key, value in entry.items() if key not in ("t", "s", "c", "id")}
    if connection is not None and str(body.get("ctx", "")).startswith("conn"):
        body["ctx"] = connection
    return head + json.dumps(body, separators=(",", ":"), ensure_ascii=False)[1:]


_ORDINARY_TEXT = [
    "I  NETWORK  [listener] connection accepted from 10.0.9.{n}:{port} #{conn} ({count} connections now open)",
    "I  NETWORK  [conn{conn}] received client metadata from 10.0.9.{n}:{port} conn{conn}: {{ driver: {{ name: "
    "\"nodejs\", version: \"3.7.4\" }}, os: {{ type: \"Linux\", name: \"linux\", architecture: \"x64\", version: "
    "\"5.15.0\" }}, platform: \"'Node.js v14.21.3, LE (legacy)\", application: {{ name: \"shop-api\" }} }}",
    "I  NETWORK  [conn{conn}] end connection 10.0.9.{n}:{port} ({count} connections now open)",
    "I  ACCESS   [conn{conn}] Successfully authenticated as principal shop on admin from client 10.0.9.{n}:{port}",
    "I  STORAGE  [WTCheckpointThread] WiredTiger message [1762073{n}:{port}][1:0x7f], WT_SESSION.checkpoint: "
    "saving checkpoint snapshot min: {conn}, snapshot max: {conn} snapshot count: 0",
]


def lines(kind: str, size_bytes: int, slow_fraction: float, seed: int = 7) -> Iterator[str]:
    rng = random.Random(seed)
    slow, ordinary = templates()
    written = 0
    ts = START
    while written < size_bytes:
        ts += timedelta(milliseconds=rng.randint(1, 40))
        connection = f"conn{rng.randint(1000, 60000)}"
        if rng.random() < slow_fraction:
            entry = rng.choice(slow)
            if kind == "json":
                line = _json_line(entry, ts, connection)
            else:
                line = text_entry(ts, connection, entry["attr"], component=entry["c"])
        elif kind == "json":
            line = _json_line(rng.choice(ordinary), ts, connection)
        else:
            template = rng.choice(_ORDINARY_TEXT)
            number = rng.randint(1, 250)
            line = f"{text_timestamp(ts)} " + template.format(n=number, port=40000 + number, conn=connection[4:],
                                                                 count=rng.randint(20, 90))
        written += len(line) + 1
        yield line


def write(kind: str, path: Path, size_mb: float, slow_fraction: float) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        buffer = []
        for line in lines(kind, int(size_mb * 1024 * 1024), slow_fraction):
            buffer.append(line)
            if len(buffer) >= 10_000:
                handle.write("\n".join(buffer) + "\n")
                buffer.clear()
        if buffer:
            handle.write("\n".join(buffer) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kind", choices=["json", "text"])
    parser.add_argument("output", type=Path)
    parser.add_argument("--size-mb", type=float, default=200)
    parser.add_argument("--slow-fraction", type=float, default=0.1)
    arguments = parser.parse_args()
    write(arguments.kind, arguments.output, arguments.size_mb, arguments.slow_fraction)


if __name__ == "__main__":
    main()
