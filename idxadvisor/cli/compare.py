"""``idxadvisor compare``: a workload before a change and after it, shape by shape; exit 1 when a shape regressed."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from idxadvisor.cli.app import command, error_line, examples
from idxadvisor.cli.common import (
    INPUT,
    RULES,
    AppOption,
    ConfigOption,
    DebugOption,
    ExcludeNsOption,
    FormatOption,
    IncludeInternalOption,
    JobsOption,
    MinMsOption,
    NsOption,
    OutputOption,
    SinceOption,
    TopOption,
    UntilOption,
    output_stream,
    parse_time,
)
from idxadvisor.errors import UsageError
from idxadvisor.exitcodes import ExitCode


@command(epilog=examples(
    'idxadvisor compare before.log after.log',
    'idxadvisor compare --before monday.json --after tuesday/ --since 2026-11-03T08:00 --format markdown'))
def compare(
    paths: Annotated[Optional[list[str]], typer.Argument(
        help="BEFORE AFTER: one input each (a log, profiler dump, workload file, directory or quoted glob); with "
        "--before or --after, the other side.", metavar="PATH", show_default=False)] = None,
    before: Annotated[Optional[list[str]], typer.Option(
        metavar="PATH", help="An input of the workload before the change (repeatable).", rich_help_panel=INPUT,
        show_default=False)] = None,
    after: Annotated[Optional[list[str]], typer.Option(
        metavar="PATH", help="An input of the workload after the change (repeatable: --after a.log --after b.log).",
        rich_help_panel=INPUT, show_default=False)] = None,
    regression_pct: Annotated[Optional[float], typer.Option(
        metavar="PCT", help="A shape regressed when its mean or p95 duration grew by more than PCT percent (and by "
        "1 ms or more) with at least --min-executions on each side; exit 1 then. \\[default: 20]",
        rich_help_panel=RULES)] = None,
    min_executions: Annotated[Optional[int], typer.Option(
        metavar="N", help="Judge only shapes run at least N times on each side (fewer say too little about a p95). "
        "\\[default: 10]", rich_help_panel=RULES)] = None,
    format: FormatOption = None,
    output: OutputOption = None,
    top: TopOption = None,
    min_ms: MinMsOption = None,
    ns: NsOption = None,
    exclude_ns: ExcludeNsOption = None,
    app: AppOption = None,
    include_internal: IncludeInternalOption = None,
    since: SinceOption = None,
    until: UntilOption = None,
    jobs: JobsOption = None,
    config: ConfigOption = None,
    debug: DebugOption = False,
) -> int:
    """Compare a workload before and after a change (an index, a release): per shape, executions per hour, mean and
    p95 duration, work per document returned and plans, ranked by the change in time spent."""
    from idxadvisor import api
    from idxadvisor.config import load_settings

    from idxadvisor.report import check_available

    before_paths, after_paths = sides(paths or [], before or [], after or [])
    settings = load_settings({"format": format, "output": output, "top": top, "min_ms": min_ms, "ns": ns,
                              "exclude_ns": exclude_ns, "app": app, "include_internal": include_internal, "jobs": jobs,
                              "since": parse_time(since, "--since"), "until": parse_time(until, "--until"),
                              "regression_pct": regression_pct, "min_executions": min_executions}, config)
    check_available(settings.format)  # the html extra, before any input is read
    comparison = api.compare(before_paths, after_paths, settings)
    from idxadvisor.report.comparison import exit_line, render_comparison

    with output_stream(settings.output) as out:
        render_comparison(comparison, out, format=settings.format, top=settings.top)
    for error in comparison.before.errors + comparison.after.errors:
        error_line(error)
    return ExitCode(exit_line(comparison)[0])


def sides(paths: list[str], before: list[str], after: list[str]) -> tuple[list[str], list[str]]:
    """BEFORE AFTER as two arguments; or the arguments are the side that --before or --after does not name."""
    if before and after:
        if paths:
            raise UsageError(f"{paths[0]}: with both --before and --after, name every input with one of them")
        return before, after
    if after:
        return before + paths, after
    if before:
        return before, paths
    if len(paths) != 2:
        raise UsageError("compare BEFORE AFTER takes two inputs (a directory or quoted glob each for several); or "
                         "name them with --before PATH and --after PATH, each repeatable")
    return [paths[0]], [paths[1]]
