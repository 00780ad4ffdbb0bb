"""Per-shape statistics against hand-counted workloads; merging partial digests changes nothing."""

from __future__ import annotations

import math
import pickle
from collections import Counter
from dataclasses import fields
from datetime import datetime, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from idxadvisor.models.events import Event
from idxadvisor.parse.block import BlockOptions, BlockParser
from idxadvisor.shapes import digest as digest_module
from idxadvisor.shapes.digest import (
    SET_CAP,
    Burst,
    BurstLog,
    CappedSet,
    Digest,
    DigestOptions,
    KeptExecution,
    PlanCost,
    PlanOrder,
    PlanRun,
    RunLog,
    ShapeStats,
    TimeBucket,
    Timeline,
)
from idxadvisor.shapes.shape import shape_of
from idxadvisor.shapes.sketch import EXACT_LIMIT, RELATIVE_ERROR, DurationHistogram, coarse_bin, coarse_percentile
from tests.helpers import REFERENCE_YEAR, digest_block, json_line, slow_attr


def workload() -> str:
    """20 runs of one find, durations 1..20 ms, at 10:00:00 + 4 s each (hand-counted expectations below)."""
    lines = []
    for n in range(1, 21):
        attr = slow_attr({"find": "orders", "filter": {"status": "A", "n": n}}, durationMillis=n,
                         keysExamined=10, docsExamined=20, nreturned=2, reslen=100,
                         planSummary="COLLSCAN" if n % 4 == 0 else "IXSCAN { status: 1 }",
                         appName="api" if n <= 15 else "batch", queryHash="ABCD0001")
        if n in (3, 6, 9, 12):
            attr["hasSortStage"] = True
        if n == 7:
            attr["usedDisk"] = True
        seconds = 4 * (n - 1)
        ts = f"2025-01-01T10:{seconds // 60:02d}:{seconds % 60:02d}.000+00:00"
        lines.append(json_line(attr, ctx=f"conn{n % 3}", ts=ts))
    return "\n".join(lines) + "\n"


def only_shape(digest: Digest):
    (stats,) = digest.shapes.values()
    return stats


