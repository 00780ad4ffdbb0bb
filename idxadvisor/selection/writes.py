"""What an index costs the writes: the index keys it writes per hour.

Every insert writes one key per index (one per array element for a multikey index: the data sample tells how many),
every delete removes as many, and an update that sets a field of an index removes the old key and writes the new one
(a replacement document or a pipeline update may change any field: it counts for every index). The rates come from
the log's write operations (each counts the documents it wrote: ``ninserted``, ``nMatched``, ``ndeleted``) over its
span, leaving out what bulk tools wrote (``shapes.traffic``: a mongorestore is a one-off load, not a rate); a log of slow operations shows few writes, so with ``--uri`` the server's own count of write operations since
it started (``$collStats`` ``latencyStats``, over the time its ``$indexStats`` counts from) replaces the log's
total, in the log's mix of inserts, updates and deletes (all inserts when the log shows none).

The selection weighs one index key written as ``--write-cost-factor`` keys or documents examined (default 10: a key
written dirties a B-tree page that must be written back and journalled, where a key examined is read from cache).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from idxadvisor.indexes.model import IndexSpec, KeyPattern
from idxadvisor.indexes.sampling import SampleStatistics, path_values
from idxadvisor.models.report import WriteRates
from idxadvisor.models.values import as_datetime
from idxadvisor.shapes.digest import ShapeStats
from idxadvisor.shapes.traffic import bulk_share

#: Sampled documents read to count the keys a multikey index holds per document.
FAN_OUT_SAMPLE = 2_000


@dataclass
class WriteLoad:
    """A collection's writes per hour (per log, when the log spans no time)."""

    inserted: float = 0.0
    deleted: float = 0.0
    updates: list[tuple[frozenset[str] | None, float]] = field(default_factory=list)  # (fields set, documents)
    source: str = "log"
    note: str | None = None

    @property
    def updated(self) -> float:
        return sum(documents for _, documents in self.updates)

    def rates(self) -> WriteRates:
        return WriteRates(source=self.source, inserted=round(self.inserted, 1),  # type: ignore[arg-type]
                          updated=round(self.updated, 1), deleted=round(self.deleted, 1), note=self.note)

    def scaled(self, factor: float) -> WriteLoad:
        return WriteLoad(self.inserted * factor, self.deleted * factor,
                         [(fields, documents * factor) for fields, documents in self.updates], self.source, self.note)


def write_load(shapes: Iterable[ShapeStats], hours: float | None, sample: SampleStatistics | None,
               existing: list[IndexSpec] | None, now: datetime | None = None) -> WriteLoad:
    """The collection's writes, from its write shapes in the log, and the server's count when ``--uri`` read it."""
    load = WriteLoad()
    operations = 0
    loaded = 0.0  # documents bulk tools (mongorestore, …) wrote: a one-off load, not a rate
    for stats in shapes:
        op, executions = stats.shape.op, stats.executions
        documents = float(stats.nreturned or executions)
        if stats.bulk_written and op in ("insert", "update", "delete", "findAndModify"):
            loaded += stats.bulk_written
            documents = max(0.0, documents - stats.bulk_written)
            executions = round(executions * (1 - bulk_share(stats.apps, stats.count)))
            if not executions or not documents:
                continue
        command = stats.representative.command if stats.representative is not None else {}
        if op == "findAndModify":
            documents = float(executions)
            op = "delete" if command.get("remove") else "update"
        if op == "insert":
            load.inserted += documents
        elif op == "delete":
            load.deleted += documents
        elif op == "update":
            load.updates.append((updated_fields(command), documents))
        else:
            continue
        operations += executions
    per = hours if hours else 1.0
    load = load.scaled(1 / per)
    if loaded:
        load.note = (f"{loaded:,.0f} documents written by bulk tools left out: a mongorestore or mongoimport is a "
                     "one-off load, not the collection's write rate")
    server = _server_rate(sample, existing, now) if hours else None  # a rate per hour needs a log that spans time
    if server is None:
        if operations:
            slow_only = "slow operations only, unless slowms is 0 or profiling is at level 2"
            load.note = f"{slow_only}; {load.note}" if load.note else slow_only
        return load
    logged = operations / per
    if server <= logged:
        return load
    if operations:
        load = load.scaled(server / logged)
        load.note = (f"the server's {server:,.0f} write operations per hour ($collStats latencyStats since "
                     "$indexStats began counting), in the log's mix of inserts, updates and deletes")
    else:
        load = WriteLoad(inserted=server, note=f"the server's {server:,.0f} write operations per hour ($collStats "
                                               "latencyStats), taken as single-document inserts: the log shows none")
    load.source = "server"
    return load


def _server_rate(sample: SampleStatistics | None, existing: list[IndexSpec] | None,
                 now: datetime | None) -> float | None:
    """Write operations per hour since the server (or the collection) started counting: ``latencyStats`` over the
    time since the ``_id`` index's ``$indexStats`` began, up to the server's clock when it answered."""
    if sample is None or sample.write_operations is None:
        return None
    since = next((as_datetime(index.accesses.get("since")) for index in existing or []
                  if index.is_id_index and index.accesses), None)
    if since is None:
        return None
    operations = sample.write_operations
    hours = ((sample.counted_at or now or datetime.now(timezone.utc)) - since).total_seconds() / 3600
    return operations / hours if hours > 0 else None


def updated_fields(command: Mapping[str, Any]) -> frozenset[str] | None:
    """The fields an update sets (or unsets, renames, pushes to), or None when it may change any: a replacement
    document, a pipeline, or an update the log does not show."""
    update = command.get("u", command.get("update"))
    if not isinstance(update, Mapping) and isinstance(command.get("updates"), list) and command["updates"]:
        first = command["updates"][0]
        update = first.get("u") if isinstance(first, Mapping) else None
    if not isinstance(update, Mapping) or not update or not all(str(key).startswith("$") for key in update):
        return None
    fields: set[str] = set()
    for operator, body in update.items():
        if not isinstance(body, Mapping):
            return None
        fields |= {str(name) for name in body}
        if operator == "$rename":
            fields |= {str(target) for target in body.values()}
    return frozenset(fields)


def touches(key: KeyPattern, fields: frozenset[str] | None) -> bool:
    """An update of ``fields`` changes this index's keys (a field, a parent or a child of one of its fields)."""
    if fields is None:
        return True
    return any(name == changed or name.startswith(changed + ".") or changed.startswith(name + ".")
               for name, _ in key for changed in fields)


def keys_per_document(key: KeyPattern, sample: SampleStatistics | None) -> float:
    """Index keys per document: more than one for a multikey index (one per array element, as the sample shows)."""
    if sample is None or not len(sample) or not any(sample.is_array(name) for name, _ in key):
        return 1.0
    documents = sample.documents[:FAN_OUT_SAMPLE]
    total = 0
    for document in documents:
        keys = 1
        for name, _ in key:
            values, _ = path_values(document, name)
            keys *= max(1, len(set(map(repr, values))))
        total += keys
    return total / len(documents)


def key_writes(key: KeyPattern, load: WriteLoad, sample: SampleStatistics | None) -> float:
    """Index keys this index writes per hour (or per log): one per document inserted or deleted, two (the old key
    out, the new one in) per document updated in one of its fields, times its keys per document."""
    updated = sum(documents for fields, documents in load.updates if touches(key, fields))
    return (load.inserted + load.deleted + 2 * updated) * keys_per_document(key, sample)
