"""Where the time went: the components of an operation's time, read from the line, validated, never invented."""

from __future__ import annotations

import json

import pytest

from tests.helpers import json_line, parse_block, slow_attr

FIND = {"find": "orders", "filter": {"status": "A"}}


def only(attr: dict) -> tuple[object, object]:
    stats, events = parse_block(json_line(attr) + "\n", "json-log")
    [event] = events
    return stats, event


def test_every_component_a_line_carries_is_read_in_milliseconds() -> None:
    attr = slow_attr(FIND, workingMillis=40, durationMillis=253, cpuNanos=2_000_000, planningTimeMicros=1500,
                     writeConflicts=3, totalOplogSlotDurationMicros=1_500_000, waitForWriteConcernDurationMillis=44,
                     queues={"ingress": {"admissions": 1, "totalTimeQueuedMicros": 100},
                             "execution": {"admissions": 3, "totalTimeQueuedMicros": 200_000}},
                     storage={"data": {"bytesRead": 8338, "timeReadingMicros": 12_000}},
                     locks={"Global": {"acquireCount": {"r": 1}, "timeAcquiringMicros": {"r": 1000, "w": 500}},
                            "Collection": {"timeAcquiringMicros": {"W": 2500}}},
                     flowControl={"acquireCount": 1, "timeAcquiringMicros": 7000})
    _, event = only(attr)
    assert event.timing == {"working_ms": 40, "cpu_ms": 2.0, "planning_ms": 1.5, "write_conflicts": 3,
                            "oplog_slot_ms": 1500.0, "write_concern_ms": 44, "queued_ms": 200.0,
                            "ingress_queued_ms": 0.1, "admissions": 3, "bytes_read": 8338, "disk_read_ms": 12.0,
                            "lock_wait_ms": 4.0, "flow_control_ms": 7.0}


def test_a_line_without_components_has_none_and_absent_ones_are_unknown_not_zero() -> None:
    _, bare = only(slow_attr(FIND))
    assert bare.timing is None
    _, some = only(slow_attr(FIND, storage={"data": {"bytesRead": 10}}, flowControl={"acquireCount": 1}))
    assert some.timing == {"bytes_read": 10}


@pytest.mark.parametrize("damaged", [{"workingMillis": -1}, {"cpuNanos": "many"}, {"writeConflicts": 1e300},
                                     {"locks": {"Global": {"timeAcquiringMicros": {"r": -5}}}}])
def test_a_damaged_component_is_a_counted_problem_and_stays_unknown(damaged: dict) -> None:
    stats, event = only(slow_attr(FIND, storage={"data": {"bytesRead": 10}}, **damaged))
    assert stats.problems == 1
    assert event.timing == {"bytes_read": 10}


def test_a_paired_write_takes_its_commands_components_where_it_has_none() -> None:
    statement = json_line({"type": "update", "ns": "hr.employees",
                           "command": {"q": {"_id": 1}, "u": {"$set": {"a": 1}}},
                           "planSummary": "IDHACK", "keysExamined": 1, "docsExamined": 1, "durationMillis": 0,
                           "writeConflicts": 2}, component="WRITE", ts="2025-01-01T10:00:00.100+00:00")
    command = json_line({"type": "command", "ns": "hr.$cmd", "command": {"update": "employees", "ordered": True},
                         "durationMillis": 44, "writeConflicts": 9, "waitForWriteConcernDurationMillis": 43},
                        ts="2025-01-01T10:00:00.144+00:00")
    _, events = parse_block(statement + "\n" + command + "\n", "json-log")
    [event] = events
    assert (event.duration_ms, event.timing) == (44, {"write_conflicts": 2, "write_concern_ms": 43})


KEYHOLE_DELETE = ("2018-12-01T19:43:03.224-0500 I WRITE    [conn83] remove _KEYHOLE_88800.examples command: { q: {}, "
                  "limit: 0 } planSummary: COLLSCAN ndeleted:0 keysDeleted:237996 writeConflicts:767683 "
                  "numYields:767755 ok:0 errMsg:\"Exec error resulting in state DEAD :: caused by :: interrupted at "
                  "shutdown\" errName:InterruptedAtShutdown errCode:11600 locks:{ Global: { acquireCount: { r: 767756, "
                  "w: 767756 } }, Database: { acquireCount: { w: 767756 }, acquireWaitCount: { w: 2 }, "
                  "timeAcquiringMicros: { w: 5197 } }, Collection: { acquireCount: { w: 767756 } } } 108069ms")


def test_a_text_line_carries_write_conflicts_and_lock_waits() -> None:
    stats, events = parse_block(KEYHOLE_DELETE + "\n", "text-log")
    [event] = events
    assert event.timing == {"write_conflicts": 767683, "lock_wait_ms": pytest.approx(5.197)}
    assert event.num_yields == 767755


def test_a_4_2_text_line_carries_storage_and_flow_control() -> None:
    line = ("2020-01-01T00:00:00.000+0000 I  COMMAND  [conn1] command a.b command: find { find: \"b\", filter: "
            "{ x: 1 } } planSummary: COLLSCAN keysExamined:0 docsExamined:10 nreturned:1 numYields:3 locks:{ "
            "ReplicationStateTransition: { acquireCount: { w: 1 } }, Global: { acquireCount: { r: 1 }, "
            "timeAcquiringMicros: { r: 2000 } } } flowControl:{ acquireCount: 1, timeAcquiringMicros: 300 } "
            "storage:{ data: { bytesRead: 4096, timeReadingMicros: 900 } } protocol:op_msg 150ms")
    _, events = parse_block(line + "\n", "text-log")
    [event] = events
    assert event.timing == {"lock_wait_ms": 2.0, "flow_control_ms": 0.3, "bytes_read": 4096, "disk_read_ms": 0.9}


def test_a_damaged_component_of_a_text_line_is_a_counted_problem() -> None:
    line = ("2020-01-01T00:00:00.000+0000 I  WRITE    [conn1] remove a.b command: { q: {}, limit: 0 } "
            "planSummary: COLLSCAN ndeleted:0 writeConflicts:abc numYields:3 150ms")
    stats, events = parse_block(line + "\n", "text-log")
    assert (stats.problems, events[0].timing) == (1, None)
    assert stats.problem_examples[0].reason == "a damaged time component (writeConflicts)"


def test_a_profiler_document_carries_the_same_components_in_extended_json_or_plain() -> None:
    document = {"op": "update", "ns": "shop.orders", "command": {"q": {"a": 1}, "u": {"$set": {"b": 1}}},
                "millis": 300, "writeConflicts": {"$numberLong": "12"}, "workingMillis": 20,
                "locks": {"Global": {"acquireCount": {"w": 1}, "timeAcquiringMicros": {"w": {"$numberLong": "250000"}}}},
                "ts": {"$date": "2026-03-02T10:00:00.000Z"}}
    stats, events = parse_block(json.dumps(document) + "\n", "profile")
    assert stats.problems == 0
    assert events[0].timing == {"working_ms": 20, "write_conflicts": 12.0, "lock_wait_ms": 250.0}
