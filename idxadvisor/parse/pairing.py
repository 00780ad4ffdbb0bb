"""One write, one operation: a write statement and the command entry that wraps it, in whatever order they come.

An update or delete logs one WRITE-component entry per slow statement (with the plan counters) and one COMMAND entry
for the whole command (without them, but with its duration: the write-concern wait, the oplog slots and the
admission queue are the command's); 2.6-era text logs do the same for inserts. A paired write is one operation: the
statement's event, with its counters, timed by its command (``apply_command``). A wrapper with no statement (its
statements were each fast) is an operation of its own, shaped ``<statements not logged>``.

**Sequence.** On one connection operations run one after another, so the k-th command owns the statements logged
between the end of the (k-1)-th and its own end. Pairing works per **key** (connection, the client's remote address
where the log gives it, operation and database): a statement may pair with a wrapper whose **window** holds it (from
the wrapper's start to its end, a millisecond of rounding either side, a second where the log's timestamps have no
milliseconds) and, when both are logged whole, whose statement list holds its ``q``. Each wrapper is settled once
its window has passed, in the order of the wrappers' ends, and takes the earliest statement it covers, then the
others strictly before its end (``WrapperMark.take_from``). So a 0 ms statement that starts the millisecond the
previous command ends, in the window of both, goes to its own command, whatever the order of the lines within that
millisecond (a re-sorted or merged log): the previous command has already taken its earlier statement. A wrapper
is an operation of its own (``<statements not logged>``) only when no statement is left that it can own.

**Durations.** A command with several logged statements splits its duration among them in proportion to their own
durations (equally when all are 0 ms): each keeps its own time, and the rest of the command's (the statements too
fast to log, the write-concern wait, the queue) is shared the same way. The time components the command
logged (``Event.timing``) are shared in the same proportion where the statement has none of its own.
A statement whose command never shows keeps its own duration.

**Holding.** A statement is counted only once its command is known, or once none can come any more: a wrapper of its
key that starts after it, ``STATEMENT_HORIZON_MS`` of log time, or the end of the input. Blocks are parsed in
parallel, so a pair may straddle two blocks: a wrapper whose window reaches before the block's first entry, or past
its end with no statement yet, is *held* (``held_wrappers``), and the statements no wrapper took are handed on
(``early_statements`` near the block's start, ``tail_statements`` the rest). ``BoundaryState`` settles them in input
order.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from idxadvisor.models.events import Event, apply_command

WRAPPED_OPS = frozenset({"update", "delete", "insert"})
ROUNDING_MS = 1.0  # timestamps and durations in whole milliseconds
COARSE_ROUNDING_MS = 1000.0  # timestamps in whole seconds (2.2 and 2.4 ctime logs)
#: How long an unclaimed statement may wait for its wrapper: a wrapper logs when its whole command ends, so a long
#: multi-statement command logs it minutes after its first statement.
STATEMENT_HORIZON_MS = 15 * 60 * 1000.0
#: Time going back by more than this within a block is a restart of the log (``StatementPairing._restart``), not
#: the reordering of lines within a millisecond or a second that merged and re-sorted logs show.
RESTART_MS = 2 * COARSE_ROUNDING_MS
MAX_MARKS_PER_KEY = 1024  # statements of one key waiting for a wrapper: past this, the oldest are counted as they are
_STATEMENT_LISTS = {"update": "updates", "delete": "deletes"}

Key = tuple[str, str, str, str]  # connection, remote address, operation, database


@dataclass(slots=True, eq=False)  # marks are compared by identity: each is one entry of the log
class StatementMark:
    """A statement entry waiting for its command (its event is counted once that is settled)."""

    event: Event
    key: Key
    ts_ms: float | None
    query: bytes | None  # the statement's ``q``, canonically encoded; None when not logged
    coarse: bool = False  # its timestamp has no fraction of a second (maybe a log without milliseconds)
    claimed: bool = False


@dataclass(slots=True, eq=False)
class WrapperMark:
    """A wrapper entry not yet settled: its window, the statements it lists (None when not logged) and has taken."""

    event: Event
    key: Key
    start_ms: float | None
    end_ms: float | None
    queries: list[bytes] | None
    capacity: int | None  # statements it may still take (None: unknown)
    coarse: bool = False  # its timestamp has no fraction of a second
    statements: list[StatementMark] = field(default_factory=list)

    @property
    def absorbed(self) -> bool:
        return bool(self.statements)

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

    def at_end(self, statement: StatementMark) -> bool:
        """The statement's time ties with (or passes) the wrapper's end: maybe the first of the next command."""
        return statement.ts_ms is not None and self.end_ms is not None and statement.ts_ms >= self.end_ms

    def take(self, statement: StatementMark) -> None:
        statement.claimed = True
        self.statements.append(statement)
        if self.capacity is not None:
            self.capacity -= 1
        if self.queries is not None and statement.query is not None:
            self.queries.remove(statement.query)

    def take_from(self, statements: Iterable[StatementMark]) -> None:
        """Take its statements among those not yet claimed (called once every statement of its window is known, and
        for wrappers in the order of their ends): the earliest it covers (greedy by end, earliest first, gives every
        command one statement wherever the log allows it), then the others strictly before its end. A statement at
        its very end may be the first of the next command: it is left for that one."""
        covered = sorted((statement for statement in statements if not statement.claimed and self.covers(statement)),
                         key=_statement_order)
        if not covered:
            return
        self.take(covered[0])
        for statement in covered[1:]:
            if self.capacity == 0:
                break
            if not self.at_end(statement):
                self.take(statement)

    def paired(self) -> list[Event]:
        """The statements' events, each timed by this command (see the module's docstring)."""
        events = [statement.event for statement in self.statements]
        own = [event.duration_ms or 0.0 for event in events]  # a damaged (unknown) duration weighs nothing
        total = sum(own)
        for event, duration in zip(events, own):
            share = duration / total if total > 0 else 1 / len(events)
            apply_command(event, self.event, share)
        return events


def _end_order(wrapper: WrapperMark) -> float:
    return wrapper.end_ms if wrapper.end_ms is not None else float("inf")


def _statement_order(statement: StatementMark) -> float:
    return statement.ts_ms if statement.ts_ms is not None else float("-inf")


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
    return StatementMark(event, _key(event), _ts_ms(event) if ts_ms is None else ts_ms,
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


def _stale(statement: StatementMark, wrapper: WrapperMark) -> bool:
    """The statement ran before the wrapper's command started: no wrapper after this one can own it either."""
    if statement.ts_ms is None or wrapper.start_ms is None:
        return False
    rounding = COARSE_ROUNDING_MS if wrapper.coarse or statement.coarse else ROUNDING_MS
    return statement.ts_ms < wrapper.start_ms - rounding


