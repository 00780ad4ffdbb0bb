"""A write statement and the command entry wrapping it are one operation, whatever block they fall in."""

from __future__ import annotations

from pathlib import Path

import pytest

from idxadvisor.models.events import Event
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


def block_events(lines: list[str]) -> list[Event]:
    """The operations of one block that is the whole input (what it left open settled as the runner would)."""
    return parse_block("\n".join(lines) + "\n", "json-log")[1]


def ops(lines: list[str]) -> list[tuple[str, str, bool]]:
    return sorted((e.connection, e.op, e.statement) for e in block_events(lines))


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
        for task_size in (block_size, None):  # blocks parsed as tasks of their own, or one after another in one task
            options = RunOptions(BlockOptions(REFERENCE_YEAR), jobs=1, block_size=block_size, task_size=task_size)
            summaries, sink = Runner(options, CollectingSink).run([Source(str(path), path)])
            got = sorted((e.connection, e.op, e.statement) for e in sink.events)
            assert got == expected, (block_size, task_size)
            assert (summaries[0].entries, summaries[0].operations, summaries[0].paired) == (120, 80, 40)


# -- merged and re-sorted logs ---------------------------------------------------------------------------------------

import random  # noqa: E402
from datetime import datetime, timedelta, timezone  # noqa: E402

BASE = datetime(2025, 3, 1, 12, 0, tzinfo=timezone.utc)


def _stamp(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "+00:00")


def server_log(seed: int, remote_prefix: str, commands: int = 60) -> tuple[list[tuple[datetime, str]], int, int]:
    """One server's slow writes on six connections: each update or delete command has 1-3 statements, of which 0-3
    are slow enough to be logged (WRITE), and its command entry (COMMAND), logged when it ends, lists them all; finds
    run between. Returns the timed lines, the operations the server ran that a log shows (a logged statement, or
    a command none of whose statements was logged, or a find) and the command entries with a statement."""
    rng = random.Random(seed)
    lines: list[tuple[datetime, str]] = []
    operations = paired = 0
    for connection in range(6):
        ctx, remote = f"conn{connection + 1}", f"{remote_prefix}:{50000 + connection}"
        clock = BASE + timedelta(milliseconds=rng.randrange(0, 50))
        for number in range(commands):
            kind = rng.choice(["update", "delete"])
            statements = [{"q": {"k": number, "c": connection, "s": part}} for part in range(rng.randint(1, 3))]
            if kind == "update":
                for statement in statements:
                    statement["u"] = {"$set": {"v": number}}
            logged = [statement for statement in statements if rng.random() < 0.6]
            for statement in logged:
                clock += timedelta(milliseconds=rng.randrange(0, 3))
                attr = {"type": "update" if kind == "update" else "remove", "ns": "shop.orders",
                        "command": statement, "planSummary": "COLLSCAN", "keysExamined": 0, "docsExamined": 900,
                        "durationMillis": 120, "remote": remote}
                lines.append((clock, json_line(attr, ctx=ctx, component="WRITE", ts=_stamp(clock))))
            duration = 130 + 5 * len(statements)
            clock += timedelta(milliseconds=rng.randrange(0, 2))
            command = {kind: "orders", ("updates" if kind == "update" else "deletes"): statements, "ordered": True}
            attr = {"type": "command", "ns": "shop.$cmd", "command": command, "durationMillis": duration,
                    "remote": remote}
            lines.append((clock, json_line(attr, ctx=ctx, ts=_stamp(clock))))
            operations += len(logged) or 1
            paired += bool(logged)
            clock += timedelta(milliseconds=rng.randrange(1, 40))
            attr = {"type": "command", "ns": "shop.orders", "command": {"find": "orders", "filter": {"k": number}},
                    "durationMillis": 200, "remote": remote}
            lines.append((clock, json_line(attr, ctx=ctx, ts=_stamp(clock))))
            operations += 1
            clock += timedelta(milliseconds=rng.randrange(200, 900))
    return lines, operations, paired