def test_statistics_of_a_hand_counted_workload() -> None:
    _, digest = digest_block(workload(), "json-log")
    stats = only_shape(digest)
    assert stats.count == 20
    duration = stats.duration
    assert (duration.total, duration.mean, duration.maximum) == (210, 10.5, 20)
    # nearest rank: p50 is the 10th smallest, p95 the 19th, p99 the 20th
    assert (duration.percentile(50), duration.percentile(95), duration.percentile(99)) == (10, 19, 20)
    assert (stats.keys_examined, stats.docs_examined, stats.nreturned) == (200, 400, 40)
    assert (stats.per_returned(stats.keys_examined), stats.per_returned(stats.docs_examined)) == (5.0, 10.0)
    assert stats.plans == {"IXSCAN { status: 1 }": 15, "COLLSCAN": 5}
    assert (stats.blocking_sorts, stats.used_disk) == (4, 1)
    assert stats.apps == {"api": 15, "batch": 5}
    assert stats.connections.kept() == {"conn0", "conn1", "conn2"}
    assert stats.server_hashes["queryHash"].kept() == {"ABCD0001"}
    assert stats.first_seen == datetime(2025, 1, 1, 10, 0, tzinfo=timezone.utc)
    assert stats.last_seen == datetime(2025, 1, 1, 10, 1, 16, tzinfo=timezone.utc)
    minute = int(datetime(2025, 1, 1, 10, 0, tzinfo=timezone.utc).timestamp() // 60)
    # 10:00:00 .. 10:00:56 are runs 1..15 (durations 1..15); 10:01:00 .. 10:01:16 are runs 16..20
    buckets = stats.timeline.buckets
    assert sorted(buckets) == [minute, minute + 1]
    assert (buckets[minute].count, buckets[minute].total_ms, buckets[minute].max_ms) == (15, 120, 15)
    assert (buckets[minute + 1].count, buckets[minute + 1].total_ms, buckets[minute + 1].max_ms) == (5, 90, 20)
    assert buckets[minute].percentile(95) == 15  # the 15th of 1..15 ms: its bin [15, 16) is capped by the maximum
    assert buckets[minute + 1].percentile(50) == 20  # 16..20 ms: the 3rd, 18, lies in the bin [18, 20)
    assert stats.representative.command["filter"] == {"status": "A", "n": 20}  # the latest run


def test_merging_partial_digests_equals_digesting_the_whole() -> None:
    text = workload()
    lines = text.splitlines(keepends=True)
    _, whole = digest_block(text, "json-log")
    _, first = digest_block("".join(lines[:7]), "json-log")
    _, second = digest_block("".join(lines[7:]), "json-log")
    second.merge(first)  # out of order on purpose
    a, b = only_shape(whole), only_shape(second)
    for name in ("count", "keys_examined", "docs_examined", "nreturned", "blocking_sorts", "plans", "apps",
                 "first_seen", "last_seen"):
        assert getattr(a, name) == getattr(b, name), name
    assert a.duration.counts == b.duration.counts and a.timeline.buckets == b.timeline.buckets
    assert a.representative.command == b.representative.command


def test_getmores_add_to_the_shape_of_their_command() -> None:
    origin = {"find": "orders", "filter": {"status": "A"}}
    digest = Digest()
    digest.add(Event("shop.orders", "find", command=origin, duration_ms=100, docs_examined=101, nreturned=101))
    digest.add(Event("shop.orders", "getMore", command={"getMore": 1}, originating_command=origin, duration_ms=50,
                     docs_examined=400, nreturned=400))
    stats = only_shape(digest)
    assert (stats.count, stats.getmores, stats.docs_examined, stats.duration.total) == (2, 1, 501, 150)


def test_options_leave_out_fast_and_out_of_range_operations() -> None:
    options = DigestOptions(min_ms=5, since=datetime(2025, 1, 1, 10, 0, 20, tzinfo=timezone.utc),
                            until=datetime(2025, 1, 1, 10, 1, 0, tzinfo=timezone.utc))
    digest = Digest(options)
    BlockParser("json-log", BlockOptions(REFERENCE_YEAR), digest).parse(workload().encode())
    stats = only_shape(digest)
    assert stats.count == 10  # runs 6..15: at or after 10:00:20, before 10:01, at least 5 ms
    assert (stats.fast, stats.fast_max_ms) == (0, 0)  # runs 1..4 are also before --since
    assert digest.skipped == {"before --since": 5, "after --until": 5}
    fast_only = Digest(DigestOptions(min_ms=5))
    BlockParser("json-log", BlockOptions(REFERENCE_YEAR), fast_only).parse(workload().encode())
    assert (only_shape(fast_only).count, only_shape(fast_only).fast, only_shape(fast_only).fast_max_ms) == (16, 4, 4)


def test_a_timeline_coarsens_itself_and_keeps_every_total() -> None:
    timeline = Timeline()
    start = datetime(2025, 1, 1, tzinfo=timezone.utc).timestamp()
    for minute in range(Timeline.MAX_BUCKETS * 3):
        timeline.add(datetime.fromtimestamp(start + minute * 60, tz=timezone.utc), 2)
    assert len(timeline.buckets) <= Timeline.MAX_BUCKETS and timeline.width_minutes == 4
    assert sum(bucket.count for bucket in timeline.buckets.values()) == Timeline.MAX_BUCKETS * 3
    assert sum(bucket.total_ms for bucket in timeline.buckets.values()) == Timeline.MAX_BUCKETS * 6
    assert all(sum(bucket.bin_counts().values()) == bucket.count for bucket in timeline.buckets.values())


def test_capped_sets_stop_growing_and_say_so() -> None:
    connections = CappedSet()
    for n in range(SET_CAP + 10):
        connections.add(f"conn{n}")
    assert len(connections) == SET_CAP and connections.capped


def nearest_rank(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[max(1, math.ceil(p / 100 * len(ordered))) - 1]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 3_000_000) | st.integers(0, 2000), min_size=1, max_size=400),
       st.sampled_from([50, 90, 95, 99, 99.9, 100]))
def test_percentiles_are_exact_below_the_limit_and_within_the_bound_above(values: list[int], p: float) -> None:
    histogram = DurationHistogram()
    for value in values:
        histogram.add(value)
    true = nearest_rank(values, p)
    got = histogram.percentile(p)
    if true < EXACT_LIMIT:
        assert got == true
    else:
        assert true <= got <= true * (1 + RELATIVE_ERROR) + 1e-9
    assert got <= max(values) and histogram.maximum == max(values) and histogram.n == len(values)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 10**7), max_size=200), st.lists(st.integers(0, 10**7), max_size=200))
def test_merged_histograms_equal_one_histogram_of_everything(left: list[int], right: list[int]) -> None:
    a, b, both = DurationHistogram(), DurationHistogram(), DurationHistogram()
    for value in left:
        a.add(value)
        both.add(value)
    for value in right:
        b.add(value)
        both.add(value)
    a.merge(b)
    assert (a.counts, a.n, a.total, a.maximum) == (both.counts, both.n, both.total, both.maximum)


