"""The seek-counting rules of planner-semantics.md §4, with the exact numbers the spec quotes."""

from __future__ import annotations

from typing import Any

import pytest
from bson import Regex

from idxadvisor.indexes.model import IndexSpec
from idxadvisor.whatif import Estimator, WhatIfQuery


def _explain(docs: list[dict[str, Any]], flt: dict[str, Any], index: dict[str, int], *,
             command: str = "find", sort: dict[str, int] | None = None, hint: bool = True,
             **extra: Any) -> dict[str, Any]:
    spec = IndexSpec.from_key(index)
    query = WhatIfQuery(command=command, filter=flt, sort=sort, **extra)
    result = Estimator(docs).explain(query, [spec], spec.key if hint else None)
    assert "unsupported" not in result, result
    return result


@pytest.fixture(scope="module")
def ages() -> list[dict[str, Any]]:
    """index_check6.js: ages 10..49, ratings 0..9 (doubles, as the shell inserts them)."""
    return [{"age": float(a), "rating": float(r)} for a in range(10, 50) for r in range(10)]


@pytest.mark.parametrize(("flt", "keys"), [
    ({"age": 30.0}, 10),                                                   # A
    ({"age": {"$gte": 29.0, "$lte": 30.0}}, 20),                           # B
    ({"age": {"$gte": 25.0, "$lte": 30.0}, "rating": {"$in": [0.0, 9.0]}}, 19),   # C1: 6x3 + 1
    ({"age": {"$gte": 25.0, "$lte": 30.0}, "rating": {"$in": [0.0, 8.0]}}, 24),   # C2: DONE on (30, 9)
    ({"age": {"$gte": 25.0, "$lte": 30.0}, "rating": {"$in": [1.0, 8.0]}}, 29),   # C3: (a,0) read first
    ({"age": {"$gte": 29.0, "$lte": 30.0}, "rating": 5.0}, 5),             # C (SERVER-371)
    ({"age": {"$gte": 29.0, "$lte": 30.0}, "rating": {"$gte": 4.0, "$lte": 5.0}}, 7),  # D
    ({"age": 30.0, "rating": {"$gte": 4.0, "$lte": 5.0}}, 2),
])
def test_index_check6(ages: list[dict[str, Any]], flt: dict[str, Any], keys: int) -> None:
    assert _explain(ages, flt, {"age": 1, "rating": 1})["totalKeysExamined"] == keys


@pytest.fixture(scope="module")
def abc() -> list[dict[str, Any]]:
    return [{"a": float(a), "b": float(b), "c": float(c)} for a in range(1, 10) for b in range(10) for c in range(10)]


_BATTERY: list[tuple[int, dict[str, Any]]] = [
    (1, {"a": 5, "b": 5, "c": 5}),
    (2, {"a": 5, "b": 5, "c": {"$gte": 5, "$lte": 6}}),
    (1, {"a": 5, "b": 5, "c": {"$gte": 5.5, "$lte": 6}}),
    (3, {"a": 5, "b": 5, "c": {"$gte": 5, "$lte": 7}}),
    (4, {"a": 5, "b": {"$gte": 5, "$lte": 6}, "c": 5}),
    (8, {"a": 5, "b": {"$gte": 5, "$lte": 7}, "c": 5}),
    (5, {"a": {"$gte": 5, "$lte": 6}, "b": 5, "c": 5}),
    (8, {"a": {"$gte": 5, "$lte": 7}, "b": 5, "c": 5}),
    (7, {"a": {"$gte": 5, "$lte": 6}, "b": 5, "c": {"$gte": 5, "$lte": 6}}),
    (7, {"a": 5, "b": {"$gte": 5, "$lte": 6}, "c": {"$gte": 5, "$lte": 6}}),
    (11, {"a": {"$gte": 5, "$lte": 6}, "b": {"$gte": 5, "$lte": 6}, "c": 5}),
    (15, {"a": {"$gte": 5, "$lte": 6}, "b": {"$gte": 5, "$lte": 6}, "c": {"$gte": 5, "$lte": 6}}),
]


@pytest.mark.parametrize("directions", [(a, b, c) for a in (1, -1) for b in (1, -1) for c in (1, -1)])
@pytest.mark.parametrize("reverse", [False, True])
def test_index_check6_battery(abc: list[dict[str, Any]], directions: tuple[int, int, int], reverse: bool) -> None:
    """index_check6.js asserts |keys - n| <= 2 for every direction of index and sort."""
    index = dict(zip("abc", directions))
    sort = {k: (-v if reverse else v) for k, v in index.items()}
    for expected, flt in _BATTERY:
        result = _explain(abc, flt, index, sort=sort)
        assert abs(result["totalKeysExamined"] - expected) <= 2, (flt, result["totalKeysExamined"])
        assert result["blockingSort"] is False


def test_single_range_has_no_overshoot() -> None:
    """AQP: quantity [100, 200] examines 3 keys for 3 documents although 250 follows."""
    docs = [{"quantity": float(q)} for q in (500, 100, 200, 150, 300, 500, 250, 400, 50, 75)]
    result = _explain(docs, {"quantity": {"$gte": 100.0, "$lte": 200.0}}, {"quantity": 1})
    assert (result["totalKeysExamined"], result["nReturned"]) == (3, 3)


