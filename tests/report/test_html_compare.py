"""``idxadvisor compare --format html`` in a real headless Chromium: the change chart draws one bar per shape it
shows, coloured by status; the table ranks, sorts and filters; hostile names stay text; the page asks for nothing."""

from __future__ import annotations

import io
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from idxadvisor.api import compare
from idxadvisor.cli import run
from idxadvisor.config import Settings
from idxadvisor.models.compare import Comparison
from idxadvisor.report import charts
from idxadvisor.report.comparison import render_comparison
from idxadvisor.report.html import MISSING_EXTRA
from tests.compare.test_compare import AFTER_FIND, BEFORE_FIND, DAY1, write_log
from tests.report.browser import open_report
from tests.report.workloads import HOSTILE_NS, hostile_log, many_shapes_log


def write_page(comparison: Comparison, path: Path, top: int | None = None) -> Path:
    out = io.StringIO()
    render_comparison(comparison, out, format="html", top=top)
    path.write_text(out.getvalue(), encoding="utf-8")
    return path


def quiet(visit: Any, page: Path) -> bool:
    return visit.complaints() == [] and set(visit.requests) <= {page.resolve().as_uri()}


def column(visit: Any, number: int) -> list[str]:
    return visit.page.eval_on_selector_all(f"#shapes-table tbody tr:not([hidden]) td:nth-child({number})",
                                           "cells => cells.map(cell => cell.textContent)")


def test_an_index_and_a_slower_report_show_as_an_improvement_and_a_regression(context: Any, tmp_path: Path) -> None:
    before = write_log(tmp_path / "before.log", DAY1, 1, BEFORE_FIND, report_ms=50)
    after = write_log(tmp_path / "after.log", DAY1 + timedelta(days=1), 1, AFTER_FIND, report_ms=90)
    page = tmp_path / "compare.html"
    assert run(["compare", str(before), str(after), "--format", "html", "-o", str(page)]) == 1  # a regression

    visit = open_report(context, page)
    [figure] = visit.figures()
    assert (figure["kind"], figure["state"], figure["marks"]) == ("change", "drawn", {"change-bars": 2})
    assert column(visit, 2) == ["improved", "regressed"]  # ranked by the size of the change: the index saved more
    assert visit.page.text_content("#verdict .lead").startswith("1 shape regressed")
    visit.page.check("#shapes-flagged")  # regressed only
    assert column(visit, 2) == ["regressed"]
    assert visit.page.text_content("#shapes-count") == "1 of 2 shapes"
    visit.page.uncheck("#shapes-flagged")
    visit.page.click("#shapes-table th:nth-child(3) button")  # time: the largest cost first
    assert column(visit, 2) == ["regressed", "improved"]
    assert quiet(visit, page)


def test_the_chart_shows_the_largest_changes_and_the_table_the_top_n(context: Any, tmp_path: Path) -> None:
    before = many_shapes_log(tmp_path / "before.log", 120, seed=1)
    after = many_shapes_log(tmp_path / "after.log", 120, seed=2)
    comparison = compare([str(before)], [str(after)], Settings(jobs=1))
    page = write_page(comparison, tmp_path / "compare.html", top=60)

    visit = open_report(context, page)
    [figure] = visit.figures()
    bars = sum(1 for change in comparison.shapes[:charts.MAX_CHANGE_BARS] if change.time_change_ms != 0)
    assert len(comparison.shapes) > 60 and bars > 30
    assert figure["marks"] == {"change-bars": bars}
    assert column(visit, 1) == [str(rank) for rank in range(1, 61)]
    assert column(visit, 2) == [change.status for change in comparison.shapes[:60]]
    assert visit.page.text_content("#changes p.note").startswith(f"{len(comparison.shapes) - 60} more shapes")
    assert quiet(visit, page)


def test_hostile_names_stay_text(context: Any, tmp_path: Path) -> None:
    before = hostile_log(tmp_path / "before.log")
    after = write_log(tmp_path / "after.log", DAY1, 1, AFTER_FIND, report_ms=50)
    comparison = compare([str(before)], [str(after)], Settings(jobs=1))
    page = write_page(comparison, tmp_path / "compare.html")

    visit = open_report(context, page)
    assert visit.page.evaluate("window.pwned") is None
    vanished = [cell for cell, status in zip(column(visit, 6), column(visit, 2)) if status == "vanished"]
    assert vanished == [change.shape for change in comparison.shapes if change.status == "vanished"]
    assert HOSTILE_NS in vanished[0] and "onerror" in vanished[0]  # shown as the text it is
    labels = visit.page.eval_on_selector_all("figure.chart-change svg text", "texts => texts.map(t => t.textContent)")
    assert any(label.startswith("#1 find " + HOSTILE_NS[:20]) for label in labels)
    assert quiet(visit, page)


def test_without_the_extra_compare_html_is_one_error_line_before_any_input_is_read(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "vl_convert", None)  # import vl_convert raises ImportError
    assert run(["compare", str(tmp_path / "a.log"), str(tmp_path / "b.log"), "--format", "html"]) == 2
    assert capsys.readouterr().err == f"idxadvisor: error: {MISSING_EXTRA}\n"
