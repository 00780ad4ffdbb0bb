"""Index keys: what a B-tree index holds for each sample document (planner-semantics.md §2).

One entry per document per distinct key; a missing field is keyed as null; an array contributes one key
per distinct element, an empty array the key ``undefined``; arrays nested along one path multiply, and
two indexed fields on different arrays are a parallel-arrays error (code 171). The recursive generator
follows ``BtreeKeyGenerator::getKeysImplWithArray``.

Work is shared: each field path is extracted once per document (:class:`PathColumn`) and reused by every
index on that path; only documents with an array along an indexed path go through the full generator.
"""

from __future__ import annotations

import datetime
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from idxadvisor.indexes.model import IndexSpec
from idxadvisor.whatif.bsonorder import MISSING, SORT_KEY_HANDLERS, UNDEFINED, SortKey, sort_key
from idxadvisor.whatif.hashing import hash64

KeyTuple = tuple[SortKey, ...]


class ParallelArrays(Exception):
    """``cannot index parallel arrays [f2] [f1]`` (code 171, CannotIndexParallelArrays)."""

    def __init__(self, later: str, first: str) -> None:
        super().__init__(f"cannot index parallel arrays [{later}] [{first}]")
        self.later = later
        self.first = first

    def as_error(self) -> dict[str, Any]:
        return {"code": 171, "codeName": "CannotIndexParallelArrays", "message": str(self)}


def _extract_until_array(obj: Any, path: str) -> tuple[Any, str, str]:
    """``extractElementAtPathOrArrayAlongPath``: the value at ``path``, or the first array along it.

    Returns ``(value, remaining_path, field_name)``; the remaining path is ``""`` when the value found is
    at the end of the path. A scalar in the middle of the path means the path is missing.
    """
    parts = path.split(".")
    current = obj
    for position, part in enumerate(parts):
        if not isinstance(current, Mapping) or part not in current:
            return MISSING, "", part
        current = current[part]
        if isinstance(current, list):
            return current, ".".join(parts[position + 1:]), part
    return current, "", parts[-1]


def generate_keys(doc: Mapping[str, Any], paths: Sequence[str], sparse: bool = False
                  ) -> tuple[dict[KeyTuple, tuple[Any, ...]], list[set[str]]]:
    """All index keys of one document: ``{sort-key tuple: value tuple}`` and the multikey path prefixes per field."""
    keys: dict[KeyTuple, tuple[Any, ...]] = {}
    multikey: list[set[str]] = [set() for _ in paths]
    lengths = [len(p.split(".")) for p in paths]
    _keys_with_array(list(paths), [None] * len(paths), doc, keys, 0, sparse, multikey, list(paths), lengths)
    return keys, multikey


def _keys_with_array(rest: list[str | None], fixed: list[Any], obj: Any, out: dict[KeyTuple, tuple[Any, ...]],
                     not_found: int, sparse: bool, multikey: list[set[str]], full_paths: list[str],
                     lengths: list[int]) -> None:
    rest = list(rest)
    fixed = list(fixed)
    array: list[Any] | None = None
    array_name = ""
    array_fields: list[int] = []
    for i, path in enumerate(rest):
        if not path:
            continue
        value, remaining, name = _extract_until_array(obj, path)
        if value is MISSING:
            fixed[i] = None
            rest[i] = None
            not_found += 1
        elif isinstance(value, list):
            array_fields.append(i)
            if array is None:
                array, array_name = value, name
            elif value is not array:
                raise ParallelArrays(name, array_name)
            rest[i] = remaining
        else:
            fixed[i] = value
            rest[i] = None

    if array is None:
        if sparse and not_found == len(rest):
            return
        key = tuple(sort_key(v) for v in fixed)
        out.setdefault(key, tuple(fixed))
        return

    for i in array_fields:
        suffix_parts = len(rest[i].split(".")) if rest[i] else 0
        component = lengths[i] - suffix_parts
        multikey[i].add(".".join(full_paths[i].split(".")[:component]))

    elements = array if array else [UNDEFINED]
    for element in elements:
        element_fixed = list(fixed)
        element_rest = list(rest)
        for i in array_fields:
            if rest[i] == "":
                element_fixed[i] = element
                element_rest[i] = None
        child = element if isinstance(element, Mapping) else {}
        _keys_with_array(element_rest, element_fixed, child, out, not_found, sparse, multikey, full_paths, lengths)


@dataclass
class ColumnOrdering:
    distinct: list[SortKey]           # every key of the column, sorted, once
    rank: dict[SortKey, int]          # key -> its index in ``distinct``
    docs: list[int]                   # documents with a plain value, by (key, document)
    keys: list[SortKey]               # their keys, parallel to ``docs`` (for bisection)

    def position(self, key: SortKey) -> int:
        """Even ``2 * rank`` for a key of the column, odd for a value that falls between two keys."""
        rank = self.rank.get(key)
        if rank is not None:
            return 2 * rank
        return 2 * bisect_left(self.distinct, key) - 1


