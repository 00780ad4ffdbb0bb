"""Values no server writes, in lines that are otherwise fine: the line counts, the damaged value is dropped and the
line is a counted problem, and nothing downstream (pairing, digest, timeline) ever sees a value it cannot handle."""

from __future__ import annotations

import time
from datetime import datetime, timezone

import pytest

from idxadvisor.models.events import Event
from idxadvisor.shapes.digest import Digest, DigestOptions
from idxadvisor.parse import jsonlog
from idxadvisor.parse.fields import MAX_DURATION_MS, checked_timestamp, read_fields
from idxadvisor.parse.pairing import statement_mark, wrapper_mark
from idxadvisor.parse.profile import event_from_profile, profile_timestamp
from tests.helpers import digest_block, json_line, parse_block, slow_attr

FIND = {"find": "b", "filter": {"x": 1}}
TEXT_FIND = ('2020-01-01T00:00:00.000+0000 I COMMAND  [conn1] command a.b command: find { find: "b", filter: '
             '{ x: 1 } } planSummary: COLLSCAN keysExamined:0 docsExamined:10 nreturned:1 ')


def only_event(text: str, mode: str = "json-log"):
    stats, events = parse_block(text + "\n", mode)
    assert stats.entries == 1 and len(events) == 1
    return stats, events[0]


# -- timestamps ----------------------------------------------------------------------------------------------------


def test_a_date_without_an_offset_is_utc() -> None:
    """naive.log: an offset-less $date beside offset ones used to make comparing timestamps raise."""
    aware = json_line(slow_attr(FIND), ts="2024-01-01T00:00:00.000+00:00")
    naive = json_line(slow_attr(FIND), ts="2024-01-01T00:00:01.000")
    stats, digest = digest_block(aware + "\n" + naive + "\n", "json-log")
    assert (stats.entries, stats.problems, digest.operations) == (2, 0, 2)
    assert stats.last_ts == datetime(2024, 1, 1, 0, 0, 1, tzinfo=timezone.utc)


@pytest.mark.parametrize("stamp", [
    "0001-01-01T00:00:00.000+00:00",  # y1.log: pairing subtracted a duration from it
    "0001-01-01T00:00:00.000+01:00",  # y2.log: year 0 in UTC, which the report's timeline could not hold
    "9999-12-31T23:59:59.999+00:00",
    "1969-12-31T23:59:59.000+00:00",
])
def test_a_timestamp_outside_1970_to_9999_is_missing(stamp: str) -> None:
    stats, event = only_event(json_line(slow_attr(FIND), ts=stamp))
    assert event.ts is None and stats.problems == 0
    _, digest = digest_block(json_line(slow_attr(FIND), ts=stamp) + "\n", "json-log")
    assert digest.operations == 1


def test_the_y1_statement_and_its_wrapper_still_pair() -> None:
    statement = json_line({"type": "update", "ns": "a.b", "command": {"q": {"x": 1}, "u": {"$set": {"y": 1}}},
                           "planSummary": "COLLSCAN", "docsExamined": 10, "nMatched": 1, "durationMillis": 150},
                          component="WRITE", ts="0001-01-01T00:00:00.000+00:00")
    wrapper = json_line({"type": "command", "ns": "a.$cmd", "command": {"update": "b", "ordered": True},
                         "durationMillis": 150}, ts="0001-01-01T00:00:00.100+00:00")
    stats, digest = digest_block(statement + "\n" + wrapper + "\n", "json-log")
    assert (stats.entries, stats.absorbed, digest.operations) == (2, 1, 1)


@pytest.mark.parametrize("line", [
    "0001-01-01T00:00:00.000+0000 I COMMAND  [conn1] command a.b command: find { find: \"b\" } 150ms",
    "9999-12-31T23:59:59.999-0100 I COMMAND  [conn1] command a.b command: find { find: \"b\" } 150ms",
])
def test_a_text_timestamp_outside_1970_to_9999_is_missing(line: str) -> None:
    _, event = only_event(line, "text-log")
    assert event.ts is None


