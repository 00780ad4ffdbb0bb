"""The index inventory the log itself gives, without --indexes or --uri: plan summaries, createIndexes and dropIndexes
commands, index-build messages; and what the advice does with it (docs/log-context.md)."""

from __future__ import annotations

import pickle
from datetime import datetime, timedelta, timezone
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from idxadvisor.api import analyze, read_inputs
from idxadvisor.config import Settings
from idxadvisor.indexes.inventory import build_inventory
from idxadvisor.models.inventory import CREATED, IndexSighting
from idxadvisor.models.report import Report
from idxadvisor.testing import operation_entries
from idxadvisor.testing.logwriter import json_entry

START = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)  # where operation_entries puts an operation's "at": 0
NS = "shop.products"


def _by_sku(at: float, plan: str, docs: int, repeat: int) -> dict:
    return {"ns": NS, "command": {"find": "products", "filter": {"sku": "A-1"}}, "plan": plan,
            "keysExamined": 0 if plan == "COLLSCAN" else 1, "docsExamined": docs, "nreturned": 1,
            "durationMillis": 300 if plan == "COLLSCAN" else 1, "at": at, "every": 20, "repeat": repeat}


def _build_lines(at: float, name: str, key: dict) -> list[str]:
    started = START + timedelta(seconds=at)
    attr = {"namespace": NS, "properties": {"v": 2, "key": key, "name": name}, "method": "Hybrid"}
    return [json_entry(started, "INDEX", 20384, "conn7", "Index build: starting", attr),
            json_entry(started + timedelta(seconds=2), "INDEX", 20345, "conn7", "Index build: done building",
                       {"namespace": NS, "index": name})]


def _write(tmp_path: Path, lines: list[str]) -> str:
    log = tmp_path / "mongod.log"
    log.write_text("\n".join(sorted(lines)) + "\n")  # lines of one day sort by their timestamp
    return str(log)


def _analyze(path: str, **settings: object) -> Report:
    return analyze([path], Settings(jobs=1, verbose=True, **settings))  # type: ignore[arg-type]


def test_an_index_built_half_way_leaves_the_shape_without_a_suggestion(tmp_path: Path) -> None:
    """Twenty collection scans, then sku_1 is built at 09:07, then the shape uses it: nothing to suggest."""
    operations = [_by_sku(0, "COLLSCAN", 50_000, 20), _by_sku(430, "IXSCAN { sku: 1 }", 1, 10)]
    path = _write(tmp_path, operation_entries(operations)["json"] + _build_lines(410, "sku_1", {"sku": 1}))
    report = _analyze(path)
    assert report.suggested_indexes == []
    (skip,) = [skip for skip in report.skipped if skip.ns == NS]
    assert skip.reason == "built during the log: sku_1 { sku: 1 } built at 09:06 (2026-01-05); since then the shape " \
                          "uses it"
    (sku,) = report.index_inventory
    assert (sku.name, sku.key, sku.built_at, sku.plan_shapes) == ("sku_1", [("sku", 1)], START + timedelta(seconds=412),
                                                                  1)
    assert sku.sources == ["index build messages", "plan summaries"]


def test_without_the_build_the_same_log_asks_for_the_index(tmp_path: Path) -> None:
    report = _analyze(_write(tmp_path, operation_entries([_by_sku(0, "COLLSCAN", 50_000, 20)])["json"]))
    assert [suggestion.key for suggestion in report.suggested_indexes] == [[("sku", 1)]]


def test_a_suggestion_names_the_index_of_the_plans_it_supersedes(tmp_path: Path) -> None:
    grades = {"ns": "school.grades", "command": {"find": "grades", "filter": {"class_id": 7, "student_id": 9}},
              "plan": "IXSCAN { class_id: 1 }", "keysExamined": 40_000, "docsExamined": 40_000, "nreturned": 1,
              "durationMillis": 400, "repeat": 20}
    report = _analyze(_write(tmp_path, operation_entries([grades])["json"]))
    (suggestion,) = report.suggested_indexes
    assert suggestion.key == [("class_id", 1), ("student_id", 1)] and suggestion.replaces == "class_id_1"
    (class_id,) = report.index_inventory
    assert (class_id.name, class_id.sources, class_id.built_at) == ("class_id_1", ["plan summaries"], None)