def test_memory_is_bounded_whatever_the_number_of_values() -> None:
    histogram = DurationHistogram()
    for value in range(0, 8_640_000_000, 97_001):  # up to 100 days, 89k values
        histogram.add(value)
    assert len(histogram.counts) < EXACT_LIMIT + 3300


def test_a_digest_shipped_between_processes_keeps_every_statistic() -> None:
    """Workers pickle their digests back: every statistic survives, and the representative keeps what it is kept for
    (its namespace, operation, time and command), however its parts are pickled."""
    lines = workload().splitlines()
    for n in range(6):  # a burst of point lookups from one connection: bursts, plan runs and costs have members
        attr = slow_attr({"find": "users", "filter": {"_id": n}}, ns="shop.users", durationMillis=2 + n,
                         planSummary="IDHACK" if n % 2 else "COLLSCAN", appName="api")
        lines.append(json_line(attr, ctx="conn7", ts=f"2025-01-01T11:00:0{n}.000+00:00"))
    origin = {"find": "orders", "filter": {"status": "B"}, "batchSize": 2}
    getmore = slow_attr({"getMore": 5, "collection": "orders"}, originatingCommand=origin, durationMillis=30)
    lines.append(json_line(getmore, ts="2025-01-01T12:00:00.000+00:00"))
    _, digest = digest_block("\n".join(lines) + "\n", "json-log")
    shipped = pickle.loads(pickle.dumps(digest, protocol=pickle.HIGHEST_PROTOCOL))
    assert shipped.shapes.keys() == digest.shapes.keys() and len(digest.shapes) == 3
    lookups = next(stats for stats in digest.shapes.values() if stats.shape.ns == "shop.users")
    assert lookups.bursts.open and lookups.plan_order.runs and len(lookups.plan_costs) == 2  # the parts pickled
    for fingerprint, stats in digest.shapes.items():
        copy = shipped.shapes[fingerprint]
        for item in fields(ShapeStats):
            if item.name != "_latest":
                assert getattr(copy, item.name) == getattr(stats, item.name), item.name
        assert copy.representative == stats.representative is not None
        latest, original = copy._latest, stats._latest
        assert isinstance(latest, KeptExecution) and (latest.ns, latest.op, latest.ts) == (original.ns, original.op,
                                                                                           original.ts)
        assert (latest.command, latest.originating_command) == (original.command if latest.op != "getMore" else None,
                                                                original.originating_command)
    getmores = [stats for stats in shipped.shapes.values() if stats.representative.op == "getMore"]
    assert [stats.representative.command for stats in getmores] == [origin]


def test_a_sealed_digest_keeps_of_each_representative_only_what_it_is_kept_for() -> None:
    origin = {"find": "orders", "filter": {"customer": "B"}, "batchSize": 2}
    lines = [json_line(slow_attr({"find": "orders", "filter": {"status": "A"}}, planSummary="COLLSCAN",
                                 keysExamined=0, appName="api"), ctx="conn3", ts="2025-01-01T10:00:00.000+00:00"),
             json_line(slow_attr({"getMore": 5, "collection": "orders"}, originatingCommand=origin),
                       ts="2025-01-01T12:00:00.000+00:00")]
    _, digest = digest_block("\n".join(lines) + "\n", "json-log")
    before = {fingerprint: stats.representative for fingerprint, stats in digest.shapes.items()}
    assert not any(isinstance(stats._latest, KeptExecution) for stats in digest.shapes.values())  # until sealed
    digest.seal()
    kept = {fingerprint: stats._latest for fingerprint, stats in digest.shapes.items()}
    assert all(isinstance(event, KeptExecution) for event in kept.values())
    assert {fingerprint: stats.representative for fingerprint, stats in digest.shapes.items()} == before
    assert sorted((event.op, event.command, event.originating_command) for event in kept.values()) == [
        ("find", {"find": "orders", "filter": {"status": "A"}}, None), ("getMore", None, origin)]
    (find,) = [stats for stats in digest.shapes.values() if stats.representative.op == "find"]
    find.representative.command["filter"]["status"] = "changed"  # every reader gets a copy of its own
    assert find.representative == before[find.shape.fingerprint]
    digest.seal()  # an input ends again: what is kept stays as it is
    assert all(stats._latest is kept[fingerprint] for fingerprint, stats in digest.shapes.items())
    (event,) = [event for event in kept.values() if event.op == "find"]
    reordered = KeptExecution(event.ns, event.op, event.ts, pickle.dumps({"filter": {"status": "A"}, "find": "orders"}))
    assert reordered == event and KeptExecution(event.ns, event.op, None, event.packed) != event


