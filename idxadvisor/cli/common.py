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
from typing import TYPE_CHECKING, Annotated, Any, Optional, TextIO

import typer

from idxadvisor.errors import UsageError
from idxadvisor.exitcodes import ExitCode

if TYPE_CHECKING:
    from idxadvisor.models.report import Report

# Help panels, in the order people look for them.
INPUT, FILTERING, RULES, EVIDENCE, SERVER, OUTPUT = "Input", "Filtering", "Rules", "Evidence", "Server", "Output"
CHANGE = "Change"  # check: the index change it judges
SELECTION = "Index set"  # the set chosen for each collection's workload
FLAG = ""  # the placeholder of a flag: none (Typer would print <bool>)

# Options several commands share, declared once (each command adds its own).
FormatOption = Annotated[Optional[str], typer.Option(
    "--format", "-f", metavar="FORMAT", help="text, json, markdown, sarif or html (one page with charts that opens "
    "offline; needs pip install 'idxadvisor\\[html]'). \\[default: text]", rich_help_panel=OUTPUT)]
OutputOption = Annotated[Optional[Path], typer.Option(
    "--output", "-o", metavar="FILE", help="Write the report to FILE instead of stdout.", rich_help_panel=OUTPUT)]
TopOption = Annotated[Optional[int], typer.Option(
    metavar="N", help="Show the N most important shapes and findings. \\[default: 20 in text and markdown, 2000 "
    "shapes in html, all in json and sarif]", rich_help_panel=OUTPUT)]
ShowValuesOption = Annotated[Optional[bool], typer.Option(
    "--show-values", metavar=FLAG, help="Print literal query values (kept out of reports otherwise).",
    rich_help_panel=OUTPUT)]
VerboseOption = Annotated[Optional[bool], typer.Option(
    "--verbose", "-v", metavar=FLAG, help="Show problem lines and the reason for every shape without a suggestion.",
    rich_help_panel=OUTPUT)]
MinMsOption = Annotated[Optional[float], typer.Option(
    metavar="MS", help="Leave out operations faster than MS milliseconds. \\[default: 0]", rich_help_panel=FILTERING)]
NsOption = Annotated[Optional[list[str]], typer.Option(
    metavar="GLOB", help="Only namespaces matching GLOB, such as 'shop.*' (repeatable).", rich_help_panel=FILTERING)]
ExcludeNsOption = Annotated[Optional[list[str]], typer.Option(
    metavar="GLOB", help="Leave out namespaces matching GLOB (repeatable).", rich_help_panel=FILTERING)]
AppOption = Annotated[Optional[list[str]], typer.Option(
    metavar="GLOB", help="Only operations of applications (their appName) matching GLOB, such as 'orders-api*' "
    "(repeatable; case-insensitive).", rich_help_panel=FILTERING)]
IncludeInternalOption = Annotated[Optional[bool], typer.Option(
    "--include-internal", metavar=FLAG, help="Keep internal traffic: admin, local, config, system collections, "
    "internal threads and agents.", rich_help_panel=FILTERING)]
SinceOption = Annotated[Optional[str], typer.Option(
    metavar="TIME", help="Only operations at or after TIME: ISO 8601 (UTC unless it has an offset) or an age "
    "such as 30m, 2h, 7d.", rich_help_panel=FILTERING)]
UntilOption = Annotated[Optional[str], typer.Option(
    metavar="TIME", help="Only operations before TIME (ISO 8601).", rich_help_panel=FILTERING)]
SelectOption = Annotated[Optional[list[str]], typer.Option(
    metavar="CODE", help="Run only these rules: codes, prefixes (IX) or names (repeatable).", rich_help_panel=RULES)]
IgnoreOption = Annotated[Optional[list[str]], typer.Option(
    metavar="CODE", help="Skip these rules: codes, prefixes or names (repeatable).", rich_help_panel=RULES)]
MinCountOption = Annotated[Optional[int], typer.Option(
    metavar="N", help="Advise nothing for shapes run fewer than N times (getMores do not count). \\[default: 3]",
    rich_help_panel=RULES)]
DataOption = Annotated[Optional[list[str]], typer.Option(
    metavar="[NS=]FILE", help="A sample of a collection's documents: Extended JSON or a mongodump .bson file; a "
    "directory holds <db>.<coll>.json files (repeatable).", rich_help_panel=EVIDENCE)]
MinSavingsOption = Annotated[Optional[float], typer.Option(
    metavar="PCT", help="Drop index suggestions that do not cut keys plus documents examined by PCT percent. "
    "\\[default: 50]", rich_help_panel=EVIDENCE)]
SampleSizeOption = Annotated[Optional[int], typer.Option(
    metavar="N", help="Documents kept from each --data sample, or drawn from each collection with $sample with --uri. "
    "\\[default: 10000]", rich_help_panel=EVIDENCE)]
IndexesOption = Annotated[Optional[list[str]], typer.Option(
    "--indexes", metavar="[NS=]FILE", help="Existing indexes: a JSON file mapping each namespace to its listIndexes "
    "output (idxadvisor indexes writes one), an mdbkit export, or getIndexes() output (NS= names its collection) "
    "(repeatable).", rich_help_panel=EVIDENCE)]
