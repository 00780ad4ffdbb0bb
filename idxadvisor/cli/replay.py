"""``idxadvisor replay``: analyze, then prove the top findings' indexes on a scratch copy with the server's explain."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from idxadvisor.cli.analyze import (
    DbOption,
    IndexesOption,
    ScratchDbOption,
    ScratchUriOption,
    UriOption,
    run_analysis,
)
from idxadvisor.cli.app import command
from idxadvisor.cli.common import EVIDENCE, FILTERING, FLAG, INPUT, OUTPUT, RULES, parse_time


@command()
def replay(
    paths: Annotated[Optional[list[str]], typer.Argument(
        help="Log files, profiler dumps or explain output (the workload); without them, the server's "
             "system.profile.", metavar="PATH", show_default=False)] = None,
    uri: UriOption = None,
    db: DbOption = None,
    scratch_db: ScratchDbOption = None,
    scratch_uri: ScratchUriOption = None,
    top: Annotated[Optional[int], typer.Option(
        metavar="N", help="Replay the N findings with the most impact that propose an index. \\[default: 20]",
        rich_help_panel=OUTPUT)] = None,
    format: Annotated[Optional[str], typer.Option(
        "--format", "-f", metavar="FORMAT", help="text, json, markdown or sarif. \\[default: text]",
        rich_help_panel=OUTPUT)] = None,
    output: Annotated[Optional[Path], typer.Option(
        "--output", "-o", metavar="FILE", help="Write the report to FILE instead of stdout.",
        rich_help_panel=OUTPUT)] = None,
    verbose: Annotated[Optional[bool], typer.Option(
        "--verbose", "-v", metavar=FLAG, help="Show problem lines and the reason for every shape without a "
        "suggestion.", rich_help_panel=OUTPUT)] = None,
    show_values: Annotated[Optional[bool], typer.Option(
        "--show-values", metavar=FLAG, help="Print literal query values (kept out of reports otherwise).",
        rich_help_panel=OUTPUT)] = None,
    ns: Annotated[Optional[list[str]], typer.Option(
        metavar="GLOB", help="Only namespaces matching GLOB, such as 'shop.*' (repeatable).",
        rich_help_panel=FILTERING)] = None,
    since: Annotated[Optional[str], typer.Option(
        metavar="TIME", help="Only operations at or after TIME: ISO 8601 or an age such as 30m, 2h, 7d.",
        rich_help_panel=FILTERING)] = None,
    fail_on: Annotated[Optional[str], typer.Option(
        metavar="LEVEL", help="Exit 1 when a finding is at least LEVEL: info, warning, error or never. "
        "\\[default: warning]", rich_help_panel=RULES)] = None,
    indexes: IndexesOption = None,
    data: Annotated[Optional[list[str]], typer.Option(
        metavar="[NS=]FILE", help="A sample to copy instead of the collection's $sample (repeatable).",
        rich_help_panel=EVIDENCE)] = None,
    sample_size: Annotated[Optional[int], typer.Option(
        metavar="N", help="Documents sampled from each collection and copied. \\[default: 10000]",
        rich_help_panel=EVIDENCE)] = None,
    min_savings_pct: Annotated[Optional[float], typer.Option(
        metavar="PCT", help="Drop index suggestions that do not cut keys plus documents examined by PCT percent. "
        "\\[default: 50]", rich_help_panel=EVIDENCE)] = None,
    config: Annotated[Optional[Path], typer.Option(
        metavar="FILE", help="Settings file. \\[default: .idxadvisor.toml, or \\[tool.idxadvisor] in pyproject.toml]",
        rich_help_panel=INPUT)] = None,
    debug: Annotated[bool, typer.Option(
        "--debug", metavar=FLAG, help="Show tracebacks.", rich_help_panel=OUTPUT)] = False,
) -> int:
    """Prove the top findings' indexes with the server's explain("executionStats") on a scratch copy.

    Today's plan and each candidate index run with hint on a $sample copied to a scratch database, beside the
    estimator's prediction. The source only ever receives reads; the scratch database is always dropped."""
    overrides = {
        "uri": uri, "db": db, "scratch_db": scratch_db, "scratch_uri": scratch_uri, "top": top, "format": format,
        "output": output, "verbose": verbose, "show_values": show_values, "ns": ns,
        "since": parse_time(since, "--since"), "fail_on": fail_on, "indexes": indexes, "data": data,
        "sample_size": sample_size, "min_savings_pct": min_savings_pct, "replay": True,
    }
    return run_analysis(paths or [], overrides, config)
