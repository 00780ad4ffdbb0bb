"""The library API: what the command line calls, and what other programs can call instead of it.

Nothing here prints. Progress, if wanted, is reported through a ``Progress`` object the caller passes in.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from idxadvisor.config import Settings
from idxadvisor.errors import InputError, UsageError
from idxadvisor.indexes.catalog import IndexCatalog, load_index_arguments, shard_key_patterns
from idxadvisor.indexes.inventory import build_inventory
from idxadvisor.indexes.sampling import SampleStatistics
from idxadvisor.ingest.sources import Source, expand_sources, sort_out_non_logs
from idxadvisor.models.inputs import InputSummary
from idxadvisor.models.report import Report, SampleReport, WorkloadUpdate
from idxadvisor.parse.block import BlockOptions
from idxadvisor.parse.run import Runner, RunOptions, estimated_bytes
from idxadvisor.report.build import (
    build_report,
    count_served_shapes,
    inventory_report,
    select_shapes,
    shape_is_selected,
)
from idxadvisor.rules import select_rules
from idxadvisor.rules.base import Rule, RuleContext
from idxadvisor.rules.engine import run_rules
from idxadvisor.runtime import collector_paused
from idxadvisor.shapes.digest import Digest, DigestOptions
from idxadvisor.workload import (
    Workload,
    check_filters,
    is_workload_file,
    load_workload,
    save_workload,
    workload_lock,
)

if TYPE_CHECKING:
    from idxadvisor.gate.run import CheckRequest
    from idxadvisor.models.compare import Comparison
    from idxadvisor.selection import WorkloadSelection
    from idxadvisor.server.live import LiveServer


_URL = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]+://")
NOTHING_TO_ANALYZE = "nothing to analyze"


class Progress(Protocol):
    def start(self, total_bytes: float) -> None: ...
    def advance(self, done_bytes: int) -> None: ...


def analyze(paths: Sequence[str], settings: Settings, progress: Progress | None = None, *,
            workload_file: Path | None = None) -> Report:
    """Read the inputs (logs, profiler dumps, explain output, workload files, and the live server of
    ``settings.uri``, read-only), shape and digest their operations, run the rules, gather evidence (and replay it on
    a scratch copy with ``settings.replay``), and return the report; with ``workload_file``, also save the digest
    there as a workload file."""
    rules = select_rules(settings.select, settings.ignore, settings.rules)
    shard_key_patterns(settings.shard_keys)  # a bad shard key is a usage error before anything is read
    indexes_left_out: list[str] = []
    catalog: IndexCatalog = load_index_arguments(settings.indexes, indexes_left_out)
    if settings.uri is None:
        report = _analyze(paths, settings, progress, rules, catalog, None, workload_file)
    else:
        from idxadvisor.server.live import LiveServer  # pymongo's client: only with --uri

        with LiveServer.open(settings) as live:
            report = _analyze(paths, settings, progress, rules, catalog, live, workload_file)
    report.indexes_left_out = indexes_left_out
    return report


def advise(digest: Digest, summaries: list[InputSummary], settings: Settings) -> Report:
    """The report of a digest already read (``idxadvisor watch``: what a followed log has shown so far): the rules,
    the evidence and the index advice ``analyze`` gives for it, without reading any input."""
    rules = select_rules(settings.select, settings.ignore, settings.rules)
    indexes_left_out: list[str] = []
    catalog = load_index_arguments(settings.indexes, indexes_left_out)
    with collector_paused():
        report = _advise(digest, summaries, settings, rules, catalog, None)
    report.indexes_left_out = indexes_left_out
    return report


def _analyze(paths: Sequence[str], settings: Settings, progress: Progress | None, rules: list[Rule],
             catalog: IndexCatalog, live: LiveServer | None, workload_file: Path | None) -> Report:
    skipped: list[str] = []
    if workload_file is None:
        digest, summaries = _read_all(paths, settings, progress, live, skipped)
        with collector_paused():  # thousands of shapes and findings, no cycles: see runtime.collector_paused
            report = _advise(digest, summaries, settings, rules, catalog, live)
        report.inputs_skipped = skipped
        return report
    # one run at a time reads, merges and writes the file: concurrent runs would each lose the others' inputs
    with workload_lock(workload_file):
        if workload_file.exists():
            return _extend_and_analyze(paths, settings, progress, rules, catalog, live, workload_file)
        digest, summaries = _read_all(paths, settings, progress, live, skipped)
        error = _saved(workload_file, digest, summaries)
    with collector_paused():
        report = _advise(digest, summaries, settings, rules, catalog, live)
    report.inputs_skipped = skipped
    if error is not None:
        report.workload = WorkloadUpdate(path=str(workload_file), error=error)
    return report


def _read_all(paths: Sequence[str], settings: Settings, progress: Progress | None, live: LiveServer | None,
              skipped: list[str]) -> tuple[Digest, list[InputSummary]]:
    """Every input and, with a server, its profiler; no operation read from logs alone is an input error."""
    digest, summaries = read_inputs(paths, settings, progress, skipped)
    if live is not None:
        summaries += live.read_workload(settings, digest, _block_options(settings))
    else:
        require_operations(summaries, skipped, quiet_logs_allowed=True)
    return digest, summaries


def _saved(workload_file: Path, digest: Digest, inputs: list[InputSummary]) -> str | None:
    """Save the workload file; why it could not be, as the report's error (the report is written all the same)."""
    try:
        save_workload(workload_file, digest, inputs)
    except UsageError as exc:
        return str(exc)
    return None


