"""Query solution stages and their execution over the sample (planner-semantics.md §1, §5, §8).

Each stage is a node of the solution tree with the explain stage name; executing the tree is a pull-based
simulation (generators), so a LIMIT above a scan stops it exactly where mongod's would stop, and the
counters (keys examined, documents examined, work units) reflect the work done, as explain's
executionStats do. Matching a document is never decided here: FETCH and COLLSCAN filters use the
query-wide match result computed once with mongomock's matcher.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from idxadvisor.whatif.bounds import ALL_VALUES, OIL, oil_may_hold_collatable, render_oil
from idxadvisor.whatif.keys import IndexModel
from idxadvisor.whatif.query import Projection
from idxadvisor.whatif.scan import (
    PreparedScan,
    aligned_bounds,
    checker_events,
    key_range_span,
    prepare,
    single_range_span,
)


@dataclass
class Runtime:
    """Counters of one execution (keys and documents examined, work units, keys per scan)."""

    matched: Sequence[bool] | None
    documents: Sequence[Mapping[str, Any]]
    rank_function: Callable[[str, int], Callable[[int], int]]
    sort_ranks: Callable[[list[int], str, int], list[int]]
    ixfilter: Callable[[IndexModel, Any, int], bool]
    keys: int = 0
    docs: int = 0
    works: int = 0
    scan_keys: dict[int, int] = field(default_factory=dict)
    prefetched: set[int] = field(default_factory=set)   # rows an OR branch already fetched


class Stage:
    name = "STAGE"
    children: list[Stage]

    def __init__(self, children: Sequence[Stage] = ()) -> None:
        self.children = list(children)

    def run(self, rt: Runtime) -> Iterator[int]:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def fetched(self) -> bool:
        return all(child.fetched for child in self.children) if self.children else False

    def walk(self) -> Iterator[Stage]:
        yield self
        for child in self.children:
            yield from child.walk()

    def chain(self) -> list[str]:
        """Stage names root to leaf, following the first child."""
        names = [self.name]
        node: Stage = self
        while node.children:
            node = node.children[0]
            names.append(node.name)
        return names

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"stage": self.name}
        out.update(self.details())
        if len(self.children) == 1:
            out["inputStage"] = self.children[0].describe()
        elif self.children:
            out["inputStages"] = [child.describe() for child in self.children]
        return out

    def details(self) -> dict[str, Any]:
        return {}


def render_key_pattern_plain(key: Sequence[tuple[str, Any]]) -> str:
    """The key pattern as mongod writes it in ``planSummary``: ``{ a: 1, b.c: -1, h: "hashed" }``."""
    return "{ " + ", ".join(f"{name}: " + (f'"{direction}"' if isinstance(direction, str) else f"{direction}")
                            for name, direction in key) + " }"


class CollScan(Stage):
    name = "COLLSCAN"

    def __init__(self, has_filter: bool, direction: int = 1) -> None:
        super().__init__()
        self.has_filter = has_filter
        self.direction = direction

    @property
    def fetched(self) -> bool:
        return True

    def run(self, rt: Runtime) -> Iterator[int]:
        matched = rt.matched
        assert matched is not None
        count = len(rt.documents)
        for rid in (range(count) if self.direction > 0 else range(count - 1, -1, -1)):
            rt.docs += 1
            rt.works += 1
            if matched[rid]:
                yield rid
        rt.works += 1

    def details(self) -> dict[str, Any]:
        return {"direction": "forward" if self.direction > 0 else "backward"}


class IxScan(Stage):
    """IXSCAN over one index with value-space bounds (ascending per field) and a scan direction."""

    name = "IXSCAN"

    def __init__(self, model: IndexModel, oils: list[OIL], direction: int = 1,
                 key_filter: Any = None) -> None:
        super().__init__()
        self.model = model
        self.oils = oils
        self.direction = direction
        self.key_filter = key_filter
        self.dedup = model.is_multikey
        self._prepared: PreparedScan | None = None

    @property
    def fetched(self) -> bool:
        return False

    @property
    def effective_directions(self) -> list[int]:
        return [d * self.direction for d in self.model.directions]

    def explain_bounds(self) -> dict[str, list[str]]:
        aligned = aligned_bounds(self.oils, self.effective_directions)
        return {name: render_oil(oil) for name, oil in zip(self.model.fields, aligned)}

    def prepared(self) -> PreparedScan:
        if self._prepared is None:
            self._prepared = prepare(self.model, self.oils, self.direction)
        return self._prepared

    def provides_field(self, path: str) -> bool:
        """``IndexScanNode::getFieldAvailability``: not a multikey or hashed field, nor one whose bounds hold
        strings on an index with a collation (its keys are collation keys)."""
        model = self.model
        for position, (name, paths) in enumerate(zip(model.fields, model.multikey_paths)):
            if name == path:
                if paths or model.hashed[position]:
                    return False
                return model.collator is None or not oil_may_hold_collatable(self.oils[position])
        return False

    def run(self, rt: Runtime) -> Iterator[int]:
        scan = self.prepared()
        if scan.single_interval is not None:
            yield from self._run_range(rt, scan, *single_range_span(scan))
            return
        entries = scan.entries
        seen: set[int] = set()
        key_filter = self.key_filter
        direction = scan.direction
        me = id(self)
        for index, valid in checker_events(scan):
            rt.keys += 1
            rt.works += 1
            rt.scan_keys[me] = rt.scan_keys.get(me, 0) + 1
            if valid is None:  # DONE: the scan ends in the same work unit
                return
            if not valid:
                continue
            rid = entries[index][-1] * direction
            if self.dedup:
                if rid in seen:
                    continue
                seen.add(rid)
            if key_filter is not None and not rt.ixfilter(self.model, key_filter, rid):
                continue
            yield rid
        rt.works += 1

    def _run_range(self, rt: Runtime, scan: PreparedScan, lo: int, hi: int) -> Iterator[int]:
        """A start/end-key scan of ``entries[lo:hi]``: every entry in range is examined and valid (§4)."""
        entries = scan.entries
        direction = scan.direction
        dedup = self.dedup
        key_filter = self.key_filter
        seen: set[int] = set()
        me = id(self)
        examined = 0
        try:
            for position in range(lo, hi):
                examined += 1
                rt.keys += 1
                rt.works += 1
                rid = entries[position][-1] * direction
                if dedup:
                    if rid in seen:
                        continue
                    seen.add(rid)
                if key_filter is not None and not rt.ixfilter(self.model, key_filter, rid):
                    continue
                yield rid
            rt.works += 1
        finally:
            rt.scan_keys[me] = rt.scan_keys.get(me, 0) + examined

    def details(self) -> dict[str, Any]:
        return {"keyPattern": self.model.spec.key_document(), "indexName": self.model.spec.name,
                "isMultiKey": self.model.is_multikey, "direction": "forward" if self.direction > 0 else "backward",
                "indexBounds": self.explain_bounds(), "hasFilter": self.key_filter is not None}


class Fetch(Stage):
    name = "FETCH"

    def __init__(self, child: Stage, has_filter: bool) -> None:
        super().__init__([child])
        self.has_filter = has_filter
        self.matched_override: Sequence[bool] | None = None

    @property
    def fetched(self) -> bool:
        return True

    def run(self, rt: Runtime) -> Iterator[int]:
        matched = self.matched_override if self.matched_override is not None else rt.matched
        prefetched = rt.prefetched
        has_filter = self.has_filter
        if has_filter:
            assert matched is not None
        for rid in self.children[0].run(rt):
            if not prefetched or rid not in prefetched:  # an OR branch's fetched row is not read again
                rt.docs += 1
            if has_filter and not matched[rid]:  # type: ignore[index]
                continue
            yield rid

    def details(self) -> dict[str, Any]:
        return {"hasFilter": self.has_filter}


def _rank_sort(rows: list[int], pattern: Sequence[tuple[str, int]], rt: Runtime) -> list[int]:
    """Order rows by a sort pattern (stable): BSON order via each field's ranks, negated when descending."""
    columns = [rt.sort_ranks(rows, path, direction) for path, direction in pattern]
    if len(columns) == 1:
        only = columns[0]
        order = sorted(range(len(rows)), key=only.__getitem__)
    else:
        keys = list(zip(*columns))
        order = sorted(range(len(rows)), key=keys.__getitem__)
    return [rows[i] for i in order]


