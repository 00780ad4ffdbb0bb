"""One operation, one event: a write statement and the command entry that wraps it, in whatever order they come.

An update or delete logs one WRITE-component entry per slow statement (with the plan counters) and one COMMAND entry
for the whole command (without them); 2.6-era text logs do the same for inserts. The statement entries are the
events; a wrapper that has a statement is dropped, so its duration is not counted twice. A wrapper with no statement
(its statements were each fast) is an event of its own.

Pairing does not trust the order of lines. Within one millisecond a server may write the wrapper before its
statement, and logs of several servers merged, or a log re-sorted by timestamp, interleave entries of threads with the
same name. So a statement and a wrapper pair when they have the same **key** (connection, the client's remote
address where the log gives it, operation and database), the statement falls in the wrapper's **window** (from its
start to its end: a statement ends before the command that runs it, on the same clock; a millisecond of tolerance
for rounding, a second where the log's timestamps have no milliseconds), and, when both are logged whole, the
statement's ``q`` is one of the wrapper's statements. A wrapper takes at most as many statements as it lists; a
statement belongs to one wrapper.

Blocks are parsed in parallel, so a pair may straddle two blocks. A block therefore decides only what it can: a
wrapper whose window reaches before the block's first entry or past its last is *held* (``held_wrappers``), and the
statements no wrapper took near either end of the block are handed on (``early_statements``, ``tail_statements``).
``BoundaryState`` settles them in input order: held wrappers against the previous blocks' tail statements and the
next blocks' early ones; a wrapper that nothing can claim any more is an operation.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from idxadvisor.models.events import Event

WRAPPED_OPS = frozenset({"update", "delete", "insert"})
ROUNDING_MS = 1.0  # timestamps and durations in whole milliseconds
COARSE_ROUNDING_MS = 1000.0  # timestamps in whole seconds (2.2 and 2.4 ctime logs)
#: How long an unclaimed statement may wait for its wrapper: a wrapper logs when its whole command ends, so a long
#: multi-statement command logs it minutes after its first statement.
STATEMENT_HORIZON_MS = 15 * 60 * 1000.0
MAX_MARKS_PER_KEY = 1024
_STATEMENT_LISTS = {"update": "updates", "delete": "deletes"}

Key = tuple[str, str, str, str]  # connection, remote address, operation, database


@dataclass(slots=True, eq=False)  # marks are compared by identity: each is one entry of the log
class StatementMark:
    """A statement entry as pairing needs it (the statement itself is already counted)."""

    key: Key
    ts_ms: float | None
    query: bytes | None  # the statement's ``q``, canonically encoded; None when not logged
    coarse: bool = False  # its timestamp has no fraction of a second (maybe a log without milliseconds)
    claimed: bool = False


@dataclass(slots=True, eq=False)
class WrapperMark:
    """A wrapper entry not yet settled: its window, and the statements it lists (None when not logged)."""

    event: Event
    key: Key
    start_ms: float | None
    end_ms: float | None
    queries: list[bytes] | None
    capacity: int | None  # statements it may still take (None: unknown)
    coarse: bool = False  # its timestamp has no fraction of a second
    absorbed: bool = False

    @property
    def rounding_ms(self) -> float:
        return COARSE_ROUNDING_MS if self.coarse else ROUNDING_MS

    @property
    def deadline_ms(self) -> float | None:
        """After this time no statement can belong to it any more."""
        return None if self.end_ms is None else self.end_ms + self.rounding_ms

    def covers(self, statement: StatementMark) -> bool:
        if statement.key != self.key or self.capacity == 0:
            return False
        if self.queries is not None and statement.query is not None and statement.query not in self.queries:
            return False
        if statement.ts_ms is None or self.end_ms is None:
            return True
        rounding = COARSE_ROUNDING_MS if self.coarse and statement.coarse else ROUNDING_MS
        return self.start_ms - rounding <= statement.ts_ms <= self.end_ms + rounding  # type: ignore[operator]

    def take(self, statement: StatementMark) -> None:
        statement.claimed = True
        self.absorbed = True
        if self.capacity is not None:
            self.capacity -= 1
        if self.queries is not None and statement.query is not None:
            self.queries.remove(statement.query)


def _key(event: Event) -> Key:
    return event.connection or "", event.remote or "", event.op, event.ns.partition(".")[0]


def _ts_ms(event: Event) -> float | None:
    # Epoch milliseconds as floats: datetime arithmetic with a damaged duration or date would overflow.
    return event.ts.timestamp() * 1000 if event.ts is not None else None


def _coarse(event: Event) -> bool:
    return event.ts is not None and event.ts.microsecond == 0


def _encoded(query: Any) -> bytes | None:
    if type(query) is not dict:
        return None
    try:
        return orjson.dumps(query, option=orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError):
        return None


def statement_mark(event: Event, ts_ms: float | None = None) -> StatementMark:
    """``ts_ms``: the event's time in epoch milliseconds when the caller has it already (else worked out here)."""
    command = event.command
    return StatementMark(_key(event), _ts_ms(event) if ts_ms is None else ts_ms,
                         _encoded(command.get("q")) if command else None, _coarse(event))


