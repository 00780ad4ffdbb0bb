"""Wildcard indexes (``{"$**": 1}``, ``{"a.$**": 1}``, ``wildcardProjection``): their keys and the per-path indexes
the planner expands them into.

Keys follow ``WildcardKeyGenerator``: the document (after the index's projection; ``_id`` only when projected) is
walked field by field; every leaf value gives the key ``(path, value)``, array elements keep their array's path
(the path is recorded as multikey), arrays nested directly in arrays are values, and an empty array is keyed as
``undefined``, an empty object as ``{}``. A document holds each distinct key once.

For each field a query constrains, the planner expands the index into ``{$_path: 1, <field>: 1}``
(``expandWildcardIndexEntry``): ``$_path`` is a point on the field, widened to every subpath (``["f.", "f/")``)
when the value bounds reach the object type bracket, which also widens them to ``[MinKey, MaxKey]`` and forces a
fetch (``translateWildcardIndexBoundsAndTightness``). All expansions share one sorted key list, so a scan that runs
past its field's keys examines the next field's first key, as the real index would.

A compound wildcard index (7.0+) whose wildcard field comes first keys ``($_path, value, regular...)`` and expands
to ``{$_path: 1, <field>: 1, <regular>: ±1, ...}``. A queried path with numeric components (``a.0.b``) is expanded
with the server's fieldname-or-array-index rules: which prefixes are arrays (``buildMultiKeyPaths...``), whether
the index may answer it (``validateNumericPathComponents``) and one ``$_path`` point per reading of its positions
(``generateFieldNameOrArrayIndexPathSet``), always fetched.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from idxadvisor.indexes.model import IndexSpec
from idxadvisor.whatif.bounds import ALL_VALUES, OIL, Interval, point
from idxadvisor.whatif.bsonorder import MISSING, RANK_ARRAY, RANK_OBJECT, UNDEFINED, SortKey, sort_key
from idxadvisor.whatif.keys import IndexModel, KeyTuple, PathColumn
from idxadvisor.whatif.query import Leaf, RegexSpec, Unsupported

PATH_FIELD = "$_path"
_OBJECT_LOW: SortKey = (RANK_OBJECT, ())
_ARRAY_LOW: SortKey = (RANK_ARRAY, ())


@dataclass
class WildcardKeys:
    """Every key of a wildcard index over the sample, sorted as the index holds them."""

    spec: IndexSpec
    entries: list[tuple[Any, ...]]                     # (path key, value key, regular keys..., record id), sorted
    multikey: set[str]                                 # array paths (the index's multikey metadata)
    paths: set[str]                                    # every path that has a key
    by_doc: dict[int, list[KeyTuple]] = field(default_factory=dict)


def wildcard_root(spec: IndexSpec) -> str:
    """``""`` for ``$**``, ``"a.b"`` for ``a.b.$**`` (also as the first field of a compound wildcard index)."""
    if any(direction != 1 and direction != -1 for _, direction in spec.key):
        raise Unsupported("a wildcard index with a special (hashed, text, geo) field is not modelled")
    if len(spec.key) > 1:
        if not spec.fields[0].endswith("$**") or spec.key[0][1] != 1:
            raise Unsupported("compound wildcard indexes are modelled with an ascending wildcard field first "
                              "(regular fields before it, or a descending wildcard field, are not)")
        if any(name.endswith("$**") for name in spec.fields[1:]):
            raise Unsupported("a wildcard index with two wildcard fields")
    name = spec.fields[0]
    return "" if name == "$**" else name[: -len(".$**")]


def regular_fields(spec: IndexSpec) -> list[str]:
    """The regular fields after the wildcard field of a compound wildcard index (7.0+)."""
    return list(spec.fields[1:])


def included(spec: IndexSpec, projection: Mapping[str, Any] | None, path: str) -> bool:
    """Whether the index holds keys for ``path`` (its root, then its ``wildcardProjection``)."""
    root = wildcard_root(spec)
    if root and not (path == root or path.startswith(root + ".")):
        return False
    if not projection:
        return path != "_id" and not path.startswith("_id.")
    inclusion = _projection_is_inclusion(projection)
    hits = [name for name in projection if path == name or path.startswith(name + ".")]
    if inclusion:
        return bool(hits)
    if path == "_id" or path.startswith("_id."):
        return projection.get("_id", 0) in (1, True) and not hits[1:]
    return not [name for name in hits if name != "_id"]


def _projection_is_inclusion(projection: Mapping[str, Any]) -> bool:
    values = {bool(value) for name, value in projection.items() if name != "_id"}
    if len(values) > 1:
        raise Unsupported("a wildcardProjection mixing inclusion and exclusion")
    return values == {True} if values else bool(projection.get("_id"))


def reaches(spec: IndexSpec, projection: Mapping[str, Any] | None, path: str) -> bool:
    """Whether the projected document keeps anything at ``path`` (the path or one below it is indexed)."""
    if included(spec, projection, path):
        return True
    root = wildcard_root(spec)
    if root.startswith(path + "."):
        return True
    if projection and _projection_is_inclusion(projection):
        return any(name.startswith(path + ".") for name in projection if name != "_id")
    return False


class _Walker:
    """``WildcardKeyGenerator::_traverseWildcard`` over one document."""

    def __init__(self, spec: IndexSpec, projection: Mapping[str, Any] | None, multikey: set[str]) -> None:
        self.spec = spec
        self.projection = projection
        self.multikey = multikey
        self.found: dict[tuple[SortKey, SortKey], None] = {}

    def add(self, path: str, value: Any) -> None:
        if included(self.spec, self.projection, path):
            self.found.setdefault((sort_key(path), sort_key(value)), None)

    def walk(self, obj: Mapping[str, Any] | list[Any], path: str, in_array: bool) -> None:
        items = enumerate(obj) if in_array else obj.items()  # type: ignore[union-attr]
        for name, value in items:
            if not in_array and "." in str(name):
                continue  # a dotted field name is not queryable
            child = path if in_array else (f"{path}.{name}" if path else str(name))
            if not reaches(self.spec, self.projection, child):
                continue
            if isinstance(value, list):
                if in_array:
                    self.add(child, value)  # an array directly in an array is a value
                    continue
                self.multikey.add(child)
                if not value:
                    self.add(child, UNDEFINED)  # empty arrays are keyed as undefined, as in B-tree indexes
                    continue
                self.walk(value, child, True)
            elif isinstance(value, Mapping):
                if not value:
                    self.add(child, value)
                    continue
                self.walk(value, child, False)
            else:
                self.add(child, value)


def _regular_value(doc: Mapping[str, Any], path: str) -> Any:
    """A regular field of a compound wildcard index: one value (null when missing); an array there is refused, as
    the server refuses to index it (regular fields of a compound wildcard index cannot be multikey)."""
    value: Any = doc
    for part in path.split("."):
        if isinstance(value, list):
            raise Unsupported(f"an array on {path}, a regular field of a compound wildcard index (the server "
                              "rejects the document)")
        value = value.get(part, MISSING) if isinstance(value, Mapping) else MISSING
        if value is MISSING:
            return None
    if isinstance(value, list):
        raise Unsupported(f"an array on {path}, a regular field of a compound wildcard index (the server "
                          "rejects the document)")
    return value


def build_wildcard_keys(spec: IndexSpec, projection: Mapping[str, Any] | None,
                        documents: Sequence[Mapping[str, Any]]) -> WildcardKeys:
    """Every key: ``($_path, value)`` per leaf, followed by the regular fields' values in a compound index. A
    document without any wildcard key has no key here: only a scan of the regular fields alone (not modelled)
    would reach the keys the server gives it."""
    keys = WildcardKeys(spec, [], set(), set())
    regular = regular_fields(spec)
    for rid, doc in enumerate(documents):
        walker = _Walker(spec, projection, keys.multikey)
        walker.walk(doc, "", False)
        suffix = tuple(sort_key(_regular_value(doc, name)) for name in regular)
        found = [(path_key, value_key, *suffix) for path_key, value_key in walker.found]
        keys.by_doc[rid] = found
        for key in found:
            keys.entries.append((*key, rid))
            keys.paths.add(key[0][1])
    keys.entries.sort()
    return keys


MAX_ARRAY_INDEX_DEPTH = 8  # kWildcardMaxArrayIndexTraversalDepth


def _strict_numeric(part: str) -> bool:
    """``FieldRef::isNumericPathComponentStrict``: digits without a leading zero (``0`` itself is numeric)."""
    return part.isdigit() and (part == "0" or not part.startswith("0"))


def _index_path_matches(query: list[str], stored: list[str], components: set[int]) -> bool:
    """``fieldNameOrArrayIndexPathMatches``: ``query`` equals ``stored`` once numeric parts that follow a multikey
    component are read as array indices and skipped."""
    if len(stored) > len(query):
        return False
    offset = 0
    for i, part in enumerate(query):
        if i - offset >= len(stored):
            return False
        if part == stored[i - offset]:
            continue
        if (i - 1) in components and _strict_numeric(part):
            offset += 1
            continue
        return False
    return len(query) == len(stored) + offset


def _multikey_components(multikey: set[str], parts: list[str]) -> set[int]:
    """``buildMultiKeyPathsForExpandedWildcardIndexEntry``: which prefixes of the queried path are arrays."""
    components: set[int] = set()
    for i in range(len(parts)):
        prefix = parts[: i + 1]
        joined = ".".join(prefix)
        if joined in multikey or (any(_strict_numeric(p) for p in prefix) and any(
                _index_path_matches(prefix, stored.split("."), components) for stored in multikey)):
            components.add(i)
    return components


def _array_indices(components: set[int], parts: list[str]) -> list[int]:
    """``findArrayIndexPathComponents``: numeric parts right after a multikey component."""
    return [i + 1 for i in sorted(components) if i < len(parts) - 1 and _strict_numeric(parts[i + 1])]


def _answerable(keys: WildcardKeys, parts: list[str], indices: list[int]) -> bool:
    """``validateNumericPathComponents``: at most 8 array indices, never two positions in a row after an array,
    and not through an array index that the index's inclusion projection names."""
    if not indices:
        return True
    if len(indices) > MAX_ARRAY_INDEX_DEPTH:
        return False
    if any(i + 1 < len(parts) and _strict_numeric(parts[i + 1]) for i in indices):
        return False
    projection = keys.spec.wildcard_projection
    if not projection or not _projection_is_inclusion(projection):
        return True
    including = [name.split(".") for name in projection if name != "_id" and projection[name]
                 and parts[: len(name.split("."))] == name.split(".")]
    return not including or indices[0] >= len(including[0])


