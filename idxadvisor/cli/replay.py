"""``idxadvisor replay``: analyze, then prove the top findings' indexes on a scratch copy with the server's explain."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from idxadvisor.cli.analyze import run_analysis
from idxadvisor.cli.app import command
from idxadvisor.cli.common import (
    OUTPUT,
    ConfigOption,
    DataOption,
    DbOption,
    DebugOption,
    FailOnOption,
    FormatOption,
    IndexesOption,
    MinSavingsOption,
    NsOption,
    OutputOption,
    SampleSizeOption,
    ScratchDbOption,
    ScratchUriOption,
    ShowValuesOption,
    SinceOption,
    UriOption,
    VerboseOption,
    parse_time,
)


@command()
def replay(
    paths: Annotated[Optional[list[str]], typer.Argument(
        help="Log files, profiler dumps or explain output (the workload), read with the server's system.profile.",
        metavar="PATH", show_default=False)] = None,
    uri: UriOption = None,
    db: DbOption = None,
    scratch_db: ScratchDbOption = None,
    scratch_uri: ScratchUriOption = None,
    top: Annotated[Optional[int], typer.Option(
        metavar="N", help="Replay the N findings with the most impact that propose an index. \\[default: 20]",
        rich_help_panel=OUTPUT)] = None,
    format: FormatOption = None,
    output: OutputOption = None,
    verbose: VerboseOption = None,
    show_values: ShowValuesOption = None,
    ns: NsOption = None,
    since: SinceOption = None,
    fail_on: FailOnOption = None,
    indexes: IndexesOption = None,
    data: DataOption = None,
    sample_size: SampleSizeOption = None,
    min_savings_pct: MinSavingsOption = None,
    config: ConfigOption = None,
    debug: DebugOption = False,
) -> int:
    """Prove the top findings' indexes with the server's explain("executionStats") on a scratch copy of a $sample."""
    overrides = {
        "uri": uri, "db": db, "scratch_db": scratch_db, "scratch_uri": scratch_uri, "top": top, "format": format,
        "output": output, "verbose": verbose, "show_values": show_values, "ns": ns,
        "since": parse_time(since, "--since"), "fail_on": fail_on, "indexes": indexes, "data": data,
        "sample_size": sample_size, "min_savings_pct": min_savings_pct, "replay": True,
    }
    return run_analysis(paths or [], overrides, config)