def resorted(lines: list[tuple[datetime, str]], seed: int) -> list[str]:
    """Sorted by timestamp as a tool that is not stable within a millisecond would sort them."""
    rng = random.Random(seed)
    keyed = [(moment, rng.random(), line) for moment, line in lines]
    return [line for _, _, line in sorted(keyed)]


def count(tmp_path: Path, lines: list[str], block_size: int) -> tuple[int, int, int]:
    path = tmp_path / f"merged-{block_size}.log"
    path.write_text("\n".join(lines) + "\n")
    options = RunOptions(BlockOptions(REFERENCE_YEAR), jobs=1, block_size=block_size, task_size=block_size)
    summaries, sink = Runner(options, CollectingSink).run([Source(str(path), path)])
    [summary] = summaries
    assert summary.operations == len(sink.events)
    return summary.entries, summary.operations, summary.paired


@pytest.mark.parametrize("block_size", [1 << 20, 20_000, 3_000])
def test_a_log_resorted_by_timestamp_counts_each_operation_once(tmp_path: Path, block_size: int) -> None:
    timed, operations, paired = server_log(1, "10.0.0.5")
    assert count(tmp_path, [line for _, line in timed], block_size) == (len(timed), operations, paired)
    assert count(tmp_path, resorted(timed, 7), block_size) == (len(timed), operations, paired)


@pytest.mark.parametrize("block_size", [1 << 20, 20_000, 3_000])
def test_logs_of_two_servers_merged_with_the_same_thread_names_count_each_operation_once(tmp_path: Path,
                                                                                          block_size: int) -> None:
    first, first_operations, first_paired = server_log(2, "10.0.0.5")
    second, second_operations, second_paired = server_log(3, "10.0.0.6")
    merged = resorted(first + second, 11)
    assert count(tmp_path, merged, block_size) == (len(first) + len(second), first_operations + second_operations,
                                                   first_paired + second_paired)


@pytest.mark.parametrize("block_size", [1 << 20, 20_000, 7_000, 3_000])
def test_a_log_that_starts_again_an_hour_earlier_counts_each_operation_once(tmp_path: Path, block_size: int) -> None:
    """A day repeated (files concatenated): where the log goes back in time inside a block, the pairs cut by the
    blocks after it are paired by the time the log has reached since, not by the latest time before it (an hour
    later, which would take the statements waiting at the cut for ones no command can own any more)."""
    later, later_operations, later_paired = server_log(3, "10.0.0.5")
    earlier, operations, paired = server_log(4, "10.0.0.5")
    lines = [line for _, line in sorted(later, key=lambda item: item[0])]
    lines = [line.replace("2025-03-01T12:", "2025-03-01T13:") for line in lines]
    lines += [line for _, line in sorted(earlier, key=lambda item: item[0])]
    expected = (len(later) + len(earlier), later_operations + operations, later_paired + paired)
    assert count(tmp_path, lines, block_size) == expected


def test_a_wrapper_logged_before_its_statement_in_the_same_millisecond_is_absorbed() -> None:
    assert ops([wrapper("conn1", T1), statement("conn1", T1)]) == [("conn1", "update", True)]


def test_two_identical_commands_in_a_row_are_two_operations() -> None:
    lines = [statement("conn1", T1), wrapper("conn1", T1), statement("conn1", T2), wrapper("conn1", T2)]
    listed = [line.replace('"ordered":true', '"updates":[{"q":{"_id":1},"u":{"$set":{"a":1}}}],"ordered":true')
              for line in lines]
    assert ops(listed) == [("conn1", "update", True), ("conn1", "update", True)]


@pytest.mark.corpus
def test_a_real_log_resorted_within_each_millisecond_keeps_its_operation_count(corpus_dir: Path,
                                                                                tmp_path: Path) -> None:
    source = corpus_dir / "GOindiaRIDE" / "mongod-verify.log"  # 8.2.5: WRITE statements beside their commands
    lines = source.read_text(encoding="utf-8").splitlines()
    timed = [(line[15:44] if line.startswith('{"t":{"$date":"') else "", line) for line in lines]
    original = count(tmp_path, lines, 1 << 20)
    assert original[2] > 40  # it has statements to pair
    for block_size in (1 << 20, 50_000):
        assert count(tmp_path, resorted(timed, 5), block_size) == original  # type: ignore[arg-type]