def wrapper_mark(event: Event, ts_ms: float | None = None) -> WrapperMark:
    """``ts_ms``: the event's time in epoch milliseconds when the caller has it already (else worked out here)."""
    end = _ts_ms(event) if ts_ms is None else ts_ms
    # A damaged duration is dropped from the event: without it, any statement before the wrapper's end may be its own.
    logged = event.__dict__.get("duration_ms") is not None
    start = None if end is None else (end - event.duration_ms if logged else float("-inf"))
    queries: list[bytes] | None = None
    capacity: int | None = None
    listed = (event.command or {}).get(_STATEMENT_LISTS.get(event.op, ""))
    if type(listed) is list and not event.truncated:
        capacity = len(listed)
        encoded = [_encoded(item.get("q")) if type(item) is dict else None for item in listed]
        queries = [query for query in encoded if query is not None] if all(encoded) else None
    return WrapperMark(event, _key(event), start, end, queries, capacity, _coarse(event))


@dataclass
class StatementPairing:
    """Pairs statements with wrappers inside one block. ``release`` receives the wrappers that turn out to be
    operations of their own, as soon as nothing later in the block could claim them."""

    release: Callable[[Event], None]
    unclaimed: dict[Key, list[StatementMark]] = field(default_factory=dict)
    pending: dict[Key, list[WrapperMark]] = field(default_factory=dict)
    held_wrappers: list[Event] = field(default_factory=list)
    early_statements: list[StatementMark] = field(default_factory=list)
    absorbed: int = 0
    first_ms: float | None = None  # the block's first time, in epoch milliseconds
    now_ms: float | None = None
    _deadlines: list[tuple[float, int, WrapperMark]] = field(default_factory=list)
    _order: Any = field(default_factory=itertools.count)

    def admit(self, event: Event) -> bool:
        """True if the event is an operation to count now; False if it was absorbed or is waiting for a statement.

        Called for every event of the block: it works out times only for writes, and while a wrapper waits."""
        ts = event.ts
        write = event.op in WRAPPED_OPS
        now = None  # the event's time in epoch milliseconds, worked out once (always for a write with a time)
        if ts is not None:
            if self.first_ms is None:
                self.first_ms = ts.timestamp() * 1000
            if write or self._deadlines:
                now = ts.timestamp() * 1000
                if self.now_ms is None or now > self.now_ms:
                    self.now_ms = now
                    self._expire(now)
        if not write:
            return True
        if event.statement:
            self._statement(statement_mark(event, now))
            return True
        if event.connection is not None:
            self._wrapper(wrapper_mark(event, now))
            return False
        return True

    def _statement(self, mark: StatementMark) -> None:
        for wrapper in self.pending.get(mark.key, ()):
            if wrapper.covers(mark):
                if not wrapper.absorbed:
                    self.absorbed += 1
                wrapper.take(mark)
                return
        marks = self.unclaimed.setdefault(mark.key, [])
        marks.append(mark)
        if len(marks) > MAX_MARKS_PER_KEY:
            del marks[: len(marks) - MAX_MARKS_PER_KEY]
        first = self.first_ms
        if first is not None and mark.ts_ms is not None and mark.ts_ms <= first + 2 * COARSE_ROUNDING_MS:
            self.early_statements.append(mark)

    def _wrapper(self, mark: WrapperMark) -> None:
        marks = self.unclaimed.get(mark.key)
        if marks:
            for statement in marks:
                if not statement.claimed and mark.covers(statement):
                    mark.take(statement)
            horizon = (self.now_ms or 0.0) - STATEMENT_HORIZON_MS
            self.unclaimed[mark.key] = [statement for statement in marks if not statement.claimed
                                        and (statement.ts_ms is None or statement.ts_ms >= horizon)]
        if mark.absorbed:
            self.absorbed += 1
        self.pending.setdefault(mark.key, []).append(mark)  # it may take further statements of its command
        deadline = mark.deadline_ms
        if deadline is not None:
            heapq.heappush(self._deadlines, (deadline, next(self._order), mark))

    def _expire(self, now: float) -> None:
        """Settle the wrappers no later statement can claim: an operation of its own unless it took a statement, or
        held for the previous block when its window reaches back before this block."""
        while self._deadlines and self._deadlines[0][0] < now:
            _, _, mark = heapq.heappop(self._deadlines)
            self._settle(mark)

    def _settle(self, mark: WrapperMark) -> None:
        waiting = self.pending.get(mark.key)
        if waiting is not None and mark in waiting:
            waiting.remove(mark)
        if mark.absorbed:
            return
        if self._reaches_before_block(mark):
            self.held_wrappers.append(mark.event)
        else:
            self.release(mark.event)

    def _reaches_before_block(self, mark: WrapperMark) -> bool:
        first = self.first_ms
        return mark.start_ms is None or first is None or mark.start_ms - mark.rounding_ms <= first

    def finish(self) -> tuple[list[Event], list[StatementMark], list[StatementMark]]:
        """At the end of the block: the wrappers it could not settle (held), its unclaimed statements near its start,
        and those near its end."""
        for waiting in list(self.pending.values()):
            for mark in list(waiting):
                if not mark.absorbed:
                    self.held_wrappers.append(mark.event)
        self.pending.clear()
        early = [mark for mark in self.early_statements if not mark.claimed]
        horizon = (self.now_ms or 0.0) - STATEMENT_HORIZON_MS
        tail = [mark for marks in self.unclaimed.values() for mark in marks
                if not mark.claimed and (mark.ts_ms is None or mark.ts_ms >= horizon)]
        return self.held_wrappers, early, tail


