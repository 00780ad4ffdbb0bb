"""Legacy text logs, 2.2 to 4.2: every layout becomes the event a 4.4+ server would have logged."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from idxadvisor.parse import textlog
from idxadvisor.shapes import shape as shapes
from tests.helpers import REFERENCE_YEAR, parse_block


def one(line: str):
    stats, events = parse_block(line + "\n", "text-log")
    assert stats.entries == 1, stats
    (event,) = events
    return stats, event


def test_42_find_command() -> None:
    line = ('2020-06-23T10:21:26.019+0000 I  COMMAND  [conn7] command shop.orders appName: "shop \\"api\\"" '
            'command: find { find: "orders", filter: { status: "A", qty: { $gt: 5.0 } }, sort: { createdAt: -1.0 }, '
            'limit: 20, lsid: { id: UUID("3b74eb10-ca8e-4cf0-b1db-ceaeb37d53da") }, $clusterTime: { clusterTime: '
            'Timestamp(1592907686, 1), signature: { hash: BinData(0, 0000000000000000000000000000000000000000), '
            'keyId: 0 } }, $db: "shop" } planSummary: IXSCAN { status: 1 } keysExamined:420 docsExamined:420 '
            'hasSortStage:1 cursorExhausted:1 numYields:3 nreturned:20 queryHash:4B53BE76 planCacheKey:A1B2C3D4 '
            'reslen:5120 locks:{ Global: { acquireCount: { r: 4 } } } storage:{} protocol:op_msg 312ms')
    _, event = one(line)
    assert (event.ns, event.op, event.connection, event.app_name) == ("shop.orders", "find", "conn7", 'shop "api"')
    assert event.ts == datetime(2020, 6, 23, 10, 21, 26, 19000, tzinfo=timezone.utc)
    assert event.command["filter"] == {"status": "A", "qty": {"$gt": 5.0}}
    assert event.command["lsid"] == {"id": {"$uuid": "3b74eb10-ca8e-4cf0-b1db-ceaeb37d53da"}}
    assert event.command["$clusterTime"]["clusterTime"] == {"$timestamp": {"t": 1592907686, "i": 1}}
    assert event.plan_summary == "IXSCAN { status: 1 }"
    assert (event.keys_examined, event.docs_examined, event.nreturned, event.duration_ms) == (420, 420, 20, 312)
    assert event.has_sort_stage and event.query_hash == "4B53BE76"


def test_36_write_statement_line() -> None:
    line = ("2018-12-01T19:38:10.779-0500 I WRITE    [conn9] update shop.orders command: { q: { _id: "
            "ObjectId('5c032972f84a0a3a9441c6b2') }, u: { $set: { ts: new Date(1543711090757) } }, multi: false, "
            "upsert: false } planSummary: IDHACK keysExamined:1 docsExamined:1 nMatched:1 nModified:1 numYields:1 "
            "locks:{ Global: { acquireCount: { r: 2, w: 2 } } } 21ms")
    _, event = one(line)
    assert (event.op, event.statement) == ("update", True)
    assert event.command["q"] == {"_id": {"$oid": "5c032972f84a0a3a9441c6b2"}}
    assert event.command["u"] == {"$set": {"ts": {"$date": "2018-12-02T00:38:10.757Z"}}}
    assert (event.n_matched, event.plan_summary) == (1, "IDHACK")


def test_26_legacy_query_with_query_and_orderby_wrapper() -> None:
    line = ("2014-04-09T23:25:32.504+0000 [conn4492] query shop.products query: { $query: { groupId: "
            "ObjectId('51c44d167fe227e9f18ce94a'), active: true }, $orderby: { name: 1 } } planSummary: IXSCAN "
            "{ groupId: 1, name: 1 } ntoreturn:20 ntoskip:0 nscanned:21 nscannedObjects:20 keyUpdates:0 numYields:0 "
            "locks(micros) r:1353 nreturned:1 reslen:1125 1ms")
    _, event = one(line)
    assert event.op == "find" and event.command == {
        "find": "products", "filter": {"groupId": {"$oid": "51c44d167fe227e9f18ce94a"}, "active": True},
        "sort": {"name": 1}}
    assert (event.keys_examined, event.docs_examined, event.nreturned) == (21, 20, 1)
    assert event.plan_summary == "IXSCAN { groupId: 1, name: 1 }"


def test_24_ctime_query_with_scan_and_order_and_no_year() -> None:
    line = ("Wed Mar  5 17:14:57.407 [conn4] query test.docs query: { query: { foo: 33.0 }, orderby: { bar: -1.0 } } "
            "ntoreturn:0 ntoskip:0 nscanned:100000 scanAndOrder:1 keyUpdates:0 locks(micros) r:29773 nreturned:1 "
            "reslen:68 29ms")
    _, event = one(line)
    assert event.command == {"find": "docs", "filter": {"foo": 33.0}, "sort": {"bar": -1.0}}
    assert event.has_sort_stage and event.keys_examined == 100000
    assert event.ts.weekday() == 2 and (event.ts.month, event.ts.day) == (3, 5)  # a Wednesday, 5 March
    assert event.ts.year <= REFERENCE_YEAR


def test_22_getmore_on_the_oplog_with_old_timestamps_and_spaced_yields() -> None:
    line = ("Mon Aug  5 20:26:32 [conn9] getmore local.oplog.rs query: { ts: { $gte: Timestamp 1375698319000|2 } } "
            "cursorid:1870634279361287923 ntoreturn:0 keyUpdates:0 numYields: 107 locks(micros) r:85093 "
            "nreturned:13551 reslen:230387 144ms")
    _, event = one(line)
    assert event.op == "getMore" and event.nreturned == 13551 and event.internal == "internal database 'local'"
    assert event.originating_command == {
        "find": "oplog.rs", "filter": {"ts": {"$gte": {"$timestamp": {"t": 1375698319, "i": 2}}}}}


def test_30_ctime_getmore_with_severity_and_component() -> None:
    line = ("Wed Jul 13 16:14:35.324 I QUERY [conn39] getmore db.coll query: { Header._id: null, Header.flag: true } "
            "cursorid:47273143030 ntoreturn:0 nreturned:10024 reslen:1929777 220ms")
    _, event = one(line)
    assert event.originating_command["filter"] == {"Header._id": None, "Header.flag": True}


def test_36_getmore_uses_its_originating_command() -> None:
    line = ('2019-06-18T12:00:00.000+0100 I COMMAND  [conn1] command shop.orders appName: "app" command: getMore '
            '{ getMore: 12345, collection: "orders", $db: "shop" } originatingCommand: { find: "orders", filter: '
            '{ status: "A" }, $db: "shop" } planSummary: COLLSCAN cursorid:12345 keysExamined:0 docsExamined:900 '
            'nreturned:101 reslen:30000 protocol:op_msg 140ms')
    _, event = one(line)
    assert event.op == "getMore" and event.originating_command["filter"] == {"status": "A"}


def test_22_command_without_a_name_before_the_document() -> None:
    _, event = one("Mon Aug  5 20:27:15 [conn4] command test.$cmd command: { dropDatabase: 1.0 } ntoreturn:1 "
                   "keyUpdates:0 locks(micros) W:1574563 reslen:55 75000ms")
    assert (event.op, event.ns, event.duration_ms) == ("dropDatabase", "test.$cmd", 75000)


def test_a_failed_operation_keeps_the_exception() -> None:
    _, event = one('2016-01-01T00:00:00.000+0000 I COMMAND  [conn3] command shop.x command: find { find: "x" } '
                   'exception: operation exceeded time limit code:50 numYields:0 reslen:100 12ms')
    assert event.error == "operation exceeded time limit"


def test_42_failed_operation_with_err_name() -> None:
    _, event = one('2020-01-01T00:00:00.000+0000 I  COMMAND  [conn3] command shop.x command: find { find: "x" } '
                   'numYields:0 ok:0 errMsg:"Error in $cursor stage" errName:QueryExceededMemoryLimitNoDiskUseAllowed '
                   'errCode:292 reslen:100 protocol:op_msg 12ms')
    assert event.error == "QueryExceededMemoryLimitNoDiskUseAllowed"


def test_a_line_the_server_cut_keeps_its_counters_and_is_truncated() -> None:
    head = ('command shop.orders command: find { find: "orders", filter: { _id: { $in: [ '
            + ", ".join(f"ObjectId('5c03296ff84a0a3a9441{n:04x}')" for n in range(40)))
    tail = ("ObjectId('5c03296ff84a0a3a94419999') ] } }, $db: \"shop\" } planSummary: IXSCAN { _id: 1 } "
            "keysExamined:3000 docsExamined:3000 nreturned:3000 reslen:930000 protocol:op_msg 655ms")
    line = (f"2019-08-09T20:54:54.402Z I  COMMAND  [conn52] warning: log line attempted (20kB) over max size (10kB), "
            f"printing beginning and end ... {head} .......... {tail}")
    stats, event = one(line)
    assert event.truncated and stats.truncated == 1 and stats.problems == 0
    assert (event.op, event.ns, event.keys_examined, event.duration_ms) == ("find", "shop.orders", 3000, 655)
    assert event.plan_summary == "IXSCAN { _id: 1 }"


def test_a_document_that_cannot_be_read_is_a_problem_but_the_operation_counts() -> None:
    line = ('2020-01-01T00:00:00.000+0000 I  COMMAND  [conn3] command shop.x command: find { find: "x", filter: '
            '{ a: @@ } } planSummary: COLLSCAN keysExamined:0 docsExamined:50 nreturned:0 reslen:100 12ms')
    stats, events = parse_block(line + "\n", "text-log")
    assert stats.entries == 1 and stats.problems == 1
    assert events[0].unparsed and events[0].docs_examined == 50 and events[0].duration_ms == 12


def test_lines_without_a_timestamp_are_problems_and_do_not_stop_the_block() -> None:
    text = ("=== a line without a datetime ===\n\n   \n****\n"
            '2020-01-01T00:00:00.000+0000 I  COMMAND  [conn3] command shop.x command: find { find: "x" } 12ms\n')
    stats, events = parse_block(text, "text-log")
    assert (stats.lines, stats.entries, stats.problems) == (5, 1, 2)
    assert [p.line for p in stats.problem_examples] == [1, 4]


def test_ctime_dates_take_the_latest_year_whose_weekday_matches() -> None:
    assert textlog._ctime_date("Mon", "Aug", 5, 2026) == (2024, 8, 5)
    assert textlog._ctime_date("Thu", "Feb", 29, 2026) == (2024, 2, 29)
    # a log across a new year: each side keeps its own year
    assert textlog._ctime_date("Tue", "Dec", 31, 2026) == (2024, 12, 31)
    assert textlog._ctime_date("Wed", "Jan", 1, 2026) == (2025, 1, 1)


def test_server_version_lines() -> None:
    stats, _ = parse_block("2014-04-09T23:16:20.596-0400 [initandlisten] db version v2.6.0\n"
                           "Thu Oct  9 15:20:20.457 [mongosMain] MongoS version 2.4.11 starting: pid=1\n", "text-log")
    assert stats.versions == {"2.6.0", "2.4.11"}


@pytest.mark.corpus
def test_every_version_of_the_corpus_parses_without_unreadable_documents(corpus_dir: Path) -> None:
    """The real text logs from 2.2 to 4.2: every slow-operation line becomes an event with a readable command."""
    for path in sorted(corpus_dir.glob("mtools/**/*.log")) + [corpus_dir / "keyhole/mongod.log"]:
        stats, events = parse_block(path.read_bytes(), "text-log")
        unreadable = [p for p in stats.problem_examples if "could not be read" in p.reason]
        assert not unreadable, (path, unreadable)
        assert len(events) + stats.absorbed == stats.entries, path


def _event_fields(event) -> dict:
    """What an event holds, but its shape slot (an object shared by the events of one remembered body)."""
    return {key: value for key, value in vars(event).items() if key != "shape_slot"}


def _forget_memos() -> None:
    for memo in (textlog._BODY_MEMO, textlog._DOCUMENTS_MEMO, textlog._COUNTERS_MEMO):
        memo.clear()


def _fresh_and_remembered(lines: list[str]) -> tuple[list[dict], list[dict]]:
    """Each line's event read with every memo empty, and then all of them read in a row (the memos filling up)."""
    fresh = []
    for line in lines:
        _forget_memos()
        fresh.append(_event_fields(one(line)[1]))
    _forget_memos()
    return fresh, [_event_fields(one(line)[1]) for line in lines]