def _extend_and_analyze(paths: Sequence[str], settings: Settings, progress: Progress | None, rules: list[Rule],
                        catalog: IndexCatalog, live: LiveServer | None, workload_file: Path) -> Report:
    """The incremental mode: add to the workload file the inputs it has not counted (the new lines of a grown log),
    save it, and report on the whole workload it now holds (workload/merge.py says what counts as counted)."""
    from idxadvisor.workload.merge import plan_extension

    if settings.dask_scheduler is not None:
        raise UsageError(f"--save-workload: {workload_file} exists, and adding to a workload file is done here, not on "
                         "a Dask cluster: save to a new file and merge the two with 'idxadvisor merge'")
    extension = plan_extension(workload_file, expand_sources(list(paths)), digest_options(settings))
    skipped: list[str] = []
    digest, summaries = read_sources(extension.to_read, settings, progress, skipped)
    if live is not None:
        summaries += live.read_workload(settings, digest, _block_options(settings))
    digest, inputs = extension.apply(digest, summaries)
    if live is None:
        require_operations(inputs, skipped, quiet_logs_allowed=True)
    error = _saved(workload_file, digest, inputs)
    earlier = len(extension.workload.inputs)
    shown = [replace(summary, path=f"{workload_file}:{summary.path}") if position < earlier else summary
             for position, summary in enumerate(inputs)]
    with collector_paused():
        report = _advise(digest, shown, settings, rules, catalog, live)
    report.workload = WorkloadUpdate(path=str(workload_file), added=[summary.path for summary in summaries],
                                     skipped=extension.skipped, error=error)
    report.inputs_skipped = skipped
    return report


