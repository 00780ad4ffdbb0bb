"""The compiled event fields and query shapes (idxadvisor._speedups) give exactly what the Python path gives.

``event_fields`` must build the very fields dict ``jsonlog.python_event_from_entry`` gives (same keys in the same
order, same values of the same types), and ``shape_command`` the very components, longest ``$in`` and skip of
``shape._shape_command``/``_skip_of``, or return None (the Python path then does the whole line). Checked on every
slow line of every corpus and fixture log, on generated entries and commands (odd types, damaged values, Extended
JSON, huge numbers, NaN, unicode and empty keys), and on the digests of whole corpus files read both ways.
"""

from __future__ import annotations

import gzip
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from idxadvisor.models.events import JSON_LOG, Event
from idxadvisor.models.values import EXTENDED_JSON_MARKERS
from idxadvisor.parse import block, classify, fields, jsonlog
from idxadvisor.parse.block import BlockOptions, BlockParser
from idxadvisor.shapes import digest as digest_module
from idxadvisor.shapes import shape
from idxadvisor.shapes.digest import Digest
from tests.conftest import FIXTURES_DIR
from tests.helpers import compiled_speedups

_speedups = compiled_speedups("event_fields")


# -- the two paths, compared ----------------------------------------------------------------------------------------


def _typed(value: Any) -> Any:
    """``value`` with the type of every part spelled out (1, 1.0 and True are equal, and must not pass as such)."""
    if type(value) is dict:
        return ("dict", [(_typed(key), _typed(item)) for key, item in value.items()])
    if type(value) in (list, tuple):
        return (type(value).__name__, [_typed(item) for item in value])
    if type(value) is float and math.isnan(value):
        return ("float", "nan")
    return (type(value).__name__, repr(value))


def same_event(entry: Any) -> bool:
    """Whether the C path built the event (False: it handed the entry back); asserts it equals Python's."""
    compiled = _speedups.event_fields(entry)
    if compiled is None:
        return False
    expected = vars(jsonlog.python_event_from_entry(entry))
    assert _typed(compiled) == _typed(expected)
    assert vars(Event.from_fields(compiled)) == expected
    return True


def python_shape(ns: str, op: str, command: dict[str, Any]) -> Any:
    shaper = shape._Shaper()
    try:
        components = shape._shape_command(shaper, ns, op, command)
    except shape._TooDeep:
        return None
    return components, shaper.in_length, shape._skip_of(op, command)


def same_shape(ns: str, op: str, command: dict[str, Any]) -> bool:
    """Whether the C path shaped the command (False: it handed it back); asserts it equals Python's shape."""
    compiled = _speedups.shape_command(ns, op, command)
    if compiled is None:
        return False
    expected = python_shape(ns, op, command)
    assert expected is not None, "C shaped a command Python finds too deep"
    assert _typed(compiled) == _typed(expected)
    assert shape.finish(compiled[0]) == shape.finish(expected[0])
    return True


def same_event_shape(event: Event) -> bool | None:
    """``shape_of`` both ways (None when there is no command for C to shape)."""
    op, ns, command = event.op, event.ns, event.command
    if event.truncated or event.unparsed:
        return None
    if op == "getMore":
        if event.originating_command is None:
            return None
        op, command = classify.canonical_op(classify.command_name(event.originating_command) or ""), \
            event.originating_command
    if type(command) is not dict:
        return None
    return same_shape(ns, op, command)


class Tally:
    """How many lines took the C path and how many fell back, for events and shapes."""

    def __init__(self) -> None:
        self.events = [0, 0]  # C, Python
        self.shapes = [0, 0]

    def line(self, line: bytes) -> None:
        try:
            entry = orjson.loads(line)
        except orjson.JSONDecodeError:
            return
        if type(entry) is not dict or entry.get("id") != jsonlog.SLOW_QUERY_ID:
            return
        self.events[0 if same_event(entry) else 1] += 1
        try:
            event = jsonlog.python_event_from_entry(entry)
        except jsonlog.NotAnEntry:
            return
        shaped = same_event_shape(event)
        if shaped is not None:
            self.shapes[0 if shaped else 1] += 1


def _logs(root: Path) -> Iterator[bytes]:
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.suffix not in (".md", ".py", ".yaml", ".bson"):
            data = path.read_bytes()
            if path.suffix == ".gz":
                data = gzip.decompress(data)
            yield data


def _slow_lines(data: bytes) -> Iterator[bytes]:
    for line in data.split(b"\n"):
        if b"51803" in line:
            yield line.rstrip(b"\r")


