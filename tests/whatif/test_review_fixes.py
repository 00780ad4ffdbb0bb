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


# --- $or -> $in (expression_tree.cpp ListOfMatchExpression::getOptimizer, or_to_in.js) ---

F_DOCS = [{"_id": 0, "f1": 3, "f2": 7}, {"_id": 2, "f1": 2, "f2": 9}, {"_id": 3, "f1": 5, "f2": 42},
          {"_id": 5, "f1": "xz", "f2": 13}, {"_id": 6, "f1": "ab", "f2": 15}, {"_id": 7, "f1": None, "f2": None},
          {"_id": 10, "f1": 1, "f2": 32}, {"_id": 11, "f1": 99, "f2": 4}, {"_id": 12, "f3": 5}]
F_INDEXES = [IndexSpec.from_key({"f1": 1}), IndexSpec.from_key({"f2": 1}), IndexSpec.from_key({"f1": -1, "f2": 1})]
_SAME = ("planSummary", "stages", "plan", "totalKeysExamined", "totalDocsExamined", "nReturned", "returnedIds",
         "indexBounds", "unsupported")


def _or_pairs() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    from bson import Regex

    return [
        ({"$or": [{"f1": 5}, {"f1": 3}, {"f1": 7}]}, {"f1": {"$in": [7, 3, 5]}}),
        ({"$or": [{"f1": Regex("^x")}, {"f1": "ab"}]}, {"f1": {"$in": [Regex("^x"), "ab"]}}),
        ({"$or": [{"f1": "ab"}, {"f1": {"$regex": "^x"}}]}, {"f1": {"$in": [Regex("^x"), "ab"]}}),
        ({"$or": [{"f1": 42}, {"f1": None}, {"f1": 99}]}, {"f1": {"$in": [42, 99, None]}}),
        ({"$or": [{"f1": 1}, {"f2": 9}, {"f1": 99}]}, {"$or": [{"f2": 9}, {"f1": {"$in": [1, 99]}}]}),
        ({"$or": [{"f2": 9}, {"f1": 1}, {"f1": 99}]}, {"$or": [{"f2": 9}, {"f1": {"$in": [1, 99]}}]}),
        ({"$or": [{"$or": [{"f1": 7}, {"f1": 3}]}, {"$or": [{"f1": 1}, {"f1": 2}]}]},
         {"$or": [{"f1": {"$in": [7, 3]}}, {"f1": {"$in": [1, 2]}}]}),
        ({"$or": [{"f1": 1}, {"f2": 3}, {"f1": 2}, {"f2": 4}]}, {"$or": [{"f1": {"$in": [1, 2]}}, {"f2": {"$in": [3, 4]}}]}),
        ({"$or": [{"f1": 1}, {"f1": 1}]}, {"f1": 1}),
        ({"$or": [{"f1": "a"}, {"f1": "b"}, {"f1": Regex("c")}]}, {"$or": [{"f1": Regex("c")}, {"f1": "a"}, {"f1": "b"}]}),
    ]


@pytest.mark.parametrize("pair", range(10))
def test_or_of_equalities_and_regexes_is_planned_as_mongod_rewrites_it(pair: int) -> None:
    written, rewritten = _or_pairs()[pair]
    estimator = Estimator(F_DOCS)
    got = estimator.explain(WhatIfQuery(filter=written), F_INDEXES)
    want = estimator.explain(WhatIfQuery(filter=rewritten), F_INDEXES)
    assert "unsupported" not in got
    assert {k: got.get(k) for k in _SAME} == {k: want.get(k) for k in _SAME}


def test_mixed_or_groups_the_same_path_branches_into_one_scan() -> None:
    docs = [{"_id": i, "a": i, "b": i} for i in range(100)]
    query = WhatIfQuery(filter={"$or": [{"a": 1}, {"b": 9}, {"a": 99}]})
    result = _explain(docs, query, [A, IndexSpec.from_key({"b": 1})])
    assert result["planSummary"] == "IXSCAN { b: 1 }, IXSCAN { a: 1 }"
    assert [scan["indexBounds"] for scan in result["scans"]] == [{"b": ["[9, 9]"]}, {"a": ["[1, 1]", "[99, 99]"]}]
    assert (result["totalKeysExamined"], result["nReturned"]) == (4, 3)


def test_or_rewrite_rules_that_are_not_a_plain_merge() -> None:
    docs = [{"_id": i, "a": i % 5, "b": i % 3} for i in range(20)]
    indexes = [A, IndexSpec.from_key({"b": 1})]
    # an $in branch does not join: two scans, not one $in [1, 2, 3]
    kept = _explain(docs, WhatIfQuery(filter={"$or": [{"a": {"$in": [1, 2]}}, {"a": 3}]}), indexes)
    assert [s["indexBounds"] for s in kept["scans"]] == [{"a": ["[3, 3]"]}, {"a": ["[1, 1]", "[2, 2]"]}]
    # before 8.0 only the path of the first equality is grouped
    old = _explain(docs, WhatIfQuery(filter={"$or": [{"b": 2}, {"a": 1}, {"a": 4}]}), indexes, version=(7, 0))
    assert len(old["scans"]) == 3
    nested = _explain(docs, WhatIfQuery(filter={"$or": [{"a": 1}, {"a": 4}, {"b": 1}, {"b": {"$gt": 5}}]}), indexes,
                      version=(7, 0))
    assert "nested $or" in nested["unsupported"]
    arrays = _explain(docs, WhatIfQuery(filter={"$or": [{"a": [1]}, {"a": [2]}]}), indexes)
    assert "arrays" in arrays["unsupported"]
    assert "empty list" in _explain(docs, WhatIfQuery(filter={"a": {"$in": []}}), indexes)["unsupported"]
    # an always-true branch makes the whole $or true
    assert _explain(docs, WhatIfQuery(filter={"$or": [{"a": 1}, {}]}), indexes)["nReturned"] == 20


def test_a_single_value_in_is_an_equality_but_not_a_simple_id_query() -> None:
    docs = [{"_id": i, "a": i % 5} for i in range(20)]
    assert _explain(docs, WhatIfQuery(filter={"a": {"$in": [3]}}, limit=1), [A])["stages"] == ["EXPRESS_IXSCAN"]
    assert _explain(docs, WhatIfQuery(filter={"_id": 5}), [])["stages"] == ["EXPRESS_IXSCAN"]
    for written in ({"_id": {"$eq": 5}}, {"_id": {"$in": [5]}}):
        assert _explain(docs, WhatIfQuery(filter=written), [], version=(7, 0))["stages"] == ["FETCH", "IXSCAN"]
        assert "express" in _explain(docs, WhatIfQuery(filter=written), [])["unsupported"]
