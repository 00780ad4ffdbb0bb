"""Today's indexes as the log itself shows them, when no ``--indexes`` file or ``--uri`` says.

Four kinds of sighting (``models.inventory``) and the plans of the digest's shapes make the inventory:

* a ``createIndexes`` command or an index build (``Index build: starting``/``registering``, ``build index on:``) gives
  the key and the name; a build that finishes (``done building``, ``completed``) says from when the index exists;
* a plan summary (``IXSCAN { class_id: 1 }``) proves an index on that key exists (named ``class_id_1``, as the server
  names it by default, unless a sighting gives its name);
* a ``dropIndexes`` command or ``CMD: dropIndexes`` message takes an index out (``*``: all but ``_id``), unless it is
  created again later.

Every index of the inventory is an ``IndexSpec`` with ``origin`` set (``inferred``): the catalog it makes feeds the
analysis where an index file would, and the report says where each index came from. An index built while the log was
written carries ``built_at``; a shape that ran before and after it is judged on what it does now.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Any

from idxadvisor.indexes.catalog import IndexCatalog
from idxadvisor.indexes.model import IndexSpec, IndexSpecError, KeyPattern, default_index_name, key_pattern
from idxadvisor.indexes.plans import parse_plan_summary
from idxadvisor.models.inventory import BUILT, CREATED, DROPPED, IndexSighting
from idxadvisor.parse.indexlog import CREATE_SOURCE, user_namespace
from idxadvisor.shapes.digest import ShapeStats

PLAN_SOURCE = "plan summaries"


@dataclass
class InventoryIndex:
    """One index the log shows, with every kind of line that showed it."""

    ns: str
    key: KeyPattern
    name: str
    sources: list[str] = field(default_factory=list)
    created_at: datetime | None = None  # the first createIndexes or build start that names it
    built_at: datetime | None = None  # the first finished build (or createIndexes command, which ends with the build)
    dropped: bool = False  # dropped, and not created again since
    dropped_at: datetime | None = None
    plan_shapes: int = 0  # shapes whose plans use it
    options: dict[str, Any] | None = None  # unique, sparse, TTL, partial, …: None when only plans showed it
    first_used: datetime | None = None  # the first execution of a shape whose every plan uses it

    @property
    def exists(self) -> bool:
        return not self.dropped

    @property
    def built_during_log(self) -> datetime | None:
        """When the log shows it built, unless a plan used it before then (it existed already: a createIndexes that
        found it there, as applications send at every start)."""
        built = self.built_at
        if built is None or (self.first_used is not None and self.first_used < built):
            return None
        return built

    def spec(self) -> IndexSpec:
        origin = ", ".join(dict.fromkeys(self.sources))
        base = IndexSpec(key=self.key, name=self.name)
        if self.options:
            try:
                base = IndexSpec.from_document({**self.options, "key": list(self.key), "name": self.name})
            except (IndexSpecError, TypeError, ValueError):
                pass  # options a server would not have accepted: the key is still known
        return replace(base, origin=origin, built_at=self.built_during_log)


@dataclass
class Inventory:
    """The indexes per namespace (in the order the log showed them), dropped ones included (``exists`` says)."""

    indexes: dict[str, list[InventoryIndex]] = field(default_factory=dict)

    def catalog(self) -> IndexCatalog:
        """The indexes that exist at the end of the log, as ``IndexSpec``s marked inferred (no _id index added: the
        analysis knows every collection has one)."""
        return {ns: [index.spec() for index in indexes if index.exists]
                for ns, indexes in self.indexes.items() if any(index.exists for index in indexes)}

    def __len__(self) -> int:
        return sum(len(indexes) for indexes in self.indexes.values())


def build_inventory(sightings: Iterable[IndexSighting], shapes: Iterable[ShapeStats]) -> Inventory:
    """The inventory of the sightings (in any order: they are sorted by time) and of the shapes' plans."""
    inventory = Inventory()
    by_name: dict[tuple[str, str], InventoryIndex] = {}
    by_key: dict[tuple[str, KeyPattern], InventoryIndex] = {}

    def remember(ns: str, key: KeyPattern, name: str | None) -> InventoryIndex:
        index = by_key.get((ns, key)) or (by_name.get((ns, name)) if name else None)
        if index is None:
            index = InventoryIndex(ns, key, name or default_index_name(key))
            inventory.indexes.setdefault(ns, []).append(index)
            by_key[(ns, key)] = index
            by_name[(ns, index.name)] = index
        elif name and index.name != name and index.sources == [PLAN_SOURCE]:
            del by_name[(ns, index.name)]
            index.name = name  # a plan gave the default name: the command knows the real one
            by_name[(ns, name)] = index
        return index

    ordered = sorted(sightings, key=_time_order)
    known: dict[tuple, KeyPattern | None] = {}
    for sighting in ordered:  # in time order: a drop counts only for what was created before it
        key = _sighted_key(sighting.key, known)
        if sighting.kind == DROPPED:
            if key is not None:
                _drop(by_key.get((sighting.ns, key)), sighting)
            elif sighting.name == "*":
                for index in inventory.indexes.get(sighting.ns, []):
                    _drop(index, sighting)
            elif sighting.name is not None:
                _drop(by_name.get((sighting.ns, sighting.name)), sighting)
        elif key is not None:
            if key != (("_id", 1),):
                _note(remember(sighting.ns, key, sighting.name), sighting)
        elif sighting.name is not None and (sighting.ns, sighting.name) in by_name:
            _note(by_name[(sighting.ns, sighting.name)], sighting)  # a build ending names the index only
    for stats in sorted(shapes, key=lambda stats: stats.shape.fingerprint):  # however the digest was merged
        for plan in sorted(stats.plans):
            for key in parse_plan_summary(plan).indexes:
                if key == (("_id", 1),) or not user_namespace(stats.shape.ns):
                    continue
                index = remember(stats.shape.ns, key, None)
                if PLAN_SOURCE not in index.sources:
                    index.sources.append(PLAN_SOURCE)
                index.plan_shapes += 1
                always = all(key in parse_plan_summary(other).indexes for other in stats.plans)
                if always and stats.first_seen is not None and (index.first_used is None
                                                                or stats.first_seen < index.first_used):
                    index.first_used = stats.first_seen  # a shape that used it from its first run
                if index.dropped and (index.dropped_at is None or (stats.last_seen is not None
                                                                   and stats.last_seen > index.dropped_at)):
                    index.dropped = False  # used after the drop: it was created again where the log does not show
    return inventory