def _fixture_events() -> Iterator[Event]:
    """The events of the fixtures' slow JSON lines, read by the Python path (the reference)."""
    for data in _logs(FIXTURES_DIR):
        for line in _slow_lines(data):
            try:
                yield jsonlog.python_event_from_entry(orjson.loads(line))
            except (orjson.JSONDecodeError, jsonlog.NotAnEntry, AttributeError):
                continue


# -- the tables the C code was written from -------------------------------------------------------------------------


def test_the_c_tables_are_the_python_tables() -> None:
    tables = _speedups.tables()
    assert tables["aliases"] == dict(fields.FIELD_ALIASES)
    assert tables["op_spellings"] == classify.OP_SPELLINGS
    assert set(tables["internal_databases"]) == classify.INTERNAL_DATABASES
    assert tables["internal_app_prefixes"] == classify.INTERNAL_APP_PREFIXES
    assert tables["field_operators"] == {**shape._FIELD_OPERATORS, **dict.fromkeys(shape._RANGE_OPERATORS, shape.RANGE)}
    assert tables["top_level_operators"] == shape._TOP_LEVEL_OPERATORS
    assert tables["extended_json_markers"] == EXTENDED_JSON_MARKERS
    assert tables["number_markers"] == shape._NUMBER_MARKERS


def test_the_compiled_pieces_are_chosen_unless_turned_off() -> None:
    from idxadvisor.parse import accel

    expected = os.environ.get(accel.PURE_PYTHON_VARIABLE, "") in ("", "0")
    assert (jsonlog._event_fields is not None) is expected
    assert (shape._shape_command_compiled is not None) is expected


# -- real lines -----------------------------------------------------------------------------------------------------


@pytest.mark.corpus
def test_every_corpus_slow_line_gives_the_same_event_and_shape(corpus_dir: Path) -> None:
    tally = Tally()
    for data in _logs(corpus_dir):
        for line in _slow_lines(data):
            tally.line(line)
    assert sum(tally.events) > 2000
    assert tally.events[0] >= 0.95 * sum(tally.events)  # real lines: nearly all take the C path
    assert tally.shapes[0] >= 0.9 * sum(tally.shapes)


def test_every_fixture_slow_line_gives_the_same_event_and_shape() -> None:
    tally = Tally()
    for data in _logs(FIXTURES_DIR):
        for line in _slow_lines(data):
            tally.line(line)
    assert sum(tally.events) > 500
    assert tally.events[0] > 0 and tally.shapes[0] > 0