@dataclass
class BoundaryState:
    """Across the blocks of one input, in input order: the wrappers still waiting for a statement, and the unclaimed
    statements of the blocks before that a held wrapper may yet take."""

    waiting: list[WrapperMark] = field(default_factory=list)
    statements: list[StatementMark] = field(default_factory=list)
    absorbed: int = 0

    def resolve(self, held: Iterable[Event], early: list[StatementMark], tail: list[StatementMark],
                last_ms: float | None) -> list[Event]:
        """Settle one block against the blocks before it; the wrappers that are operations of their own."""
        for mark in self.waiting:  # wrappers of earlier blocks against this block's first statements
            for statement in early:
                if not statement.claimed and mark.covers(statement):
                    if not mark.absorbed:
                        self.absorbed += 1
                    mark.take(statement)
        for event in held:  # this block's held wrappers against the earlier blocks' last statements
            mark = wrapper_mark(event)
            for statement in self.statements:
                if not statement.claimed and mark.covers(statement):
                    mark.take(statement)
            if mark.absorbed:
                self.absorbed += 1
            else:
                self.waiting.append(mark)
        operations = []
        still_waiting = []
        for mark in self.waiting:
            if mark.absorbed:
                continue
            deadline = mark.deadline_ms
            if deadline is not None and last_ms is not None and deadline < last_ms:
                operations.append(mark.event)
            else:
                still_waiting.append(mark)
        self.waiting = still_waiting
        horizon = (last_ms or 0.0) - STATEMENT_HORIZON_MS
        self.statements = [mark for mark in [*self.statements, *tail]
                           if not mark.claimed and (mark.ts_ms is None or mark.ts_ms >= horizon)]
        return operations

    def close(self) -> list[Event]:
        """At the end of the input: every wrapper still waiting is an operation of its own."""
        operations = [mark.event for mark in self.waiting if not mark.absorbed]
        self.waiting = []
        return operations