def _advise(digest: Digest, summaries: list[InputSummary], settings: Settings, rules: list[Rule],
            catalog: IndexCatalog, live: LiveServer | None) -> Report:
    """Select the shapes, run the rules, gather evidence (estimated, and replayed on a server) and build the report."""
    inventory = None
    if not settings.indexes and live is None:  # no index file, no server: the indexes the log itself shows
        inventory = build_inventory([sighting for summary in summaries for sighting in summary.index_sightings],
                                    digest.shapes.values())
        catalog = inventory.catalog()
    selection = select_shapes(digest, settings)
    samples, sample_reports = load_samples(settings, {stats.shape.ns for stats in digest.shapes.values()})
    if live is not None:
        selected = {stats.shape.ns for stats in selection.shapes}
        catalog = live.complete_catalog(selected, catalog)
        found, reports = live.samples(selected, settings.sample_size, samples)
        samples.update(found)
        sample_reports += reports
    context = RuleContext(settings, catalog, samples)
    chooser = index_chooser(settings, samples)
    findings, skips = run_rules(selection.shapes, context, rules, chooser)
    scratch = None
    if samples:
        # imported here: the estimator (mongomock, bson) is only needed with --data, and costs a tenth of a second
        from idxadvisor.whatif.command import parse_server_version
        from idxadvisor.whatif.evidence import EvidenceOptions, gather_evidence

        shapes = {stats.shape.fingerprint: stats for stats in selection.shapes}
        options = EvidenceOptions(settings.min_savings_pct, parse_server_version(settings.server_version),
                                  settings.show_values)
        findings, dropped = gather_evidence(findings, shapes, samples, catalog, options)
        skips += dropped
        if settings.replay and live is not None:
            from idxadvisor.replay import ReplayOptions, replay_findings
            from idxadvisor.replay.run import DEFAULT_TOP

            replay = ReplayOptions(settings.scratch_uri or live.source.uri, live.source_databases(settings),
                                   settings.scratch_db, settings.top or DEFAULT_TOP)
            findings, dropped, scratch = replay_findings(findings, shapes, samples, catalog, options, replay)
            skips += dropped
    report = build_report(summaries, selection, settings, findings, selection.skips + skips)
    report.samples = sample_reports
    if inventory is not None:
        report.index_inventory = inventory_report(inventory)
    with_index_sets(report, settings, chooser)
    if live is not None:
        from idxadvisor.replay.calibration import summarise

        report.server = live.report(summaries, scratch, summarise(report.findings) if scratch else None)
    return report


def index_chooser(settings: Settings, samples: dict[str, SampleStatistics]) -> WorkloadSelection | None:
    """The index selection of ``--index-selection workload`` (None: per-finding advice)."""
    if settings.index_selection != "workload":
        return None
    from idxadvisor.selection import WorkloadSelection

    return WorkloadSelection(settings, samples)


def with_index_sets(report: Report, settings: Settings, chooser: WorkloadSelection | None) -> None:
    """Say which index selection ran, and give each collection's set (for the findings that remain)."""
    report.index_selection = settings.index_selection
    if chooser is not None:
        report.index_sets = chooser.index_sets(report.findings)
        count_served_shapes(report)


def _block_options(settings: Settings) -> BlockOptions:
    return BlockOptions(reference_year=datetime.now(timezone.utc).year, keep_excerpts=settings.show_values)


def check(request: CheckRequest, settings: Settings, progress: Progress | None = None) -> Report:
    """Judge a change of index definitions (``request.indexes``) against a recorded workload: the report of the
    workload with the gating rules' findings, each finding's status, and the verdict in ``report.gate``."""
    from idxadvisor.gate.run import evaluate  # the gate is only needed by check

    if not request.workloads:
        raise UsageError("--workload: name the recorded workload (a workload file, logs or profiler dumps)")
    skipped: list[str] = []
    digest, summaries = read_inputs(request.workloads, settings, progress, skipped)
    require_operations(summaries, skipped, quiet_logs_allowed=False)
    with collector_paused():  # see analyze
        selection = select_shapes(digest, settings)
        samples, sample_reports = load_samples(settings, {stats.shape.ns for stats in digest.shapes.values()})
        chooser = index_chooser(settings, samples)
        result = evaluate(selection.shapes, settings, request, samples, chooser)
        report = build_report(summaries, selection, settings, result.findings, selection.skips + result.skips)
    report.samples = sample_reports
    report.inputs_skipped = skipped
    report.gate = result.gate
    with_index_sets(report, settings, chooser)
    return report