def _digest(data: bytes, compiled: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[Digest, Any]:
    monkeypatch.setattr(jsonlog, "_event_fields", _speedups.event_fields if compiled else None)
    monkeypatch.setattr(shape, "_shape_command_compiled", _speedups.shape_command if compiled else None)
    monkeypatch.setattr(block, "_scan_json_block", _speedups.scan_json_block if compiled else None)
    monkeypatch.setattr(digest_module, "_add_timing", _speedups.add_timing if compiled else None)
    monkeypatch.setattr(digest_module, "_observe_literals", _speedups.observe_literals if compiled else None)
    digest = Digest()
    parser = BlockParser(JSON_LOG, BlockOptions(reference_year=2024), digest)
    stats = parser.parse(data)
    shape._FINISHED.clear()  # the memo would hand the second path the first path's shapes
    return digest, stats


@pytest.mark.corpus
def test_the_digest_of_every_corpus_json_log_is_the_same_both_ways(corpus_dir: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    checked = 0
    for data in _logs(corpus_dir):
        if data.count(b'"id":51803') < 5:
            continue
        compiled, compiled_stats = _digest(data, True, monkeypatch)
        python, python_stats = _digest(data, False, monkeypatch)
        assert compiled_stats == python_stats
        assert list(compiled.shapes) == list(python.shapes)
        for fingerprint, stats in compiled.shapes.items():
            assert stats == python.shapes[fingerprint]
            assert breakdown_state(stats.timing) == breakdown_state(python.shapes[fingerprint].timing)
            assert literals_state(stats.literals) == literals_state(python.shapes[fingerprint].literals)
            latest, expected = stats._latest, python.shapes[fingerprint]._latest
            assert _typed(getattr(latest, "__dict__", repr(latest))) == \
                _typed(getattr(expected, "__dict__", repr(expected)))
        checked += 1
    assert checked >= 5


# -- generated entries ----------------------------------------------------------------------------------------------

_NUMBERS = (st.integers(min_value=0, max_value=10**6) | st.integers(min_value=-(2**70), max_value=2**70)
            | st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([0, 2**63 - 1, 2**63, 2**64 - 1, 2**64,
                                                                                  10**12, 10**12 + 1, 10**15 + 1]))
_ODD = st.sampled_from([None, True, False, "12", "", "x", [], {}, {"$numberLong": "5"}, {"$numberInt": "x"},
                        {"$numberDouble": "NaN"}, [1, 2]])
_VALUE = _NUMBERS | _ODD | st.text(max_size=6)
_ALIAS_NAMES = st.sampled_from(sorted(fields.FIELD_ALIASES))
_OF_KIND = {fields.INT: st.integers(0, 10**6), fields.BOOL: st.booleans(), fields.STR: st.text(max_size=8),
            fields.FLOAT: st.integers(0, 10**6) | st.floats(min_value=0, max_value=1e6)}
_STAMPS = st.sampled_from(["2024-03-01T10:00:00.000+00:00", "2024-03-01T10:00:00.000Z", "2024-03-01T10:00:00.000+05:30",
                           "2024-03-01T10:00:00", "1970-01-01T00:30:00+01:00", "1971-01-01T00:00:00Z",
                           "9997-12-31T23:59:59Z", "9998-06-01T00:00:00Z", "9999-12-31T23:59:59-05:00", "nonsense",
                           "", "2024-02-30T00:00:00Z"]) | st.integers() | st.none()
_GOOD_COMPONENT = st.integers(min_value=0, max_value=10**9) | st.floats(min_value=0, max_value=1e9)
_TIMING_VALUE = st.one_of(_GOOD_COMPONENT, _GOOD_COMPONENT, _GOOD_COMPONENT, _GOOD_COMPONENT, _GOOD_COMPONENT,
                          _GOOD_COMPONENT, _VALUE)  # mostly real values: damaged ones only check the fallback


@st.composite
def timing_attr(draw: st.DrawFn) -> dict[str, Any]:
    attr: dict[str, Any] = {}
    for name in draw(st.lists(st.sampled_from(["workingMillis", "totalOplogSlotDurationMicros", "writeConflicts",
                                               "waitForWriteConcernDurationMillis", "planningTimeMicros",
                                               "cpuNanos"]), max_size=3, unique=True)):
        attr[name] = draw(_TIMING_VALUE)
    if draw(st.booleans()):
        attr["queues"] = draw(st.sampled_from([
            {"execution": {"admissions": 1, "totalTimeQueuedMicros": 5}},
            {"ingress": {"admissions": 1, "totalTimeQueuedMicros": 0.5}, "execution": {"admissions": 2}},
            {"execution": {"totalTimeQueuedMicros": None}}, {"execution": "x"}, "y", {}]))
    if draw(st.booleans()):
        attr["storage"] = {"data": {"bytesRead": draw(_TIMING_VALUE), "timeReadingMicros": draw(_TIMING_VALUE)}}
    if draw(st.booleans()):
        modes = st.dictionaries(st.sampled_from(["r", "w", "R", "W", "$numberLong", ""]), _TIMING_VALUE, max_size=3)
        attr["locks"] = draw(st.dictionaries(
            st.sampled_from(["Global", "Database", "Collection", "Mutex"]),
            st.fixed_dictionaries({}, optional={"acquireCount": modes, "timeAcquiringMicros": modes | _TIMING_VALUE})
            | _VALUE, max_size=3))
    if draw(st.booleans()):
        attr["flowControl"] = draw(st.sampled_from([{"acquireCount": 3}, {"timeAcquiringMicros": 7},
                                                    {"timeAcquiringMicros": -1}, "z"]))
    return attr


@st.composite
def slow_entries(draw: st.DrawFn) -> dict[str, Any]:
    attr: dict[str, Any] = {}
    if draw(st.booleans()):
        attr["type"] = draw(st.sampled_from(["command", "update", "remove", "none", 3, None]))
    if draw(st.integers(0, 9)):
        attr["ns"] = draw(st.sampled_from(["shop.orders", "shop.$cmd", "admin.$cmd", "local.oplog.rs", "config.x",
                                           "shop.system.profile", "shop.a.system.b", "x", "", "é.$cmd", 5]))
    if draw(st.integers(0, 9)):
        attr["command"] = draw(commands())
    for name in draw(st.lists(_ALIAS_NAMES, max_size=8, unique=True)):  # values of their kind, as servers write
        attr[name] = draw(_OF_KIND[fields.FIELD_ALIASES[name][1]])
    if draw(st.integers(0, 3)) == 0:
        attr.update(draw(st.dictionaries(_ALIAS_NAMES, _VALUE, max_size=3)))
    if draw(st.booleans()):
        attr["appName"] = draw(st.sampled_from(["MongoDB Automation Agent v1", "mongot", "shop-app", "",
                                                "OplogFetcherX"]))
    if draw(st.booleans()):
        attr["isFromUserConnection"] = draw(st.sampled_from([True, False, None, 0]))
    if draw(st.booleans()):
        attr["ok"] = draw(st.sampled_from([0, 0.0, False, 1, None, "0", -0.0]))
    if draw(st.booleans()):
        attr["originatingCommand"] = draw(st.sampled_from([{"find": "orders", "filter": {"a": 1}}, "x", {}]))
    attr.update(draw(timing_attr()))
    keys = list(attr)
    attr = {key: attr[key] for key in draw(st.permutations(keys))}  # the server's order is not the only one
    entry: dict[str, Any] = {}
    if draw(st.integers(0, 9)):
        stamp = draw(_STAMPS) if draw(st.integers(0, 3)) == 0 else "2024-03-01T10:00:00.000+00:00"
        entry["t"] = draw(st.sampled_from([{"$date": stamp}] * 8 + ["2024", {}]))
    entry["id"] = 51803
    if draw(st.booleans()):
        entry["ctx"] = draw(st.sampled_from(["conn12", "ReplWriterWorker-1", "", None, 7, "connx"]))
    if draw(st.integers(0, 4)) == 0:
        entry["truncated"] = draw(st.sampled_from([{"command": {"x": 1}}, {"originatingCommand": {}}, {"other": 1},
                                                   "x"]))
    entry["attr"] = draw(st.sampled_from([attr] * 9 + [None, "x", []]))
    return entry


ENTRIES = settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@ENTRIES
@given(slow_entries())
@example({"id": 51803, "attr": {"durationMillis": 5, "millis": None}})
@example({"id": 51803, "attr": {"durationMillis": 10**12, "keysExamined": 2**64 - 1}})
@example({"id": 51803, "attr": {"locks": {"Global": {"timeAcquiringMicros": {"$numberLong": "5"}}}}})
@example({"id": 51803, "attr": {"type": "command", "ns": "shop.$cmd", "command": {"count": "orders"}}})
@example({"id": 51803, "attr": {"type": "command", "ns": "shop.$cmd", "command": {"": 1}}})
def test_generated_entries_give_the_same_event(entry: dict[str, Any]) -> None:
    if type(entry.get("attr")) is not dict:
        assert _speedups.event_fields(entry) is None
        with pytest.raises(jsonlog.NotAnEntry):
            jsonlog.python_event_from_entry(entry)
        return
    same_event(entry)


def test_a_plain_server_line_takes_the_c_path_and_damage_falls_back() -> None:
    line = (b'{"t":{"$date":"2024-03-01T10:00:00.000+00:00"},"s":"I","c":"COMMAND","id":51803,"ctx":"conn7",'
            b'"msg":"Slow query","attr":{"type":"command","ns":"shop.$cmd","command":{"count":"orders","query":'
            b'{"a":1}},"planSummary":"COLLSCAN","keysExamined":0,"docsExamined":9,"nreturned":1,"locks":{"Global":'
            b'{"acquireCount":{"r":1},"timeAcquiringMicros":{"r":1500}}},"cpuNanos":2000000,"durationMillis":12}}')
    entry = orjson.loads(line)
    assert same_event(entry)
    assert _speedups.event_fields(entry)["timing"] == {"cpu_ms": 2.0, "lock_wait_ms": 1.5}
    assert _speedups.event_fields(entry)["ns"] == "shop.orders"
    for damaged in (b'"durationMillis":-12', b'"durationMillis":"12"', b'"durationMillis":1e13'):
        assert _speedups.event_fields(orjson.loads(line.replace(b'"durationMillis":12', damaged))) is None
    assert _speedups.event_fields(orjson.loads(line.replace(b'"r":1500', b'"r":-1'))) is None


# -- generated commands ---------------------------------------------------------------------------------------------

_KEYS = (st.sampled_from(["a", "b", "status", "x.y", "_id", "é", "", "a b", "a\n", "$", "1a", "-a"])
         | st.text(max_size=4))
_WRAPPERS = st.sampled_from([{"$oid": "65f0a1b2c3d4e5f601234567"}, {"$date": "2024-01-01T00:00:00Z"},
                             {"$numberLong": "7"}, {"$numberInt": "-1"}, {"$numberInt": "0"}, {"$numberDouble": "NaN"},
                             {"$numberDecimal": "1.5"}, {"$numberLong": "x"},
                             {"$binary": {"base64": "", "subType": "0"}},
                             {"$regularExpression": {"pattern": "^a", "options": ""}}, {"$date": 1, "x": 2},
                             {"$uuid": "00000000-0000-0000-0000-000000000000"}])
_SCALARS = (st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70) | st.floats()
            | st.text(max_size=5) | _WRAPPERS | st.sampled_from([0, 1, -1, 1.0, -0.0, 0.0, 10**18, 10**18 - 1, 2.5]))
_OPERATORS = st.sampled_from(["$eq", "$in", "$nin", "$ne", "$gt", "$gte", "$lt", "$lte", "$exists", "$type", "$size",
                              "$all", "$mod", "$near", "$geoWithin", "$bitsAllSet", "$jsonSchema", "$regex",
                              "$options", "$elemMatch", "$not", "$foo", "plain"])
_LISTS = st.lists(_SCALARS, max_size=5)


@st.composite
def operator_documents(draw: st.DrawFn) -> dict[str, Any]:
    return draw(st.dictionaries(_OPERATORS, _SCALARS | _LISTS | st.just({"$gt": 1}), min_size=1, max_size=4))


def filters() -> st.SearchStrategy[Any]:
    field_values = _SCALARS | _LISTS | operator_documents() | st.dictionaries(_KEYS, _SCALARS, max_size=2)
    plain = st.dictionaries(_KEYS | st.sampled_from(["$comment", "$expr", "$text", "$where", "$alwaysTrue", "$foo"]),
                            field_values, max_size=5)
    return st.recursive(plain, lambda inner: st.dictionaries(st.sampled_from(["$and", "$or", "$nor"]) | _KEYS,
                                                             st.lists(inner, max_size=3) | field_values, max_size=3),
                        max_leaves=8) | st.sampled_from([None, "x", 5, []])


_DIRECTIONS = (st.sampled_from([1, -1, 1.0, -1.0, -0.0, True, False, "x", None, {"$meta": "textScore"}, {"$meta": 3},
                                {"$numberInt": "-1"}, {}, float("nan"), 10**30, -(10**30), 0])
               | st.floats())
_SORTS = st.dictionaries(_KEYS, _DIRECTIONS, max_size=3) | st.sampled_from([None, "x", []])


def _pipeline_stages() -> st.SearchStrategy[Any]:
    group_ids = st.sampled_from(["$a", "a", None, 1, {"a": "$a", "b": "$b"}, {"x y": "$a"}, {"é": 1},
                                 {"a": {"b": "$c"}}, {"$d": "$e"}])
    accumulators = st.sampled_from([{"$sum": 1}, {"$sum": "$q"}, {"$sum": True}, {"$sum": {"$numberInt": "1"}},
                                    {"$avg": "$y"}, {"$push": "x"}, 5, {}, {"$max": {"$a": 1}}, {"$sum": 1.5}])
    return st.one_of(
        st.builds(lambda body: {"$match": body}, filters()),
        st.builds(lambda body: {"$sort": body}, _SORTS),
        st.sampled_from([{"$limit": 5}, {"$skip": 10}, {"$skip": {"$numberLong": "3"}}, {"$skip": 2.5},
                         {"$skip": -1}, {"$skip": None}, {"$project": {"a": 1}}, {}, "x", {"": 1},
                         {"$unwind": "$a"}, {"$unwind": {"path": "$b"}}, {"$unwind": {"x": 1}}, {"$unwind": 3},
                         {"$lookup": {"from": "c", "localField": "a", "foreignField": "b"}},
                         {"$lookup": {"from": "c", "pipeline": []}}, {"$lookup": {"localField": 3}},
                         {"$lookup": {"from": 5}}, {"$lookup": "x"}, {"$group": "x"}, {"$count": "n"},
                         {"$match": {"a": 1}, "$extra": 2}]),
        st.builds(lambda key, values: {"$group": {"_id": key, **values}}, group_ids,
                  st.dictionaries(_KEYS, accumulators, max_size=3)),
    )


_OPTION_VALUES = st.sampled_from([None, 0, 1, 5, True, False, 0.0, "x", {"$numberInt": "0"}, {}, -3, 2**70])
_HINTS = st.sampled_from([{"a": 1, "b": -1}, "a_1", "", {}, {"a": {"$meta": "x"}}, {"a": "x"}, 5, {"é": 1.5}])


@st.composite
def commands(draw: st.DrawFn) -> dict[str, Any]:
    op = draw(st.sampled_from(["find", "count", "distinct", "aggregate", "findAndModify", "update", "delete",
                               "insert", "getMore", "createIndexes", "unknown"]))
    command: dict[str, Any] = {op: "orders"}
    optional = {
        "filter": filters(), "query": filters(), "sort": _SORTS, "projection": _SORTS, "fields": _SORTS,
        "limit": _OPTION_VALUES, "skip": _OPTION_VALUES | st.sampled_from([10**18 - 1, 10**18, 7.9]),
        "hint": _HINTS, "collation": st.sampled_from([{"locale": "fr"}, "fr"]), "key": st.sampled_from(["a", 5]),
        "remove": _OPTION_VALUES, "upsert": _OPTION_VALUES, "new": _OPTION_VALUES,
        "pipeline": st.lists(_pipeline_stages(), max_size=5) | st.sampled_from([None, "x"]),
        "q": filters(), "u": st.sampled_from([{"$set": {"a": 1}}, {"a": 1}, [{"$set": {"a": 1}}], {}, "x"]),
        "multi": _OPTION_VALUES,
        "updates": st.lists(st.fixed_dictionaries({"q": filters()}, optional={"u": st.just({"a": 1}),
                                                                                "multi": _OPTION_VALUES}), max_size=2),
        "deletes": st.lists(st.fixed_dictionaries({"q": filters()}, optional={"limit": _OPTION_VALUES}), max_size=2),
    }
    for name in draw(st.lists(st.sampled_from(sorted(optional)), max_size=6, unique=True)):
        command[name] = draw(optional[name])
    return command


COMMANDS = settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@COMMANDS
@given(commands(), st.sampled_from(["shop.orders", "", "é.x"]))
@example({"find": "o", "filter": {"a": {"$in": [1, 2, 3]}, "b": {"$gt": 1, "$lt": 2}}, "skip": 7}, "s.o")
@example({"aggregate": "o", "pipeline": [{"$skip": 3}, {"$match": {"a": 1}}, {"$sort": {"b": -1}}]}, "s.o")
@example({"find": "o", "filter": {"a": {"$options": "i"}}}, "s.o")
@example({"find": "o", "sort": {"a": float("nan"), "b": -0.0, "c": {"$meta": "textScore"}}}, "s.o")
@example({"aggregate": "o", "pipeline": [{"$group": {"_id": {"a": "$a"}, "n": {"$sum": 1}, "m": {"$sum": 1}}}]},
         "s.o")
def test_generated_commands_give_the_same_shape(command: dict[str, Any], ns: str) -> None:
    op = classify.canonical_op(classify.command_name(command) or "")
    same_shape(ns, op, command)


def test_plain_commands_take_the_c_path_and_the_rest_fall_back() -> None:
    taken = [{"find": "o", "filter": {"a": 1, "b": {"$in": [1, 2]}}, "sort": {"c": -1}, "limit": 5},
             {"aggregate": "o",
              "pipeline": [{"$match": {"a": {"$gte": 1}}}, {"$group": {"_id": "$k", "n": {"$sum": 1}}}]},
             {"q": {"a": 1}, "u": {"$set": {"b": 2}}, "multi": True}]
    ops = ["find", "aggregate", "update"]
    for op, command in zip(ops, taken):
        assert same_shape("s.o", op, command)
    left = [{"find": "o", "filter": {"a": {"$regex": "^x"}}}, {"find": "o", "filter": {"$or": [{"a": 1}]}},
            {"find": "o", "filter": {"a": {"$elemMatch": {"b": 1}}}}, {"find": "o", "limit": {"$numberInt": "1"}},
            {"aggregate": "o", "pipeline": [{"$group": {"_id": {"a b": "$a"}}}]}]
    for command in left:
        assert _speedups.shape_command("s.o", next(iter(command)), command) is None
    assert _speedups.shape_command("s.o", "find", {"find": "o", "filter": {"a": {"$in": [1, 2, 3]}}, "skip": 4})[1:] \
        == (3, 4)


def test_shape_of_is_the_same_with_and_without_the_c_path(monkeypatch: pytest.MonkeyPatch) -> None:
    event = Event("shop.orders", "getMore", originating_command={"find": "orders", "filter": {"a": {"$in": [1, 2]}},
                                                                  "skip": 3})
    compiled = shape.shape_of(event)
    monkeypatch.setattr(shape, "_shape_command_compiled", None)
    shape._FINISHED.clear()
    assert shape.shape_of(event) == compiled
    assert compiled[1] == shape.ShapeObservation(2, 3)


# -- references -----------------------------------------------------------------------------------------------------


def _sample_inputs() -> tuple[list[Any], list[tuple[str, str, Any]]]:
    """Entries and commands that take every way through the C code: the C path, each fallback, no attr."""
    entries: list[Any] = []
    for data in _logs(FIXTURES_DIR):
        for line in _slow_lines(data):
            try:
                entries.append(orjson.loads(line))
            except orjson.JSONDecodeError:
                continue
    entries = entries[:400]
    plain = next(entry for entry in entries if _speedups.event_fields(entry) is not None)
    for damaged in ({"durationMillis": -1}, {"durationMillis": None}, {"locks": {"G": {"timeAcquiringMicros": "x"}}},
                    {"nreturned": "3"}, {"cpuNanos": float("nan")}, {"storage": {"data": {"bytesRead": None}}}):
        entries.append({**plain, "attr": {**plain["attr"], **damaged}})
    entries += [{**plain, "t": {"$date": "nonsense"}}, {**plain, "attr": None}, {"id": 51803}, [], "x"]
    commands = [(event.ns, event.op, event.command) for event in map(jsonlog.python_event_from_entry,
                                                                       (e for e in entries if type(e) is dict
                                                                        and type(e.get("attr")) is dict))
                if type(event.command) is dict]
    commands += [("s.o", "find", {"filter": {"a": {"$regex": "x"}}}), ("s.o", "aggregate", {"pipeline": [
        {"$group": {"_id": {"a b": "$a"}, "n": {"$sum": 1}}}]}), ("s.o", "find", {"limit": {"$numberInt": "1"}}),
                 ("s.o", "aggregate", {"pipeline": [{"$match": {"a": 1}}, {"$match": {"b": 1}}]})]
    return entries, commands


def test_the_c_functions_keep_no_reference_and_leak_no_memory() -> None:
    import sys
    import tracemalloc

    entries, commands = _sample_inputs()
    watched = [item for entry in entries if type(entry) is dict for item in (entry, entry.get("attr"))
               if type(item) is dict]
    watched += [command for _, _, command in commands]
    before = [sys.getrefcount(item) for item in watched]

    timings = [event.timing for event in map(jsonlog.python_event_from_entry, (e for e in entries if type(e) is dict
                                                                               and type(e.get("attr")) is dict))
               if event.timing] + [{"lock_wait_ms": 5000.0}, {"cpu_ms": 1.0, "lock_wait_ms": -1.0}]

    def run() -> None:
        for entry in entries:
            _speedups.event_fields(entry)
        for ns, op, command in commands:
            _speedups.shape_command(ns, op, command)
        _add_both_ways([(timing, 12) for timing in timings])
        _observe_both_ways([(op, command) for _, op, command in commands])

    run()
    assert [sys.getrefcount(item) for item in watched] == before
    tracemalloc.start()
    try:
        for _ in range(10):  # free lists and caches settle (a leak goes on growing)
            run()
        start = tracemalloc.get_traced_memory()[0]
        for _ in range(30):
            run()
        grown = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    assert grown < 8 * 1024, f"{grown} bytes kept after 30 rounds"


# -- a shape's time breakdown ---------------------------------------------------------------------------------------


def breakdown_state(breakdown: Any) -> Any:
    """Everything a TimeBreakdown holds, types included (a histogram's maximum is an int once an int is added)."""
    if breakdown is None:
        return None
    histograms = {name: (h.counts, h.n, h.total, h.maximum) for name, h in breakdown.histograms.items()}
    return _typed((breakdown.executions, breakdown.duration_us, breakdown.components, histograms))


def _add_both_ways(executions: list[tuple[dict[str, Any], Any]]) -> tuple[Any, Any, int]:
    from idxadvisor.shapes import digest
    from idxadvisor.shapes.timing import TimeBreakdown

    python, compiled, taken = TimeBreakdown(), TimeBreakdown(), 0
    for timing, duration in executions:
        python.add(timing, duration)
        if _speedups.add_timing(compiled, timing, duration, digest.WHOLE_UNITS, digest.SKETCHED,
                                digest.DurationHistogram, digest.EXACT_LIMIT):
            taken += 1
        else:
            compiled.add(timing, duration)
    return python, compiled, taken


_COMPONENT_NAMES = st.sampled_from([name for name, _, _ in __import__("idxadvisor.shapes.timing",
                                                                     fromlist=["COMPONENTS"]).COMPONENTS])
_COMPONENT_VALUES = (st.floats(min_value=0, max_value=2000) | st.sampled_from([0.0, 0.5, 1.5, 2.5, 1023.4, 1023.5,
                                                                                0.0005, 0.0015, 1e-9, 4e12])
                     | st.floats() | st.integers(0, 10))


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.dictionaries(_COMPONENT_NAMES | st.just("not_a_component"), _COMPONENT_VALUES,
                                          max_size=6),
                          st.integers(0, 10**6) | st.floats(min_value=0, max_value=1e9) | st.sampled_from(
                              [0.0005, 0.0015, 2.5, 10**16, 0])),
                min_size=1, max_size=8))
