"""A live server as analyze's inputs: its profiler as events, its indexes as the catalog, its collections' samples.

What the server will not give where the feature is optional (``$indexStats``, ``$queryStats``, a ``$sample`` of one
collection) is recorded in ``ServerRead.missing`` and reported; the run goes on without it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from idxadvisor.config import Settings
from idxadvisor.indexes.catalog import IndexCatalog
from idxadvisor.indexes.sampling import SampleStatistics
from idxadvisor.models.inputs import InputSummary
from idxadvisor.models.report import SampleReport
from idxadvisor.parse.block import BlockOptions
from idxadvisor.server.connection import CommandRefused
from idxadvisor.server.readers import (
    ServerRead,
    read_catalog,
    read_profiles,
    read_query_stats,
    read_sample,
    version_text,
)
from idxadvisor.server.source import INTERNAL_DATABASES, ReadOnlySource, user_databases
from idxadvisor.shapes.digest import Digest, DigestOptions

NAMESPACE_NOT_FOUND = 26


def open_source(settings: Settings) -> tuple[ReadOnlySource, ServerRead]:
    """Connect and say hello: an unreachable server is a ``ServerError`` (exit 3) here, within seconds."""
    assert settings.uri is not None
    source = ReadOnlySource(settings.uri)
    try:
        source.hello()
        read = ServerRead(source.label, version_text(source))
        read.databases = list(settings.db) or user_databases(source.database_names())
    except BaseException:
        source.close()
        raise
    return source, read


def read_live_workload(source: ReadOnlySource, read: ServerRead, settings: Settings, digest: Digest,
                       block_options: BlockOptions) -> list[InputSummary]:
    """Every database's ``system.profile`` (and ``$queryStats`` when asked) into ``digest``."""
    summaries = read_profiles(source, read.databases, settings.since, block_options, digest)
    if not any(summary.entries for summary in summaries):
        read.missing.append("system.profile holds no operations: enable the profiler (db.setProfilingLevel(1, "
                            "{ slowms: 100 })) or give log files")
    if settings.query_stats:
        stats, summary = read_query_stats(source, read, DigestOptions(settings.min_ms, settings.since, settings.until))
        digest.merge(stats)
        summaries.append(summary)
    return summaries


def live_namespaces(namespaces: Iterable[str], read: ServerRead) -> list[str]:
    """The namespaces of the workload that live in the databases read (never admin, local or config)."""
    wanted = set(read.databases)
    return sorted(ns for ns in set(namespaces) if ns.partition(".")[0] in wanted
                  and ns.partition(".")[0] not in INTERNAL_DATABASES and ".system." not in ns)


def complete_catalog(source: ReadOnlySource, read: ServerRead, namespaces: Iterable[str],
                     catalog: IndexCatalog) -> IndexCatalog:
    """``catalog`` (from ``--indexes``) with every other namespace's indexes read from the server."""
    missing = [ns for ns in live_namespaces(namespaces, read) if ns not in catalog]
    found: IndexCatalog = {}
    for ns in missing:
        try:
            found.update(read_catalog(source, [ns], read))
        except CommandRefused as exc:
            if exc.code != NAMESPACE_NOT_FOUND:  # a collection dropped since it was logged has no indexes to read
                raise
    return {**found, **catalog}


def live_samples(source: ReadOnlySource, read: ServerRead, namespaces: Iterable[str], size: int,
                 given: Mapping[str, SampleStatistics]) -> tuple[dict[str, SampleStatistics], list[SampleReport]]:
    """A ``$sample`` of every collection of the workload that has no ``--data`` sample."""
    samples: dict[str, SampleStatistics] = {}
    reports: list[SampleReport] = []
    for ns in live_namespaces(namespaces, read):
        if ns in given:
            continue
        try:
            sample = read_sample(source, ns, size)
        except CommandRefused as exc:
            read.missing.append(f"sample of {ns}: {exc}")
            continue
        if not len(sample):
            continue
        samples[ns] = sample
        reports.append(SampleReport(ns=ns, path=f"{source.label}/{ns} ($sample)", documents=len(sample),
                                    documents_seen=sample.documents_seen))
    return samples, reports
