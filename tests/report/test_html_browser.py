"""The HTML report in a real headless Chromium: every chart draws its marks, the page asks for nothing and logs
nothing, escaping holds, the table sorts and filters, commands copy, and a 2,000-shape page works.

The browser and its contexts are conftest.py's.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from idxadvisor.api import analyze
from idxadvisor.config import Settings
from idxadvisor.models.report import Report
from idxadvisor.report import render
from idxadvisor.report.html import shape_anchor
from tests.conftest import FIXTURES_DIR
from tests.report.browser import Visit, open_report
from tests.report.workloads import HOSTILE_FIELD, HOSTILE_NS, HOSTILE_PLAN, HOSTILE_VALUE, hostile_log, many_shapes_log

LARGE = 2050  # shapes in the large workload: the page shows the top 2,000


def write_page(report: Report, path: Path, verbose: bool = False) -> Path:
    out = io.StringIO()
    render(report, out, format="html", verbose=verbose)
    path.write_text(out.getvalue(), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Report, Path]:
    demo_dir = FIXTURES_DIR / "demo"
    settings = Settings(format="html", indexes=demo_dir / "indexes.json", data=[str(demo_dir / "data")], jobs=1)
    report = analyze([str(demo_dir / "shop.log")], settings)
    return report, write_page(report, tmp_path_factory.mktemp("demo") / "demo.html")


@pytest.fixture(scope="module")
def large(tmp_path_factory: pytest.TempPathFactory) -> tuple[Report, Path]:
    folder = tmp_path_factory.mktemp("large")
    report = analyze([str(many_shapes_log(folder / "many.log", LARGE))], Settings(format="html", jobs=1))
    return report, write_page(report, folder / "large.html")


def expected_marks(report: Report) -> dict[tuple[str, str | None], list[dict[str, int]]]:
    """What each chart must draw, worked out from the report itself: by (kind, shape anchor)."""
    expected: dict[tuple[str, str | None], list[dict[str, int]]] = {}
    for shape in report.shapes:
        anchor = shape_anchor(shape.fingerprint)
        bars = len(shape.timeline)  # below 240 buckets, one bar per bucket
        expected[("timeline", anchor)] = [{"timeline-executions": bars, "timeline-p95": 1, "timeline-p95-points": bars}]
        expected[("latency", anchor)] = [{"latency-bins": len(shape.duration_histogram), "latency-percentiles": 3}]
        if len(shape.runs) >= 2:
            expected[("runs", anchor)] = [{"runs": len(shape.runs)}]
    expected[("scatter", None)] = [{"scatter-diagonal": 1,
                                    "scatter-shapes": sum(1 for shape in report.shapes if shape.count)}]
    evidence = []
    for suggestion in report.suggested_indexes:
        with_evidence = sum(1 for finding in report.findings
                            if finding.evidence is not None and finding.index is not None
                            and not finding.index.name and finding.index.ns == suggestion.ns
                            and [tuple(pair) for pair in finding.index.key] == [tuple(p) for p in suggestion.key])
        if with_evidence:
            evidence.append({"evidence-bars": 4 * with_evidence})  # keys and documents, today and with the index
    expected[("evidence", None)] = evidence
    return expected


def drawn_marks(visit: Visit) -> dict[tuple[str, str | None], list[dict[str, int]]]:
    drawn: dict[tuple[str, str | None], list[dict[str, int]]] = {}
    for figure in visit.figures():
        assert figure["state"] == "drawn", figure
        drawn.setdefault((figure["kind"], figure["details"]), []).append(figure["marks"])
    return drawn


def assert_quiet(visit: Visit, page: Path) -> None:
    assert visit.complaints() == []
    assert set(visit.requests) <= {page.resolve().as_uri()}


def open_every_shape(visit: Visit) -> None:
    visit.page.evaluate("document.querySelectorAll('details.shape').forEach(details => { details.open = true; })")
    visit.wait_for_charts()


def test_every_chart_of_the_demo_draws_its_data_and_the_page_asks_for_nothing(
        context: Any, demo: tuple[Report, Path]) -> None:
    report, page = demo
    visit = open_report(context, page)
    closed = [figure for figure in visit.figures() if figure["state"] is None]
    assert {figure["kind"] for figure in closed} == {"timeline", "latency"}  # shapes 6..15: drawn when opened
    open_every_shape(visit)
    assert drawn_marks(visit) == expected_marks(report)
    assert expected_marks(report)[("evidence", None)] and any(kind == "runs" for kind, _ in expected_marks(report))
    assert_quiet(visit, page)


def test_the_recorders_catch_a_request_and_an_error(context: Any, demo: tuple[Report, Path]) -> None:
    """The assertions above could fail: a request the page makes and an error it throws are both seen."""
    _, page = demo
    visit = open_report(context, page)
    visit.page.evaluate("fetch('http://127.0.0.1:9/x').catch(() => {}); setTimeout(() => { throw new Error('boom'); })")
    visit.page.wait_for_timeout(200)
    complaints = visit.complaints()
    assert any("connect-src" in item or "127.0.0.1" in item for item in complaints)
    assert any("boom" in item for item in complaints)


def test_the_shape_table_sorts_and_filters(context: Any, demo: tuple[Report, Path]) -> None:
    report, page = demo
    visit = open_report(context, page)

    def column(index: int) -> list[str]:
        return visit.page.eval_on_selector_all(
            "#shapes-table tbody tr:not([hidden])", f"rows => rows.map(row => row.cells[{index}].dataset.v ?? "
            f"row.cells[{index}].textContent)")

    visit.page.click("#shapes-table th:nth-child(5) button")  # count: the largest first
    counts = [float(value) for value in column(4)]
    assert counts == sorted(counts, reverse=True) == sorted((s.count for s in report.shapes), reverse=True)
    visit.page.click("#shapes-table th:nth-child(5) button")
    assert [float(value) for value in column(4)] == sorted(counts)
    visit.page.click("#shapes-table th:nth-child(3) button")  # namespace: alphabetical first
    assert column(2) == sorted(s.ns for s in report.shapes)
    assert visit.page.get_attribute("#shapes-table th:nth-child(3)", "aria-sort") == "ascending"

    visit.page.fill("#shapes-filter", "customers")
    assert column(2) == ["shop.customers"] * sum(s.ns == "shop.customers" for s in report.shapes)
    assert visit.page.text_content("#shapes-count") == f"{len(column(2))} of {len(report.shapes)} shapes"
    visit.page.fill("#shapes-filter", "")
    visit.page.check("#shapes-flagged")
    shapes = {shape.fingerprint for shape in report.shapes}  # findings about an index have no shape
    assert len(column(0)) == len({finding.fingerprint for finding in report.findings} & shapes)
    assert_quiet(visit, page)


def test_copy_buttons_copy_the_exact_commands(context: Any, demo: tuple[Report, Path]) -> None:
    report, page = demo
    visit = open_report(context, page)
    visit.page.click("#indexes ol.cards > li:first-child button.copy")
    visit.page.click("#indexes button:has-text('Copy all commands')")
    assert visit.page.evaluate("window.__copied") == [
        report.suggested_indexes[0].command, "\n".join(s.command for s in report.suggested_indexes)]
    assert visit.page.text_content("#indexes ol.cards > li:first-child button.copy") == "Copied"


def test_a_link_or_a_point_opens_the_shape_and_draws_its_charts(context: Any, demo: tuple[Report, Path]) -> None:
    report, page = demo
    visit = open_report(context, page)
    last = shape_anchor(report.shapes[-1].fingerprint)
    assert not visit.page.evaluate(f"document.getElementById('{last}').open")
    visit.page.click(f"#shapes-table a[href='#{last}']")
    # the page opens the shape on hashchange, which the browser fires after the click returns
    visit.page.wait_for_function(f"document.getElementById('{last}').open", timeout=10_000)
    visit.wait_for_charts()
    assert all(figure["state"] == "drawn" for figure in visit.figures() if figure["details"] == last)

    visit.page.evaluate("document.querySelectorAll('details.shape').forEach(d => { d.open = false; })")
    point = visit.page.locator("#scatter g.scatter_shapes_marks > path").first
    point.scroll_into_view_if_needed()
    box = visit.settled_box(point)  # closing every shape moved the scatter up the page
    visit.page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    visit.page.wait_for_function("location.hash.startsWith('#shape-') && "
                                 "document.getElementById(location.hash.slice(1)).open", timeout=10_000)
    visit.wait_for_charts()
    opened = visit.page.evaluate("location.hash.slice(1)")
    assert opened.startswith("shape-") and visit.page.evaluate(f"document.getElementById('{opened}').open")
    assert_quiet(visit, page)


def test_printing_hides_the_controls_and_keeps_the_charts(context: Any, demo: tuple[Report, Path]) -> None:
    _, page = demo
    visit = open_report(context, page)
    visit.page.emulate_media(media="print")
    assert not visit.page.is_visible("#shapes-filter") and not visit.page.is_visible("button.copy")
    assert visit.page.is_visible("#scatter svg") and visit.page.is_visible("details.shape[open] svg")
    assert len(visit.page.pdf()) > 50_000


def test_hostile_names_and_values_stay_text(context: Any, tmp_path: Path) -> None:
    settings = Settings(format="html", show_values=True, jobs=1)
    report = analyze([str(hostile_log(tmp_path / "hostile.log"))], settings)
    assert report.findings and report.shapes[0].example is not None
    page = write_page(report, tmp_path / "hostile.html", verbose=True)
    visit = open_report(context, page)
    open_every_shape(visit)
    assert visit.page.evaluate("window.pwned") is None
    assert visit.page.evaluate("document.querySelectorAll('img, b, i, svg[onload], script').length") == 3  # ours
    assert visit.page.text_content("#shapes-table tbody td:nth-child(3)") == HOSTILE_NS
    assert json.dumps(HOSTILE_FIELD) in visit.page.text_content("details.shape .shape-text")  # quoted in shapes
    assert HOSTILE_PLAN in visit.page.text_content("#shapes-table tbody td.plan")
    assert HOSTILE_VALUE in visit.page.text_content("details.shape")  # the example command (--show-values)
    assert visit.page.title().startswith("idxadvisor report: 1 shape, 1 finding")

    point = visit.page.locator("#scatter g.scatter_shapes_marks > path").first
    point.scroll_into_view_if_needed()
    box = visit.settled_box(point)  # every shape was opened above: the page may still be laying out
    visit.page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    tooltip = visit.page.wait_for_selector("#vg-tooltip-element", state="visible")
    assert HOSTILE_NS in tooltip.text_content()
    assert tooltip.evaluate("element => element.querySelectorAll('img, script, svg, b').length") == 0

    visit.page.click("#indexes ol.cards > li:first-child button.copy")
    assert visit.page.evaluate("window.__copied") == [report.suggested_indexes[0].command]
    assert json.dumps(HOSTILE_FIELD) in report.suggested_indexes[0].command
    assert visit.page.evaluate("window.pwned") is None
    assert_quiet(visit, page)


def test_a_page_of_2000_shapes_works(context: Any, large: tuple[Report, Path]) -> None:
    report, page = large
    assert len(report.shapes) == 2000 and report.summary.shapes == LARGE
    visit = open_report(context, page)
    assert visit.page.evaluate("document.querySelectorAll('#shapes-table tbody tr').length") == 2000
    assert "Top 2,000 of 2,050 query shapes" in visit.page.text_content("#shapes")
    figures = visit.figures()
    drawn = [figure for figure in figures if figure["state"] == "drawn"]
    scatter = next(figure for figure in drawn if figure["kind"] == "scatter")
    assert scatter["marks"] == {"scatter-diagonal": 1, "scatter-shapes": 2000}
    assert len(drawn) == 1 + 5 * 2 + sum(len(shape.runs) >= 2 for shape in report.shapes[:5])  # scatter, 5 open shapes

    expected = expected_marks(report)
    visit.page.fill("#shapes-filter", report.shapes[-1].shape.split(" ", 2)[2])  # each has a field of its own
    assert visit.page.text_content("#shapes-count").startswith("1 of 2,000")
    for shape in (report.shapes[-1], next(shape for shape in report.shapes if len(shape.runs) >= 2)):
        anchor = shape_anchor(shape.fingerprint)
        visit.page.evaluate(f"location.hash = '{anchor}'")
        visit.wait_for_charts()
        marks = {figure["kind"]: figure["marks"] for figure in visit.figures() if figure["details"] == anchor}
        assert marks == {kind: expected[(kind, key)][0] for kind, key in expected if key == anchor}

    visit.page.fill("#shapes-filter", "")
    visit.page.click("#shapes-table th:nth-child(8) button")  # p95 on 2,000 rows
    p95 = visit.page.eval_on_selector_all("#shapes-table tbody tr", "rows => rows.map(r => +r.cells[7].dataset.v)")
    assert len(p95) == 2000 and p95 == sorted(p95, reverse=True)
    assert_quiet(visit, page)


def test_an_empty_report_opens_cleanly(context: Any, tmp_path: Path) -> None:
    empty = tmp_path / "empty.log"
    empty.write_text('{"t":{"$date":"2026-11-02T09:00:02.000+00:00"},"s":"I","c":"NETWORK","id":22943,'
                     '"ctx":"listener","msg":"Connection accepted","attr":{}}\n')  # a log, without slow operations
    page = write_page(analyze([str(empty)], Settings(format="html", jobs=1)), tmp_path / "empty.html")
    visit = open_report(context, page)
    assert visit.figures() == [] and "No findings." in visit.page.text_content("#findings")
    assert_quiet(visit, page)


def test_a_replayed_report_with_its_server_section_opens_cleanly(context: Any, demo: tuple[Report, Path],
                                                                  tmp_path: Path) -> None:
    from tests.report.test_html import _replayed

    report, _ = demo
    page = write_page(_replayed(report), tmp_path / "replayed.html")
    visit = open_report(context, page)
    assert visit.page.locator("#server li").count() >= 3
    tables = visit.page.locator("table.calibration")  # under the suggested index and under its finding
    assert tables.count() == 2 and tables.first.locator("tbody tr").count() == 2
    assert_quiet(visit, page)