def _time_order(sighting: IndexSighting) -> tuple[bool, datetime, bool]:
    """Sightings in time order, a creation before anything else at the same time. Times with an offset are compared
    in UTC, the same instants in the same order: two times of different timezone objects (a log's sightings have
    thousands) are each asked for their offset at every comparison, which took about half of the inventory's time."""
    ts = sighting.ts
    if ts is None:
        return True, datetime.min, sighting.kind != CREATED
    zone = ts.tzinfo
    if zone is not None and zone is not timezone.utc and (type(zone) is timezone or ts.utcoffset() is not None):
        ts = ts.astimezone(timezone.utc)
    return False, ts, sighting.kind != CREATED


def _note(index: InventoryIndex, sighting: IndexSighting) -> None:
    if sighting.source not in index.sources:
        index.sources.append(sighting.source)
    ts = sighting.ts
    if sighting.options is not None and sighting.kind != DROPPED:
        index.options = sighting.options
    if sighting.kind == DROPPED:
        _drop(index, sighting)
        return
    if index.dropped:  # created again after a drop: it exists from the new build on
        index.dropped, index.built_at, index.created_at = False, None, None
    if sighting.kind == CREATED and ts is not None and index.created_at is None:
        index.created_at = ts
    # a finished build, or a createIndexes command (logged when it ends, the index built), dates the index
    finished = sighting.kind == BUILT or sighting.source == CREATE_SOURCE
    if finished and ts is not None and (index.built_at is None or ts < index.built_at):
        index.built_at = ts


def _drop(index: InventoryIndex | None, sighting: IndexSighting) -> None:
    if index is None:
        return
    if sighting.source not in index.sources:
        index.sources.append(sighting.source)
    index.dropped, index.dropped_at = True, sighting.ts or index.dropped_at


def _sighted_key(pairs: list[list[object]] | None, known: dict[tuple, KeyPattern | None]) -> KeyPattern | None:
    """``_key`` of a sighting's key, worked out once per distinct key in ``known`` (a log shows the same indexes
    again and again); each direction's type is part of what is looked up, since ``True == 1`` and only one is valid."""
    if not pairs:
        return None
    if type(pairs) is not list or not all(type(pair) is list and len(pair) == 2 for pair in pairs):
        return _key(pairs)  # not a list of pairs: ``_key`` says why
    try:
        marker = tuple((name, type(name), direction, type(direction)) for name, direction in pairs)
        found = known.get(marker, _UNKNOWN)
    except TypeError:  # unhashable (a direction as {"$numberInt": "1"}): worked out each time
        return _key(pairs)
    if found is _UNKNOWN:
        found = known[marker] = _key(pairs)
    return found  # type: ignore[return-value]


_UNKNOWN = object()


def _key(pairs: list[list[object]] | None) -> KeyPattern | None:
    if not pairs:
        return None
    try:
        return key_pattern(pairs)
    except IndexSpecError:
        return None