def test_repeated_documents_parse_once_and_read_the_same_as_a_fresh_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    """The memo of documents by their text: a line that repeats a command reads exactly as if parsed afresh, whatever
    follows the documents (a plan summary with braces, counters, another document), and a string holding what looks
    like the end of the documents is never taken for it."""
    command = ('2020-06-23T10:21:2{n}.019+0000 I  COMMAND  [conn{n}] command shop.orders command: find {{ find: '
               '"orders", filter: {{ status: "A" }}, $db: "shop" }}')
    lines = [
        command.format(n=1) + ' planSummary: IXSCAN { status: 1 } keysExamined:4 docsExamined:4 nreturned:1 5ms',
        command.format(n=2) + ' keysExamined:7 docsExamined:0 nreturned:0 6ms',
        command.format(n=3) + ' planSummary: COLLSCAN keysExamined:0 docsExamined:90 nreturned:2 7ms',
        '2020-06-23T10:21:24.019+0000 I  COMMAND  [conn4] command shop.orders command: getMore { getMore: 1, '
        'collection: "orders" } originatingCommand: { find: "orders", filter: { status: "A" } } keysExamined:1 8ms',
        '2020-06-23T10:21:25.019+0000 I  COMMAND  [conn5] command shop.orders command: getMore { getMore: 1, '
        'collection: "orders" } keysExamined:2 9ms',
        '2020-06-23T10:21:26.019+0000 I  COMMAND  [conn6] command shop.orders command: find { find: "orders", '
        'filter: { note: "x} keysExamined:9" } } keysExamined:3 9ms',
    ]
    fresh, remembered = _fresh_and_remembered(lines)
    parses = []
    parse = textlog._parse_documents
    monkeypatch.setattr(textlog, "_parse_documents", lambda *args: parses.append(1) or parse(*args))
    textlog._BODY_MEMO.clear()  # each body is read again, from the documents' memo
    remembered_again = [_event_fields(one(line)[1]) for line in lines]
    assert remembered == fresh and remembered_again == fresh
    assert len(parses) == 1, "only the line whose string looks like the end of its documents is parsed again"
    assert fresh[0]["command"]["filter"] == {"status": "A"} and fresh[0]["plan_summary"] == "IXSCAN { status: 1 }"
    assert (fresh[0]["keys_examined"], fresh[1]["keys_examined"], fresh[2]["docs_examined"]) == (4, 7, 90)
    assert fresh[3]["originating_command"] == {"find": "orders", "filter": {"status": "A"}}
    assert fresh[4].get("originating_command") is None
    assert fresh[5]["command"]["filter"] == {"note": "x} keysExamined:9"} and fresh[5]["keys_examined"] == 3


