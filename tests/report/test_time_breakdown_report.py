"""Where the time went, in the reports: a line per top shape in the terminal, a stacked bar in HTML, per shape in
JSON, never a component the log did not give."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from idxadvisor.cli import run
from tests.conftest import FIXTURES_DIR

V8 = FIXTURES_DIR / "time" / "v8.0.log"


def report(capsys: pytest.CaptureFixture[str], *arguments: str) -> str:
    assert run(["analyze", str(V8), "--fail-on", "never", "--jobs", "1", *arguments]) == 0
    return capsys.readouterr().out


def test_the_terminal_says_where_each_top_shapes_time_went(capsys: pytest.CaptureFixture[str]) -> None:
    lines = [" ".join(line.split()) for line in report(capsys).splitlines()]
    assert "time: queued for execution 98% · working 1%" in lines
    assert "time: working 98% (reading from disk 90%) · 48.0 MB read from disk/execution" in lines
    assert "time: flow control 94% · working 6%" in lines


def test_the_json_report_gives_each_component_over_the_executions_that_logged_it(
        capsys: pytest.CaptureFixture[str]) -> None:
    shapes = {shape["shape"]: shape for shape in json.loads(report(capsys, "--format", "json"))["shapes"]}
    breakdown = shapes["find shop.orders {customerId: eq}"]["time_breakdown"]
    components = {component["name"]: component for component in breakdown["components"]}
    assert (breakdown["executions"], breakdown["waited_share"]) == (40, 0.9881)
    assert components["queued_ms"] == {"name": "queued_ms", "label": "queued for execution", "unit": "ms",
                                       "executions": 40, "total": 9960.0, "mean": 249.0, "p95": 249.0,
                                       "share": 0.9842}
    assert "disk_read_ms" not in components and "lock_wait_ms" not in components  # not logged: unknown


def test_the_html_report_draws_a_stacked_bar(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    report(capsys, "--format", "html", "-o", str(out))
    page = out.read_text(encoding="utf-8")
    assert ('<div class="time-bar" role="img" aria-label="queued for execution 98%, working 1%">'
            '<span class="seg seg-queued_ms" style="width:98.4%"') in page
    assert page.count('<figure class="time-breakdown">') == 4  # not the aggregation: it only works
