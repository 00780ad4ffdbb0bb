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
    ProgressBar,
    exit_code_for,
    output_stream,
    parse_time,
    refuse_server_uris,
)
from idxadvisor.config import load_settings
from idxadvisor.errors import UsageError
from idxadvisor.indexes.catalog import parse_shard_key_argument
from idxadvisor.report import render


@command()
def analyze(
    paths: Annotated[Optional[list[str]], typer.Argument(
        help="Log files, profiler dumps, explain output, globs, directories, .gz/.bz2/.xz files, tar archives, "
             "or - for stdin.", metavar="PATH", show_default=False)] = None,
    format: Annotated[Optional[str], typer.Option(
        "--format", "-f", metavar="FORMAT", help="text, json, markdown or sarif. \\[default: text]",
        rich_help_panel=OUTPUT)] = None,
    output: Annotated[Optional[Path], typer.Option(
        "--output", "-o", metavar="FILE", help="Write the report to FILE instead of stdout.",
        rich_help_panel=OUTPUT)] = None,
    top: Annotated[Optional[int], typer.Option(
        metavar="N", help="Show the N most important shapes and findings. \\[default: 20 in text and markdown, "
        "all in json and sarif]", rich_help_panel=OUTPUT)] = None,
    sort_by: Annotated[Optional[str], typer.Option(
        metavar="KEY", help="Rank shapes by total, count, mean, p95, max, docs-examined or ratio. \\[default: total]",
        rich_help_panel=OUTPUT)] = None,
    show_values: Annotated[Optional[bool], typer.Option(
        "--show-values", metavar=FLAG, help="Print literal query values (kept out of reports otherwise).",
        rich_help_panel=OUTPUT)] = None,
    verbose: Annotated[Optional[bool], typer.Option(
        "--verbose", "-v", metavar=FLAG, help="Show problem lines and the reason for every shape without a "
        "suggestion.", rich_help_panel=OUTPUT)] = None,
    min_ms: Annotated[Optional[float], typer.Option(
        metavar="MS", help="Leave out operations faster than MS milliseconds. \\[default: 0]",
        rich_help_panel=FILTERING)] = None,
    ns: Annotated[Optional[list[str]], typer.Option(
        metavar="GLOB", help="Only namespaces matching GLOB, such as 'shop.*' (repeatable).",
        rich_help_panel=FILTERING)] = None,
    exclude_ns: Annotated[Optional[list[str]], typer.Option(
        metavar="GLOB", help="Leave out namespaces matching GLOB (repeatable).", rich_help_panel=FILTERING)] = None,
    include_internal: Annotated[Optional[bool], typer.Option(
        "--include-internal", metavar=FLAG, help="Keep internal traffic: admin, local, config, system collections, "
        "internal threads and agents.", rich_help_panel=FILTERING)] = None,
    since: Annotated[Optional[str], typer.Option(
        metavar="TIME", help="Only operations at or after TIME (ISO 8601, UTC unless it has an offset).",
        rich_help_panel=FILTERING)] = None,
    until: Annotated[Optional[str], typer.Option(
        metavar="TIME", help="Only operations before TIME (ISO 8601).", rich_help_panel=FILTERING)] = None,
    fail_on: Annotated[Optional[str], typer.Option(
        metavar="LEVEL", help="Exit 1 when a finding is at least LEVEL: info, warning, error or never. "
        "\\[default: warning]", rich_help_panel=RULES)] = None,
    select: Annotated[Optional[list[str]], typer.Option(
        metavar="CODE", help="Run only these rules: codes, prefixes (IX) or names (repeatable).",
        rich_help_panel=RULES)] = None,
    ignore: Annotated[Optional[list[str]], typer.Option(
        metavar="CODE", help="Skip these rules: codes, prefixes or names (repeatable).", rich_help_panel=RULES)] = None,
    min_count: Annotated[Optional[int], typer.Option(
        metavar="N", help="Advise nothing for shapes run fewer than N times (getMores do not count). "
        "\\[default: 3]", rich_help_panel=RULES)] = None,
    indexes: Annotated[Optional[str], typer.Option(
        metavar="FILE", help="Existing indexes: a JSON file mapping each namespace to its listIndexes output.",
        rich_help_panel=EVIDENCE)] = None,
    data: Annotated[Optional[list[str]], typer.Option(
        metavar="[NS=]FILE", help="A sample of a collection's documents: Extended JSON or a mongodump .bson file; a "
        "directory holds <db>.<coll>.json files (repeatable).", rich_help_panel=EVIDENCE)] = None,
    min_savings_pct: Annotated[Optional[float], typer.Option(
        metavar="PCT", help="Drop index suggestions that do not cut keys plus documents examined by PCT percent. "
        "\\[default: 50]", rich_help_panel=EVIDENCE)] = None,
    sample_size: Annotated[Optional[int], typer.Option(
        metavar="N", help="Documents kept from each --data sample. \\[default: 10000]",
        rich_help_panel=EVIDENCE)] = None,
    shard_key: Annotated[Optional[list[str]], typer.Option(
        metavar="NS=PATTERN", help="The shard key of a collection, such as shop.orders='{customerId: 1}': indexes "
        "that carry it are never called redundant or unused (repeatable; replaces the shard-keys setting).",
        rich_help_panel=EVIDENCE)] = None,
    jobs: Annotated[Optional[int], typer.Option(
        "--jobs", "-j", metavar="N", help="Worker processes. \\[default: all cores]", rich_help_panel=INPUT)] = None,
    config: Annotated[Optional[Path], typer.Option(
        metavar="FILE", help="Settings file. \\[default: .idxadvisor.toml, or \\[tool.idxadvisor] in pyproject.toml]",
        rich_help_panel=INPUT)] = None,
    debug: Annotated[bool, typer.Option(
        "--debug", metavar=FLAG, help="Show tracebacks.", rich_help_panel=OUTPUT)] = False,
) -> int:
    """Read slow-operation logs or profiler dumps and report query shapes, findings and index suggestions."""
    refuse_server_uris("", paths or [], "give log files or profiler dumps, or - for stdin")
    refuse_server_uris("--data ", data or [], "give a sample file: Extended JSON or a mongodump .bson")
    refuse_server_uris("--indexes ", [indexes] if indexes else [],
                       "give a JSON file of namespace -> listIndexes output")
    overrides = {
        "format": format, "output": output, "top": top, "sort_by": sort_by, "show_values": show_values,
        "verbose": verbose, "min_ms": min_ms, "ns": ns, "exclude_ns": exclude_ns,
        "include_internal": include_internal, "since": parse_time(since, "--since"),
        "until": parse_time(until, "--until"), "fail_on": fail_on, "select": select, "ignore": ignore,
        "min_count": min_count, "indexes": Path(indexes) if indexes else None, "data": data,
        "min_savings_pct": min_savings_pct, "sample_size": sample_size, "jobs": jobs,
        "shard_keys": dict(parse_shard_key_argument(text) for text in shard_key) if shard_key else None,
    }
    settings = load_settings(overrides, config)
    refuse_server_uris("--data ", settings.data, "give a sample file: Extended JSON or a mongodump .bson")
    refuse_server_uris("--indexes ", [str(settings.indexes)] if settings.indexes else [],
                       "give a JSON file of namespace -> listIndexes output")
    inputs = paths or ["-"]
    if inputs == ["-"] and sys.stdin.isatty():
        raise UsageError("no input: name log files, or pipe a log into 'idxadvisor analyze -'")
    progress = ProgressBar()
    try:
        report = api.analyze(inputs, settings, progress)
    finally:
        progress.stop()
    with output_stream(settings.output) as out:
        render(report, out, format=settings.format, verbose=settings.verbose, top=settings.top,
               artifact=str(settings.indexes) if settings.indexes else None)
    for item in report.inputs:
        if item.error:
            error_line(f"{item.path}: {item.error}")
    return exit_code_for(report, settings.fail_on)
