"""The fast paths and the line-by-line path read the same logs the same way; every bad line is a counted problem."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from idxadvisor.parse.block import _VERSION_HINTS, _lines_holding
from tests.helpers import json_line, parse_block, slow_attr

SLOW = json_line(slow_attr({"find": "orders", "filter": {"a": 1}}))
ORDINARY = json_line({"remote": "10.0.0.1:5000", "connectionId": 4}, component="NETWORK", message_id=22943,
                     ctx="listener", msg="Connection accepted")


def summary(text: str | bytes, mode: str = "json-log"):
    stats, events = parse_block(text, mode)
    return stats.lines, stats.entries, stats.problems, len(events)


def test_a_plain_block_and_a_block_with_one_odd_line_read_the_same_entries() -> None:
    plain = "\n".join([ORDINARY, SLOW, ORDINARY, SLOW]) + "\n"
    assert summary(plain) == (4, 2, 0, 2)
    assert summary(plain + "garbage\n") == (5, 2, 1, 2)


@pytest.mark.parametrize(("text", "expected"), [
    (SLOW + "\n" + SLOW, (2, 2, 0, 2)),  # no final newline
    (SLOW + "\r\n" + ORDINARY + "\r\n", (2, 1, 0, 1)),  # CRLF
    ("\n\n" + SLOW + "\n\n", (4, 1, 0, 1)),  # blank lines
    (ORDINARY[:60] + "\n" + SLOW + "\n", (2, 1, 1, 1)),  # a cut ordinary line
    (SLOW[:-40] + "\n" + SLOW + "\n", (2, 2, 1, 1)),  # a cut slow-query line: an entry and a problem
    ('{"t":{"$date":"2025-01-01T00:00:00Z"},"id":51803,"attr":5}\n', (1, 1, 1, 0)),  # attr of the wrong type
    (b"\xff\xfe" + SLOW.encode() + b"\n", (1, 0, 1, 0)),  # junk in front of the brace: not a JSON line
    ("[1, 2]\n" + SLOW + "\n", (2, 1, 1, 1)),
])
def test_awkward_json_logs(text: str | bytes, expected: tuple[int, int, int, int]) -> None:
    assert summary(text) == expected


def test_invalid_utf8_inside_a_value_is_not_an_error() -> None:
    line = SLOW.encode().replace(b'"a":1', b'"a":"caf\xe9"')
    # orjson rejects invalid UTF-8: the line is read again with U+FFFD in its place, as a text log's line is read
    assert summary(line + b"\n") == (1, 1, 0, 1)
    assert summary(line + b"\nnot a log line\n" + line + b"\n") == (3, 2, 1, 2)  # whole lines around an odd one
    text_line = ('2020-01-01T00:00:00.000+0000 I  COMMAND  [conn3] command shop.x command: find { find: "x", '
                 'filter: { name: "caf\xe9" } } planSummary: COLLSCAN 12ms').encode("latin-1")
    assert summary(text_line + b"\n", "text-log") == (1, 1, 0, 1)


def test_a_very_long_line_is_normal() -> None:
    huge = json_line(slow_attr({"find": "orders", "filter": {"_id": {"$in": list(range(200_000))}}}))
    assert len(huge) > 1_000_000
    stats, events = parse_block(huge + "\n" + SLOW + "\n", "json-log")
    assert (stats.entries, stats.problems, len(events)) == (2, 0, 2)


def test_a_log_that_changes_from_text_to_json_is_read_whole() -> None:
    text_line = ('2020-06-23T10:21:26.019+0000 I  COMMAND  [conn7] command shop.orders command: find { find: '
                 '"orders", filter: { status: "A" } } planSummary: COLLSCAN keysExamined:0 docsExamined:10 '
                 'nreturned:1 reslen:100 12ms')
    mixed = "\n".join([text_line, text_line, SLOW, ORDINARY, SLOW]) + "\n"
    for mode in ("text-log", "json-log"):
        stats, events = parse_block(mixed, mode)
        assert (stats.entries, stats.json_entries, stats.text_entries, stats.problems) == (4, 2, 2, 0), mode
        assert [e.source_format for e in events] == ["text-log", "text-log", "json-log", "json-log"]


def test_profile_lines_each_document_is_an_entry() -> None:
    document = ('{"op":"query","ns":"shop.orders","command":{"find":"orders","filter":{"a":1}},'
                '"keysExamined":5,"docsExamined":5,"nreturned":1,"millis":{"$numberInt":"130"},'
                '"ts":{"$date":{"$numberLong":"1700000000000"}},"planSummary":"IXSCAN { a: 1 }"}')
    stats, events = parse_block(document + "\nnot json\n" + document + "\n", "profile")
    assert (stats.entries, stats.problems) == (2, 1)
    assert events[0].duration_ms == 130 and events[0].op == "find" and events[0].ts.year == 2023


def test_problem_excerpts_only_with_show_values() -> None:
    text = "secret password=hunter2\n" + SLOW + "\n"
    hidden, _ = parse_block(text, "json-log")
    shown, _ = parse_block(text, "json-log", keep_excerpts=True)
    assert hidden.problem_examples[0].excerpt is None and hidden.problem_examples[0].line == 1
    assert shown.problem_examples[0].excerpt == "secret password=hunter2"


@pytest.mark.parametrize("mode", ["json-log", "text-log"])
def test_a_block_fed_in_pieces_reads_as_the_whole_and_numbers_problems_from_its_start(mode: str) -> None:
    from idxadvisor.parse.block import BlockOptions, BlockParser

    good = SLOW if mode == "json-log" else ("2024-05-01T10:00:00.000+0000 I COMMAND  [conn1] command shop.orders "
                                            "command: find { find: \"orders\", filter: { a: 1 } } planSummary: "
                                            "COLLSCAN docsExamined:10 nreturned:1 reslen:100 10ms")
    lines = [good if number % 4 else f"garbage {number}" for number in range(1, 41)]
    data = ("\n".join(lines) + "\n").encode()
    whole_events = _Events()
    whole = BlockParser(mode, BlockOptions(2024, max_problem_examples=20), whole_events).parse(data)
    pieces = [data[start:start + 300] for start in range(0, len(data), 300)]
    cut, carried = [], b""  # newline-aligned pieces, as blocks are
    for piece in pieces:
        text = carried + piece
        carried = text[text.rfind(b"\n") + 1:]
        cut.append(text[:text.rfind(b"\n") + 1])
    fed_events = _Events()
    parser = BlockParser(mode, BlockOptions(2024, max_problem_examples=20), fed_events)
    for piece in filter(None, cut + [carried]):
        parser.feed(piece)
    fed = parser.finish()
    assert len([piece for piece in cut if piece]) > 5
    assert (fed.lines, fed.entries, fed.problems) == (whole.lines, whole.entries, whole.problems) == (40, 30, 10)
    assert [problem.line for problem in fed.problem_examples] == [problem.line for problem in whole.problem_examples] \
        == list(range(4, 41, 4))
    assert len(fed_events.events) == len(whole_events.events) == 30


class _Events:
    def __init__(self) -> None:
        self.events: list = []

    def add(self, event: object) -> None:
        self.events.append(event)


@pytest.mark.parametrize("text", [
    "", "no hint here\n", "db version v3.6.0", "a\r\nb db version v2.6.0\r\nc\r\n",
    "x MongoS version 3.6.0 and db version v3.6.1\nmongos version 2.4.7\n\ndb version\nend",
    "db version v4.0.3\nsomething\nlast db version v4.0.4 mongos version 1\n",
])
def test_lines_holding_finds_each_line_of_a_hint_once_and_in_order(text: str) -> None:
    expected = [line for line in text.split("\n") if any(hint in line for hint in _VERSION_HINTS)]
    assert _lines_holding(text, _VERSION_HINTS) == expected


@given(st.lists(st.sampled_from(["\n", "\r", " ", "x", "db version", "mongos version", "MongoS version", "db "])))
def test_lines_holding_is_a_filter_of_the_lines(pieces: list[str]) -> None:
    text = "".join(pieces)
    expected = [line for line in text.split("\n") if any(hint in line for hint in _VERSION_HINTS)]
    assert _lines_holding(text, _VERSION_HINTS) == expected