def expanded_model(keys: WildcardKeys, path: str) -> IndexModel | None:
    """The index ``{$_path: 1, <path>: 1}`` the planner uses for one queried field (``createExpandedIndexEntry``),
    or ``None`` when a numeric component makes the path unanswerable by the index."""
    regular = keys.spec.key[1:]
    spec = IndexSpec(key=((PATH_FIELD, 1), (path, 1), *regular), name=keys.spec.name)
    parts = path.split(".")
    components = _multikey_components(keys.multikey, parts)
    indices = _array_indices(components, parts)
    if not _answerable(keys, parts, indices):
        return None
    multikey = {".".join(parts[: i + 1]) for i in components}
    placeholder = PathColumn(PATH_FIELD, [MISSING] * len(keys.by_doc), {}, set(), False, False)
    model = IndexModel(spec, [placeholder] * (2 + len(regular)), [set(), multikey] + [set() for _ in regular],
                       dict(keys.by_doc))
    model.wildcard = keys
    model.origin = keys.spec
    model.array_indices = tuple(indices)
    return model


def index_or_field_paths(path: str, indices: Sequence[int], subpaths: bool) -> list[str]:
    """``generateFieldNameOrArrayIndexPathSet``: the path with every subset of its possible array indices left
    out (an index key never holds positions); with subpath bounds, a path another one prefixes is dropped."""
    parts = path.split(".")
    found: set[tuple[str, ...]] = set()
    for mask in range(1 << len(indices)):
        skipped = {index for bit, index in enumerate(indices) if mask & (1 << bit)}
        found.add(tuple(part for i, part in enumerate(parts) if i not in skipped))
    ordered = sorted(found)
    if subpaths:
        kept: list[tuple[str, ...]] = []
        for candidate in ordered:
            if not any(candidate[: len(shorter)] == shorter for shorter in kept):
                kept.append(candidate)
        ordered = kept
    return [".".join(candidate) for candidate in ordered]


