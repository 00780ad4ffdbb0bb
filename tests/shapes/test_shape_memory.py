"""What a shape holds in memory: only what its statistics need, the same statistics as before."""

from __future__ import annotations

import copy
import pickle

from idxadvisor.models.events import Event
from idxadvisor.shapes import digest as digest_module
from idxadvisor.shapes.digest import (
    SMALL_SET,
    BurstLog,
    CappedSet,
    Digest,
    KeptExecution,
    LatestExecution,
    LiteralValues,
    RunLog,
)
from tests.helpers import digest_block, json_line


def _mixed_log() -> str:
    """A find, an aggregation run three times, and point lookups from one connection (a burst)."""
    lines = []
    for n in range(3):
        ts = f"2025-01-01T10:00:0{n}.000+00:00"
        lines.append(json_line(_attr({"find": "orders", "filter": {"status": "A", "n": n}}), ts=ts))
        lines.append(json_line(_attr({"aggregate": "orders", "pipeline": [{"$match": {"status": "B"}},
                                                                          {"$count": "n"}], "cursor": {}}), ts=ts))
        lines.append(json_line(_attr({"find": "users", "filter": {"_id": n}}, ns="shop.users", durationMillis=1),
                               ts=f"2025-01-01T11:00:00.00{n}+00:00", ctx="conn9"))
    return "\n".join(lines) + "\n"


def _attr(command: dict, ns: str = "shop.orders", **counters: object) -> dict:
    attr = {"type": "command", "ns": ns, "command": command, "planSummary": "COLLSCAN", "keysExamined": 0,
            "docsExamined": 100, "nreturned": 1, "durationMillis": 120}
    attr.update(counters)
    return attr


def _by_kind(digest: Digest) -> dict[str, object]:
    return {("aggregate" if stats.shape.op == "aggregate" else stats.shape.ns): stats
            for stats in digest.shapes.values()}


SHARED = {"runs": RunLog(), "literal_values": LiteralValues(), "bursts": BurstLog()}


def _assert_shared_empties_untouched() -> None:
    for name, empty in SHARED.items():
        assert digest_module._SHARED_EMPTIES[name] == empty, f"the shared empty {name} was changed"


def test_a_shape_shares_the_empty_parts_it_never_uses_and_gets_its_own_when_it_does() -> None:
    _, digest = digest_block(_mixed_log(), "json-log")
    shapes = _by_kind(digest)
    find, aggregate, lookups = shapes["shop.orders"], shapes["aggregate"], shapes["shop.users"]
    for name in SHARED:
        assert getattr(find, name) is digest_module._SHARED_EMPTIES[name]
    assert len(aggregate.runs) == 3 and aggregate.literal_values.runs == 3
    assert aggregate.bursts is digest_module._NO_BURSTS
    assert lookups.bursts.open and lookups.runs is digest_module._NO_RUNS
    _assert_shared_empties_untouched()


def test_shared_empty_parts_stay_shared_and_empty_through_pickling_merging_and_sealing() -> None:
    data = _mixed_log()
    _, whole = digest_block(data, "json-log")
    lines = data.splitlines(keepends=True)
    _, first = digest_block("".join(lines[:4]), "json-log")
    _, second = digest_block("".join(lines[4:]), "json-log")
    shipped_first = pickle.loads(pickle.dumps(first, protocol=pickle.HIGHEST_PROTOCOL))
    shipped_second = copy.deepcopy(second)
    find = _by_kind(shipped_first)["shop.orders"]
    assert find.runs is digest_module._NO_RUNS and find.bursts is digest_module._NO_BURSTS  # not a copy of its own
    shipped_second.merge(shipped_first)  # the first part's shapes merged into the second's, out of order
    shipped_second.seal()
    whole.seal()
    merged, expected = _by_kind(shipped_second), _by_kind(whole)
    for kind, stats in expected.items():
        assert merged[kind].runs.latest() == stats.runs.latest(), kind  # in time order (a merge appends)
        assert merged[kind].literal_values == stats.literal_values, kind
        assert merged[kind].bursts == stats.bursts, kind
    assert merged["aggregate"].runs is not digest_module._NO_RUNS and len(merged["aggregate"].runs) == 3
    assert merged["shop.users"].bursts.final() == expected["shop.users"].bursts.final()
    _assert_shared_empties_untouched()


def test_the_latest_execution_keeps_its_command_not_the_whole_event() -> None:
    _, digest = digest_block(_mixed_log(), "json-log")
    find = _by_kind(digest)["shop.orders"]
    latest = find._latest
    assert isinstance(latest, LatestExecution) and not isinstance(latest, Event)
    assert (latest.ns, latest.op, latest.command, latest.originating_command) == (
        "shop.orders", "find", {"find": "orders", "filter": {"status": "A", "n": 2}}, None)
    before = find.representative
    assert before is not None and before.command == {"find": "orders", "filter": {"status": "A", "n": 2}}
    digest.seal()
    assert isinstance(find._latest, KeptExecution) and find._latest == latest and find.representative == before


def test_a_getmore_keeps_its_originating_command() -> None:
    origin = {"find": "orders", "filter": {"status": "B"}, "batchSize": 2}
    line = json_line(_attr({"getMore": 5, "collection": "orders"}, originatingCommand=origin))
    _, digest = digest_block(line + "\n", "json-log")
    (stats,) = digest.shapes.values()
    assert isinstance(stats._latest, LatestExecution)
    assert (stats._latest.command, stats._latest.originating_command) == (None, origin)
    assert stats.representative is not None and stats.representative.command == origin


def test_adding_to_a_shared_empty_part_fails_loudly_rather_than_adding_to_every_shape() -> None:
    _, digest = digest_block(_mixed_log(), "json-log")
    find = _by_kind(digest)["shop.orders"]
    for mutate in (lambda: find.runs.runs.append((1.0, 2.0)), lambda: find.literal_values.counts.update({1: 1}),
                   lambda: find.bursts.open.update({"conn1": []})):
        try:
            mutate()
        except (AttributeError, TypeError):
            continue
        raise AssertionError("a shared empty part was changed")
    _assert_shared_empties_untouched()


def test_a_capped_set_holds_a_few_members_in_a_tuple_and_more_in_a_set() -> None:
    values = [f"conn{n}" for n in range(SMALL_SET + 1)]
    small = CappedSet()
    for value in values[:SMALL_SET] + values[:2]:
        small.add(value)
    assert small.members == tuple(values[:SMALL_SET]) and len(small) == SMALL_SET
    assert small == CappedSet(set(values[:SMALL_SET])) and small.kept() == set(values[:SMALL_SET])
    assert small != CappedSet(set(values[:SMALL_SET - 1]))
    small.add(values[-1])
    assert small.members == set(values) and small == CappedSet(tuple(reversed(values)))
    shipped = pickle.loads(pickle.dumps(CappedSet(("conn1",)), protocol=pickle.HIGHEST_PROTOCOL))
    assert shipped.members == ("conn1",)


def test_shapes_share_the_strings_of_their_plan_summaries_and_applications() -> None:
    lines = [json_line(_attr({"find": "orders", "filter": {name: 1}}, planSummary="IXSCAN { " + "a: 1 }",
                             appName="billing-" + "api")) for name in ("a", "b")]
    _, digest = digest_block("\n".join(lines) + "\n", "json-log")
    first, second = digest.shapes.values()
    (first_plan,), (second_plan,) = first.plans, second.plans
    (first_app,), (second_app,) = first.apps, second.apps
    assert first_plan is second_plan and first_app is second_app
    assert first.plan_order.runs[0].last_plan is first_plan
