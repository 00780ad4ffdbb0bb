"""One operation, one event: a write statement and the command entry that wraps it.

An update or delete logs one WRITE-component entry per slow statement (with the plan counters), then, on the same
connection, the COMMAND entry of the whole command (without them); 2.6-era text logs do the same for inserts. The
statement entries are the events; the wrapper that follows them is dropped, so its duration is not counted twice. A
wrapper with no statement before it (its statements were each fast) is an event of its own.

Chunks are parsed in parallel, so a wrapper may open a chunk while its statement closed the previous one. A wrapper
that is the first entry of its connection in a chunk is therefore held back, with the chunk's view of which
connections end on an open statement; ``resolve_boundary`` settles it once the chunks before it are known.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from idxadvisor.models.events import Event

WRAPPED_OPS = frozenset({"update", "delete", "insert"})
_CLOCK_SLACK_MS = 1000.0


@dataclass(frozen=True, slots=True)
class OpenStatement:
    op: str
    database: str
    ts: datetime | None


def _database(ns: str) -> str:
    return ns.partition(".")[0]


def wraps(statement: OpenStatement, wrapper: Event) -> bool:
    """True when ``wrapper`` is the command entry of the command that ran ``statement``."""
    if statement.op != wrapper.op or statement.database != _database(wrapper.ns):
        return False
    if statement.ts is None or wrapper.ts is None:
        return True
    # Epoch milliseconds as floats: datetime arithmetic with a damaged duration or date would overflow.
    ended = wrapper.ts.timestamp() * 1000
    started = ended - wrapper.duration_ms - _CLOCK_SLACK_MS
    return started <= statement.ts.timestamp() * 1000 <= ended + _CLOCK_SLACK_MS


@dataclass
class StatementPairing:
    """Pairs statements with wrappers inside one chunk, in log order."""

    open_statements: dict[str, OpenStatement] = field(default_factory=dict)
    seen_connections: set[str] = field(default_factory=set)
    held_wrappers: list[Event] = field(default_factory=list)
    absorbed: int = 0

    def admit(self, event: Event) -> bool:
        """True if the event is an operation to count now; False if it was absorbed or held back."""
        connection = event.connection
        if connection is None:
            return True
        first_on_connection = connection not in self.seen_connections
        self.seen_connections.add(connection)
        if event.statement and event.op in WRAPPED_OPS:
            self.open_statements[connection] = OpenStatement(event.op, _database(event.ns), event.ts)
            return True
        statement = self.open_statements.pop(connection, None)
        if event.op not in WRAPPED_OPS or event.statement:
            return True
        if statement is not None:
            if wraps(statement, event):
                self.absorbed += 1
                return False
            return True
        if first_on_connection:
            self.held_wrappers.append(event)
            return False
        return True


@dataclass
class BoundaryState:
    """Across the chunks of one input: which connections end on a statement still waiting for its wrapper."""

    open_statements: dict[str, OpenStatement] = field(default_factory=dict)
    absorbed: int = 0

    def resolve(self, held_wrappers: list[Event]) -> list[Event]:
        """The held wrappers of the next chunk that are operations of their own (the rest are absorbed)."""
        operations = []
        for wrapper in held_wrappers:
            statement = self.open_statements.pop(wrapper.connection or "", None)
            if statement is not None and wraps(statement, wrapper):
                self.absorbed += 1
            else:
                operations.append(wrapper)
        return operations

    def advance(self, chunk_open: dict[str, OpenStatement], chunk_seen: set[str]) -> None:
        """Carry the state past a chunk: its connections now end as the chunk left them."""
        for connection in chunk_seen:
            self.open_statements.pop(connection, None)
        self.open_statements.update(chunk_open)
