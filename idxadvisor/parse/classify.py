"""What kind of operation an entry is: its canonical op name, and whether it is internal traffic.

Internal traffic (replication, sessions, monitoring agents, index builds) is kept and counted, but marked, so advice
can leave it out by default (log-formats.md §9 rule 5).
"""

from __future__ import annotations

from typing import Any

INTERNAL_DATABASES = frozenset({"admin", "local", "config"})

#: Application names of MongoDB's own clients (prefix match).
INTERNAL_APP_PREFIXES = (
    "MongoDB Automation Agent",
    "MongoDB Monitoring Module",
    "MongoDB Backup Agent",
    "MongoDB CPS Module",
    "MongoDB Internal Client",
    "OplogFetcher",
    "mongot",
    "NetworkInterfaceTL",
)

#: Lower-case or legacy spellings of command names, mapped to the server's canonical spelling.
OP_SPELLINGS = {
    "query": "find",
    "getmore": "getMore",
    "remove": "delete",
    "killcursors": "killCursors",
    "findandmodify": "findAndModify",
    "mapreduce": "mapReduce",
    "ismaster": "isMaster",
    "geonear": "geoNear",
    "createindexes": "createIndexes",
}


def canonical_op(name: str) -> str:
    return OP_SPELLINGS.get(name, name) if name else "unknown"


def command_name(command: Any) -> str | None:
    """The first key of a command document, which names the command."""
    if type(command) is dict and command:
        return next(iter(command))
    return None


def resolve_namespace(ns: str, op: str, command: Any) -> str:
    """``shop.$cmd`` plus ``{"count": "orders"}`` is ``shop.orders``: commands log their database's ``$cmd``."""
    if ns.endswith(".$cmd") and type(command) is dict:
        target = command.get(op)
        if type(target) is str and target:
            return ns[: -len("$cmd")] + target
    return ns


def internal_reason(
    ns: str, connection: str | None, app_name: str | None, from_user_connection: Any = None
) -> str | None:
    """Why an operation is internal traffic, or None for an application's operation."""
    database, _, collection = ns.partition(".")
    if database in INTERNAL_DATABASES:
        return f"internal database '{database}'"
    if collection.startswith("system.") or ".system." in collection:
        return "system collection"
    if from_user_connection is False:
        return "internal connection"
    if connection and not connection.startswith("conn"):
        return f"internal thread '{connection}'"
    if app_name and app_name.startswith(INTERNAL_APP_PREFIXES):
        return f"internal client '{app_name}'"
    return None
