"""The verdict line: every text and Markdown report ends with the exit status and why, and the command exits with
that status; a closed output pipe ends the run quietly with 141, never with the findings code."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from idxadvisor.cli import run

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "fixtures" / "demo"


def last_line(capsys: pytest.CaptureFixture[str]) -> str:
    return capsys.readouterr().out.rstrip("\n").rsplit("\n", 1)[-1]


@pytest.mark.parametrize(("options", "code", "line"), [
    ([], 1, "exit 1: 16 findings at or above warning (--fail-on warning)"),
    (["--fail-on", "error"], 1, "exit 1: 1 finding at or above error (--fail-on error)"),
    (["--fail-on", "never"], 0, "exit 0: --fail-on never, whatever the findings"),
    (["--select", "QY007", "--fail-on", "error"], 0, "exit 0: no finding at or above error (--fail-on error); 1 "
                                                     "below it"),
])
def test_the_text_report_ends_with_the_exit_status_and_why(capsys: pytest.CaptureFixture[str], options: list[str],
                                                           code: int, line: str) -> None:
    assert run(["analyze", str(DEMO / "shop.log"), "--jobs", "1", *options]) == code
    assert last_line(capsys) == line


def test_the_markdown_report_ends_with_it_too(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["analyze", str(DEMO / "shop.log"), "--jobs", "1", "-f", "markdown", "--fail-on", "error"]) == 1
    assert last_line(capsys) == "exit 1: 1 finding at or above error (`--fail-on error`)"


def test_check_says_which_findings_count(capsys: pytest.CaptureFixture[str]) -> None:
    arguments = ["check", "--workload", str(DEMO / "shop.log"), "--baseline-indexes", str(DEMO / "indexes.json"),
                 "--indexes", str(DEMO / "migrations"), "--jobs", "1"]
    assert run(arguments) == 1
    assert last_line(capsys) == "exit 1: 3 findings that count at or above error (--fail-on error)"
    assert run([*arguments, "-f", "markdown"]) == 1
    assert last_line(capsys) == "exit 1: 3 findings that count at or above error (`--fail-on error`)"


def test_compare_ends_with_its_exit_status(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["compare", str(DEMO / "shop.log"), str(DEMO / "shop.log"), "--jobs", "1"]) == 0
    assert last_line(capsys) == "exit 0: no shape regressed (mean or p95 up more than 20%, --regression-pct)"


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_closed_pipe_ends_quietly_with_141(fmt: str) -> None:
    reader_gone = subprocess.Popen([sys.executable, "-m", "idxadvisor", "analyze", str(DEMO / "shop.log"), "-f", fmt],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    assert reader_gone.stdout is not None and reader_gone.stderr is not None
    reader_gone.stdout.close()  # as `| head` does once it has its lines, before the report is written
    err = reader_gone.stderr.read()
    assert reader_gone.wait(timeout=120) == 141 and err == b""
