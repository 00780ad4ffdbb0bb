"""The command line: a thin Typer layer over ``idxadvisor.api``.

Only the report goes to stdout (so ``--format json | jq`` works); messages and progress go to stderr. Every expected
failure is one line, ``idxadvisor: error: …``, and an exit code from ``idxadvisor.exitcodes``; a traceback only with
``--debug``.
"""

from __future__ import annotations

import os
import re
import sys
import textwrap
import traceback
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Iterator, Optional, TextIO

import typer

from idxadvisor import __version__, api
from idxadvisor.config import Settings, load_settings
from idxadvisor.errors import IdxAdvisorError, UsageError
from idxadvisor.exitcodes import ExitCode
from idxadvisor.models.report import SEVERITY_ORDER, Report
from idxadvisor.units import mask_secrets

# Rich and the renderers are imported where they are used: a JSON report never needs Rich, and every import is
# start-up time the user waits for before the first line is read.

REPORT_WIDTH = 100
PROGRESS_THRESHOLD = 64 * 1024 * 1024  # show a progress bar for inputs at least this large

app = typer.Typer(
    name="idxadvisor",
    help="MongoDB query and index advisor: reads slow-operation logs and profiler dumps, groups query shapes, "
    "and proves index suggestions.\n\nExit codes: 0 ok, 1 findings at or above --fail-on, 2 usage, config or "
    "input error, 3 server or connection error, 130 interrupted.",
    context_settings={"help_option_names": ["-h", "--help"]},
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
)

INPUT, FILTERING, OUTPUT, RULES, EVIDENCE = "Input", "Filtering", "Output", "Rules", "Evidence"


def wants_colour(stream: TextIO) -> bool:
    """Colour (any escape code) only on a terminal, and only when NO_COLOR is unset."""
    return stream.isatty() and "NO_COLOR" not in os.environ


def error_line(message: str) -> None:
    """One line on stderr (red on a terminal); never Rich markup, since messages quote queries; passwords masked."""
    line = f"idxadvisor: error: {mask_secrets(message)}"
    if wants_colour(sys.stderr):
        line = f"\x1b[31m{line}\x1b[0m"
    sys.stderr.write(line + "\n")


def _traceback() -> None:
    """The current exception's traceback on stderr (``--debug``), with passwords masked like every other message."""
    sys.stderr.write(mask_secrets(traceback.format_exc()))


# mongodb://… or mongodb+srv://… (a Path folds the // into one /), after an optional NS= of --data
SERVER_URI = re.compile(r"^(?:[^=/]*=)?mongodb(?:\+srv)?:/", re.IGNORECASE)


def _refuse_server_uris(option: str, values: list[str], instead: str) -> None:
    """Reading from a live server is not supported yet: say so, without echoing the password of the URI."""
    for value in values:
        if SERVER_URI.match(value):
            raise UsageError(f"{option}{value}: reading from a live server is not supported yet ({instead})")


def _parse_time(value: str | None, option: str) -> datetime | None:
    if value is None:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00") if value.endswith("Z") else value)
    except ValueError:
        raise UsageError(f"{option}: '{value}' is not an ISO 8601 time (for example 2025-08-18T19:00)") from None


@contextmanager
def _output(path: Path | None) -> Iterator[TextIO]:
    if path is None:
        yield sys.stdout
        return
    try:
        handle = open(path, "w", encoding="utf-8")  # noqa: SIM115
    except OSError as exc:
        raise UsageError(f"--output: cannot write {path}: {exc.strerror or exc}") from None
    with handle:
        yield handle


def masked(report: Report) -> Report:
    """The report with the passwords of URIs in input paths and errors masked, whichever format renders it."""
    inputs = [item.model_copy(update={"path": mask_secrets(item.path),
                                      "error": mask_secrets(item.error) if item.error else item.error})
              for item in report.inputs]
    return report.model_copy(update={"inputs": inputs})