@pytest.mark.parametrize("stamp", [
    "1970-01-01T00:30:00.000+0100", "1970-01-01T01:30:00.000+0100", "1971-01-01T00:00:00.000+2359",
    "9997-12-31T23:59:59.999-2359", "9998-12-31T18:00:00.000-0500", "9998-12-31T23:00:00.000-0500",
    "2018-12-01T20:06:04.172-0500", "2018-12-01T20:06:04.172Z", "2018-12-01T20:06:04.172",
])
def test_a_text_timestamp_near_the_bounds_is_checked_whatever_its_offset(stamp: str) -> None:
    """Text timestamps skip the comparison with the bounds when their year alone settles it: never wrongly."""
    _, event = only_event(f"{stamp} I COMMAND  [conn1] command a.b command: find {{ find: \"b\" }} 150ms", "text-log")
    expected = checked_timestamp(datetime.fromisoformat(stamp))
    assert event.ts == expected and (event.ts is None or event.ts.utcoffset() == expected.utcoffset())


def test_profile_timestamps_are_checked_too() -> None:
    assert profile_timestamp({"$date": "2024-01-01T00:00:00"}) == datetime(2024, 1, 1, tzinfo=timezone.utc)
    assert profile_timestamp({"$date": "0001-01-01T00:00:00Z"}) is None
    assert profile_timestamp({"$date": {"$numberLong": "-62135596800000"}}) is None
    assert profile_timestamp({"$date": {"$numberLong": "1" + "0" * 400}}) is None
    assert profile_timestamp(datetime(2024, 1, 1)) is None  # not Extended JSON


def test_checked_timestamp_bounds() -> None:
    assert checked_timestamp(datetime(1970, 1, 1)) == datetime(1970, 1, 1, tzinfo=timezone.utc)
    assert checked_timestamp(datetime(9998, 12, 31, tzinfo=timezone.utc)) is not None
    assert checked_timestamp(datetime(9999, 1, 1, tzinfo=timezone.utc)) is None


# -- durations -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ['"inf"', '"-inf"', '"nan"', "1e300", '"1e400"', "-5", '"1e13"',
                                   '{"$numberDouble":"Infinity"}', '"abc"', "null", "[]", "{}", "true", "false",
                                   "[1200]", '{"a": 1}'])
def test_an_impossible_json_duration_is_unknown_and_counted(value: str) -> None:
    """inf.log, inf2.log, inf3.log: the digest and the report's timeline could not take these; "abc", null, [], {}
    and true once counted as 0 ms operations with no problem (a shape's median fell from 1,269 ms to 0)."""
    line = json_line(slow_attr(FIND, durationMillis="DURATION")).replace('"DURATION"', value)
    stats, event = only_event(line)
    assert event.duration_ms is None and event.problem is not None and stats.problems == 1
    assert event.docs_examined == 100 and event.plan_summary == "COLLSCAN"  # the rest of the entry counts
    slow = json_line(slow_attr(FIND, durationMillis=1269))
    _, digest = digest_block(f"{line}\n{slow}\n{slow}\n", "json-log")
    (shape,) = digest.shapes.values()
    assert shape.count == 3 and shape.duration.n == 2  # counted, but not among the durations
    assert shape.duration.total == 2 * 1269 and shape.duration.percentile(50) == pytest.approx(1269, rel=0.02)


@pytest.mark.parametrize("value", ["-5", '"abc"', "1e30", "true", "[3]", '{"n": 3}'])
def test_a_damaged_json_counter_is_left_out_and_counted(value: str) -> None:
    line = json_line(slow_attr(FIND, keysExamined=7)).replace('"keysExamined":7', f'"keysExamined":{value}')
    stats, event = only_event(line)
    assert event.keys_examined is None and stats.problems == 1 and event.docs_examined == 100


def test_an_unknown_duration_is_not_left_out_as_fast() -> None:
    line = json_line(slow_attr(FIND, durationMillis="abc"))
    stats, digest = digest_block(line + "\n", "json-log")
    digest_with_min = Digest(DigestOptions(min_ms=100))
    for event in parse_block(line + "\n", "json-log")[1]:
        digest_with_min.add(event)
    assert stats.problems == 1 and digest.operations == digest_with_min.operations == 1


