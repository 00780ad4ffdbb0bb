"""Index candidates in equality → sort → range order, and whether an index serves a shape.

Roles of a shape's predicates (planner-semantics.md §6, the ESR guideline):

* **equality**: ``eq``, and an ``$in`` of at most ``IN_EQUALITY_LIMIT`` values (the planner explodes a small ``$in``
  into one scan per value merged in sort order, so it behaves like an equality even under a sort);
* **sort**: the sort fields in order with their directions, less any field fixed by an equality;
* **range**: ``$gt``/``$lt`` ranges, anchored regexes, a larger ``$in``; then the range-like predicates that may follow
  but never lead an index: negations (``$ne``, ``$nin``, ``$not``), ``$exists`` and unanchored regexes;
* ``$elemMatch`` on sub-documents contributes its inner fields as dotted paths;
* text, geo, ``$expr``, ``$where``, ``$type``, ``$size``, ``$all``, ``$mod`` predicates are left to a residual filter.

The candidate is equality fields (in a caller-given order that lets shapes share indexes), then sort fields, then
range fields. An index *serves* a shape when the candidate is, up to the order of the equality fields and of the
range fields and the direction of range fields, a prefix of it: the index then bounds the scan as tightly and gives
the sort.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from idxadvisor.indexes.model import IndexSpec, KeyPattern
from idxadvisor.shapes.shape import (
    ALL,
    BITS,
    EQ,
    EXISTS,
    EXPR,
    GEO,
    IN,
    MOD,
    NE,
    NIN,
    NOT,
    OTHER,
    RANGE,
    REGEX_PREFIX,
    REGEX_UNANCHORED,
    SIZE,
    TEXT,
    TYPE,
    UNKNOWN_VALUE,
    WHERE,
    Branches,
    ElemMatch,
    Filter,
    QueryShape,
)

IN_EQUALITY_LIMIT = 200
_NEVER_LEADING = frozenset({NE, NIN, NOT, EXISTS, REGEX_UNANCHORED})
_NOT_INDEXABLE = {TEXT: "a $text search needs a text index", GEO: "a geo query needs a 2dsphere or 2d index",
                  EXPR: "$expr is evaluated per document", WHERE: "$where runs JavaScript per document",
                  TYPE: "$type", SIZE: "$size", ALL: "$all", MOD: "$mod", BITS: "bitwise operators",
                  OTHER: "an operator the advisor does not model", UNKNOWN_VALUE: "a value the log did not show"}


@dataclass(frozen=True)
class Roles:
    equality: tuple[str, ...] = ()
    sort: tuple[tuple[str, int], ...] = ()
    range: tuple[str, ...] = ()  # ranges that may lead, then the never-leading ones
    never_leading: frozenset[str] = frozenset()
    residual: dict[str, str] = field(default_factory=dict)  # field -> why no index can use its predicate
    has_or: bool = False

    @property
    def fields(self) -> set[str]:
        return set(self.equality) | {name for name, _ in self.sort} | set(self.range)

    @property
    def leading_fields(self) -> int:
        """How many fields could start an index scan (never-leading predicates do not count)."""
        if not self.range:
            return len(self.equality) + len(self.sort)
        return len(self.equality) + len(self.sort) + len([f for f in self.range if f not in self.never_leading])


def roles_of(shape: QueryShape, max_in_length: int = 0) -> Roles:
    equality: list[str] = []
    ranges: list[str] = []
    never_leading: set[str] = set()
    residual: dict[str, str] = {}
    _collect(shape.filter, "", max_in_length, equality, ranges, never_leading, residual)
    fixed = set(equality)
    sort = tuple([(name, direction) for name, direction in shape.sort
                  if name not in fixed and isinstance(direction, int)]) if shape.sort else ()
    range_fields: tuple[str, ...] = ()
    if ranges:  # most shapes have none: none of this to work out
        sorted_fields = {name for name, _ in sort}
        leading_ranges = [f for f in ranges if f not in never_leading and f not in sorted_fields and f not in fixed]
        trailing = [f for f in ranges if f in never_leading and f not in sorted_fields and f not in fixed]
        range_fields = tuple(dict.fromkeys(leading_ranges + trailing))
    # positional: a third faster than by keyword, for a frozen dataclass built once per shape
    return Roles(tuple(dict.fromkeys(equality)), sort, range_fields,
                 frozenset(never_leading) if never_leading else _NO_FIELDS, residual, _has_or(shape.filter))


_NO_FIELDS: frozenset[str] = frozenset()


def _has_or(shaped: Filter) -> bool:
    """An ``$or`` or ``$nor`` at the top level or inside an ``$and``."""
    for key, node in shaped:
        if key in ("$or", "$nor"):
            return True
        if key == "$and" and isinstance(node, Branches) and any(_has_or(branch) for branch in node.filters):
            return True
    return False


def _collect(shaped: Filter, prefix: str, max_in: int, equality: list[str], ranges: list[str],
             never_leading: set[str], residual: dict[str, str]) -> None:
    for key, node in shaped:
        path = prefix + key
        if isinstance(node, Branches):
            if key == "$and":
                for branch in node.filters:
                    _collect(branch, prefix, max_in, equality, ranges, never_leading, residual)
            continue
        if key.startswith("$"):
            residual[key] = _NOT_INDEXABLE.get(node if isinstance(node, str) else OTHER, "an operator")
            continue
        if isinstance(node, ElemMatch):
            inner = node.inner
            if inner and isinstance(inner[0], str):
                _classify(path, tuple(inner), max_in, equality, ranges, never_leading, residual)  # type: ignore[arg-type]
            else:
                _collect(inner, path + ".", max_in, equality, ranges, never_leading, residual)  # type: ignore[arg-type]
            continue
        classes = (node,) if isinstance(node, str) else node
        _classify(path, classes, max_in, equality, ranges, never_leading, residual)  # type: ignore[arg-type]


def _classify(path: str, classes: tuple[str, ...], max_in: int, equality: list[str], ranges: list[str],
              never_leading: set[str], residual: dict[str, str]) -> None:
    if EQ in classes or (IN in classes and max_in <= IN_EQUALITY_LIMIT):
        equality.append(path)
    elif RANGE in classes or REGEX_PREFIX in classes or IN in classes:
        ranges.append(path)
    elif any(name in _NEVER_LEADING for name in classes):
        ranges.append(path)
        never_leading.add(path)
    else:
        unsupported = next((name for name in classes if name in _NOT_INDEXABLE), classes[0] if classes else OTHER)
        residual[path] = _NOT_INDEXABLE.get(unsupported, unsupported)


def candidate_key(roles: Roles, equality_order: Callable[[str], tuple] | None = None) -> KeyPattern:
    """Equality, then sort, then range fields; () when nothing could lead an index."""
    if roles.leading_fields == 0:
        return ()
    equality = sorted(roles.equality, key=equality_order) if equality_order and len(roles.equality) > 1 \
        else roles.equality
    key: list[tuple[str, int | str]] = [(name, 1) for name in equality]
    key += roles.sort
    if roles.range:
        taken = {name for name, _ in key}
        key += [(name, 1) for name in roles.range if name not in taken]
    return tuple(key)


def ers_key(roles: Roles, equality_order: Callable[[str], tuple] | None = None) -> KeyPattern:
    """Equality, then the first range field, then sort: fewer keys when the range is very selective."""
    leading = [name for name in roles.range if name not in roles.never_leading]
    if not leading or not roles.sort:
        return candidate_key(roles, equality_order)
    equality = sorted(roles.equality, key=equality_order) if equality_order else list(roles.equality)
    key: list[tuple[str, int | str]] = [(name, 1) for name in equality] + [(leading[0], 1)] + list(roles.sort)
    taken = {name for name, _ in key}
    return tuple(key + [(name, 1) for name in roles.range if name not in taken])


def serves(key: KeyPattern, roles: Roles) -> bool:
    """True when an index on ``key`` bounds the shape's scan as the ESR candidate would, and provides its sort.

    Equality fields may be hashed (a hashed field answers an equality); sort and range fields must be ascending or
    descending B-tree fields, and text, geo or wildcard fields serve nothing here."""
    fields = [name for name, _ in key]
    equality = set(roles.equality)
    if set(fields[: len(equality)]) != equality:
        return False
    if not all(isinstance(direction, int) or direction == "hashed" for _, direction in key[: len(equality)]):
        return False
    position = len(equality)
    if roles.sort:
        block = key[position: position + len(roles.sort)]
        if [name for name, _ in block] != [name for name, _ in roles.sort]:
            return False
        if not all(isinstance(direction, int) for _, direction in block):
            return False
        same = all(direction == wanted for (_, direction), (_, wanted) in zip(block, roles.sort))
        reverse = all(direction == -wanted for (_, direction), (_, wanted) in zip(block, roles.sort))
        if not (same or reverse):
            return False
        position += len(roles.sort)
    leading_ranges = [name for name in roles.range if name not in roles.never_leading]
    if leading_ranges:
        # every range bounds the scan (in any order: the most selective first is the caller's choice)
        rest = dict(key[position:])
        if fields[position: position + 1] == [] or fields[position] not in leading_ranges:
            return False
        if not all(isinstance(rest.get(name), int) for name in leading_ranges):
            return False
    return position > 0 or bool(leading_ranges)


def serving_signature(roles: Roles) -> tuple:
    """What ``serves`` reads of a shape's roles: shapes with one signature are served by the same keys."""
    leading = frozenset(name for name in roles.range if name not in roles.never_leading)
    return frozenset(roles.equality), roles.sort, leading


