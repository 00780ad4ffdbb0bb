"""Per-shape statistics, accumulated event by event and merged across processes and files.

Everything here is mergeable: partial digests built by each worker from its blocks add up to the digest of the whole
input, whatever the order. Memory grows with the number of shapes, not the number of events: durations go into a
bounded histogram, the timeline coarsens itself past ``Timeline.MAX_BUCKETS``, an aggregation keeps only its latest
``RunLog.MAX_RUNS`` runs, and the sets of connections and server hashes stop growing at a cap (and say so).

What depends on the order of executions (a plan that keeps changing, a burst of lookups from one connection) keeps
its edges: the first and last plan of each part, the bursts that may continue into a neighbouring block. Merging
joins the edges that meet in time, so a switch or a burst that straddles a block boundary is counted once. Parts
merged out of time order (not what the runner does) are still exact as long as fewer than ``MAX_EDGES`` of them are
waiting for their neighbours.
"""

from __future__ import annotations

import copyreg
import fnmatch
import math
import pickle
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from datetime import datetime
from operator import attrgetter
from sys import intern
from types import MappingProxyType, ModuleType
from typing import Any, TypeVar
from zlib import crc32

import orjson

from idxadvisor.models.events import Event
from idxadvisor.parse.accel import speedups
from idxadvisor.shapes.literals import _WIDTHS as WRAPPER_WIDTHS
from idxadvisor.shapes.literals import (DISTINCT_CAP, FIRST_BATCH, IN_VALUES, FieldLiterals, LiteralStats,
                                        first_reply_cap)
from idxadvisor.shapes.shape import QueryShape, ShapeObservation, point_lookup_field, shape_of_shared
from idxadvisor.shapes.sketch import _LOG_GAMMA as LOG_GAMMA
from idxadvisor.shapes.sketch import EXACT_LIMIT, DurationHistogram, coarse_bin, coarse_percentile
from idxadvisor.shapes.timing import _WHOLE as WHOLE_UNITS
from idxadvisor.shapes.timing import SKETCHED, TimeBreakdown
from idxadvisor.shapes.traffic import is_bulk_tool

#: Connections and server hashes kept per shape: a bottom-k sample (see CappedSet), whose cap bounds a shape's memory
#: on logs of weeks, where clients reconnect under new connection names all the time.
SET_CAP = 1_000
SMALL_SET = 8  # members a CappedSet holds in a tuple before it needs a set
MAX_EDGES = 16  # parts of a sequence kept open for neighbours that have not been merged yet
#: The longest pause between the end of one lookup and the start of the next on one connection that still counts as
#: one burst: an application loop waits only for the network round trip, steady traffic from many users rarely
#: leaves ten gaps that short in a row.
BURST_GAP_MS = 10.0
_HASH_FIELDS = (("query_hash", "queryHash"), ("plan_cache_shape_hash", "planCacheShapeHash"),
                ("query_shape_hash", "queryShapeHash"), ("plan_cache_key", "planCacheKey"))


@dataclass(frozen=True)
class DigestOptions:
    """Which events count (``--min-ms``, ``--since``, ``--until``, ``--app``)."""

    min_ms: float = 0.0
    since: datetime | None = None
    until: datetime | None = None
    apps: tuple[str, ...] = ()  # globs of application names (appName), matched case-insensitively


_Packed = TypeVar("_Packed")


def _argument_reducer(cls: type[_Packed]) -> Callable[[_Packed], tuple[type[_Packed], tuple[Any, ...]]]:
    """A reducer that pickles a slots dataclass as the tuple of its constructor's arguments. A worker ships thousands
    of them back with its digest, and the ``__getstate__``/``__setstate__`` that ``slots=True`` writes look the fields
    up again for every object (the time buckets alone were a quarter of the time a digest took to pickle; unpickling
    a digest's histograms, time breakdowns and literal statistics that way was a third of the time to read it back)."""
    names = [item.name for item in fields(cls)]  # type: ignore[arg-type]
    getter = attrgetter(*names)
    arguments = getter if len(names) > 1 else lambda value: (getter(value),)  # one name: attrgetter gives no tuple

    def reduce(self: _Packed) -> tuple[type[_Packed], tuple[Any, ...]]:
        return cls, arguments(self)

    return reduce


def _pickled_as_arguments(cls: type[_Packed]) -> type[_Packed]:
    """Pickle a slots dataclass of this module as the tuple of its constructor's arguments (``_argument_reducer``)."""
    cls.__reduce__ = _argument_reducer(cls)  # type: ignore[method-assign, assignment]
    return cls


# The slots dataclasses of other modules that a ShapeStats holds travel the same way; registered here, where digests
# are shipped, so that those modules stay free of pickling concerns.
for _held in (DurationHistogram, TimeBreakdown, LiteralStats, FieldLiterals, QueryShape):
    copyreg.pickle(_held, _argument_reducer(_held))


@_pickled_as_arguments
@dataclass(slots=True)
class CappedSet:
    """A set that keeps its ``SET_CAP`` smallest members and remembers whether it dropped any.

    Keeping the smallest (rather than the first) makes it a bottom-k sample: any split of the values, merged in any
    order, keeps the same members, so a digest merges exactly even past the cap. Up to twice the cap is held between
    trims, so adding stays cheap; ``cutoff`` is the largest member kept at the last trim (larger values are dropped at
    once). Up to ``SMALL_SET`` members are held in a tuple: nearly every shape has a connection or two and one value of
    each server hash, and a set costs 216 bytes even for one member."""

    members: set[str] | tuple[str, ...] = ()
    capped: bool = False
    cutoff: str | None = None

    def add(self, value: str) -> None:
        members = self.members
        if value in members or (self.cutoff is not None and value > self.cutoff):
            return
        if type(members) is tuple:
            members = self.members = (*members, value) if len(members) < SMALL_SET else {*members, value}
        else:
            members.add(value)  # type: ignore[union-attr]
        if len(members) > 2 * SET_CAP:
            self._trim()

    def merge(self, other: CappedSet) -> None:
        for value in other.members:
            self.add(value)
        if other.capped:
            self.capped = True
            if other.cutoff is not None and (self.cutoff is None or other.cutoff < self.cutoff):
                self.cutoff = other.cutoff  # what ``other`` dropped is above its cutoff: never among the smallest
                self.members = {value for value in self.members if value <= other.cutoff}

    def _trim(self) -> None:
        if len(self.members) > SET_CAP or self.capped:
            kept = sorted(self.members)[:SET_CAP]
            self.members, self.capped = set(kept), True
            self.cutoff = kept[-1] if kept else self.cutoff

    def kept(self) -> set[str]:
        """The members (at most ``SET_CAP``: the smallest ones when the set was capped)."""
        self._trim()
        members = self.members
        return members if type(members) is set else set(members)

    def __len__(self) -> int:
        self._trim()
        return len(self.members)

    def __eq__(self, other: object) -> bool:  # the same members, whether held in a tuple or a set
        if not isinstance(other, CappedSet):
            return NotImplemented
        return (self.capped, self.cutoff) == (other.capped, other.cutoff) and set(self.members) == set(other.members)


