"""What a server returns, turned into the pipeline's own types.

* ``system.profile`` documents → events, through the profile parser every ``system.profile`` export goes through
  (``parse/profile.py`` via ``BlockParser``), so a profiled query has the fingerprint its log line has;
* ``listIndexes`` (+ ``$indexStats``) → the index catalog of ``--indexes`` (``indexes/catalog.py``), each index
  keeping its ``accesses`` as the server returned them;
* ``$collStats`` + ``$sample`` → ``SampleStatistics`` (the documents, the average size, the collection's count);
* ``$queryStats`` → shapes with the metrics the server aggregated (8.0+).

A command the server refuses where the feature is optional (``$indexStats``, ``$queryStats``) is recorded in
``ServerRead.missing`` and the run goes on without it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from bson import json_util

from idxadvisor.indexes.catalog import IndexCatalog, parse_index_catalog
from idxadvisor.ingest.datasets import write_counts
from idxadvisor.indexes.sampling import SampleStatistics
from idxadvisor.models.events import PROFILE, Event
from idxadvisor.models.inputs import InputSummary
from idxadvisor.parse.block import BlockOptions, BlockParser, EventSink
from idxadvisor.server.connection import CommandRefused
from idxadvisor.server.source import ReadOnlySource, counter_of, document_of
from idxadvisor.shapes.digest import Digest, DigestOptions, ShapeStats
from idxadvisor.shapes.shape import shape_of

QUERY_STATS_INPUT = "$queryStats"


@dataclass
class ServerRead:
    """What was read from a server, and what it would not give (each a one-line reason)."""

    label: str
    version: str | None = None
    databases: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


def relaxed(document: Any) -> Any:
    """BSON-typed values as relaxed Extended JSON structures: what a JSON log line holds, and what events carry."""
    return json.loads(json_util.dumps(document, json_options=json_util.RELAXED_JSON_OPTIONS))


def version_text(source: ReadOnlySource) -> str:
    return ".".join(str(part) for part in source.version())


# -- the workload ----------------------------------------------------------------------------------------------------

def read_profiles(source: ReadOnlySource, databases: Sequence[str], since: datetime | None, options: BlockOptions,
                  sink: EventSink) -> list[InputSummary]:
    """Each database's ``system.profile`` into ``sink``, one input summary per database."""
    summaries = []
    for database in databases:
        summary = InputSummary(f"{source.label}/{database}.system.profile", PROFILE)
        summaries.append(summary)
        parser = BlockParser(PROFILE, options, sink)
        documents = source.profile(database, since)
        for document in documents:
            parser.add_profile_document(relaxed(document), None)
        stats = parser.finish()
        for wrapper in stats.held_wrappers:  # a command entry whose statements the profiler did not record
            sink.add(wrapper)
            stats.operations += 1
        seal = getattr(sink, "seal", None)  # one database's profile is one input (Digest.seal)
        if seal is not None:
            seal()
        summary.lines = len(documents)
        summary.entries, summary.problems, summary.truncated = stats.entries, stats.problems, stats.truncated
        summary.operations, summary.paired = stats.operations, stats.absorbed
        summary.first_ts, summary.last_ts = stats.first_ts, stats.last_ts
        summary.problem_examples = stats.problem_examples
        summary.versions = {version_text(source)}
    return summaries


def read_query_stats(source: ReadOnlySource, read: ServerRead, options: DigestOptions) -> tuple[Digest, InputSummary]:
    """``$queryStats`` as shapes with the server's aggregated metrics; refused, it is a ``missing`` line."""
    summary = InputSummary(f"{source.label}/{QUERY_STATS_INPUT}", "query-stats")
    digest = Digest(options)
    try:
        entries = source.query_stats()
    except CommandRefused as exc:
        read.missing.append(f"--query-stats: {exc} ($queryStats needs MongoDB 8.0+ and the queryStatsRead "
                            "privilege, in clusterMonitor)")
        return digest, summary
    summary.lines = summary.entries = len(entries)
    for entry in entries:
        stats = query_stats_shape(relaxed(entry))
        if stats is None:
            summary.problems += 1
            continue
        if options.since is not None and stats.last_seen is not None and stats.last_seen < options.since:
            digest.skipped["before --since"] += stats.count
            continue
        summary.operations += stats.count
        digest.merge(Digest(options, {stats.shape.fingerprint: stats}))
        for moment in (stats.first_seen, stats.last_seen):
            if moment is not None:
                summary.first_ts = moment if summary.first_ts is None else min(summary.first_ts, moment)
                summary.last_ts = moment if summary.last_ts is None else max(summary.last_ts, moment)
    return digest, summary


