"""explain() output as an input: sharded plans, parsed queries folded back into the query's shape, and no guessing
of the command when the output does not name it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from idxadvisor.parse.block import BlockOptions
from idxadvisor.parse.documents import parse_documents, read_documents
from idxadvisor.parse.explain import event_from_explain, fold_and, plan_summary
from idxadvisor.shapes.shape import shape_of
from tests.helpers import REFERENCE_YEAR, CollectingSink


def explain_of(parsed_query: dict | None, plan: dict, **planner) -> dict:
    query_planner = {"namespace": "shop.people", "winningPlan": plan, **planner}
    if parsed_query is not None:
        query_planner["parsedQuery"] = parsed_query
    return {"queryPlanner": query_planner, "executionStats": {"executionTimeMillis": 3, "nReturned": 1,
                                                              "totalKeysExamined": 0, "totalDocsExamined": 10}}


COLLSCAN = {"stage": "COLLSCAN", "direction": "forward"}


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "NaN", float("nan"), 1e300, {"$numberInt": "1"}])
def test_odd_key_pattern_values_are_printed_not_converted(value) -> None:
    """ex1.json: keyPattern {"x": "nan"} made int(nan) raise."""
    plan = {"stage": "FETCH", "inputStage": {"stage": "IXSCAN", "keyPattern": {"x": value}}}
    summary = plan_summary(plan)
    assert summary is not None and summary.startswith("IXSCAN { x: ")
    assert plan_summary({"stage": "IXSCAN", "keyPattern": {"x": {"$numberInt": "-1"}}}) == "IXSCAN { x: -1 }"


def test_the_ex1_explain_of_the_review_is_read() -> None:
    document = explain_of({"x": {"$eq": 1}}, {"stage": "IXSCAN", "keyPattern": {"x": "nan"}})
    event = event_from_explain(document)
    assert event.plan_summary == 'IXSCAN { x: "nan" }'


@pytest.mark.parametrize(("parsed", "folded"), [
    ({"$and": [{"age": {"$gte": 33}}, {"age": {"$lte": 40}}]}, {"age": {"$gte": 33, "$lte": 40}}),
    ({"$and": []}, {}),
    ({"$and": [{"b": {"$eq": 1}}, {"c": {"$gt": 2}}]}, {"b": {"$eq": 1}, "c": {"$gt": 2}}),
    ({"$and": [{"a": {"$gt": 1}}, {"a": {"$gt": 5}}]}, {"a": {"$gt": 1}, "$and": [{"a": {"$gt": 5}}]}),
    ({"$and": [{"a": {"$eq": 1}}, {"a": {"$eq": 2}}]}, {"a": {"$eq": 1}, "$and": [{"a": {"$eq": 2}}]}),
    ({"$and": [{"$or": [{"x": 1}]}, {"$or": [{"y": 1}]}]}, {"$or": [{"x": 1}], "$and": [{"$or": [{"y": 1}]}]}),
    ({"$or": [{"$and": [{"a": {"$eq": 1}}, {"b": {"$eq": 2}}]}, {"b": {"$eq": 3}}]},
     {"$or": [{"a": {"$eq": 1}, "b": {"$eq": 2}}, {"b": {"$eq": 3}}]}),
    ({"s": {"$elemMatch": {"$and": [{"src": {"$eq": "cpu"}}, {"pct": {"$gte": 80}}]}}},
     {"s": {"$elemMatch": {"src": {"$eq": "cpu"}, "pct": {"$gte": 80}}}}),
    ({"$and": [{"$and": [{"a": {"$eq": 1}}]}, {"b": {"$eq": 2}}]}, {"a": {"$eq": 1}, "b": {"$eq": 2}}),
    ({"a": {"$eq": 1}}, {"a": {"$eq": 1}}),
])
def test_a_parsed_query_is_folded_back_into_the_query(parsed: dict, folded: dict) -> None:
    assert fold_and(parsed) == folded


def test_a_parsed_query_has_the_shape_of_the_query_a_log_shows() -> None:
    event = event_from_explain(explain_of({"$and": [{"age": {"$gte": 33}}, {"age": {"$lte": 40}}]}, COLLSCAN))
    assert shape_of(event)[0].text == "unknown shop.people {age: range}"


def test_a_deep_parsed_query_is_left_as_it_is_past_a_depth() -> None:
    query: dict = {"x": {"$eq": 1}}
    for _ in range(300):
        query = {"$and": [query]}
    event = event_from_explain(explain_of(query, COLLSCAN))
    assert shape_of(event)[0].unknown == "nesting too deep"


def test_without_its_command_an_explain_is_an_unknown_op() -> None:
    """≤4.2 explain output does not say which command it explains: no find is assumed."""
    event = event_from_explain(explain_of({"name": {"$eq": "Andy"}}, {"stage": "UPDATE", "inputStage": COLLSCAN}))
    assert (event.op, event.ns, event.unparsed) == ("unknown", "shop.people", False)
    assert shape_of(event)[0].text == "unknown shop.people {name: eq}"


@pytest.mark.parametrize(("plan", "op", "text"), [
    ({"stage": "COUNT", "inputStage": {"stage": "COUNT_SCAN", "keyPattern": {"k": 1}}}, "count",
     "count shop.people {k: eq}"),
    ({"stage": "COUNT", "inputStage": {"stage": "FETCH", "inputStage": {"stage": "IXSCAN", "keyPattern": {"k": 1}}}},
     "count", "count shop.people {k: eq}"),
    ({"stage": "PROJECTION", "inputStage": {"stage": "DISTINCT_SCAN", "keyPattern": {"k": 1}}}, "distinct",
     "distinct shop.people {k: eq} key:?"),
])
def test_a_plan_that_proves_its_command_names_it(plan: dict, op: str, text: str) -> None:
    event = event_from_explain(explain_of({"k": {"$eq": 1}}, plan))
    assert event.op == op and shape_of(event)[0].text == text


def test_a_fast_count_needs_no_parsed_query() -> None:
    event = event_from_explain(explain_of(None, {"stage": "RECORD_STORE_FAST_COUNT"}))
    assert (event.op, event.unparsed, shape_of(event)[0].text) == ("count", False, "count shop.people {}")


def test_an_explain_that_names_its_command_keeps_it() -> None:
    document = explain_of({"a": {"$eq": 1}}, COLLSCAN)
    document["command"] = {"find": "people", "filter": {"a": 1}, "sort": {"b": -1}, "$db": "shop"}
    event = event_from_explain(document)
    assert shape_of(event)[0].text == "find shop.people {a: eq} sort {b: -1}"


SHARDED = {
    "queryPlanner": {"mongosPlannerVersion": 1, "winningPlan": {"stage": "SHARD_MERGE", "shards": [
        {"shardName": "s1", "namespace": "mongodb.fanclub", "parsedQuery": {"age": {"$eq": 40}},
         "winningPlan": {"stage": "SHARDING_FILTER", "inputStage": COLLSCAN}},
        {"shardName": "s2", "namespace": "mongodb.fanclub", "parsedQuery": {"age": {"$eq": 40}},
         "winningPlan": {"stage": "SHARDING_FILTER", "inputStage": {"stage": "FETCH", "inputStage": {
             "stage": "IXSCAN", "keyPattern": {"age": 1}}}}}]}},
    "executionStats": {"nReturned": 3, "executionTimeMillis": 4, "totalKeysExamined": 2, "totalDocsExamined": 5},
}


def test_a_sharded_explain_takes_its_namespace_and_query_from_the_shards() -> None:
    """3.2 explain through mongos: the namespace and parsed query are only in each shard's plan."""
    event = event_from_explain(SHARDED)
    assert (event.ns, event.unparsed, event.docs_examined) == ("mongodb.fanclub", False, 5)
    assert event.plan_summary == "COLLSCAN, IXSCAN { age: 1 }"
    assert shape_of(event)[0].text == "unknown mongodb.fanclub {age: eq}"