@_pickled_as_arguments
@dataclass(slots=True)
class TimeBucket:
    """One bucket of a timeline: executions, their durations (total, maximum, coarse bins for a percentile) and the
    keys and documents they examined."""

    count: int = 0
    total_ms: float = 0.0
    max_ms: float = 0.0
    docs_examined: int = 0
    keys_examined: int = 0
    # coarse duration bins (sketch.coarse_bin) -> executions; None while every execution is in the bin of max_ms (three
    # buckets in four of real logs: a minute of one execution, or of alike ones), which spares a dict per bucket
    bins: dict[int, int] | None = None

    def add(self, duration_ms: float, docs_examined: int, keys_examined: int) -> None:
        bins = self.bins
        if bins is not None:
            index = coarse_bin(duration_ms)
            bins[index] = bins.get(index, 0) + 1
        elif self.count and duration_ms != self.max_ms:  # the bin of the maximum itself needs no dict
            index = coarse_bin(duration_ms)
            if index != coarse_bin(self.max_ms):
                self.bins = {coarse_bin(self.max_ms): self.count, index: 1}
        self.count += 1
        self.total_ms += duration_ms
        if duration_ms > self.max_ms:
            self.max_ms = duration_ms
        self.docs_examined += docs_examined
        self.keys_examined += keys_examined

    def merge(self, other: TimeBucket) -> None:
        if other.count and (self.bins is not None or other.bins is not None
                            or (self.count and coarse_bin(self.max_ms) != coarse_bin(other.max_ms))):
            bins = self.bin_counts()
            for index, count in other.bin_counts().items():
                bins[index] = bins.get(index, 0) + count
            self.bins = bins
        self.count += other.count
        self.total_ms += other.total_ms
        self.max_ms = max(self.max_ms, other.max_ms)
        self.docs_examined += other.docs_examined
        self.keys_examined += other.keys_examined

    def compact(self) -> None:
        """Drop a dict of bins that says only what ``bins=None`` says (one bin, the maximum's): how a bucket read back
        from a workload file, which writes the bins out, is kept as one built event by event."""
        if self.bins is not None and self.bins == {coarse_bin(self.max_ms): self.count}:
            self.bins = None

    def bin_counts(self) -> dict[int, int]:
        """The bins, as a dict of the bucket's own (written when there was none)."""
        if self.bins is None:
            return {coarse_bin(self.max_ms): self.count} if self.count else {}
        return self.bins

    def percentile(self, p: float) -> float:
        """Nearest-rank percentile of the bucket's durations: within 12.5 % above the true value, never above max."""
        if self.bins is None:
            return self.max_ms  # the top of the one bin, capped at the maximum: the maximum itself
        return coarse_percentile(self.bins, p, self.max_ms)


