"""A live server as analyze's inputs: its profiler as events, its indexes as the catalog, its collections' samples.

What the server will not give where the feature is optional (``$indexStats``, ``$queryStats``, a ``$sample`` of one
collection) is recorded in ``ServerRead.missing`` and reported; the run goes on without it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from idxadvisor.config import Settings
from idxadvisor.indexes.catalog import IndexCatalog
from idxadvisor.indexes.sampling import SampleStatistics
from idxadvisor.models.inputs import InputSummary
from idxadvisor.models.report import CalibrationSummary, SampleReport, ScratchReport, ServerReport
from idxadvisor.parse.block import BlockOptions
from idxadvisor.server.connection import CommandRefused
from idxadvisor.server.readers import (
    QUERY_STATS_INPUT,
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


@dataclass
class LiveServer:
    """The source server of ``--uri``, connected, and what has been read from it so far."""

    source: ReadOnlySource
    read: ServerRead

    @classmethod
    def open(cls, settings: Settings) -> LiveServer:
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
        return cls(source, read)

    def __enter__(self) -> LiveServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.source.close()

    def read_workload(self, settings: Settings, digest: Digest, block_options: BlockOptions) -> list[InputSummary]:
        """Every database's ``system.profile`` (and ``$queryStats`` when asked) into ``digest``."""
        summaries = read_profiles(self.source, self.read.databases, settings.since, block_options, digest)
        if not any(summary.entries for summary in summaries):
            self.read.missing.append("system.profile holds no operations: enable the profiler "
                                     "(db.setProfilingLevel(1, { slowms: 100 })) or give log files")
        if settings.query_stats:
            options = DigestOptions(settings.min_ms, settings.since, settings.until)
            stats, summary = read_query_stats(self.source, self.read, options)
            digest.merge(stats)
            summaries.append(summary)
        return summaries

    def namespaces(self, namespaces: Iterable[str]) -> list[str]:
        """The namespaces of the workload that live in the databases read (never admin, local or config)."""
        wanted = set(self.read.databases)
        return sorted(ns for ns in set(namespaces) if ns.partition(".")[0] in wanted
                      and ns.partition(".")[0] not in INTERNAL_DATABASES and ".system." not in ns)

    def complete_catalog(self, namespaces: Iterable[str], catalog: IndexCatalog) -> IndexCatalog:
        """``catalog`` (from ``--indexes``) with every other namespace's indexes read from the server."""
        found: IndexCatalog = {}
        for ns in self.namespaces(namespaces):
            if ns in catalog:
                continue
            try:
                found.update(read_catalog(self.source, [ns], self.read))
            except CommandRefused as exc:
                if exc.code != NAMESPACE_NOT_FOUND:  # a collection dropped since it was logged has no indexes
                    raise
        return {**found, **catalog}

    def samples(self, namespaces: Iterable[str], size: int, given: Mapping[str, SampleStatistics]
                ) -> tuple[dict[str, SampleStatistics], list[SampleReport]]:
        """A ``$sample`` of every collection of the workload that has no ``--data`` sample."""
        samples: dict[str, SampleStatistics] = {}
        reports: list[SampleReport] = []
        for ns in self.namespaces(namespaces):
            if ns in given:
                continue
            try:
                sample = read_sample(self.source, ns, size)
            except CommandRefused as exc:
                self.read.missing.append(f"sample of {ns}: {exc}")
                continue
            if len(sample):
                samples[ns] = sample
                reports.append(SampleReport(ns=ns, path=f"{self.source.label}/{ns} ($sample)",
                                            documents=len(sample), documents_seen=sample.documents_seen))
        return samples, reports

    def source_databases(self, settings: Settings) -> frozenset[str]:
        """Every name a scratch database must not have: the databases read, the ``--db`` names, and, when the
        scratch database would sit on this server, every database it holds."""
        names = frozenset(self.read.databases) | frozenset(settings.db)
        if settings.scratch_uri is None:
            names |= frozenset(self.source.database_names())
        return names

    def report(self, summaries: list[InputSummary], scratch: ScratchReport | None,
               calibration: CalibrationSummary | None) -> ServerReport:
        profiled = sum(summary.lines for summary in summaries if summary.path.endswith(".system.profile"))
        queried = any(summary.path.endswith(QUERY_STATS_INPUT) and summary.entries for summary in summaries)
        return ServerReport(server=self.read.label, version=self.read.version, databases=self.read.databases,
                            profile_documents=profiled, query_stats=queried, missing=self.read.missing,
                            scratch=scratch, calibration=calibration)
