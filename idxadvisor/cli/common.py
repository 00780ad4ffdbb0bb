"""What several commands share: option panels and placeholders, the output file, progress, exit codes.

Help pages read like ruff's: each option says what it does and its default, with a placeholder naming the value
(``--top N``, ``--format FORMAT``); flags have none. Help text is Rich markup, so a literal ``[`` is written ``\\[``.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, TextIO

from idxadvisor.errors import UsageError
from idxadvisor.exitcodes import ExitCode
from idxadvisor.models.report import SEVERITY_ORDER, Report

# Help panels, in the order people look for them.
INPUT, FILTERING, RULES, EVIDENCE, SERVER, OUTPUT = "Input", "Filtering", "Rules", "Evidence", "Server", "Output"
FLAG = ""  # the placeholder of a flag: none (Typer would print <bool>)

PROGRESS_THRESHOLD = 64 * 1024 * 1024  # show a progress bar for inputs at least this large

# mongodb://… or mongodb+srv://… (a Path folds the // into one /), after an optional NS= of --data
SERVER_URI = re.compile(r"^(?:[^=/]*=)?mongodb(?:\+srv)?:/", re.IGNORECASE)


def refuse_server_uris(option: str, values: list[str], instead: str) -> None:
    """A server URI where a file is expected: one line saying what to write instead (the error boundary masks the
    password of the URI)."""
    for value in values:
        if SERVER_URI.match(value):
            raise UsageError(f"{option}{value}: a server is not a file here ({instead})")


AGE = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhdw])$")
AGE_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_time(value: str | None, option: str, now: datetime | None = None) -> datetime | None:
    """An ISO 8601 time, or an age before now: ``30m``, ``2h``, ``7d`` (s, m, h, d, w)."""
    if value is None:
        return None
    age = AGE.match(value.strip())
    if age:
        moment = now or datetime.now(timezone.utc)
        return moment - timedelta(**{AGE_UNITS[age.group(2)]: float(age.group(1))})
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00") if value.endswith("Z") else value)
    except ValueError:
        raise UsageError(f"{option}: '{value}' is not an ISO 8601 time (for example 2025-08-18T19:00) nor an age "
                         "(30m, 2h, 7d)") from None


@contextmanager
def output_stream(path: Path | None) -> Iterator[TextIO]:
    """stdout, or the ``--output`` file (a file that cannot be written is a usage error, before anything is read)."""
    if path is None:
        yield sys.stdout
        return
    try:
        handle = open(path, "w", encoding="utf-8")  # noqa: SIM115
    except OSError as exc:
        raise UsageError(f"--output: cannot write {path}: {exc.strerror or exc}") from None
    with handle:
        yield handle


def exit_code_for(report: Report, fail_on: str) -> ExitCode:
    """2 when an input could not be read; else 1 when a finding is at least as severe as ``fail_on``; else 0."""
    if any(item.error for item in report.inputs):
        return ExitCode.USAGE
    worst = report.max_severity()
    if fail_on == "never" or worst is None:
        return ExitCode.OK
    return ExitCode.FINDINGS if SEVERITY_ORDER[worst] >= SEVERITY_ORDER[fail_on] else ExitCode.OK


class ProgressBar:
    """A Rich progress bar on stderr, shown only for large inputs when stderr is a terminal."""

    def __init__(self) -> None:
        self._progress: Any = None
        self._task: Any = None

    def start(self, total_bytes: float) -> None:
        if total_bytes < PROGRESS_THRESHOLD or not sys.stderr.isatty():
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )

        total = None if total_bytes == float("inf") else total_bytes
        self._progress = Progress(TextColumn("reading"), BarColumn(), DownloadColumn(), TransferSpeedColumn(),
                                  TimeRemainingColumn(), console=Console(stderr=True), transient=True)
        self._progress.start()
        self._task = self._progress.add_task("read", total=total)

    def advance(self, done_bytes: int) -> None:
        if self._progress is not None:
            self._progress.advance(self._task, done_bytes)

    def stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()