def test_shapes_run_on_one_connection_share_its_name() -> None:
    lines = [json_line(slow_attr({"find": "orders", "filter": {name: 1}}), ctx="conn42") for name in ("a", "b")]
    _, digest = digest_block("\n".join(lines) + "\n", "json-log")
    first, second = ([*stats.connections.members] for stats in digest.shapes.values())
    assert first == second == ["conn42"] and first[0] is second[0]  # one string, however many shapes it ran


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.floats(0, 1e7, allow_nan=False), st.sampled_from([0.0, 0.5, 1.0, 2.0, 2.1, 100.0])),
                max_size=30), st.integers(0, 30))
def test_a_bucket_keeps_its_bins_whichever_way_it_was_built(durations: list[float], cut: int) -> None:
    """A bucket whose executions share one bin keeps no dict of bins; its bins and percentiles are those of every
    execution counted, whether added one by one or merged from two parts."""
    whole, left, right = TimeBucket(), TimeBucket(), TimeBucket()
    for duration in durations:
        whole.add(duration, 0, 0)
    for part, chosen in ((left, durations[:cut]), (right, durations[cut:])):
        for duration in chosen:
            part.add(duration, 0, 0)
    left.merge(right)
    expected = dict(Counter(coarse_bin(duration) for duration in durations))
    assert whole.bin_counts() == left.bin_counts() == expected
    assert (whole.bins is None) == (left.bins is None) == (len(expected) <= 1)
    for p in (50, 95, 99):
        assert whole.percentile(p) == left.percentile(p) == coarse_percentile(expected, p, max(durations, default=0.0))


def test_a_digest_travels_in_parts_and_comes_back_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(digest_module, "SHIPPED_SHAPES", 2)
    lines = [json_line(slow_attr({"find": "orders", "filter": {name: 1}}), ts=f"2025-01-01T10:00:0{n}.000+00:00")
             for n, name in enumerate("abcde")]
    digest = Digest(DigestOptions(min_ms=0.0, since=datetime(2025, 1, 1, 10, 0, 1, tzinfo=timezone.utc)))
    parser = BlockParser("json-log", BlockOptions(REFERENCE_YEAR), digest)
    parser.feed(("\n".join(lines) + "\n").encode())
    parser.finish()
    assert len(digest.shapes) == 4 and digest.skipped == {"before --since": 1}
    _, (_, _, parts) = digest.__reduce__()
    assert len(parts) == 2  # four shapes, two to a pickle
    shipped = pickle.loads(pickle.dumps(digest, protocol=pickle.HIGHEST_PROTOCOL))
    assert (shipped.options, shipped.skipped, list(shipped.shapes)) == (digest.options, digest.skipped,
                                                                          list(digest.shapes))
    assert all(shipped.shapes[key].count == stats.count == 1 for key, stats in digest.shapes.items())
    assert shipped._filtering  # rebuilt from its options, as a new digest's is


def test_the_parts_of_a_digest_pickle_whole() -> None:
    """Every field of every part of a shape's statistics comes back from a pickle (most pickle as their constructor's
    arguments, the histogram as its slots)."""
    burst = Burst(1.0, 2.0, 3, "conn9", "api")
    parts = [TimeBucket(3, 12.5, 9.0, 40, 7, {3: 2, 9: 1}), PlanCost(2, 4.5, 10, 20, 3),
             PlanRun(1.0, "COLLSCAN", 9.0, "IXSCAN { a: 1 }", 4), burst, CappedSet({"a", "b"}, True, "b"),
             Timeline(2, {100: TimeBucket(1, 2.0, 2.0, 3, 4, None)}), RunLog([(1.0, 2.0)]),
             PlanOrder([PlanRun(1.0, "COLLSCAN", 2.0, "COLLSCAN", 0)], 5),
             BurstLog({"conn9": [burst]}, Burst(5.0, 9.0, 4, "conn8", ""), {4: 1}, True),
             DurationHistogram({3: 1, 1500: 2}, 3, 3003.0, 1500.0)]
    assert pickle.loads(pickle.dumps(parts, protocol=pickle.HIGHEST_PROTOCOL)) == parts


def test_the_main_plan_is_the_most_used_and_its_share_is_of_every_execution() -> None:
    shape = shape_of(Event("db.c", "find", command={"find": "c", "filter": {"a": 1}}))[0]
    stats = ShapeStats(shape, count=10, plans={"IXSCAN { a: 1 }": 3, "COLLSCAN": 5, "IXSCAN { b: 1 }": 2})
    assert stats.main_plan == "COLLSCAN"
    assert stats.main_plan_share == 0.5
    assert ShapeStats(stats.shape).main_plan_share == 0.0
