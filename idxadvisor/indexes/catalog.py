"""The index specification file (``--indexes``): namespace → what ``listIndexes`` returns for it.

``{"shop.orders": [{"v": 2, "key": {"_id": 1}, "name": "_id_"}, {"key": {"status": 1, "createdAt": -1}, ...}]}``.
Key order matters, so the file is read with an order-preserving parser; Extended JSON numbers (``{"$numberInt": "1"}``)
are accepted. An index may carry its ``$indexStats`` usage, ``"accesses": {"ops": …, "since": …}``, as
``idxadvisor indexes`` writes it; it is kept on the ``IndexSpec``. A file that cannot be read as a whole is an
``InputError``; one index in it that cannot be read (a type this tool does not know, a bad direction) is an
``InputError`` naming the namespace and index, or, given a ``left_out`` list, is left out with its reason, as a server's
is.

The index files DBAs already have are read too:

* mdbkit's export, ``{"db": …, "collections": {ns: [listIndexes output]}, "usage": {ns: [{name, ops, since}]}}``
  (its usage becomes each index's ``accesses``), where an export of one database names each collection without it
  (``{"db": "shop", "collections": {"orders": …}}``);
* ``db.coll.getIndexes()`` as mongosh (or the legacy shell, or ``printjson``) prints it: shell syntax, read by the
  project's shell-document parser. Up to 4.2 every index says its namespace (``ns``); from 4.4 on it does not, so
  such a file is named with its namespace: ``--indexes shop.orders=orders-indexes.txt``.

The file does not say which index carries a collection's shard key: the ``shard-keys`` setting and the
``--shard-key NS=PATTERN`` option do (a pattern in JSON or mongo-shell syntax, ``{customerId: 1}``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import orjson

from idxadvisor.errors import InputError, UsageError
from idxadvisor.indexes.model import IndexSpec, IndexSpecError, KeyPattern, key_pattern
from idxadvisor.parse.shelldoc import ShellSyntaxError, parse_shell_value

IndexCatalog = dict[str, list[IndexSpec]]
_BLANK = re.compile(r"\s*")


def load_index_arguments(arguments: Iterable[str], left_out: list[str] | None = None) -> IndexCatalog:
    """Every ``--indexes [NS=]FILE`` argument, merged (a later file's namespace replaces an earlier one's); with
    ``left_out``, an index that cannot be read is left out and its reason appended there."""
    catalog: IndexCatalog = {}
    for argument in arguments:
        ns, separator, file_part = str(argument).partition("=")
        if separator and "." in ns and not Path(argument).exists():
            catalog.update(load_index_file(Path(file_part), namespace=ns, left_out=left_out))
        else:
            catalog.update(load_index_file(Path(argument), left_out=left_out))
    return catalog


def load_index_file(path: Path, namespace: str | None = None, left_out: list[str] | None = None,
                    option: str = "--indexes") -> IndexCatalog:
    """An index file in any of the accepted formats; ``namespace`` names the collection of a bare index list;
    ``left_out`` as for ``parse_index_catalog``; ``option``: the option that named the file, as errors say it."""
    origin = f"{option} {path}"
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"{option}: cannot read {path}: {exc.strerror or exc}") from None
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        shell = _shell_values(data)
        if shell is None:
            raise InputError(f"{option}: {path} is not JSON ({exc.msg} at line {exc.lineno}) nor mongo-shell "
                             "getIndexes() output") from None
        return _index_lists(shell, namespace, origin, left_out)
    if type(document) is list:
        return _index_lists([document], namespace, origin, left_out)
    database = mdbkit_database(document)
    if database is not None:
        collections = qualified(document["collections"], database)
        usage = qualified(document["usage"], database) if type(document.get("usage")) is dict else None
        return parse_index_catalog(_with_usage(collections, usage), origin, left_out)
    if namespace is not None:
        raise InputError(f"{origin}: a namespace ({namespace}=) names a list of indexes, but the file maps "
                         "namespaces to indexes already")
    return parse_index_catalog(document, origin, left_out)


def _shell_values(data: bytes) -> list[Any] | None:
    """The top-level values of shell-printed text (one ``getIndexes()`` array per collection), or None."""
    from idxadvisor.parse.shelldoc import ShellSyntaxError, parse_shell_value

    text = data.decode("utf-8", "replace").lstrip("\ufeff")
    values, position = [], 0
    try:
        while (position := _BLANK.match(text, position).end()) < len(text):  # type: ignore[union-attr]
            parsed = parse_shell_value(text, position)
            values.append(parsed.value)
            position = parsed.end
    except ShellSyntaxError:
        return None
    return values or None


def _index_lists(values: list[Any], namespace: str | None, origin: str, left_out: list[str] | None) -> IndexCatalog:
    """``getIndexes()`` outputs (one list per collection): the namespace from ``NS=``, else from the indexes' ``ns``."""
    lists = [value for value in values if type(value) is list]
    if len(lists) != len(values) or not lists:
        raise InputError(f"{origin}: expected getIndexes() output: a list of index documents per collection")
    if namespace is not None and len(lists) > 1:
        raise InputError(f"{origin}: {namespace}= names one collection, but the file holds {len(lists)} index lists")
    document: dict[str, list[Any]] = {}
    for indexes in lists:
        ns = namespace or _namespace_of(indexes)
        if ns is None:
            raise InputError(f"{origin}: the indexes do not say their collection (getIndexes() leaves out 'ns' "
                             "since MongoDB 4.4); name it: --indexes <db>.<collection>=FILE")
        document.setdefault(ns, []).extend(indexes)
    return parse_index_catalog(document, origin, left_out)


