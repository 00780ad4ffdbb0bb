"""The scratch database: the one place the tool writes, created by this run and always dropped.

Before anything is written, the name is refused when it is a source database (any database of the source server,
and every ``--db`` name) or already exists on the scratch server: a database this run did not create is never
written to, so it is never dropped. Writes are inserts of sample documents, ``createIndexes`` and the final
``dropDatabase``; explains run with ``executionStats`` here and only here. The database is dropped on leaving the
``with`` block, however it is left: normally, on an error, or on Ctrl-C.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Iterable, Sequence
from typing import Any

from idxadvisor.errors import ServerError, UsageError
from idxadvisor.indexes.model import IndexSpec
from idxadvisor.models.report import ScratchReport
from idxadvisor.server.connection import MAX_TIME_MS, connect, describe_failure, host_label

PREFIX = "idxadvisor_scratch_"
INSERT_BATCH = 1_000
_INVALID_NAME = re.compile(r'[/\\. "$*<>:|?\x00]')


def scratch_name(requested: str | None) -> str:
    """``--scratch-db``, checked as a database name, or ``idxadvisor_scratch_<random>``."""
    if requested is None:
        return PREFIX + secrets.token_hex(4)
    if not requested or len(requested) > 63 or _INVALID_NAME.search(requested):
        raise UsageError(f"--scratch-db {requested!r} is not a valid database name")
    return requested


class ScratchDatabase:
    """A database on ``uri`` that this run creates, fills, explains on, and drops."""

    def __init__(self, uri: str, name: str, source_databases: Iterable[str]) -> None:
        self.uri = uri
        self.name = name
        self.report = ScratchReport(server=host_label(uri), database=name)
        self._sources = set(source_databases)
        self._client: Any = None
        self._created = False

    def __enter__(self) -> ScratchDatabase:
        if self.name in self._sources:
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
        if self.name in {database.get("name") for database in databases
                         if isinstance(database, dict) and isinstance(database.get("name"), str)}:
            self._client.close()
            raise UsageError(f"--scratch-db {self.name} already exists on {self.report.server}: replay writes only "
                             "to a database it creates (and drops); name a new one")
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.drop()
        finally:
            self._client.close()

    def drop(self) -> None:
        """Drop the database if this run created it; a second Ctrl-C during the drop does not stop it."""
        if not self._created or self.report.dropped:
            return
        for _ in range(2):
            try:
                self._call(lambda: self._client.drop_database(self.name), "dropDatabase")
                self.report.dropped = True
                return
            except KeyboardInterrupt:
                continue

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