class Sort(Stage):
    name = "SORT"

    def __init__(self, child: Stage, pattern: Sequence[tuple[str, int]], limit: int) -> None:
        super().__init__([child])
        self.pattern = tuple(pattern)
        self.limit = limit

    @property
    def fetched(self) -> bool:
        return self.children[0].fetched

    @property
    def sort_type(self) -> str:
        return "simple" if self.children[0].fetched else "default"

    def run(self, rt: Runtime) -> Iterator[int]:
        rows = list(self.children[0].run(rt))
        ordered = _rank_sort(rows, self.pattern, rt)
        if self.limit:
            ordered = ordered[: self.limit]
        for rid in ordered:
            rt.works += 1
            yield rid
        rt.works += 1

    def details(self) -> dict[str, Any]:
        out: dict[str, Any] = {"sortPattern": dict(self.pattern), "type": self.sort_type}
        if self.limit:
            out["limitAmount"] = self.limit
        return out


class SortMerge(Stage):
    name = "SORT_MERGE"

    def __init__(self, children: Sequence[Stage], pattern: Sequence[tuple[str, int]], dedup: bool) -> None:
        super().__init__(children)
        self.pattern = tuple(pattern)
        self.dedup = dedup

    def run(self, rt: Runtime) -> Iterator[int]:
        rankers = [rt.rank_function(p, d) for p, d in self.pattern]

        def key(rid: int) -> tuple[int, ...]:
            return tuple(ranker(rid) for ranker in rankers)

        heap: list[tuple[tuple[int, ...], int, int, Iterator[int]]] = []
        fetched_children = {position for position, child in enumerate(self.children) if child.fetched}
        for position, child in enumerate(self.children):
            iterator = child.run(rt)
            rid = next(iterator, None)
            if rid is not None:
                heap.append((key(rid), position, rid, iterator))
        heapq.heapify(heap)
        seen: set[int] = set()
        while heap:
            _, position, rid, iterator = heapq.heappop(heap)
            nxt = next(iterator, None)
            if nxt is not None:
                heapq.heappush(heap, (key(nxt), position, nxt, iterator))
            if self.dedup:
                if rid in seen:
                    continue
                seen.add(rid)
            if position in fetched_children:
                rt.prefetched.add(rid)
            yield rid

    def details(self) -> dict[str, Any]:
        return {"sortPattern": dict(self.pattern)}


