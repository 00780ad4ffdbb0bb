"""Small builders for log lines in tests, written the way servers write them."""

from __future__ import annotations

import json
from typing import Any

from idxadvisor.parse.block import BlockOptions, BlockParser, BlockStats
from idxadvisor.parse.pairing import BoundaryState
from idxadvisor.shapes.digest import Digest

REFERENCE_YEAR = 2026


def json_line(attr: dict[str, Any], *, ctx: str = "conn1", component: str = "COMMAND", message_id: int = 51803,
              ts: str = "2025-08-18T19:33:11.772+00:00", msg: str = "Slow query", **top: Any) -> str:
    """A 4.4+ log line with the server's padding."""
    head = f'{{"t":{{"$date":"{ts}"}},' + '"s":"I",'.ljust(10) + f'"c":"{component}",'.ljust(16) + \
        f'"id":{message_id},'.ljust(14)
    body = {"ctx": ctx, "msg": msg, "attr": attr, **top}
    return head + json.dumps(body, separators=(",", ":"))[1:]


def slow_attr(command: dict[str, Any], ns: str = "shop.orders", **counters: Any) -> dict[str, Any]:
    attr: dict[str, Any] = {"type": "command", "ns": ns, "command": command}
    attr.update({"planSummary": "COLLSCAN", "keysExamined": 0, "docsExamined": 100, "nreturned": 1,
                 "durationMillis": 120})
    attr.update(counters)
    return attr


class CollectingSink:
    """An event sink that keeps every event (tests only: the real sink is the digest)."""

    def __init__(self) -> None:
        self.events: list[Any] = []

    def add(self, event: Any) -> None:
        self.events.append(event)

    def merge(self, other: CollectingSink) -> None:
        self.events.extend(other.events)


def _whole_input(parser: BlockParser, data: bytes) -> BlockStats:
    """Parse a block that is the whole input: what pairing left open at its edges is settled as the runner would."""
    stats = parser.parse(data)
    boundary = BoundaryState()
    last_ms = stats.last_ts.timestamp() * 1000 if stats.last_ts is not None else None
    for event in boundary.resolve(stats.held_wrappers, stats.early_statements, stats.tail_statements, last_ms) + \
            boundary.close():
        stats.operations += 1
        parser.sink.add(event)
    stats.absorbed += boundary.absorbed
    return stats


def parse_block(data: bytes | str, mode: str, keep_excerpts: bool = False) -> tuple[BlockStats, list[Any]]:
    if isinstance(data, str):
        data = data.encode("utf-8")
    sink = CollectingSink()
    stats = _whole_input(BlockParser(mode, BlockOptions(REFERENCE_YEAR, keep_excerpts=keep_excerpts), sink), data)
    return stats, sink.events


def digest_block(data: bytes | str, mode: str) -> tuple[BlockStats, Digest]:
    if isinstance(data, str):
        data = data.encode("utf-8")
    digest = Digest()
    return _whole_input(BlockParser(mode, BlockOptions(REFERENCE_YEAR), digest), data), digest


def compiled_speedups(needed: str) -> Any:
    """``idxadvisor._speedups`` when it is built with the function ``needed``; otherwise the calling test module is
    skipped, or fails under ``IDXADVISOR_REQUIRE_SPEEDUPS=1`` (CI, where the extension must build)."""
    import os

    import pytest

    try:
        from idxadvisor import _speedups
    except ImportError:  # built without a compiler
        _speedups = None
    if _speedups is None or not hasattr(_speedups, needed):
        if os.environ.get("IDXADVISOR_REQUIRE_SPEEDUPS") == "1":
            raise RuntimeError(f"IDXADVISOR_REQUIRE_SPEEDUPS=1 but idxadvisor._speedups.{needed} is not built")
        pytest.skip(f"idxadvisor._speedups.{needed} is not built (no compiler)", allow_module_level=True)
    return _speedups