def render(report: Report, settings: Settings, out: TextIO) -> None:
    from idxadvisor.report.build import DEFAULT_TOP_FOR_PEOPLE

    report = masked(report)
    if settings.format == "json":
        from idxadvisor.report import json as json_report

        json_report.render(report, out)
    elif settings.format == "markdown":
        from idxadvisor.report import markdown as markdown_report

        markdown_report.render(report, out, verbose=settings.verbose, limit=settings.top or DEFAULT_TOP_FOR_PEOPLE)
    elif settings.format == "sarif":
        from idxadvisor.report import sarif as sarif_report

        sarif_report.render(report, out, str(settings.indexes) if settings.indexes else None)
    else:
        from rich.console import Console

        from idxadvisor.report import terminal as terminal_report

        console = Console(file=out, width=None if out.isatty() else REPORT_WIDTH, highlight=False, markup=False,
                          emoji=False, soft_wrap=False, color_system="auto" if wants_colour(out) else None)
        terminal_report.render(report, console, verbose=settings.verbose, limit=settings.top or DEFAULT_TOP_FOR_PEOPLE)


def exit_code_for(report: Report, settings: Settings) -> ExitCode:
    if any(item.error for item in report.inputs):
        return ExitCode.USAGE
    worst = report.max_severity()
    if settings.fail_on == "never" or worst is None:
        return ExitCode.OK
    return ExitCode.FINDINGS if SEVERITY_ORDER[worst] >= SEVERITY_ORDER[settings.fail_on] else ExitCode.OK


class _ProgressBar:
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