def test_an_explain_without_a_namespace_anywhere_is_unparsed() -> None:
    event = event_from_explain({"queryPlanner": {"winningPlan": {"stage": "SHARD_MERGE", "shards": []}}})
    assert event.unparsed and shape_of(event)[0].known is False


def test_an_aggregation_explain_sort_is_read_as_the_pipeline_wrote_it() -> None:
    cursor = {"query": {"status": "A"}, "queryPlanner": {"namespace": "sbtest.orders",
                                                         "parsedQuery": {"status": {"$eq": "A"}},
                                                         "winningPlan": COLLSCAN}}
    document = {"stages": [{"$cursor": cursor}, {"$group": {"_id": "$cust_id", "total": {"$sum": "$amount"}}},
                           {"$sort": {"sortKey": {"total": -1}, "limit": 5}}]}
    event = event_from_explain(document)
    assert event.command["pipeline"][-2:] == [{"$sort": {"total": -1}}, {"$limit": 5}]
    assert shape_of(event)[0].text == ("aggregate sbtest.orders {status: eq} pipeline "
                                       "[$match, $group(_id=$cust_id; $sum($amount)), $sort{total: -1}, $limit]")


@pytest.mark.parametrize(("path", "text"), [
    ("explain-plan-model/sharded_mixed_index_3.2.json", "unknown mongodb.fanclub {age: eq}"),
    ("explain-plan-model/sharded_single_index_3.2.json", "unknown mongodb.stories {_id: eq}"),
    ("explain-plan-model/simple_index_3.2.json", "unknown mongodb.fanclub {age: range}"),
    ("explain-plan-model/simple_collscan_3.2.json", "unknown mongodb.fanclub {}"),
    ("pmm-agent/count_want.json", "count sbtest.people {}"),
    ("pmm-agent/find_and_modify_want.json", "unknown sbtest.people {name: eq}"),
    ("pmm-agent/aggregate_want.json", "aggregate sbtest.orders {status: eq} pipeline "
                                      "[$match, $group(_id=$cust_id; $sum($amount)), $sort{total: -1}]"),
])
def test_corpus_explains(corpus_dir: Path, path: str, text: str) -> None:
    stats, events = _parse(corpus_dir / path)
    assert stats.problems == 0 and len(events) == 1
    assert shape_of(events[0])[0].text == text


def _parse(path: Path):
    sink = CollectingSink()
    stats, _ = parse_documents(path.read_bytes(), BlockOptions(REFERENCE_YEAR), sink)
    return stats, sink.events


def test_every_corpus_explain_names_a_namespace(corpus_dir: Path) -> None:
    for folder in ("explain-plan-model", "pmm-agent", "mongodb-demo", "mongodb-sanity-check"):
        for path in sorted((corpus_dir / folder).rglob("*.json")):
            documents, failure = read_documents(path.read_bytes())
            if "_2.6" in path.name:
                continue  # legacy explains name no query: unparsed on purpose
            for document in documents:
                event = event_from_explain(document)
                assert event.ns and not event.unparsed, (path, json.dumps(document)[:200])
