"""A change of index definitions: the baseline set, the proposed set, and what happens between them.

``idxadvisor check`` judges a change (its readers live in ``idxadvisor.gate``); the gating rules (CI001–CI004) and the
existing rules read it from their context. Every event keeps the place in a file it comes from (an index file
entry, a migration-script call), which SARIF results point at.

Without a baseline index file, today's indexes are those the workload's plan summaries name (``inferred_catalog``):
what the log proves exists. They are matched to the proposed set by key pattern, since their names are not known.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from idxadvisor.indexes.catalog import IndexCatalog
from idxadvisor.indexes.model import IndexSpec
from idxadvisor.indexes.plans import parse_plan_summary
from idxadvisor.models.report import SourceLocation
from idxadvisor.shapes.digest import ShapeStats

Action = Literal["created", "dropped", "hidden", "unhidden"]
ID_INDEX = IndexSpec(key=(("_id", 1),), name="_id_")


@dataclass(frozen=True)
class IndexEvent:
    action: Action
    ns: str
    index: IndexSpec
    location: SourceLocation | None = None


@dataclass(frozen=True)
class RefusedIndex:
    """An index the change creates that the server would refuse to build, and why (a sentence); ``index`` is None
    when the call's specification is itself invalid (``shown`` then renders what the call passed)."""

    ns: str
    shown: str
    reason: str
    location: SourceLocation | None = None
    index: IndexSpec | None = None


@dataclass
class IndexChange:
    """Baseline → proposed, per namespace. ``locations`` says where each proposed index is defined (namespace, name),
    ``namespace_locations`` where each namespace is (its key in an index file)."""

    baseline: IndexCatalog
    proposed: IndexCatalog
    events: list[IndexEvent] = field(default_factory=list)
    baseline_known: bool = True  # False: the baseline is what the workload's plans show
    locations: dict[tuple[str, str], SourceLocation] = field(default_factory=dict)
    namespace_locations: dict[str, SourceLocation] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    refused: list[RefusedIndex] = field(default_factory=list)  # left out of the proposed set: the server refuses them

    @classmethod
    def unchanged(cls, catalog: IndexCatalog) -> IndexChange:
        """No change at all: the baseline judged by itself (what ``check`` compares the proposed set with)."""
        return cls(baseline=catalog, proposed=catalog)

    def events_of(self, ns: str, *actions: Action) -> list[IndexEvent]:
        return [event for event in self.events if event.ns == ns and (not actions or event.action in actions)]

    def created(self, ns: str) -> list[IndexSpec]:
        return [event.index for event in self.events_of(ns, "created")]

    def is_created(self, ns: str, index: IndexSpec) -> bool:
        return any(event.index.name == index.name for event in self.events_of(ns, "created"))

    def location_of(self, ns: str, index: IndexSpec | None = None) -> SourceLocation | None:
        """Where an index of the proposed set is defined (or, for an index the change drops or hides, where that
        happens); else where the namespace is."""
        if index is not None:
            for event in reversed(self.events_of(ns)):
                if event.index.name == index.name and event.location is not None:
                    return event.location
            if (ns, index.name) in self.locations:
                return self.locations[ns, index.name]
        return self.namespace_locations.get(ns)

    def namespaces(self) -> set[str]:
        return set(self.baseline) | set(self.proposed)


def inferred_catalog(shapes: Iterable[ShapeStats]) -> IndexCatalog:
    """Today's indexes as far as the log shows them: every key pattern a plan summary names, with its default name."""
    catalog: IndexCatalog = {}
    for stats in shapes:
        for text in stats.plans:
            for key in parse_plan_summary(text).indexes:
                indexes = catalog.setdefault(stats.shape.ns, [ID_INDEX])
                if all(index.key != key for index in indexes):
                    indexes.append(IndexSpec(key=key))
    return catalog


def same_index(one: IndexSpec, other: IndexSpec, by_key: bool) -> bool:
    return one.key == other.key if by_key else one.name == other.name


def _definition(index: IndexSpec) -> tuple:
    """What makes two indexes of one name the same index (hiding aside)."""
    return (index.key, index.unique, index.sparse, index.expire_after_seconds, repr(index.partial_filter),
            repr(index.collation))


def diff_catalogs(baseline: IndexCatalog, proposed: IndexCatalog, baseline_known: bool,
                  locations: dict[tuple[str, str], SourceLocation],
                  namespace_locations: dict[str, SourceLocation]) -> list[IndexEvent]:
    """The events that turn the baseline into the proposed set, for the namespaces the proposed set lists (a
    namespace it does not list is not described by it, so nothing there changes). Indexes match by name, or by key
    when the baseline is inferred from plans; an index redefined under the same name is dropped and created."""
    events: list[IndexEvent] = []
    by_key = not baseline_known
    for ns, indexes in proposed.items():
        before = baseline.get(ns, [ID_INDEX] if baseline_known else [])
        for old in before:
            new = next((index for index in indexes if same_index(old, index, by_key)), None)
            if new is None or (not by_key and _definition(new) != _definition(old)):
                events.append(IndexEvent("dropped", ns, old, namespace_locations.get(ns)))
            elif new.hidden != old.hidden:
                events.append(IndexEvent("hidden" if new.hidden else "unhidden", ns, new, locations.get((ns, new.name))))
        for new in indexes:
            old = next((index for index in before if same_index(index, new, by_key)), None)
            if old is None and new.is_id_index:
                continue  # every collection has it
            if old is None or (not by_key and _definition(new) != _definition(old)):
                events.append(IndexEvent("created", ns, new, locations.get((ns, new.name))))
    return events
