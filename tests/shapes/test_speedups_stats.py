"""The C ShapeStats.add (``_speedups.add_execution``) leaves a shape's statistics exactly as the Python method does.

Every corpus log and every fixture log is read into a digest twice, with the C function and without it, and every
shape's statistics must be equal: by ``==``, after a pickle round trip, and value by value with their types (an int
is not a float, None is not 0), dict insertion order and the tuple or set form of a ``CappedSet`` included. Generated
executions (odd durations, missing counters, writes, getMores, plans, applications, connections, hashes, timestamps
out of order and equal, limits) are added to one ShapeStats both ways. Skipped when the extension is not built,
unless ``IDXADVISOR_REQUIRE_SPEEDUPS=1``.
"""

from __future__ import annotations

import dataclasses
import gzip
import pickle
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from idxadvisor import api
from idxadvisor.config import Settings
from idxadvisor.models.events import Event
from idxadvisor.parse import textlog
from idxadvisor.shapes import digest as digest_module
from idxadvisor.shapes import shape as shape_module
from idxadvisor.shapes.digest import Digest, KeptExecution, LatestExecution, ShapeStats
from idxadvisor.shapes.shape import QueryShape, ShapeObservation
from tests.conftest import FIXTURES_DIR
from tests.helpers import compiled_speedups

_speedups = compiled_speedups("add_execution")

CONTEXT = digest_module.execution_context(_speedups)  # also when IDXADVISOR_PURE_PYTHON=1 leaves the digest's empty
LOG_SUFFIXES = (".log", ".json", ".gz", ".txt", ".1", ".2")


def typed(value: Any) -> Any:
    """A value spelled out with the type of every part: ``1 == 1.0`` and ``{} == {}`` whatever the order are not
    enough here. Dicts keep their insertion order; sets are sorted; slots dataclasses and the representative
    executions become their class name and fields."""
    if value is None or type(value) in (bool, str, bytes):
        return value
    if type(value) in (int, float, datetime):
        return type(value).__name__, value
    if type(value) is dict or type(value).__name__ == "mappingproxy":
        return type(value).__name__, [(typed(key), typed(item)) for key, item in value.items()]
    if type(value) in (list, tuple):
        return type(value).__name__, [typed(item) for item in value]
    if type(value) in (set, frozenset):
        return type(value).__name__, sorted(map(repr, map(typed, value)))
    if isinstance(value, (LatestExecution, KeptExecution)):
        return type(value).__name__, value.ns, value.op, typed(value.ts), typed(value.kept_command)
    if dataclasses.is_dataclass(value):
        return type(value).__name__, [(item.name, typed(getattr(value, item.name))) for item in
                                      dataclasses.fields(value)]
    return type(value).__name__, repr(value)


def assert_same_stats(compiled: ShapeStats, python: ShapeStats) -> None:
    assert compiled == python
    assert typed(compiled) == typed(python)
    compiled_copy, python_copy = pickle.loads(pickle.dumps(compiled)), pickle.loads(pickle.dumps(python))
    assert compiled_copy == python_copy
    assert typed(compiled_copy) == typed(python_copy)


@pytest.fixture(autouse=True)
def _fresh_memos() -> Iterator[None]:
    """The text-log body memo and the shape memo left as a fresh process has them: a later test that parses a file
    twice would see the memo fill up and clear between its two readings (and compare two ShapeSlots)."""
    yield
    textlog._BODY_MEMO.clear()
    shape_module._FINISHED.clear()


def _read(path: Path, compiled: bool, monkeypatch: pytest.MonkeyPatch) -> Digest:
    monkeypatch.setattr(digest_module, "_add_execution", _speedups.add_execution if compiled else None)
    monkeypatch.setattr(digest_module, "_EXECUTION_CONTEXT", CONTEXT)
    shape_module._FINISHED.clear()  # the memo would hand the second reading the first one's shapes
    digest, _ = api.read_inputs([str(path)], Settings(jobs=1))
    return digest