FailOnOption = Annotated[Optional[str], typer.Option(
    metavar="LEVEL", help="Exit 1 when a finding is at least LEVEL: info, warning, error or never. "
    "\\[default: warning]", rich_help_panel=RULES)]
ShardKeyOption = Annotated[Optional[list[str]], typer.Option(
    metavar="NS=PATTERN", help="The shard key of a collection, such as shop.orders='{customerId: 1}': indexes "
    "that carry it are never called redundant or unused (repeatable; replaces the shard-keys setting).",
    rich_help_panel=EVIDENCE)]
UriOption = Annotated[Optional[str], typer.Option(
    metavar="URI", help="Read a live server, read-only: its system.profile as operations, listIndexes as existing "
    "indexes, $sample and $collStats as data (mongodb:// or mongodb+srv://; TLS and credentials in the URI).",
    rich_help_panel=SERVER)]
DbOption = Annotated[Optional[list[str]], typer.Option(
    "--db", metavar="NAME", help="Read only this database (repeatable). \\[default: every database but admin, "
    "local and config]", rich_help_panel=SERVER)]
ScratchDbOption = Annotated[Optional[str], typer.Option(
    metavar="NAME", help="The scratch database replay creates, fills and drops; it must not exist yet. "
    "\\[default: idxadvisor_scratch_<random>]", rich_help_panel=SERVER)]
ScratchUriOption = Annotated[Optional[str], typer.Option(
    metavar="URI", help="Replay on this server instead of the source (recommended: a separate, disposable one).",
    rich_help_panel=SERVER)]
JobsOption = Annotated[Optional[int], typer.Option(
    "--jobs", "-j", metavar="N", help="Processes that parse the inputs. \\[default: as many as the inputs' size "
    "makes worth, up to all cores]", rich_help_panel=INPUT)]
ConfigOption = Annotated[Optional[Path], typer.Option(
    metavar="FILE", help="Settings file. \\[default: .idxadvisor.toml, or \\[tool.idxadvisor] in pyproject.toml]",
    rich_help_panel=INPUT)]
DebugOption = Annotated[bool, typer.Option("--debug", metavar=FLAG, help="Show tracebacks.", rich_help_panel=OUTPUT)]
IndexSelectionOption = Annotated[Optional[str], typer.Option(
    metavar="MODE", help="workload: choose each collection's index set for its whole workload (indexes that serve "
    "several shapes, what they cost the writes, what to hide); per-finding: one index per finding. "
    "\\[default: workload]", rich_help_panel=SELECTION)]
MaxNewIndexesOption = Annotated[Optional[int], typer.Option(
    metavar="N", help="At most N new indexes per collection in its set. \\[default: no limit but per-finding advice's "
    "count and the server's 64 indexes]", rich_help_panel=SELECTION)]
WriteCostFactorOption = Annotated[Optional[float], typer.Option(
    metavar="F", help="What one index key written costs, in keys or documents examined, when the set weighs an "
    "index's saving against its writes (at most 1,000,000). \\[default: 10]", rich_help_panel=SELECTION)]
MinSavingOption = Annotated[Optional[float], typer.Option(
    metavar="SECONDS", help="Suggest an index only when it saves at least this many seconds of server time per hour "
    "of log, net of what it costs the writes (docs/advice.md). \\[default: 0.5]", rich_help_panel=SELECTION)]


def shared_overrides(*, format: str | None, output: Path | None, top: int | None, show_values: bool | None,
                     verbose: bool | None, min_ms: float | None, ns: list[str] | None, exclude_ns: list[str] | None,
                     include_internal: bool | None, since: str | None, until: str | None, fail_on: str | None,
                     select: list[str] | None, ignore: list[str] | None, min_count: int | None,
                     data: list[str] | None, min_savings_pct: float | None, sample_size: int | None,
                     jobs: int | None, app: list[str] | None = None) -> dict[str, Any]:
    """The settings the shared options give (None: not given), with --data checked for server URIs."""
    refuse_server_uris("--data ", data or [], "give a sample file: Extended JSON or a mongodump .bson; with --uri "
                       "the server's collections are sampled with $sample")
    return {"format": format, "output": output, "top": top, "show_values": show_values, "verbose": verbose,
            "min_ms": min_ms, "ns": ns, "exclude_ns": exclude_ns, "include_internal": include_internal,
            "since": parse_time(since, "--since"), "until": parse_time(until, "--until"), "fail_on": fail_on,
            "select": select, "ignore": ignore, "min_count": min_count, "data": data,
            "min_savings_pct": min_savings_pct, "sample_size": sample_size, "jobs": jobs, "app": app}

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
    """2 when an input could not be read; else 1 when a finding is at least as severe as ``fail_on``; else 0: what
    the reports' last line says (``report.build.exit_verdict``)."""
    from idxadvisor.report.build import exit_verdict

    return ExitCode(exit_verdict(report, fail_on)[0])


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