def _namespace_of(indexes: list[Any]) -> str | None:
    names = {index.get("ns") for index in indexes if type(index) is dict and type(index.get("ns")) is str}
    return names.pop() if len(names) == 1 else None


def mdbkit_database(document: Any) -> str | None:
    """The ``db`` of an mdbkit export (``""`` for an export of several databases), or None for another document."""
    if type(document) is dict and type(document.get("collections")) is dict and "db" in document:
        return document["db"] if type(document["db"]) is str else ""
    return None


def qualified_name(name: Any, database: str) -> Any:
    """A key of an mdbkit map as a namespace (see ``qualified``)."""
    if not database or type(name) is not str or name.startswith(f"{database}."):
        return name
    return f"{database}.{name}"


def qualified(by_collection: dict[str, Any], database: str) -> dict[str, Any]:
    """mdbkit's maps keyed by collection: a bare collection name under ``db`` (``{"db": "shop", "collections":
    {"orders": …}}``, as an export of one database writes them) becomes its namespace; a key that is a namespace of
    ``db`` already (``shop.orders``), or any key when ``db`` is empty (an export of several databases), stays."""
    return {qualified_name(name, database): value for name, value in by_collection.items()}


def _with_usage(collections: dict[str, Any], usage: Any) -> dict[str, Any]:
    """mdbkit's ``usage`` (per namespace: ``{name, ops, since}`` per index and host) as each index's ``accesses``."""
    if type(usage) is not dict:
        return collections
    merged: dict[str, Any] = {}
    for ns, indexes in collections.items():
        ops: dict[str, dict[str, Any]] = {}
        items = usage.get(ns)
        for item in items if type(items) is list else ():  # usage of another shape is no usage
            if type(item) is dict and type(item.get("name")) is str and isinstance(item.get("ops"), int):
                seen = ops.setdefault(item["name"], {"ops": 0, "since": item.get("since")})
                seen["ops"] += item["ops"]
        merged[ns] = [{**index, "accesses": ops[index["name"]]}
                      if type(index) is dict and type(index.get("name")) is str and index["name"] in ops
                      else index for index in indexes] if type(indexes) is list else indexes
    return merged


def parse_index_catalog(document: Any, origin: str = "--indexes", left_out: list[str] | None = None) -> IndexCatalog:
    """The catalog of an index file (or a server's ``listIndexes``). An index that cannot be read is an InputError,
    or, given ``left_out``, is left out and its reason appended there."""
    if type(document) is not dict:
        raise InputError(f"{origin}: expected an object mapping each namespace to its list of indexes")
    catalog: IndexCatalog = {}
    for ns, indexes in document.items():
        check_namespace(ns, origin)
        if type(indexes) is not list:
            raise InputError(f"{origin}: {ns}: expected a list of indexes as listIndexes returns it")
        specs = []
        for position, index in enumerate(indexes):
            try:
                specs.append(parse_index_entry(index, origin, ns, position))
            except InputError as exc:
                if left_out is None:
                    raise
                left_out.append(f"{exc} (left out)")
        catalog[ns] = with_id_index(specs)
    return catalog


def check_namespace(ns: Any, origin: str) -> None:
    if type(ns) is not str or "." not in ns:
        raise InputError(f"{origin}: '{ns}' is not a namespace (database.collection)")


def parse_index_entry(index: Any, origin: str, ns: str, position: int) -> IndexSpec:
    """One entry of a namespace's list; InputError naming the namespace and the index."""
    if type(index) is not dict:
        raise InputError(f"{origin}: {ns}: index {position} is not an object")
    try:
        return IndexSpec.from_document(index)
    except IndexSpecError as exc:
        name = index.get("name", f"#{position}")
        raise InputError(f"{origin}: {ns}: index {name}: {exc}") from None


def with_id_index(specs: list[IndexSpec]) -> list[IndexSpec]:
    """Every collection has its _id index, listed or not."""
    if not any(spec.is_id_index for spec in specs):
        specs.insert(0, IndexSpec.from_key({"_id": 1}, name="_id_"))
    return specs


def shard_key_patterns(shard_keys: Mapping[str, Any]) -> dict[str, KeyPattern]:
    """The ``shard-keys`` setting (namespace → key pattern) as key patterns; UsageError naming a bad one."""
    patterns = {}
    for ns, pattern in shard_keys.items():
        if "." not in ns:
            raise UsageError(f"setting 'shard-keys': '{ns}' is not a namespace (database.collection)")
        try:
            patterns[ns] = key_pattern(pattern)
        except IndexSpecError as exc:
            raise UsageError(f"setting 'shard-keys': {ns}: {exc}") from None
    return patterns


def parse_shard_key_argument(text: str) -> tuple[str, dict[str, Any]]:
    """``shop.orders={customerId: 1}`` (``--shard-key``): the namespace and its key pattern, in JSON or shell syntax."""
    ns, separator, pattern = text.partition("=")
    where = f"--shard-key {text}"
    if not separator or "." not in ns.strip():
        raise UsageError(f"{where}: expected NS=PATTERN, such as shop.orders='{{customerId: 1}}'")
    try:
        parsed = parse_shell_value(pattern.strip(), 0)
    except ShellSyntaxError as exc:
        raise UsageError(f"{where}: the pattern is not a document ({exc})") from None
    if type(parsed.value) is not dict or parsed.end != len(pattern.strip()):
        raise UsageError(f"{where}: the pattern is not a document such as {{customerId: 1}}")
    try:
        key_pattern(parsed.value)
    except IndexSpecError as exc:
        raise UsageError(f"{where}: {exc}") from None
    return ns.strip(), parsed.value
