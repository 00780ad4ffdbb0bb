"""What depends on the order of executions (plan changes, bursts of lookups from one connection) merges like every
other statistic: cut the input into parts, digest each, merge them in any order, and the whole comes back, including
the switches and bursts that straddle a cut."""

from __future__ import annotations

import random

from hypothesis import given
from hypothesis import strategies as st

from idxadvisor.parse.profile import event_from_profile
from idxadvisor.shapes.digest import BURST_GAP_MS, BurstLog, Digest, PlanOrder
from idxadvisor.shapes.shape import point_lookup_field, shape_of
from tests.helpers import digest_block, json_line, slow_attr
from idxadvisor.models.events import Event


def cut(items: list, cuts: list[int]) -> list[list]:
    """``items`` cut at the given positions into contiguous parts."""
    bounds = sorted({min(max(position, 0), len(items)) for position in cuts} | {0, len(items)})
    return [items[start:end] for start, end in zip(bounds, bounds[1:])]


# -- plan changes ---------------------------------------------------------------------------------------------------

plans = st.lists(st.sampled_from(["IXSCAN { a: 1 }", "IXSCAN { b: 1 }", "COLLSCAN"]), min_size=1, max_size=60)


@given(plans, st.lists(st.integers(0, 60), max_size=6), st.randoms(use_true_random=False))
def test_plan_switches_of_parts_merged_in_any_order_are_those_of_the_whole(sequence: list[str], cuts: list[int],
                                                                           shuffle: random.Random) -> None:
    executions = [(float(position * 1000), plan) for position, plan in enumerate(sequence)]
    expected = sum(before != after for before, after in zip(sequence, sequence[1:]))
    parts = []
    for part in cut(executions, cuts):
        order = PlanOrder()
        for moment, plan in part:
            order.add(moment, plan)
        parts.append(order)
    shuffle.shuffle(parts)
    merged = parts[0]
    for part in parts[1:]:
        merged.merge(part)
    assert merged.switches == expected


def test_a_plan_that_changed_once_switched_once() -> None:
    order = PlanOrder()
    for moment, plan in enumerate(["COLLSCAN"] * 5 + ["IXSCAN { a: 1 }"] * 5):
        order.add(float(moment), plan)
    assert order.switches == 1 and len(order.runs) == 1


# -- bursts ---------------------------------------------------------------------------------------------------------


def expected_bursts(lookups: list[tuple[str, float, float]]) -> tuple[tuple | None, dict[int, int]]:
    """Bursts counted the plain way: per connection, in time order, a pause longer than the gap ends one."""
    sizes: dict[int, int] = {}
    worst = None
    for connection in sorted({connection for connection, _, _ in lookups}):
        own = [(start, end) for name, start, end in lookups if name == connection]
        bursts = []
        for start, end in own:
            if bursts and start - bursts[-1][1] <= BURST_GAP_MS:
                bursts[-1] = (bursts[-1][0], max(bursts[-1][1], end), bursts[-1][2] + 1)
            else:
                bursts.append((start, end, 1))
        for start, end, size in bursts:
            if size >= 2:
                sizes[size] = sizes.get(size, 0) + 1
            rank = (size, start - end, -start)
            if worst is None or rank > worst[0]:
                worst = (rank, connection, size, start, end)
    return (worst[1:] if worst else None), sizes


lookup_streams = st.lists(st.tuples(st.sampled_from(["conn1", "conn2", "conn3"]),
                                    st.sampled_from([1.0, 3.0, 8.0, 10.0, 11.0, 40.0, 500.0]),
                                    st.integers(0, 5)), min_size=1, max_size=120)


@given(lookup_streams, st.lists(st.integers(0, 120), max_size=6), st.randoms(use_true_random=False))
def test_bursts_of_parts_merged_in_any_order_are_those_of_the_whole(stream: list[tuple[str, float, int]],
                                                                    cuts: list[int], shuffle: random.Random) -> None:
    clock: dict[str, float] = {}
    lookups = []
    moment = 0.0
    for connection, pause, duration in stream:  # each connection waits for its previous lookup to end
        start = max(moment, clock.get(connection, 0.0) + pause)
        moment = start
        clock[connection] = start + duration
        lookups.append((connection, start, start + duration))
    lookups.sort(key=lambda lookup: lookup[2])  # a log is written as operations end
    parts = []
    for part in cut(lookups, cuts):
        log = BurstLog()
        for connection, start, end in part:
            log.add(connection, start, end, "app")
        parts.append(log)
    shuffle.shuffle(parts)
    merged = parts[0]
    for part in parts[1:]:
        merged.merge(part)
    worst, sizes = merged.final()
    expected_worst, expected_sizes = expected_bursts(lookups)
    assert sizes == expected_sizes
    assert (worst.connection, worst.size, worst.start_ms, worst.end_ms) == expected_worst