@app.command()
def analyze(
    paths: Annotated[Optional[list[str]], typer.Argument(
        help="Log files, profiler dumps, globs, directories, .gz/.tar.gz, or - for stdin.", show_default=False)] = None,
    format: Annotated[Optional[str], typer.Option("--format", "-f", help="text, json, markdown or sarif.",
                                                  rich_help_panel=OUTPUT)] = None,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write the report to this file.",
                                                   rich_help_panel=OUTPUT)] = None,
    top: Annotated[Optional[int], typer.Option(help="Show the N most important shapes (text and markdown show 20 "
                                               "by default, json all).", rich_help_panel=OUTPUT)] = None,
    sort_by: Annotated[Optional[str], typer.Option(help="total, count, mean, p95, max, docs-examined or ratio.",
                                                   rich_help_panel=OUTPUT)] = None,
    show_values: Annotated[Optional[bool], typer.Option("--show-values", help="Print literal query values "
                                                        "(kept out of reports otherwise).",
                                                        rich_help_panel=OUTPUT)] = None,
    verbose: Annotated[Optional[bool], typer.Option("--verbose", "-v", help="Show problem lines and the reason "
                                                    "for every shape without a suggestion.",
                                                    rich_help_panel=OUTPUT)] = None,
    min_ms: Annotated[Optional[float], typer.Option(help="Leave out operations faster than this.",
                                                    rich_help_panel=FILTERING)] = None,
    ns: Annotated[Optional[list[str]], typer.Option(help="Only namespaces matching this glob (repeatable).",
                                                    rich_help_panel=FILTERING)] = None,
    exclude_ns: Annotated[Optional[list[str]], typer.Option(help="Leave out namespaces matching this glob.",
                                                            rich_help_panel=FILTERING)] = None,
    include_internal: Annotated[Optional[bool], typer.Option(
        "--include-internal", help="Keep internal traffic (admin, local, config, system collections, internal "
        "threads and agents).", rich_help_panel=FILTERING)] = None,
    since: Annotated[Optional[str], typer.Option(help="Only operations at or after this ISO time.",
                                                 rich_help_panel=FILTERING)] = None,
    until: Annotated[Optional[str], typer.Option(help="Only operations before this ISO time.",
                                                 rich_help_panel=FILTERING)] = None,
    fail_on: Annotated[Optional[str], typer.Option(help="Exit 1 when a finding is at least this severe: info, "
                                                   "warning, error or never.", rich_help_panel=RULES)] = None,
    select: Annotated[Optional[list[str]], typer.Option(help="Run only these rule codes or prefixes.",
                                                        rich_help_panel=RULES)] = None,
    ignore: Annotated[Optional[list[str]], typer.Option(help="Skip these rule codes or prefixes.",
                                                        rich_help_panel=RULES)] = None,
    min_count: Annotated[Optional[int], typer.Option(
        help="Advise nothing for shapes run fewer times than this (getMores do not count) [default: 3].",
        rich_help_panel=RULES)] = None,
    indexes: Annotated[Optional[str], typer.Option(help="Existing indexes: a JSON file of namespace -> "
                                                   "listIndexes output.", rich_help_panel=EVIDENCE)] = None,
    data: Annotated[Optional[list[str]], typer.Option(help="[NS=]FILE sample of a collection's documents "
                                                      "(repeatable; a directory holds one file per collection).",
                                                      rich_help_panel=EVIDENCE)] = None,
    min_savings_pct: Annotated[Optional[float], typer.Option(
        help="Drop index suggestions that do not cut keys plus documents examined by this much.",
        rich_help_panel=EVIDENCE)] = None,
    sample_size: Annotated[Optional[int], typer.Option(help="Documents kept from each --data file.",
                                                       rich_help_panel=EVIDENCE)] = None,
    jobs: Annotated[Optional[int], typer.Option("--jobs", "-j", help="Worker processes (default: all cores).",
                                                rich_help_panel=INPUT)] = None,
    config: Annotated[Optional[Path], typer.Option(help="Settings file (default: .idxadvisor.toml or "
                                                   "[tool.idxadvisor] in pyproject.toml).",
                                                   rich_help_panel=INPUT)] = None,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks.", rich_help_panel=OUTPUT)] = False,
) -> int:
    """Read slow-operation logs or profiler dumps and report query shapes, findings and index suggestions."""
    _refuse_server_uris("", paths or [], "give log files or profiler dumps, or - for stdin")
    _refuse_server_uris("--data ", data or [], "give a sample file: Extended JSON or a mongodump .bson")
    _refuse_server_uris("--indexes ", [indexes] if indexes else [],
                        "give a JSON file of namespace -> listIndexes output")
    overrides = {
        "format": format, "output": output, "top": top, "sort_by": sort_by, "show_values": show_values,
        "verbose": verbose, "min_ms": min_ms, "ns": ns, "exclude_ns": exclude_ns,
        "include_internal": include_internal, "since": _parse_time(since, "--since"),
        "until": _parse_time(until, "--until"), "fail_on": fail_on, "select": select, "ignore": ignore,
        "min_count": min_count, "indexes": Path(indexes) if indexes else None, "data": data,
        "min_savings_pct": min_savings_pct, "sample_size": sample_size, "jobs": jobs,
    }
    settings = load_settings(overrides, config)
    _refuse_server_uris("--data ", settings.data, "give a sample file: Extended JSON or a mongodump .bson")
    _refuse_server_uris("--indexes ", [str(settings.indexes)] if settings.indexes else [],
                        "give a JSON file of namespace -> listIndexes output")
    inputs = paths or ["-"]
    if inputs == ["-"] and sys.stdin.isatty():
        raise UsageError("no input: name log files, or pipe a log into 'idxadvisor analyze -'")
    progress = _ProgressBar()
    try:
        report = api.analyze(inputs, settings, progress)
    finally:
        progress.stop()
    with _output(settings.output) as out:
        render(report, settings, out)
    for item in report.inputs:
        if item.error:
            error_line(f"{item.path}: {item.error}")
    return exit_code_for(report, settings)


