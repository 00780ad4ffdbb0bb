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
    FILTERING,
    FLAG,
    INPUT,
    OUTPUT,
    RULES,
    SERVER,
    ProgressBar,
    exit_code_for,
    output_stream,
    parse_time,
    refuse_server_uris,
)
from idxadvisor.config import Settings, load_settings
from idxadvisor.errors import UsageError
from idxadvisor.report import render

# Options analyze shares with replay (and the server options with indexes and export-script).
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
IndexesOption = Annotated[Optional[list[str]], typer.Option(
    "--indexes", metavar="[NS=]FILE", help="Existing indexes: a JSON file mapping each namespace to its listIndexes "
    "output (idxadvisor indexes writes one), an mdbkit export, or getIndexes() output (NS= names its collection) "
    "(repeatable).", rich_help_panel=EVIDENCE)]
FormatOption = Annotated[Optional[str], typer.Option(
    "--format", "-f", metavar="FORMAT", help="text, json, markdown or sarif. \\[default: text]",
    rich_help_panel=OUTPUT)]
OutputOption = Annotated[Optional[Path], typer.Option(
    "--output", "-o", metavar="FILE", help="Write the report to FILE instead of stdout.",
    rich_help_panel=OUTPUT)]
ShowValuesOption = Annotated[Optional[bool], typer.Option(
    "--show-values", metavar=FLAG, help="Print literal query values (kept out of reports otherwise).",
    rich_help_panel=OUTPUT)]
VerboseOption = Annotated[Optional[bool], typer.Option(
    "--verbose", "-v", metavar=FLAG, help="Show problem lines and the reason for every shape without a "
    "suggestion.", rich_help_panel=OUTPUT)]
NsOption = Annotated[Optional[list[str]], typer.Option(
    metavar="GLOB", help="Only namespaces matching GLOB, such as 'shop.*' (repeatable).",
    rich_help_panel=FILTERING)]
SinceOption = Annotated[Optional[str], typer.Option(
    metavar="TIME", help="Only operations at or after TIME: ISO 8601 (UTC unless it has an offset) or an age "
    "such as 30m, 2h, 7d.", rich_help_panel=FILTERING)]
FailOnOption = Annotated[Optional[str], typer.Option(
    metavar="LEVEL", help="Exit 1 when a finding is at least LEVEL: info, warning, error or never. "
    "\\[default: warning]", rich_help_panel=RULES)]
DataOption = Annotated[Optional[list[str]], typer.Option(
    metavar="[NS=]FILE", help="A sample of a collection's documents: Extended JSON or a mongodump .bson file; a "
    "directory holds <db>.<coll>.json files (repeatable).", rich_help_panel=EVIDENCE)]
MinSavingsOption = Annotated[Optional[float], typer.Option(
    metavar="PCT", help="Drop index suggestions that do not cut keys plus documents examined by PCT percent. "
    "\\[default: 50]", rich_help_panel=EVIDENCE)]
SampleSizeOption = Annotated[Optional[int], typer.Option(
    metavar="N", help="Documents kept from each --data sample, or drawn from each collection with $sample with --uri. "
    "\\[default: 10000]", rich_help_panel=EVIDENCE)]
ConfigOption = Annotated[Optional[Path], typer.Option(
    metavar="FILE", help="Settings file. \\[default: .idxadvisor.toml, or \\[tool.idxadvisor] in pyproject.toml]",
    rich_help_panel=INPUT)]
DebugOption = Annotated[bool, typer.Option(
    "--debug", metavar=FLAG, help="Show tracebacks.", rich_help_panel=OUTPUT)]


