"""The index model: a key pattern with its options, as ``listIndexes`` describes it.

Key order is significant everywhere: a key pattern is a tuple of ``(field, direction)`` pairs, never a dict
that could be re-ordered. Directions are ``1`` or ``-1`` for B-tree fields, or a string for special indexes
(``"text"``, ``"2d"``, ``"2dsphere"``, ``"hashed"``); a wildcard field is spelled ``"$**"`` or ``"a.$**"``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

Direction = int | str
KeyPattern = tuple[tuple[str, Direction], ...]

SPECIAL_INDEX_TYPES = frozenset({"text", "2d", "2dsphere", "geoHaystack", "hashed"})
_IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")


class IndexSpecError(ValueError):
    """A key pattern or index document that is not a valid index."""


def normalize_direction(value: Any) -> Direction:
    """Map the spellings the server accepts (``1``, ``-1.0``, ``{"$numberInt": "1"}``, ``"hashed"``) to 1, -1 or a type."""
    if isinstance(value, Mapping) and len(value) == 1:
        (marker, inner), = value.items()
        if marker in ("$numberInt", "$numberLong", "$numberDouble", "$numberDecimal"):
            try:
                value = float(inner)
            except (TypeError, ValueError):
                raise IndexSpecError(f"index direction {marker} {inner!r} is not a number") from None
    if isinstance(value, bool):
        raise IndexSpecError(f"index direction must be a number or an index type, not {value!r}")
    if isinstance(value, (int, float)):
        if value > 0:
            return 1
        if value < 0:
            return -1
        raise IndexSpecError("index direction 0 is not valid")
    if isinstance(value, str) and value in SPECIAL_INDEX_TYPES:
        return value
    raise IndexSpecError(f"unknown index direction {value!r}")


def key_pattern(spec: Mapping[str, Any] | KeyPattern | list[Any]) -> KeyPattern:
    """A key pattern from a dict (its order kept), or from ``[[field, direction], ...]``."""
    pairs = spec.items() if isinstance(spec, Mapping) else spec
    result = []
    for pair in pairs:
        try:
            name, direction = pair
        except (TypeError, ValueError):
            raise IndexSpecError(f"index key entry {pair!r} is not a [field, direction] pair") from None
        if not isinstance(name, str) or not name:
            raise IndexSpecError(f"index field name must be a non-empty string, not {name!r}")
        result.append((name, normalize_direction(direction)))
    if not result:
        raise IndexSpecError("an index needs at least one field")
    if len({name for name, _ in result}) != len(result):
        raise IndexSpecError("an index cannot name the same field twice")
    return tuple(result)


def default_index_name(key: KeyPattern) -> str:
    """The name mongod gives an index created without one: ``status_1_createdAt_-1``."""
    return "_".join(f"{name}_{direction}" for name, direction in key)


def render_key_pattern(key: KeyPattern) -> str:
    """mongosh syntax: ``{ status: 1, "items.sku": -1 }``."""
    parts = []
    for name, direction in key:
        shown = name if _IDENTIFIER.match(name) else json.dumps(name)
        value = json.dumps(direction) if isinstance(direction, str) else str(direction)
        parts.append(f"{shown}: {value}")
    return "{ " + ", ".join(parts) + " }"


def collection_reference(ns: str) -> str:
    """``db.getSiblingDB("shop").orders`` for namespace ``shop.orders`` (``getCollection`` when not an identifier)."""
    database, _, collection = ns.partition(".")
    base = f"db.getSiblingDB({json.dumps(database)})"
    if _IDENTIFIER.match(collection) and not collection.startswith("$"):
        return f"{base}.{collection}"
    return f"{base}.getCollection({json.dumps(collection)})"


def _number_or_none(value: Any) -> float | None:
    if isinstance(value, Mapping) and len(value) == 1:
        value = next(iter(value.values()))  # {"$numberInt": "3600"}
    try:
        return None if value is None or isinstance(value, bool) else float(value)
    except (TypeError, ValueError):
        return None


@dataclass(frozen=True, slots=True)
class IndexSpec:
    """One index: its key pattern and the options that change what it holds or how it is used."""

    key: KeyPattern
    name: str = ""
    sparse: bool = False
    unique: bool = False
    hidden: bool = False
    partial_filter: Mapping[str, Any] | None = field(default=None, compare=False, hash=False)
    collation: Mapping[str, Any] | None = field(default=None, compare=False, hash=False)
    expire_after_seconds: float | None = None  # a TTL index: it deletes documents, not only finds them
    # $indexStats as the server returned it ({"ops": …, "since": …}), where the index file or the server gave it
    accesses: Mapping[str, Any] | None = field(default=None, compare=False, hash=False)
    wildcard_projection: Mapping[str, Any] | None = field(default=None, compare=False, hash=False)
    # an index of the inventory the log itself gives (no --indexes, no --uri): where the log showed it, and when it was
    # built while the log was written (None: it existed before, as far as the log shows)
    origin: str | None = field(default=None, compare=False, hash=False)
    built_at: datetime | None = field(default=None, compare=False, hash=False)

    def __post_init__(self) -> None:
        if not self.name:
            object.__setattr__(self, "name", default_index_name(self.key))

    @classmethod
    def from_key(cls, spec: Mapping[str, Any] | KeyPattern | list[Any], **options: Any) -> IndexSpec:
        return cls(key=key_pattern(spec), **options)

    @classmethod
    def from_document(cls, document: Mapping[str, Any]) -> IndexSpec:
        """From a ``listIndexes`` entry or a what-if ``--index`` document: ``{"key": {...}, "sparse": true, ...}``."""
        if "key" not in document or not isinstance(document["key"], (Mapping, list)):
            raise IndexSpecError("an index document needs a 'key' object")
        for option in ("partialFilterExpression", "collation", "wildcardProjection"):
            if document.get(option) is not None and not isinstance(document[option], Mapping):
                raise IndexSpecError(f"an index's {option} must be a document")
        collation = document.get("collation")
        if isinstance(collation, Mapping) and collation.get("locale") == "simple":
            collation = None
        return cls(
            key=key_pattern(document["key"]),
            name=str(document.get("name") or ""),
            sparse=bool(document.get("sparse", False)),
            unique=bool(document.get("unique", False)),
            hidden=bool(document.get("hidden", False)),
            partial_filter=document.get("partialFilterExpression"),
            collation=collation,
            expire_after_seconds=_number_or_none(document.get("expireAfterSeconds")),
            accesses=document.get("accesses") if isinstance(document.get("accesses"), Mapping) else None,
            wildcard_projection=document.get("wildcardProjection"),
        )

    @classmethod
    def parse(cls, spec: Mapping[str, Any]) -> IndexSpec:
        """Either a key pattern (``{"a": 1}``) or an index document (``{"key": {"a": 1}, "sparse": true}``)."""
        if "key" in spec and isinstance(spec["key"], Mapping):
            return cls.from_document(spec)
        return cls.from_key(spec)

    @property
    def fields(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.key)

    @property
    def inferred(self) -> bool:
        """Known from the log only: the collection may hold other indexes, and this one's options are not known."""
        return self.origin is not None

    @property
    def is_id_index(self) -> bool:
        return self.key == (("_id", 1),)

    @property
    def is_btree(self) -> bool:
        """Every field is an ascending or descending B-tree field (no text, geo, hashed or wildcard part)."""
        return all(isinstance(d, int) for _, d in self.key) and not any("$**" in name for name, _ in self.key)

    def is_prefix_of(self, other: IndexSpec) -> bool:
        """True when this key pattern is a leading part of ``other``'s (directions included)."""
        return len(self.key) <= len(other.key) and other.key[: len(self.key)] == self.key

    def key_document(self) -> dict[str, Direction]:
        return dict(self.key)

    def create_index_command(self, ns: str) -> str:
        """A ready-to-run mongosh command: ``db.getSiblingDB("shop").orders.createIndex({ status: 1 })``."""
        options = []
        for option in ("sparse", "unique"):
            if getattr(self, option):
                options.append(f"{option}: true")
        if self.expire_after_seconds is not None:
            options.append(f"expireAfterSeconds: {self.expire_after_seconds:g}")
        if self.partial_filter is not None:
            options.append(f"partialFilterExpression: {json.dumps(self.partial_filter)}")
        if self.wildcard_projection is not None:
            options.append(f"wildcardProjection: {json.dumps(self.wildcard_projection)}")
        suffix = ", { " + ", ".join(options) + " }" if options else ""
        return f"{collection_reference(ns)}.createIndex({render_key_pattern(self.key)}{suffix})"

    def drop_index_command(self, ns: str) -> str:
        return f"{collection_reference(ns)}.dropIndex({json.dumps(self.name)})"

    def unhide_index_command(self, ns: str) -> str:
        return f"{collection_reference(ns)}.unhideIndex({json.dumps(self.name)})"

    def hide_index_command(self, ns: str) -> str:
        return f"{collection_reference(ns)}.hideIndex({json.dumps(self.name)})"

    def starts_with(self, key: KeyPattern) -> bool:
        """True when this index's key begins with ``key`` (field names and directions)."""
        return self.key[: len(key)] == key

    def __str__(self) -> str:
        return render_key_pattern(self.key)
