"""No index is suggested for a shape whose time the server says is not work; the causes are named instead."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from idxadvisor.api import analyze
from idxadvisor.config import Settings
from tests.conftest import FIXTURES_DIR
from tests.helpers import json_line, slow_attr

START = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)


def scan_log(path: Path, **timing: object) -> Path:
    lines = []
    for run in range(30):
        attr = slow_attr({"find": "orders", "filter": {"region": "EU"}}, planSummary="COLLSCAN", docsExamined=800,
                         keysExamined=0, nreturned=2, durationMillis=300, **timing)
        lines.append(json_line(attr, ts=(START + timedelta(seconds=20 * run)).isoformat(timespec="milliseconds")))
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("timing", [{}, {"workingMillis": 290}])
def test_a_scan_whose_time_is_work_gets_an_index(tmp_path: Path, timing: dict) -> None:
    report = analyze([str(scan_log(tmp_path / "scan.log", **timing))], Settings(verbose=True))
    assert [index.key for index in report.suggested_indexes] == [[("region", 1)]]


def test_a_scan_whose_time_is_queueing_gets_no_index_and_the_cause(tmp_path: Path) -> None:
    queued = {"workingMillis": 12, "queues": {"execution": {"admissions": 1, "totalTimeQueuedMicros": 285_000}}}
    report = analyze([str(scan_log(tmp_path / "scan.log", **queued))], Settings(verbose=True))
    assert report.suggested_indexes == []
    assert [finding.rule for finding in report.findings] == ["TM003"]
    [skip] = report.skipped
    assert skip.reason.startswith("its time is not work (queued for execution 95%")


@pytest.mark.corpus
def test_the_keyhole_4_0_log_names_the_write_conflicts_of_its_unbounded_deletes(corpus_dir: Path) -> None:
    report = analyze([str(corpus_dir / "keyhole" / "mongod.log")], Settings(jobs=1))
    [finding] = [finding for finding in report.findings if finding.rule == "TM001"]
    assert finding.message.startswith("delete _KEYHOLE_88800.examples {} hit 7.7M write conflicts in 10 executions")
    assert any("drop() it" in detail for detail in finding.details)


@pytest.mark.parametrize(("log", "causes"), [
    ("v8.0.log", {("TM003", "shop.orders"), ("TM004", "shop.products"), ("TM006", "shop.sessions"),
                  ("TM007", "shop.events")}),
    ("v6.0.log", {("TM002", "shop.audit"), ("TM002", "hr.employees"), ("TM005", "shop.orders")}),
    ("v4.0.log", {("TM001", "app.examples"), ("TM005", "app.orders")}),
    ("healthy.log", set()),
])
def test_each_versions_log_names_each_cause_on_its_shape_and_suggests_no_index(log: str, causes: set) -> None:
    report = analyze([str(FIXTURES_DIR / "time" / log)], Settings(jobs=1))
    assert {(finding.rule, finding.ns) for finding in report.findings} == causes
    assert report.suggested_indexes == []
