"""Terminal output: colour only on a terminal without NO_COLOR, query text never read as markup, no wider than 100."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from idxadvisor.cli import common
from idxadvisor.report import render as render_report
from idxadvisor.api import analyze
from idxadvisor.config import Settings
from tests.helpers import json_line, slow_attr


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def tricky_log(tmp_path: Path) -> Path:
    """A collection and fields whose names look like Rich markup."""
    lines = [json_line(slow_attr({"find": "[bold]x[/bold]", "filter": {"[red]name": "[/]", "b": {"$gt": 1}}},
                                 ns="shop.[bold]x[/bold]", docsExamined=50000, nreturned=1)) for _ in range(5)]
    path = tmp_path / "tricky.log"
    path.write_text("\n".join(lines) + "\n")
    return path


def render(path: Path, out: io.StringIO) -> str:
    settings = Settings(verbose=True)
    render_report(analyze([str(path)], settings), out, verbose=True)
    return out.getvalue()


def test_markup_in_query_text_is_printed_literally(tricky_log: Path) -> None:
    text = render(tricky_log, io.StringIO())
    assert "find shop.[bold]x[/bold]" in text and '"[red]name": eq' in text
    assert 'createIndex({ "[red]name": 1, b: 1 })' in " ".join(text.split())


def test_colour_on_a_terminal_and_not_elsewhere(tricky_log: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    assert "\x1b[" in render(tricky_log, FakeTerminal())
    assert "\x1b[" not in render(tricky_log, io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b[" not in render(tricky_log, FakeTerminal())


def test_lines_fit_in_100_columns_when_not_a_terminal(tricky_log: Path) -> None:
    lines = render(tricky_log, io.StringIO()).splitlines()
    assert lines and max(map(len, lines)) <= 100


def test_no_progress_bar_when_stderr_is_not_a_terminal_or_the_input_is_small(monkeypatch: pytest.MonkeyPatch) -> None:
    bar = common.ProgressBar()
    bar.start(10 * common.PROGRESS_THRESHOLD)  # pytest's stderr is not a terminal
    assert bar._progress is None
    monkeypatch.setattr("sys.stderr", FakeTerminal())
    bar.start(common.PROGRESS_THRESHOLD - 1)
    assert bar._progress is None
    bar.start(common.PROGRESS_THRESHOLD)
    assert bar._progress is not None
    bar.advance(1000)
    bar.stop()


def test_shapes_without_a_query_are_counted_on_one_line_under_verbose(tmp_path: Path) -> None:
    lines = [json_line(slow_attr({"insert": "orders", "ordered": True}, ns=f"shop.orders{i}")) for i in range(3)]
    lines += [json_line(slow_attr({"createIndexes": "orders", "indexes": []}))]
    lines += [json_line(slow_attr({"find": "orders", "filter": {"a": 1}}))]
    log = tmp_path / "mixed.log"
    log.write_text("\n".join(lines) + "\n")
    text = " ".join(render(log, io.StringIO()).split())
    assert "insert (3 shapes), createIndexes (1 shape): no query an index could serve" in text
    assert "find shop.orders {a: eq} too few executions (1 < --min-count 3)" in text
    assert "insert shop.orders0" not in text.split("No suggestion for these shapes:")[1]


ESCAPES = "\x1b]0;pwned\x07\x1b[31mRED\x1b[0m\r\x9bX"  # a window title, a colour, a carriage return, a C1 CSI


@pytest.fixture
def escaping_log(tmp_path: Path) -> Path:
    """A collection, a field and an application whose names hold terminal control sequences."""
    lines = [json_line(slow_attr({"find": f"c{ESCAPES}", "filter": {f"a{ESCAPES}": "x", "b": {"$gt": 1}}},
                                 ns=f"shop.c{ESCAPES}", docsExamined=50000, nreturned=1, appName=ESCAPES),
                       ts=f"2025-08-18T19:33:1{second}.772+00:00") for second in range(5)]
    lines.append("not a log line \x1b]0;pwned\x07")  # a damaged line: the report keeps its excerpt
    path = tmp_path / "escaping.log"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("output_format", ["text", "markdown"])
def test_control_characters_from_the_log_are_shown_not_obeyed(escaping_log: Path, output_format: str) -> None:
    out = FakeTerminal()
    render_report(analyze([str(escaping_log)], Settings(verbose=True, min_count=1)), out, format=output_format,
                  verbose=True)
    printed = out.getvalue()
    shown = "shop.c\\x1b]0;pwned\\x07\\x1b[31mRED\\x1b[0m\\x0d\\x9bX"
    assert shown in (printed if output_format == "text" else printed.replace("\\\\", "\\"))  # Markdown doubles \\
    obeyed = {character for character in printed if ord(character) < 32 or 0x7f <= ord(character) <= 0x9f}
    assert obeyed <= {"\n", "\x1b"}  # Rich's own colour codes (on a terminal) and nothing else
    assert "\x1b]" not in printed and "\x1b[31mRED" not in printed


def test_the_json_report_keeps_the_names_as_they_were(escaping_log: Path) -> None:
    out = io.StringIO()
    render_report(analyze([str(escaping_log)], Settings(min_count=1)), out, format="json")
    report = json.loads(out.getvalue())
    assert report["shapes"][0]["ns"] == f"shop.c{ESCAPES}"


def test_an_estimator_refusal_reads_as_a_sentence_not_a_dictionary() -> None:
    from idxadvisor.report.server import plan_cost

    error = {"code": 171, "codeName": "CannotIndexParallelArrays", "message": "cannot index parallel arrays [sizes] [tags]"}
    assert plan_cost({"error": error, "index": "tags_sizes"}) == (
        "fails: index tags_sizes cannot be built: cannot index parallel arrays [sizes] [tags] "
        "(CannotIndexParallelArrays, code 171)")
    assert plan_cost({"error": error}) == (
        "fails: cannot index parallel arrays [sizes] [tags] (CannotIndexParallelArrays, code 171)")


@pytest.mark.parametrize("text", [
    "examines 1,234 documents per document returned", "  leading spaces stay", "a trailing space ", "tab\there",
    "new\nline", "wide — dash", "", "x" * 94, "x" * 95, "{ status: 1, createdAt: -1 }", "a\rb", "a\x0bb\x0cc",
])
@pytest.mark.parametrize("indent", [0, 6, 8])
def test_a_line_that_fits_is_indented_as_textwrap_would(text: str, indent: int) -> None:
    """The shortcut of ``_indented`` (one line of ASCII that fits) gives what ``textwrap.wrap`` gives."""
    import textwrap

    from idxadvisor.report.terminal import _indented

    prefix = " " * indent
    expected = textwrap.wrap(text, width=100, initial_indent=prefix, subsequent_indent=prefix + "  ",
                             break_long_words=True, break_on_hyphens=False)
    assert [line.plain for line in _indented(text, indent, 100)] == expected