def assert_same_digest(path: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    """Read ``path`` both ways; the shapes compared."""
    compiled, python = _read(path, True, monkeypatch), _read(path, False, monkeypatch)
    assert list(compiled.shapes) == list(python.shapes)
    assert compiled.skipped == python.skipped
    for fingerprint, stats in compiled.shapes.items():
        assert_same_stats(stats, python.shapes[fingerprint])
    return len(compiled.shapes)


def _log_files(root: Path) -> Iterator[Path]:
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.suffix in LOG_SUFFIXES and path.stat().st_size < 64 * 1024 * 1024:
            if path.suffix == ".gz":
                try:
                    gzip.decompress(path.read_bytes())
                except (OSError, EOFError):
                    continue  # a corrupt .gz fixture: an input error either way, nothing to compare
            yield path


@pytest.mark.corpus
def test_every_corpus_log_gives_the_same_statistics(corpus_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shapes = sum(assert_same_digest(path, monkeypatch) for path in _log_files(corpus_dir))
    assert shapes > 200


def test_every_fixture_log_gives_the_same_statistics(monkeypatch: pytest.MonkeyPatch) -> None:
    shapes = sum(assert_same_digest(path, monkeypatch) for path in _log_files(FIXTURES_DIR))
    assert shapes >= 30


def test_the_digest_takes_the_c_path_for_real_executions() -> None:
    """Nearly every execution of the demo log is added in C (the fallback is for what parsers do not produce)."""
    from idxadvisor.parse.block import BlockOptions, BlockParser
    from idxadvisor.shapes.shape import shape_of_shared
    from tests.helpers import CollectingSink

    sink = CollectingSink()
    BlockParser("json-log", BlockOptions(reference_year=2024), sink).parse(
        (FIXTURES_DIR / "demo" / "shop.log").read_bytes())
    taken = 0
    for event in sink.events:
        shape, observation = shape_of_shared(event)
        taken += _speedups.add_execution(ShapeStats(shape), event, observation, CONTEXT)
    assert len(sink.events) > 100 and taken == len(sink.events)


# -- generated executions -------------------------------------------------------------------------------------------

_START = datetime(2024, 3, 1, 10, 0, tzinfo=timezone.utc)
_SHAPES = [
    QueryShape("shop.orders", "find", (("status", "eq"),), options=("limit",), fingerprint="a"),
    QueryShape("shop.orders", "find", (("_id", "eq"),), fingerprint="b"),
    QueryShape("shop.orders", "aggregate", (("status", "eq"),), options=("limit",), stages=("$match",),
               fingerprint="c"),
    QueryShape("shop.orders", "update", (("sku", "eq"),), fingerprint="d"),
    QueryShape("shop.orders", "count", (), fingerprint="e"),
]
_DURATIONS = (st.none() | st.integers(0, 2000) | st.floats(0, 5000, allow_nan=False) | st.sampled_from(
    [0, 0.0, -0.0, 0.5, 1023, 1024, 1023.5, 2**53, 2**53 + 1, 2**60, 1e300, float("inf"), -1, -2.5,
     10**6]))
_COUNTERS = st.none() | st.integers(0, 50) | st.sampled_from([0, 2**63 - 1, 2**64 - 1, 10**30])
_TEXTS = st.none() | st.sampled_from(["", "a", "b", "conn1", "conn2", "IXSCAN { a: 1 }", "COLLSCAN", "mongosh 2.0",
                                      "mongorestore", "MongoDB Automation Agent"])
_COMMANDS = st.none() | st.sampled_from([
    {"find": "orders", "filter": {"status": "A"}, "limit": 5},
    {"find": "orders", "filter": {"status": "B"}, "limit": 200, "batchSize": 3},
    {"find": "orders", "filter": {"status": "B"}, "limit": -3},
    {"find": "orders", "filter": {"status": "B"}, "limit": 2.5},
    {"find": "orders", "filter": {"status": {"x": 1}}, "limit": 0},
    {"find": "orders", "filter": {"_id": 1}, "limit": 1, "batchSize": True},
    {"aggregate": "orders", "pipeline": [{"$match": {"status": "A"}}, {"$limit": 3}], "cursor": {"batchSize": 2}},
    {"aggregate": "orders", "pipeline": [{"$match": {"status": [1, 2]}}]},
    {"update": "orders", "updates": [{"q": {"sku": "x"}, "u": {"$set": {"a": 1}}}]},
    {"count": "orders", "query": {"a": 1}},
])
_TIMINGS = st.none() | st.sampled_from([{"cpu_ms": 1.5, "lock_wait_ms": 0.25}, {"lock_wait_ms": 5000.0}, {}])


@st.composite
def executions(draw: st.DrawFn) -> tuple[Event, ShapeObservation]:
    op = draw(st.sampled_from(["find", "find", "aggregate", "getMore", "update", "delete", "insert", "count"]))
    fields: dict[str, Any] = {"ns": "shop.orders", "op": op}
    optional = {
        "duration_ms": _DURATIONS, "keys_examined": _COUNTERS, "docs_examined": _COUNTERS, "nreturned": _COUNTERS,
        "n_matched": _COUNTERS, "n_deleted": _COUNTERS, "n_inserted": _COUNTERS, "statement": st.booleans(),
        "plan_summary": _TEXTS, "has_sort_stage": st.booleans(), "used_disk": st.booleans(),
        "spills": _COUNTERS, "error": _TEXTS, "truncated": st.booleans(), "unparsed": st.booleans(),
        "internal": _TEXTS, "num_yields": _COUNTERS, "response_length": _COUNTERS, "replanned": st.booleans(),
        "timing": _TIMINGS, "app_name": _TEXTS, "connection": _TEXTS, "remote": _TEXTS, "query_hash": _TEXTS,
        "plan_cache_shape_hash": _TEXTS, "query_shape_hash": _TEXTS, "plan_cache_key": _TEXTS,
        "ts": st.none() | st.integers(-3, 5).map(lambda minutes: _START + timedelta(seconds=minutes * 20)),
        "command": _COMMANDS, "originating_command": _COMMANDS,
    }
    for name, values in optional.items():
        if draw(st.booleans()):
            fields[name] = draw(values)
    observation = ShapeObservation(draw(st.integers(0, 3)), draw(st.sampled_from([0, 0, 5, 10**20])))
    return Event.from_fields(fields), observation


def _add_both_ways(shape: QueryShape, items: list[tuple[Event, ShapeObservation]]) -> tuple[ShapeStats, ShapeStats,
                                                                                             int]:
    compiled, python, taken = ShapeStats(shape), ShapeStats(shape), 0
    for event, observation in items:
        try:
            python.add(event, observation)
        except (ValueError, OverflowError, TypeError):  # what Python raises on a value no parser lets through
            return compiled, python, -1
        if _speedups.add_execution(compiled, event, observation, CONTEXT):
            taken += 1
        else:
            compiled.add(event, observation)
    return compiled, python, taken


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(_SHAPES), st.lists(executions(), min_size=1, max_size=12))
@example(_SHAPES[0], [(Event.from_fields({"ns": "shop.orders", "op": "find", "duration_ms": 3, "nreturned": 2,
                                          "command": {"find": "orders", "limit": 5}}), ShapeObservation())])
def test_generated_executions_give_the_same_statistics(shape: QueryShape,
                                                        items: list[tuple[Event, ShapeObservation]]) -> None:
    compiled, python, taken = _add_both_ways(shape, items)
    if taken < 0:
        return
    assert_same_stats(compiled, python)
    compiled.seal()
    python.seal()
    assert_same_stats(compiled, python)


def test_executions_in_and_out_of_order_take_the_c_path() -> None:
    """Plain executions are all added in C, the first one, later ones, earlier ones and ones at the same time."""
    items = []
    for offset in (0, 60, 60, -120, 3600, 30):
        items.append((Event.from_fields({"ns": "shop.orders", "op": "find", "duration_ms": 12, "keys_examined": 3,
                                         "docs_examined": 3, "nreturned": 1, "plan_summary": "IXSCAN { _id: 1 }",
                                         "connection": f"conn{offset % 7}", "app_name": "shop",
                                         "query_hash": "ABCD", "ts": _START + timedelta(seconds=offset),
                                         "command": {"find": "orders", "filter": {"_id": offset}}}),
                      ShapeObservation()))
    compiled, python, taken = _add_both_ways(_SHAPES[1], items)
    assert taken == len(items)
    assert_same_stats(compiled, python)
    assert compiled.bursts.open  # a point lookup: its bursts were recorded (through Python)


def test_what_the_c_code_leaves_to_python_is_declined_before_anything_changes() -> None:
    shape = _SHAPES[0]
    odd = [{"duration_ms": "12"}, {"duration_ms": 2**60}, {"duration_ms": float("nan")}, {"keys_examined": 1.5},
           {"plan_summary": 5}, {"connection": b"conn1"}, {"ts": "2024-03-01"}, {"statement": "yes"}]
    for fields in odd:
        stats = ShapeStats(shape)
        before = typed(stats)
        event = Event.from_fields({"ns": "shop.orders", "op": "find", **fields})
        assert _speedups.add_execution(stats, event, ShapeObservation(), CONTEXT) is False
        assert typed(stats) == before
    assert _speedups.add_execution(object(), Event("a.b", "find"), ShapeObservation(), CONTEXT) is False
    with pytest.raises(TypeError):
        _speedups.add_execution(ShapeStats(shape), Event("a.b", "find"), ShapeObservation(), CONTEXT[:-1])
    with pytest.raises((TypeError, ValueError)):  # the slot table must be the extension's own capsule
        _speedups.add_execution(ShapeStats(shape), Event("a.b", "find"), ShapeObservation(), (*CONTEXT[:-1], ()))
    with pytest.raises(TypeError):  # a descriptor that is not an object slot of its class
        _speedups.execution_slots((ShapeStats.__dict__["count"],) * (len(_speedups.EXECUTION_SLOTS) - 1) + (len,))


def _demo_executions() -> list[tuple[QueryShape, Event, ShapeObservation]]:
    from idxadvisor.parse.block import BlockOptions, BlockParser
    from idxadvisor.shapes.shape import shape_of_shared
    from tests.helpers import CollectingSink

    sink = CollectingSink()
    BlockParser("json-log", BlockOptions(reference_year=2024), sink).parse(
        (FIXTURES_DIR / "demo" / "shop.log").read_bytes())
    return [(shape, event, observation) for event in sink.events for shape, observation in [shape_of_shared(event)]]


def _digest_both_ways(items: list[tuple[QueryShape, Event, ShapeObservation]], compiled: bool,
                      rounds: int = 1) -> dict[str, ShapeStats]:
    shapes: dict[str, ShapeStats] = {}
    for _ in range(rounds):
        for shape, event, observation in items:
            stats = shapes.get(shape.fingerprint)
            if stats is None:
                stats = shapes[shape.fingerprint] = ShapeStats(shape)
            if not compiled or not _speedups.add_execution(stats, event, observation, CONTEXT):
                stats.add(event, observation)
    return shapes


def test_add_execution_holds_what_python_holds_and_leaks_nothing() -> None:
    """Every object the statistics keep gains as many references through C as through Python, and adding the same
    executions again and again grows memory no more in C than in Python."""
    import sys
    import tracemalloc

    items = _demo_executions()
    # The events' own dicts and lists (their commands, time breakdowns, arrays), not their strings and times: those
    # are interned, cached and shared by bounded memos that earlier tests in the process fill and clear (CI's
    # Python-path rerun saw a string lose 308 references in the middle of a run), and of two equal times a shape may
    # keep either. Their values are compared below, and a leak of any object shows in the memory growth.
    watched = [value for _, event, _ in items for value in (event.__dict__, *event.__dict__.values())
               if type(value) in (dict, list)]
    before = [sys.getrefcount(value) for value in watched]
    python = _digest_both_ways(items, compiled=False)
    after_python = [sys.getrefcount(value) for value in watched]
    compiled = _digest_both_ways(items, compiled=True)
    after_both = [sys.getrefcount(value) for value in watched]
    assert [b - a for a, b in zip(after_python, after_both)] == [b - a for a, b in zip(before, after_python)]
    assert {key: typed(stats) for key, stats in compiled.items()} == \
        {key: typed(stats) for key, stats in python.items()}

    def growth(compiled: bool) -> int:
        _digest_both_ways(items, compiled, rounds=3)  # free lists and caches settle
        tracemalloc.start()
        try:
            start = tracemalloc.get_traced_memory()[0]
            kept = _digest_both_ways(items, compiled, rounds=10)
            grown = tracemalloc.get_traced_memory()[0] - start
            del kept
            return grown
        finally:
            tracemalloc.stop()

    python_growth, compiled_growth = growth(False), growth(True)
    assert compiled_growth <= python_growth + 16 * 1024, (compiled_growth, python_growth)


def test_new_objects_are_made_as_their_class_makes_them() -> None:
    """Time buckets, plan costs, capped sets and field literals made without their __init__ (like a blank one) equal
    what the class makes, of the same class, holding the same default objects."""
    from idxadvisor.shapes.digest import CappedSet, PlanCost, TimeBucket
    from idxadvisor.shapes.literals import FieldLiterals

    stats = ShapeStats(_SHAPES[1])
    event = Event.from_fields({"ns": "shop.orders", "op": "find", "duration_ms": 3, "plan_summary": "COLLSCAN",
                               "query_hash": "AB", "ts": _START, "command": {"find": "orders", "filter": {"_id": 1}}})
    assert _speedups.add_execution(stats, event, ShapeObservation(), CONTEXT)
    made = [next(iter(stats.timeline.buckets.values())), stats.plan_costs["COLLSCAN"],
            stats.server_hashes["queryHash"], stats.literals.fields["_id"]]
    expected = [TimeBucket(), PlanCost(), CappedSet(), FieldLiterals()]
    expected[0].add(3, 0, 0)
    expected[1].count, expected[1].total_ms = 1, 3.0
    expected[2].add("AB")
    expected[3].add(1, True)
    assert [typed(item) for item in made] == [typed(item) for item in expected]