@dataclass
class PathColumn:
    """One field path across the sample: the plain value per document, or the keys of array documents."""

    path: str
    values: list[Any]                      # value, MISSING, or None placeholder for array documents
    complex_keys: dict[int, dict[KeyTuple, tuple[Any, ...]]]
    multikey_paths: set[str]
    nested_arrays: bool                    # an array element that is itself an array
    array_before_leaf: bool                # an array on a strict prefix of the path
    _sort_keys: list[SortKey | None] | None = field(default=None, repr=False)
    _ordering: ColumnOrdering | None = field(default=None, repr=False)

    @property
    def ordering(self) -> ColumnOrdering:
        """The column in BSON order: distinct keys with their ranks, and plain documents sorted by key."""
        if self._ordering is None:
            keys = self.sort_keys
            docs = [i for i, k in enumerate(keys) if k is not None]
            docs.sort(key=self._fast_sort_key(docs))
            sorted_keys = [keys[i] for i in docs]
            distinct: list[SortKey] = []
            previous: Any = object()
            for key in sorted_keys:
                if key != previous:
                    distinct.append(key)
                    previous = key
            if self.complex_keys:
                extra = {key[0] for keys_of_doc in self.complex_keys.values() for key in keys_of_doc}
                distinct = sorted(set(distinct) | extra)
            self._ordering = ColumnOrdering(distinct, {k: i for i, k in enumerate(distinct)}, docs, sorted_keys)
        return self._ordering

    def _fast_sort_key(self, docs: list[int]) -> Any:
        """Sort by the raw values when one Python type orders them exactly as BSON does (much faster)."""
        values = self.values
        kinds = {type(values[i]) for i in docs}
        if kinds <= {int, float} and not any(v != v for v in (values[i] for i in docs) if type(v) is float):
            return values.__getitem__
        if len(kinds) == 1 and kinds & {str, datetime.datetime}:
            if str in kinds or all(values[i].tzinfo is None for i in docs):
                return values.__getitem__
        return self.sort_keys.__getitem__

    @property
    def sort_keys(self) -> list[SortKey | None]:
        """Sort key of each plain value (null for missing); ``None`` for documents with arrays on the path."""
        if self._sort_keys is None:
            complex_docs = self.complex_keys
            handlers = SORT_KEY_HANDLERS
            keys = [handlers[type(v)](v) if type(v) in handlers else sort_key(v) for v in self.values]
            for i in complex_docs:
                keys[i] = None
            self._sort_keys = keys
        return self._sort_keys

    def value_keys(self, doc_index: int) -> list[tuple[SortKey, Any]]:
        """The keys this path contributes for one document (several for array documents)."""
        if doc_index in self.complex_keys:
            return [(key[0], values[0]) for key, values in self.complex_keys[doc_index].items()]
        value = self.values[doc_index]
        return [(self.sort_keys[doc_index], None if value is MISSING else value)]


def _descend(value: Any, part: str) -> Any:
    if type(value) is list:
        return value
    if isinstance(value, Mapping):
        return value.get(part, MISSING)
    return MISSING


def build_column(documents: Sequence[Mapping[str, Any]], path: str) -> PathColumn:
    """Extract one path from every document: level by level, arrays stop the descent and are keyed apart."""
    parts = path.split(".")
    values: list[Any] = list(documents)
    for part in parts:
        values = [v.get(part, MISSING) if type(v) is dict else _descend(v, part) for v in values]
    complex_keys: dict[int, dict[KeyTuple, tuple[Any, ...]]] = {}
    multikey: set[str] = set()
    nested = False
    before_leaf = False
    single = len(parts) == 1
    for index in [i for i, v in enumerate(values) if type(v) is list]:
        value = values[index] if single else _value_at(documents[index], parts)
        values[index] = None
        if value is not None and not any(type(item) is list for item in value):
            # The common case: an array of scalars or documents at the end of the path.
            keys: dict[KeyTuple, tuple[Any, ...]] = {}
            for item in value or (UNDEFINED,):
                keys.setdefault((sort_key(item),), (item,))
            complex_keys[index] = keys
            multikey.add(path)
            continue
        keys, paths = generate_keys(documents[index], [path])
        complex_keys[index] = keys
        multikey |= paths[0]
        if any(p != path for p in paths[0]):
            before_leaf = True
        if not nested and any(isinstance(v[0], list) for v in keys.values()):
            nested = True
    return PathColumn(path, values, complex_keys, multikey, nested, before_leaf)


def _value_at(doc: Mapping[str, Any], parts: list[str]) -> list[Any] | None:
    """The array at the end of the path when no earlier component is an array, else ``None``."""
    value: Any = doc
    for part in parts:
        if not isinstance(value, Mapping):
            return None
        value = value.get(part, MISSING)
    return value if type(value) is list else None


