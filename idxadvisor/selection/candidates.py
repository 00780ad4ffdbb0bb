"""The indexes the selection chooses from, for one collection.

* every index a finding asks for (per-finding advice, shared as the rules engine shares it), and each requested
  shape's own equality → sort → range key (whether equality → range → sort reads less is the evidence's to say);
* merges: each of these, and each existing index, *grown* to serve one more requested shape. An index can serve a
  shape when its leading fields are the shape's equality fields (in any order), then its sort, then a range; so a key
  whose fields the shape all uses can take the shape's missing fields at its end: ``{ movie_id: 1 }`` grows into
  ``{ movie_id: 1, text: 1 }`` for a shape on both, reordering equality fields so that the shorter shape's index is a
  prefix of the longer's. Shapes are taken by their number of fields, so keys grow along chains (``{ a }`` →
  ``{ a, b }`` → ``{ a, b, c }``); an existing ``{ a: 1 }`` grown to ``{ a: 1, b: 1, c: -1 }`` makes it redundant.
* directions: a range field takes the direction the collection's shapes most often sort it by, so that one index
  gives a sort in both orders (scanned backwards) and bounds the ranges of the shapes that do not sort.

A key and its mirror image (every direction reversed) serve the same queries: only one is kept, and none that an
existing index already is (hidden or sparse included: the server would not build a second index on the same key). A collection keeps at most ``MAX_CANDIDATES`` candidates, in that order.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from itertools import combinations

from idxadvisor.indexes.candidates import Roles, serves
from idxadvisor.indexes.model import IndexSpec, KeyPattern
from idxadvisor.rules.base import ShapeAnalysis
from idxadvisor.selection.demand import Demand

#: Shapes with more fields than this grow only the keys made for them (their subsets are not enumerated).
MAX_MERGE_FIELDS = 8
#: Keys kept per set of fields (different orders of the same fields).
MAX_ORDERS = 6
#: Candidates per collection: what the findings ask for first, then merges, until there are this many (a collection
#: with thousands of distinct shapes would otherwise spend seconds weighing keys the budget cannot take anyway).
MAX_CANDIDATES = 5_000

Order = Callable[[str], tuple]


@dataclass
class Candidate:
    """A key the selection may create, and where it comes from."""

    key: KeyPattern
    origin: str
    grows: str | None = None  # the existing index it extends (it makes that one redundant)
    rules: list[str] = field(default_factory=list)  # the rules whose findings asked for exactly this key


def sort_directions(demands: Iterable[Demand]) -> dict[str, int]:
    """Per field, the direction the collection's shapes sort it by most often (by executions)."""
    votes: dict[str, Counter[int]] = defaultdict(Counter)
    for demand in demands:
        for name, direction in demand.stats.shape.sort:
            if isinstance(direction, int):
                votes[name][direction] += demand.executions
    return {name: counts.most_common(1)[0][0] for name, counts in votes.items()}


def extend(key: KeyPattern, roles: Roles, order: Order, directions: dict[str, int]) -> KeyPattern | None:
    """``key`` with fields appended so that it serves ``roles`` (``key`` itself when it does already), or None when
    no key starting with ``key`` can: a field of the key sits where the shape needs another."""
    names = [name for name, _ in key]
    position = 0
    equality = set(roles.equality)
    while position < len(key) and key[position][0] in equality:
        if not (isinstance(key[position][1], int) or key[position][1] == "hashed"):
            return None
        equality.discard(key[position][0])
        position += 1
    appended: list[tuple[str, int | str]] = []
    if equality:
        if position < len(key):
            return None
        appended = [(name, 1) for name in sorted(equality, key=order)]
    reverse: bool | None = None
    for name, wanted in roles.sort:
        if position < len(key):
            have, direction = key[position]
            if have != name or not isinstance(direction, int):
                return None
            if reverse is None:
                reverse = direction != wanted
            elif reverse != (direction != wanted):
                return None
            position += 1
        else:
            appended.append((name, -wanted if reverse else wanted))
    leading = [name for name in roles.range if name not in roles.never_leading]
    if leading and position < len(key) and key[position][0] not in leading:
        return None  # the field after the equalities and the sort must bound a range
    if any(name in names for name, _ in appended):
        return None
    taken = set(names) | {name for name, _ in appended}
    appended += [(name, directions.get(name, 1)) for name in leading if name not in taken]
    if appended:  # the predicates that cannot lead go last, so the index filters them before fetching
        taken |= {name for name, _ in appended}
        appended += [(name, directions.get(name, 1)) for name in roles.range if name not in taken]
    grown = key + tuple(appended)
    return grown if serves(grown, roles) else None


