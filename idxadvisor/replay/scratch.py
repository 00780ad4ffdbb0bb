"""The scratch database: the one place the tool writes, created by this run and always dropped.

Before the first command, the name is refused when it is a system database (``admin``, ``local``, ``config``, in
any case); before anything is written, when it is a source database (any database of the source server, and every
``--db`` name) or already exists on the scratch server, compared without case (MongoDB refuses a second database
whose name differs only in case, after the tool would have started): a database this run did not create is never
written to, so it is never dropped. Writes are inserts of sample documents, ``createIndexes`` and the final
``dropDatabase``; explains run with ``executionStats`` here and only here.

The database is dropped on leaving the ``with`` block, however it is left: normally, on an error, on Ctrl-C (SIGINT)
or on SIGTERM (turned into ``Terminated`` while the block runs). After an interruption or an error the first
connection may be stuck in a stalled command, so the drop goes through a fresh connection with a deadline of its own
(``DROP_DEADLINE_S``), and further signals wait for it. When the drop cannot be confirmed, ``report.dropped`` stays
false and ``report.problems`` says why: the command line names the database and the command that drops it.
"""

from __future__ import annotations

import re
import secrets
import signal
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from idxadvisor.errors import ServerError, UsageError
from idxadvisor.indexes.model import IndexSpec
from idxadvisor.models.report import ScratchReport
from idxadvisor.server.connection import MAX_TIME_MS, connect, describe_failure, host_label

PREFIX = "idxadvisor_scratch_"
SYSTEM_DATABASES = frozenset({"admin", "local", "config"})
CLOSE_DEADLINE_S = 5  # closing a client sends endSessions: a stuck server must not hold the exit
DROP_DEADLINE_S = 15  # the drop after an interruption or an error: connecting, then the command, on a fresh client
INSERT_BATCH = 1_000
_INVALID_NAME = re.compile(r'[/\\. "$*<>:|?\x00]')
_UNSET = object()


def scratch_name(requested: str | None) -> str:
    """``--scratch-db``, checked as a database name, or ``idxadvisor_scratch_<random>``."""
    if requested is None:
        return PREFIX + secrets.token_hex(4)
    if not requested or len(requested) > 63 or _INVALID_NAME.search(requested):
        raise UsageError(f"--scratch-db {requested!r} is not a valid database name")
    if requested.lower() in SYSTEM_DATABASES:
        raise UsageError(f"--scratch-db {requested} is a system database: replay writes only to a database of its "
                         "own")
    return requested


class Terminated(KeyboardInterrupt):
    """SIGTERM while a replay runs: left like Ctrl-C, so the scratch database is dropped on the way out."""


def drop_command(server: str, name: str) -> str:
    """The command that drops ``name`` by hand (the server label holds no password)."""
    return f"mongosh \"{server}\" --eval 'db.getSiblingDB(\"{name}\").dropDatabase()'"