@example([({"lock_wait_ms": 1.5, "cpu_ms": 2.5}, 0.0025), ({"lock_wait_ms": 0.5}, 3)])
def test_the_time_breakdown_adds_up_the_same(executions: list[tuple[dict[str, Any], Any]]) -> None:
    if any(type(value) is float and math.isnan(value) for timing, _ in executions for value in timing.values()):
        executions = [({k: v for k, v in timing.items() if not (type(v) is float and math.isnan(v))}, duration)
                      for timing, duration in executions]
    try:
        python, compiled, _ = _add_both_ways(executions)
    except (ValueError, OverflowError, KeyError):  # what Python raises on a value no parser lets through
        return
    assert breakdown_state(compiled) == breakdown_state(python)


def test_the_time_breakdown_of_real_lines_takes_the_c_path() -> None:
    executions = [(event.timing, event.duration_ms or 0.0) for event in _fixture_events() if event.timing]
    python, compiled, taken = _add_both_ways(executions)
    assert breakdown_state(compiled) == breakdown_state(python)
    assert len(executions) > 100 and taken >= 0.9 * len(executions)


# -- a shape's literal values ---------------------------------------------------------------------------------------


def literals_state(stats: Any) -> Any:
    """Everything a LiteralStats holds (the checksums included), types included."""
    return _typed((stats.executions, {name: (item.values, item.strings, item.string_bytes, item.longest,
                                             item.equalities, sorted(item.distinct), item.distinct_count, item.many)
                                      for name, item in stats.fields.items()}))