def test_repeated_counters_read_the_same_as_a_fresh_read() -> None:
    """The memo of counters by their text: a line that repeats the counters of another reads exactly as if read
    afresh, whatever else differs (connection, duration, a damaged duration, the op), and a remembered reading is
    copied onto each event, never shared with it."""
    counters = ('planSummary: IXSCAN { nscanned: 1 } ntoskip:5 nscanned:{n} nreturned:2 numYield:1 scanAndOrder:1 '
                'docsExamined:99999999999999999999999 exception: boom code:11000')
    lines = [  # each body differs (its query does), so only the counters' memo can remember their reading
        f'Wed Jun 23 10:21:2{n}.019 [conn{n}] query shop.orders query: {{ status: "{n}" }} '
        f'{counters.replace("{n}", str(n % 2))} {duration}ms' for n, duration in enumerate(["5", "6", "9" * 40, "7"])
    ]
    fresh, remembered = _fresh_and_remembered(lines)
    textlog._BODY_MEMO.clear()
    remembered_again = [_event_fields(one(line)[1]) for line in lines]
    assert remembered == fresh and remembered_again == fresh
    assert len(textlog._COUNTERS_MEMO) == 2
    assert all(set(attributes) <= set(fresh[0]) - {"ts", "connection", "duration_ms"}
               for attributes, _ in textlog._COUNTERS_MEMO.values())
    first, second, damaged = fresh[0], fresh[1], fresh[2]
    assert first["plan_summary"] == "IXSCAN { nscanned: 1 }" and first["command"]["skip"] == 5
    assert (first["keys_examined"], second["keys_examined"], first["nreturned"], first["num_yields"]) == (0, 1, 2, 1)
    assert first["has_sort_stage"] and first["error"] == "boom"
    assert first["problem"].startswith("counter is not a usable number") and damaged["problem"] == first["problem"]
    assert damaged["duration_ms"] is None and first["duration_ms"] == 5 and "docs_examined" not in first