def query_stats_shape(entry: dict[str, Any]) -> ShapeStats | None:
    """One ``$queryStats`` entry as the statistics of its shape (None when it holds no query shape we read).

    The server aggregates, so the duration histogram holds the mean for every execution but one, which holds the
    maximum: totals and maxima are exact, percentiles are not known."""
    shape_document = document_of(document_of(entry.get("key")).get("queryShape"))
    namespace = document_of(shape_document.get("cmdNs"))
    op, database, collection = shape_document.get("command"), namespace.get("db"), namespace.get("coll", "")
    if op not in ("find", "aggregate", "distinct") or not isinstance(database, str) or not isinstance(collection, str):
        return None
    command = {name: value for name, value in shape_document.items() if name not in ("cmdNs", "command")}
    command = {op: collection, **command}
    if op == "aggregate":
        command.setdefault("pipeline", [])
    event = Event(ns=f"{database}.{collection}", op=op, command=command, source_format="query-stats")
    shape, _ = shape_of(event)
    metrics = document_of(entry.get("metrics"))
    count = _number(metrics.get("execCount"))
    if not count:
        return None
    stats = ShapeStats(shape)
    micros = document_of(metrics.get("totalExecMicros"))
    total_ms, max_ms = _number(micros.get("sum")) / 1000, _number(micros.get("max")) / 1000
    if count > 1:
        stats.duration.add_repeated(max(total_ms - max_ms, 0.0) / (count - 1), count - 1)
    stats.duration.add_repeated(max_ms, 1)
    stats.count = count
    stats.keys_examined = _number(document_of(metrics.get("keysExamined")).get("sum"))
    stats.docs_examined = _number(document_of(metrics.get("docsExamined")).get("sum"))
    stats.nreturned = _number(document_of(metrics.get("docsReturned")).get("sum"))
    stats.measured = count if "docsExamined" in metrics else 0
    stats.blocking_sorts = _number(metrics.get("hasSortStage"))
    stats.used_disk = _number(metrics.get("usedDisk"))
    stats.first_seen = _timestamp(metrics.get("firstSeenTimestamp"))
    stats.last_seen = _timestamp(metrics.get("latestSeenTimestamp"))
    for name in ("queryShapeHash",):
        if entry.get(name):
            stats.server_hashes.setdefault(name, type(stats.connections)()).add(str(entry[name]))
    return stats


def _number(value: Any) -> int:
    """A metric as a whole count (0 where the entry holds no usable one); ``{"$numberLong": "…"}`` survives relaxed
    JSON beyond 2^53."""
    return int(counter_of(value) or 0)


def _timestamp(value: Any) -> datetime | None:
    text = value.get("$date") if isinstance(value, dict) else value
    if not isinstance(text, str):
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


# -- indexes ---------------------------------------------------------------------------------------------------------

def index_documents(source: ReadOnlySource, namespaces: Iterable[str], read: ServerRead) -> dict[str, list[Any]]:
    """Namespace → ``listIndexes`` output, each index with its ``$indexStats`` ``accesses`` where the server gives
    them: the index file of DESIGN.md, as relaxed Extended JSON."""
    documents: dict[str, list[Any]] = {}
    usage_refused = False
    for ns in namespaces:
        indexes = source.list_indexes(ns)
        if not usage_refused:
            try:
                accesses = {item["name"]: item.get("accesses") for item in source.index_stats(ns)
                            if isinstance(item.get("name"), str)}
            except CommandRefused as exc:
                read.missing.append(f"index usage: {exc} ($indexStats needs the indexStats privilege, in "
                                    "clusterMonitor)")
                usage_refused = True
                accesses = {}
            for index in indexes:
                name = index.get("name")
                if isinstance(name, str) and accesses.get(name) is not None:
                    index["accesses"] = accesses[name]
        documents[ns] = [relaxed(index) for index in indexes]
    return documents


def read_catalog(source: ReadOnlySource, namespaces: Iterable[str], read: ServerRead) -> IndexCatalog:
    """The server's indexes as the index catalog. One this version cannot read (a type it does not know, a document
    of another shape) is left out with a line in ``missing``: the rest of the run still has every other index."""
    return parse_index_catalog(index_documents(source, namespaces, read), source.label, left_out=read.missing)


def collection_namespaces(source: ReadOnlySource, databases: Iterable[str]) -> list[str]:
    return [f"{database}.{name}" for database in databases for name in source.collection_names(database)]


# -- data ------------------------------------------------------------------------------------------------------------

def read_sample(source: ReadOnlySource, ns: str, size: int) -> SampleStatistics:
    """``$sample`` documents with the collection's document count and average size (``$collStats``)."""
    try:
        stats = source.collection_stats(ns)
    except CommandRefused:
        stats = {}  # neither $collStats nor collStats: the count will do, and the sample gives the size
    count = stats.get("count")
    if count is None:
        count = source.count(ns)
    documents = source.sample(ns, size) if count else []
    average = stats.get("avgObjSize")
    return SampleStatistics(documents, average or None, max(int(count or 0), len(documents)),
                            origin="the collection", **write_counts(stats))

