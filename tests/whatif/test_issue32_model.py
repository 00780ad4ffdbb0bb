"""Issue 32's mechanisms, one property each (the conformance cases hold the jstest assertions)."""

from __future__ import annotations

from idxadvisor.indexes.model import IndexSpec
from idxadvisor.whatif import Estimator, WhatIfQuery
from idxadvisor.whatif.matching import filter_applies, path_values
from idxadvisor.whatif.pipeline import push_down
from idxadvisor.whatif.query import _matcher_value
from idxadvisor.whatif.wildcard import index_or_field_paths


def test_a_multikey_field_with_an_equality_gives_no_sort() -> None:
    docs = [{"_id": i, "x": [i, i + 10]} for i in range(5)]
    result = Estimator(docs).explain(WhatIfQuery(filter={"x": 3}, sort={"x": 1}), [IndexSpec.from_key({"x": 1})],
                                     {"x": 1})
    assert result["blockingSort"] is True and result["stages"][0] == "SORT"
    plain = [{"_id": i, "x": i} for i in range(5)]
    result = Estimator(plain).explain(WhatIfQuery(filter={"x": 3}, sort={"x": 1}), [IndexSpec.from_key({"x": 1})])
    assert result["blockingSort"] is False


def test_nested_arrays_sort_by_their_index_keys() -> None:
    docs = [{"_id": 1, "a": [[1, 2], 3]}, {"_id": 2, "a": [2]}, {"_id": 3, "a": [[0]]}, {"_id": 4, "a": 5}]
    ascending = Estimator(docs).explain(WhatIfQuery(sort={"a": 1}))
    descending = Estimator(docs).explain(WhatIfQuery(sort={"a": -1}))
    assert ascending["returnedIds"] == [2, 1, 4, 3] and descending["returnedIds"] == [1, 3, 4, 2]


def test_document_equality_follows_field_order() -> None:
    wanted = {"x": _matcher_value({"a": 1, "b": 2})}
    assert filter_applies(wanted, {"x": {"a": 1, "b": 2}})
    assert not filter_applies(wanted, {"x": {"b": 2, "a": 1}})
    assert filter_applies(wanted, {"x": [{"b": 2, "a": 1}, {"a": 1, "b": 2}]})


def test_a_numeric_component_reaches_positions_and_field_names() -> None:
    doc = {"a": [{"1": 4}, 5]}
    assert sorted(path_values(doc, ["a", "1"])) == [4, 5]
    assert filter_applies({"a.1": 4}, doc) and filter_applies({"a.1": 5}, doc)
    assert list(path_values({"a": [[1, 2]]}, ["a", "b"])) == []  # nested arrays are not traversed


def test_wildcard_positional_bounds_read_every_combination() -> None:
    assert index_or_field_paths("a.0.b.1.c", [1, 3], False) == ["a.0.b.1.c", "a.0.b.c", "a.b.1.c", "a.b.c"]
    assert index_or_field_paths("a.0.b", [1], True) == ["a.0.b", "a.b"]


def test_limit_moves_ahead_of_transformations() -> None:
    pushed = push_down([{"$project": {"a": 1}}, {"$limit": 5}, {"$sort": {"a": 1}}])
    assert pushed.limit == 5 and pushed.sort is None and pushed.transforms
    coalesced = push_down([{"$match": {"a": 1}}, {"$limit": 50}, {"$limit": 10}])
    assert coalesced.limit == 10 and not coalesced.transforms


def test_compound_wildcard_keys_carry_the_regular_field() -> None:
    docs = [{"_id": i, "a": i, "other": i % 2} for i in range(6)]
    index = IndexSpec.from_document({"key": {"$**": 1, "other": 1}, "wildcardProjection": {"other": 0}})
    result = Estimator(docs).explain(WhatIfQuery(filter={"a": {"$gte": 2}, "other": 1}), [index])
    assert result["winningIndex"] == {"$_path": 1, "a": 1, "other": 1}
    assert result["indexBounds"]["other"] == ["[1, 1]"] and result["nReturned"] == 2


def test_a_value_elem_match_compares_an_inner_array_as_one_value() -> None:
    docs = [{"a": [[1, 2]]}, {"a": [1, 2]}, {"a": [[1], [2]]}, {"a": [[1], 5]}]
    assert [filter_applies({"a": {"$elemMatch": {"$gt": 0}}}, d) for d in docs] == [False, True, False, True]
    assert [filter_applies({"a": {"$elemMatch": {"$eq": [1]}}}, d) for d in docs] == [False, False, True, True]