def test_a_repeated_body_reads_the_same_as_a_fresh_read() -> None:
    """The memo of whole bodies: lines that differ only in their time, thread and duration (a damaged one too) read
    exactly as if read afresh; what depends on the thread (internal traffic) is worked out for each line; each event
    has attributes of its own; a body longer than the memo's limit is read every time."""
    body = ('command shop.$cmd appName: "shop" command: count { count: "orders", query: { status: "A" } } '
            'planSummary: COLLSCAN keysExamined:0 docsExamined:90 numYields:0 reslen:45')
    lines = [f'2020-06-23T10:21:2{n}.019+0000 I  COMMAND  [{thread}] {body} {duration}ms'
             for n, (thread, duration) in enumerate([("conn1", "5"), ("conn2", "9" * 40), ("rsSync", "7"),
                                                     ("conn1", "8")])]
    fresh = []
    for line in lines:
        _forget_memos()
        fresh.append(_event_fields(one(line)[1]))
    _forget_memos()
    events = [one(line)[1] for line in lines]
    assert [_event_fields(event) for event in events] == fresh and len(textlog._BODY_MEMO) == 1
    assert [event.internal for event in events] == [None, None, "internal thread 'rsSync'", None]
    assert events[1].problem.startswith("duration is not a usable") and fresh[1]["duration_ms"] is None
    assert (events[0].ns, events[0].op, events[0].docs_examined, events[0].app_name) == ("shop.orders", "count", 90,
                                                                                           "shop")
    events[0].plan_summary = "IXSCAN"
    assert one(lines[3])[1].plan_summary == "COLLSCAN"
    assert all(key not in attributes for attributes, _ in textlog._BODY_MEMO.values()
               for key in ("ts", "connection", "duration_ms", "internal", "source_format"))
    long_line = lines[0].replace("numYields:0", "numYields:0" + " x:1" * textlog.MEMO_TEXT_LIMIT)
    assert _event_fields(one(long_line)[1]) == fresh[0] and len(textlog._BODY_MEMO) == 1