def _observe_both_ways(executions: list[tuple[str, Any]]) -> tuple[Any, Any, int]:
    from idxadvisor.shapes import digest, literals

    python, compiled, taken = literals.LiteralStats(), literals.LiteralStats(), 0
    for op, command in executions:
        python.observe(op, command)
        if _speedups.observe_literals(compiled, op, command, literals.FieldLiterals, digest.WRAPPER_WIDTHS,
                                      digest.IN_VALUES, digest.DISTINCT_CAP):
            taken += 1
        else:
            compiled.observe(op, command)
    return python, compiled, taken


_LITERAL_FILTERS = st.dictionaries(
    st.sampled_from(["a", "b", "é", "", "$and", "$or", "$comment"]),
    st.sampled_from(["x", "", "ééé", "a" * 70, 1, 1.0, -0.0, True, False, None, 2**63, 10**30, {"$oid": "6" * 24},
                     {"$date": {"$numberLong": "1"}}, {"$numberDecimal": "1.5"}, {"b": 1}, {}, [1, 2], [],
                     {"$in": ["a", "b", "c", "d", "e", "f"]}, {"$in": "x"}, {"$eq": "y"}, {"$gt": 1, "$lt": "z"},
                     {"$gte": {"$date": "2024"}}, {"$ne": 3, "$exists": True}, {"$in": [{"a": 1}]},
                     {"$lte": [1]}, [{"a": 1}, {"b": "x"}], [{"$and": [{"c": 1}]}]]) | st.text(max_size=3)
    | st.integers(0, 20),
    max_size=4)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from(["find", "count", "distinct", "findAndModify", "update", "delete",
                                           "aggregate", "insert"]),
                          st.builds(lambda document, shape_of: shape_of(document), _LITERAL_FILTERS,
                                    st.sampled_from([
                                        lambda d: {"filter": d, "query": d}, lambda d: {"q": d},
                                        lambda d: {"updates": [{"q": d}]}, lambda d: {"deletes": [{"q": d}]},
                                        lambda d: {"pipeline": [{"$match": d}]}, lambda d: {"filter": [d]},
                                        lambda d: d]))),
                min_size=1, max_size=12))