_FEW_CANDIDATES = 8  # fewer are checked one by one: cheaper than narrowing them down first


class _KeyFacts:
    """What ``serves`` reads of one key, worked out once per key rather than once per shape it is tried for."""

    __slots__ = ("names", "directions", "btree", "usable_prefix", "last", "distinct")

    def __init__(self, key: KeyPattern) -> None:
        self.names = tuple(name for name, _ in key)
        self.directions = tuple(direction for _, direction in key)
        self.btree = tuple(isinstance(direction, int) for direction in self.directions)
        usable = 0  # leading fields that answer an equality: B-tree or hashed
        for is_btree, direction in zip(self.btree, self.directions):
            if not (is_btree or direction == "hashed"):
                break
            usable += 1
        self.usable_prefix = usable
        self.last = {name: (position, direction) for position, (name, direction) in enumerate(key)}
        self.distinct = len(self.last) == len(key)


class KeyIndex:
    """Key patterns indexed by the fields that lead them, so that finding the keys that serve a shape looks only at
    keys that could: its equality fields first (in any order), then its first sort field or one of its leading ranges.
    A collection with thousands of shapes and candidates costs what the few matching keys cost, not all of them."""

    def __init__(self, keys: Iterable[KeyPattern]) -> None:
        self._by_prefix: dict[frozenset[str], list[KeyPattern]] = {}
        self._by_prefix_and_next: dict[tuple[frozenset[str], str], list[KeyPattern]] = {}
        self._position: dict[KeyPattern, int] = {}
        self._facts: dict[KeyPattern, _KeyFacts] = {}
        # by equality fields, built lazily: the keys led (after those fields) by one field that hold another
        self._pairs: dict[frozenset[str], dict[tuple[str, str], list[KeyPattern]]] = {}
        for key in dict.fromkeys(keys):
            self._position[key] = len(self._position)
            fields = [name for name, _ in key]
            for length in range(len(fields) + 1):
                prefix = frozenset(fields[:length])
                if length:
                    self._by_prefix.setdefault(prefix, []).append(key)
                if length < len(fields):
                    self._by_prefix_and_next.setdefault((prefix, fields[length]), []).append(key)

    def serving(self, roles: Roles) -> list[KeyPattern]:
        """The keys that serve ``roles``, in the order they were given (``serves`` for each, faster)."""
        equality = frozenset(roles.equality)
        leading = [name for name in roles.range if name not in roles.never_leading]
        if roles.sort:
            candidates = self._by_prefix_and_next.get((equality, roles.sort[0][0]), [])
            if leading and len(candidates) > _FEW_CANDIDATES:
                candidates = self._led_and_holding([roles.sort[0][0]], equality, leading)
        elif len(leading) > 1:
            candidates = self._led_and_holding(leading, equality, leading)
        elif leading:
            candidates = self._by_prefix_and_next.get((equality, leading[0]), [])
        else:
            candidates = self._by_prefix.get(equality, []) if equality else []
        return self._serving_among(candidates, roles, equality, leading)

    def _led_and_holding(self, leads: list[str], equality: frozenset[str], names: list[str]) -> list[KeyPattern]:
        """The keys whose fields after ``equality`` start with one of ``leads`` and hold every one of ``names`` (as a
        key that serves a shape holds its leading ranges), in the order the keys were given. Looked up by the lead and
        one other name, so the cost is that of the few keys holding both, not of every key holding either."""
        pairs = self._pairs.get(equality)
        if pairs is None:
            pairs = self._pairs[equality] = self._pairs_after(equality)
        start = len(equality)
        found: list[KeyPattern] = []
        for lead in leads:
            others = [name for name in names if name != lead]
            if not others:
                found += self._by_prefix_and_next.get((equality, lead), [])
                continue
            rest = set(others[1:])
            found += [key for key in pairs.get((lead, others[0]), [])
                      if not rest or rest <= {name for name, _ in key[start + 1:]}]
        return sorted(dict.fromkeys(found), key=self._position.__getitem__)

    def _pairs_after(self, equality: frozenset[str]) -> dict[tuple[str, str], list[KeyPattern]]:
        start = len(equality)
        pairs: dict[tuple[str, str], list[KeyPattern]] = {}
        for key in dict.fromkeys(self._by_prefix.get(equality, [])) if equality else self._position:
            if len(key) > start:
                lead = key[start][0]
                for name, _ in key[start + 1:]:
                    pairs.setdefault((lead, name), []).append(key)
        return pairs

    def _serving_among(self, candidates: list[KeyPattern], roles: Roles, equality: frozenset[str],
                       leading: list[str]) -> list[KeyPattern]:
        # Each test is one of ``serves``'s, in its order, on the key's precomputed facts. A candidate's first fields
        # are the equality fields by construction (unless the key repeats a field: then the prefix is checked too).
        start = len(equality)
        sort_names = tuple(name for name, _ in roles.sort)
        same = tuple(direction for _, direction in roles.sort)
        reverse = tuple(-direction for direction in same)
        end = start + len(sort_names)
        leading_set = frozenset(leading)
        facts = self._facts
        served: list[KeyPattern] = []
        for key in candidates:
            fact = facts.get(key)
            if fact is None:
                fact = facts[key] = _KeyFacts(key)
            names = fact.names
            if not fact.distinct and frozenset(names[:start]) != equality:
                continue
            if fact.usable_prefix < start:
                continue
            if sort_names:
                if names[start:end] != sort_names or not all(fact.btree[start:end]):
                    continue
                block = fact.directions[start:end]
                if block != same and block != reverse:
                    continue
            if leading:
                if end >= len(names) or names[end] not in leading_set:
                    continue
                last = fact.last
                if not all(name in last and last[name][0] >= end and isinstance(last[name][1], int)
                           for name in leading):
                    continue
            if end > 0 or leading:
                served.append(key)
        return served


