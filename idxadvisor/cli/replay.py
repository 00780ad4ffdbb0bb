"""``idxadvisor replay``: analyze, then prove the top findings' indexes on a scratch copy with the server's explain."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from idxadvisor.cli.analyze import run_analysis
from idxadvisor.cli.app import command, examples
from idxadvisor.cli.common import (
    OUTPUT,
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
    IndexesOption,
    MinCountOption,
    MinMsOption,
    MinSavingsOption,
    NsOption,
    OutputOption,
    SampleSizeOption,
    ScratchDbOption,
    ScratchUriOption,
    SelectOption,
    ShowValuesOption,
    SinceOption,
    UntilOption,
    UriOption,
    VerboseOption,
    shared_overrides,
)


@command(epilog=examples(
    'idxadvisor replay mongod.log --uri "$URI" --scratch-uri "$SCRATCH_URI" --since 2h --min-ms 100'))
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
    sample_size: SampleSizeOption = None,
    min_savings_pct: MinSavingsOption = None,
    config: ConfigOption = None,
    debug: DebugOption = False,
) -> int:
    """Prove the top findings' indexes with the server's explain("executionStats") on a scratch copy of a $sample."""
    overrides = shared_overrides(
        format=format, output=output, top=top, show_values=show_values, verbose=verbose, min_ms=min_ms, ns=ns,
        exclude_ns=exclude_ns, include_internal=include_internal, since=since, until=until, fail_on=fail_on,
        select=select, ignore=ignore, min_count=min_count, data=data, min_savings_pct=min_savings_pct,
        sample_size=sample_size, jobs=None, app=app)
    overrides.update({"uri": uri, "db": db, "scratch_db": scratch_db, "scratch_uri": scratch_uri,
                      "indexes": indexes, "replay": True})
    return run_analysis(paths or [], overrides, config)
