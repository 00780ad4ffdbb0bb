"""The HTML report as text: sections, escaping, the charts' rows, and the missing-extra error (the browser tests in
test_html_browser.py check what the page draws)."""

from __future__ import annotations

import html
import io
import json
import re
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from idxadvisor.cli import run
from idxadvisor.errors import UsageError
from idxadvisor.models.report import FindingGroup, Report, RunReport, ShapeReport, TimelinePoint
from idxadvisor.report import charts, render
from idxadvisor.report.html import MISSING_EXTRA, json_for_script
from tests.conftest import FIXTURES_DIR
from tests.report.workloads import HOSTILE_FIELD, HOSTILE_NS, HOSTILE_PLAN, HOSTILE_VALUE, hostile_log

T0 = datetime(2026, 3, 2, 8, 0, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def demo() -> Report:
    return Report.model_validate_json((FIXTURES_DIR / "reports" / "demo.json").read_text(encoding="utf-8"))


def page_of(report: Report, verbose: bool = False) -> str:
    out = io.StringIO()
    render(report, out, format="html", verbose=verbose)
    return out.getvalue()


def chart_data(page: str) -> dict:
    match = re.search(r'<script type="application/json" id="idxadvisor-charts">(.*?)</script>', page, re.S)
    assert match is not None
    return json.loads(match.group(1))


def test_every_section_and_a_placeholder_for_every_chart(demo: Report) -> None:
    page = page_of(demo)
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    for anchor in ("summary", "indexes", "findings", "shapes", "scatter", "details"):
        assert f'<section id="{anchor}">' in page
    assert '<section id="skipped">' not in page  # --verbose only, as in the other formats
    data = chart_data(page)
    placeholders = re.findall(r'<figure class="chart chart-(\w+)" data-chart="(c\d+)"', page)
    assert sorted(chart_id for _, chart_id in placeholders) == sorted(data["charts"])
    kinds = [kind for kind, _ in placeholders]
    assert kinds.count("timeline") == kinds.count("latency") == len(demo.shapes)
    assert kinds.count("runs") == sum(len(shape.runs) >= 2 for shape in demo.shapes) == 1
    assert kinds.count("scatter") == 1
    assert kinds.count("evidence") == len(demo.suggested_indexes)  # every demo suggestion has evidence
    assert set(data["specs"]) == set(charts.SPECS) and data["fields"] == charts.FIELDS


def test_no_request_is_possible_and_nothing_is_loaded_from_elsewhere(demo: Report) -> None:
    page = page_of(demo)
    policy = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', page)
    assert policy is not None and html.unescape(policy.group(1)).startswith("default-src 'none'; ")
    markup = re.sub(r"<script\b[^>]*>.*?</script>", "", page, flags=re.S)
    assert not re.search(r'\s(?:src|href)="(?!#)', markup)  # no attribute loads anything: only in-page anchors
    assert '<a href="#shape-' in markup
    assert len(re.findall(r"<script\b", page)) == 3 and len(re.findall(r"</script", page, re.I)) == 3


def test_the_header_says_what_the_terminal_says(demo: Report) -> None:
    page = page_of(demo)
    summary = demo.summary
    assert (f"1 input, {summary.lines:,} lines, {summary.entries:,} slow-operation entries, "
            f"{summary.operations:,} operations, {summary.shapes} query shapes") in page
    assert "2026-11-02 09:00:02+00:00 → 2026-11-02 09:30:21+00:00" in page
    assert "<dt>Server versions</dt><dd>8.0.12</dd>" in page
    assert "1 entry whose command the server truncated" in page
    assert "6 operations: internal traffic (shown with --include-internal)" in page
    assert f"{len(demo.samples)} samples, {sum(sample.documents for sample in demo.samples):,} documents" in page


def test_the_header_names_each_index_left_out_escaped(demo: Report) -> None:
    left_out = "--indexes <x>.json: shop.orders: index cs: unknown index direction 'columnstore' (left out)"
    page = page_of(demo.model_copy(update={"indexes_left_out": [left_out]}))
    assert f'<dt>Not read</dt><dd><span class="bad">{html.escape(left_out)}</span></dd>' in page
    assert "<dt>Not read</dt>" not in page_of(demo)


def test_index_commands_are_copyable_and_the_whole_set_too(demo: Report) -> None:
    page = page_of(demo)
    values = [html.unescape(value) for value in re.findall(r'data-copy="([^"]*)"', page)]
    for suggestion in demo.suggested_indexes:
        assert suggestion.command in values
    assert "\n".join(s.command for s in demo.suggested_indexes) in values


def test_verbose_adds_the_reasons_for_no_suggestion(demo: Report) -> None:
    page = page_of(demo, verbose=True)
    assert '<section id="skipped">' in page
    assert "served by the index its plan uses, { email: 1 }" in page


def test_hostile_names_are_escaped_everywhere(tmp_path: Path) -> None:
    output = tmp_path / "report.html"
    code = run(["analyze", str(hostile_log(tmp_path / "hostile.log")), "--show-values", "--format", "html",
                "-o", str(output), "--fail-on", "never"])
    page = output.read_text(encoding="utf-8")
    assert code == 0
    for raw in (HOSTILE_NS, HOSTILE_FIELD, HOSTILE_PLAN, HOSTILE_VALUE, "<i>reporting</i>"):
        assert raw not in page
    assert "<!--" not in page and len(re.findall(r"<script\b", page, re.I)) == 3
    assert len(re.findall(r"</script", page, re.I)) == 3
    assert "shop.&lt;/script&gt;&lt;script&gt;window.pwned=1&lt;/script&gt;&lt;!--" in page
    assert html.escape(HOSTILE_VALUE) in page  # the example command, shown with --show-values
    assert any(HOSTILE_NS == row[4] for chart in chart_data(page)["charts"].values() for row in chart["rows"]
               if chart["kind"] == "scatter")


def test_json_in_a_script_cannot_close_it() -> None:
    text = json_for_script({"a": "</script><!-- & \u2028"})
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == {"a": "</script><!-- & \u2028"}


def test_findings_follow_the_reports_groups(demo: Report) -> None:
    first, second = demo.findings[0], demo.findings[1]
    groups = [FindingGroup(id="g2", title="the second root cause", ns=second.ns, fingerprint=second.fingerprint,
                           severity=second.severity, findings=[1]),
              FindingGroup(id="g1", title="the first root cause", ns=first.ns, fingerprint=None,
                           severity=first.severity, findings=[0, 2])]
    page = page_of(demo.model_copy(update={"groups": groups}))
    findings = page[page.index('<section id="findings">'):page.index('<section id="shapes">')]
    assert findings.index("the second root cause") < findings.index("the first root cause")
    assert findings.count('<details class="group') == 2
    assert f"{len(demo.findings)} findings with 2 root causes" in findings


def test_without_groups_findings_are_grouped_by_shape(demo: Report) -> None:
    assert demo.groups  # the demo's own grouping is the other test's; here a report from before groups existed
    page = page_of(demo.model_copy(update={"groups": []}))
    findings = page[page.index('<section id="findings">'):page.index('<section id="shapes">')]
    shapes_with_findings = {finding.fingerprint for finding in demo.findings}
    assert findings.count('<details class="group') == len(shapes_with_findings) > 1
    assert f"{len(demo.findings)} findings with {len(shapes_with_findings)} root causes" in findings


def test_without_the_extra_html_is_one_error_line_before_any_input_is_read(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path, demo: Report) -> None:
    monkeypatch.setitem(sys.modules, "vl_convert", None)  # import vl_convert raises ImportError
    code = run(["analyze", str(tmp_path / "missing.log"), "--format", "html"])
    assert code == 2
    assert capsys.readouterr().err == f"idxadvisor: error: {MISSING_EXTRA}\n"
    assert "pip install 'idxadvisor[html]'" in MISSING_EXTRA
    with pytest.raises(UsageError, match=re.escape(MISSING_EXTRA)):
        page_of(demo)


def test_the_cli_writes_the_page_and_keeps_its_exit_code(tmp_path: Path) -> None:
    output = tmp_path / "demo.html"
    code = run(["analyze", str(FIXTURES_DIR / "demo" / "shop.log"), "--indexes",
                str(FIXTURES_DIR / "demo" / "indexes.json"), "-f", "html", "-o", str(output)])
    assert code == 1  # findings at warning level, as in every format
    assert output.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


# -- the rows of each chart -------------------------------------------------------------------------------------


def shape_with(**fields) -> ShapeReport:
    base = dict(fingerprint="f", ns="db.c", op="find", shape="find db.c {a: eq}", count=10,
                duration_ms={"total": 100, "mean": 10, "p50": 8, "p95": 20, "p99": 30, "max": 31},
                keys_examined=0, docs_examined=100, nreturned=10)
    return ShapeReport.model_validate({**base, **fields})


def test_a_long_timeline_is_drawn_with_wider_buckets_keeping_every_execution() -> None:
    points = [TimelinePoint(start=T0 + timedelta(minutes=minute), count=minute % 5 + 1, total_ms=10.0,
                            max_ms=float(minute), p95_ms=float(minute % 50)) for minute in range(0, 1000, 2)]
    chart = charts.timeline_chart(shape_with(timeline=points))
    assert chart is not None and len(chart.rows) <= charts.MAX_TIMELINE_BARS
    assert sum(row[2] for row in chart.rows) == sum(point.count for point in points)
    assert max(row[3] for row in chart.rows) == 48 and "per 5 minutes" in chart.note  # the highest p95 drawn
    starts = [row[0] for row in chart.rows]
    assert all(later - earlier == 5 * 60_000 for earlier, later in zip(starts, starts[1:]))


def test_a_short_timeline_is_drawn_as_it_is() -> None:
    points = [TimelinePoint(start=T0 + timedelta(minutes=minute), count=2, total_ms=10.0, max_ms=9.0, p95_ms=8.0)
              for minute in (0, 1, 7)]
    chart = charts.timeline_chart(shape_with(timeline=points))
    assert chart is not None and chart.note == ""
    assert [row[:4] for row in chart.rows] == [
        [int(point.start.timestamp() * 1000), int(point.start.timestamp() * 1000) + 60_000, 2, 8.0]
        for point in points]


def test_latency_bars_span_their_bins_and_the_percentiles_are_rules() -> None:
    chart = charts.latency_chart(shape_with(duration_histogram=[(1.0, 2), (10.0, 3), (12.0, 1), (1280.0, 4)]))
    assert chart is not None
    bars = [row for row in chart.rows if row[4] is None]
    assert [(row[0], row[1], row[2]) for row in bars] == [(0.8, 1.0, 2), (8.0, 10.0, 3), (10.0, 12.0, 1),
                                                          (1024.0, 1280.0, 4)]
    assert [row[4] for row in chart.rows if row[4] is not None] == ["p50 8 ms", "p95 20 ms", "p99 30 ms"]


runs = st.lists(st.tuples(st.integers(min_value=0, max_value=3_600_000), st.integers(min_value=1, max_value=600_000)),
                min_size=2, max_size=60)


@given(runs)
def test_runs_pile_up_exactly_as_high_as_the_most_in_progress_at_once(intervals: list[tuple[int, int]]) -> None:
    shape = shape_with(op="aggregate", runs=[RunReport(start=T0 + timedelta(milliseconds=start), duration_ms=took)
                                             for start, took in intervals])
    chart = charts.runs_chart(shape)
    assert chart is not None and len(chart.rows) == len(intervals)
    events = sorted([(start, 1) for start, took in intervals] + [(start + took, -1) for start, took in intervals])
    most = running = 0
    for _, step in events:  # an end sorts before a start at the same instant: back to back is not at once
        running += step
        most = max(most, running)
    assert charts.most_at_once(chart) == most
    by_lane: dict[int, list[list]] = {}
    for row in chart.rows:
        by_lane.setdefault(row[2], []).append(row)
    for lane in by_lane.values():  # runs on one lane never overlap
        assert all(earlier[1] <= later[0] for earlier, later in zip(lane, lane[1:]))


def test_the_scatter_has_a_point_per_shape_that_ran() -> None:
    shapes = [shape_with(fingerprint="a", count=4, docs_examined=400, nreturned=8, docs_examined_per_returned=50.0),
              shape_with(fingerprint="b", count=0, docs_examined=0, nreturned=0)]
    chart = charts.scatter_chart(shapes, {"a": "shape-a"})
    assert chart is not None and chart.rows == [[2.0, 100.0, 4, "find", "db.c", "find db.c {a: eq}", "50.0",
                                                 "shape-a"]]


def test_passwords_in_input_paths_are_masked(demo: Report) -> None:
    item = demo.inputs[0].model_copy(update={"path": "https://u:hunter2@example.com/x.log"})
    page = page_of(demo.model_copy(update={"inputs": [item]}))
    assert "hunter2" not in page and "https://u:****@example.com/x.log" in page


def test_an_empty_report_is_a_page_without_charts(tmp_path: Path) -> None:
    empty = tmp_path / "empty.log"
    empty.write_text('{"t":{"$date":"2026-11-02T09:00:02.000+00:00"},"s":"I","c":"NETWORK","id":22943,'
                     '"ctx":"listener","msg":"Connection accepted","attr":{}}\n')  # a log, without slow operations
    output = tmp_path / "empty.html"
    assert run(["analyze", str(empty), "-f", "html", "-o", str(output)]) == 0
    page = output.read_text(encoding="utf-8")
    assert "No slow operations in scope." in page and "No findings." in page
    assert chart_data(page)["charts"] == {} and "<figure" not in page


def _replayed(demo: Report) -> Report:
    """The demo report as a replay on a server would leave it: server evidence beside the estimator's, one counter
    in disagreement, and the server section."""
    from idxadvisor.models.report import CalibrationRow, CalibrationSummary, ScratchReport, ServerReport

    finding = next(finding for finding in demo.findings if finding.evidence is not None)
    estimate = finding.evidence
    rows = [CalibrationRow(plan="before", counter="totalKeysExamined", server=120, estimator=120, agree=True),
            CalibrationRow(plan="after", counter="totalDocsExamined", server=40, estimator=33, agree=False)]
    measured = estimate.model_copy(update={"evaluator": "server", "estimate": estimate, "calibration": rows})
    findings = [finding.model_copy(update={"evidence": measured}) if item is finding else item
                for item in demo.findings]
    server = ServerReport(server="db1.example.com:27017", version="8.0.4", databases=["shop"], profile_documents=812,
                          missing=["$indexStats: not authorized on shop"],
                          scratch=ScratchReport(server="scratch:27017", database="idxadvisor_scratch_1a2b",
                                                collections=2, documents=20_000, indexes=7, dropped=True),
                          calibration=CalibrationSummary(findings=1, counters=2, agreeing=1,
                                                         disagreements=["IX001 shop.orders after totalDocsExamined: "
                                                                        "40 vs 33"]))
    return demo.model_copy(update={"findings": findings, "server": server})


def test_a_replay_shows_the_server_section_and_the_calibration_table(demo: Report) -> None:
    page = page_of(_replayed(demo))
    assert '<section id="server">' in page and "db1.example.com:27017 (8.0.4)" in page
    assert "idxadvisor_scratch_1a2b" in page and "$indexStats: not authorized on shop" in page
    table = re.search(r'<table class="calibration">.*?</table>', page, re.S)
    assert table is not None and "1 of 2 counters agree" in table.group(0)
    assert table.group(0).count('<tr class="bad">') == 1 and "measured on a server" in page


def test_a_check_report_shows_its_verdict_and_where_each_change_is(tmp_path: Path) -> None:
    out = tmp_path / "check.html"
    demo = FIXTURES_DIR / "demo"
    code = run(["check", "--workload", str(demo / "shop.log"), "--baseline-indexes", str(demo / "indexes.json"),
                "--indexes", str(demo / "migrations"), "--format", "html", "-o", str(out), "--jobs", "1"])
    page = out.read_text(encoding="utf-8")
    assert code == 1 and '<section id="gate">' in page and "FAIL: " in page
    changes = re.search(r'<table class="changes">.*?</table>', page, re.S)
    assert changes is not None and changes.group(0).count("<tr>") == 5  # the heading and four changes
    assert "20261103-indexes.js:8:1" in changes.group(0)
    assert '<span class="status status-new">new</span>' in page


def test_the_logs_index_inventory_and_traffic_have_their_place(demo: Report) -> None:
    from idxadvisor.models.report import InventoryIndexReport, TrafficReport

    report = demo.model_copy(update={
        "index_inventory": [InventoryIndexReport(ns="shop.orders", name="status_1", key=[("status", 1)],
                                                 sources=["plan summaries"], plan_shapes=4)],
        "traffic": [TrafficReport(kind="application", operations=1200, apps={"shop-api": 1200}),
                    TrafficReport(kind="interactive tool", operations=4, apps={"MongoDB Compass": 4})]})
    page = page_of(report)
    assert "Indexes the log shows (no --indexes or --uri): 1 on 1 collection" in page
    assert "shop.orders status_1 { status: 1 }: plan summaries (4 shapes)" in page
    assert "applications 1,200 (shop-api) · interactive tools 4 (MongoDB Compass)" in page
    assert "Indexes the log shows" not in page_of(demo)  # an index file was given: no inventory of the log's