def test_a_burst_cut_by_a_block_boundary_is_counted_once(tmp_path) -> None:
    lines = []
    for number in range(30):  # 30 lookups 2 ms apart on one connection, then the same lookup spread out
        end = f"2026-01-05T09:00:00.{number * 7 + 5:03d}+00:00"
        lines.append(json_line(slow_attr({"find": "items", "filter": {"orderId": number}}, ns="shop.items",
                                         durationMillis=5), ctx="conn9", ts=end))
    for minute in range(5):
        lines.append(json_line(slow_attr({"find": "items", "filter": {"orderId": 1}}, ns="shop.items"),
                               ctx="conn9", ts=f"2026-01-05T09:1{minute}:00.000+00:00"))
    whole = digest_block("\n".join(lines) + "\n", "json-log")[1]
    halves = [digest_block("\n".join(part) + "\n", "json-log")[1] for part in (lines[:13], lines[13:])]
    halves[1].merge(halves[0])
    for digest in (whole, halves[1]):
        (stats,) = digest.shapes.values()
        worst, sizes = stats.bursts.final()
        assert (worst.size, worst.connection, sizes) == (30, "conn9", {30: 1})
        assert worst.end_ms - worst.start_ms == 29 * 7 + 5  # from the first start to the last end


def test_only_point_lookups_keep_bursts() -> None:
    def field(command: dict) -> str | None:
        return point_lookup_field(shape_of(Event("shop.items", "find", command=command))[0])

    assert field({"find": "items", "filter": {"_id": 1}, "limit": 1}) == "_id"
    assert field({"find": "items", "filter": {"orderId": 1}, "projection": {"sku": 1}}) == "orderId"
    assert field({"find": "items", "filter": {"orderId": 1, "state": "x"}}) is None
    assert field({"find": "items", "filter": {"orderId": {"$in": [1, 2]}}}) is None
    assert field({"find": "items", "filter": {"orderId": 1}, "sort": {"at": 1}}) is None


def test_the_profiler_has_no_connection_so_a_burst_is_per_client_address() -> None:
    digest = Digest()
    for number in range(12):
        digest.add(event_from_profile({"op": "query", "ns": "shop.items", "millis": 1, "client": "10.0.0.7",
                                       "command": {"find": "items", "filter": {"orderId": number}},
                                       "ts": {"$date": f"2026-01-05T09:00:00.{number * 3 + 1:03d}Z"}}))
    (stats,) = digest.shapes.values()
    worst, _ = stats.bursts.final()
    assert (worst.connection, worst.size) == ("10.0.0.7", 12)


def test_legacy_queries_keep_their_ntoskip() -> None:
    text = ("2014-03-04T10:00:00.000+0000 [conn3] query shop.orders query: { $query: { status: \"new\" }, "
            "$orderby: { at: -1 } } planSummary: IXSCAN { at: -1 } ntoreturn:50 ntoskip:4000 nscanned:4050 "
            "nscannedObjects:4050 keyUpdates:0 numYields:31 locks(micros) r:9000 nreturned:50 reslen:9000 250ms\n")
    (stats,) = digest_block(text, "text-log")[1].shapes.values()
    assert stats.skip_max == 4000 and stats.shape.has_option("skip")
    profiled = event_from_profile({"op": "query", "ns": "shop.orders", "query": {"status": "new"}, "ntoskip": 900,
                                   "millis": 120, "ts": {"$date": "2014-03-04T10:00:00Z"}})
    assert shape_of(profiled)[1].skip == 900


def test_plan_costs_and_measured_counters() -> None:
    lines = [json_line(slow_attr({"find": "orders", "filter": {"a": 1, "b": 2}}, planSummary=plan,
                                 keysExamined=keys, docsExamined=keys, nreturned=1, durationMillis=ms),
                       ts=f"2026-01-05T09:00:0{position}.000+00:00")
             for position, (plan, keys, ms) in enumerate([("IXSCAN { a: 1 }", 10, 5), ("IXSCAN { b: 1 }", 9000, 900),
                                                           ("IXSCAN { a: 1 }", 12, 7)])]
    (stats,) = digest_block("\n".join(lines) + "\n", "json-log")[1].shapes.values()
    a, b = stats.plan_costs["IXSCAN { a: 1 }"], stats.plan_costs["IXSCAN { b: 1 }"]
    assert (a.count, a.total_ms, a.docs_examined, b.count, b.docs_examined) == (2, 12, 22, 1, 9000)
    assert stats.plan_order.switches == 2 and stats.docs_measured == stats.keys_measured == 3