@dataclass
class StatementPairing:
    """Pairs statements with wrappers inside one block. ``release`` receives each operation as soon as it is known:
    a statement timed by its command, a statement no command can own, a wrapper with no statement."""

    release: Callable[[Event], None]
    unclaimed: dict[Key, list[StatementMark]] = field(default_factory=dict)
    pending: dict[Key, list[WrapperMark]] = field(default_factory=dict)
    held: dict[Key, list[WrapperMark]] = field(default_factory=dict)  # wrappers whose window reaches before the block
    early_statements: list[StatementMark] = field(default_factory=list)
    absorbed: int = 0
    first_ms: float | None = None  # the block's first time, in epoch milliseconds
    now_ms: float | None = None
    _deadlines: list[tuple[float, int, WrapperMark]] = field(default_factory=list)
    _order: Any = field(default_factory=itertools.count)
    restarted: bool = False  # time went back within the block (``_restart``): nothing after reaches the block before
    _held_before: dict[Key, list[WrapperMark]] = field(default_factory=dict)  # held wrappers set aside at a restart
    _tail_before: list[StatementMark] = field(default_factory=list)  # statements they may own, set aside with them
    #: after ``finish`` of a block that started again: how many of the held wrappers and of the tail statements it
    #: handed on (the first ones) came before the restart (``BoundaryState.resolve`` settles those first)
    before_restart: tuple[int, int] | None = None

    def admit(self, event: Event) -> bool:
        """True if the event is an operation to count now; False if pairing holds it (it is released later).

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
                elif now < self.now_ms - RESTART_MS:
                    self._restart(now)
        if not write:
            return True
        if event.statement:
            self._statement(statement_mark(event, now))
            return False
        if event.connection is not None:
            self._wrapper(wrapper_mark(event, now))
            return False
        return True

    def _restart(self, now: float) -> None:
        """Time went back past any reordering: the log starts again (files concatenated, a day repeated). What waited
        is settled as the end of a block settles it: the wrappers in the order of their ends, then the statements
        none took, but for what the block before may still own (the statements near the block's start, the
        wrappers reaching before it, and the statements those cover), which is set aside and handed on at the end of
        the block. What follows is paired as if the block started there, never with what came before."""
        self._expire(float("inf"))
        for key, marks in self.unclaimed.items():
            for mark in marks:
                if mark.claimed or self._early(mark):
                    continue  # an early one is handed on from ``early_statements``
                if any(wrapper.covers(mark) for wrapper in self.held.get(key, ())):
                    self._tail_before.append(mark)
                else:
                    mark.claimed = True
                    self.release(mark.event)
        self.unclaimed = {}
        for key, wrappers in self.held.items():
            self._held_before.setdefault(key, []).extend(wrappers)
        self.held = {}
        self.restarted = True
        self.now_ms = now

    def _statement(self, mark: StatementMark) -> None:
        marks = self.unclaimed.setdefault(mark.key, [])
        marks.append(mark)
        if len(marks) > MAX_MARKS_PER_KEY:
            for old in marks[: len(marks) - MAX_MARKS_PER_KEY]:
                if not old.claimed:
                    old.claimed = True
                    self.release(old.event)
            del marks[: len(marks) - MAX_MARKS_PER_KEY]
        if self._early(mark):
            self.early_statements.append(mark)

    def _early(self, mark: StatementMark) -> bool:
        """Near the block's start: a wrapper held for the block before may own it (it is handed on, not counted)."""
        if self.restarted:
            return False
        first = self.first_ms
        return first is not None and mark.ts_ms is not None and mark.ts_ms <= first + 2 * COARSE_ROUNDING_MS

    def _wrapper(self, mark: WrapperMark) -> None:
        held = self.held.get(mark.key)
        if self._reaches_before_block(mark) or (held and any(
                mark.start_ms is None or wrapper.end_ms is None
                or mark.start_ms - 2 * mark.rounding_ms <= wrapper.end_ms for wrapper in held)):
            # its statements may be in the block before, or wanted by a wrapper that is: settled across blocks, in
            # the order of the ends, as they would be in one block
            self.held.setdefault(mark.key, []).append(mark)
            return
        self.pending.setdefault(mark.key, []).append(mark)
        deadline = mark.deadline_ms
        if deadline is not None:
            heapq.heappush(self._deadlines, (deadline, next(self._order), mark))

    def _expire(self, now: float) -> None:
        """Settle the wrappers whose window has passed, in the order of their ends."""
        while self._deadlines and self._deadlines[0][0] < now:
            _, _, mark = heapq.heappop(self._deadlines)
            self._settle(mark)

    def _settle(self, mark: WrapperMark) -> None:
        """The wrapper takes its statements: they are operations, timed by it; without any, it is one itself."""
        waiting = self.pending.get(mark.key)
        if waiting is not None and mark in waiting:
            waiting.remove(mark)
        marks = self.unclaimed.get(mark.key)
        if marks:
            mark.take_from(self._free(mark.key, marks))
            self._drop_stale(mark, marks)
        if mark.absorbed:
            self.absorbed += 1
            for event in mark.paired():
                self.release(event)
        else:
            self.release(mark.event)

    def _free(self, key: Key, marks: list[StatementMark]) -> list[StatementMark]:
        """The statements a wrapper settled in the block may take: not those before the end of a held wrapper (an
        earlier command, settled across blocks), which would take them first."""
        held = self.held.get(key)
        if not held:
            return marks
        return [statement for statement in marks
                if not any(wrapper.covers(statement) and not wrapper.at_end(statement) for wrapper in held)]

    def _drop_stale(self, mark: WrapperMark, marks: list[StatementMark]) -> None:
        """Count the statements that ran before this command started: no later command can own them (one connection
        runs one command at a time), unless a held wrapper or a block before may."""
        horizon = (self.now_ms or 0.0) - STATEMENT_HORIZON_MS
        held = self.held.get(mark.key, ())
        kept = []
        for statement in marks:
            if statement.claimed:
                continue
            if any(wrapper.covers(statement) for wrapper in held):  # settled across blocks, with its wrapper
                kept.append(statement)
                continue
            old = statement.ts_ms is not None and statement.ts_ms < horizon
            if old or (_stale(statement, mark) and not self._early(statement)):
                statement.claimed = True
                self.release(statement.event)
            else:
                kept.append(statement)
        self.unclaimed[mark.key] = kept

    def _reaches_before_block(self, mark: WrapperMark) -> bool:
        if self.restarted:
            return False
        first = self.first_ms
        return mark.start_ms is None or first is None or mark.start_ms - mark.rounding_ms <= first

    def finish(self) -> tuple[list[Event], list[StatementMark], list[StatementMark]]:
        """At the end of the block: the wrappers it could not settle (held: their window reaches before the block,
        or past its end with no statement yet), and its unclaimed statements near its start and the rest (both
        handed on: a wrapper of another block may own them)."""
        held_marks = self.held
        for key, wrappers in self._held_before.items():
            held_marks.setdefault(key, [])[:0] = wrappers
        held = [mark.event for marks in held_marks.values() for mark in marks]  # after a restart: the ones before it
        held_before_restart = len(held)
        held += [mark.event for marks in self.pending.values() for mark in marks]  # a statement may come next
        self.pending.clear()
        self._deadlines.clear()
        early = [mark for mark in self.early_statements if not mark.claimed]
        early_ids = {id(mark) for mark in early}
        horizon = (self.now_ms or 0.0) - STATEMENT_HORIZON_MS
        tail = []
        for marks in self.unclaimed.values():
            for mark in marks:
                if mark.claimed or id(mark) in early_ids:
                    continue
                if mark.ts_ms is not None and mark.ts_ms < horizon and not any(
                        wrapper.covers(mark) for wrapper in held_marks.get(mark.key, ())):
                    mark.claimed = True
                    self.release(mark.event)
                else:
                    tail.append(mark)
        tail_before = [mark for mark in self._tail_before if not mark.claimed]
        tail[:0] = tail_before
        self.before_restart = (held_before_restart, len(tail_before)) if self.restarted else None
        self.unclaimed.clear()
        self.held, self._held_before, self._tail_before = {}, {}, []
        return held, early, tail


