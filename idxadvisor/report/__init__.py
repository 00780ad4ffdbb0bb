"""Reporters: one module per format, each with ``render(report, out, …)``; ``render`` below picks one.

The command line never assembles a format itself: it calls ``render`` with the format the user asked for. Renderers
are imported when used, so a JSON report never loads Rich.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, TextIO

from idxadvisor.runtime import collector_paused
from idxadvisor.units import mask_secrets

if TYPE_CHECKING:  # the report models (pydantic) load when a report is built, not when the command line starts
    from idxadvisor.models.report import Report

FORMATS = ("text", "json", "markdown", "sarif", "html")
DEFAULT_TOP_FOR_PEOPLE = 20
DEFAULT_TOP_FOR_HTML = 2000  # shapes on an HTML page (its table, scatter and details) unless --top says otherwise
REPORT_WIDTH = 100  # columns of the terminal report when it does not go to a terminal


def wants_colour(stream: TextIO) -> bool:
    """Colour (any escape code) only on a terminal, and only when NO_COLOR is unset."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and "NO_COLOR" not in os.environ


def masked(report: Report) -> Report:
    """The report with the passwords of URIs in input paths and errors masked, whichever format renders it."""
    inputs = [item.model_copy(update={"path": mask_secrets(item.path),
                                      "error": mask_secrets(item.error) if item.error else item.error})
              for item in report.inputs]
    return report.model_copy(update={"inputs": inputs})


def render(report: Report, out: TextIO, *, format: str = "text", verbose: bool = False, top: int | None = None,
           artifact: str | None = None, fail_on: str | None = None) -> None:
    """Write ``report`` to ``out`` in ``format``. ``top`` bounds what people read (text and Markdown list 20 findings
    by default; JSON and SARIF hold everything); ``artifact`` is the file SARIF results point at; with ``fail_on``,
    the text and Markdown reports end with the exit status and why (``build.exit_verdict``)."""
    with collector_paused():  # a report of 100,000 shapes: the collector walked its models again and again (a fifth)
        _render(masked(report), out, format, verbose, top or DEFAULT_TOP_FOR_PEOPLE, artifact, fail_on)


def _render(report: Report, out: TextIO, format: str, verbose: bool, limit: int, artifact: str | None,
            fail_on: str | None) -> None:
    verdict = None
    if fail_on is not None and format in ("text", "markdown"):
        from idxadvisor.report.build import exit_verdict

        verdict = exit_verdict(report, fail_on)
    if format == "json":
        from idxadvisor.report import json as json_report

        json_report.render(report, out)
    elif format == "markdown":
        from idxadvisor.report import markdown as markdown_report
        from idxadvisor.report.readable import readable

        markdown_report.render(readable(report), out, verbose=verbose, limit=limit, verdict=verdict)
    elif format == "sarif":
        from idxadvisor.report import sarif as sarif_report

        sarif_report.render(report, out, artifact)
    elif format == "html":
        from idxadvisor.report import html as html_report

        html_report.render(report, out, verbose=verbose)
    elif format == "text":
        from idxadvisor.report import terminal as terminal_report
        from idxadvisor.report.readable import readable

        terminal_report.render(readable(report), terminal_console(out), verbose=verbose, limit=limit,
                               verdict=verdict)
    else:
        raise ValueError(f"unknown report format {format!r}")


def check_available(format: str) -> None:
    """Raise the error ``render`` would raise for ``format`` if something it needs is not installed (the HTML
    report's charting library), so that the command line fails before reading any input."""
    if format == "html":
        from idxadvisor.report import html as html_report

        html_report.require_charting()


def terminal_console(out: TextIO):  # noqa: ANN201 - rich.console.Console, imported here to keep JSON runs light
    """A Rich console for ``out``: log text is never read as markup, colour only where ``wants_colour`` says."""
    from rich.console import Console

    isatty = getattr(out, "isatty", None)
    return Console(file=out, width=None if isatty and isatty() else REPORT_WIDTH, highlight=False, markup=False,
                   emoji=False, soft_wrap=False, color_system="auto" if wants_colour(out) else None)