class OrStage(Stage):
    name = "OR"

    def run(self, rt: Runtime) -> Iterator[int]:
        seen: set[int] = set()
        for child in self.children:
            child_fetched = child.fetched
            for rid in child.run(rt):
                if rid in seen:
                    continue
                seen.add(rid)
                if child_fetched:
                    rt.prefetched.add(rid)
                yield rid


class Skip(Stage):
    name = "SKIP"

    def __init__(self, child: Stage, amount: int) -> None:
        super().__init__([child])
        self.amount = amount

    def run(self, rt: Runtime) -> Iterator[int]:
        skipped = 0
        for rid in self.children[0].run(rt):
            if skipped < self.amount:
                skipped += 1
                continue
            yield rid

    def details(self) -> dict[str, Any]:
        return {"skipAmount": self.amount}


class Limit(Stage):
    name = "LIMIT"

    def __init__(self, child: Stage, amount: int) -> None:
        super().__init__([child])
        self.amount = amount

    def run(self, rt: Runtime) -> Iterator[int]:
        if self.amount <= 0:
            return
        produced = 0
        iterator = self.children[0].run(rt)
        for rid in iterator:
            yield rid
            produced += 1
            if produced >= self.amount:
                iterator.close()
                return

    def details(self) -> dict[str, Any]:
        return {"limitAmount": self.amount}


class ProjectionStage(Stage):
    def __init__(self, child: Stage, name: str, projection: Projection) -> None:
        super().__init__([child])
        self.name = name
        self.projection = projection

    def run(self, rt: Runtime) -> Iterator[int]:
        yield from self.children[0].run(rt)

    def keeps_field(self, path: str) -> bool:
        if self.projection.inclusion:
            return path in self.projection.required_fields
        return path not in self.projection.fields


class CountStage(Stage):
    name = "COUNT"

    def __init__(self, child: Stage | None, skip: int, limit: int) -> None:
        super().__init__([child] if child is not None else [])
        self.skip = skip
        self.limit = limit
        self.counted = 0

    def run(self, rt: Runtime) -> Iterator[int]:
        self.counted = 0
        if not self.children:
            return
        if isinstance(self.children[0], FastCount):
            remaining = max(0, len(rt.documents) - self.skip)
            self.counted = min(remaining, self.limit) if self.limit else remaining
            return
        to_skip = self.skip
        iterator = self.children[0].run(rt)
        for _ in iterator:
            if to_skip > 0:
                to_skip -= 1
                continue
            self.counted += 1
            if self.limit and self.counted >= self.limit:
                iterator.close()
                break
        return
        yield  # pragma: no cover


