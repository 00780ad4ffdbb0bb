"""``idxadvisor analyze``: read logs and profiler dumps, report shapes, findings and index suggestions."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from idxadvisor import api
from idxadvisor.cli.app import command, error_line
from idxadvisor.cli.common import (
    EVIDENCE,
    OUTPUT,
    RULES,
    ConfigOption,
    DataOption,
    DebugOption,
    ExcludeNsOption,
    FormatOption,
    IgnoreOption,
    IncludeInternalOption,
    JobsOption,
    MinCountOption,
    MinMsOption,
    MinSavingsOption,
    NsOption,
    OutputOption,
    ProgressBar,
    SampleSizeOption,
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
from idxadvisor.config import load_settings
from idxadvisor.errors import UsageError
from idxadvisor.models.report import Report
from idxadvisor.report import render


@command()
def analyze(
    paths: Annotated[Optional[list[str]], typer.Argument(
        help="Log files, profiler dumps, explain output, workload files, globs, directories, .gz/.bz2/.xz files, tar "
             "archives, or - for stdin.", metavar="PATH", show_default=False)] = None,
    format: FormatOption = None,
    output: OutputOption = None,
    top: TopOption = None,
    sort_by: Annotated[Optional[str], typer.Option(
        metavar="KEY", help="Rank shapes by total, count, mean, p95, max, docs-examined or ratio. \\[default: total]",
        rich_help_panel=OUTPUT)] = None,
    show_values: ShowValuesOption = None,
    save_workload: Annotated[Optional[Path], typer.Option(
        metavar="FILE", help="Also save the workload (every shape and its statistics, no literal value) to FILE, "
        "for 'idxadvisor check' and later runs; FILE.gz is compressed.", rich_help_panel=OUTPUT)] = None,
    verbose: VerboseOption = None,
    min_ms: MinMsOption = None,
    ns: NsOption = None,
    exclude_ns: ExcludeNsOption = None,
    include_internal: IncludeInternalOption = None,
    since: SinceOption = None,
    until: UntilOption = None,
    fail_on: Annotated[Optional[str], typer.Option(
        metavar="LEVEL", help="Exit 1 when a finding is at least LEVEL: info, warning, error or never. "
        "\\[default: warning]", rich_help_panel=RULES)] = None,
    select: SelectOption = None,
    ignore: IgnoreOption = None,
    min_count: MinCountOption = None,
    indexes: Annotated[Optional[str], typer.Option(
        metavar="FILE", help="Existing indexes: a JSON file mapping each namespace to its listIndexes output.",
        rich_help_panel=EVIDENCE)] = None,
    data: DataOption = None,
    min_savings_pct: MinSavingsOption = None,
    sample_size: SampleSizeOption = None,
    jobs: JobsOption = None,
    config: ConfigOption = None,
    debug: DebugOption = False,
) -> int:
    """Read slow-operation logs or profiler dumps and report query shapes, findings and index suggestions."""
    refuse_server_uris("", paths or [], "give log files or profiler dumps, or - for stdin")
    refuse_server_uris("--indexes ", [indexes] if indexes else [],
                       "give a JSON file of namespace -> listIndexes output")
    overrides = shared_overrides(
        format=format, output=output, top=top, show_values=show_values, verbose=verbose, min_ms=min_ms, ns=ns,
        exclude_ns=exclude_ns, include_internal=include_internal, since=since, until=until, fail_on=fail_on,
        select=select, ignore=ignore, min_count=min_count, data=data, min_savings_pct=min_savings_pct,
        sample_size=sample_size, jobs=jobs)
    overrides.update({"sort_by": sort_by, "indexes": Path(indexes) if indexes else None})
    settings = load_settings(overrides, config)
    refuse_server_uris("--data ", settings.data, "give a sample file: Extended JSON or a mongodump .bson")
    refuse_server_uris("--indexes ", [str(settings.indexes)] if settings.indexes else [],
                       "give a JSON file of namespace -> listIndexes output")
    inputs = paths or ["-"]
    if inputs == ["-"] and sys.stdin.isatty():
        raise UsageError("no input: name log files, or pipe a log into 'idxadvisor analyze -'")
    progress = ProgressBar()
    try:
        report = api.analyze(inputs, settings, progress, workload_file=save_workload)
    finally:
        progress.stop()
    with output_stream(settings.output) as out:
        render(report, out, format=settings.format, verbose=settings.verbose, top=settings.top,
               artifact=str(settings.indexes) if settings.indexes else None)
    report_input_errors(report)
    return exit_code_for(report, settings.fail_on)


def report_input_errors(report: Report) -> None:
    for item in report.inputs:
        if item.error:
            error_line(f"{item.path}: {item.error}")