@command()
def analyze(
    paths: Annotated[Optional[list[str]], typer.Argument(
        help="Log files, profiler dumps, explain output, globs, directories, .gz/.bz2/.xz files, tar archives, "
             "or - for stdin.", metavar="PATH", show_default=False)] = None,
    format: FormatOption = None,
    output: OutputOption = None,
    top: Annotated[Optional[int], typer.Option(
        metavar="N", help="Show the N most important shapes and findings. \\[default: 20 in text and markdown, "
        "all in json and sarif]", rich_help_panel=OUTPUT)] = None,
    sort_by: Annotated[Optional[str], typer.Option(
        metavar="KEY", help="Rank shapes by total, count, mean, p95, max, docs-examined or ratio. \\[default: total]",
        rich_help_panel=OUTPUT)] = None,
    show_values: ShowValuesOption = None,
    verbose: VerboseOption = None,
    min_ms: Annotated[Optional[float], typer.Option(
        metavar="MS", help="Leave out operations faster than MS milliseconds. \\[default: 0]",
        rich_help_panel=FILTERING)] = None,
    ns: NsOption = None,
    exclude_ns: Annotated[Optional[list[str]], typer.Option(
        metavar="GLOB", help="Leave out namespaces matching GLOB (repeatable).", rich_help_panel=FILTERING)] = None,
    include_internal: Annotated[Optional[bool], typer.Option(
        "--include-internal", metavar=FLAG, help="Keep internal traffic: admin, local, config, system collections, "
        "internal threads and agents.", rich_help_panel=FILTERING)] = None,
    since: SinceOption = None,
    until: Annotated[Optional[str], typer.Option(
        metavar="TIME", help="Only operations before TIME (ISO 8601).", rich_help_panel=FILTERING)] = None,
    fail_on: FailOnOption = None,
    select: Annotated[Optional[list[str]], typer.Option(
        metavar="CODE", help="Run only these rules: codes, prefixes (IX) or names (repeatable).",
        rich_help_panel=RULES)] = None,
    ignore: Annotated[Optional[list[str]], typer.Option(
        metavar="CODE", help="Skip these rules: codes, prefixes or names (repeatable).", rich_help_panel=RULES)] = None,
    min_count: Annotated[Optional[int], typer.Option(
        metavar="N", help="Advise nothing for shapes run fewer than N times (getMores do not count). "
        "\\[default: 3]", rich_help_panel=RULES)] = None,
    indexes: IndexesOption = None,
    data: DataOption = None,
    min_savings_pct: MinSavingsOption = None,
    sample_size: SampleSizeOption = None,
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
    jobs: Annotated[Optional[int], typer.Option(
        "--jobs", "-j", metavar="N", help="Worker processes. \\[default: all cores]", rich_help_panel=INPUT)] = None,
    max_line_bytes: Annotated[Optional[int], typer.Option(
        metavar="BYTES", help="Skip lines longer than BYTES, counting each as a problem (a file of one endless "
        "line must not fill memory). \\[default: 67108864, 64 MiB]", rich_help_panel=INPUT)] = None,
    config: ConfigOption = None,
    debug: DebugOption = False,
) -> int:
    """Read slow-operation logs, profiler dumps or a live server; report query shapes, findings and indexes."""
    overrides = {
        "format": format, "output": output, "top": top, "sort_by": sort_by, "show_values": show_values,
        "verbose": verbose, "min_ms": min_ms, "ns": ns, "exclude_ns": exclude_ns,
        "include_internal": include_internal, "since": parse_time(since, "--since"),
        "until": parse_time(until, "--until"), "fail_on": fail_on, "select": select, "ignore": ignore,
        "min_count": min_count, "indexes": indexes, "data": data,
        "min_savings_pct": min_savings_pct, "sample_size": sample_size, "jobs": jobs, "uri": uri, "db": db,
        "query_stats": query_stats, "replay": replay, "scratch_db": scratch_db, "scratch_uri": scratch_uri,
        "max_line_bytes": max_line_bytes,
    }
    return run_analysis(paths or [], overrides, config)


def run_analysis(paths: list[str], overrides: dict[str, object], config: Path | None) -> int:
    """Check the arguments, run ``api.analyze``, render the report, and return the exit code (analyze, replay)."""
    settings = load_settings(overrides, config)
    check_arguments(paths, settings)
    inputs = paths or ([] if settings.uri else ["-"])
    if inputs == ["-"] and sys.stdin.isatty():
        raise UsageError("no input: name log files, pipe a log into 'idxadvisor analyze -', or read a server with "
                         "--uri")
    progress = ProgressBar()
    try:
        report = api.analyze(inputs, settings, progress)
    finally:
        progress.stop()
    with output_stream(settings.output) as out:
        render(report, out, format=settings.format, verbose=settings.verbose, top=settings.top,
               artifact=settings.indexes[0].rpartition("=")[2] if settings.indexes else None)
    for item in report.inputs:
        if item.error:
            error_line(f"{item.path}: {item.error}")
    return exit_code_for(report, settings.fail_on)


def check_arguments(paths: list[str], settings: Settings) -> None:
    """A server where a file is expected, or server options without a server: one usage line."""
    for path in paths:
        refuse_server_uris("", [path], f"use --uri {path}")
    refuse_server_uris("--data ", settings.data, "give a sample file: Extended JSON or a mongodump .bson; with --uri "
                       "the server's collections are sampled with $sample")
    refuse_server_uris("--indexes ", settings.indexes, "give an index file; with --uri the server's indexes are read "
                       "with listIndexes")
    if settings.uri is None:
        needs_uri = [name for name, given in (("--replay", settings.replay), ("--query-stats", settings.query_stats),
                                              ("--db", settings.db)) if given]
        if needs_uri:
            raise UsageError(f"{', '.join(needs_uri)} need{'s' if len(needs_uri) == 1 else ''} --uri: the server to "
                             "read")