class FastCount(Stage):
    name = "RECORD_STORE_FAST_COUNT"

    def run(self, rt: Runtime) -> Iterator[int]:
        return iter(())


class CountScan(Stage):
    """COUNT_SCAN: a start/end-key scan whose final empty probe is counted too (§4, §8)."""

    name = "COUNT_SCAN"

    def __init__(self, scan: IxScan) -> None:
        super().__init__()
        self.scan = scan

    @property
    def model(self) -> IndexModel:
        return self.scan.model

    def run(self, rt: Runtime) -> Iterator[int]:
        prepared = self.scan.prepared()
        lo, hi = single_range_span(prepared)
        entries = prepared.entries
        seen: set[int] = set()
        direction = prepared.direction
        me = id(self)
        for index in range(lo, hi):
            rt.keys += 1
            rt.works += 1
            rt.scan_keys[me] = rt.scan_keys.get(me, 0) + 1
            rid = entries[index][-1] * direction
            if self.scan.dedup:
                if rid in seen:
                    continue
                seen.add(rid)
            yield rid
        rt.keys += 1
        rt.works += 1
        rt.scan_keys[me] = rt.scan_keys.get(me, 0) + 1

    def details(self) -> dict[str, Any]:
        return {"keyPattern": self.model.spec.key_document(), "indexName": self.model.spec.name,
                "isMultiKey": self.model.is_multikey}


class DistinctScan(Stage):
    """DISTINCT_SCAN: the index bounds read one key per distinct prefix up to ``field_no``, seeking past the
    rest; every key the cursor lands on is counted, a key past the bounds too (§4)."""

    name = "DISTINCT_SCAN"

    def __init__(self, scan: IxScan, field_no: int) -> None:
        super().__init__()
        self.scan = scan
        self.field_no = field_no

    @property
    def model(self) -> IndexModel:
        return self.scan.model

    @property
    def fetched(self) -> bool:
        return False

    def run(self, rt: Runtime) -> Iterator[int]:
        prepared = self.scan.prepared()
        entries = prepared.entries
        direction = prepared.direction
        me = id(self)
        for index, valid in checker_events(prepared, self.field_no):
            rt.keys += 1
            rt.works += 1
            rt.scan_keys[me] = rt.scan_keys.get(me, 0) + 1
            if valid is None:
                return
            if valid:
                yield entries[index][-1] * direction
        rt.works += 1

    def details(self) -> dict[str, Any]:
        return {"keyPattern": self.model.spec.key_document(), "indexName": self.model.spec.name,
                "isMultiKey": self.model.is_multikey, "direction": "forward" if self.scan.direction > 0 else "backward",
                "indexBounds": self.scan.explain_bounds()}


class RangeScan(IxScan):
    """IXSCAN over a simple key range, ``[min, max)`` in index order (the ``min``/``max`` options): a start/end-key
    scan that examines exactly the entries in range."""

    def __init__(self, model: IndexModel, start: tuple[Any, ...], end: tuple[Any, ...]) -> None:
        super().__init__(model, [[ALL_VALUES] for _ in model.fields], 1)
        self.start = start
        self.end = end

    def run(self, rt: Runtime) -> Iterator[int]:
        scan = self.prepared()
        yield from self._run_range(rt, scan, *key_range_span(scan, self.model, self.start, self.end))

    def key_range(self) -> dict[str, Any]:
        return {"startKey": dict(zip(self.model.fields, self.start)), "startKeyInclusive": True,
                "endKey": dict(zip(self.model.fields, self.end)), "endKeyInclusive": False}

    def details(self) -> dict[str, Any]:
        return {"keyPattern": self.model.spec.key_document(), "indexName": self.model.spec.name,
                "isMultiKey": self.model.is_multikey, "direction": "forward", "keyRange": self.key_range()}


class Express(Stage):
    """8.0+ express path (``EXPRESS_IXSCAN``) and the older ``IDHACK``: one index probe, one fetch."""

    def __init__(self, name: str, model: IndexModel, rid: int | None) -> None:
        super().__init__()
        self.name = name
        self.model = model
        self.rid = rid

    @property
    def fetched(self) -> bool:
        return True

    def run(self, rt: Runtime) -> Iterator[int]:
        if self.rid is None:
            return
        rt.keys += 1
        rt.docs += 1
        rt.works += 1
        yield self.rid

    def details(self) -> dict[str, Any]:
        return {"keyPattern": self.model.spec.key_document(), "indexName": self.model.spec.name}