@app.command()
def whatif(
    data: Annotated[str, typer.Option(help="A sample of the collection: Extended JSON (array or one document per "
                                      "line) or a mongodump .bson file, optionally gzipped.", show_default=False)],
    query: Annotated[str, typer.Option(help='The query: {"command": "find"|"count", "filter": {...}, "sort": {...}, '
                                       '"projection": {...}, "limit": N, "skip": N} (Extended JSON).',
                                       show_default=False)],
    index: Annotated[Optional[list[str]], typer.Option(
        help='An index: a key pattern {"a": 1, "b": -1} or an index document {"key": {...}, "sparse": true} '
             "(repeatable). The _id index always exists.")] = None,
    hint: Annotated[Optional[str], typer.Option(help="Force this index's key pattern, as hint() does.")] = None,
    format: Annotated[str, typer.Option("--format", "-f", help="text or json.")] = "text",
    server_version: Annotated[str, typer.Option(help="The server behaviour to model (8.0, 8.1, 7.0 ...).")] = "8.0",
    sample_size: Annotated[int, typer.Option(help="Documents kept from the data file (reservoir sample).")] = 10_000,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks.")] = False,
) -> int:
    """Predict explain("executionStats") for a query over a data sample, with the indexes you give: no server."""
    from idxadvisor.whatif import render_text, run_whatif

    if format not in ("text", "json"):
        raise UsageError(f"--format must be text or json, not {format!r}")
    _refuse_server_uris("--data ", [data], "give a sample file: Extended JSON or a mongodump .bson")
    result = run_whatif(data=Path(data), query=query, indexes=index or [], hint=hint, server_version=server_version,
                        sample_size=sample_size)
    if format == "json":
        from bson import json_util

        print(json_util.dumps(result, json_options=json_util.RELAXED_JSON_OPTIONS, indent=2))
    else:
        print(render_text(result))
    return ExitCode.OK


@app.command("rules")
def list_rules() -> int:
    """List every rule: code, name, default severity and summary."""
    from rich.console import Console
    from rich.text import Text

    from idxadvisor.report.terminal import SEVERITY_STYLES
    from idxadvisor.rules import ALL_RULES

    console = Console(highlight=False, markup=False, width=None if sys.stdout.isatty() else REPORT_WIDTH,
                      color_system="auto" if wants_colour(sys.stdout) else None)
    indent = 41
    for rule in ALL_RULES:
        summary = textwrap.wrap(rule.summary(), width=max(40, console.width - indent))
        line = Text(f"{rule.code}  ", style="bold")
        line.append(f"{rule.name:<24}")
        line.append(f"{rule.severity:<9}", style=SEVERITY_STYLES.get(rule.severity, ""))
        line.append("\n".join([summary[0], *(" " * indent + part for part in summary[1:])]))
        console.print(line)
    return ExitCode.OK


@app.command("rule")
def show_rule(
    code: Annotated[str, typer.Argument(help="A rule code (IX001) or name (missing-compound-index).")],
) -> int:
    """Print a rule's documentation."""
    from idxadvisor.rules import rule_class

    rule = rule_class(code)
    print(f"{rule.code} {rule.name} (default severity: {rule.severity}, since {rule.since})\n")
    print(rule.documentation())
    return ExitCode.OK


@app.command()
def version() -> int:
    """Print the version."""
    print(f"idxadvisor {__version__}")
    return ExitCode.OK


def run(argv: list[str] | None = None) -> int:
    """Run the command line and return its exit code (the single error boundary)."""
    arguments = sys.argv[1:] if argv is None else argv
    debug = "--debug" in arguments
    try:
        result = app(args=arguments, prog_name="idxadvisor", standalone_mode=False)
    except IdxAdvisorError as exc:
        if debug:
            _traceback()
        error_line(str(exc))
        return exc.exit_code
    except typer.Exit as exc:
        return exc.exit_code
    except typer.TyperException as exc:  # Typer's usage errors: unknown option, bad value ...
        message = exc.format_message()
        if message:  # empty when Typer already printed the help (no arguments at all)
            error_line(message)
        return ExitCode.USAGE
    except (typer.Abort, KeyboardInterrupt):
        error_line("interrupted")
        return ExitCode.INTERRUPTED
    except BrokenPipeError:
        _silence_stdout()
        return ExitCode.OK
    except Exception as exc:  # noqa: BLE001 - the last line of defence: a bug, reported in one line
        if debug:
            _traceback()
        error_line(f"internal error: {type(exc).__name__}: {exc} (run with --debug for the traceback)")
        return ExitCode.USAGE
    return int(result) if isinstance(result, int) else ExitCode.OK


def _silence_stdout() -> None:
    """After the reader of a pipe went away, make interpreter shutdown not complain about flushing stdout."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def main() -> None:
    sys.exit(run())