def test_an_index_file_replaces_the_logs_inventory(tmp_path: Path) -> None:
    grades = {"ns": "school.grades", "command": {"find": "grades", "filter": {"class_id": 7, "student_id": 9}},
              "plan": "IXSCAN { class_id: 1 }", "keysExamined": 40_000, "docsExamined": 40_000, "nreturned": 1,
              "durationMillis": 400, "repeat": 20}
    indexes = tmp_path / "indexes.json"
    indexes.write_text('{"school.grades": [{"key": {"_id": 1}, "name": "_id_"}, '
                       '{"key": {"class_id": 1}, "name": "by_class"}]}')
    report = _analyze(_write(tmp_path, operation_entries([grades])["json"]), indexes=[str(indexes)])
    assert report.index_inventory == []
    assert report.suggested_indexes[0].replaces == "by_class"


def test_create_and_drop_commands_make_the_inventory(tmp_path: Path) -> None:
    create = {"ns": "shop.$cmd", "command": {"createIndexes": "orders", "indexes": [
        {"key": {"status": 1, "createdAt": -1}, "name": "status_createdAt"}, {"key": {"region": 1}, "name": "region_1"}],
        "$db": "shop"}, "durationMillis": 900, "at": 0}
    drop = {"ns": "shop.$cmd", "command": {"dropIndexes": "orders", "index": "region_1", "$db": "shop"},
            "durationMillis": 150, "at": 60}
    failed = {"ns": "shop.$cmd", "command": {"createIndexes": "orders", "indexes": [{"key": {"sku": 1},
                                                                                        "name": "sku_1"}],
                                             "$db": "shop"}, "durationMillis": 150, "at": 90}
    lines = operation_entries([create, drop])["json"]
    lines += [line.replace('"durationMillis":150', '"ok":0,"errMsg":"exists","durationMillis":150')
              for line in operation_entries([failed])["json"]]
    digest, summaries = read_inputs([_write(tmp_path, lines)], Settings(jobs=1))
    inventory = build_inventory([sighting for summary in summaries for sighting in summary.index_sightings],
                                digest.shapes.values())
    orders = {index.name: index for index in inventory.indexes["shop.orders"]}
    assert set(orders) == {"status_createdAt", "region_1"}
    assert orders["status_createdAt"].key == (("status", 1), ("createdAt", -1)) and orders["status_createdAt"].exists
    assert orders["region_1"].dropped
    assert [spec.name for spec in inventory.catalog()["shop.orders"]] == ["status_createdAt"]
    assert all(spec.inferred for spec in inventory.catalog()["shop.orders"])


def test_a_text_log_build_index_line_is_a_sighting(tmp_path: Path) -> None:
    log = tmp_path / "mongod.log"
    log.write_text('2018-12-01T19:38:00.740-0500 I INDEX    [conn8] build index on: shop.examples properties: '
                   '{ v: 2, key: { favoriteCity: 1.0 }, name: "favoriteCity_1", ns: "shop.examples" }\n'
                   '2018-12-01T19:38:00.740-0500 I INDEX    [conn8] build index on: local.me properties: '
                   '{ v: 2, key: { _id: 1 }, name: "_id_", ns: "local.me" }\n')
    _, (summary,) = read_inputs([str(log)], Settings(jobs=1))
    (sighting,) = summary.index_sightings
    assert (sighting.ns, sighting.name, sighting.key) == ("shop.examples", "favoriteCity_1", [["favoriteCity", 1.0]])


def test_damaged_index_lines_are_no_sightings_and_break_nothing(tmp_path: Path) -> None:
    at = START
    damaged = [
        json_entry(at, "INDEX", 20384, "conn1", "Index build: starting",
                   {"namespace": NS, "properties": {"key": {"sku": True}, "name": "sku_1"}}),
        json_entry(at, "INDEX", 20384, "conn1", "Index build: starting",
                   {"namespace": NS, "properties": {"key": {"": 1}, "name": 7}}),
        json_entry(at, "INDEX", 20384, "conn1", "Index build: starting", {"namespace": ["x"], "properties": {}}),
        json_entry(at, "INDEX", 20438, "conn1", "Index build: registering",
                   {"namespace": NS, "command": {"indexes": "all of them"}, "firstIndex": {"name": 5}}),
        json_entry(at, "INDEX", 20345, "conn1", "Index build: done building", {"namespace": NS, "index": None}),
        json_entry(at, "COMMAND", 51806, "conn1", "CMD: dropIndexes", {"namespace": NS, "indexes": {"$x": []}}),
        '{"t":{"$date":"2026-01-05T09:00:00.000+00:00"},"s":"I","c":"INDEX","id":20384,"msg":"Index build: starting",'
        '"attr":{"namespace":"shop.products","properties":{"key":{"sku":1},',  # cut short
        json_entry(at, "INDEX", 20384, "conn1", "Index build: starting",
                   {"namespace": NS, "properties": {"key": {"sku": 1}, "name": "sku_1",
                                                     "partialFilterExpression": 5, "collation": "fr"}}),
    ]
    path = _write(tmp_path, damaged + operation_entries([_by_sku(0, "COLLSCAN", 50_000, 20)])["json"])
    report = _analyze(path)
    (sku,) = report.index_inventory  # the last line's key is good; its options are not, and are left out
    assert (sku.name, sku.key) == ("sku_1", [("sku", 1)])
    assert report.skipped[0].reason.startswith("already served by index sku_1 { sku: 1 }")


