"""Index sightings from the rare log lines that create, build or drop indexes (``models.inventory``).

The lines are found as the slow queries are, by a byte search of the block, never by looking at every line:

* JSON logs (4.4+): the index-build messages (``"msg":"Index build: …"``; 20384 *starting* and 20438 *registering*
  give the key pattern, 20345 *done building*, 20447 *completed* and 20663 *completed successfully* the time the index
  exists from), ``CMD: dropIndexes`` (51806) and ``CMD: drop`` (518070, a collection and all its indexes);
* text logs (≤4.2): ``build index on: <ns> properties: { v: 2, key: { a: 1 }, name: "a_1", … }``;
* every format: the ``createIndexes``, ``dropIndexes`` and ``drop`` commands of slow-operation entries
  (``from_event``, one set look-up per event).

Indexes of internal namespaces (``local``, ``config``, ``admin``, ``system.*``) are left out: no advice concerns them.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from idxadvisor.models.events import Event
from idxadvisor.models.inventory import BUILT, CREATED, DROPPED, INDEX_OPTIONS, IndexSighting
from idxadvisor.parse.shelldoc import ShellSyntaxError, parse_shell_value

#: Byte patterns of the JSON lines worth parsing (the server writes ``"msg":"…"`` without spaces).
JSON_NEEDLES = (b'"msg":"Index build: ', b'"msg":"CMD: drop')  # the latter: dropIndexes, and drop (a collection)
#: Text-log lines worth parsing.
TEXT_HINTS = ("build index on: ",)
#: Where a sighting came from, as the report says it.
BUILD_SOURCE = "index build messages"
CREATE_SOURCE = "createIndexes commands"
DROP_SOURCE = "dropIndexes"
COLLECTION_DROP_SOURCE = "collection drop"
INDEX_COMMANDS = frozenset({"createIndexes", "dropIndexes", "deleteIndexes", "drop"})

STARTING, REGISTERING, DONE_BUILDING, COMPLETED, COMPLETED_SUCCESSFULLY, DROP_MESSAGE, COLLECTION_DROP = \
    20384, 20438, 20345, 20447, 20663, 51806, 518070
_INTERNAL_DATABASES = frozenset({"local", "config", "admin"})
#: The message ids ``from_json_entry`` reads (every other entry gives no sighting).
_SIGHTING_IDS = frozenset({STARTING, REGISTERING, DONE_BUILDING, COMPLETED, COMPLETED_SUCCESSFULLY, DROP_MESSAGE,
                           COLLECTION_DROP})
#: The head of a line as the server writes it, up to the message id.
_SERVER_HEAD = re.compile(rb'\{"t":\{"\$date":"[^"]*"\},"s":"[^"]*", *"c":"[^"]*", *"id":(\d+),')
#: The first namespace such a line names (the server writes ``attr.namespace`` before anything nested).
_FIRST_NAMESPACE = re.compile(rb'"namespace":"(local|config|admin)\.')
_BUILD_INDEX_ON = re.compile(r"build index on: (\S+) properties: (?=\{)")


def user_namespace(ns: Any) -> bool:
    """A namespace whose indexes advice may concern: ``db.coll``, neither internal nor a system collection."""
    if type(ns) is not str:
        return False
    database, dot, collection = ns.partition(".")
    return bool(dot and collection) and database not in _INTERNAL_DATABASES and not collection.startswith("system.")


def may_give_sightings(line: bytes) -> bool:
    """False when the line, as the server writes it, gives no sighting: its head names another message (half the
    lines the needles find are other index-build messages: waiting, committing, …) or its namespace is internal (the
    server's own collections, built at every start-up). Those lines are then not decoded at all."""
    head = _SERVER_HEAD.match(line)
    if head is None:
        return True
    if int(head.group(1)) not in _SIGHTING_IDS:
        return False
    first = line.find(b'"namespace":"')
    return first < 0 or _FIRST_NAMESPACE.match(line, first) is None


def from_json_entry(entry: dict[str, Any], ts: datetime | None) -> list[IndexSighting]:
    """The sightings of one parsed JSON log entry holding an index-build or dropIndexes message."""
    attr = entry.get("attr")
    number = entry.get("id")
    if type(attr) is not dict:
        return []
    ns = attr.get("namespace", attr.get("collection"))  # 4.4's CMD: drop says "collection"
    if not user_namespace(ns):
        return []
    source = BUILD_SOURCE
    if number == STARTING:
        properties = attr.get("properties")
        return _specs(ns, CREATED, [properties] if type(properties) is dict else [], ts, source)
    if number == REGISTERING:
        command = attr.get("command")
        indexes = command.get("indexes") if type(command) is dict else None
        if type(indexes) is list:
            return _specs(ns, CREATED, indexes, ts, source)
        first = attr.get("firstIndex")
        name = first.get("name") if type(first) is dict else None
        return [IndexSighting(ns, CREATED, name, None, ts, source)] if type(name) is str else []
    if number == DONE_BUILDING:
        name = attr.get("index")
        return [IndexSighting(ns, BUILT, name, None, ts, source)] if type(name) is str else []
    if number in (COMPLETED, COMPLETED_SUCCESSFULLY):
        built = attr.get("indexesBuilt")
        names = [name for name in built if type(name) is str] if type(built) is list else []
        return [IndexSighting(ns, BUILT, name, None, ts, source) for name in names]
    if number == DROP_MESSAGE:
        return _dropped(ns, attr.get("indexes"), ts, DROP_SOURCE)
    if number == COLLECTION_DROP:
        return _dropped(ns, "*", ts, COLLECTION_DROP_SOURCE)
    return []


def from_event(event: Event) -> list[IndexSighting]:
    """The sightings of a slow ``createIndexes``/``dropIndexes`` command (one that failed says nothing)."""
    command = event.command
    if type(command) is not dict or event.error is not None or not user_namespace(event.ns):
        return []
    if event.op == "createIndexes":
        indexes = command.get("indexes")
        return _specs(event.ns, CREATED, indexes if type(indexes) is list else [], event.ts,
                      CREATE_SOURCE)
    if event.op == "drop":
        return _dropped(event.ns, "*", event.ts, COLLECTION_DROP_SOURCE)
    return _dropped(event.ns, command.get("index"), event.ts, DROP_SOURCE)


def from_text_message(message: str, ts: datetime | None) -> list[IndexSighting]:
    """``build index on: test.docs properties: { v: 1, key: { foo: "hashed" }, name: "foo_hashed", … }``."""
    match = _BUILD_INDEX_ON.search(message)
    if match is None or not user_namespace(match.group(1)):
        return []
    try:
        properties = parse_shell_value(message, match.end()).value
    except (ShellSyntaxError, RecursionError, ValueError):
        return []
    if type(properties) is not dict:
        return []
    # the build's end ("build index done.") names no index, and a ≤4.2 build of a user's index is short: its start
    # dates the index
    return _specs(match.group(1), BUILT, [properties], ts, BUILD_SOURCE)


def _specs(ns: str, kind: str, indexes: list[Any], ts: datetime | None, source: str) -> list[IndexSighting]:
    sightings = []
    for index in indexes:
        if type(index) is not dict:
            continue
        key, name = index.get("key"), index.get("name")
        pairs = [[field, direction] for field, direction in key.items()] if type(key) is dict and key else None
        if pairs is None and type(name) is not str:
            continue
        options = {option: index[option] for option in INDEX_OPTIONS if option in index}
        sightings.append(IndexSighting(ns, kind, name if type(name) is str else None, pairs, ts, source, options))
    return sightings


def _dropped(ns: str, index: Any, ts: datetime | None, source: str) -> list[IndexSighting]:
    """``index`` as dropIndexes takes it: a name, ``"*"`` (every index but _id), a key pattern, or a list of names."""
    if type(index) is str:
        names = [index] if index == "*" or "," not in index else [name.strip() for name in index.split(",")]
        return [IndexSighting(ns, DROPPED, name, None, ts, source) for name in names if name]
    if type(index) is dict and index:
        return [IndexSighting(ns, DROPPED, None, [[field, direction] for field, direction in index.items()], ts,
                              source)]
    if type(index) is list:
        return [IndexSighting(ns, DROPPED, name, None, ts, source) for name in index if type(name) is str]
    return []
