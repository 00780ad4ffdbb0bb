"""A write statement and the command entry wrapping it are one operation, whatever block they fall in."""

from __future__ import annotations

from pathlib import Path

import pytest

from idxadvisor.parse.block import BlockOptions
from idxadvisor.parse.run import RunOptions, Runner
from idxadvisor.ingest.sources import Source
from tests.helpers import REFERENCE_YEAR, CollectingSink, json_line, parse_block


def statement(ctx: str, ts: str, ns: str = "shop.orders", kind: str = "update", duration: int = 150) -> str:
    command = {"q": {"_id": 1}, "u": {"$set": {"a": 1}}} if kind == "update" else {"q": {"a": 1}, "limit": 0}
    return json_line({"type": kind, "ns": ns, "command": command, "planSummary": "IDHACK", "keysExamined": 1,
                      "docsExamined": 1, "durationMillis": duration}, ctx=ctx, component="WRITE", ts=ts)


def wrapper(ctx: str, ts: str, db: str = "shop", name: str = "update", duration: int = 152) -> str:
    return json_line({"type": "command", "ns": f"{db}.$cmd", "command": {name: "orders", "ordered": True},
                      "durationMillis": duration}, ctx=ctx, ts=ts)


def find(ctx: str, ts: str) -> str:
    return json_line({"type": "command", "ns": "shop.orders", "command": {"find": "orders", "filter": {}},
                      "durationMillis": 200}, ctx=ctx, ts=ts)


T1, T2, T3 = "2025-01-01T10:00:00.100+00:00", "2025-01-01T10:00:00.150+00:00", "2025-01-01T10:00:00.160+00:00"


def ops(lines: list[str]) -> list[tuple[str, str, bool]]:
    stats, events = parse_block("\n".join(lines) + "\n", "json-log")
    events += stats.held_wrappers  # one block: nothing before it, so every held wrapper is an operation
    return sorted((e.connection, e.op, e.statement) for e in events)


def test_a_statement_and_its_command_entry_are_one_operation() -> None:
    assert ops([statement("conn1", T1), wrapper("conn1", T2)]) == [("conn1", "update", True)]


def test_several_statements_of_one_command_are_several_operations_and_one_wrapper() -> None:
    lines = [statement("conn1", T1), statement("conn1", T1, kind="update"), wrapper("conn1", T2)]
    assert ops(lines) == [("conn1", "update", True), ("conn1", "update", True)]


def test_a_command_entry_without_a_statement_is_its_own_operation() -> None:
    assert ops([find("conn1", T1), wrapper("conn1", T2)]) == [("conn1", "find", False), ("conn1", "update", False)]


def test_pairing_is_per_connection() -> None:
    lines = [statement("conn1", T1), statement("conn2", T1, kind="remove"), wrapper("conn2", T2, name="delete"),
             wrapper("conn1", T3)]
    assert ops(lines) == [("conn1", "update", True), ("conn2", "delete", True)]


@pytest.mark.parametrize("other", [
    wrapper("conn1", T2, name="delete"),  # another command
    wrapper("conn1", T2, db="other"),  # another database
    wrapper("conn1", "2025-01-01T11:00:00.000+00:00"),  # an hour later: its statement was not the one logged
])
def test_an_unrelated_command_entry_is_not_absorbed(other: str) -> None:
    assert len(ops([statement("conn1", T1), other])) == 2


def test_blocks_split_between_a_statement_and_its_command_give_the_same_operations(tmp_path: Path) -> None:
    lines = []
    for n in range(40):
        second = f"2025-01-01T10:00:{n:02d}"
        lines += [statement(f"conn{n % 3}", f"{second}.100+00:00"), wrapper(f"conn{n % 3}", f"{second}.150+00:00"),
                  find(f"conn{n % 3}", f"{second}.300+00:00")]
    path = tmp_path / "pairs.log"
    path.write_text("\n".join(lines) + "\n")
    expected = ops(lines)
    assert len(expected) == 80
    for block_size in (300, 1000, 2500, 1 << 20):
        options = RunOptions(BlockOptions(REFERENCE_YEAR), jobs=1, block_size=block_size)
        summaries, sink = Runner(options, CollectingSink).run([Source(str(path), path)])
        got = sorted((e.connection, e.op, e.statement) for e in sink.events)
        assert got == expected, block_size
        assert (summaries[0].entries, summaries[0].operations, summaries[0].paired) == (120, 80, 40)
