"""The read-only source: the only object that sends commands to a source server, and it can only read.

It exposes the reads issue 8 lists and nothing else: ``hello``, ``buildInfo``, ``listDatabases``, ``listCollections``,
``listIndexes``, ``$indexStats``, ``$collStats`` (or ``collStats``/``count`` on old servers), ``$sample``, ``find``
on ``system.profile``, ``$queryStats`` and ``queryPlanner`` explains. The client is private; every command goes
through ``_send``, which refuses anything outside that list (a write cannot be sent from here by construction, not by
care), sets ``maxTimeMS``, and uses the read preference the URI names (pymongo's ``Database.command`` would use the
primary otherwise). A refused command is a ``CommandRefused`` naming the command and the reason.

A reply is input like any log: a cursor hands on only its documents, a reply the driver cannot read is a
``ServerError`` naming the command, and the fields read from a reply are read through ``document_of`` and
``counter_of`` (what a server, or a server-compatible service, answers in another shape is left out, never a crash).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from idxadvisor.errors import ServerError
from idxadvisor.models.values import as_float
from idxadvisor.parse.fields import MAX_COUNTER
from idxadvisor.server.connection import MAX_TIME_MS, CommandRefused, connect, describe_failure, host_label
from idxadvisor.units import mask_secrets

_READ_COMMANDS = frozenset({"hello", "buildInfo", "listDatabases", "listCollections", "listIndexes", "aggregate",
                            "collStats", "count", "find", "explain"})
_SOURCE_STAGES = frozenset({"$indexStats", "$collStats", "$sample", "$queryStats"})
_FOLLOWING_STAGES = frozenset({"$match", "$project", "$limit"})
_EXPLAINABLE = frozenset({"find", "count", "aggregate", "distinct"})
_NO_MAX_TIME = frozenset({"hello", "buildInfo"})
INTERNAL_DATABASES = frozenset({"admin", "local", "config"})


class ReadOnlyViolation(AssertionError):
    """A command that is not one of the source's reads: a bug in the tool, never sent."""


def check_read_only(command: Mapping[str, Any]) -> None:
    """Raise ``ReadOnlyViolation`` unless ``command`` is one of the reads the source may receive."""
    name = next(iter(command), None)
    if name not in _READ_COMMANDS:
        raise ReadOnlyViolation(f"{name!r} is not a read the source may receive")
    if name == "aggregate":
        stages = [next(iter(stage), None) for stage in command.get("pipeline", [])]
        if not stages or stages[0] not in _SOURCE_STAGES or not set(stages[1:]) <= _FOLLOWING_STAGES:
            raise ReadOnlyViolation(f"aggregate pipeline {stages} is not a read the source may receive")
    if name == "find" and command["find"] != "system.profile":
        raise ReadOnlyViolation("find is only sent to system.profile")
    if name == "explain":
        explained = next(iter(command["explain"]), None)
        if command.get("verbosity") != "queryPlanner" or explained not in _EXPLAINABLE:
            raise ReadOnlyViolation("the source only receives queryPlanner explains of queries")


