"""Replies of another shape than mongod's (a server-compatible service, a proxy, a damaged reply) are input like any
log: what cannot be read is left out and said, or the run ends with one line naming the command (exit 3), never with
an internal error. The last test replaces random values of every reply the fake gives, as a fuzzer found these."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

import pytest
from bson import Decimal128, Int64, MaxKey, MinKey, ObjectId, Regex, Timestamp

from idxadvisor.cli import run
from idxadvisor.server.explain import execution_counters
from tests.fakeserver import WRITE_COMMANDS, FakeServer
from tests.server.replies import QUERY_STATS
from tests.server.test_live import analyze

Reply = dict[str, Any]


def answering(monkeypatch: pytest.MonkeyPatch, handler: str, change: Callable[[Reply, Reply], Reply]) -> None:
    """The fake answers ``handler``'s command with ``change(its usual reply, the command)`` for this test."""
    usual = getattr(FakeServer, handler)
    monkeypatch.setattr(FakeServer, handler, lambda self, database, command: change(usual(self, database, command),
                                                                                     command))


def test_sample_entries_that_are_not_documents_are_left_out(capsys: pytest.CaptureFixture[str],
                                                            fake: FakeServer) -> None:
    fake.databases["shop"]["orders"][3:6] = [MaxKey(), 7, "x"]  # in the $sample batch as they are
    code, report, err = analyze(capsys, fake)
    assert (code, err) == (1, "")
    assert report["samples"][0]["documents"] == 397
    [finding] = report["findings"]
    assert (finding["rule"], finding["evidence"]["evaluator"]) == ("IX001", "estimator")