def test_a_workload_file_keeps_what_the_log_said_about_indexes(tmp_path: Path) -> None:
    operations = [_by_sku(0, "COLLSCAN", 50_000, 20), _by_sku(430, "IXSCAN { sku: 1 }", 1, 10)]
    path = _write(tmp_path, operation_entries(operations)["json"] + _build_lines(410, "sku_1", {"sku": 1}))
    workload = tmp_path / "shop.workload.json"
    from_log = analyze([path], Settings(jobs=1), workload_file=workload)
    from_workload = analyze([str(workload)], Settings(jobs=1))
    assert from_workload.index_inventory == from_log.index_inventory
    assert from_workload.index_inventory[0].built_at == START + timedelta(seconds=412)
    assert from_workload.suggested_indexes == []


def test_a_text_log_build_dates_the_index(tmp_path: Path) -> None:
    log = tmp_path / "mongod.log"
    log.write_text('2018-12-01T19:38:00.740-0500 I INDEX    [conn8] build index on: shop.examples properties: '
                   '{ v: 2, key: { favoriteCity: 1.0 }, name: "favoriteCity_1", ns: "shop.examples" }\n')
    _, (summary,) = read_inputs([str(log)], Settings(jobs=1))
    (index,) = build_inventory(summary.index_sightings, []).indexes["shop.examples"]
    assert index.built_during_log == datetime(2018, 12, 2, 0, 38, 0, 740000, tzinfo=timezone.utc)


def test_a_collection_dropped_and_restored_has_the_indexes_built_after_the_drop(tmp_path: Path) -> None:
    """mongorestore --drop: the collection and its indexes go, then come back; sku_1 exists from its new build."""
    lines = _build_lines(0, "sku_1", {"sku": 1}) + _build_lines(0, "name_1", {"name": 1})
    lines.append(json_entry(START + timedelta(seconds=60), "COMMAND", 518070, "conn9", "CMD: drop", {"namespace": NS}))
    lines += _build_lines(120, "sku_1", {"sku": 1})
    _, (summary,) = read_inputs([_write(tmp_path, lines)], Settings(jobs=1))
    indexes = {index.name: index for index in build_inventory(summary.index_sightings, []).indexes[NS]}
    assert indexes["name_1"].dropped and not indexes["sku_1"].dropped
    assert indexes["sku_1"].built_at == START + timedelta(seconds=122)


@settings(max_examples=300, deadline=None)
@given(moment=st.datetimes(min_value=datetime(1970, 1, 2), max_value=datetime(2200, 1, 1),
                           timezones=st.builds(timezone, st.timedeltas(min_value=timedelta(hours=-23),
                                                                       max_value=timedelta(hours=23)))))
def test_a_sighting_travels_between_processes_unchanged(moment: datetime) -> None:
    """Workers ship sightings with their time as seconds and an offset (cheap to pickle): the same instant, the same
    offset, to the microsecond, whatever the year and the zone."""
    sighting = IndexSighting(NS, CREATED, "sku_1", [["sku", 1]], moment, "createIndexes commands", {"unique": True})
    back = pickle.loads(pickle.dumps(sighting, protocol=pickle.HIGHEST_PROTOCOL))
    assert back == sighting
    assert back.ts is not None
    assert (back.ts.replace(tzinfo=None), back.ts.utcoffset()) == (moment.replace(tzinfo=None), moment.utcoffset())


def test_a_key_pattern_seen_again_is_read_as_it_is_not_as_an_equal_one() -> None:
    """Key patterns are read once per distinct pattern; ``True == 1`` yet a boolean direction is no index."""
    when = datetime(2026, 1, 1, tzinfo=timezone.utc)
    sightings = [IndexSighting("shop.orders", "created", None, [["status", True]], when, "createIndexes commands"),
                 IndexSighting("shop.orders", "created", None, [["status", 1]], when + timedelta(seconds=1),
                               "createIndexes commands"),
                 IndexSighting("shop.orders", "created", None, [["status", 1.0]], when + timedelta(seconds=2),
                               "createIndexes commands")]
    inventory = build_inventory(sightings, [])
    assert [(index.key, index.sources) for index in inventory.indexes["shop.orders"]] == \
        [((("status", 1),), ["createIndexes commands"])]