# -- one connection, one command after another ------------------------------------------------------------------------


def retryable_upserts(commands: int, command_ms: int = 44) -> list[tuple[datetime, str]]:
    """A 6.0 primary's retryable upserts with w:majority on one connection: each statement takes 0 ms and starts the
    millisecond the previous command ended; each command waits ``command_ms`` for the write concern. The command
    entries do not list their statements (OP_MSG document sequences are not logged)."""
    lines = []
    clock = BASE
    for number in range(commands):
        attr = {"type": "update", "ns": "hr.employees", "command": {"q": {"_id": number % 3}, "u": {"$set": {"n": 1}},
                                                                    "upsert": True},
                "planSummary": "IDHACK", "keysExamined": 1, "docsExamined": 1, "nMatched": 1, "nModified": 1,
                "durationMillis": 0, "remote": "10.1.1.1:5000"}
        lines.append((clock, json_line(attr, ctx="conn7", component="WRITE", ts=_stamp(clock))))
        clock += timedelta(milliseconds=command_ms)
        attr = {"type": "command", "ns": "hr.$cmd", "command": {"update": "employees", "ordered": True,
                                                                "txnNumber": number, "$db": "hr"},
                "durationMillis": command_ms, "remote": "10.1.1.1:5000"}
        lines.append((clock, json_line(attr, ctx="conn7", ts=_stamp(clock))))
    return lines


def timed_operations(tmp_path: Path, lines: list[str], block_size: int) -> list[tuple[str, bool, float]]:
    path = tmp_path / f"upserts-{block_size}.log"
    path.write_text("\n".join(lines) + "\n")
    options = RunOptions(BlockOptions(REFERENCE_YEAR), jobs=1, block_size=block_size, task_size=block_size)
    summaries, sink = Runner(options, CollectingSink).run([Source(str(path), path)])
    assert summaries[0].operations == len(sink.events)
    return sorted((e.op, e.statement, e.duration_ms) for e in sink.events)


@pytest.mark.parametrize("block_size", [1 << 20, 2_000, 700])
@pytest.mark.parametrize("order", ["file", "resorted"])
def test_a_statement_at_the_previous_commands_end_is_its_own_commands(tmp_path: Path, block_size: int,
                                                                      order: str) -> None:
    timed = retryable_upserts(30)
    lines = [line for _, line in timed] if order == "file" else resorted(timed, 3)
    assert timed_operations(tmp_path, lines, block_size) == [("update", True, 44.0)] * 30


def test_a_paired_write_keeps_its_statements_counters_and_its_commands_duration() -> None:
    end = "2025-01-01T10:00:00.144+00:00"
    [event] = block_events([statement("conn1", T1, duration=0), wrapper("conn1", end, duration=44)])
    assert (event.statement, event.keys_examined, event.docs_examined, event.duration_ms) == (True, 1, 1, 44.0)


def test_a_command_splits_its_duration_among_its_statements_in_proportion_to_theirs() -> None:
    lines = [statement("conn1", T1, duration=10), statement("conn1", T1, duration=30),
             wrapper("conn1", T2, duration=80)]
    assert sorted(event.duration_ms for event in block_events(lines)) == [20.0, 60.0]
    zero = [statement("conn1", T1, duration=0), statement("conn1", T1, duration=0), wrapper("conn1", T2, duration=80)]
    assert sorted(event.duration_ms for event in block_events(zero)) == [40.0, 40.0]


def test_a_statement_whose_command_never_shows_keeps_its_own_duration() -> None:
    [event] = block_events([statement("conn1", T1, duration=150)])
    assert (event.statement, event.duration_ms) == (True, 150.0)