def mirrored(key: KeyPattern) -> KeyPattern:
    return tuple((name, -direction if isinstance(direction, int) else direction) for name, direction in key)


def canonical(key: KeyPattern) -> KeyPattern:
    """One of a key and its mirror image (the one whose first B-tree direction is ascending)."""
    first = next((direction for _, direction in key if isinstance(direction, int)), 1)
    return key if first == 1 else mirrored(key)


def generate(demands: list[Demand], existing: list[IndexSpec], order: Order) -> list[Candidate]:
    """The candidates for a collection: what the findings ask for first, then each requested shape's keys, then
    the merges (see the module's documentation). A requested shape's own key is the one its analysis made, which
    sorted its equality fields by ``order`` too."""
    directions = sort_directions(demands)
    existing_keys = {canonical(index.key): index for index in existing if index.is_btree and not index.sparse
                     and ShapeAnalysis.plannable(index, existing)}  # the others serve not every query: no base
    # an index with the same key, collation and no filter exists, hidden or sparse: the server would not build another
    taken = {canonical(index.key) for index in existing
             if ShapeAnalysis.plannable(replace(index, hidden=False), existing)} | set(existing_keys)
    pool: dict[KeyPattern, Candidate] = {}
    orders: dict[frozenset[str], list[KeyPattern]] = defaultdict(list)
    for index in existing_keys.values():
        orders[frozenset(index.fields)].append(index.key)

    def add(key: KeyPattern, origin: str, grows: str | None = None, rule: str | None = None) -> None:
        same = canonical(key)
        if not key or same in taken:
            return
        if same not in pool:
            fields = frozenset(name for name, _ in key)
            if len(orders[fields]) >= MAX_ORDERS or len(pool) >= MAX_CANDIDATES:
                return
            pool[same] = Candidate(key, origin, grows)
            orders[fields].append(key)
        candidate = pool[same]
        if rule and rule not in candidate.rules:
            candidate.rules.append(rule)
        if grows and not candidate.grows:  # found another way first, it grows an existing index all the same
            candidate.grows = grows
            if not candidate.origin.startswith("asked for by"):
                candidate.origin = origin

    requested = [demand for demand in demands if demand.request is not None]
    for demand in requested:
        assert demand.request is not None
        add(demand.request.shared, f"asked for by {demand.request.rule}", rule=demand.request.rule)
    for demand in requested:
        assert demand.request is not None
        add(_directed(demand.request.analysis.candidate, directions, demand.roles), "a requested shape's own key")
    for demand in sorted(requested, key=lambda demand: len(demand.roles.fields)):
        fields = demand.roles.fields
        subsets = _subsets(fields) if len(fields) <= MAX_MERGE_FIELDS else [frozenset(fields)]
        for subset in subsets:
            for base in list(orders.get(subset, ())):
                grown = extend(base, demand.roles, order, directions)
                if grown is None or grown == base:
                    continue
                grows = existing_keys.get(canonical(base))
                if grows is not None:
                    add(grown, f"grows the existing index {grows.name}", grows.name)
                else:
                    add(grown, "merges the keys of several shapes")
    return list(pool.values())


def _directed(key: KeyPattern, directions: dict[str, int], roles: Roles) -> KeyPattern:
    """A shape's key with its range fields in the direction the collection sorts them by (its sort fields keep
    theirs)."""
    sorted_fields = {name for name, _ in roles.sort}
    return tuple((name, directions.get(name, direction)) if name in roles.range and name not in sorted_fields
                 and isinstance(direction, int) else (name, direction) for name, direction in key)


def _subsets(fields: set[str]) -> list[frozenset[str]]:
    names = sorted(fields)
    return [frozenset(chosen) for size in range(1, len(names) + 1) for chosen in combinations(names, size)]
