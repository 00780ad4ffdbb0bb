"""An in-process MongoDB server for tests: mockupdb speaking the wire protocol, with a small in-memory state.

It records every command with the database it was sent to (``FakeServer.commands``), so tests prove which commands
reach which database. Reads answer from ``databases`` (documents), ``indexes``, ``profile``, ``index_stats`` and
``query_stats``; writes (insert, createIndexes, dropDatabase) change that state; ``explain`` answers with
``executionStats`` computed by the estimator over the stored documents and built indexes (a stand-in for mongod's
planner, good enough to prove the plumbing; ``explain_adjust`` perturbs it). ``refuse`` names commands (or
aggregation stages) answered with an Unauthorized error.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from mockupdb import MockupDB

WRITE_COMMANDS = frozenset({"insert", "update", "delete", "findAndModify", "createIndexes", "dropIndexes", "drop",
                            "dropDatabase", "create", "collMod", "renameCollection"})
HANDSHAKE = frozenset({"hello", "ismaster", "isMaster", "saslStart"})  # monitors send these all the time: not recorded
SINCE = datetime(2026, 1, 1, tzinfo=timezone.utc)


@dataclass
class Recorded:
    name: str
    database: str
    document: dict[str, Any]


@dataclass
class FakeServer:
    version: str = "8.0.4"
    databases: dict[str, dict[str, list[dict[str, Any]]]] = field(default_factory=dict)
    indexes: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    profile: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    query_stats: list[dict[str, Any]] = field(default_factory=list)
    refuse: set[str] = field(default_factory=set)
    unbuildable: set[str] = field(default_factory=set)  # index names createIndexes fails on
    explain_adjust: Callable[[dict[str, Any]], None] | None = None
    interrupt_on: str | None = None  # a command name that raises KeyboardInterrupt in the client (see the test)
    stall_on: str | None = None  # a command name answered only once ``release`` is set (or after 60 s)
    stalled: threading.Event = field(default_factory=threading.Event)  # set when a stalled command arrives
    release: threading.Event = field(default_factory=threading.Event)
    commands: list[Recorded] = field(default_factory=list)

    def start(self) -> str:
        self.server = MockupDB(verbose=False)
        self.server.run()
        self.server.autoresponds(self._answer)
        # PLAIN: the one mechanism a fake can accept without SCRAM's exchange (the password still sits in the URI)
        return (f"mongodb://reader:s3cret@localhost:{self.server.port}/?serverSelectionTimeoutMS=3000"
                "&authMechanism=PLAIN&authSource=$external")

    def stop(self) -> None:
        self.server.stop()

    def reset(self, **state: Any) -> None:
        """Every field back to its default, then ``state``; the server keeps running."""
        for name, default in FakeServer.__dataclass_fields__.items():
            value = default.default_factory() if callable(default.default_factory) else default.default  # type: ignore[misc]
            setattr(self, name, state.get(name, value))

    def names(self, database: str | None = None) -> list[str]:
        return [c.name for c in self.commands if database is None or c.database == database]

    # -- answering -----------------------------------------------------------------------------------------------

    def _answer(self, request: Any) -> bool:
        document = dict(request.doc)
        name = next(iter(document))
        database = document.get("$db", request.namespace)
        if name not in HANDSHAKE:
            self.commands.append(Recorded(name, database, document))
        if name == self.stall_on:  # this connection's thread waits; other connections are answered meanwhile
            self.stalled.set()
            with self.server._unlock():  # mockupdb answers every connection under one lock
                self.release.wait(60)
        handler = getattr(self, f"_{name}", None)
        if name in self.refuse:
            return _error(request, f"not authorized on {database} to execute command {{ {name}: … }}", 13,
                          "Unauthorized")
        if handler is None:
            return request.ok()
        try:
            reply = handler(database, document)
        except _Fail as failure:
            return _error(request, failure.message, failure.code, failure.code_name)
        except Exception as exc:  # noqa: BLE001 - the fake's own trouble: an error reply, not a client left waiting
            return _error(request, f"fake server: {type(exc).__name__}: {exc}", 1, "InternalError")
        return request.reply({"ok": 1, **reply})

    def _hello(self, database: str, command: dict[str, Any]) -> dict[str, Any]:
        # pymongo 4 needs maxWireVersion >= 8 (4.2); 25 is 8.0
        return {"isWritablePrimary": True, "ismaster": True, "maxWireVersion": 25, "minWireVersion": 0,
                "maxBsonObjectSize": 16 * 1024 * 1024, "maxMessageSizeBytes": 48_000_000, "maxWriteBatchSize": 100_000,
                "localTime": datetime.now(timezone.utc), "logicalSessionTimeoutMinutes": 30}

    _ismaster = _isMaster = _hello

    def _saslStart(self, database: str, command: dict[str, Any]) -> dict[str, Any]:
        return {"conversationId": 1, "done": True, "payload": b""}

    def _buildInfo(self, database: str, command: dict[str, Any]) -> dict[str, Any]:
        return {"version": self.version, "versionArray": [int(part) for part in self.version.split(".")] + [0]}

    def _listDatabases(self, database: str, command: dict[str, Any]) -> dict[str, Any]:
        names = sorted(set(self.databases) | {"admin", "local", "config"})
        return {"databases": [{"name": name} for name in names]}

    def _listCollections(self, database: str, command: dict[str, Any]) -> dict[str, Any]:
        names = sorted(self.databases.get(database, {}))
        return _cursor(f"{database}.$cmd.listCollections", [{"name": name, "type": "collection"} for name in names])

    def _listIndexes(self, database: str, command: dict[str, Any]) -> dict[str, Any]:
        ns = f"{database}.{command['listIndexes']}"
        if command["listIndexes"] not in self.databases.get(database, {}):
            raise _Fail(f"ns does not exist: {ns}", 26, "NamespaceNotFound")
        return _cursor(ns, self._indexes_of(ns))

    def _indexes_of(self, ns: str) -> list[dict[str, Any]]:
        return [{"v": 2, "key": {"_id": 1}, "name": "_id_"}, *self.indexes.get(ns, [])]

    def _aggregate(self, database: str, command: dict[str, Any]) -> dict[str, Any]:
        stage = next(iter(command["pipeline"][0]))
        if stage in self.refuse:
            raise _Fail(f"not authorized to run {stage}", 13, "Unauthorized")
        if stage == "$queryStats":
            return _cursor("admin.$cmd.aggregate", self.query_stats)
        ns = f"{database}.{command['aggregate']}"
        documents = self.databases.get(database, {}).get(command["aggregate"], [])
        if stage == "$indexStats":
            return _cursor(ns, [{"name": index["name"], "key": index["key"], "accesses": {"ops": 7, "since": SINCE}}
                                for index in self._indexes_of(ns)])
        if stage == "$collStats":
            return _cursor(ns, [{"ns": ns, "storageStats": {"count": len(documents) * 10, "size": 1000 * len(documents),
                                                             "avgObjSize": 100},
                                 "localTime": SINCE + timedelta(hours=10),  # 36,000 writes since: 3,600 an hour
                                 "latencyStats": {"writes": {"latency": 5000, "ops": 36_000}}}])
        if stage == "$sample":
            return _cursor(ns, documents[: command["pipeline"][0]["$sample"]["size"]])
        raise _Fail(f"unexpected stage {stage}", 2, "BadValue")

    def _collStats(self, database: str, command: dict[str, Any]) -> dict[str, Any]:
        documents = self.databases.get(database, {}).get(command["collStats"], [])
        return {"count": len(documents), "size": 100 * len(documents), "avgObjSize": 100}

    def _find(self, database: str, command: dict[str, Any]) -> dict[str, Any]:
        return _cursor(f"{database}.{command['find']}", self.profile.get(database, []))

    def _count(self, database: str, command: dict[str, Any]) -> dict[str, Any]:
        return {"n": len(self.databases.get(database, {}).get(command["count"], []))}

    def _insert(self, database: str, command: dict[str, Any]) -> dict[str, Any]:
        documents = command.get("documents", [])
        self.databases.setdefault(database, {}).setdefault(command["insert"], []).extend(dict(d) for d in documents)
        return {"n": len(documents)}

    def _createIndexes(self, database: str, command: dict[str, Any]) -> dict[str, Any]:
        for index in command["indexes"]:
            if index["name"] in self.unbuildable:
                raise _Fail("cannot index parallel arrays [tags] [sizes]", 171, "CannotIndexParallelArrays")
            self.indexes.setdefault(f"{database}.{command['createIndexes']}", []).append(dict(index))
        return {"numIndexesAfter": 2}

    def _dropDatabase(self, database: str, command: dict[str, Any]) -> dict[str, Any]:
        self.databases.pop(database, None)
        for ns in [ns for ns in self.indexes if ns.startswith(database + ".")]:
            del self.indexes[ns]
        return {"dropped": database}

    def _explain(self, database: str, command: dict[str, Any]) -> dict[str, Any]:
        from idxadvisor.indexes.model import IndexSpec
        from idxadvisor.whatif.estimator import Estimator, WhatIfQuery

        explained = dict(command["explain"])
        op = next(iter(explained))
        ns = f"{database}.{explained[op]}"
        documents = self.databases.get(database, {}).get(explained[op], [])
        specs = [IndexSpec.from_document(index) for index in self.indexes.get(ns, [])]
        hint = explained.get("hint")
        query = WhatIfQuery(command="count" if op == "count" else "find",
                            filter=explained.get("query" if op == "count" else "filter", {}),
                            sort=explained.get("sort"), limit=explained.get("limit"), skip=explained.get("skip"))
        result = Estimator(documents).explain(query, specs, tuple(hint.items()) if hint else None)
        if self.explain_adjust is not None:
            self.explain_adjust(result)
        leaf = {"stage": "IXSCAN", "keyPattern": hint} if hint else {"stage": "COLLSCAN"}
        stages = {"stage": "FETCH", "nReturned": result.get("nReturned", 0), "inputStage": dict(leaf)}
        if "nCounted" in result:
            stages = {"stage": "COUNT", "nCounted": result["nCounted"], "inputStage": stages}
        return {"queryPlanner": {"namespace": ns, "winningPlan": {"stage": "FETCH", "inputStage": leaf}},
                "executionStats": {"nReturned": result.get("nReturned", 0), "executionTimeMillis": 3,
                                   "totalKeysExamined": result.get("totalKeysExamined", 0),
                                   "totalDocsExamined": result.get("totalDocsExamined", 0),
                                   "executionStages": stages},
                "command": explained}


class _Fail(Exception):
    def __init__(self, message: str, code: int, code_name: str) -> None:
        super().__init__(message)
        self.message, self.code, self.code_name = message, code, code_name


def _error(request: Any, message: str, code: int, code_name: str) -> bool:
    return request.reply({"ok": 0, "errmsg": message, "code": code, "codeName": code_name})


def _cursor(ns: str, documents: list[dict[str, Any]]) -> dict[str, Any]:
    return {"cursor": {"id": 0, "ns": ns, "firstBatch": documents}}
