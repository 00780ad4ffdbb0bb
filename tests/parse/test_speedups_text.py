"""The compiled reading of a text log's slow-operation line (``_speedups.text_slow_line``) gives exactly what the
Python path gives: per line, the parts ``split_line`` and ``slow_operation_match`` find; per file, the same events
(every attribute, of the same type), problems and line numbers. Every text line of the corpus and of the fixtures,
and generated lines (timestamps of every layout LINE reads, odd spacing, each op word, damaged and huge durations,
truncation warnings, non-ASCII text), go through both. Skipped when the extension is not built, unless
``IDXADVISOR_REQUIRE_SPEEDUPS=1`` (CI) makes that a failure.
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from idxadvisor.models.events import TEXT_LOG, Event
from idxadvisor.parse import accel, block, textlog
from idxadvisor.parse.block import BlockOptions, BlockParser, BlockStats
from idxadvisor.parse.fields import MAX_DURATION_MS
from tests.conftest import FIXTURES_DIR
from tests.helpers import CollectingSink, compiled_speedups

_speedups = compiled_speedups("text_event")

YEAR = 2024
OPTIONS = BlockOptions(reference_year=YEAR, keep_excerpts=True, max_problem_examples=1000)
SKIPPED_SUFFIXES = (".md", ".py", ".json", ".yaml", ".bson")


@pytest.fixture(autouse=True)
def _fresh_memos() -> Iterator[None]:
    yield
    textlog._BODY_MEMO.clear()


def python_parts(line: str) -> tuple[Any, ...] | None:
    """What the C function must give for ``line``, from the Python path; None where it gives nothing."""
    try:
        parts = textlog.split_line(line, YEAR)
    except textlog.UnreadableLine:
        return None
    operation = textlog.slow_operation_match(parts.message)
    if operation is None:
        return None
    return parts.ts, parts.context, operation.op, operation.ns, operation.body, operation.duration, operation


def assert_same_line(line: str) -> bool:
    """The C reading of ``line`` equals the Python one, where C reads it; whether it did."""
    compiled = _speedups.text_slow_line(line, YEAR)
    if compiled is None:
        return False
    expected = python_parts(line)
    assert expected is not None, line
    *values, operation = expected
    assert not operation.truncated and operation.damaged_duration is None, line
    assert compiled == tuple(values), line
    assert [type(value) for value in compiled] == [type(value) for value in values], line
    ts, python_ts = compiled[0], values[0]
    assert (ts.tzinfo, ts.utcoffset(), ts.isoformat()) == (python_ts.tzinfo, python_ts.utcoffset(),
                                                             python_ts.isoformat()), line
    assert_same_event(compiled)
    return True


def assert_same_event(parts: tuple[Any, ...]) -> None:
    """``text_event`` builds the event ``event_from_parts`` builds (once the body is remembered, as it then is)."""
    python_event, python_problem = textlog.event_from_parts(*parts)
    made = _speedups.text_event(parts, textlog._BODY_MEMO, Event.from_fields, TEXT_LOG)
    if parts[5] > MAX_DURATION_MS or len(parts[4]) > textlog.MEMO_TEXT_LIMIT:
        assert made is None
        return
    assert made is not None
    event, problem = made
    assert problem == python_problem
    assert list(vars(event).items()) == list(vars(python_event).items())  # the same fields, in the same order
    assert [type(value) for value in vars(event).values()] == [type(value) for value in vars(python_event).values()]


def _parse(data: bytes, compiled: bool) -> tuple[list[dict[str, Any]], BlockStats]:
    """Events (with the slots they share numbered in order of appearance) and stats, with or without the C line."""
    saved = block._text_slow_line
    block._text_slow_line = _speedups.text_slow_line if compiled else None
    textlog._BODY_MEMO.clear()  # a fresh memo for each reading: the events' ShapeSlots compared by how they are shared
    try:
        sink = CollectingSink()
        parser = BlockParser(TEXT_LOG, OPTIONS, sink)
        parser.feed(data)
        stats = parser.finish()
    finally:
        block._text_slow_line = saved
    slots: dict[int, int] = {}
    events = []
    for event in sink.events:
        values = dict(vars(event))
        slot = values.get("shape_slot")
        if slot is not None:
            values["shape_slot"] = slots.setdefault(id(slot), len(slots))
        values["types"] = [(name, type(value)) for name, value in vars(event).items()]  # the order too
        events.append(values)
    return events, stats


def _comparable(stats: BlockStats) -> dict[str, Any]:
    marks = ("early_statements", "tail_statements")
    values = {name: getattr(stats, name) for name in BlockStats.__dataclass_fields__ if name not in marks}
    values["held_wrappers"] = [{k: v for k, v in vars(event).items() if k != "shape_slot"}
                               for event in stats.held_wrappers]
    for name in marks:
        values[name] = [(mark.key, mark.ts_ms, mark.query, mark.coarse, mark.claimed) for mark in getattr(stats, name)]
    return values


def assert_same_file(data: bytes) -> None:
    compiled_events, compiled_stats = _parse(data, compiled=True)
    python_events, python_stats = _parse(data, compiled=False)
    assert _comparable(compiled_stats) == _comparable(python_stats)
    assert compiled_events == python_events


def _text_logs(root: Path) -> Iterator[tuple[Path, bytes]]:
    """The files under ``root`` that hold text-log lines (a slow operation or any timestamped line)."""
    for path in sorted(root.rglob("*")):
        if not path.is_file() or path.suffix in SKIPPED_SUFFIXES or path.stat().st_size > 64 * 1024 * 1024:
            continue
        data = path.read_bytes()
        if path.suffix == ".gz":
            try:
                data = gzip.decompress(data)
            except (OSError, EOFError):
                continue  # a corrupt .gz fixture: an input error either way
        if textlog.LINE.search(data[:200_000].decode("utf-8", "replace")) is not None or b"] query " in data:
            yield path, data


def _check_tree(root: Path) -> tuple[int, int, int]:
    """Every line of every text log under ``root`` line by line, and each file whole: (files, lines, read in C)."""
    files = lines = in_c = 0
    for _, data in _text_logs(root):
        files += 1
        for line in data.decode("utf-8", "replace").split("\n"):
            line = line.rstrip("\r")
            if line.endswith("ms"):
                lines += 1
                in_c += assert_same_line(line)
        assert_same_file(data)
    return files, lines, in_c


@pytest.mark.corpus
def test_every_corpus_text_line_reads_the_same(corpus_dir: Path) -> None:
    files, lines, in_c = _check_tree(corpus_dir)
    assert files >= 5
    assert in_c > 0.95 * lines > 1000  # the C path is the common one, not a corner (ctime lines included)


def test_every_fixture_text_line_reads_the_same() -> None:
    files, lines, in_c = _check_tree(FIXTURES_DIR)
    assert files >= 1
    assert in_c > 0.5 * lines > 10


def test_the_c_line_reader_is_chosen_unless_turned_off() -> None:
    expected = os.environ.get(accel.PURE_PYTHON_VARIABLE, "") in ("", "0")
    assert (block._text_slow_line is not None) is expected
    assert (textlog.slow_line_parts is not None) is expected
    assert (textlog._text_event is not None) is expected


def test_the_c_function_reads_the_common_line_and_declines_the_rest() -> None:
    common = ("2018-06-01T10:00:00.123+0000 I COMMAND  [conn7] command shop.orders command: find { find: \"orders\","
              " filter: { status: \"A\" } } planSummary: COLLSCAN keysExamined:0 docsExamined:9 nreturned:1 120ms")
    assert assert_same_line(common)
    _, context, op, ns, body, duration = _speedups.text_slow_line(common, YEAR)
    assert (context, op, ns, duration) == ("conn7", "command", "shop.orders", 120)
    assert body.startswith(" command: find {") and body.endswith("nreturned:1")
    declined = [
        common.replace("120ms", "-1ms"),  # damaged duration
        common.replace("120ms", "12345678901234ms"),  # too many digits
        common.replace("+0000", ""),  # naive: checked_timestamp makes it UTC
        common.replace("2018", "1970"),  # near the ends of 1970-9999
        common.replace("[conn7] ", "[conn7] warning: log line attempted (12kB) over max size (10kB), printing "
                                   "beginning and end ... "),
        "Sun Jun  1 25:00:00.123 [conn7] query shop.orders query: { a: 1 } 120ms",  # ctime, an hour datetime refuses
        "Mon Jun 31 10:00:00.123 [conn7] query shop.orders query: { a: 1 } 120ms",  # no such date: no timestamp
        common.replace("command shop", "hello shop"),
    ]
    assert [_speedups.text_slow_line(line, YEAR) for line in declined] == [None] * len(declined)


@pytest.mark.parametrize("reference_year", [2012, 2013, 2016, 2024, 2100])
@pytest.mark.parametrize("stamp", ["Fri Jun  1 10:00:00.123", "Thu Feb 29 23:59:59", "Mon Dec 31 00:00:00.5",
                                   "Sat Jan  1 12:34:56.1234567", "Wed Mar 13 01:02:03.000001"])
def test_ctime_lines_take_the_year_python_gives(stamp: str, reference_year: int) -> None:
    line = f"{stamp} [conn7] query shop.orders query: {{ a: 1 }} nreturned:1 120ms"
    compiled = _speedups.text_slow_line(line, reference_year)
    assert compiled is not None
    assert compiled[0] == textlog.split_line(line, reference_year).ts
    assert compiled[0].tzinfo is textlog.split_line(line, reference_year).ts.tzinfo


def test_the_parser_reads_a_slow_line_in_c_with_its_problem_and_line_number() -> None:
    data = (b"2018-06-01T10:00:00.000+0000 I CONTROL  [main] ***** SERVER RESTARTED *****\n"
            b"2018-06-01T10:00:01.000+0000 I COMMAND  [conn7] command shop.orders command: find { find: \"orders\", "
            b"filter: { a: { $in: [ 1, 2 } } } 5ms\n")
    compiled_events, compiled_stats = _parse(data, compiled=True)
    assert [(p.reason.split(":")[0], p.line) for p in compiled_stats.problem_examples] == [
        ("command document could not be read", 2)]
    assert _speedups.text_slow_line(data.decode().split("\n")[1], YEAR) is not None
    assert_same_file(data)
    assert compiled_events[0]["duration_ms"] == 5


# -- generated lines ------------------------------------------------------------------------------------------------

def mostly(usual: st.SearchStrategy[Any], *odd: Any) -> st.SearchStrategy[Any]:
    """Mostly ``usual``, sometimes one of ``odd``: many generated lines are slow lines the C code reads."""
    return st.integers(0, 15).flatmap(lambda pick: st.sampled_from(odd) if pick == 15 else usual)


_ZONES = mostly(st.sampled_from(["Z", "+0000", "+00:00", "-0500", "+05:30", "+1400", "-23:59"]),
                "", "+05:3", "+0", "z", "+٠٥٠٠")
_FRACTIONS = mostly(st.text("0123456789", min_size=0, max_size=9).map(lambda d: "." + d if d else ""), ".", ".٣")
_SPACES = mostly(st.sampled_from([" ", "  "]), "\t", " \t ", "\u00a0", "\x0b", "", "\x1c")
_SEVERITIES = mostly(st.sampled_from(["I COMMAND  ", "W2 NETWORK ", "I -        ", "D1 QUERY ", "E  WRITE\t", ""]),
                     "X COMMAND  ", "I command ", "I COMMAND", "I1", "I ٣ COMMAND ", "I COMMAND\u00a0")
_CONTEXTS = mostly(st.sampled_from(["conn7", "", "initandlisten", "ĉonn", "conn 1", "[conn"]), "conn]", "conn\n")
_OPS = mostly(st.sampled_from(["query", "getmore", "update", "remove", "insert", "command", "killcursors"]),
              "Query", "find", "queryx", "warning: other query")
_WARNINGS = mostly(st.just(""), "warning: log line attempted (12kB) over max size (10kB), printing beginning and "
                                "end ... ")
_NAMESPACES = mostly(st.sampled_from(["shop.orders", "db.$cmd", "test.ünïcödé", "local.oplog.rs", "日本.語",
                                     "admin.$cmd", "db.system.profile", "nodot"]),
                     "", "a.b\u00a0c", "x.y\u2028z", "a.b\x1fc")
_DURATIONS = mostly(st.integers(0, 10**14).map(str), "", "-1", "1e400", "1.5", "007", "٣", "0x10", "9" * 40, "1 2")
_TAILS = mostly(st.sampled_from(["ms", "ms ", "ms\t"]), "MS", "", "ms\u3000", "ms\x85", "m s")
_GAPS = mostly(st.just(" "), "  ", "", "\t")
_BODIES = st.sampled_from([
    " query: { a: 1 } planSummary: IXSCAN { a: 1 } keysExamined:1 docsExamined:1 nreturned:1",
    " command: { count: \"orders\", query: { status: \"A\" } } numYields:0 reslen:44 locks:{}",
    " command: find { find: \"orders\", filter: { x: { $gt: 5 } }, sort: { y: -1 } } planSummary: COLLSCAN",
    " query: { $query: { a: 1 }, $orderby: { b: 1 } } ntoskip:5 nreturned:3",
    " query: { a: \"é\" } update: { $set: { b: 1 } } nMatched:1 nModified:1",
    " appName: \"MongoDB Shell\" command: insert { insert: \"c\" } ninserted:1",
    " appName: \"MongoDB Automation Agent v1\" command: find { find: \"c\" } nreturned:0",
    "", " ", "  ms", " command: { broken: [ 1, 2 } }", " query: { a: 1 } protocol:op_query",
])


@st.composite
def text_lines(draw: st.DrawFn) -> str:
    if draw(st.booleans()):
        stamp = (f"{draw(mostly(st.integers(1971, 9997), 1969, 1970, 9998, 9999)):04d}"
                 f"-{draw(mostly(st.integers(1, 12), 0, 13)):02d}-{draw(mostly(st.integers(1, 28), 0, 30, 31, 32)):02d}"
                 f"T{draw(mostly(st.integers(0, 23), 24, 25)):02d}:{draw(st.integers(0, 61)):02d}"
                 f":{draw(st.integers(0, 61)):02d}{draw(_FRACTIONS)}{draw(_ZONES)}")
    else:
        stamp = (f"{draw(st.sampled_from(['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun']))} "
                 f"{draw(st.sampled_from(['Jan', 'Feb', 'Mar', 'Apr', 'Jun', 'Sep', 'Dec']))}"
                 f"{draw(mostly(st.just(' '), '  ', ''))}{draw(mostly(st.integers(1, 31), 0, 32, 99))!s:>2}"
                 f" {draw(mostly(st.integers(0, 23), 24, 25)):02d}:{draw(st.integers(0, 61)):02d}"
                 f":{draw(st.integers(0, 61)):02d}{draw(_FRACTIONS)}")
    return (f"{stamp}{draw(_SPACES)}{draw(_SEVERITIES)}[{draw(_CONTEXTS)}]{draw(mostly(st.just(' '), '', '  '))}"
            f"{draw(_WARNINGS)}{draw(_OPS)}{draw(_GAPS)}{draw(_NAMESPACES)}{draw(_BODIES)}{draw(_GAPS)}"
            f"{draw(_DURATIONS)}{draw(_TAILS)}")


_COMMON = ("2019-03-04T05:06:07.890+0100 I COMMAND  [conn1] command db.c command: find { find: \"c\" } "
           "planSummary: COLLSCAN 42ms")


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text_lines())
@example(_COMMON)
@example(_COMMON.replace(".890", ".8901234567"))
@example(_COMMON.replace("+0100", "Z"))
@example(_COMMON.replace("+0100", "+01:00"))
@example(_COMMON.replace("+0100", "-0000"))
@example(_COMMON.replace("2019", "9997"))
@example(_COMMON.replace("db.c", "db.ü"))
@example(_COMMON.replace("42ms", "1000000000000ms"))
@example(_COMMON.replace("42ms", "1000000000001ms"))
@example(_COMMON.replace("42ms", "0000000000042ms"))
@example(_COMMON.replace("2019-03-04T05:06:07.890+0100 I COMMAND ", "Mon Feb 29 05:06:07.890"))
@example(_COMMON.replace("2019-03-04T05:06:07.890+0100", "Thu Feb 29 05:06:07.8"))
@example(_COMMON.replace("2019-03-04T05:06:07.890+0100", "Tue Mar  5 05:06:07"))
def test_generated_lines_read_the_same(line: str) -> None:
    assert_same_line(line)
    textlog._BODY_MEMO.clear()
    assert_same_file(line.encode("utf-8", "surrogatepass") + b"\n")
