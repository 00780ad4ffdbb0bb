"""``idxadvisor check``: gate a change of index definitions in CI against a recorded workload."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from idxadvisor.cli.analyze import report_input_errors
from idxadvisor.cli.app import command, examples, warning_line
from idxadvisor.cli.common import (
    CHANGE,
    INPUT,
    RULES,
    AppOption,
    ConfigOption,
    DataOption,
    DebugOption,
    ExcludeNsOption,
    FormatOption,
    IgnoreOption,
    IncludeInternalOption,
    IndexSelectionOption,
    JobsOption,
    MaxNewIndexesOption,
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
    MinSavingOption,
    WriteCostFactorOption,
    exit_code_for,
    output_stream,
    refuse_server_uris,
    shared_overrides,
)
from idxadvisor.errors import UsageError
from idxadvisor.report import render


@command(epilog=examples(
    "idxadvisor check --workload fixtures/demo/shop.log --indexes fixtures/demo/indexes.json "
    "--proposed-indexes fixtures/demo/migrations/",
    "idxadvisor check --workload db/workload.json --indexes base-indexes.json --proposed-indexes db/indexes.json "
    "-f sarif -o idxadvisor.sarif"))
def check(
    workload: Annotated[Optional[list[str]], typer.Option(
        metavar="PATH", help="The recorded workload: a workload file (analyze --save-workload), logs, profiler dumps, "
        "a directory or a glob of them (repeatable).", rich_help_panel=INPUT, show_default=False)] = None,
    proposed_indexes: Annotated[Optional[list[str]], typer.Option(
        metavar="PATH", help="The proposed indexes: an index file (namespace -> listIndexes output), or mongosh or "
        "migrate-mongo migration scripts (.js files or directories of them, applied in name order to today's "
        "--indexes) (repeatable).", rich_help_panel=CHANGE, show_default=False)] = None,
    indexes: Annotated[Optional[list[str]], typer.Option(
        metavar="FILE", help="Today's indexes, as analyze --indexes reads them (an index file): only what the change "
        "makes worse counts towards the exit code. Without --proposed-indexes, the old meaning: FILE is the "
        "proposed set. \\[default: the indexes the workload's plans show; every finding counts]",
        rich_help_panel=CHANGE, show_default=False)] = None,
    baseline_indexes: Annotated[Optional[Path], typer.Option(
        metavar="FILE", help="Today's indexes: the old name of --indexes.", rich_help_panel=CHANGE,
        hidden=True)] = None,
    db: Annotated[Optional[str], typer.Option(
        metavar="NAME", help="The database of migration-script calls that do not say it ('use' or getSiblingDB).",
        rich_help_panel=CHANGE)] = None,
    baseline: Annotated[Optional[Path], typer.Option(
        metavar="FILE", help="Accept the findings recorded in FILE (--write-baseline): they are reported, and do not "
        "count towards the exit code.", rich_help_panel=RULES)] = None,
    write_baseline: Annotated[Optional[Path], typer.Option(
        metavar="FILE", help="Record this run's findings in FILE, to pass as --baseline later (the run then passes).",
        rich_help_panel=RULES)] = None,
    fail_on: Annotated[Optional[str], typer.Option(
        metavar="LEVEL", help="Exit 1 when a finding that counts is at least LEVEL: info, warning, error or never. "
        "\\[default: error]", rich_help_panel=RULES)] = None,
    select: SelectOption = None,
    ignore: IgnoreOption = None,
    min_count: MinCountOption = None,
    data: DataOption = None,
    min_savings_pct: MinSavingsOption = None,
    sample_size: SampleSizeOption = None,
    min_ms: MinMsOption = None,
    ns: NsOption = None,
    exclude_ns: ExcludeNsOption = None,
    app: AppOption = None,
    include_internal: IncludeInternalOption = None,
    since: SinceOption = None,
    until: UntilOption = None,
    index_selection: IndexSelectionOption = None,
    max_new_indexes: MaxNewIndexesOption = None,
    write_cost_factor: WriteCostFactorOption = None,
    min_saving: MinSavingOption = None,
    format: FormatOption = None,
    output: OutputOption = None,
    top: TopOption = None,
    show_values: ShowValuesOption = None,
    verbose: VerboseOption = None,
    jobs: JobsOption = None,
    config: ConfigOption = None,
    debug: DebugOption = False,
) -> int:
    """Gate a change of index definitions against a recorded workload: exit 0 pass, 1 fail, 2 bad input."""
    from idxadvisor import api
    from idxadvisor.config import load_settings
    from idxadvisor.gate.run import CheckRequest

    refuse_server_uris("--workload ", workload or [], "give a workload file, logs or profiler dumps")
    overrides = shared_overrides(
        format=format, output=output, top=top, show_values=show_values, verbose=verbose, min_ms=min_ms, ns=ns,
        exclude_ns=exclude_ns, app=app, include_internal=include_internal, since=since, until=until, fail_on=fail_on,
        select=select, ignore=ignore, min_count=min_count, data=data, min_savings_pct=min_savings_pct,
        sample_size=sample_size, jobs=jobs)
    overrides.update({"index_selection": index_selection, "max_new_indexes": max_new_indexes,
                      "write_cost_factor": write_cost_factor, "min_saving": min_saving})
    settings = load_settings(overrides, config, defaults={"fail_on": "error"})
    proposed, today = index_arguments(proposed_indexes or [], indexes or [], baseline_indexes)
    if proposed_indexes and today is None and len(settings.indexes) == 1:  # the settings' today's indexes
        today = Path(settings.indexes[0].rpartition("=")[2])
    request = CheckRequest(workloads=workload or [], indexes=proposed, baseline_indexes=today,
                           baseline=baseline, write_baseline=write_baseline, database=db)
    progress = ProgressBar()
    try:
        report = api.check(request, settings, progress)
    finally:
        progress.stop()
    artifact = next(iter(proposed), None)
    with output_stream(settings.output) as out:
        render(report, out, format=settings.format, verbose=settings.verbose, top=settings.top, artifact=artifact,
               fail_on=settings.fail_on)
    report_input_errors(report)
    return exit_code_for(report, settings.fail_on)


def index_arguments(proposed: list[str], indexes: list[str],
                    baseline_indexes: Path | None) -> tuple[list[str], Path | None]:
    """The proposed indexes and today's index file. ``--indexes`` names today's indexes, as in analyze; without
    ``--proposed-indexes`` it keeps the meaning it had before (the proposed set, beside ``--baseline-indexes``), so
    that pipelines written for it still judge the same change."""
    if not proposed and indexes:
        if baseline_indexes is None:  # beside --baseline-indexes the old spelling is plain; alone, say what it means
            warning_line(f"check --indexes without --proposed-indexes reads {', '.join(indexes)} as the proposed "
                         "indexes (the old spelling): write --proposed-indexes for the change and --indexes for "
                         "today's indexes")
        return indexes, baseline_indexes
    today = [*indexes, *([str(baseline_indexes)] if baseline_indexes is not None else [])]
    if len(today) > 1:
        raise UsageError(f"--indexes: today's indexes are one index file, not {len(today)} ({', '.join(today)})")
    return proposed, Path(today[0]) if today else None