@dataclass
class BoundaryState:
    """Across the blocks of one input, in input order: the wrappers still waiting for a statement, and the unclaimed
    statements of the blocks before that a held wrapper may yet take."""

    waiting: list[WrapperMark] = field(default_factory=list)
    statements: list[StatementMark] = field(default_factory=list)
    absorbed: int = 0
    closing_ms: float | None = None  # where the block before left pairing's clock (``StatementPairing.now_ms``)

    def resolve(self, held: list[Event], early: list[StatementMark], tail: list[StatementMark],
                last_ms: float | None, opening_ms: float | None = None,
                closing_ms: float | None = None, before_restart: tuple[int, int] | None = None) -> list[Event]:
        """Settle one block against the blocks before it: the operations this settles (statements timed by their
        command, statements no command can own any more, wrappers with no statement). Wrappers whose window has
        passed are settled in the order of their ends, as inside a block. A block that opens (``opening_ms``, its
        first operation's time) more than ``RESTART_MS`` before the block before closed (``closing_ms``, the time
        pairing had reached at its end) starts the log again (a day repeated): what waited is settled first, as a
        block settles it when the restart is inside it (``StatementPairing._restart``). A block that started again
        inside (``before_restart``: how many of its held wrappers and tail statements came before that) settles
        what came before the restart with the blocks before it, then the rest against the time pairing reached
        after the restart (``last_ms``)."""
        operations: list[Event] = []
        if opening_ms is not None and self.closing_ms is not None and opening_ms < self.closing_ms - RESTART_MS:
            operations += self.close()
        if before_restart is not None:
            held_count, tail_count = before_restart
            self.statements += [mark for mark in itertools.chain(early, tail[:tail_count]) if not mark.claimed]
            self.waiting += [wrapper_mark(event) for event in held[:held_count]]
            operations += self.close()
            held, early, tail = held[held_count:], [], tail[tail_count:]
        if closing_ms is not None:
            self.closing_ms = closing_ms
        self.statements += [mark for mark in itertools.chain(early, tail) if not mark.claimed]
        self.waiting += [wrapper_mark(event) for event in held]
        self.waiting.sort(key=_end_order)
        still_waiting = []
        for mark in self.waiting:
            deadline = mark.deadline_ms
            if deadline is None or last_ms is None or deadline >= last_ms:
                still_waiting.append(mark)
                continue
            mark.take_from(self.statements)
            if mark.absorbed:
                self.absorbed += 1
                operations.extend(mark.paired())
            else:
                operations.append(mark.event)
        self.waiting = still_waiting
        horizon = (last_ms or 0.0) - STATEMENT_HORIZON_MS
        kept = []
        per_key: dict[Key, int] = {}
        for mark in reversed(self.statements):  # the latest first: past MAX_MARKS_PER_KEY of a key, the oldest go
            if mark.claimed:
                continue
            seen = per_key[mark.key] = per_key.get(mark.key, 0) + 1
            if (mark.ts_ms is not None and mark.ts_ms < horizon) or seen > MAX_MARKS_PER_KEY:
                mark.claimed = True
                operations.append(mark.event)
            else:
                kept.append(mark)
        kept.reverse()
        self.statements = kept
        return operations

    def close(self) -> list[Event]:
        """At the end of the input: the wrappers still waiting are settled, then every statement left is an
        operation of its own."""
        operations: list[Event] = []
        for mark in sorted(self.waiting, key=_end_order):
            mark.take_from(self.statements)
            if mark.absorbed:
                self.absorbed += 1
                operations.extend(mark.paired())
            else:
                operations.append(mark.event)
        operations += [mark.event for mark in self.statements if not mark.claimed]
        self.waiting = []
        self.statements = []
        return operations