def test_the_documents_memo_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(textlog, "MEMO_ENTRIES", 3)
    _forget_memos()
    for n in range(10):
        one(f'2020-06-23T10:21:26.019+0000 I  COMMAND  [conn1] command shop.orders command: find {{ find: "orders", '
            f'filter: {{ n: {n} }} }} keysExamined:{n} 5ms')
    assert 0 < len(textlog._DOCUMENTS_MEMO) <= 3
    assert 0 < len(textlog._COUNTERS_MEMO) <= 3
    assert 0 < len(textlog._BODY_MEMO) <= 3


def test_a_block_spans_its_earliest_to_its_latest_time_whatever_the_order_of_its_lines() -> None:
    stamps = ["2020-06-23T10:21:26.019+0000", "2020-06-23T05:21:25.000-0500", "2020-06-23T12:21:27.000+0200",
              "2020-06-23T10:21:30.500+0000", "2020-06-23T10:21:20.000+0000", "2020-06-23T10:21:29.000+0000"]
    text = "".join(f'{stamp} I  COMMAND  [conn1] command shop.orders command: find {{ find: "orders" }} 5ms\n'
                   for stamp in stamps)
    stats, events = parse_block(text, "text-log")
    assert len(events) == len(stamps)
    assert stats.first_ts == datetime(2020, 6, 23, 10, 21, 20, tzinfo=timezone.utc)
    assert stats.last_ts == datetime(2020, 6, 23, 10, 21, 30, 500000, tzinfo=timezone.utc)


