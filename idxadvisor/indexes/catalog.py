"""The index specification file (``--indexes``): namespace → what ``listIndexes`` returns for it.

``{"shop.orders": [{"v": 2, "key": {"_id": 1}, "name": "_id_"}, {"key": {"status": 1, "createdAt": -1}, ...}]}``.
Key order matters, so the file is read with an order-preserving parser; Extended JSON numbers (``{"$numberInt": "1"}``)
are accepted. Any problem is an ``InputError`` naming the namespace and index.

The file does not say which index carries a collection's shard key: the ``shard-keys`` setting and the
``--shard-key NS=PATTERN`` option do (a pattern in JSON or mongo-shell syntax, ``{customerId: 1}``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson

from idxadvisor.errors import InputError, UsageError
from idxadvisor.indexes.model import IndexSpec, IndexSpecError, KeyPattern, key_pattern
from idxadvisor.parse.shelldoc import ShellSyntaxError, parse_shell_value

IndexCatalog = dict[str, list[IndexSpec]]


def load_index_file(path: Path) -> IndexCatalog:
    try:
        document = orjson.loads(path.read_bytes())
    except OSError as exc:
        raise InputError(f"--indexes: cannot read {path}: {exc.strerror or exc}") from None
    except orjson.JSONDecodeError as exc:
        raise InputError(f"--indexes: {path} is not JSON ({exc.msg} at line {exc.lineno})") from None
    return parse_index_catalog(document, str(path))


def parse_index_catalog(document: Any, origin: str = "--indexes") -> IndexCatalog:
    if type(document) is not dict:
        raise InputError(f"{origin}: expected an object mapping each namespace to its list of indexes")
    catalog: IndexCatalog = {}
    for ns, indexes in document.items():
        if "." not in ns:
            raise InputError(f"{origin}: '{ns}' is not a namespace (database.collection)")
        if type(indexes) is not list:
            raise InputError(f"{origin}: {ns}: expected a list of indexes as listIndexes returns it")
        specs = []
        for position, index in enumerate(indexes):
            if type(index) is not dict:
                raise InputError(f"{origin}: {ns}: index {position} is not an object")
            try:
                specs.append(IndexSpec.from_document(index))
            except IndexSpecError as exc:
                name = index.get("name", f"#{position}")
                raise InputError(f"{origin}: {ns}: index {name}: {exc}") from None
        if not any(spec.is_id_index for spec in specs):
            specs.insert(0, IndexSpec.from_key({"_id": 1}, name="_id_"))
        catalog[ns] = specs
    return catalog


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
