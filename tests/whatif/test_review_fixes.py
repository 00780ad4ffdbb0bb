"""Regressions from the what-if review: each test failed before its fix (planner-semantics.md and the mongod
sources cited in the code are the reference)."""

from __future__ import annotations

from typing import Any

import pytest

from idxadvisor.indexes.model import IndexSpec
from idxadvisor.ingest.samples import UNDEFINED
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
    # equalities to arrays join too: an array entry in $in matches the whole array, never the scalar 1
    arrays = _explain(docs, WhatIfQuery(filter={"$or": [{"a": [1]}, {"a": [2]}]}), indexes)
    assert arrays["nReturned"] == 0 and "[[ 1 ], [ 1 ]]" in arrays["indexBounds"]["a"]
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


# --- nesting deeper than BSON allows, and undefined in results ---


def _nested(depth: int, leaf: str = "1") -> str:
    return '{"a":' * depth + leaf + "}" * depth


def test_documents_nested_deeper_than_bson_allows_are_counted_as_bad(tmp_path: Any) -> None:
    import bson

    from idxadvisor.ingest.samples import load_sample

    lines = tmp_path / "lines.json"
    lines.write_text('{"_id": 1}\n' + _nested(3000) + "\n" + _nested(150) + '\n{"_id": 2}\n')
    sample = load_sample(lines)
    assert (len(sample.documents), sample.problems) == (2, 2)
    array = tmp_path / "array.json"  # the deep element spans several read chunks
    array.write_text('[{"_id": 1},' + _nested(20000) + ',{"_id": 2},' + _nested(101) + ',{"_id": 3}]')
    sample = load_sample(array)
    assert [d["_id"] for d in sample.documents] == [1, 2, 3] and sample.problems == 2
    deep: dict[str, Any] = {"_id": 9}
    cursor = deep
    for _ in range(120):
        cursor["a"] = {}
        cursor = cursor["a"]
    dump = tmp_path / "dump.bson"
    dump.write_bytes(bson.encode({"_id": 1}) + bson.encode(deep) + bson.encode({"_id": 2}))
    sample = load_sample(dump)
    assert (len(sample.documents), sample.problems) == (2, 1)


def test_a_query_nested_too_deeply_is_unsupported_not_a_crash(tmp_path: Any) -> None:
    from idxadvisor.whatif import run_whatif

    data = tmp_path / "d.json"
    data.write_text('{"_id": 1, "a": 1}\n')
    for depth in (2000, 300, 101):
        result = run_whatif(data=data, query='{"filter": ' + _nested(depth) + "}", indexes=['{"a": 1}'], hint=None)
        assert "nested deeper" in result["unsupported"] and result["query"] is None
    deep: dict[str, Any] = {}
    cursor = deep
    for _ in range(400):
        cursor["a"] = {}
        cursor = cursor["a"]
    assert "nested" in Estimator([{"_id": 1, "a": deep}]).explain(WhatIfQuery(filter={"a": 1}), [A])["unsupported"]
    assert "nested" in Estimator([{"_id": 1}]).explain(WhatIfQuery(filter={"a": deep}), [A])["unsupported"]