def test_an_index_this_version_cannot_read_is_left_out_and_said(capsys: pytest.CaptureFixture[str],
                                                                 fake: FakeServer,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    unreadable = [{"v": 2, "key": {"$**": "columnstore"}, "name": "columnstore_idx"}, {"v": 2, "name": "no_key"}, 7]
    answering(monkeypatch, "_listIndexes",
              lambda reply, command: {"cursor": {**reply["cursor"], "firstBatch": reply["cursor"]["firstBatch"]
                                                 + copy.deepcopy(unreadable)}})
    code, report, err = analyze(capsys, fake)
    assert (code, err) == (1, "")
    missing = report["server"]["missing"]
    assert any("columnstore_idx" in line and line.endswith("(left out)") for line in missing)
    assert any("no_key" in line and "needs a 'key' object" in line for line in missing)
    assert report["findings"][0]["rule"] == "IX001"  # the readable indexes are there: createdAt_-1 serves nothing


def test_index_usage_entries_without_a_name_are_ignored(capsys: pytest.CaptureFixture[str], fake: FakeServer,
                                                        monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    def odd_usage(reply: Reply, command: Reply) -> Reply:
        if "$indexStats" in command["pipeline"][0]:
            reply["cursor"]["firstBatch"] += [{"name": {"a": 1}, "accesses": {"ops": 5}}, {"accesses": {"ops": 1}}, 3]
        return reply

    answering(monkeypatch, "_aggregate", odd_usage)
    output = tmp_path / "indexes.json"
    assert run(["indexes", "--uri", fake.uri, "-o", str(output)]) == 0  # type: ignore[attr-defined]
    indexes = json.loads(output.read_text())["shop.orders"]
    assert [(index["name"], index["accesses"]["ops"]) for index in indexes] == [("_id_", 7), ("createdAt_-1", 7)]


def test_query_stats_entries_of_other_shapes_are_problems_or_read_as_far_as_they_go(
        capsys: pytest.CaptureFixture[str], fake: FakeServer) -> None:
    shape = {**QUERY_STATS[0]["key"]["queryShape"], "cmdNs": {"db": "shop", "coll": "orders"}}

    def entry(metrics: Any, key: Any = None) -> Reply:
        return {"key": {"queryShape": shape} if key is None else key, "metrics": metrics}

    fake.query_stats = [
        entry({"execCount": 3.7, "keysExamined": 12, "totalExecMicros": {"sum": -5, "max": float("inf")},
               "docsExamined": {"sum": float("nan")}, "docsReturned": {"sum": Int64(2)}}),  # read as far as it goes
        entry({"execCount": float("nan")}),  # no count: a problem
        entry({"execCount": 2}, key=5),  # no query shape: a problem
        entry("metrics"),
        7,  # not a document: left out of the batch
    ]
    code, report, err = analyze(capsys, fake, "--query-stats")
    assert err == "" and code in (0, 1)
    [read] = [item for item in report["inputs"] if item["path"].endswith("$queryStats")]
    assert (read["entries"], read["problems"], read["operations"]) == (4, 3, 3)
    [stats] = [item for item in report["shapes"] if item["shape"].startswith("find shop.orders {item: eq}")]
    assert (stats["count"], stats["keys_examined"], stats["docs_examined"], stats["nreturned"]) == (3, 0, 0, 2)
    assert stats["duration_ms"]["total"] == 0.0


def test_a_reply_the_driver_cannot_read_is_one_line_and_exit_3(capsys: pytest.CaptureFixture[str],
                                                                   fake: FakeServer,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    answering(monkeypatch, "_find", lambda reply, command: {"cursor": {**reply["cursor"], "firstBatch": 5}})
    code, report, err = analyze(capsys, fake)
    assert (code, report) == (3, {})
    assert err == (f"idxadvisor: error: find on shop.system.profile on mongodb://localhost:{fake.server.port}: a "
                   "reply the driver cannot read (TypeError: 'int' object is not iterable)\n")


def test_a_database_name_no_database_can_have_is_one_line_and_exit_3(capsys: pytest.CaptureFixture[str],
                                                                     fake: FakeServer,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    answering(monkeypatch, "_listDatabases",
              lambda reply, command: {"databases": [{"name": "shop"}, {"name": "bad name"}, {"name": 5}, "x"]})
    code, _, err = analyze(capsys, fake)
    assert code == 3
    assert err.startswith("idxadvisor: error: find on bad name.system.profile on ") and "InvalidName" in err
    assert err.count("\n") == 1


def test_replay_writes_nothing_where_it_cannot_tell_that_its_scratch_database_is_new(
        capsys: pytest.CaptureFixture[str], fake: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    answering(monkeypatch, "_listDatabases", lambda reply, command: {"databases": "shop, idxadvisor_scratch_1"})
    code, _, err = analyze(capsys, fake, "--db", "shop", "--replay")
    assert code == 3
    assert "cannot tell whether --scratch-db idxadvisor_scratch_" in err and "holds no list of databases" in err
    assert not set(fake.names()) & WRITE_COMMANDS


@pytest.mark.parametrize("value", [float("inf"), float("nan"), -3, "x", [1], 2.0 ** 64])
def test_an_explain_counter_that_is_not_a_count_is_no_evidence(value: Any) -> None:
    reply = {"queryPlanner": {"winningPlan": {"stage": "COLLSCAN"}},
             "executionStats": {"nReturned": 1, "totalKeysExamined": value, "totalDocsExamined": 5,
                                "executionTimeMillis": 1, "executionStages": {"stage": "COLLSCAN"}}}
    assert execution_counters(reply) == {
        "unsupported": f"the explain reply's totalKeysExamined is not a count ({value!r:.40})"}


def test_explain_stages_of_other_shapes_name_nothing() -> None:
    reply = {"queryPlanner": {"winningPlan": {"stage": {"a": 1}, "inputStage": {"stage": "IXSCAN",
                                                                              "keyPattern": {"a": 1}}}},
             "executionStats": {"nReturned": Int64(2), "executionStages": 7}}
    assert execution_counters(reply) == {"planSummary": "IXSCAN { a: 1 }", "nReturned": 2, "totalKeysExamined": 0,
                                         "totalDocsExamined": 0, "executionTimeMillis": 0, "blockingSort": False}


ODD_VALUES = [None, -1, 2**63 - 1, 1.5, float("nan"), float("inf"), "", "x", [], {}, [1, "a"], {"a": 1}, True,
              datetime(9999, 12, 31, tzinfo=timezone.utc), Int64(7), Decimal128("NaN"), ObjectId(), b"\x00",
              Timestamp(0, 0), Regex("(", ""), MinKey(), MaxKey(), {"$gt": 1}, {"a": "hashed"}, {"$**": 1}]
HANDLERS = ["_explain", "_aggregate", "_buildInfo", "_listDatabases", "_listCollections", "_collStats", "_count",
            "_listIndexes", "_find"]


def _paths(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*path, key))
    elif isinstance(value, list):
        for position, item in enumerate(value):
            found += _paths(item, (*path, position))
    return found


def _replace_a_value(reply: Reply, rng: random.Random) -> Reply:
    reply = copy.deepcopy(reply)
    for _ in range(rng.randint(1, 3)):
        path = rng.choice(_paths(reply)[1:] or [()])
        if not path:
            break
        parent = reply
        for step in path[:-1]:
            parent = parent[step]
        parent[path[-1]] = copy.deepcopy(rng.choice(ODD_VALUES))
    return reply


def test_replies_with_values_of_other_kinds_never_end_in_an_internal_error(
        capsys: pytest.CaptureFixture[str], fake: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(20261125)
    ends = set()
    for _ in range(60):
        handler = rng.choice(HANDLERS)
        with monkeypatch.context() as patch:
            answering(patch, handler, lambda reply, command: _replace_a_value(reply, rng))
            code = run(["analyze", "--uri", fake.uri, "--format", "json", "--replay",  # type: ignore[attr-defined]
                        "--query-stats", "--jobs", "1"])
        err = capsys.readouterr().err
        assert "internal error" not in err, (handler, err)
        assert code in (0, 1, 3) and (code != 3 or err.count("\n") == 1), (handler, code, err)
        ends.add(code)
    assert ends >= {1, 3}  # some replies still give findings, some are refused in one line