def supports(leaf: Leaf) -> bool:
    """``nodeIsSupportedByWildcardIndex``: no comparison to a non-empty document or array; the sparse rules
    (no null equality, no negation but ``$ne: null``) are applied by the planner."""
    if leaf.op in ("regex", "not_regex") or (leaf.op == "in" and any(isinstance(v, RegexSpec) for v in leaf.value)):
        raise Unsupported("a regex on a wildcard index is not modelled")
    if leaf.op in ("eq", "lt", "lte", "gt", "gte"):
        value = leaf.value
        if isinstance(value, Mapping):
            return not value and leaf.op in ("eq", "lte") and not leaf.origin
        if isinstance(value, list):
            return not value and leaf.op == "eq"
        return True
    if leaf.op == "in":
        return not any(isinstance(v, (Mapping, list)) and v for v in leaf.value)
    return True


def adjust_bounds(oil: OIL) -> tuple[OIL, bool]:
    """Value bounds reaching the object bracket become ``[MinKey, MaxKey]`` over every subpath (and need a fetch)."""
    for interval in oil:
        start, end = interval.start_key, interval.end_key
        reaches = end > _OBJECT_LOW or (end == _OBJECT_LOW and interval.end_inclusive)
        starts = start < _ARRAY_LOW
        if reaches and starts and not interval.is_empty:
            return [ALL_VALUES], True
    return oil, False


