"""``idxadvisor watch``: follow a live log and show the costly shapes as they happen; end with the full report."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from idxadvisor.cli.analyze import report_input_errors
from idxadvisor.cli.app import command, examples, warning_line
from idxadvisor.cli.common import (
    AGE,
    FLAG,
    INPUT,
    OUTPUT,
    AppOption,
    ConfigOption,
    DebugOption,
    ExcludeNsOption,
    FailOnOption,
    FormatOption,
    IgnoreOption,
    IncludeInternalOption,
    IndexesOption,
    MinCountOption,
    MinMsOption,
    NsOption,
    OutputOption,
    SelectOption,
    ShowValuesOption,
    SinceOption,
    TopOption,
    UntilOption,
    VerboseOption,
    exit_code_for,
    output_stream,
    refuse_server_uris,
    shared_overrides,
)
from idxadvisor.errors import UsageError
from idxadvisor.report import check_available, render

LIVE = "Live view"
_SECONDS_PER = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


@command(epilog=examples(
    "idxadvisor watch /var/log/mongodb/mongod.log",
    "idxadvisor watch mongod.log --window 1m --interval 5 --sort p95 --ns 'shop.*'",
    "tail -F mongod.log | idxadvisor watch - --once-idle 60 --format json -o report.json"))
def watch(
    path: Annotated[str, typer.Argument(
        help="The log file to follow (like tail -F: through rotations, and before it exists), or - for stdin.",
        metavar="PATH", show_default=False)],
    interval: Annotated[Optional[str], typer.Option(
        metavar="SECONDS", help="Refresh the view (or write an NDJSON line) every SECONDS (or 500ms, 1m). "
        "\\[default: 2]", rich_help_panel=LIVE)] = None,
    window: Annotated[Optional[str], typer.Option(
        metavar="DURATION", help="The recent view covers the last DURATION: seconds, or 30s, 5m, 1h. "
        "\\[default: 5m]", rich_help_panel=LIVE)] = None,
    sort: Annotated[Optional[str], typer.Option(
        metavar="KEY", help="Sort the view by total, count, p95 or ratio (docs examined per returned); keys t, c, "
        "p and r change it live. \\[default: total]", rich_help_panel=LIVE)] = None,
    rows: Annotated[Optional[int], typer.Option(
        metavar="N", help="Shapes in each table of the view and each list of an NDJSON line (the terminal's height "
        "may show fewer). \\[default: 10]", rich_help_panel=LIVE)] = None,
    once_idle: Annotated[Optional[str], typer.Option(
        metavar="SECONDS", help="End (with the report) after SECONDS without a new line. \\[default: never]",
        rich_help_panel=LIVE)] = None,
    from_start: Annotated[Optional[bool], typer.Option(
        "--from-start", metavar=FLAG, help="Read what the file holds already, then follow it (by default, only "
        "what is written from now on).", rich_help_panel=INPUT)] = None,
    format: FormatOption = None,
    output: OutputOption = None,
    top: TopOption = None,
    show_values: ShowValuesOption = None,
    save_workload: Annotated[Optional[Path], typer.Option(
        metavar="FILE", help="At the end, also save the workload (every shape and its statistics, no literal value) "
        "to FILE, as analyze --save-workload does; when FILE exists, what was watched is added to it.",
        rich_help_panel=OUTPUT)] = None,
    verbose: VerboseOption = None,
    min_ms: MinMsOption = None,
    ns: NsOption = None,
    exclude_ns: ExcludeNsOption = None,
    app: AppOption = None,
    include_internal: IncludeInternalOption = None,
    since: SinceOption = None,
    until: UntilOption = None,
    fail_on: FailOnOption = None,
    select: SelectOption = None,
    ignore: IgnoreOption = None,
    min_count: MinCountOption = None,
    indexes: IndexesOption = None,
    max_line_bytes: Annotated[Optional[int], typer.Option(
        metavar="BYTES", help="Skip lines longer than BYTES, counting each as a problem. \\[default: 67108864, "
        "64 MiB]", rich_help_panel=INPUT)] = None,
    config: ConfigOption = None,
    debug: DebugOption = False,
) -> int:
    """Follow a live log and show the costly shapes as they happen; Ctrl-C ends with the full report.

    On a terminal, a live view of the top shapes of the last minutes and since start, the new findings and the
    suggested indexes; otherwise one JSON object per interval (NDJSON). The report at the end is analyze's, in
    --format, and the exit code too.
    """
    from idxadvisor.config import load_settings
    from idxadvisor.watch import Watch, WatchOptions, check_workload_target

    refuse_server_uris("", [path], "watch follows a log file; read a server's profiler with analyze --uri")
    overrides = shared_overrides(
        format=format, output=output, top=top, show_values=show_values, verbose=verbose, min_ms=min_ms, ns=ns,
        exclude_ns=exclude_ns, include_internal=include_internal, since=since, until=until, fail_on=fail_on,
        select=select, ignore=ignore, min_count=min_count, data=None, min_savings_pct=None, sample_size=None,
        jobs=None, app=app)
    overrides.update({"indexes": indexes, "max_line_bytes": max_line_bytes})
    settings = load_settings(overrides, config)
    check_available(settings.format)
    options = WatchOptions(interval=_seconds(interval, "--interval", 2.0), window=_seconds(window, "--window", 300.0),
                           once_idle=_seconds(once_idle, "--once-idle", None), from_start=bool(from_start),
                           rows=rows if rows is not None else 10, sort=sort or "total")
    options.check()
    if path == "-" and sys.stdin.isatty():
        raise UsageError("no input: name the log file to follow, or pipe a log into 'idxadvisor watch -'")
    check_workload_target(save_workload, settings)
    with output_stream(settings.output) as out:
        running = Watch(path, settings, options, _display(path))
        running.run()
        report = running.report()
        render(report, out, format=settings.format, verbose=settings.verbose, top=settings.top,
               artifact=settings.indexes[0].rpartition("=")[2] if settings.indexes else None,
               fail_on=settings.fail_on)
    report_input_errors(report)
    for line in report.indexes_left_out:
        warning_line(line)
    if save_workload is not None:  # after the report: a workload file that refuses it loses nothing watched
        running.save_workload(save_workload)
    return exit_code_for(report, settings.fail_on)


def _display(path: str):  # noqa: ANN202 - a watch Display; Rich only on a terminal
    if not sys.stdout.isatty():
        from idxadvisor.watch.ndjson import NdjsonDisplay

        return NdjsonDisplay(sys.stdout)
    from rich.console import Console

    from idxadvisor.watch.view import LiveDisplay

    keys = sys.stdin.fileno() if path != "-" and sys.stdin.isatty() else None
    return LiveDisplay(Console(highlight=False, markup=False, emoji=False), keys)


def _seconds(value: str | None, option: str, default: float | None) -> float | None:
    """Seconds from ``2``, ``0.5``, ``500ms``, ``30s``, ``5m``, ``1h``."""
    if value is None:
        return default
    text = value.strip().lower()
    try:
        if text.endswith("ms"):
            return float(text[:-2]) / 1000
        age = AGE.match(text)
        if age:
            return float(age.group(1)) * _SECONDS_PER[age.group(2)]
        return float(text)
    except ValueError:
        pass
    raise UsageError(f"{option}: '{value}' is not a duration (seconds, or 500ms, 30s, 5m, 1h)")