@_pickled_as_arguments
@dataclass(slots=True)
class Timeline:
    """Per time bucket (one minute, doubled as often as needed to stay bounded): executions, durations and work."""

    MAX_BUCKETS = 1_440  # a day by the minute; a longer span doubles the width (a shape's memory stays bounded)
    width_minutes: int = 1
    buckets: dict[int, TimeBucket] = field(default_factory=dict)  # bucket start (epoch minute) -> bucket

    def add(self, ts: datetime, duration_ms: float, docs_examined: int = 0, keys_examined: int = 0) -> None:
        self.add_at(ts.timestamp(), duration_ms, docs_examined, keys_examined)

    def add_at(self, epoch_seconds: float, duration_ms: float, docs_examined: int = 0, keys_examined: int = 0) -> None:
        """``add`` for a time already in seconds since the epoch (the digest computes it once per event)."""
        minute = int(epoch_seconds // 60)
        width = self.width_minutes
        start = minute if width == 1 else minute - minute % width
        bucket = self.buckets.get(start)
        if bucket is None:
            bucket = self.buckets[start] = TimeBucket()
            if len(self.buckets) > self.MAX_BUCKETS:
                bucket.add(duration_ms, docs_examined, keys_examined)
                self._coarsen(self.width_minutes * 2)
                return
        bucket.add(duration_ms, docs_examined, keys_examined)

    def _absorb(self, start: int, other: TimeBucket) -> None:
        bucket = self.buckets.get(start)
        if bucket is None:
            self.buckets[start] = bucket = TimeBucket()
            bucket.merge(other)
            if len(self.buckets) > self.MAX_BUCKETS:
                self._coarsen(self.width_minutes * 2)
        else:
            bucket.merge(other)

    def _coarsen(self, width: int) -> None:
        old = self.buckets
        self.width_minutes = width
        self.buckets = {}
        for start, bucket in old.items():
            self._absorb(start - start % width, bucket)

    def merge(self, other: Timeline) -> None:
        if other.width_minutes > self.width_minutes:
            self._coarsen(other.width_minutes)
        for start, bucket in other.buckets.items():
            self._absorb(start - start % self.width_minutes, bucket)


@_pickled_as_arguments
@dataclass(slots=True)
class RunLog:
    """The latest ``MAX_RUNS`` runs of a shape, as (start, duration) in epoch milliseconds: enough to see a polled
    aggregation's period, its trend and its runs piling up. Merging keeps the latest runs, so any split of the input,
    merged in any order, keeps the same ones."""

    MAX_RUNS = 1_000
    runs: list[tuple[float, float]] = field(default_factory=list)

    def add(self, start_ms: float, duration_ms: float) -> None:
        self.runs.append((start_ms, duration_ms))
        if len(self.runs) > 2 * self.MAX_RUNS:
            self._trim()

    def merge(self, other: RunLog) -> None:
        self.runs.extend(other.runs)
        if len(self.runs) > 2 * self.MAX_RUNS:
            self._trim()

    def _trim(self) -> None:
        if self.runs:  # the shared empty log (``_NO_RUNS``) holds a tuple: nothing to sort
            self.runs.sort()
            del self.runs[: -self.MAX_RUNS]

    def latest(self) -> list[tuple[float, float]]:
        """The kept runs in time order (at most ``MAX_RUNS``)."""
        self._trim()
        return list(self.runs)

    def __len__(self) -> int:
        return min(len(self.runs), self.MAX_RUNS)

    def __eq__(self, other: object) -> bool:  # a list of runs, or the shared empty log's tuple
        if not isinstance(other, RunLog):
            return NotImplemented
        return list(self.runs) == list(other.runs)


@_pickled_as_arguments
@dataclass(slots=True)
class LiteralValues:
    """How often each set of literal values ran, for an aggregation: a dashboard polls the same counter over and over,
    an ad-hoc generator counts a different value every time. Only a fingerprint of the values is kept (a CRC-32 of the
    pipeline as logged), never the values.

    A bottom-k sample: the ``MAX_KEPT`` smallest fingerprints are kept with their exact counts, whatever the split of
    the input and the order of merges; past that, ``distinct`` is the usual k-minimum-values estimate."""

    MAX_KEPT = 256
    counts: dict[int, int] = field(default_factory=dict)  # fingerprint -> runs
    runs: int = 0  # runs fingerprinted (kept or not)
    cutoff: int | None = None  # the largest fingerprint kept at the last trim: larger ones are not kept

    def add(self, fingerprint: int, runs: int = 1) -> None:
        self.runs += runs
        if self.cutoff is not None and fingerprint > self.cutoff:
            return
        counts = self.counts
        counts[fingerprint] = counts.get(fingerprint, 0) + runs
        if len(counts) > 2 * self.MAX_KEPT:
            self._trim()

    def merge(self, other: LiteralValues) -> None:
        runs = self.runs + other.runs
        if other.cutoff is not None and (self.cutoff is None or other.cutoff < self.cutoff):
            self.cutoff = other.cutoff
            self.counts = {key: count for key, count in self.counts.items() if key <= other.cutoff}
        for fingerprint, count in other.counts.items():
            self.add(fingerprint, count)
        self.runs = runs

    def _trim(self) -> None:
        if len(self.counts) > self.MAX_KEPT:
            kept = sorted(self.counts)[: self.MAX_KEPT]
            self.counts = {key: self.counts[key] for key in kept}
            self.cutoff = kept[-1]

    def distinct(self) -> float:
        """Distinct sets of values among the runs (estimated past ``MAX_KEPT``)."""
        self._trim()
        if self.cutoff is None:
            return float(len(self.counts))
        return min(float(self.runs), (len(self.counts) - 1) * 2**32 / (self.cutoff + 1))

    def repeated_runs(self) -> float:
        """Runs that counted values an earlier run had counted already."""
        return max(0.0, self.runs - self.distinct())

    def most_repeated(self) -> int:
        """The runs of the most frequent set of values (among those kept)."""
        return max(self.counts.values(), default=0)


def literal_fingerprint(command: Any) -> int | None:
    """The fingerprint of an aggregation's literal values: a CRC-32 of its pipeline as logged (None without one)."""
    if type(command) is not dict:
        return None
    pipeline = command.get("pipeline")
    if type(pipeline) is not list:
        return None
    try:
        return crc32(orjson.dumps(pipeline))
    except (TypeError, orjson.JSONEncodeError):
        return None


@_pickled_as_arguments
@dataclass(slots=True)
class PlanCost:
    """What the executions with one plan summary cost: durations and work, for comparing competing plans."""

    count: int = 0
    total_ms: float = 0.0
    keys_examined: int = 0
    docs_examined: int = 0
    nreturned: int = 0

    def merge(self, other: PlanCost) -> None:
        self.count += other.count
        self.total_ms += other.total_ms
        self.keys_examined += other.keys_examined
        self.docs_examined += other.docs_examined
        self.nreturned += other.nreturned


@_pickled_as_arguments
@dataclass(slots=True)
class PlanRun:
    """Consecutive executions of a shape (in time order) and how often their plan changed from one to the next."""

    first_ms: float
    first_plan: str
    last_ms: float
    last_plan: str
    switches: int = 0


@_pickled_as_arguments
@dataclass(slots=True)
class PlanOrder:
    """When a shape's plan changed: the runs of executions of each part of the input, joined when merged. A plan
    that changes once (an index was built) is not one that keeps changing (the planner hesitating)."""

    runs: list[PlanRun] = field(default_factory=list)  # in time order; one per part until merged
    sealed: int = 0  # the plan changes of inputs that ended (``seal``): nothing joins them any more

    def add(self, ts_ms: float, plan: str) -> None:
        runs = self.runs
        if runs and ts_ms >= runs[-1].last_ms:
            last = runs[-1]
            if plan != last.last_plan:
                last.switches += 1
            last.last_ms, last.last_plan = ts_ms, plan
        else:  # the first execution, or one logged out of order: a part of its own
            runs.append(PlanRun(ts_ms, plan, ts_ms, plan))
            if len(runs) > 1:
                self.runs = _join_plan_runs(runs)

    def merge(self, other: PlanOrder) -> None:
        self.sealed += other.sealed
        self.runs = _join_plan_runs(self.runs + [PlanRun(r.first_ms, r.first_plan, r.last_ms, r.last_plan, r.switches)
                                                 for r in other.runs])

    def seal(self) -> None:
        """The input ended: its runs are final. What follows (another input: another server, another day) is not the
        continuation of its last execution, so it is never joined to it, and the state no longer depends on how the
        input was cut into parts."""
        self.sealed = self.switches
        self.runs = []

    @property
    def switches(self) -> int:
        """Plan changes from one execution to the next, over everything merged."""
        runs = self.runs
        return self.sealed + sum(run.switches for run in runs) + sum(
            before.last_plan != after.first_plan for before, after in zip(runs, runs[1:]))


def _join_plan_runs(runs: list[PlanRun]) -> list[PlanRun]:
    runs = sorted(runs, key=lambda run: (run.first_ms, run.last_ms))
    while len(runs) > MAX_EDGES:  # the oldest neighbours: what a merge in input order would have joined
        first, second = runs[0], runs.pop(1)
        first.switches += second.switches + (first.last_plan != second.first_plan)
        first.last_ms, first.last_plan = second.last_ms, second.last_plan
    return runs


@_pickled_as_arguments
@dataclass(slots=True)
class Burst:
    """Lookups of one shape from one connection, each starting at most ``BURST_GAP_MS`` after the previous ended."""

    start_ms: float
    end_ms: float
    size: int = 1
    connection: str = ""
    app: str = ""

    def worse_than(self, other: Burst | None) -> bool:
        """More lookups, then a shorter window, then earlier, then the first connection by name."""
        if other is None:
            return True
        mine, theirs = (self.size, other.end_ms - other.start_ms, other.start_ms), \
            (other.size, self.end_ms - self.start_ms, self.start_ms)
        return mine > theirs or (mine == theirs and self.connection < other.connection)


@_pickled_as_arguments
@dataclass(slots=True)
class BurstLog:
    """The bursts of a point-lookup shape (``shapes.shape.point_lookup_field``): the worst one, how many bursts of each
    size, and per connection the bursts at the edges of each part of the input, which may continue into a neighbour.
    A part keeps at most its first and last burst of a connection open; any burst between them is final."""

    MAX_CONNECTIONS = 1_000
    open: dict[str, list[Burst]] = field(default_factory=dict)  # connection -> open bursts, in time order
    worst: Burst | None = None  # the worst final burst
    sizes: dict[int, int] = field(default_factory=dict)  # final bursts of two lookups or more, by size
    capped: bool = False  # connections past MAX_CONNECTIONS were not followed

    def add(self, connection: str, start_ms: float, end_ms: float, app: str) -> None:
        bursts = self.open.get(connection)
        if bursts is None:
            if len(self.open) >= self.MAX_CONNECTIONS:
                self.capped = True
                return
            self.open[connection] = [Burst(start_ms, end_ms, 1, connection, app)]
            return
        last = bursts[-1]
        if start_ms - last.end_ms <= BURST_GAP_MS and end_ms >= last.start_ms:
            last.size += 1
            last.start_ms, last.end_ms = min(last.start_ms, start_ms), max(last.end_ms, end_ms)
            return
        burst = Burst(start_ms, end_ms, 1, connection, app)
        if len(bursts) == 1:
            bursts.append(burst)
        else:
            self._close(bursts[-1])
            bursts[-1] = burst

    def _close(self, burst: Burst) -> None:
        if burst.size >= 2:
            self.sizes[burst.size] = self.sizes.get(burst.size, 0) + 1
        if burst.worse_than(self.worst):
            self.worst = burst

    def merge(self, other: BurstLog) -> None:
        for connection, theirs in other.open.items():
            mine = self.open.get(connection)
            if mine is None and len(self.open) >= self.MAX_CONNECTIONS:
                self.capped = True
                for burst in theirs:
                    self._close(burst)
                continue
            joined = self._join(sorted((mine or []) + theirs, key=lambda burst: (burst.start_ms, burst.end_ms)))
            self.open[connection] = joined
        for size, count in other.sizes.items():
            self.sizes[size] = self.sizes.get(size, 0) + count
        if other.worst is not None and other.worst.worse_than(self.worst):
            self.worst = other.worst
        self.capped = self.capped or other.capped

    def _join(self, bursts: list[Burst]) -> list[Burst]:
        joined: list[Burst] = []
        for burst in bursts:
            last = joined[-1] if joined else None
            if last is not None and burst.start_ms - last.end_ms <= BURST_GAP_MS:
                joined[-1] = Burst(last.start_ms, max(last.end_ms, burst.end_ms), last.size + burst.size,
                                   last.connection, last.app)
            else:
                joined.append(Burst(burst.start_ms, burst.end_ms, burst.size, burst.connection, burst.app))
        while len(joined) > MAX_EDGES:  # neither edge: what a merge in input order would have closed
            self._close(joined.pop(1))
        return joined

    def seal(self) -> None:
        """The input ended: its open bursts are final (another input's connection of the same name is another
        client, and a burst never continues into another input)."""
        for bursts in self.open.values():
            for burst in bursts:
                self._close(burst)
        self.open = {}

    def final(self) -> tuple[Burst | None, dict[int, int]]:
        """The worst burst and the number of bursts of each size, counting the open ones as final (everything has
        been merged); the log itself is left as it is."""
        worst, sizes = self.worst, dict(self.sizes)
        for bursts in self.open.values():
            for burst in bursts:
                if burst.size >= 2:
                    sizes[burst.size] = sizes.get(burst.size, 0) + 1
                if burst.worse_than(worst):
                    worst = burst
        return worst, sizes


@dataclass
class Representative:
    """The most recent entry of a shape whose command is complete: the query a what-if evaluates."""

    ts: datetime | None
    command: dict[str, Any]
    op: str


class _ExecutionCommand:
    """What the two forms of a shape's representative execution share: equality by namespace, operation, time and
    command (whatever order the command's keys were pickled in), and the command read as an ``Event`` has it."""

    __slots__ = ()
    ns: str
    op: str
    ts: datetime | None
    kept_command: dict[str, Any] | None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _ExecutionCommand):
            return NotImplemented
        return (self.ns, self.op, self.ts, self.kept_command) == (other.ns, other.op, other.ts, other.kept_command)

    __hash__ = None  # type: ignore[assignment]

    @property
    def command(self) -> dict[str, Any] | None:
        return None if self.op == "getMore" else self.kept_command

    @property
    def originating_command(self) -> dict[str, Any] | None:
        return self.kept_command if self.op == "getMore" else None


