"""What an index costs the writes: the fields an update sets, the keys a document holds, the rates of the log and the
server's own count of write operations."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

from idxadvisor.api import read_inputs
from idxadvisor.config import Settings
from idxadvisor.indexes.model import IndexSpec
from idxadvisor.indexes.sampling import SampleStatistics
from idxadvisor.selection.writes import WriteLoad, key_writes, keys_per_document, touches, updated_fields, write_load
from idxadvisor.testing import operation_lines

NS = "shop.orders"


def test_an_update_sets_the_fields_of_its_operators() -> None:
    assert updated_fields({"q": {"_id": 1}, "u": {"$set": {"status": "x", "a.b": 1}, "$inc": {"n": 1}}}) == {
        "status", "a.b", "n"}
    assert updated_fields({"u": {"$rename": {"old": "new"}}}) == {"old", "new"}
    assert updated_fields({"update": "orders", "updates": [{"q": {}, "u": {"$unset": {"x": ""}}}]}) == {"x"}
    assert updated_fields({"findAndModify": "orders", "update": {"$push": {"tags": "t"}}}) == {"tags"}


def test_a_replacement_a_pipeline_or_an_unlogged_update_may_change_any_field() -> None:
    assert updated_fields({"u": {"status": "x", "total": 3}}) is None
    assert updated_fields({"u": [{"$set": {"status": "x"}}]}) is None
    assert updated_fields({"update": "orders"}) is None


def test_an_update_touches_an_index_through_a_field_its_parent_or_its_children() -> None:
    key = (("a", 1), ("b.c", 1))
    assert touches(key, frozenset({"b"})) and touches(key, frozenset({"b.c.d"})) and touches(key, frozenset({"a"}))
    assert not touches(key, frozenset({"bc", "b.cd", "x"}))
    assert touches(key, None)


def test_a_multikey_index_writes_one_key_per_array_element() -> None:
    sample = SampleStatistics([{"tags": ["a", "b", "c"], "n": 1}, {"tags": ["a"], "n": 2}])
    assert keys_per_document((("tags", 1), ("n", 1)), sample) == 2.0
    assert keys_per_document((("n", 1),), sample) == 1.0
    assert keys_per_document((("tags", 1),), None) == 1.0


def test_each_index_pays_for_inserts_deletes_and_the_updates_of_its_fields() -> None:
    load = WriteLoad(inserted=100.0, deleted=10.0, updates=[(frozenset({"status"}), 50.0), (None, 5.0)])
    assert key_writes((("status", 1), ("createdAt", -1)), load, None) == 100 + 10 + 2 * (50 + 5)
    assert key_writes((("customerId", 1),), load, None) == 100 + 10 + 2 * 5


def log_shapes(tmp_path: Path, operations: list[dict]) -> list:
    log = tmp_path / "writes.log"
    log.write_text("\n".join(operation_lines(operations)) + "\n")
    digest, _ = read_inputs([str(log)], Settings(jobs=1))
    return list(digest.shapes.values())


WRITES = [
    {"ns": NS, "command": {"insert": "orders", "ordered": True}, "ninserted": 10, "repeat": 60, "every": 60, "at": 0},
    {"ns": NS, "type": "update", "command": {"q": {"status": "new"}, "u": {"$set": {"status": "paid"}}, "multi": True},
     "plan": "IXSCAN { status: 1 }", "keysExamined": 4, "docsExamined": 4, "nMatched": 4, "repeat": 30, "every": 120,
     "at": 0},
    {"ns": NS, "command": {"delete": "orders", "deletes": [{"q": {"status": "old"}, "limit": 0}]}, "ndeleted": 2,
     "repeat": 60, "every": 60, "at": 0},
]


def test_the_logs_writes_become_documents_per_hour_of_its_span(tmp_path: Path) -> None:
    shapes = log_shapes(tmp_path, WRITES)
    load = write_load(shapes, 1.0, None, None)
    assert (load.inserted, load.updated, load.deleted, load.source) == (600.0, 120.0, 120.0, "log")
    assert load.updates == [(frozenset({"status"}), 120.0)]
    assert load.note == "slow operations only, unless slowms is 0 or profiling is at level 2"


def test_the_servers_count_of_write_operations_scales_the_logs_mix(tmp_path: Path) -> None:
    shapes = log_shapes(tmp_path, WRITES)  # 150 write operations in the hour
    now = datetime(2026, 3, 1, 12, tzinfo=timezone.utc)
    sample = SampleStatistics([{"_id": 1}], write_operations=3_000, counted_at=now)
    started = {"ops": 5, "since": {"$date": (now - timedelta(hours=2)).isoformat()}}
    existing = [IndexSpec.from_document({"key": {"_id": 1}, "name": "_id_", "accesses": started})]
    load = write_load(shapes, 1.0, sample, existing)  # 1,500 operations an hour: ten times the log's
    assert load.source == "server" and (load.inserted, load.updated, load.deleted) == (6000.0, 1200.0, 1200.0)
    assert "1,500 write operations per hour" in (load.note or "")
    alone = write_load([], 1.0, sample, existing)  # a log without writes: every operation an insert
    assert (alone.source, alone.inserted, alone.updated) == ("server", 1500.0, 0.0)
    unknown = write_load(shapes, 1.0, SampleStatistics([{"_id": 1}]), existing)  # no $collStats latencyStats
    assert unknown.source == "log" and unknown.inserted == 600.0


def test_a_log_that_spans_no_time_is_not_set_against_the_servers_hourly_rate(tmp_path: Path) -> None:
    shapes = log_shapes(tmp_path, WRITES)
    now = datetime(2026, 3, 1, 12, tzinfo=timezone.utc)
    sample = SampleStatistics([{"_id": 1}], write_operations=3_000, counted_at=now)
    existing = [IndexSpec.from_document({"key": {"_id": 1}, "name": "_id_",
                                         "accesses": {"ops": 5, "since": now - timedelta(hours=2)}})]
    load = write_load(shapes, None, sample, existing)  # totals over the log, not per hour
    assert load.source == "log" and load.inserted == 600.0


def test_a_restore_load_is_not_the_collections_write_rate(tmp_path: Path) -> None:
    """A mongorestore of 50,000 documents in ten minutes is a one-off load: only the application's inserts count."""
    restore = {"ns": NS, "command": {"insert": "orders", "ordered": False}, "ninserted": 1000, "appName": "mongorestore",
               "repeat": 50, "every": 12, "at": 0}
    application = {**WRITES[0], "appName": "orders-api"}
    load = write_load(log_shapes(tmp_path, [restore, application]), 1.0, None, None)
    assert load.inserted == 600.0
    assert load.note is not None and "50,000 documents written by bulk tools" in load.note
