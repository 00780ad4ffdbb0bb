"""4.4+ JSON log entries become events with every field a DBA needs, and bad values never pass through."""

from __future__ import annotations

from datetime import datetime, timezone

import orjson
import pytest

from idxadvisor.models.events import Event
from idxadvisor.parse import jsonlog
from tests.helpers import json_line, parse_block, slow_attr

ENTRY_80 = (  # an invented entry in the exact form an 8.0 server writes
    '{"t":{"$date":"2025-08-18T19:50:42.184+00:00"},"s":"I",  "c":"COMMAND",  "id":51803,   "ctx":"conn926",'
    '"msg":"Slow query","attr":{"type":"command","isFromUserConnection":true,"ns":"school.grades",'
    '"collectionType":"normal","command":{"getMore":6470968167610584514,"collection":"grades","$db":"school"},'
    '"originatingCommand":{"aggregate":"grades","pipeline":[{"$match":{"classId":{"$lte":400},"studentId":'
    '{"$gt":9000}}},{"$group":{"_id":"$score","count":{"$sum":1}}}],"cursor":{},"$db":"school"},'
    '"planSummary":"IXSCAN { studentId: 1 }","cursorid":6470968167610584514,"keysExamined":0,"docsExamined":0,'
    '"fromMultiPlanner":true,"nBatches":1,"cursorExhausted":true,"numYields":1,"nreturned":5578,'
    '"planCacheShapeHash":"0360C199","queryHash":"0360C199","planCacheKey":"DF9663DB","queryFramework":"sbe",'
    '"reslen":1070101,"cpuNanos":7048056,"remote":"10.1.2.3:42774","protocol":"op_msg",'
    '"queues":{"ingress":{"admissions":1}},"workingMillis":29,"durationMillis":30}}'
)


def event(line: str) -> Event:
    return jsonlog.event_from_entry(orjson.loads(line))


def test_an_80_getmore_entry_carries_every_field() -> None:
    got = event(ENTRY_80)
    assert (got.ns, got.op, got.connection) == ("school.grades", "getMore", "conn926")
    assert got.ts == datetime(2025, 8, 18, 19, 50, 42, 184000, tzinfo=timezone.utc)
    assert got.originating_command["aggregate"] == "grades"
    assert (got.keys_examined, got.docs_examined, got.nreturned, got.duration_ms) == (0, 0, 5578, 30)
    assert got.plan_summary == "IXSCAN { studentId: 1 }" and not got.has_sort_stage
    assert (got.query_hash, got.plan_cache_shape_hash) == ("0360C199", "0360C199")
    assert got.internal is None and not got.truncated and not got.statement and got.problem is None
    # counters the analysis does not use (workingMillis, reslen, cpuNanos, remote ...) are left in the log
    assert not {"working_ms", "reslen", "cpu_nanos", "client"} & set(vars(got))


def test_a_write_statement_entry_is_a_statement_with_the_plan_counters() -> None:
    attr = {"type": "update", "ns": "shop.orders", "command": {"q": {"status": "A"}, "u": {"$set": {"x": 1}},
                                                                "multi": True, "upsert": False},
            "planSummary": "IXSCAN { status: 1 }", "keysExamined": 12, "docsExamined": 12, "nMatched": 3,
            "nModified": 2, "durationMillis": 140}
    got = event(json_line(attr, component="WRITE"))
    assert (got.op, got.ns, got.statement) == ("update", "shop.orders", True)
    assert got.command["q"] == {"status": "A"}
    assert (got.n_matched, got.keys_examined) == (3, 12)
    removed = event(json_line({**attr, "type": "remove", "command": {"q": {}, "limit": 0}}, component="WRITE"))
    assert (removed.op, removed.statement) == ("delete", True)


def test_a_command_on_the_database_resolves_its_collection() -> None:
    got = event(json_line(slow_attr({"count": "orders", "query": {}}, ns="shop.$cmd")))
    assert (got.ns, got.op) == ("shop.orders", "count")