def test_a_number_json_cannot_hold_makes_the_line_a_problem() -> None:
    line = json_line(slow_attr(FIND, durationMillis="DURATION")).replace('"DURATION"', "1e400")
    stats, digest = digest_block(line + "\n", "json-log")
    assert (stats.entries, stats.problems, digest.operations) == (1, 1, 0)


def test_a_possible_duration_is_kept_whatever_its_spelling() -> None:
    assert read_fields({"durationMillis": "12"}) == {"duration_ms": 12.0}
    assert read_fields({"millis": {"$numberLong": "7"}}) == {"duration_ms": 7.0}
    assert read_fields({"durationMillis": MAX_DURATION_MS}) == {"duration_ms": MAX_DURATION_MS}
    assert read_fields({"durationMillis": 0}) == {"duration_ms": 0}


@pytest.mark.parametrize("digits", [14, 400, 5000])
def test_an_impossible_text_duration_is_dropped_and_counted(digits: int) -> None:
    """big.log (400 digits) overflowed a float in the digest; big2.log (5000 digits) made int() raise."""
    stats, event = only_event(TEXT_FIND + "9" * digits + "ms", "text-log")
    assert event.duration_ms is None and event.problem is not None and stats.problems == 1
    assert event.docs_examined == 10
    _, digest = digest_block(TEXT_FIND + "9" * digits + "ms\n", "text-log")
    assert digest.operations == 1


@pytest.mark.parametrize("number", ["-1", "1e400", "1.5", "-0", "+7"])
def test_a_text_duration_that_is_not_whole_milliseconds_is_a_counted_problem(number: str) -> None:
    """-1ms and 1e400ms once made the line vanish: not a slow operation, and no problem either."""
    stats, event = only_event(TEXT_FIND + number + "ms", "text-log")
    assert event.duration_ms is None and stats.problems == 1
    assert stats.problem_examples[0].reason == f"duration is not a usable number of milliseconds ({number}ms)"
    assert event.docs_examined == 10


def test_an_impossible_profile_duration_is_dropped_and_counted() -> None:
    document = {"op": "query", "ns": "a.b", "command": FIND, "millis": {"$numberDouble": "Infinity"}}
    assert event_from_profile(document).problem is not None
    stats, events = parse_block('{"op":"query","ns":"a.b","command":{"find":"b"},"millis":"inf"}\n', "profile")
    assert (stats.entries, stats.problems, events[0].duration_ms) == (1, 1, None)


def test_a_wrapper_with_an_impossible_duration_still_pairs() -> None:
    """bigdur.log: pairing built a timedelta of 1e300 ms."""
    statement = json_line({"type": "update", "ns": "a.b", "command": {"q": {"x": 1}, "u": {"$set": {"y": 1}}},
                           "durationMillis": 150}, component="WRITE", ts="2024-01-01T00:00:00.000+00:00")
    wrapper = json_line({"type": "command", "ns": "a.$cmd", "command": {"update": "b", "ordered": True},
                         "durationMillis": "DURATION"}, ts="2024-01-01T00:00:00.100+00:00").replace('"DURATION"',
                                                                                                 "1e300")
    stats, digest = digest_block(statement + "\n" + wrapper + "\n", "json-log")
    assert (stats.entries, stats.problems, stats.absorbed, digest.operations) == (2, 1, 1, 1)


def test_pairing_never_does_date_arithmetic_that_can_overflow() -> None:
    def statement(ts: datetime) -> object:
        return statement_mark(Event("a.b", "update", ts=ts, statement=True, connection="c1"))

    start = datetime(1970, 1, 1, 0, 0, 1, tzinfo=timezone.utc)
    wrapper = Event("a.$cmd", "update", ts=datetime(9998, 1, 1, tzinfo=timezone.utc), duration_ms=1e300,
                    connection="c1")
    assert wrapper_mark(wrapper).covers(statement(start))
    late = Event("a.$cmd", "update", ts=datetime(1970, 1, 1, 0, 0, 1, tzinfo=timezone.utc), duration_ms=float("inf"),
                 connection="c1")
    assert wrapper_mark(late).covers(statement(datetime(9998, 1, 1, tzinfo=timezone.utc))) is False