def test_the_events_of_one_remembered_body_are_shaped_once_and_as_a_fresh_shape_would() -> None:
    """Every input of a shape (op, namespace, command, originating command, truncated, unparsed) comes from the body,
    so the events of one remembered body share one slot, shaped once; the events of other bodies (another $in size,
    regex, skip, namespace, a cut line, an unreadable document, a getMore's origin) have slots of their own, and each
    event's shared shape is the one ``shape_of`` gives it afresh."""
    bodies = [
        'command shop.orders command: find { find: "orders", filter: { s: { $in: [ 1, 2 ] } } } keysExamined:1',
        'command shop.orders command: find { find: "orders", filter: { s: { $in: [ 1, 2, 3 ] } } } keysExamined:1',
        'command shop.orders command: find { find: "orders", filter: { s: /^ab/ }, skip: 5 } keysExamined:1',
        'command shop.orders command: find { find: "orders", filter: { s: /ab/ } } keysExamined:1',
        'command shop.items command: find { find: "items", filter: { s: /^ab/i } } keysExamined:1',
        'query shop.orders query: { s: 1 } ntoskip:7 nscanned:1',
        'command shop.orders command: getMore { getMore: 1, collection: "orders" } originatingCommand: { find: '
        '"orders", filter: { s: { $gt: 1 } } } keysExamined:1',
        'command shop.orders command: find { find: "orders", filter: { s: { $in: [ 1, 2 ] } } unreadable',
        'warning: log line attempted (12kB) over max size (10kB), printing beginning and end ... command shop.orders '
        'command: find { find: "orders", filter: { s: .......... nreturned:1 keysExamined:1',
    ]
    def line(n: int, body: str) -> str:
        return f"2020-06-23T10:21:2{n}.019+0000 I  COMMAND  [conn{n}] {body} {n + 1}ms"

    _forget_memos()
    events = [one(line(n, body))[1] for n in range(3) for body in bodies]
    slots = [event.shape_slot for event in events]
    assert len({id(slot) for slot in slots}) == len(bodies) and slots[: len(bodies)] * 3 == slots
    shaped = [shapes.shape_of_shared(event) for event in events]
    assert all(event.shape_slot.shaped is result for event, result in zip(events, shaped))
    fresh = []
    for n in range(3):
        for body in bodies:
            _forget_memos()
            fresh.append(shapes.shape_of(one(line(n, body))[1]))
    assert shaped == fresh and len(set(shaped)) == len(bodies)
    assert [observation for _, observation in shaped[:3]] == [shapes.ShapeObservation(2), shapes.ShapeObservation(3),
                                                            shapes.ShapeObservation(0, 5)]
