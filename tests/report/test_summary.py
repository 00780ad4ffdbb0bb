"""The report header: time span, data samples."""

from __future__ import annotations

import io
from datetime import timedelta, timezone
from pathlib import Path

from idxadvisor.report import render as render_report
from idxadvisor.api import analyze
from idxadvisor.config import Settings
from tests.helpers import json_line, slow_attr


def write_log(path: Path, *stamps: str) -> str:
    path.write_text("".join(json_line(slow_attr({"find": "orders", "filter": {"a": 1}}), ts=ts) + "\n"
                            for ts in stamps))
    return str(path)


def test_the_span_keeps_the_servers_offset_when_every_input_shares_it(tmp_path: Path) -> None:
    log = write_log(tmp_path / "a.log", "2026-04-16T17:00:00.000+05:30", "2026-04-16T18:00:00.000+05:30")
    summary = analyze([log], Settings()).summary
    assert summary.first_seen is not None and summary.last_seen is not None
    assert summary.first_seen.utcoffset() == timedelta(hours=5, minutes=30)
    assert (summary.first_seen.hour, summary.last_seen.hour) == (17, 18)


def test_the_span_is_in_utc_when_inputs_use_different_offsets(tmp_path: Path) -> None:
    india = write_log(tmp_path / "a.log", "2026-04-16T17:00:00.000+05:30")
    london = write_log(tmp_path / "b.log", "2026-04-16T10:00:00.000+00:00")
    summary = analyze([india, london], Settings()).summary
    assert summary.first_seen is not None and summary.last_seen is not None
    assert summary.first_seen.tzinfo == timezone.utc and summary.last_seen.tzinfo == timezone.utc
    assert (summary.first_seen.hour, summary.first_seen.minute, summary.last_seen.hour, summary.last_seen.minute) == (10, 0, 11, 30)


def test_unreadable_documents_of_a_data_sample_are_reported_not_dropped_silently(tmp_path: Path) -> None:
    log = tmp_path / "slow.log"
    log.write_text("".join(json_line(slow_attr({"find": "orders", "filter": {"a": 1, "b": 2}}, docsExamined=50_000,
                                                nreturned=1)) + "\n" for _ in range(5)))
    sample = tmp_path / "orders.json"
    sample.write_text('{"a": 1}\n{"a": {"$date": 1e400}}\n{"a": 2, "deep": ' + "[" * 150 + "]" * 150 + '}\n{"a": 3}\n')
    report = analyze([str(log)], Settings(data=[f"shop.orders={sample}"]))
    [read] = report.samples
    assert (read.ns, read.documents, read.documents_seen, read.problems) == ("shop.orders", 2, 2, 2)
    out = io.StringIO()
    render_report(report, out)
    assert "data: 1 sample, 2 documents; shop.orders: 2 unreadable documents skipped" in out.getvalue()