class LatestExecution(_ExecutionCommand):
    """A shape's latest complete execution while its input is being read: only what a representative is kept for
    (namespace, operation, time and command, a getMore's originating command), not the whole ``Event``, whose fields
    and their values were a fifth of a shape's memory on a log of 100,000 shapes. The command is the event's own dict
    (no copy); it is pickled once the input ends (``KeptExecution``)."""

    __slots__ = ("ns", "op", "ts", "kept_command")

    def __init__(self, ns: str, op: str, ts: datetime | None, kept_command: dict[str, Any]) -> None:
        self.ns, self.op, self.ts, self.kept_command = ns, op, ts, kept_command

    def __repr__(self) -> str:
        return f"LatestExecution({self.ns!r}, {self.op!r}, {self.ts!r}, {self.kept_command!r})"


class KeptExecution(_ExecutionCommand):
    """A representative execution once its input has ended: its namespace, operation, time and command (a getMore's
    originating command), as a reduced ``Event`` has them. The command is kept pickled: a tenth of the memory of its
    dicts, and a workload can have 100,000 shapes; the few rules and estimates that read it unpickle a fresh copy."""

    __slots__ = ("ns", "op", "ts", "packed")

    def __init__(self, ns: str, op: str, ts: datetime | None, packed: bytes) -> None:
        self.ns, self.op, self.ts, self.packed = ns, op, ts, packed

    @classmethod
    def of(cls, event: Event) -> KeptExecution:
        command = event.originating_command if event.op == "getMore" else event.command
        return cls(event.ns, event.op, event.ts, pickle.dumps(command, protocol=pickle.HIGHEST_PROTOCOL))

    def __reduce__(self) -> tuple[type[KeptExecution], tuple[Any, ...]]:
        return KeptExecution, (self.ns, self.op, self.ts, self.packed)

    @property
    def kept_command(self) -> dict[str, Any] | None:  # type: ignore[override]
        return pickle.loads(self.packed)  # type: ignore[no-any-return]