@dataclass
class IndexModel:
    """An index over the sample: its key pattern, multikey paths, and the keys of each document."""

    spec: IndexSpec
    columns: list[PathColumn]
    multikey_paths: list[set[str]]
    full_keys: dict[int, list[KeyTuple]]   # documents whose keys need the full generator
    build_error: dict[str, Any] | None = None
    members: frozenset[int] | None = None  # a partial index: the documents its filter keeps (None: all)
    collator: Any = None                   # the index's Collator (None: the simple collation)
    wildcard: Any = None                   # a wildcard expansion: the index's WildcardKeys
    origin: IndexSpec | None = None        # a wildcard expansion: the index it was expanded from
    array_indices: tuple[int, ...] = ()    # a wildcard expansion: path positions that may be array indices
    _special: frozenset[int] | None = field(default=None, repr=False)

    @property
    def special_docs(self) -> frozenset[int]:
        """Documents whose keys do not come straight from the plain column values."""
        if self._special is None:
            special = set(self.full_keys)
            for column in self.columns:
                special.update(column.complex_keys)
            self._special = frozenset(special)
        return self._special

    @property
    def fields(self) -> tuple[str, ...]:
        return self.spec.fields

    @property
    def directions(self) -> tuple[int, ...]:
        """Each field's order in the B-tree; a hashed field holds its hashes in ascending order."""
        return tuple(1 if d == "hashed" else int(d) for _, d in self.spec.key)

    @property
    def hashed(self) -> tuple[bool, ...]:
        return tuple(d == "hashed" for _, d in self.spec.key)

    @property
    def lead(self) -> int:
        """The first field a predicate bounds: 1 for a wildcard expansion, whose ``$_path`` the planner sets."""
        return 1 if self.wildcard is not None else 0

    @property
    def catalog_spec(self) -> IndexSpec:
        """The index as the user declared it (a wildcard expansion's source)."""
        return self.origin or self.spec

    @property
    def is_multikey(self) -> bool:
        return any(self.multikey_paths)

    def explain_multikey_paths(self) -> dict[str, list[str]]:
        return {fld: sorted(paths, key=lambda p: p.count(".")) for fld, paths in zip(self.fields, self.multikey_paths)}

    def holds(self, doc_index: int) -> bool:
        """Whether the index has entries for this document (a partial index skips the ones its filter rejects)."""
        return self.members is None or doc_index in self.members

    def doc_keys(self, doc_index: int) -> list[KeyTuple]:
        """The sort-key tuples this index holds for one document (none for a sparse or partial index that skips
        it)."""
        if self.members is not None and doc_index not in self.members:
            return []
        full = self.full_keys.get(doc_index)
        if full is not None:
            return full
        columns = self.columns
        complex_position = -1
        for position, column in enumerate(columns):
            if doc_index in column.complex_keys:
                complex_position = position
                break
        if complex_position < 0:
            if self.spec.sparse and all(c.values[doc_index] is MISSING for c in columns):
                return []
            return [tuple(c.sort_keys[doc_index] for c in columns)]
        base = [c.sort_keys[doc_index] for c in columns]
        keys = []
        for key in columns[complex_position].complex_keys[doc_index]:
            base[complex_position] = key[0]
            keys.append(tuple(base))
        return keys

    def doc_values(self, doc_index: int) -> tuple[Any, ...]:
        """Key values of a document in a non-multikey index (what a covered IXSCAN filter sees)."""
        out = []
        for column in self.columns:
            value = column.values[doc_index]
            out.append(None if value is MISSING else value)
        return tuple(out)


def build_index(spec: IndexSpec, columns: list[PathColumn], documents: Sequence[Mapping[str, Any]]) -> IndexModel:
    multikey_paths = [set(c.multikey_paths) for c in columns]
    full_keys: dict[int, list[KeyTuple]] = {}
    complex_docs: dict[int, int] = {}
    for column in columns:
        for doc_index in column.complex_keys:
            complex_docs[doc_index] = complex_docs.get(doc_index, 0) + 1
    model = IndexModel(spec, columns, multikey_paths, full_keys)
    paths = list(spec.fields)
    for doc_index, count in complex_docs.items():
        if count < 2 and not spec.sparse:
            continue
        try:
            keys, _ = generate_keys(documents[doc_index], paths, sparse=spec.sparse)
        except ParallelArrays as exc:
            model.build_error = exc.as_error()
            return model
        full_keys[doc_index] = list(keys)
    return model


HASHED_ARRAY_ERROR = 16766


def hashed_column(column: PathColumn) -> PathColumn | dict[str, Any]:
    """The hashed keys of one path (``ExpressionKeysPrivate::getHashKeys``): the hash of each value, a missing field
    hashed as null; an array on the path cannot be indexed (the build error is returned instead)."""
    if column.complex_keys:
        return {"code": HASHED_ARRAY_ERROR, "codeName": "Location16766",
                "message": f"hashed indexes do not currently support array values. Found array at path: {column.path}"}
    values = [hash64(None if value is MISSING else value) for value in column.values]
    return PathColumn(column.path, values, {}, set(), False, False)