class SharedKeyIndex:
    """The keys of one collection, added in batches, and each shape's look-up (``KeyIndex.serving``) done once over
    every key: the rules look up the keys findings propose, then the index selection its candidates, which are
    mostly the same keys, and only the keys added since a shape was last looked up are searched again."""

    def __init__(self) -> None:
        self._layers: list[KeyIndex] = []  # one per batch of new keys
        self._known: set[KeyPattern] = set()
        self._found: dict[tuple, tuple[int, list[KeyPattern]]] = {}  # by signature: layers looked up, keys found

    def add(self, keys: Iterable[KeyPattern]) -> None:
        new = [key for key in dict.fromkeys(keys) if key not in self._known]
        if new:
            self._known.update(new)
            self._layers.append(KeyIndex(new))

    def serving(self, roles: Roles, signature: tuple | None = None) -> list[KeyPattern]:
        """Every key added that serves ``roles``, in the order they were added (``signature``: its
        ``serving_signature``, when the caller has it already)."""
        if signature is None:
            signature = serving_signature(roles)
        looked, found = self._found.get(signature, (0, []))
        if looked < len(self._layers):
            found = found + [key for layer in self._layers[looked:] for key in layer.serving(roles)]
            self._found[signature] = (len(self._layers), found)
        return found


def first_misplaced(key: KeyPattern, roles: Roles) -> tuple[str, str] | None:
    """A sort or range field that comes before an equality field in ``key``, or a sort field leading an index that
    lacks an equality field altogether (chosen for its order): (that field, the equality field)."""
    equality = set(roles.equality)
    later = {name for name, _ in roles.sort} | set(roles.range)
    seen: list[str] = []
    scanned: set[str] = set()
    for name, _ in key:
        if name in equality:
            if seen:
                return seen[0], name
            scanned.add(name)
        elif name in later:
            seen.append(name)
        else:
            break
    missing = [name for name in roles.equality if name not in scanned and name not in dict(key)]
    if seen and missing and seen[0] in dict(roles.sort):
        return seen[0], missing[0]
    return None


def replaceable(existing: Iterable[IndexSpec], key: KeyPattern) -> IndexSpec | None:
    """The longest existing index whose key is a strict prefix of ``key`` and that does nothing else than speed up
    queries (not unique, sparse, partial, hidden, TTL, collated or on ``_id``): the candidate makes it redundant."""
    candidate = IndexSpec(key=key)
    best = None
    for index in existing:
        if (index.unique or index.sparse or index.partial_filter is not None or index.hidden or index.is_id_index
                or index.expire_after_seconds is not None or index.collation is not None):
            continue
        if len(index.key) < len(key) and index.is_prefix_of(candidate):
            if best is None or len(index.key) > len(best.key):
                best = index
    return best