#: A write command's own count of the documents it wrote, by operation.
_WRITTEN = {"update": "n_matched", "delete": "n_deleted", "insert": "n_inserted"}


#: The counters of ShapeStats that merging adds up.
_SUMMED_COUNTERS = ("count", "getmores", "keys_examined", "docs_examined", "nreturned", "measured", "keys_measured",
                    "docs_measured", "blocking_sorts", "used_disk", "errors", "truncated", "internal", "fast",
                    "num_yields", "yields_measured", "response_bytes", "responses_measured", "replanned",
                    "skipped_executions", "skip_total", "bulk_written", "under_limit", "under_limit_returned")


@dataclass(slots=True)  # a workload of 100,000 shapes holds 100,000 of these: 40 slots are a quarter of a dict
class ShapeStats:
    shape: QueryShape
    count: int = 0
    getmores: int = 0
    duration: DurationHistogram = field(default_factory=DurationHistogram)
    keys_examined: int = 0
    docs_examined: int = 0
    nreturned: int = 0
    measured: int = 0  # executions that logged what they returned (or matched) and what they examined
    keys_measured: int = 0  # executions that logged keysExamined (or nscanned)
    docs_measured: int = 0  # executions that logged docsExamined (or nscannedObjects): ≤4.0 aggregations do not
    plans: dict[str, int] = field(default_factory=dict)
    blocking_sorts: int = 0
    used_disk: int = 0
    errors: int = 0
    truncated: int = 0
    internal: int = 0
    internal_reason: str | None = None
    max_in_length: int = 0
    apps: dict[str, int] = field(default_factory=dict)
    connections: CappedSet = field(default_factory=CappedSet)
    server_hashes: dict[str, CappedSet] = field(default_factory=dict)
    first_seen: datetime | None = None
    last_seen: datetime | None = None
    timeline: Timeline = field(default_factory=Timeline)
    # the latest execution with a complete command (kept as a KeptExecution once its input has ended)
    _latest: Event | LatestExecution | KeptExecution | None = field(default=None, repr=False)
    # the latest runs of an aggregation (start, duration), and its sets of literal values (both _NO_RUNS and
    # _NO_LITERAL_VALUES, shared and never changed, for any other shape)
    runs: RunLog = field(default_factory=lambda: _NO_RUNS)
    literal_values: LiteralValues = field(default_factory=lambda: _NO_LITERAL_VALUES)
    num_yields: int = 0
    yields_measured: int = 0  # executions that logged numYields
    response_bytes: int = 0
    responses_measured: int = 0  # executions that logged reslen / responseLength
    replanned: int = 0
    skipped_executions: int = 0  # executions with a skip (find, count, a pipeline's $skip)
    skip_total: int = 0
    skip_max: int = 0
    # executions with a limit that returned fewer documents than it (so all they matched), and what they returned
    under_limit: int = 0
    under_limit_returned: int = 0
    plan_costs: dict[str, PlanCost] = field(default_factory=dict)  # plan summary -> what its executions cost
    plan_order: PlanOrder = field(default_factory=PlanOrder)
    # point lookups: bursts from one connection (QY002); _NO_BURSTS, shared and never changed, for any other shape
    bursts: BurstLog = field(default_factory=lambda: _NO_BURSTS)
    bulk_written: int = 0  # documents bulk tools (mongorestore, …) wrote: a one-off load, not a write rate
    fast: int = 0  # executions left out by --min-ms
    fast_max_ms: float = 0.0
    literals: LiteralStats = field(default_factory=LiteralStats)  # the first executions' filter values, as counts
    timing: TimeBreakdown | None = None  # where the time went, when any execution logged it (rare: made on demand)
    _point_lookup: bool | None = field(default=None, repr=False, compare=False)  # cached point_lookup_field(shape)

    def add(self, event: Event, observation: ShapeObservation) -> None:
        """Count one execution. The hot path of every run: it reads the event's own fields once (an Event holds
        only what its line had; the rest are class defaults) and does as little as it can per field."""
        fields = event.__dict__
        get = fields.get
        self.count += 1
        duration = get("duration_ms", 0.0)
        if duration is None:  # a damaged duration (a counted problem): unknown, so no part of the percentiles
            duration = 0.0
        else:
            self.duration.add(duration)
        keys, docs, returned = get("keys_examined"), get("docs_examined"), get("nreturned")
        if keys is not None:
            self.keys_examined += keys
            self.keys_measured += 1
        if docs is not None:
            self.docs_examined += docs
            self.docs_measured += 1
        if returned is None and (get("statement") or event.op in _WRITTEN):
            # a write returns nothing: what it matched, deleted or inserted stands for it (the index selection
            # charges each index for the documents written)
            returned = get(_WRITTEN.get(event.op, "n_deleted"))
        if returned is not None:
            self.nreturned += returned
            if keys is not None or docs is not None:
                self.measured += 1
            if "limit" in self.shape.options:
                self._count_under_limit(event, returned)
        plan = get("plan_summary")
        if plan:
            if type(plan) is str:  # one string per plan summary, not one per shape (and per plan run) it ran in
                plan = intern(plan)
            plans = self.plans
            plans[plan] = plans.get(plan, 0) + 1
            cost = self.plan_costs.get(plan)
            if cost is None:
                cost = self.plan_costs[plan] = PlanCost()
            cost.count += 1
            cost.total_ms += duration
            if keys:
                cost.keys_examined += keys
            if docs:
                cost.docs_examined += docs
            if returned:
                cost.nreturned += returned
        if event.op == "getMore":
            self.getmores += 1
        elif _observe_literals is None or not _observe_literals(self.literals, self.shape.op, event.command,
                                                                 FieldLiterals, WRAPPER_WIDTHS, IN_VALUES,
                                                                 DISTINCT_CAP):
            self.literals.observe(self.shape.op, event.command)  # the reference (C declines documents as values)
        if get("has_sort_stage"):
            self.blocking_sorts += 1
        if get("used_disk") or get("spills"):
            self.used_disk += 1
        if get("error") is not None:
            self.errors += 1
        if get("truncated"):
            self.truncated += 1
        internal = get("internal")
        if internal is not None:
            self.internal += 1
            if self.internal_reason is None or internal < self.internal_reason:
                self.internal_reason = internal  # the smallest: the same whatever the order of the events
        if observation.in_length > self.max_in_length:
            self.max_in_length = observation.in_length
        skip = observation.skip
        if skip:
            self.skipped_executions += 1
            self.skip_total += skip
            if skip > self.skip_max:
                self.skip_max = skip
        yields = get("num_yields")
        if yields is not None:
            self.num_yields += yields
            self.yields_measured += 1
        response = get("response_length")
        if response is not None:
            self.response_bytes += response
            self.responses_measured += 1
        if get("replanned"):
            self.replanned += 1
        timing = get("timing")
        if timing is not None:
            breakdown = self.timing
            if breakdown is None:
                breakdown = self.timing = TimeBreakdown()
            if _add_timing is None or not _add_timing(breakdown, timing, duration, WHOLE_UNITS, SKETCHED,
                                                      DurationHistogram, EXACT_LIMIT):
                breakdown.add(timing, duration)  # the reference; the C extension declines what it does not take on
        app = get("app_name")
        if app:
            apps = self.apps
            count = apps.get(app)
            if count is None and type(app) is str:
                app = intern(app)  # one string per application name, not one per shape it ran
            apps[app] = (count or 0) + 1
            if returned and event.op in _WRITTEN and is_bulk_tool(app):
                self.bulk_written += returned
        connection = get("connection")
        if connection and connection not in self.connections.members:
            self.connections.add(intern(connection))  # one string per connection, not one per shape it ran
        for name, report_name in _HASH_FIELDS:
            value = get(name)
            if value:
                hashes = self.server_hashes.get(report_name)
                if hashes is None:
                    hashes = self.server_hashes[report_name] = CappedSet()
                if value not in hashes.members:
                    hashes.add(value)
        ts = get("ts")
        if ts is not None:
            first, last = self.first_seen, self.last_seen
            if first is None or last is None:
                if first is None or ts < first:
                    self.first_seen = ts
                if last is None or ts >= last:
                    self.last_seen = ts
            elif ts >= last:  # one comparison in the usual case, a log in time order (first_seen <= last_seen)
                self.last_seen = ts
            elif ts < first:
                self.first_seen = ts
            latest = self._latest
            if latest is None or latest.ts is None or ts >= latest.ts:
                self._offer_representative(event)
            epoch_seconds = ts.timestamp()
            self.timeline.add_at(epoch_seconds, duration, docs or 0, keys or 0)
            if event.op != "getMore":
                end = epoch_seconds * 1000
                if plan:
                    self.plan_order.add(end, plan)
                if self.shape.op == "aggregate":
                    runs = self.runs
                    if runs is _NO_RUNS:
                        runs = self.runs = RunLog()
                    runs.add(end - duration, duration)
                    fingerprint = literal_fingerprint(event.command)
                    if fingerprint is not None:
                        values = self.literal_values
                        if values is _NO_LITERAL_VALUES:
                            values = self.literal_values = LiteralValues()
                        values.add(fingerprint)
                elif self._point_lookup is not False:
                    self._record_lookup(end, duration, connection or get("remote"), app)
        elif self._latest is None:
            self._offer_representative(event)

    def _count_under_limit(self, event: Event, returned: int) -> None:
        """An execution that returned fewer documents than its limit (and first batch) returned all it matched."""
        if event.op != "getMore":
            cap = first_reply_cap(self.shape.op, event.command)
            if cap is not None and returned < cap:
                self.under_limit += 1
                self.under_limit_returned += returned

    def _record_lookup(self, end_ms: float, duration: float, caller: str | None, app: str | None) -> None:
        """A point lookup's place in its connection's bursts (the first call finds out whether this is a lookup)."""
        if self._point_lookup is None:
            self._point_lookup = point_lookup_field(self.shape) is not None
        if self._point_lookup and caller:
            bursts = self.bursts
            if bursts is _NO_BURSTS:
                bursts = self.bursts = BurstLog()
            bursts.add(caller, end_ms - duration, end_ms, app or "")

    def add_fast(self, event: Event) -> None:
        """An execution faster than --min-ms: counted, not analysed."""
        self.fast += 1
        if event.duration_ms > self.fast_max_ms:
            self.fast_max_ms = event.duration_ms

    def _offer_representative(self, event: Event) -> None:
        """Keep the latest execution whose command is complete (called for executions at or after the one kept)."""
        if event.truncated or event.unparsed:
            return
        command = event.originating_command if event.op == "getMore" else event.command
        if command is not None:
            self._latest = LatestExecution(event.ns, event.op, event.ts, command)

    def __reduce__(self) -> tuple[type[ShapeStats], tuple[Any, ...]]:
        """What a worker ships back: its constructor's arguments, with the representative execution as it is kept
        once its input ends (``KeptExecution``): a third fewer bytes than the whole event."""
        arguments = _STATS_ARGUMENTS(self)
        if self._latest is None or isinstance(self._latest, KeptExecution):
            return ShapeStats, arguments
        return ShapeStats, (*arguments[:_LATEST_POSITION], _kept_of(self._latest), *arguments[_LATEST_POSITION + 1:])

    @property
    def representative(self) -> Representative | None:
        event = self._latest
        if event is None:
            return None
        if isinstance(event, KeptExecution):
            return Representative(event.ts, event.kept_command, event.op)  # type: ignore[arg-type]
        command = event.originating_command if event.op == "getMore" else event.command
        return Representative(event.ts, command, event.op)  # type: ignore[arg-type]

    def seal(self) -> None:
        """The end of an input: what depends on the order of executions is made final (``PlanOrder.seal``,
        ``BurstLog.seal``)."""
        self.plan_order.seal()
        if self.bursts is not _NO_BURSTS:
            self.bursts.seal()
        if self._latest is not None:
            self._latest = _kept_of(self._latest)

    def merge(self, other: ShapeStats) -> None:
        for name, mine, theirs in zip(_SUMMED_COUNTERS, _SUMMED(self), _SUMMED(other)):
            if theirs:
                setattr(self, name, mine + theirs)
        self.fast_max_ms = max(self.fast_max_ms, other.fast_max_ms)
        self.skip_max = max(self.skip_max, other.skip_max)
        if other.runs is not _NO_RUNS:
            if self.runs is _NO_RUNS:
                self.runs = RunLog()
            self.runs.merge(other.runs)
        if other.literal_values is not _NO_LITERAL_VALUES:
            if self.literal_values is _NO_LITERAL_VALUES:
                self.literal_values = LiteralValues()
            self.literal_values.merge(other.literal_values)
        for plan, cost in other.plan_costs.items():
            mine_cost = self.plan_costs.get(plan)
            if mine_cost is None:
                self.plan_costs[plan] = mine_cost = PlanCost()
            mine_cost.merge(cost)
        self.plan_order.merge(other.plan_order)
        if other.bursts is not _NO_BURSTS:
            if self.bursts is _NO_BURSTS:
                self.bursts = BurstLog()
            self.bursts.merge(other.bursts)
        self.duration.merge(other.duration)
        if other.timing is not None:
            if self.timing is None:
                self.timing = TimeBreakdown()
            self.timing.merge(other.timing)
        for mine, theirs_counts in ((self.plans, other.plans), (self.apps, other.apps)):
            for key, count in theirs_counts.items():
                mine[key] = mine.get(key, 0) + count
        self.connections.merge(other.connections)
        for name, values in other.server_hashes.items():
            self.server_hashes.setdefault(name, CappedSet()).merge(values)
        if other.internal_reason is not None and (self.internal_reason is None
                                                  or other.internal_reason < self.internal_reason):
            self.internal_reason = other.internal_reason
        self.max_in_length = max(self.max_in_length, other.max_in_length)
        if other.first_seen is not None and (self.first_seen is None or other.first_seen < self.first_seen):
            self.first_seen = other.first_seen
        if other.last_seen is not None and (self.last_seen is None or other.last_seen > self.last_seen):
            self.last_seen = other.last_seen
        self.timeline.merge(other.timeline)
        self.literals.merge(other.literals)
        theirs = other._latest
        if theirs is not None:
            mine = self._latest
            if mine is None or (theirs.ts is not None and (mine.ts is None or theirs.ts > mine.ts)):
                self._latest = theirs

    @property
    def intervals(self) -> DurationHistogram:
        """Milliseconds between consecutive starts of an aggregation, over its latest runs (``RunLog``) in time order:
        taken from the runs rather than counted as events arrive, so that it is the same however the input was split
        into blocks, files or digests, and whatever the order they were merged in."""
        histogram = DurationHistogram()
        runs = self.runs.latest()
        for (previous, _), (start, _) in zip(runs, runs[1:]):
            histogram.add(start - previous)
        return histogram

    @property
    def executions(self) -> int:
        """Commands run: getMores continue an execution rather than start one (their work is in its totals)."""
        return max(self.count - self.getmores, 1)

    @property
    def main_plan(self) -> str | None:
        """The plan summary the log shows most often for this shape."""
        return max(self.plans.items(), key=lambda item: item[1])[0] if self.plans else None

    @property
    def main_plan_share(self) -> float:
        return max(self.plans.values()) / max(self.count, 1) if self.plans else 0.0  # the main plan's count

    @property
    def is_internal(self) -> bool:
        """Internal when most of its executions are (a shape is one namespace, so it is nearly always all or none)."""
        return self.internal * 2 > self.count

    def per_returned(self, examined: int) -> float | None:
        """Examined per document returned; None when nothing was measured or nothing returned."""
        if not self.measured or not self.nreturned:
            return None
        return examined / self.nreturned