def test_the_literal_values_are_observed_the_same(executions: list[tuple[str, Any]]) -> None:
    python, compiled, _ = _observe_both_ways(executions)
    assert literals_state(compiled) == literals_state(python)


@COMMANDS
@given(commands())
def test_generated_commands_observe_the_same_literal_values(command: dict[str, Any]) -> None:
    op = classify.canonical_op(classify.command_name(command) or "")
    python, compiled, _ = _observe_both_ways([(op, command)] * 3)
    assert literals_state(compiled) == literals_state(python)


def test_the_literal_values_of_real_lines_take_the_c_path() -> None:
    executions = [(event.op, event.command) for event in _fixture_events() if event.op != "getMore"]
    python, compiled, taken = _observe_both_ways(executions)
    assert literals_state(compiled) == literals_state(python)
    assert len(executions) > 500 and taken >= 0.9 * len(executions)
    assert sum(item.distinct_count for item in compiled.fields.values()) > 10


def test_the_functions_give_the_same_in_threads_at_once() -> None:
    """No state is kept between calls: threads calling at the same time get what one thread gets."""
    from concurrent.futures import ThreadPoolExecutor

    entries, commands = _sample_inputs()

    def work(offset: int) -> list[Any]:
        rotated = entries[offset:] + entries[:offset]
        events = [_speedups.event_fields(entry) for entry in rotated]
        shapes = [_speedups.shape_command(*command) for command in commands[offset:] + commands[:offset]]
        return [repr(item) for item in events + shapes]

    alone = [work(offset) for offset in range(6)]
    with ThreadPoolExecutor(max_workers=6) as pool:
        together = list(pool.map(work, list(range(6)) * 3))
    assert together == alone * 3
