"""The readers at the pymongo boundary: replies shaped as the manual documents them, turned into our types."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

import pytest

from idxadvisor.indexes.catalog import parse_index_catalog
from idxadvisor.models.events import Event
from idxadvisor.server.readers import ServerRead, index_documents, query_stats_shape, read_sample, relaxed
from idxadvisor.server.source import ReadOnlySource, check_read_only
from idxadvisor.shapes.digest import Digest
from idxadvisor.shapes.shape import shape_of
from tests.server.replies import COLL_STATS, INDEX_STATS, QUERY_STATS


def test_a_query_stats_entry_becomes_its_shape_with_the_servers_totals() -> None:
    stats = query_stats_shape(relaxed(QUERY_STATS[0]))
    assert stats is not None
    logged = Event(ns="test.products", op="find", command={"find": "products", "filter": {"item": "pen"},
                                                           "sort": {"price": 1}})
    assert stats.shape.fingerprint == shape_of(logged)[0].fingerprint  # "?string" is a value like any other
    assert (stats.count, stats.docs_examined, stats.nreturned, stats.blocking_sorts) == (4, 400, 8, 4)
    assert stats.duration.total == pytest.approx(40.0) and stats.duration.maximum == pytest.approx(25.0)
    assert stats.first_seen is not None and stats.last_seen is not None and stats.first_seen < stats.last_seen
    assert stats.server_hashes["queryShapeHash"].kept() == {QUERY_STATS[0]["queryShapeHash"]}


def test_query_stats_shapes_merge_with_logged_ones() -> None:
    stats = query_stats_shape(relaxed(QUERY_STATS[0]))
    assert stats is not None
    digest = Digest()
    digest.add(Event(ns="test.products", op="find", duration_ms=10.0,
                     command={"find": "products", "filter": {"item": "pen"}, "sort": {"price": 1}}))
    digest.merge(Digest(shapes={stats.shape.fingerprint: stats}))
    assert [merged.count for merged in digest.shapes.values()] == [5]


def test_an_entry_without_a_query_shape_is_not_a_shape() -> None:
    assert query_stats_shape({"key": {"queryShape": {"command": "insert"}}, "metrics": {"execCount": 1}}) is None
    assert query_stats_shape({"key": {}, "metrics": {}}) is None


class RecordedSource(ReadOnlySource):
    """A source whose replies are the manual's: every command still passes the read-only check."""

    def __init__(self) -> None:
        super().__init__("mongodb://reader:s3cret@db.example.com/")
        self.sent: list[dict] = []

    def _send(self, database: str, command: dict, what: str, *, cursor: bool = False) -> Any:
        check_read_only(command)
        self.sent.append(command)
        name = next(iter(command))
        if name == "buildInfo":
            return {"version": "7.0.2", "versionArray": [7, 0, 2, 0]}
        if name == "listIndexes":
            return [dict(index["spec"]) for index in INDEX_STATS]
        stage = next(iter(command["pipeline"][0]))
        return {"$indexStats": INDEX_STATS, "$collStats": COLL_STATS,
                "$sample": [{"_id": n, "item": "pen"} for n in range(command["pipeline"][0].get("$sample", {})
                                                                        .get("size", 0))]}[stage]


def test_the_index_file_keeps_each_index_usage_as_the_server_returned_it() -> None:
    read = ServerRead("mongodb://db.example.com")
    document = index_documents(RecordedSource(), ["test.products"], read)
    first = document["test.products"][0]
    assert first["name"] == "item_1_quantity_1" and first["key"] == {"item": 1, "quantity": 1}
    assert first["accesses"] == {"ops": 1, "since": {"$date": "2020-02-10T21:11:23.059Z"}}
    catalog = parse_index_catalog(document)
    assert catalog["test.products"][0].accesses == first["accesses"] and not read.missing


def test_a_sample_knows_its_collections_size() -> None:
    source = RecordedSource()
    sample = read_sample(source, "test.matrices", 5)
    assert (len(sample), sample.documents_seen, sample.average_document_size) == (5, 1104369, 550.0)
    assert sample.origin == "the collection"
    assert [next(iter(command["pipeline"][0])) for command in source.sent] == ["$collStats", "$sample"]
    assert source.sent[0]["pipeline"][0]["$collStats"] == {"storageStats": {}, "latencyStats": {}}
    counted_at = datetime(2020, 2, 10, 21, 11, 23, tzinfo=timezone.utc)  # the reply's localTime
    assert (sample.write_operations, sample.counted_at) == (1204, counted_at)