def test_undefined_values_in_results_are_written_as_extended_json(tmp_path: Any,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from idxadvisor.cli import run
    from idxadvisor.whatif.estimator import dumps_result

    data = tmp_path / "d.json"
    data.write_text('{"_id": 1, "a": null}\n{"_id": 2}\n{"_id": 3, "a": 1}\n')
    count = ["whatif", "--data", str(data), "--server-version", "7.0", "--index", '{"a": 1}', "--format", "json",
             "--query", '{"command": "count", "filter": {"a": null}}']
    assert run(count) == 0
    bounds = json.loads(capsys.readouterr().out)["countScanBounds"]
    assert bounds["startKey"] == {"a": {"$undefined": True}} or bounds["endKey"] == {"a": {"$undefined": True}}
    ids = tmp_path / "ids.json"
    ids.write_text('{"_id": {"$undefined": true}, "a": 1}\n{"_id": 2, "a": 2}\n')
    assert run(["whatif", "--data", str(ids), "--format", "json", "--query", '{"filter": {"a": 1}}']) == 0
    assert json.loads(capsys.readouterr().out)["returnedIds"] == [{"$undefined": True}]
    result = Estimator([{"_id": UNDEFINED, "a": 1}]).explain(WhatIfQuery(filter={"a": 1}), [])
    assert json.loads(dumps_result(result))["returnedIds"] == [{"$undefined": True}]
    operand = ["whatif", "--data", str(ids), "--format", "json", "--query", '{"filter": {"a": {"$undefined": true}}}']
    assert run(operand) == 0
    assert json.loads(capsys.readouterr().out)["unsupported"] == "undefined operands"


# --- evidence: per-execution numbers, limit with skip, ERS advice ---

CUSTOMERS = [{"_id": n, "lastName": "Silva" if n % 100 == 0 else f"N{n}", "city": "Porto", "age": n % 90,
              "email": f"u{n}@x.org"} for n in range(200)]


def _workload(tmp_path: Any, operations: list[dict[str, Any]], documents: list[dict[str, Any]] = CUSTOMERS,
              **settings: Any) -> Any:
    import json

    from idxadvisor.api import analyze
    from idxadvisor.config import Settings
    from idxadvisor.testing import operation_lines

    log = tmp_path / "app.log"
    log.write_text("\n".join(operation_lines(operations)) + "\n")
    data = tmp_path / "shop.customers.json"
    data.write_text("\n".join(json.dumps(document) for document in documents) + "\n")
    return analyze([str(log)], Settings(data=[str(data)], **settings))


def _find(**extra: Any) -> dict[str, Any]:
    return {"ns": "shop.customers", "command": {"find": "customers", "filter": {"lastName": "Silva", "city": "Porto"}},
            "plan": "COLLSCAN", "keysExamined": 0, "repeat": 10, **extra}


def test_evidence_counts_executions_not_the_getmores_that_continue_them(tmp_path: Any) -> None:
    get_more = {"ns": "shop.customers", "command": {"getMore": 1234, "collection": "customers"},
                "originatingCommand": {"find": "customers", "filter": {"lastName": "Silva", "city": "Porto"}},
                "plan": "COLLSCAN", "keysExamined": 0, "docsExamined": 9900, "nreturned": 99, "repeat": 10, "at": 1}
    split = _workload(tmp_path, [_find(docsExamined=10100, nreturned=101), get_more]).findings[0].evidence
    whole = _workload(tmp_path, [_find(docsExamined=20000, nreturned=200)]).findings[0].evidence
    assert split.before["logged"] == whole.before["logged"] == {
        "totalKeysExamined": 0.0, "totalDocsExamined": 20000.0, "nReturned": 200.0}
    assert (split.before, split.after, split.notes) == (whole.before, whole.after, whole.notes)


def test_collection_sizes_skip_scans_that_stop_at_the_first_match(tmp_path: Any) -> None:
    from idxadvisor.api import read_workload
    from idxadvisor.config import Settings
    from idxadvisor.ingest.sources import expand_sources
    from idxadvisor.testing import operation_lines
    from idxadvisor.whatif.evidence import collection_sizes

    def sizes(statement: dict[str, Any], kind: str) -> dict[str, int]:
        operation = {"ns": "shop.orders", "type": kind, "command": statement, "plan": "COLLSCAN",
                     "keysExamined": 0, "docsExamined": 7, "repeat": 3}
        log = tmp_path / f"{kind}.log"
        log.write_text("\n".join(operation_lines([operation])) + "\n")
        digest, _ = read_workload(expand_sources([str(log)]), Settings(jobs=1))
        return collection_sizes(digest.shapes.values())

    assert sizes({"q": {"a": 1}, "u": {"$set": {"b": 1}}}, "update") == {}
    assert sizes({"q": {"a": 1}, "u": {"$set": {"b": 1}}, "multi": True}, "update") == {"shop.orders": 7}
    assert sizes({"q": {"a": 1}, "limit": 1}, "remove") == {}
    assert sizes({"q": {"a": 1}, "limit": 0}, "remove") == {"shop.orders": 7}


def test_a_limit_after_a_skip_caps_what_is_left_after_the_skip(tmp_path: Any) -> None:
    from idxadvisor.whatif.evidence import scale_explain as _summary

    result = {"planSummary": "IXSCAN { a: 1 }", "nReturned": 6, "totalKeysExamined": 6, "totalDocsExamined": 6,
              "blockingSort": True}
    assert _summary(result, 1.0, 5 + 10, 10, 5)["nReturned"] == 1  # 6 matches, 5 skipped: 1 left, not 6
    assert _summary(result, 10.0, 5 + 10, 10, 5)["nReturned"] == 10
    assert _summary(result, 1.0, 10 + 3, 3, 10)["nReturned"] == 0


def test_no_ers_advice_when_the_sample_matches_nothing(tmp_path: Any) -> None:
    documents = [{"_id": n, "lastName": ["Silva", "Novak", "Berg", "Rossi"][n % 4], "age": n % 90,
                  "email": f"u{n}@x.org"} for n in range(200)]

    def details(name: str) -> list[str]:
        operation = {"ns": "shop.customers", "command": {"find": "customers", "sort": {"email": 1},
                                                         "filter": {"lastName": name, "age": {"$gt": 80}}},
                     "plan": "COLLSCAN", "keysExamined": 0, "docsExamined": 20000, "nreturned": 30,
                     "hasSortStage": True, "repeat": 10}
        (finding,) = [f for f in _workload(tmp_path, [operation], documents).findings if f.rule == "IX002"]
        return [d for d in finding.details if d.startswith("by the estimate")]

    assert details("Nobody") == []  # 0 against 1 key: the sample says nothing about selectivity
    assert details("Silva") and "examines 8 keys and documents on the sample against 54" in details("Silva")[0]
