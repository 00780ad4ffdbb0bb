"""A healthy workload gets no finding: every query is served by an index in ESR order, counts run as count scans,
aggregations read little. Every shape still gets its reason under --verbose."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from idxadvisor.api import analyze
from idxadvisor.config import Settings
from tests.helpers import json_line

START = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)

#: (command, plan summary, keysExamined, docsExamined, nreturned, durationMillis)
OPERATIONS: list[tuple[dict[str, Any], str, int, int, int, int]] = [
    ({"find": "orders", "filter": {"customerId": 7, "status": "open"}, "sort": {"createdAt": -1}, "limit": 20},
     "IXSCAN { customerId: 1, status: 1, createdAt: -1 }", 20, 20, 20, 120),
    ({"find": "orders", "filter": {"status": "open"}, "limit": 10}, "IXSCAN { status: 1 }", 10, 10, 10, 110),
    ({"count": "orders", "query": {"status": "open"}}, "COUNT_SCAN { status: 1 }", 800, 0, 1, 115),
    ({"find": "customers", "filter": {"email": "a@b.c"}}, "IXSCAN { email: 1 }", 1, 1, 1, 105),
    ({"find": "orders", "filter": {"createdAt": {"$gte": {"$date": "2026-03-01T00:00:00Z"}}},
      "sort": {"createdAt": -1}}, "IXSCAN { createdAt: -1 }", 300, 300, 300, 140),
    ({"aggregate": "events", "pipeline": [{"$match": {"campaignId": 3}}, {"$group": {"_id": "$type",
                                                                                     "n": {"$sum": 1}}}],
      "cursor": {}}, "IXSCAN { campaignId: 1 }", 60, 60, 4, 101),
    ({"distinct": "orders", "key": "region", "query": {"status": "open"}}, "IXSCAN { status: 1 }", 30, 30, 5, 102),
]
INDEXES = {
    "shop.orders": [{"key": {"_id": 1}, "name": "_id_"}, {"key": {"status": 1}, "name": "status_1"},
                    {"key": {"customerId": 1, "status": 1, "createdAt": -1}, "name": "cust_status_created"},
                    {"key": {"createdAt": -1}, "name": "createdAt_-1"}],
    "shop.customers": [{"key": {"_id": 1}, "name": "_id_"}, {"key": {"email": 1}, "name": "email_1", "unique": True}],
    "shop.events": [{"key": {"_id": 1}, "name": "_id_"}, {"key": {"campaignId": 1}, "name": "campaignId_1"}],
}


def healthy_log(path: Path) -> Path:
    lines = []
    for repeat in range(30):
        for position, (command, plan, keys, docs, returned, millis) in enumerate(OPERATIONS):
            collection = next(iter(command.values()))
            attr = {"type": "command", "ns": f"shop.{collection}", "command": command, "planSummary": plan,
                    "keysExamined": keys, "docsExamined": docs, "nreturned": returned, "durationMillis": millis}
            stamp = START + timedelta(seconds=repeat * 60 + position * 7)
            lines.append(json_line(attr, ts=stamp.isoformat(timespec="milliseconds")))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_healthy_workload_gets_no_finding_and_every_shape_a_reason(tmp_path: Path) -> None:
    indexes = tmp_path / "indexes.json"
    indexes.write_text(json.dumps(INDEXES))
    report = analyze([str(healthy_log(tmp_path / "healthy.log"))], Settings(indexes=indexes, verbose=True))
    assert len(report.shapes) == len(OPERATIONS)
    assert report.findings == [] and report.suggested_indexes == []
    reasons = {skip.fingerprint: skip.reason for skip in report.skipped}
    assert {shape.fingerprint for shape in report.shapes} <= set(reasons)
    assert all(reason for reason in reasons.values())
