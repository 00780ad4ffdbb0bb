"""What a log says about a collection's indexes: the sightings the index inventory is built from.

A log names indexes in four places: the ``createIndexes`` and ``dropIndexes`` commands it shows (slow-operation
entries), the server's index-build messages (``Index build: starting``, ``done building``, …, and ``build index on:``
in text logs), ``CMD: dropIndexes`` messages, and the plan summaries of the operations (``IXSCAN { class_id: 1 }``).
The first three are rare lines, read as they pass (``parse.indexlog``); the plans are read from the digest afterwards
(``indexes.inventory``). Key patterns and index names are not literal query values: they may be saved and reported.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from functools import lru_cache
from typing import Any

#: The options of an index document that change what it holds or how it may be used (kept with its key).
INDEX_OPTIONS = ("unique", "sparse", "hidden", "partialFilterExpression", "expireAfterSeconds", "collation")

#: What a sighting says happened to the index.
CREATED = "created"  # a createIndexes command or an index build starting: the index exists once it ends
BUILT = "built"  # an index build finished (the index exists from then on)
DROPPED = "dropped"


@dataclass(slots=True)
class IndexSighting:
    """One mention of one index in a log line. ``key`` is the key pattern as ``[[field, direction], …]`` (None when
    the line names the index only); ``source`` says which kind of line it was, in words a DBA can grep for."""

    ns: str
    kind: str
    name: str | None
    key: list[list[Any]] | None
    ts: datetime | None
    source: str
    options: dict[str, Any] | None = None  # what the line says beside the key (unique, sparse, TTL, partial, …)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """A worker ships thousands of sightings on a log whose application creates its indexes at every start: the
        time goes as seconds and a UTC offset, which pickle six times faster than an aware datetime (whose timezone
        object is written out again for every sighting)."""
        ts = self.ts
        if ts is None or ts.tzinfo is None or ts.year >= _EXACT_SECONDS_BEFORE_YEAR:
            return IndexSighting, (self.ns, self.kind, self.name, self.key, ts, self.source, self.options)
        offset = ts.utcoffset()
        assert offset is not None
        return _sighting_at, (self.ns, self.kind, self.name, self.key, ts.timestamp(), offset.total_seconds(),
                              self.source, self.options)

    def to_document(self) -> dict[str, Any]:
        return {"ns": self.ns, "kind": self.kind, "name": self.name, "key": self.key,
                "ts": self.ts.isoformat() if self.ts is not None else None, "source": self.source,
                **({"options": self.options} if self.options is not None else {})}

    @classmethod
    def from_document(cls, document: Any) -> IndexSighting:
        """A saved sighting (a workload file's); ValueError for one that is not."""
        if not isinstance(document, dict) or not isinstance(document.get("ns"), str) \
                or document.get("kind") not in (CREATED, BUILT, DROPPED) or not isinstance(document.get("source"), str):
            raise ValueError("an index sighting needs ns, kind and source")
        name, key, ts = document.get("name"), document.get("key"), document.get("ts")
        if name is not None and not isinstance(name, str):
            raise ValueError("an index sighting's name must be text")
        if key is not None and not (isinstance(key, list) and all(isinstance(pair, list) and len(pair) == 2
                                                                  and isinstance(pair[0], str) for pair in key)):
            raise ValueError("an index sighting's key must be a list of [field, direction] pairs")
        options = document.get("options")
        if options is not None and not isinstance(options, dict):
            raise ValueError("an index sighting's options must be an object")
        return cls(document["ns"], document["kind"], name, key,
                   datetime.fromisoformat(ts) if isinstance(ts, str) else None, document["source"], options)


#: Until this year, a float of seconds since the epoch holds every microsecond exactly (``IndexSighting.__reduce__``).
_EXACT_SECONDS_BEFORE_YEAR = 2100


@lru_cache(maxsize=64)
def _offset_zone(seconds: float) -> timezone:
    return timezone(timedelta(seconds=seconds))


def _sighting_at(ns: str, kind: str, name: str | None, key: list[list[Any]] | None, seconds: float,
                 offset_seconds: float, source: str, options: dict[str, Any] | None) -> IndexSighting:
    """A sighting shipped by ``IndexSighting.__reduce__``."""
    return IndexSighting(ns, kind, name, key, datetime.fromtimestamp(seconds, _offset_zone(offset_seconds)), source,
                         options)
