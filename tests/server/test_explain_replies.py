"""explain("executionStats") replies real servers wrote (../shared/corpus), read at the pymongo boundary: the
counters replay compares with the estimator's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bson import json_util

from idxadvisor.parse.documents import read_documents
from idxadvisor.server.explain import execution_counters, explain_command
from idxadvisor.whatif.estimator import WhatIfQuery

pytestmark = pytest.mark.corpus


def reply(corpus_dir: Path, name: str) -> dict:
    """The reply as pymongo hands it over: BSON-typed (canonical Extended JSON and shell syntax decoded alike)."""
    documents, failure = read_documents((corpus_dir / name).read_bytes())
    assert failure is None
    return json_util.loads(json.dumps(documents[0]))


@pytest.mark.parametrize(("name", "expected"), [
    ("mongodb-demo/compound-index/ac.json", ("IXSCAN { a: 1, b: 1, c: 1 }", 84, 182, 84, False)),
    ("mongodb-demo/compound-index/bc1.json", ("COLLSCAN", 99, 0, 100000, False)),
    ("explain-plan-model/sort_skip_limit_index_3.2.json", ("IXSCAN { age: 1 }", 9, 191665, 191665, True)),
    ("pmm-agent/find_and_modify_want.json", ("COLLSCAN", 0, 0, 1, True)),  # 4.2, canonical Extended JSON
    ("explain-plan-model/sharded_single_index_3.2.json", ("IDHACK", 0, 0, 0, False)),  # through mongos
])
def test_counters_of_real_replies(corpus_dir: Path, name: str, expected: tuple) -> None:
    counters = execution_counters(reply(corpus_dir, name))
    assert (counters["planSummary"], counters["nReturned"], counters["totalKeysExamined"],
            counters["totalDocsExamined"], counters["blockingSort"]) == expected


def test_a_count_reports_what_it_counted(corpus_dir: Path) -> None:
    counters = execution_counters(reply(corpus_dir, "mongodb-demo/count/single_value_count.json"))
    assert (counters["planSummary"], counters["nCounted"], counters["totalKeysExamined"]) == \
        ("COUNT_SCAN { key: 1 }", 2000, 2001)
    assert execution_counters(reply(corpus_dir, "pmm-agent/count_want.json"))["nCounted"] == 1


def test_a_reply_without_execution_stats_is_unsupported(corpus_dir: Path) -> None:
    assert "unsupported" in execution_counters(reply(corpus_dir, "pmm-agent/aggregate_want.json"))


def test_the_explained_command_carries_the_hint_and_a_time_limit() -> None:
    query = WhatIfQuery(command="find", filter={"a": 1}, sort={"b": -1}, limit=5, skip=2)
    command = explain_command("shop.orders", query, (("a", 1), ("b", -1)))
    assert list(command) == ["find", "filter", "sort", "skip", "limit", "hint", "maxTimeMS"]
    assert command["hint"] == {"a": 1, "b": -1} and command["maxTimeMS"] > 0
    count = explain_command("shop.orders", WhatIfQuery(command="count", filter={"a": 1}), None)
    assert count == {"count": "shop.orders", "query": {"a": 1}, "maxTimeMS": count["maxTimeMS"]}


def test_distinct_aggregate_and_collation_are_explained_as_the_log_ran_them() -> None:
    collation = {"locale": "en", "strength": 2}
    distinct = explain_command("orders", WhatIfQuery(command="distinct", key="status", filter={"a": 1},
                                                     collation=collation), (("status", 1),))
    assert distinct["distinct"] == "orders" and distinct["key"] == "status" and distinct["query"] == {"a": 1}
    assert distinct["collation"] == collation and distinct["hint"] == {"status": 1}
    pipeline = [{"$match": {"a": 1}}, {"$count": "n"}]
    aggregate = explain_command("orders", WhatIfQuery(command="aggregate", pipeline=pipeline), None)
    assert aggregate["pipeline"] == pipeline and aggregate["cursor"] == {} and "hint" not in aggregate
    own_hint = explain_command("orders", WhatIfQuery(filter={"a": 1}, hint="a_1", min={"a": 0}, max={"a": 9}), None)
    assert own_hint["hint"] == "a_1" and (own_hint["min"], own_hint["max"]) == ({"a": 0}, {"a": 9})