def path_bounds(path: str, subpaths: bool, indices: Sequence[int] = ()) -> OIL:
    """The ``$_path`` bounds: a point per path the query may mean, each with its subpaths when needed."""
    oil: OIL = []
    for each in index_or_field_paths(path, indices, subpaths):
        oil.append(point(each))
        if subpaths:
            oil.append(Interval(each + ".", True, each + "/", False))
    if [iv.start_key for iv in oil] != sorted(iv.start_key for iv in oil):
        raise Unsupported(f"the $_path bounds of {path} are not in index order")
    return oil


def slice_entries(keys: WildcardKeys, oils: Sequence[OIL], direction: int, single_range: bool = False
                  ) -> tuple[list[int], list[KeyTuple]]:
    """The keys a scan with these ``$_path`` bounds can reach: those in the bounds and one neighbour each side.

    The index's multikey metadata keys sort before every path; a backward scan over several ranges reads one of
    them after its last range, which is not modelled. A single range stops at its end key and never reads it."""
    entries = keys.entries
    low, high = oils[0][0].start_key, oils[0][-1].end_key
    start = bisect_left(entries, (low,))
    stop = bisect_right(entries, (high, (999,)))
    compound = len(keys.spec.key) > 1  # the server also keys documents without wildcard keys there
    if start == 0 and direction < 0 and (keys.multikey or compound) and not single_range:
        raise Unsupported("a backward wildcard scan reaching the index's multikey metadata keys is not modelled")
    lo, hi = max(0, start - 1), min(len(entries), stop + 1)
    chosen = entries[lo:hi]
    return [entry[-1] for entry in chosen], [entry[:-1] for entry in chosen]