def test_a_truncated_command_is_flagged_but_keeps_its_counters() -> None:
    attr = slow_attr({"aggregate": "movies", "pipeline": [{"$match": {}}]}, docsExamined=3483)
    truncated = {"command": {"truncated": {"pipeline": {"truncated": {"0": {"type": "object", "size": 8199}}}},
                             "omitted": 5}}
    got = event(json_line(attr, truncated=truncated, size={"command": 8615}))
    assert got.truncated and got.docs_examined == 3483 and not got.shape_known
    other = event(json_line(attr, truncated={"errMsg": {"type": "string", "size": 20000}}, size={"errMsg": 20100}))
    assert not other.truncated  # a different attribute was cut: the query is whole


@pytest.mark.parametrize(("attr_changes", "ctx", "reason"), [
    ({"ns": "config.$cmd", "command": {"update": "system.sessions"}}, "conn1", "internal database 'config'"),
    ({"ns": "local.oplog.rs"}, "conn1", "internal database 'local'"),
    ({"ns": "admin.$cmd", "command": {"hello": 1}}, "conn1", "internal database 'admin'"),
    ({"ns": "shop.system.profile"}, "conn1", "system collection"),
    ({"isFromUserConnection": False}, "conn1", "internal connection"),
    ({}, "IndexBuildsCoordinatorMongod-0", "internal thread 'IndexBuildsCoordinatorMongod-0'"),
    ({"appName": "MongoDB Automation Agent v13.10.0"}, "conn1", "internal client 'MongoDB Automation Agent v13.10.0'"),
    ({"appName": "shop-api"}, "conn1", None),
])
def test_internal_traffic_is_kept_and_marked(attr_changes: dict, ctx: str, reason: str | None) -> None:
    attr = {**slow_attr({"find": "orders", "filter": {}}), **attr_changes}
    assert event(json_line(attr, ctx=ctx)).internal == reason


def test_a_failed_operation_keeps_its_error_name() -> None:
    attr = slow_attr({"find": "orders"}, ok=0, errMsg="operation exceeded time limit", errName="MaxTimeMSExpired",
                     errCode=50)
    assert event(json_line(attr)).error == "MaxTimeMSExpired"


def test_values_of_the_wrong_kind_are_converted_or_dropped() -> None:
    attr = slow_attr({"find": "orders"}, keysExamined="17", docsExamined={"x": 1}, nreturned=[1],
                     durationMillis="12.5", hasSortStage=1, planSummary=5)
    got = event(json_line(attr))
    assert got.keys_examined == 17 and got.docs_examined is None and got.nreturned is None
    assert got.duration_ms == 12.5 and got.has_sort_stage is True and got.plan_summary == "5"


def test_events_hold_only_event_fields() -> None:
    names = {"ns", "op"} | set(Event.__dataclass_fields__)
    assert set(event(ENTRY_80).__dict__) <= names


def test_a_build_info_entry_gives_the_version() -> None:
    line = json_line({"buildInfo": {"version": "8.0.12"}}, component="CONTROL", message_id=23403, ctx="initandlisten",
                     msg="Build Info")
    stats, events = parse_block(line + "\n", "json-log")
    assert stats.versions == {"8.0.12"} and stats.entries == 0 and events == []


def test_hand_written_lines_without_padding_or_with_a_spaced_id_are_read() -> None:
    unpadded = '{"t":{"$date":"2025-01-01T00:00:00.000Z"},"s":"I","c":"COMMAND","id":51803,"ctx":"conn2",' \
               '"msg":"Slow query","attr":{"type":"command","ns":"a.b","command":{"find":"b"},"durationMillis":5}}'
    spaced = unpadded.replace('"id":51803', '"id": 51803')
    stats, events = parse_block(unpadded + "\n" + spaced + "\n", "json-log")
    assert stats.entries == 2 and [e.ns for e in events] == ["a.b", "a.b"] and stats.problems == 0