# -- a byte order mark ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("mode", "line"), [
    ("json-log", json_line(slow_attr(FIND))),
    ("text-log", TEXT_FIND + "150ms"),
])
def test_a_byte_order_mark_does_not_cost_the_first_line(mode: str, line: str) -> None:
    """bom.log, bomt.log: the first line was a problem and its entry was lost."""
    stats, events = parse_block(b"\xef\xbb\xbf" + (line + "\n" + line + "\n").encode(), mode)
    assert (stats.lines, stats.entries, stats.problems, len(events)) == (2, 2, 0, 2)


# -- problems are counted the same on every path -----------------------------------------------------------------

JSON_NOISE = json_line({"remote": "10.0.0.1:5000"}, component="NETWORK", message_id=22943, ctx="listener",
                       msg="Connection accepted")


@pytest.mark.parametrize("odd", [
    "2020-01-01T00:00:00.500+0000 garbage without thread 150ms",  # mix1.log / mix2.log
    "2020-01-01T00:00:00.600+0000 more garbage",
    "2014-04-09T23:22:48.502-0400 ***** SERVER RESTARTED *****",  # a real 2.6 server line
    "Mon Aug  5 21:04:52 dbexit: really exiting now",  # a real 2.2 server line
    "garbage without a timestamp 150ms",
    "  2020-01-01T00:00:00.000+0000 I COMMAND  [conn1] indented",
    "\x0b",
    "=== a line without a datetime ===",
])
def test_the_fast_path_and_the_line_by_line_path_count_the_same_problems(odd: str) -> None:
    lines = [TEXT_FIND + "150ms", odd, TEXT_FIND + "12ms", odd]
    fast, fast_events = parse_block("\n".join(lines) + "\n", "text-log")
    mixed, mixed_events = parse_block("\n".join(lines + [JSON_NOISE]) + "\n", "text-log")  # a JSON line: general path
    assert fast.problems == mixed.problems
    assert (fast.entries, len(fast_events)) == (mixed.entries, len(mixed_events)) == (2, 2)
    assert [p.line for p in fast.problem_examples] == [p.line for p in mixed.problem_examples]


def test_many_odd_lines_are_counted_in_linear_time() -> None:
    """odd.log: 300,000 lines without a timestamp took 40 s (each problem counted the newlines before it)."""
    text = "x\n" * 300_000
    started = time.perf_counter()
    stats, _ = parse_block(text, "text-log")
    elapsed = time.perf_counter() - started
    assert stats.problems == 300_000
    assert [problem.line for problem in stats.problem_examples] == [1, 2, 3, 4, 5]
    assert elapsed < 5, elapsed


def test_problem_line_numbers_are_right_on_every_path() -> None:
    good = TEXT_FIND + "150ms"
    lines = [good, "bad one", good, good, "bad two", good, "bad three"]
    stats, _ = parse_block("\n".join(lines) + "\n", "text-log")
    assert [p.line for p in stats.problem_examples] == [2, 5, 7]
    cut = json_line(slow_attr(FIND))[:-20]
    plain = json_line(slow_attr(FIND))
    stats, _ = parse_block("\n".join([plain, cut, plain, plain, cut]) + "\n", "json-log")
    assert [p.line for p in stats.problem_examples] == [2, 5]


def test_a_slow_query_line_is_still_parsed_by_the_hot_path_helper() -> None:
    entry = jsonlog.parse_line(json_line(slow_attr(FIND)).encode())
    assert jsonlog.event_from_entry(entry).problem is None


@pytest.mark.parametrize("general_path", [False, True])
def test_a_timestamped_line_ending_in_a_duration_that_cannot_be_read_is_a_problem(general_path: bool) -> None:
    """It may be a slow operation in a layout we do not know: never dropped silently; other server messages are."""
    lines = ["2020-01-01T00:00:00.500+0000 garbage without thread 150ms",
             "2014-04-09T23:22:48.502-0400 ***** SERVER RESTARTED *****"]
    stats, _ = parse_block("\n".join(lines + ([JSON_NOISE] if general_path else [])) + "\n", "text-log")
    assert stats.problems == 1
    assert stats.problem_examples[0].reason == "a timestamped line ending in a duration, in a layout not understood"
    assert stats.problem_examples[0].line == 1
