"""Regressions from the what-if review: each test failed before its fix (planner-semantics.md and the mongod
sources cited in the code are the reference)."""

from __future__ import annotations

from typing import Any

import pytest

from idxadvisor.indexes.model import IndexSpec
from idxadvisor.whatif import Estimator, WhatIfQuery

A = IndexSpec.from_key({"a": 1})


def _explain(docs: list[dict[str, Any]], query: WhatIfQuery, indexes: list[IndexSpec], hint: IndexSpec | None = None,
             version: tuple[int, int] = (8, 0)) -> dict[str, Any]:
    return Estimator(docs, server_version=version).explain(query, indexes, hint)


# --- negations of null on a multikey index (planner_ixselect.cpp notEqualsNullCanUseIndex) ---

MULTIKEY_DOCS = ([{"_id": i, "a": [i, i + 1]} for i in range(5)] + [{"_id": 10 + i} for i in range(5)]
                 + [{"_id": 20, "a": None}, {"_id": 21, "a": []}])


@pytest.mark.parametrize("predicate", [{"$ne": None}, {"$nin": [None, 3]}, {"$not": {"$gte": None}},
                                       {"$not": {"$lte": None}}, {"$not": {"$eq": None}}, {"$not": {"$in": [None]}}])
def test_a_negation_of_null_cannot_use_a_multikey_index(predicate: dict[str, Any]) -> None:
    query = WhatIfQuery(filter={"a": predicate})
    result = _explain(MULTIKEY_DOCS, query, [A])
    assert result["planSummary"] == "COLLSCAN"
    assert 21 in result["returnedIds"]  # {a: []} is keyed as undefined and still matches
    hinted = _explain(MULTIKEY_DOCS, query, [A], hint=A)
    assert hinted["stages"] == ["FETCH", "IXSCAN"] and hinted["indexBounds"] == {"a": ["[MinKey, MaxKey]"]}
    assert hinted["nReturned"] == result["nReturned"]


def test_a_negation_of_null_still_uses_an_index_not_multikey_on_that_field() -> None:
    docs = [{"_id": i, "b": None if i % 4 == 0 else i % 3, "a": [i]} for i in range(12)]
    result = _explain(docs, WhatIfQuery(filter={"b": {"$ne": None}}), [IndexSpec.from_key({"b": 1, "a": 1})])
    assert result["planSummary"] == "IXSCAN { b: 1, a: 1 }"
    assert result["indexBounds"]["b"] == ["[MinKey, null)", "(null, MaxKey]"]
    plain = [{"_id": i, "a": None if i % 3 == 0 else i} for i in range(9)]
    assert _explain(plain, WhatIfQuery(filter={"a": {"$ne": None}}), [A])["planSummary"] == "IXSCAN { a: 1 }"


# --- before 8.0, {a: null} on a multikey index needs the fetch and no COUNT_SCAN split (cover_null_queries.js) ---

NULLS_AND_ARRAYS = ([{"_id": i, "a": [i, i + 1]} for i in range(5)] + [{"_id": 10 + i} for i in range(3)]
                    + [{"_id": 20, "a": None}])


def test_count_of_null_on_a_multikey_index_before_8_0_fetches_instead_of_two_count_scans() -> None:
    result = _explain(NULLS_AND_ARRAYS, WhatIfQuery(command="count", filter={"a": None}), [A], version=(7, 0))
    assert result["stages"] == ["COUNT", "FETCH", "IXSCAN"] and result["nCounted"] == 4
    assert result["indexBounds"] == {"a": ["[undefined, undefined]", "[null, null]"]}
    covered = _explain(NULLS_AND_ARRAYS, WhatIfQuery(filter={"a": None}, projection={"_id": 1}),
                       [IndexSpec.from_key({"a": 1, "_id": 1})], version=(7, 0))
    assert covered["stages"] == ["PROJECTION_SIMPLE", "FETCH", "IXSCAN"]
    # 8.0 bounds are [null, null] only: one COUNT_SCAN whatever the multikeyness
    assert _explain(NULLS_AND_ARRAYS, WhatIfQuery(command="count", filter={"a": None}), [A])["stages"] == [
        "COUNT", "COUNT_SCAN"]


def test_count_of_null_splits_into_two_count_scans_only_when_not_multikey() -> None:
    docs = [{"_id": i, "a": i} for i in range(5)] + [{"_id": 10}, {"_id": 11, "a": None}]
    result = _explain(docs, WhatIfQuery(command="count", filter={"a": None}), [A], version=(7, 0))
    assert result["stages"] == ["COUNT", "OR", "COUNT_SCAN"] and result["nCounted"] == 2


# --- JavaScript code values: their own BSON type, not strings ---


def test_code_sorts_after_regexes_and_code_with_scope_after_code() -> None:
    from bson import Code, MaxKey, Regex

    from idxadvisor.whatif.bsonorder import sort_key, type_rank

    values = [MaxKey(), Code("a", {"x": 1}), Code("b"), Code("a"), Regex("z"), "zzz"]
    assert sorted(values, key=sort_key) == ["zzz", Regex("z"), Code("a"), Code("b"), Code("a", {"x": 1}), MaxKey()]
    assert (type_rank(Code("a")), type_rank(Code("a", {}))) == (60, 65)
    assert sort_key(Code("a", {"x": 1})) < sort_key(Code("a", {"x": 2})) < sort_key(Code("b", {}))


def test_code_values_sort_as_code_and_queries_on_them_are_unsupported() -> None:
    from bson import Code

    docs = [{"_id": 1, "a": Code("x")}, {"_id": 2, "a": "y"}, {"_id": 3, "a": Code("z", {})}]
    ordered = _explain(docs, WhatIfQuery(sort={"a": 1}), [A])
    assert ordered["returnedIds"] == [2, 1, 3]
    assert "JavaScript code" in _explain(docs, WhatIfQuery(filter={"a": "x"}), [A])["unsupported"]
    nested = [{"_id": 1, "a": [Code("x"), "x"]}, {"_id": 2, "a": {"b": Code("x")}}]
    assert "JavaScript code" in _explain(nested, WhatIfQuery(filter={"a": "x"}), [A])["unsupported"]
    assert "JavaScript code" in _explain(nested, WhatIfQuery(filter={"a": {"b": "x"}}), [A])["unsupported"]
    plain = [{"_id": 1, "a": "x"}]
    assert "JavaScript code" in _explain(plain, WhatIfQuery(filter={"a": Code("x")}), [A])["unsupported"]
