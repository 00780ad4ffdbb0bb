"""One slow operation, whatever wrote it: the typed event every parser produces.

Command documents are kept as **relaxed Extended JSON v2** Python structures, exactly what ``orjson.loads`` gives
for a 4.4+ JSON log line (``{"$oid": "..."}``, ``{"$date": "..."}``, plain numbers). The text-log and profiler
parsers produce the same structures, so one query logged in three formats is one value. Real BSON types are made
only where they are needed (``idxadvisor.models.values.decode_extended_json``).

Events are built once per slow-operation line, on the hot path, so they are deliberately cheap: not pydantic
models, and not even a generated ``__init__`` that assigns every field. Defaults live on the class; an instance
holds only what its parser found, set in one ``__dict__`` update. Parsers are responsible for the types: every value
goes through ``idxadvisor.parse.fields``, which converts or drops what a malformed line holds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

#: The formats an input can be in (the JSON report's ``inputs[].format``).
JSON_LOG = "json-log"
TEXT_LOG = "text-log"
PROFILE = "profile"
EXPLAIN = "explain"
UNKNOWN = "unknown"

#: The ``op`` values of a ``system.profile`` document.
PROFILE_OPS = frozenset({"query", "getmore", "update", "remove", "insert", "command", "killcursors"})


class ShapeSlot:
    """The shape of every event read from one remembered text-log body, worked out for the first of them.

    Those events share the body's op, namespace, command and originating command (the same objects) and its truncated
    and unparsed flags, which are everything a shape is made from, so the first event's shape is theirs too. ``shaped``
    is a ``(QueryShape, ShapeObservation)``, filled in by the digest (models cannot name shape types).
    """

    __slots__ = ("shaped",)

    def __init__(self) -> None:
        self.shaped: Any = None


@dataclass(init=False)
class Event:
    """One slow operation (or one write statement of an update/delete command)."""

    ns: str
    op: str  # the command name as the server spells it: find, aggregate, update, delete, getMore, insert, ...
    duration_ms: float | None = 0.0  # None: the line's duration was damaged (a problem), so it is unknown
    ts: datetime | None = None
    command: dict[str, Any] | None = None  # the command, or the write statement ({q, u, ...}) for WRITE entries
    originating_command: dict[str, Any] | None = None  # getMore: the find/aggregate that opened the cursor
    plan_summary: str | None = None
    keys_examined: int | None = None
    docs_examined: int | None = None
    nreturned: int | None = None
    n_matched: int | None = None  # a write statement returns nothing: what it matched stands for what it returned
    n_deleted: int | None = None
    n_inserted: int | None = None  # an insert's documents: what the index selection charges each index for
    has_sort_stage: bool = False
    used_disk: bool = False
    spills: int | None = None  # 8.x: sortSpills, groupSpills, ... (non-zero: spilled to disk, as usedDisk says)
    app_name: str | None = None
    connection: str | None = None  # the logging thread: conn123, or an internal thread name
    remote: str | None = None  # the client's address (4.4+ logs, profiler "client"): tells apart merged servers' conns
    query_hash: str | None = None
    plan_cache_shape_hash: str | None = None
    query_shape_hash: str | None = None
    plan_cache_key: str | None = None  # 4.2+: the plan cache entry (changes with the indexes and the query's shape)
    num_yields: int | None = None  # yields: a proxy for work where a log has no docsExamined (≤4.0 aggregations)
    response_length: int | None = None  # bytes sent back (reslen, responseLength)
    replanned: bool = False  # the cached plan was evicted and the query planned again
    error: str | None = None  # errName/errMsg/exception text when the operation failed
    truncated: bool = False  # the server cut the command: counters count, the shape is unknown
    unparsed: bool = False  # the command was present but could not be read: the shape is unknown
    internal: str | None = None  # why this is internal traffic (None for user operations)
    statement: bool = False  # a statement entry of a write command (WRITE component, or a ≤2.6 insert/update line)
    problem: str | None = None  # a value the parser dropped as damaged (an impossible duration): counted as a problem
    #: where the time went, as the server logged it (``TIME_FIELDS`` names -> value); None when the line had none
    timing: dict[str, float] | None = None
    source_format: str = JSON_LOG
    shape_slot: ShapeSlot | None = field(default=None, compare=False, repr=False)  # shared by one body's events

    def __init__(self, ns: str, op: str, **fields: Any) -> None:
        self.ns = ns
        self.op = op
        if fields:
            self.__dict__.update(fields)

    @classmethod
    def from_fields(cls, fields: dict[str, Any]) -> Event:
        """The fast constructor: ``fields`` (which must hold ``ns`` and ``op``) becomes the event's own state."""
        event = cls.__new__(cls)
        event.__dict__ = fields
        return event

    @property
    def shape_known(self) -> bool:
        return not (self.truncated or self.unparsed)


def apply_command(statement: Event, command: Event, share: float) -> None:
    """Time a write statement by the command entry that ran it (``parse.pairing``): ``share`` of the command's
    duration (never less than the statement's own), and the same share of each time component the command logged
    that the statement did not."""
    fields = command.__dict__
    duration = fields.get("duration_ms")
    if duration is not None:  # a damaged duration is unknown (None): it times nothing
        own = statement.duration_ms
        shared = duration * share
        if own is None or shared > own:
            statement.duration_ms = shared
    timing = fields.get("timing")
    if timing:
        mine = dict(statement.timing or {})  # a copy: text-log events of one remembered body share theirs
        for name, value in timing.items():
            if name not in mine:
                mine[name] = value * share
        statement.timing = mine


@dataclass(slots=True)
class Problem:
    """A line or document that could not be read. ``line`` is 1-based within its input, when known."""

    reason: str
    line: int | None = None
    excerpt: str | None = None  # only kept when the user asked to see values