#: What a shape that is not an aggregation holds for its runs and literal values, and one that is not a point lookup
#: for its bursts: one shared empty object each (never changed: ShapeStats makes its own before adding to one), rather
#: than three objects and four containers in every shape. They unpickle as themselves (``_shared_empty``).
#: Their containers cannot be changed (a tuple, read-only mappings): a caller that adds to them fails loudly rather
#: than adding to every shape.
_NO_RUNS = RunLog(())  # type: ignore[arg-type]
_NO_LITERAL_VALUES = LiteralValues(MappingProxyType({}))  # type: ignore[arg-type]
_NO_BURSTS = BurstLog(MappingProxyType({}), None, MappingProxyType({}))  # type: ignore[arg-type]
_SHARED_EMPTIES = {"runs": _NO_RUNS, "literal_values": _NO_LITERAL_VALUES, "bursts": _NO_BURSTS}


def _shared_empty(name: str) -> Any:
    return _SHARED_EMPTIES[name]


def _sharing_reducer(cls: type[_Packed], name: str) -> Callable[[_Packed], tuple[Any, tuple[Any, ...]]]:
    """``_argument_reducer``, except that the shared empty object pickles as a reference to itself."""
    reduce_arguments, shared = _argument_reducer(cls), _SHARED_EMPTIES[name]

    def reduce(self: _Packed) -> tuple[Any, tuple[Any, ...]]:
        return (_shared_empty, (name,)) if self is shared else reduce_arguments(self)

    return reduce


