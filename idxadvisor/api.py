"""The library API: what the command line calls, and what other programs can call instead of it.

Nothing here prints. Progress, if wanted, is reported through a ``Progress`` object the caller passes in.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timezone
from functools import partial
from typing import Protocol

from idxadvisor.config import Settings
from idxadvisor.ingest.datasets import resolve_data_arguments
from idxadvisor.indexes.catalog import IndexCatalog, load_index_file, shard_key_patterns
from idxadvisor.ingest.sources import Source, expand_sources
from idxadvisor.indexes.sampling import SampleStatistics
from idxadvisor.models.inputs import InputSummary
from idxadvisor.models.report import Report, SampleReport
from idxadvisor.parse.block import BlockOptions
from idxadvisor.parse.run import RunOptions, Runner, estimated_bytes
from idxadvisor.report.build import build_report, select_shapes
from idxadvisor.rules import select_rules
from idxadvisor.rules.base import RuleContext
from idxadvisor.rules.engine import run_rules
from idxadvisor.shapes.digest import Digest, DigestOptions


class Progress(Protocol):
    def start(self, total_bytes: float) -> None: ...
    def advance(self, done_bytes: int) -> None: ...


def analyze(paths: Sequence[str], settings: Settings, progress: Progress | None = None) -> Report:
    """Read the inputs, shape and digest their operations, run the rules, and return the report."""
    rules = select_rules(settings.select, settings.ignore, settings.rules)
    shard_key_patterns(settings.shard_keys)  # a bad shard key is a usage error before anything is read
    catalog: IndexCatalog = load_index_file(settings.indexes) if settings.indexes else {}
    sources = expand_sources(list(paths))
    digest, summaries = read_workload(sources, settings, progress)
    selection = select_shapes(digest, settings)
    samples, sample_reports = load_samples(settings, {stats.shape.ns for stats in digest.shapes.values()})
    context = RuleContext(settings, catalog, samples)
    findings, skips = run_rules(selection.shapes, context, rules)
    if samples:
        # imported here: the estimator (mongomock, bson) is only needed with --data, and costs a tenth of a second
        from idxadvisor.whatif.command import parse_server_version
        from idxadvisor.whatif.evidence import EvidenceOptions, gather_evidence

        shapes = {stats.shape.fingerprint: stats for stats in selection.shapes}
        options = EvidenceOptions(settings.min_savings_pct, parse_server_version(settings.server_version),
                                  settings.show_values)
        findings, dropped = gather_evidence(findings, shapes, samples, catalog, options)
        skips += dropped
    report = build_report(summaries, selection, settings, findings, selection.skips + skips)
    report.samples = sample_reports
    return report


def load_samples(settings: Settings, namespaces: set[str]) -> tuple[dict[str, SampleStatistics], list[SampleReport]]:
    """The --data samples, by namespace, and how each was read."""
    if not settings.data:
        return {}, []
    from idxadvisor.ingest.samples import load_sample  # bson: only with --data

    samples, reports = {}, []
    for ns, path in resolve_data_arguments(settings.data, namespaces).items():
        sample = load_sample(path, sample_size=settings.sample_size)
        samples[ns] = SampleStatistics(sample.documents, sample.average_document_size, sample.documents_seen)
        reports.append(SampleReport(ns=ns, path=str(path), documents=len(sample.documents),
                                    documents_seen=sample.documents_seen, problems=sample.problems))
    return samples, reports


def read_workload(
    sources: list[Source], settings: Settings, progress: Progress | None = None
) -> tuple[Digest, list[InputSummary]]:
    """Parse every input on all cores into one digest of shapes, and a summary of each input."""
    block_options = BlockOptions(reference_year=datetime.now(timezone.utc).year, keep_excerpts=settings.show_values)
    run_options = RunOptions(block=block_options) if settings.jobs is None else RunOptions(
        block=block_options, jobs=settings.jobs)
    digest_options = DigestOptions(min_ms=settings.min_ms, since=settings.since, until=settings.until)
    if progress is not None:
        progress.start(estimated_bytes(sources))
    runner = Runner(run_options, partial(Digest, digest_options), progress.advance if progress else None)
    summaries, digest = runner.run(sources)
    assert isinstance(digest, Digest)
    return digest, summaries