def load_samples(settings: Settings, namespaces: set[str]) -> tuple[dict[str, SampleStatistics], list[SampleReport]]:
    """The --data samples, by namespace, and how each was read."""
    if not settings.data:
        return {}, []
    from idxadvisor.ingest.datasets import collection_stats, resolve_data_arguments, write_counts
    from idxadvisor.ingest.samples import load_sample  # bson: only with --data

    samples, reports = {}, []
    counts = collection_stats(settings.data)  # collstats.json beside the samples (idxadvisor export-script)
    for ns, path in resolve_data_arguments(settings.data, namespaces).items():
        sample = load_sample(path, sample_size=settings.sample_size)
        collection = counts.get(ns, {})
        if isinstance(collection.get("count"), int) and collection["count"] > sample.documents_seen:
            samples[ns] = SampleStatistics(sample.documents, collection.get("avgObjSize") or
                                           sample.average_document_size, collection["count"], origin="the collection",
                                           **write_counts(collection))
        else:
            samples[ns] = SampleStatistics(sample.documents, sample.average_document_size, sample.documents_seen)
        reports.append(SampleReport(ns=ns, path=str(path), documents=len(sample.documents),
                                    documents_seen=sample.documents_seen, problems=sample.problems))
    return samples, reports


def read_inputs(
    paths: Sequence[str], settings: Settings, progress: Progress | None = None, skipped: list[str] | None = None
) -> tuple[Digest, list[InputSummary]]:
    """Logs parsed on all cores and workload files loaded, merged into one digest: a summary per input (those a
    workload file was made from, named ``<workload file>:<input>``). The files of a directory that are not logs are
    left out (``skipped`` gets their names); an input named that is not one has the error ``NOT_A_LOG``."""
    if settings.dask_scheduler is not None:
        from idxadvisor.cluster import read_on_cluster  # Dask and fsspec: only with --dask-scheduler

        return read_on_cluster(list(paths), settings.dask_scheduler,
                               replace(_run_options(settings), block_size=settings.dask_block_size),
                               digest_options(settings), skipped)
    urls = [path for path in paths if _URL.match(path) and not Path(path).exists()]
    if urls:
        raise UsageError(f"{urls[0]}: URLs are read on a Dask cluster (--dask-scheduler tcp://host:8786, with "
                         "idxadvisor[dask] and idxadvisor[s3] installed); or copy the file here")
    return read_sources(expand_sources(list(paths)), settings, progress, skipped)


def read_sources(
    sources: list[Source], settings: Settings, progress: Progress | None = None, skipped: list[str] | None = None
) -> tuple[Digest, list[InputSummary]]:
    """``read_inputs`` of sources already expanded."""
    workloads = [source for source in sources if is_workload_file(source)]
    logs = [source for source in sources if source not in workloads]
    digest, summaries = read_workload(logs, settings, progress)
    summaries = sort_out_non_logs(summaries, {source.label for source in logs if not source.scanned}, skipped)
    for source in workloads:
        assert source.path is not None
        try:
            workload = load_workload(source.path)
        except InputError as exc:  # like a corrupt .gz: this input is an error, the others are read and reported
            reason = str(exc).removeprefix(f"{source.path}: ")
            summaries.append(InputSummary(source.label, "workload", error=reason))
            continue
        check_filters(workload, digest.options)
        digest.merge(workload.digest)
        summaries += workload.inputs
    return digest, summaries


