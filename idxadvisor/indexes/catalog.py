"""The index specification file (``--indexes``): namespace → what ``listIndexes`` returns for it.

``{"shop.orders": [{"v": 2, "key": {"_id": 1}, "name": "_id_"}, {"key": {"status": 1, "createdAt": -1}, ...}]}``.
Key order matters, so the file is read with an order-preserving parser; Extended JSON numbers (``{"$numberInt": "1"}``)
are accepted. Any problem is an ``InputError`` naming the namespace and index.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from idxadvisor.errors import InputError
from idxadvisor.indexes.model import IndexSpec, IndexSpecError

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
        check_namespace(ns, origin)
        if type(indexes) is not list:
            raise InputError(f"{origin}: {ns}: expected a list of indexes as listIndexes returns it")
        catalog[ns] = with_id_index([parse_index_entry(index, origin, ns, position)
                                     for position, index in enumerate(indexes)])
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
