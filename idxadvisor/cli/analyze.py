"""``idxadvisor analyze``: read logs, profiler dumps, workload files or a live server; report shapes, findings and
index suggestions."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from idxadvisor.cli.app import command, error_line, examples, warning_line
from idxadvisor.cli.common import (
    FLAG,
    INPUT,
    OUTPUT,
    SERVER,
    AppOption,
    ConfigOption,
    DataOption,
    DbOption,
    DebugOption,
    ExcludeNsOption,
    FailOnOption,
    FormatOption,
    IgnoreOption,
    IncludeInternalOption,
    IndexSelectionOption,
    IndexesOption,
    JobsOption,
    MaxNewIndexesOption,
    MinCountOption,
    MinMsOption,
    MinSavingsOption,
    NsOption,
    OutputOption,
    ProgressBar,
    SampleSizeOption,
    ScratchDbOption,
    ScratchUriOption,
    SelectOption,
    ShardKeyOption,
    ShowValuesOption,
    SinceOption,
    TopOption,
    UntilOption,
    UriOption,
    VerboseOption,
    MinSavingOption,
    WriteCostFactorOption,
    exit_code_for,
    output_stream,
    refuse_server_uris,
    shared_overrides,
)
from idxadvisor.errors import UsageError
from idxadvisor.exitcodes import ExitCode
from idxadvisor.report import check_available, render

if TYPE_CHECKING:
    from idxadvisor.config import Settings
    from idxadvisor.models.report import Report

# The library is imported where a command runs, not here: --help and version need none of it.


@command(epilog=examples(
    'idxadvisor analyze fixtures/demo/shop.log --indexes fixtures/demo/indexes.json --data fixtures/demo/data',
    "idxadvisor analyze /var/log/mongodb/ --since 2h --ns 'shop.*' --format markdown -o report.md",
    'zcat mongod.log.gz | idxadvisor analyze - --save-workload db/workload.json'))
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
        "for 'idxadvisor check', merge, compare and later runs; FILE.gz is compressed. When FILE exists, add to it "
        "the inputs it has not counted (the new lines of a log that grew) and report on the whole.",
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
    data: DataOption = None,
    min_savings_pct: MinSavingsOption = None,
    sample_size: SampleSizeOption = None,
    shard_key: ShardKeyOption = None,
    uri: UriOption = None,
    db: DbOption = None,
    query_stats: Annotated[Optional[bool], typer.Option(
        "--query-stats", metavar=FLAG, help="Also read $queryStats (MongoDB 8.0+, the queryStatsRead privilege): "
        "every recorded query shape with its aggregated metrics.", rich_help_panel=SERVER)] = None,
    replay: Annotated[Optional[bool], typer.Option(
        "--replay", metavar=FLAG, help="Replay the top findings' candidate indexes with explain(\"executionStats\") "
        "on a scratch copy of a $sample (needs --uri).", rich_help_panel=SERVER)] = None,
    scratch_db: ScratchDbOption = None,
    scratch_uri: ScratchUriOption = None,
    index_selection: IndexSelectionOption = None,
    max_new_indexes: MaxNewIndexesOption = None,
    write_cost_factor: WriteCostFactorOption = None,
    min_saving: MinSavingOption = None,
    jobs: JobsOption = None,
    max_line_bytes: Annotated[Optional[int], typer.Option(
        metavar="BYTES", help="Skip lines longer than BYTES, counting each as a problem (a file of one endless "
        "line must not fill memory). \\[default: 67108864, 64 MiB]", rich_help_panel=INPUT)] = None,
    dask_scheduler: Annotated[Optional[str], typer.Option(
        metavar="URL", help="Parse the inputs on the Dask cluster of this scheduler (tcp://host:8786) and tree-reduce "
        "their digests there: paths every worker sees, or fsspec URLs (s3://, gs://, https://). Compressed inputs are "
        "read whole, one per worker. Needs idxadvisor\\[dask] (and idxadvisor\\[s3] for s3://).",
        rich_help_panel=INPUT)] = None,
    dask_block_size: Annotated[Optional[int], typer.Option(
        metavar="BYTES", help="Bytes of a plain log parsed by one Dask task. \\[default: 33554432, 32 MiB]",
        rich_help_panel=INPUT)] = None,
    config: ConfigOption = None,
    debug: DebugOption = False,
) -> int:
    """Read slow-operation logs, profiler dumps or a live server; report query shapes, findings and indexes."""
    from idxadvisor.indexes.catalog import parse_shard_key_argument

    overrides = shared_overrides(
        format=format, output=output, top=top, show_values=show_values, verbose=verbose, min_ms=min_ms, ns=ns,
        exclude_ns=exclude_ns, app=app, include_internal=include_internal, since=since, until=until, fail_on=fail_on,
        select=select, ignore=ignore, min_count=min_count, data=data, min_savings_pct=min_savings_pct,
        sample_size=sample_size, jobs=jobs)
    overrides.update({"sort_by": sort_by, "indexes": indexes, "uri": uri, "db": db, "query_stats": query_stats,
                      "replay": replay, "scratch_db": scratch_db, "scratch_uri": scratch_uri,
                      "max_line_bytes": max_line_bytes, "dask_scheduler": dask_scheduler,
                      "dask_block_size": dask_block_size, "index_selection": index_selection,
                      "max_new_indexes": max_new_indexes, "write_cost_factor": write_cost_factor,
                      "min_saving": min_saving,
                      "shard_keys": dict(parse_shard_key_argument(text) for text in shard_key) if shard_key else None})
    return run_analysis(paths or [], overrides, config, save_workload)


def run_analysis(paths: list[str], overrides: dict[str, object], config: Path | None,
                 save_workload: Path | None = None) -> int:
    """Check the arguments, run ``api.analyze``, render the report, and return the exit code (analyze, replay)."""
    from idxadvisor import api
    from idxadvisor.config import load_settings

    settings = load_settings(overrides, config)
    check_available(settings.format)  # the html extra, before any input is read
    check_arguments(paths, settings)
    inputs = paths or ([] if settings.uri else ["-"])
    if inputs == ["-"] and sys.stdin.isatty():
        raise UsageError("no input: name log files, pipe a log into 'idxadvisor analyze -', or read a server with "
                         "--uri")
    progress = ProgressBar()
    try:
        report = api.analyze(inputs, settings, progress, workload_file=save_workload)
    finally:
        progress.stop()
    with output_stream(settings.output) as out:
        render(report, out, format=settings.format, verbose=settings.verbose, top=settings.top,
               artifact=settings.indexes[0].rpartition("=")[2] if settings.indexes else None,
               fail_on=settings.fail_on)
    report_input_errors(report)
    for line in report.indexes_left_out:
        warning_line(line)
    if report.workload is not None:
        for line in report.workload.skipped:
            warning_line(line)
        if report.workload.error is not None:  # the report above is written; the workload file is not
            error_line(report.workload.error)
            return replay_exit_code(report) or ExitCode.USAGE
    return replay_exit_code(report) or exit_code_for(report, settings.fail_on)


def replay_exit_code(report: Report) -> ExitCode | None:
    """After a replay stopped early or a scratch database left behind (the report is written already): one error
    line each, naming the database and the command that drops it, and 130 (interrupted) or 3."""
    scratch = report.server.scratch if report.server is not None else None
    if scratch is None or (scratch.stopped is None and scratch.dropped):
        return None
    state = "dropped" if scratch.dropped else "NOT dropped"
    if scratch.stopped in ("interrupted", "terminated"):  # the command line adds "interrupted" for the exit code
        error_line(f"replay {scratch.stopped}: the scratch database {scratch.database} on {scratch.server} was "
                   f"{state}")
    elif scratch.stopped is not None:
        error_line(f"{scratch.stopped}; replay stopped, and the scratch database {scratch.database} was {state}")
    for problem in scratch.problems:
        if not scratch.dropped and problem.startswith("the scratch database"):
            error_line(problem)
    if scratch.stopped in ("interrupted", "terminated"):
        return ExitCode.INTERRUPTED
    return ExitCode.SERVER


def report_input_errors(report: Report) -> None:
    """One error line for each input that could not be read (the report holds the rest)."""
    for item in report.inputs:
        if item.error:
            error_line(f"{item.path}: {item.error}")


def check_arguments(paths: list[str], settings: Settings) -> None:
    """A server where a file is expected, or server options without a server: one usage line."""
    for path in paths:
        refuse_server_uris("", [path], f"use --uri {path}")
    refuse_server_uris("--data ", settings.data, "give a sample file: Extended JSON or a mongodump .bson; with --uri "
                       "the server's collections are sampled with $sample")
    refuse_server_uris("--indexes ", settings.indexes, "give an index file; with --uri the server's indexes are read "
                       "with listIndexes")
    if settings.scratch_db is not None:
        from idxadvisor.replay.scratch import scratch_name  # (pymongo and the replay load only when a server is named)

        scratch_name(settings.scratch_db)  # admin, local, config: refused before the first command
    for option, uri in (("--uri", settings.uri), ("--scratch-uri", settings.scratch_uri)):
        if uri is not None:
            from idxadvisor.server.connection import check_uri

            check_uri(option, uri)
    if settings.uri is None:
        needs_uri = [name for name, given in (("--replay", settings.replay), ("--query-stats", settings.query_stats),
                                              ("--db", settings.db)) if given]
        if needs_uri:
            raise UsageError(f"{', '.join(needs_uri)} need{'s' if len(needs_uri) == 1 else ''} --uri: the server to "
                             "read")