def require_operations(summaries: Sequence[InputSummary], skipped: Sequence[str], quiet_logs_allowed: bool) -> None:
    """InputError ("nothing to analyze") when the inputs hold no operation at all, naming why; with
    ``quiet_logs_allowed`` (analyze), a real log that holds no slow operation is not an error: the report says so."""
    if sum(summary.operations for summary in summaries) > 0:
        return
    failed = [summary for summary in summaries if summary.error]
    quiet = [summary for summary in summaries if not summary.error]
    if quiet and quiet_logs_allowed:
        return
    if failed:
        more = f" (and {len(failed) - 1} more input{'s' if len(failed) > 2 else ''})" if len(failed) > 1 else ""
        raise InputError(f"{failed[0].path}: {failed[0].error}{more}: {NOTHING_TO_ANALYZE}")
    if quiet:
        names = ", ".join(summary.path for summary in quiet[:3]) + (", ..." if len(quiet) > 3 else "")
        raise InputError(f"{names}: no slow operation was read: {NOTHING_TO_ANALYZE}")
    shown = ", ".join(skipped[:3]) + (", ..." if len(skipped) > 3 else "")
    found = (f" (skipped {len(skipped):,} file{'s' if len(skipped) != 1 else ''} that "
             f"{'are' if len(skipped) != 1 else 'is'} not: {shown})" if skipped else "")
    raise InputError(f"no MongoDB log, profiler dump or explain output among the inputs{found}: {NOTHING_TO_ANALYZE}")


def read_workload(
    sources: list[Source], settings: Settings, progress: Progress | None = None
) -> tuple[Digest, list[InputSummary]]:
    """Parse every input on all cores into one digest of shapes, and a summary of each input."""
    if progress is not None:
        progress.start(estimated_bytes(sources))
    runner = Runner(_run_options(settings), partial(Digest, digest_options(settings)),
                    progress.advance if progress else None)
    summaries, digest = runner.run(sources)
    assert isinstance(digest, Digest)
    return digest, summaries


def _run_options(settings: Settings) -> RunOptions:
    run_options = RunOptions(block=_block_options(settings), max_line_bytes=settings.max_line_bytes)
    return replace(run_options, jobs=settings.jobs) if settings.jobs is not None else run_options


def digest_options(settings: Settings) -> DigestOptions:
    """The operation filters of a run (--min-ms, --since, --until, --app), as the digest applies them."""
    return DigestOptions(min_ms=settings.min_ms, since=settings.since, until=settings.until, apps=tuple(settings.app))


def merge(paths: Sequence[Path], output: Path) -> Workload:
    """Merge workload files into one and save it to ``output`` (``idxadvisor merge``): refused when they were recorded
    with different filters or counted the same input twice."""
    from idxadvisor.workload.merge import merge_workloads

    merged = merge_workloads(paths)
    save_workload(output, merged.digest, merged.inputs)
    return merged


def compare(before: Sequence[str], after: Sequence[str], settings: Settings) -> Comparison:
    """Two workloads of one application (logs, profiler dumps or workload files, before and after a change) compared
    shape by shape, within the namespaces the settings select (``idxadvisor compare``)."""
    from idxadvisor.compare import CompareOptions, Side, compare_workloads

    sides = []
    for paths in (before, after):
        digest, summaries = read_inputs(paths, settings, skipped=[])
        digest.shapes = {fingerprint: stats for fingerprint, stats in digest.shapes.items()
                         if shape_is_selected(stats, settings) is None}
        sides.append(Side(digest, summaries))
    require_operations([summary for side in sides for summary in side.inputs], [], quiet_logs_allowed=False)
    return compare_workloads(sides[0], sides[1], CompareOptions(settings.regression_pct, settings.min_executions))


def index_file(uri: str, databases: Sequence[str]) -> tuple[dict[str, list], list[str]]:
    """The index file of a live server (DESIGN.md "Index specification file"), each index with its ``$indexStats``
    accesses, and what the server would not give (``idxadvisor indexes``)."""
    from idxadvisor.server.readers import ServerRead, collection_namespaces, index_documents
    from idxadvisor.server.source import ReadOnlySource, user_databases

    with ReadOnlySource(uri) as source:
        source.hello()
        read = ServerRead(source.label)
        names = list(databases) or user_databases(source.database_names())
        return index_documents(source, collection_namespaces(source, names), read), read.missing


def export_script(databases: Sequence[str], sample_size: int, uri: str | None = None) -> str:
    """The read-only mongosh script that writes the index file, collection statistics and samples
    (``idxadvisor export-script``)."""
    from idxadvisor import __version__
    from idxadvisor.server.export_script import export_script as script

    return script(databases, sample_size, __version__, uri)
