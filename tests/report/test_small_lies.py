"""What the reports say is what happened: --show-values shows values in text and Markdown too, a sort that spilled
to disk is counted whatever field the server wrote it in, and counts agree with their nouns."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from idxadvisor.api import analyze
from idxadvisor.cli import run
from idxadvisor.config import Settings
from idxadvisor.units import counted
from tests.helpers import json_line, slow_attr

DEMO = Path(__file__).resolve().parents[2] / "fixtures" / "demo"


@pytest.mark.parametrize("fmt", ["text", "markdown"])
def test_show_values_shows_the_literal_values_in_text_and_markdown(capsys: pytest.CaptureFixture[str],
                                                                   fmt: str) -> None:
    arguments = ["analyze", str(DEMO / "shop.log"), "--data", str(DEMO / "data"), "--jobs", "1", "-f", fmt,
                 "--fail-on", "never"]
    assert run(arguments) == 0
    hidden = capsys.readouterr().out
    assert run([*arguments, "--show-values"]) == 0
    shown = capsys.readouterr().out
    assert '"lastName": "Berg"' not in hidden and "SKU-30331" not in hidden
    assert '"filter": {"lastName": "Berg", "city": "Malmo"}' in shown  # the estimator's query, as JSON has it
    assert '"filter": {"sku": "SKU-30331"}' in shown  # a shape's example command


def log_of(tmp_path: Path, *attrs: dict) -> Path:
    path = tmp_path / "mongod.log"
    path.write_text("".join(json_line(attr) + "\n" for attr in attrs))
    return path


@pytest.mark.parametrize("spill", [{"sortSpills": 2, "sortSpilledBytes": 104_857_600}, {"sortSpilledBytes": 5},
                                   {"groupSpills": 1}, {"usedDisk": True}])
def test_a_spill_counts_whatever_field_the_server_wrote(tmp_path: Path, spill: dict) -> None:
    command = {"find": "orders", "filter": {"status": "A"}, "sort": {"createdAt": -1}}
    path = log_of(tmp_path, slow_attr(command, hasSortStage=True, **spill),
                  slow_attr(command, hasSortStage=True, sortSpills=0))
    [shape] = analyze([str(path)], Settings(jobs=1, min_count=1)).shapes
    assert (shape.count, shape.blocking_sorts, shape.used_disk) == (2, 2, 1)


def test_the_text_report_mentions_the_spill(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    command = {"find": "orders", "filter": {"status": "A"}, "sort": {"createdAt": -1}}
    path = log_of(tmp_path, *[slow_attr(command, hasSortStage=True, sortSpills=1)] * 2,
                  slow_attr(command, hasSortStage=True))
    assert run(["analyze", str(path), "--jobs", "1", "--fail-on", "never"]) == 0
    assert "spilled to disk 66%" in capsys.readouterr().out
    assert run(["analyze", str(path), "--jobs", "1", "--fail-on", "never", "-f", "markdown"]) == 0
    assert "100%; spilled to disk 66%" in capsys.readouterr().out


def test_counts_agree_with_their_nouns(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert (counted(1, "time"), counted(2, "time"), counted(1_204, "line")) == ("1 time", "2 times", "1,204 lines")
    path = log_of(tmp_path, slow_attr({"find": "orders", "filter": {"status": "A"}}))
    assert run(["analyze", str(path), "--jobs", "1", "--fail-on", "never"]) == 0
    assert "1 input, 1 line, 1 slow-operation entry, 1 operation\n" in capsys.readouterr().out


def test_a_finding_about_one_execution_says_one_execution(tmp_path: Path) -> None:
    path = log_of(tmp_path, slow_attr({"find": "orders", "filter": {"status": "A", "region": "EU"}},
                                      docsExamined=200_000, nreturned=1))
    findings = analyze([str(path)], Settings(jobs=1, min_count=1)).findings
    assert findings and all("1 executions" not in finding.message for finding in findings)
    assert any(finding.message.endswith(", 1 execution.") for finding in findings)


def test_sarif_points_at_repository_relative_paths_for_compare_and_analyze(capsys: pytest.CaptureFixture[str],
                                                                         tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    for name, duration in (("before.log", 10), ("after.log", 900)):
        (logs / name).write_text("".join(
            json_line(slow_attr({"find": "orders", "filter": {"a": n}}, durationMillis=duration, docsExamined=200_000),
                      ts=f"2025-08-18T19:{n:02d}:11.772+00:00") + "\n" for n in range(30)))
    monkeypatch.chdir(tmp_path)  # the repository root, as in CI; the files named by absolute paths
    assert run(["compare", str(logs / "before.log"), str(logs / "after.log"), "-f", "sarif", "--jobs", "1"]) == 1
    [result] = json.loads(capsys.readouterr().out)["runs"][0]["results"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "logs/after.log"
    run(["analyze", str(logs / "after.log"), "-f", "sarif", "--jobs", "1", "--min-count", "1"])
    uris = {location["physicalLocation"]["artifactLocation"]["uri"]
            for result in json.loads(capsys.readouterr().out)["runs"][0]["results"] for location in result["locations"]}
    assert uris == {"logs/after.log"}


def test_show_values_shows_the_literal_values_in_html_escaped(tmp_path: Path) -> None:
    import html

    pages = {}
    for shown in (False, True):
        output = tmp_path / f"report-{shown}.html"
        arguments = ["analyze", str(DEMO / "shop.log"), "--data", str(DEMO / "data"), "--jobs", "1", "-f", "html",
                     "--fail-on", "never", "-o", str(output)]
        assert run([*arguments, "--show-values"] if shown else arguments) == 0
        pages[shown] = output.read_text(encoding="utf-8")
    assert "Berg" not in pages[False] and "SKU-30331" not in pages[False]
    assert html.escape('"lastName": "Berg"') in pages[True]  # the estimator's query, as JSON has it
    assert html.escape('"sku": "SKU-30331"') in pages[True]  # a shape's example command
    assert '"sku": "SKU-30331"' not in pages[True]  # escaped, never raw markup