RunLog.__reduce__ = _sharing_reducer(RunLog, "runs")  # type: ignore[method-assign, assignment]
LiteralValues.__reduce__ = _sharing_reducer(LiteralValues, "literal_values")  # type: ignore[method-assign, assignment]
BurstLog.__reduce__ = _sharing_reducer(BurstLog, "bursts")  # type: ignore[method-assign, assignment]

# getattr: an in-place build older than this module lacks add_timing (TimeBreakdown.add then runs in Python)
_add_timing = getattr(speedups, "add_timing", None)
# an in-place build older than FieldLiterals' packed checksums (LITERALS_PACKED) would add them to a set: Python then
_observe_literals = getattr(speedups, "observe_literals", None) if getattr(speedups, "LITERALS_PACKED", 0) else None


def execution_context(compiled: ModuleType) -> tuple[Any, ...]:
    """What the C ShapeStats.add (``add_execution``) works with, in the order it reads it: the classes it checks or
    makes, blank objects it makes new ones like (never changed), the reference functions it calls back for the rare
    pieces, the limits, and the table of the slots it reads and writes in place (made by the extension from their
    member descriptors, in the order it names them: ``EXECUTION_SLOTS``)."""
    slotted = {cls.__name__: cls for cls in (ShapeStats, QueryShape, ShapeObservation, DurationHistogram, Timeline,
                                             TimeBucket, PlanCost, PlanOrder, PlanRun, CappedSet, LatestExecution,
                                             RunLog, LiteralValues, TimeBreakdown, FieldLiterals, LiteralStats)}
    return (Event, datetime, ShapeStats, ShapeObservation, TimeBreakdown, LatestExecution, RunLog, _NO_RUNS,
            LiteralValues, _NO_LITERAL_VALUES, DurationHistogram, TimeBucket(), PlanCost(), CappedSet(),
            FieldLiterals(), WRAPPER_WIDTHS, WHOLE_UNITS, SKETCHED, first_reply_cap, literal_fingerprint,
            is_bulk_tool, orjson.dumps, math.log, LOG_GAMMA, IN_VALUES, DISTINCT_CAP, EXACT_LIMIT, FIRST_BATCH,
            SMALL_SET, SET_CAP, Timeline.MAX_BUCKETS, RunLog.MAX_RUNS, LiteralValues.MAX_KEPT,
            compiled.execution_slots(tuple(vars(slotted[owner])[name] for owner, name in compiled.EXECUTION_SLOTS)))