def test_open_range_between_present_keys_examines_nothing() -> None:
    """indexj: (4, 5) with keys 4 and 5 present -> 0 keys."""
    docs = [{"a": 4.0}, {"a": 5.0}, {"a": 4.0}, {"a": 5.0}]
    assert _explain(docs, {"a": {"$gt": 4.0, "$lt": 5.0}}, {"a": 1})["totalKeysExamined"] == 0


def test_anti_esr_range_before_equality() -> None:
    """{quantity: [100, 300], type: "food"} on {quantity: 1, type: 1}: 6 keys, 2 documents."""
    docs = [{"_id": i, "type": t, "quantity": float(q)} for i, (t, q) in enumerate([
        ("food", 500), ("food", 100), ("paper", 200), ("paper", 150), ("food", 300),
        ("toys", 500), ("apparel", 250), ("apparel", 400), ("toys", 50), ("food", 75)])]
    result = _explain(docs, {"quantity": {"$gte": 100.0, "$lte": 300.0}, "type": "food"}, {"quantity": 1, "type": 1})
    assert (result["totalKeysExamined"], result["totalDocsExamined"], result["nReturned"]) == (6, 2, 2)


def test_regex_prefix_costs_one_extra_key() -> None:
    """regex6: /^bob/ examines count + 1 keys (the key that leaves the prefix range)."""
    docs = [{"name": n} for n in ("eliot", "emily", "bob", "aaron")]
    result = _explain(docs, {"name": Regex("^bob")}, {"name": 1})
    assert (result["totalKeysExamined"], result["nReturned"]) == (2, 1)


def test_index_end_costs_no_extra_key() -> None:
    """explain6: a multi-interval scan that runs off the end of the index counts no extra key."""
    docs = [{"a": 1.0}, {"a": 2.0}]
    result = _explain(docs, {"a": {"$in": [1.0, 2.0]}}, {"a": 1})
    assert (result["totalKeysExamined"], result["nReturned"]) == (2, 2)


def test_consecutive_in_points_cost_nothing_extra() -> None:
    """orf.js: 200 _id points over keys 0..199 examine exactly 200 keys."""
    docs = [{"_id": float(i)} for i in range(200)]
    flt = {"$or": [{"_id": float(i)} for i in range(200)]}
    result = Estimator(docs).explain(WhatIfQuery(filter=flt), [], {"_id": 1})
    assert (result["totalKeysExamined"], result["nReturned"]) == (200, 200)


def test_count_scan_counts_the_final_probe() -> None:
    """profile_count.js: count({a: {$gte: 5}}) over a = 0..9 examines 6 keys for 5."""
    docs = [{"a": float(i)} for i in range(10)]
    result = _explain(docs, {"a": {"$gte": 5.0}}, {"a": 1}, command="count", hint=False)
    assert (result["nCounted"], result["totalKeysExamined"]) == (5, 6)
    assert result["stages"] == ["COUNT", "COUNT_SCAN"]


def test_multikey_entries_count_but_documents_are_deduplicated() -> None:
    """{item: "XYZ", ratings: {$gte: 3}} on {item: 1, ratings: 1}: 2 keys, 1 document."""
    docs = [{"item": "ABC", "ratings": [2.0, 9.0]}, {"item": "XYZ", "ratings": [4.0, 3.0]}]
    result = _explain(docs, {"item": "XYZ", "ratings": {"$gte": 3.0}}, {"item": 1, "ratings": 1})
    assert (result["totalKeysExamined"], result["totalDocsExamined"], result["nReturned"]) == (2, 1, 1)
    assert result["indexBounds"] == {"item": ['["XYZ", "XYZ"]'], "ratings": ["[3.0, inf.0]"]}


def test_skip_below_fetch() -> None:
    """add_skip_stage_before_fetch.js: 2500 keys, only the 100 returned documents fetched."""
    docs = [{"a": i % 2, "b": i % 4, "c": (i * 7919 + 13) % 1000, "d": (i * 104729 + 7) % 1000} for i in range(10000)]
    result = _explain(docs, {"a": 0, "b": 2}, {"a": 1, "b": 1, "c": 1}, skip=2400)
    assert (result["totalKeysExamined"], result["totalDocsExamined"], result["nReturned"]) == (2500, 100, 100)
    assert result["stages"] == ["FETCH", "SKIP", "IXSCAN"]
    sorted_elsewhere = _explain(docs, {"a": 0, "b": 2}, {"a": 1, "b": 1, "c": 1}, skip=2400, sort={"d": 1})
    assert sorted_elsewhere["totalDocsExamined"] == 2500


def test_limit_stops_collscan_early() -> None:
    """limit-003: x > 50 limit 20 over x = 0..99 reads 71 documents."""
    docs = [{"x": float(i)} for i in range(100)]
    result = Estimator(docs).explain(WhatIfQuery(filter={"x": {"$gt": 50.0}}, limit=20))
    assert (result["totalDocsExamined"], result["nReturned"], result["stages"]) == (71, 20, ["LIMIT", "COLLSCAN"])
