"""What a limited query matched: an execution that returned fewer documents than its limit (and its first batch)
returned everything its filter matched; the shape counts those executions and what they returned."""

from __future__ import annotations

from idxadvisor.models.events import Event
from idxadvisor.shapes.digest import Digest
from idxadvisor.shapes.literals import FIRST_BATCH, first_reply_cap


def find(limit: object = None, **extra: object) -> dict:
    command = {"find": "orders", "filter": {"status": "A"}, **extra}
    return command if limit is None else {**command, "limit": limit}


def test_the_first_reply_is_capped_by_the_limit_the_batch_size_and_the_first_batch() -> None:
    assert first_reply_cap("find", find(10)) == 10
    assert first_reply_cap("find", find(-5)) == 5  # a negative limit: one batch of that many
    assert first_reply_cap("find", find(500)) == FIRST_BATCH  # a reply of 101 may have more to come
    assert first_reply_cap("find", find(50, batchSize=20)) == 20
    assert first_reply_cap("find", find()) is None and first_reply_cap("find", find(0)) is None
    assert first_reply_cap("find", find(10, batchSize=0)) is None  # the first reply holds nothing
    pipeline = {"aggregate": "orders", "pipeline": [{"$match": {"a": 1}}, {"$limit": 10}], "cursor": {}}
    assert first_reply_cap("aggregate", pipeline) == 10
    assert first_reply_cap("aggregate", {**pipeline, "cursor": {"batchSize": 4}}) == 4
    assert first_reply_cap("aggregate", {"aggregate": "orders", "pipeline": [{"$match": {"a": 1}}]}) is None
    assert first_reply_cap("count", {"count": "orders", "query": {}, "limit": 10}) is None
    assert first_reply_cap("find", {"find": "orders", "limit": "ten"}) is None


def executed(*runs: tuple[object, int]) -> Digest:
    """One find per (limit, returned)."""
    digest = Digest()
    for limit, returned in runs:
        digest.add(Event("shop.orders", "find", command=find(limit), duration_ms=5, docs_examined=1000,
                         keys_examined=0, nreturned=returned))
    return digest


def test_executions_under_their_limit_are_counted_with_what_they_returned() -> None:
    digest = executed((10, 3), (10, 10), (5, 0), (20, 7), (500, 101))
    (stats,) = digest.shapes.values()
    # 10 of 10 and 101 of a first batch may have matched more; 0 of 5 matched nothing
    assert (stats.under_limit, stats.under_limit_returned) == (3, 10)
    assert stats.nreturned == 121


def test_a_getmore_or_a_shape_without_a_limit_counts_nothing() -> None:
    digest = executed((None, 3))
    origin = find(200)
    digest.add(Event("shop.orders", "find", command=origin, duration_ms=5, docs_examined=101, nreturned=101))
    digest.add(Event("shop.orders", "getMore", command={"getMore": 1}, originating_command=origin, duration_ms=5,
                     docs_examined=40, nreturned=40))
    assert all((stats.under_limit, stats.under_limit_returned) == (0, 0) for stats in digest.shapes.values())


def test_merged_digests_add_up_what_their_executions_returned_under_their_limit() -> None:
    whole = executed((10, 3), (10, 10), (5, 1), (20, 7))
    first, second = executed((10, 3), (10, 10)), executed((5, 1), (20, 7))
    second.merge(first)
    (mine,), (theirs,) = whole.shapes.values(), second.shapes.values()
    assert (mine.under_limit, mine.under_limit_returned) == (theirs.under_limit, theirs.under_limit_returned) == (3, 11)