# getattr: an in-place build older than this module lacks add_execution (ShapeStats.add then runs in Python)
_add_execution = getattr(speedups, "add_execution", None)
_EXECUTION_CONTEXT = execution_context(speedups) if speedups is not None and _add_execution is not None else ()
_STATS_ARGUMENTS = attrgetter(*(item.name for item in fields(ShapeStats)))
_LATEST_POSITION = [item.name for item in fields(ShapeStats)].index("_latest")
_SUMMED = attrgetter(*_SUMMED_COUNTERS)


def _kept_of(event: Event | KeptExecution) -> KeptExecution | None:
    """A representative execution as it is kept once its input ends (``KeptExecution``); None for a command nested
    deeper than pickle goes (a hostile line orjson still reads): the shape keeps its statistics, not that example."""
    if isinstance(event, KeptExecution):
        return event
    try:
        return KeptExecution.of(event)
    except (RecursionError, pickle.PicklingError, TypeError):
        return None


@dataclass
class Digest:
    """The shapes of a workload and their statistics."""

    options: DigestOptions = field(default_factory=DigestOptions)
    shapes: dict[str, ShapeStats] = field(default_factory=dict)
    skipped: Counter[str] = field(default_factory=Counter)

    def __post_init__(self) -> None:
        options = self.options
        self._filtering = bool(options.since or options.until or options.apps)

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """A digest travelling between processes (a worker's, a Dask task's) goes as pickles of ``SHIPPED_SHAPES``
        shapes each: the pickler remembers every object it wrote until its pickle is done, and for a worker's tens of
        thousands of shapes that memory was as large as the digest itself."""
        shapes = list(self.shapes.items())
        parts = [pickle.dumps(shapes[start:start + SHIPPED_SHAPES], protocol=pickle.HIGHEST_PROTOCOL)
                 for start in range(0, len(shapes), SHIPPED_SHAPES)]
        return _shipped_digest, (self.options, self.skipped, parts)

    def add(self, event: Event) -> None:
        if self._filtering:
            reason = self._excluded(event)
            if reason is not None:
                self.skipped[reason] += 1
                return
        shape, observation = shape_of_shared(event)
        stats = self.shapes.get(shape.fingerprint)
        if stats is None:
            stats = self.shapes[shape.fingerprint] = ShapeStats(shape)
        duration = event.duration_ms
        if duration is not None and duration < self.options.min_ms:  # an unknown duration is not known to be fast
            stats.add_fast(event)
        elif _add_execution is None or not _add_execution(stats, event, observation, _EXECUTION_CONTEXT):
            stats.add(event, observation)  # the reference; the C extension declines what it does not take on

    def _excluded(self, event: Event) -> str | None:
        """Why --since/--until leave the event out (called only when one of them is set)."""
        options = self.options
        if options.apps and not app_matches(event.app_name, options.apps):
            return "application not matched by --app"
        if not (options.since or options.until):
            return None
        if event.ts is None:
            return "no timestamp (with --since/--until)"
        if options.since is not None and event.ts < options.since:
            return "before --since"
        if options.until is not None and event.ts >= options.until:
            return "after --until"
        return None

    def seal(self) -> None:
        """The end of an input (the Runner calls it when the last block of an input is merged): see
        ``ShapeStats.seal``. Sealed digests merge exactly, in any order."""
        for stats in self.shapes.values():
            stats.seal()

    def merge(self, other: Digest) -> None:
        for fingerprint, stats in other.shapes.items():
            mine = self.shapes.get(fingerprint)
            if mine is None:
                self.shapes[fingerprint] = stats
            else:
                mine.merge(stats)
        self.skipped.update(other.skipped)

    def split(self, parts: int) -> list[Digest]:
        """The digest cut by shape into ``parts`` digests (``piece_of``; the first keeps the skipped counts): merged
        piece by piece and put together, the pieces of many digests are those digests merged whole."""
        pieces = [Digest(self.options) for _ in range(parts)]
        for fingerprint, stats in self.shapes.items():
            pieces[_piece(fingerprint, parts)].shapes[fingerprint] = stats
        pieces[0].skipped = self.skipped
        return pieces

    def piece_of(self, event: Event, parts: int) -> int:
        """The piece of ``split`` that adding the event changes (an event left out by a filter: the first)."""
        if self._filtering and self._excluded(event) is not None:
            return 0
        return _piece(shape_of_shared(event)[0].fingerprint, parts)

    @property
    def operations(self) -> int:
        return sum(stats.count for stats in self.shapes.values())


def _piece(fingerprint: str, parts: int) -> int:
    """A shape's piece of a digest cut in ``parts`` (the same in every process: not ``hash``, which is salted)."""
    return crc32(fingerprint.encode()) % parts


def app_matches(app: str | None, patterns: tuple[str, ...]) -> bool:
    """Whether an operation's application name matches one of the ``--app`` globs (case-insensitive; an operation
    without an appName matches none)."""
    if not app:
        return False
    name = app.casefold()
    return any(fnmatch.fnmatchcase(name, pattern.casefold()) for pattern in patterns)


#: Shapes per pickle when a digest travels (``Digest.__reduce__``).
SHIPPED_SHAPES = 2_000


def _shipped_digest(options: DigestOptions, skipped: Counter[str], parts: list[bytes]) -> Digest:
    digest = Digest(options, skipped=skipped)
    for part in parts:
        digest.shapes.update(pickle.loads(part))
    return digest