class ScratchDatabase:
    """A database on ``uri`` that this run creates, fills, explains on, and drops."""

    def __init__(self, uri: str, name: str, source_databases: Iterable[str]) -> None:
        self.uri = uri
        self.name = name
        self.report = ScratchReport(server=host_label(uri), database=name)
        self._sources = {source.lower() for source in source_databases}
        self._client: Any = None
        self._created = False
        self._previous_sigterm: Any = _UNSET

    def __enter__(self) -> ScratchDatabase:
        scratch_name(self.name)  # a system database is refused whoever built this object
        if self.name.lower() in self._sources:
            raise UsageError(f"--scratch-db {self.name} is a source database: replay writes only to a database of "
                             "its own")
        self._client = connect(self.uri, tz_aware=True)
        listing = {"listDatabases": 1, "nameOnly": True, "maxTimeMS": MAX_TIME_MS}
        reply = self._call(lambda: self._client.admin.command(listing), "listDatabases")
        databases = reply.get("databases")
        if not isinstance(databases, list):  # nothing is written where the name cannot be shown to be new
            self._client.close()
            raise ServerError(f"cannot tell whether --scratch-db {self.name} exists on {self.report.server}: its "
                              "listDatabases reply holds no list of databases")
        existing = [database["name"] for database in databases
                    if isinstance(database, dict) and isinstance(database.get("name"), str)]
        clash = next((name for name in existing if name.lower() == self.name.lower()), None)
        if clash is not None:
            self._client.close()
            same = "" if clash == self.name else f" (as {clash})"
            raise UsageError(f"--scratch-db {self.name} already exists{same} on {self.report.server}: replay writes "
                             "only to a database it creates (and drops); name a new one")
        self._catch_sigterm()
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        try:
            with _signals_deferred() as received:
                self.drop(fresh=kind is not None)
            if received and self.report.stopped is None:
                self.report.stopped = "interrupted" if received[0] == signal.SIGINT else "terminated"
        finally:
            self._release_sigterm()
            self._close(self._client)

    def drop(self, fresh: bool = False) -> None:
        """Drop the database if this run created it: on this run's connection after a normal end, else (or when that
        fails) on a fresh one with its own deadline. ``report.dropped`` says whether the server confirmed it."""
        if not self._created or self.report.dropped:
            return
        reason = ""
        if not fresh:
            try:
                self._call(lambda: self._client.drop_database(self.name), "dropDatabase")
                self.report.dropped = True
                return
            except (ServerError, KeyboardInterrupt) as exc:
                reason = str(exc) or type(exc).__name__
        try:
            self._drop_on_a_fresh_connection()
            self.report.dropped = True
        except (ServerError, UsageError, KeyboardInterrupt) as exc:
            reason = str(exc) or reason or type(exc).__name__
            self.report.problems.append(f"the scratch database {self.name} was not dropped ({reason}): drop it with "
                                        f"{drop_command(self.report.server, self.name)}")

    def _drop_on_a_fresh_connection(self) -> None:
        deadline_ms = DROP_DEADLINE_S * 1000
        client = connect(self.uri, tz_aware=True, serverSelectionTimeoutMS=deadline_ms // 3,
                         connectTimeoutMS=deadline_ms // 3, socketTimeoutMS=deadline_ms * 2 // 3, timeoutMS=deadline_ms)
        try:
            self._call(lambda: client.get_database(self.name).command({"dropDatabase": 1,
                                                                       "maxTimeMS": deadline_ms // 2}),
                       "dropDatabase")
        finally:
            self._close(client)

    @staticmethod
    def _close(client: Any) -> None:
        if client is None:
            return
        import pymongo

        try:
            with _signals_deferred(), pymongo.timeout(CLOSE_DEADLINE_S):
                client.close()
        except Exception:  # noqa: BLE001 - closing sends endSessions: a server gone away must not hide the report
            pass

    def _catch_sigterm(self) -> None:
        """SIGTERM raises ``Terminated`` while the database exists (main thread only: signals are delivered there)."""
        if threading.current_thread() is threading.main_thread():
            self._previous_sigterm = signal.signal(signal.SIGTERM, _terminate)

    def _release_sigterm(self) -> None:
        if self._previous_sigterm is not _UNSET:
            signal.signal(signal.SIGTERM, self._previous_sigterm or signal.SIG_DFL)
            self._previous_sigterm = _UNSET

    # -- writes, to this database only --------------------------------------------------------------------------

    def insert(self, ns: str, documents: Sequence[Any]) -> None:
        """The sample of ``ns`` into the scratch collection of the same name (``<db>.<collection>``)."""
        self._created = True
        collection = self._database()[ns]
        for start in range(0, len(documents), INSERT_BATCH):
            batch = [dict(document) for document in documents[start:start + INSERT_BATCH]]
            self._call(lambda batch=batch: collection.insert_many(batch, ordered=False), f"insert into {self.name}")
        self.report.collections += 1
        self.report.documents += len(documents)

    def create_index(self, ns: str, spec: IndexSpec) -> str | None:
        """Build one index; None when built, else why the server could not (parallel arrays, a bad option …)."""
        from idxadvisor.server.connection import CommandRefused

        self._created = True
        document: dict[str, Any] = {"key": dict(spec.key), "name": spec.name}
        for option, value in (("sparse", spec.sparse), ("unique", spec.unique), ("hidden", spec.hidden)):
            if value:
                document[option] = True
        if spec.partial_filter is not None:
            document["partialFilterExpression"] = dict(spec.partial_filter)
        if spec.collation is not None:
            document["collation"] = dict(spec.collation)
        # expireAfterSeconds is left out on purpose: a TTL index would delete the copied documents
        command = {"createIndexes": ns, "indexes": [document], "maxTimeMS": MAX_TIME_MS}
        try:
            self._call(lambda: self._database().command(command), f"createIndexes in {self.name}")
        except CommandRefused as exc:
            problem = f"{ns}: index {spec} not built: {exc}"
            self.report.problems.append(problem)
            return problem
        self.report.indexes += 1
        return None

    def explain(self, ns: str, command: dict[str, Any]) -> dict[str, Any]:
        """``explain("executionStats")`` of a command on the scratch copy of ``ns``."""
        return self._call(lambda: self._database().command({"explain": command, "verbosity": "executionStats"}),
                          f"explain in {self.name}")

    def _database(self) -> Any:
        return self._client.get_database(self.name)

    def _call(self, action: Any, what: str) -> Any:
        from pymongo.errors import PyMongoError

        try:
            return action()
        except PyMongoError as exc:
            raise describe_failure(exc, what, self.uri) from None


def _terminate(signum: int, frame: Any) -> None:
    raise Terminated("terminated")


@contextmanager
def _signals_deferred() -> Iterator[list[int]]:
    """SIGINT and SIGTERM are recorded in the list, not acted on, until the block ends: the drop has its own
    deadline, and a second Ctrl-C must not leave the database behind."""
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return
    previous = {number: signal.signal(number, lambda signum, frame: received.append(signum))
                for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield received
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)