class ReadOnlySource:
    """Reads from one server (a replica-set member, a secondary, a mongos): what the advisor needs, nothing else."""

    def __init__(self, uri: str, client: Any | None = None) -> None:
        self.uri = uri
        self.label = host_label(uri)
        self.__client = client if client is not None else connect(uri, tz_aware=True)
        self._version: tuple[int, ...] | None = None

    def close(self) -> None:
        self.__client.close()

    def __enter__(self) -> ReadOnlySource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the one way out --------------------------------------------------------------------------------------

    def _send(self, database: str, command: dict[str, Any], what: str, *, cursor: bool = False) -> Any:
        check_read_only(command)
        if next(iter(command)) not in _NO_MAX_TIME:
            command = {**command, "maxTimeMS": MAX_TIME_MS}
        from pymongo.errors import PyMongoError

        preference = self.__client.read_preference
        try:
            db = self.__client.get_database(database)  # InvalidName for a name no database can have
            if cursor:
                return [document for document in db.cursor_command(command, read_preference=preference)
                        if isinstance(document, dict)]
            return db.command(command, read_preference=preference)
        except PyMongoError as exc:
            raise describe_failure(exc, what, self.uri) from None
        except (TypeError, KeyError, ValueError, AttributeError) as exc:  # raised by the driver reading the reply
            raise ServerError(f"{what} on {self.label}: a reply the driver cannot read ({type(exc).__name__}: "
                              f"{mask_secrets(str(exc))})") from None

    # -- server --------------------------------------------------------------------------------------------------

    def hello(self) -> dict[str, Any]:
        return self._send("admin", {"hello": 1}, "hello")

    def version(self) -> tuple[int, ...]:
        """The server's version (``buildInfo.versionArray``), asked once."""
        if self._version is None:
            info = self._send("admin", {"buildInfo": 1}, "buildInfo")
            array = info.get("versionArray")
            if not isinstance(array, list) or not all(type(part) is int for part in array[:3]):
                array = [int(part) for part in str(info.get("version", "0.0")).split(".")[:3] if part.isdigit()]
            self._version = tuple(array[:3])
        return self._version

    def database_names(self) -> list[str]:
        reply = self._send("admin", {"listDatabases": 1, "nameOnly": True}, "listDatabases")
        databases = reply.get("databases")
        return [item["name"] for item in databases if isinstance(item, dict) and isinstance(item.get("name"), str)] \
            if isinstance(databases, list) else []

    def collection_names(self, database: str) -> list[str]:
        """The collections of a database (not views, not ``system.*``)."""
        command = {"listCollections": 1, "nameOnly": True, "authorizedCollections": True,
                   "filter": {"type": "collection"}}
        documents = self._send(database, command, f"listCollections on {database}", cursor=True)
        names = [doc.get("name") for doc in documents]
        return sorted(name for name in names if isinstance(name, str) and not name.startswith("system."))

    # -- collections ---------------------------------------------------------------------------------------------

    def list_indexes(self, ns: str) -> list[dict[str, Any]]:
        database, collection = _split(ns)
        return self._send(database, {"listIndexes": collection}, f"listIndexes on {ns}", cursor=True)

    def index_stats(self, ns: str) -> list[dict[str, Any]]:
        """``$indexStats``: per index, ``accesses: {ops, since}`` on this member."""
        return self._aggregate(ns, [{"$indexStats": {}}], f"$indexStats on {ns}")

    def collection_stats(self, ns: str) -> dict[str, Any]:
        """Documents, size and average document size: ``$collStats``, else the ``collStats`` command (deprecated in
        6.2, but what a user without the aggregation's privilege, or an older server, may still answer); with
        ``$collStats``, also the write operations since the server started (``latencyStats``) and its clock."""
        latency: dict[str, Any] = {}
        try:
            documents = self._aggregate(ns, [{"$collStats": {"storageStats": {}, "latencyStats": {}}}],
                                        f"$collStats on {ns}")
            first = documents[0] if documents else {}
            stats = document_of(first.get("storageStats"))
            latency = {"writes": document_of(document_of(first.get("latencyStats")).get("writes")).get("ops"),
                       "localTime": first.get("localTime")}
        except CommandRefused:
            database, collection = _split(ns)
            stats = self._send(database, {"collStats": collection}, f"collStats on {ns}")
        return {"count": counter_of(stats.get("count")), "size": counter_of(stats.get("size")),
                "avgObjSize": counter_of(stats.get("avgObjSize")), "writes": latency.get("writes"),
                "localTime": latency.get("localTime")}

    def count(self, ns: str) -> int:
        database, collection = _split(ns)
        return int(counter_of(self._send(database, {"count": collection}, f"count on {ns}").get("n")) or 0)

    def sample(self, ns: str, size: int) -> list[dict[str, Any]]:
        """``$sample`` of ``size`` documents (a random sample of the collection, as the server draws it)."""
        return self._aggregate(ns, [{"$sample": {"size": size}}], f"$sample on {ns}")

    # -- workload ------------------------------------------------------------------------------------------------

    def profile(self, database: str, since: datetime | None = None) -> list[dict[str, Any]]:
        """The documents of ``<database>.system.profile`` (at or after ``since``), oldest first."""
        command: dict[str, Any] = {"find": "system.profile", "sort": {"$natural": 1}}
        if since is not None:
            command["filter"] = {"ts": {"$gte": since}}
        return self._send(database, command, f"find on {database}.system.profile", cursor=True)

    def query_stats(self) -> list[dict[str, Any]]:
        """``$queryStats`` (8.0+, needs ``queryStatsRead``): every recorded query shape with its metrics."""
        return self._send("admin", {"aggregate": 1, "pipeline": [{"$queryStats": {}}], "cursor": {}},
                          "$queryStats", cursor=True)

    def _aggregate(self, ns: str, pipeline: list[dict[str, Any]], what: str) -> list[dict[str, Any]]:
        database, collection = _split(ns)
        return self._send(database, {"aggregate": collection, "pipeline": pipeline, "cursor": {}}, what, cursor=True)


def document_of(value: Any) -> dict[str, Any]:
    """``value`` where a reply should hold a document; an empty one where it holds something else."""
    return value if isinstance(value, dict) else {}


def counter_of(value: Any) -> float | None:
    """A counter a reply holds (any spelling ``as_float`` reads: an int, a double, an ``Int64``, ``{"$numberLong":
    …}``), or None where it holds no usable one: a flag, not finite, negative, or beyond ``MAX_COUNTER``."""
    number = None if isinstance(value, bool) else as_float(value)
    return number if number is not None and math.isfinite(number) and 0 <= number <= MAX_COUNTER else None


def _split(ns: str) -> tuple[str, str]:
    database, _, collection = ns.partition(".")
    return database, collection


def user_databases(names: list[str]) -> list[str]:
    return [name for name in names if name not in INTERNAL_DATABASES]


__all__ = ["ReadOnlySource", "ReadOnlyViolation", "check_read_only", "counter_of", "document_of", "user_databases"]
