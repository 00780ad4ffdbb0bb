"""Plan building: which predicates an index answers, the stage tree above the scan, and plan choice.

* Index selection and compounding (§3): predicates on the leading field make an index relevant; all
  predicates on later fields are compounded, except where a multikey path forbids intersecting or
  compounding bounds without a common ``$elemMatch`` (then one alternative plan per leading predicate
  group, later predicates greedily). Tightness decides where each predicate is evaluated: nowhere
  (exact), as an IXSCAN filter on key values (inexact covered, non-multikey index), or in FETCH.
* Analysis (``QueryPlannerAnalysis::analyzeDataAccess``, §5–§7): sort provided by the index (possibly
  by a backward scan), explode-for-sort into SORT_MERGE, or a blocking SORT (with the limit folded in);
  SKIP; projection (covered / simple / default) or the final FETCH; LIMIT; projection pushed under SORT.
* COUNT (§8): COUNT_SCAN for one exact range, ``RECORD_STORE_FAST_COUNT`` without a predicate.
* Plan choice (§11): a trial of every candidate until one produces the first batch (101 results, or the
  limit) or reaches EOF; highest productivity wins, ties go to plans without FETCH, then without SORT.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from idxadvisor.whatif.bounds import (
    ALL_VALUES,
    OIL,
    IndexContext,
    Tightness,
    compares_collatable,
    intersect,
    is_all_values_oil,
    negates_null,
    oil_may_hold_collatable,
    point,
    sparse_can_answer,
    translate_elem_match_value,
    translate_leaf,
)
from idxadvisor.whatif.bsonorder import UNDEFINED, sort_key
from idxadvisor.whatif.keys import IndexModel
from idxadvisor.whatif.query import (
    ElemMatchContext,
    ElemMatchObject,
    ElemMatchValue,
    Leaf,
    Node,
    Projection,
    RegexSpec,
    Unsupported,
    matcher_filter,
)
from idxadvisor.whatif.scan import is_single_interval_value_space
from idxadvisor.whatif.wildcard import adjust_bounds as wildcard_adjust_bounds
from idxadvisor.whatif.wildcard import path_bounds as wildcard_path_bounds
from idxadvisor.whatif.wildcard import supports as wildcard_supports
from idxadvisor.whatif.stages import (
    CountScan,
    CountStage,
    Fetch,
    IxScan,
    Limit,
    OrStage,
    ProjectionStage,
    Runtime,
    Skip,
    Sort,
    SortMerge,
    Stage,
)

MAX_SCANS_TO_EXPLODE = 200
TRIAL_RESULTS = 101


@dataclass
class QueryShape:
    """What the analysis needs to know about the query besides its predicates."""

    command: str
    sort: tuple[tuple[str, int], ...]
    projection: Projection | None
    limit: int
    skip: int
    version: tuple[int, int]
    collator: Any = None          # the query's Collator (None: the simple collation)

    @property
    def is_count(self) -> bool:
        return self.command == "count"


@dataclass(eq=False)
class Assignable:
    """A predicate (or value ``$elemMatch``) that can bound one index field."""

    node: Leaf | ElemMatchValue
    position: int
    context: ElemMatchContext | None
    owner: Node
    order: int


@dataclass
class Candidate:
    """One complete plan for the query."""

    root: Stage
    label: str
    models: list[IndexModel] = field(default_factory=list)
    blocking_sort: bool = False
    incomplete: bool = False       # a hinted sparse index may legitimately miss matching documents
    needs_matcher: bool = True
    notes: list[str] = field(default_factory=list)


def _is_prefix(prefix: str, path: str) -> bool:
    return path == prefix or path.startswith(prefix + ".")


class IndexPlanner:
    """Plans the conjunction of a query (or of one ``$or`` branch) against one index."""

    def __init__(self, model: IndexModel, shape: QueryShape) -> None:
        self.model = model
        self.shape = shape
        self.position = {name: i for i, name in enumerate(model.fields)}

    def context_for(self, position: int) -> IndexContext:
        model = self.model
        return IndexContext(
            sparse=model.spec.sparse or model.wildcard is not None,  # a wildcard index holds no missing field
            multikey=model.is_multikey,
            field_multikey=bool(model.multikey_paths[position]),
            compound=len(model.fields) > 1,
            null_has_undefined=self.shape.version < (8, 0),
            hashed=model.hashed[position],
            collated=model.collator is not None,
        )

    @property
    def collation_mismatch(self) -> bool:
        return self.model.collator != self.shape.collator

    # --- relevance ---

    def assignables(self, conjuncts: Sequence[Node]) -> list[Assignable]:
        out: list[Assignable] = []
        order = 0
        for node in conjuncts:
            if isinstance(node, Leaf):
                pos = self.position.get(node.path)
                if pos is not None and self._can_bound(node, pos, inside_value_elem_match=False):
                    out.append(Assignable(node, pos, None, node, order))
                order += 1
            elif isinstance(node, ElemMatchValue):
                pos = self.position.get(node.path)
                if pos is not None and all(self._can_bound(c, pos, True) for c in node.children):
                    if translate_elem_match_value(node, self.context_for(pos)) is not None:
                        out.append(Assignable(node, pos, node.context, node, order))
                order += 1
            elif isinstance(node, ElemMatchObject):
                for child in node.children:
                    pos = self.position.get(child.path)
                    if pos is not None and self._can_bound(child, pos, inside_value_elem_match=False):
                        out.append(Assignable(child, pos, node.context, node, order))
                    order += 1
            else:
                order += 1
        return out

    def _can_bound(self, leaf: Leaf, pos: int, inside_value_elem_match: bool) -> bool:
        if self.collation_mismatch and compares_collatable(leaf):
            return False  # string bounds in another collation's keys (QueryPlannerIXSelect::_compatible)
        if self.model.collator is not None and _uses_regex(leaf):
            raise Unsupported(f"index {self.model.spec.name}: a regex on an index with a collation (whether the "
                              "planner uses it depends on internalQueryPlannerIgnoreIndexWithCollationForRegex)")
        if self.model.hashed[pos] and inside_value_elem_match:
            return False
        if self.model.wildcard is not None and not wildcard_supports(leaf):
            return False
        if self.context_for(pos).sparse and not sparse_can_answer(leaf, inside_value_elem_match):
            return False
        if negates_null(leaf) and not self._not_null_can_use(leaf, pos, inside_value_elem_match):
            return False
        return translate_leaf(leaf, self.context_for(pos)) is not None

    def _not_null_can_use(self, leaf: Leaf, pos: int, inside_value_elem_match: bool) -> bool:
        """``notEqualsNullCanUseIndex``: a negation of null cannot use a field with a multikey component, since
        ``{a: []}`` is keyed as undefined (and ``{a: [null]}`` as null) yet matches ``{a: {$ne: null}}``. Inside a
        value ``$elemMatch`` it can; inside an object ``$elemMatch`` only if every multikey component of the
        field lies at or above the ``$elemMatch`` path."""
        paths = self.model.multikey_paths[pos]
        if not paths or inside_value_elem_match:
            return True
        context = leaf.context
        if context is None or context.is_value:
            return False
        return all(_is_prefix(m, context.path) for m in paths)

    # --- multikey compatibility (§3 "Combining predicates") ---

    def _compatible(self, a: Assignable, b: Assignable) -> bool:
        fields = self.model.fields
        mk = self.model.multikey_paths
        if a.position == b.position:
            paths = mk[a.position]
            if not paths:
                return True
            shared = paths
        else:
            fa, fb = fields[a.position], fields[b.position]
            shared = {m for m in mk[a.position] | mk[b.position] if _is_prefix(m, fa) and _is_prefix(m, fb)}
            if not shared:
                return True
        context = a.context if a.context is b.context else None
        return context is not None and all(_is_prefix(m, context.path) for m in shared)

    def assignments(self, conjuncts: Sequence[Node]) -> list[list[Assignable]]:
        """Alternative predicate assignments: one per compatible group of leading-field predicates."""
        items = self.assignables(conjuncts)
        lead = self.model.lead
        leading = [a for a in items if a.position == lead]
        if not leading:
            return []
        groups: list[list[Assignable]] = []
        for item in leading:
            for group in groups:
                if all(self._compatible(item, member) for member in group):
                    group.append(item)
                    break
            else:
                groups.append([item])
        out = []
        for group in groups:
            chosen = list(group)
            for item in items:
                if item.position == lead:
                    continue
                if all(self._compatible(item, member) for member in chosen):
                    chosen.append(item)
            out.append(chosen)
        return out

    # --- access plan ---

    def refine(self, tightness: Tightness) -> Tightness:
        """``refineTightnessForMaybeCoveredQuery``: null equality is exact only without a projected field."""
        if tightness not in (Tightness.EXACT_MAYBE_COVERED, Tightness.INEXACT_MAYBE_COVERED):
            return tightness
        no_fetch = not proj_needs_fetch(self.shape)
        if tightness == Tightness.EXACT_MAYBE_COVERED:
            return Tightness.EXACT if no_fetch else Tightness.INEXACT_FETCH
        return Tightness.INEXACT_COVERED if no_fetch else Tightness.INEXACT_FETCH

    def access_plan(self, conjuncts: Sequence[Node], chosen: list[Assignable]) -> tuple[Stage, list[Node]]:
        """IXSCAN (+ FETCH with the residual filter); returns the root and the residual predicates."""
        nfields = len(self.model.fields)
        oils: list[OIL | None] = [None] * nfields
        consumed: set[int] = set()
        key_filter_leaves: list[Leaf] = []
        for item in chosen:
            ctx = self.context_for(item.position)
            if isinstance(item.node, ElemMatchValue):
                result = translate_elem_match_value(item.node, ctx)
            else:
                result = translate_leaf(item.node, ctx)
            assert result is not None
            oil, tightness = result
            current = oils[item.position]
            oils[item.position] = oil if current is None else intersect(oil, current)
            if item.owner is not item.node:
                continue  # inside an $elemMatch object: the whole $elemMatch stays as a filter
            tightness = self.refine(tightness)
            if tightness == Tightness.EXACT:
                consumed.add(id(item.node))
            elif tightness == Tightness.INEXACT_COVERED and not self.model.is_multikey:
                consumed.add(id(item.node))
                assert isinstance(item.node, Leaf)
                key_filter_leaves.append(item.node)
        if self.model.wildcard is not None:
            consumed, key_filter_leaves = self._finish_wildcard(oils, chosen, consumed, key_filter_leaves)
        final_oils = [oil if oil is not None else [ALL_VALUES] for oil in oils]
        key_filter = matcher_filter(key_filter_leaves) if key_filter_leaves else None
        scan: Stage = IxScan(self.model, final_oils, 1, key_filter)
        residual = [node for node in conjuncts if id(node) not in consumed]
        if residual:
            scan = Fetch(scan, True)
        return scan, residual

    def _finish_wildcard(self, oils: list[OIL | None], chosen: list[Assignable], consumed: set[int],
                         key_filter_leaves: list[Leaf]) -> tuple[set[int], list[Leaf]]:
        """``finalizeWildcardIndexScanConfiguration``: ``$_path`` is the field (and its subpaths when the value
        bounds reach documents, which then cover every value and must be fetched)."""
        value_oil, subpaths = wildcard_adjust_bounds(oils[1] or [ALL_VALUES])
        oils[1] = value_oil
        oils[0] = wildcard_path_bounds(self.model.fields[1], subpaths, self.model.array_indices)
        if subpaths or self.model.array_indices:  # positions through arrays: the keys cannot tell, fetch
            consumed = consumed - {id(item.node) for item in chosen}
        if key_filter_leaves:  # an IXSCAN filter on wildcard keys is not modelled: evaluate after the fetch
            consumed = consumed - {id(leaf) for leaf in key_filter_leaves}
        return consumed, []

    def whole_index_plan(self, conjuncts: Sequence[Node], direction: int = 1) -> Stage:
        """``buildWholeIXSoln``: every key of the index, the whole filter applied after FETCH."""
        scan = IxScan(self.model, [[ALL_VALUES] for _ in self.model.fields], direction)
        if conjuncts:
            return Fetch(scan, True)
        return scan


def _uses_regex(leaf: Leaf) -> bool:
    return leaf.op == "regex" or (leaf.op == "in" and any(isinstance(v, RegexSpec) for v in leaf.value))


def proj_needs_fetch(shape: QueryShape) -> bool:
    """``projNeedsFetch``: only count-like queries and projections of ``_id`` alone avoid the fetch."""
    if shape.is_count:
        return False
    projection = shape.projection
    if projection is None or not projection.inclusion:
        return True
    return projection.required_fields != ("_id",)


# --- analysis ---


def scan_under(root: Stage) -> IxScan | None:
    """The index scan of an ``IXSCAN`` or ``FETCH -> IXSCAN`` access plan."""
    if isinstance(root, IxScan):
        return root
    if isinstance(root, Fetch) and isinstance(root.children[0], IxScan):
        return root.children[0]
    return None


def scan_direction_for_sort(scan: IxScan, desired: Sequence[tuple[str, int]], collator: Any = None) -> int | None:
    """1 or -1 when the index scan provides ``desired`` forward or backward, else ``None`` (§6).

    Fields with one point interval are ignored on both sides (``ProvidedSortSet``), except that a sort on a
    multikey field with a point is never provided (its equality does not make it sortable). On a multikey index a
    sort field may not lie under a multikey path that has bounds (its own, or another field's). A hashed field
    that is not an equality ends the order the index gives; an index in another collation than the query's gives
    no order on a field whose bounds hold strings.
    """
    model = scan.model
    equality = {name for name, oil in zip(model.fields, scan.oils) if len(oil) == 1 and oil[0].is_point}
    # A multikey field with point bounds is skipped in the index order but gives no order of its own: the
    # document's sort key is its smallest (or largest) element, not the point (computeSortsForScan's ignoreFields).
    ignorable = {name for name, paths in zip(model.fields, model.multikey_paths) if name in equality and not paths}
    wanted = [item for item in desired if item[0] not in ignorable]
    bounded = [m for oil, paths in zip(scan.oils, model.multikey_paths)
               if paths and not is_all_values_oil(oil) for m in paths]
    for name, _ in wanted:
        if any(_is_prefix(m, name) for m in bounded):
            return None
    if model.collator != collator:
        collated = {name for name, oil in zip(model.fields, scan.oils) if oil_may_hold_collatable(oil)}
        if any(name in collated for name, _ in wanted):
            return None
    have = []
    for name, direction, hashed in zip(model.fields, model.directions, model.hashed):
        if name in equality:
            continue
        if hashed:
            break
        have.append((name, direction))
    if wanted == have[: len(wanted)]:
        return 1
    if wanted == [(name, -d) for name, d in have][: len(wanted)]:
        return -1
    return None


def try_explode(scan: IxScan, desired: Sequence[tuple[str, int]], version: tuple[int, int], collator: Any = None
                ) -> list[IxScan] | None:
    """``explodeForSort``: one scan per combination of leading point intervals, merged by SORT_MERGE."""
    model = scan.model
    if model.is_multikey and version < (8, 1):
        return None
    if model.collator != collator:
        collated = {name for name, oil in zip(model.fields, scan.oils) if oil_may_hold_collatable(oil)}
        if any(name in collated for name, _ in desired):
            return None
    count = 0
    scans = 1
    for oil in scan.oils:
        if not oil or not all(iv.is_point for iv in oil):
            break
        scans *= len(oil)
        count += 1
    if count == 0 or count == len(scan.oils):
        return None
    resulting: list[tuple[str, int]] = []
    for name, direction, paths, hashed in zip(model.fields[count:], model.directions[count:],
                                              model.multikey_paths[count:], model.hashed[count:]):
        if paths or hashed:
            break
        resulting.append((name, direction))
    wanted = list(desired)
    if wanted == resulting[: len(wanted)]:
        direction = 1
    elif wanted == [(n, -d) for n, d in resulting][: len(wanted)]:
        direction = -1
    else:
        return None
    if scans > MAX_SCANS_TO_EXPLODE:
        return None
    children = []
    combos: list[list[Any]] = [[]]
    for oil in scan.oils[:count]:
        combos = [prefix + [iv] for prefix in combos for iv in oil]
    for combo in combos:
        oils = [[iv] for iv in combo] + list(scan.oils[count:])
        children.append(IxScan(model, oils, direction, scan.key_filter))
    return children


def provides_field(root: Stage, path: str) -> bool:
    """``QuerySolutionNode::hasField`` for an unfetched plan: a non-multikey indexed field of every scan."""
    scans = [node for node in root.walk() if isinstance(node, IxScan)]
    return bool(scans) and all(scan.provides_field(path) for scan in scans)


def analyze(access: Stage, shape: QueryShape) -> tuple[Stage, bool]:
    """``analyzeDataAccess``: sort, skip, projection/fetch, limit. Returns the root and blocking-sort flag."""
    root = access
    blocking = False
    if shape.sort:
        root, blocking = _analyze_sort(root, shape)
    if shape.skip:
        root = Skip(root, shape.skip)
    projection = shape.projection
    if projection is not None:
        needs = (not projection.inclusion) or not all(provides_field(root, f) for f in projection.required_fields)
        if not root.fetched and needs:
            root = _insert_fetch(root)
        if projection.is_simple and root.fetched:
            root = ProjectionStage(root, "PROJECTION_SIMPLE", projection)
        elif projection.is_simple and projection.inclusion and _single_scan_leaf(root):
            root = ProjectionStage(root, "PROJECTION_COVERED", projection)
        else:
            root = ProjectionStage(root, "PROJECTION_DEFAULT", projection)
    elif not root.fetched and not shape.is_count:
        root = _insert_fetch(root)
    if shape.limit and not blocking:
        root = Limit(root, shape.limit)
    return _pushdown_projection(root), blocking


def _insert_fetch(root: Stage) -> Stage:
    return Fetch(root, False)


def _single_scan_leaf(root: Stage) -> bool:
    leaves = [node for node in root.walk() if not node.children]
    return len(leaves) == 1 and isinstance(leaves[0], IxScan)


def _analyze_sort(root: Stage, shape: QueryShape) -> tuple[Stage, bool]:
    desired = shape.sort
    scan = scan_under(root)
    if scan is not None:
        direction = scan_direction_for_sort(scan, desired, shape.collator)
        if direction is not None:
            if direction < 0:
                scan.direction = -1
            return root, False
        exploded = try_explode(scan, desired, shape.version, shape.collator)
        if exploded is not None:
            merge = SortMerge(exploded, desired, dedup=scan.model.is_multikey)
            if isinstance(root, Fetch):
                return Fetch(merge, root.has_filter), False
            return merge, False
    elif isinstance(root, (SortMerge,)):
        return root, False
    if not root.fetched and not all(provides_field(root, name) for name, _ in desired):
        root = Fetch(root, False)
    limit = shape.limit + shape.skip if shape.limit else 0
    return Sort(root, desired, limit), True


def _pushdown_projection(root: Stage) -> Stage:
    """``tryPushdownProjectBeneathSort``: PROJECT [SKIP] SORT child -> [SKIP] SORT PROJECT child."""
    if not isinstance(root, ProjectionStage) or root.name == "PROJECTION_COVERED":
        return root
    below = root.children[0]
    skip = None
    if isinstance(below, Skip):
        skip, below = below, below.children[0]
    if not isinstance(below, Sort) or below.limit:
        return root
    if not all(root.keeps_field(name) for name, _ in below.pattern):
        return root
    root.children = [below.children[0]]
    below.children = [root]
    if skip is not None:
        skip.children = [below]
        return skip
    return below


def count_plan(access: Stage, shape: QueryShape, wrap: bool = True) -> Stage:
    """COUNT over the access plan, turned into COUNT_SCAN when one exact range answers it (§8). An aggregation that
    needs no field (``wrap=False``) plans the same way but has no COUNT stage: its pipeline counts."""
    def counted(child: Stage) -> Stage:
        return CountStage(child, shape.skip, shape.limit) if wrap else child

    scan = access if isinstance(access, IxScan) else None
    if scan is not None and scan.key_filter is None:
        if is_single_interval_value_space(scan.oils):
            return counted(CountScan(scan))
        split = _split_null_bounds(scan)
        if split is not None:
            return counted(OrStage([CountScan(s) for s in split]))
    return counted(access)


def _split_null_bounds(scan: IxScan) -> list[IxScan] | None:
    """Before 8.0, ``[undefined, undefined], [null, null]`` is counted by two COUNT_SCANs under OR, but only on an
    index that is not multikey (``boundsHasExactlyOneNullOrNullAndEmptyInterval``; a multikey index would need the
    ``[[], []]`` interval too, which ``{f: null}`` does not produce)."""
    if scan.model.is_multikey:
        return None
    null_pair = [sort_key(UNDEFINED), sort_key(None)]
    for j, oil in enumerate(scan.oils):
        if len(oil) == 2 and all(iv.is_point for iv in oil) and [iv.start_key for iv in oil] == null_pair:
            parts = []
            for value in (UNDEFINED, None):
                oils = list(scan.oils)
                oils[j] = [point(value)]
                if not is_single_interval_value_space(oils):
                    return None
                parts.append(IxScan(scan.model, oils, scan.direction))
            return parts
    return None


# --- plan choice ---


@dataclass
class Trial:
    """A candidate's trial run, kept so the winner resumes instead of restarting (as mongod does)."""

    runtime: Runtime
    iterator: Any
    rows: list[int]
    works_at: list[int]
    docs_at: list[int]
    eof: bool

    @property
    def works(self) -> int:
        return self.runtime.works


def trial(candidate: Candidate, make_runtime: Any, target: int) -> Trial:
    """Work a candidate until it returns ``target`` results or reaches EOF."""
    rt: Runtime = make_runtime()
    iterator = candidate.root.run(rt)
    state = Trial(rt, iterator, [], [], [], False)
    for rid in iterator:
        state.rows.append(rid)
        state.works_at.append(rt.works)
        state.docs_at.append(rt.docs)
        if len(state.rows) >= target:
            return state
    state.eof = True
    return state


def choose(candidates: Sequence[Candidate], make_runtime: Any, shape: QueryShape
           ) -> tuple[int, list[dict[str, Any]], Trial]:
    """The multi-planner's pick (``plan_ranker::pickBestPlan``) and a summary of every trial.

    All candidates are worked round-robin until one returns the first batch or reaches EOF; each is
    then scored ``1 + advanced/works`` plus small bonuses for no FETCH and no SORT, plus 1 if it reached
    EOF; exact ties go to the plan that examined fewest documents, then to the first enumerated.
    """
    target = TRIAL_RESULTS
    if shape.limit and not shape.is_count:
        target = min(target, shape.limit)
    trials = [trial(c, make_runtime, target) for c in candidates]
    horizon = max(1, min(t.works for t in trials))
    scores: list[float] = []
    advanced_list: list[int] = []
    docs_examined: list[int] = []
    for candidate, state in zip(candidates, trials):
        works, eof, docs = state.works, state.eof, state.docs_at
        advanced = sum(1 for w in state.works_at if w <= horizon)
        names = {node.name for node in candidate.root.walk()}
        epsilon = min(1.0 / (10 * horizon), 1e-4)
        score = 1 + advanced / horizon
        score += epsilon * (("FETCH" not in names) + ("SORT" not in names))
        if eof and works <= horizon:
            score += 1
        scores.append(score)
        advanced_list.append(advanced)
        docs_examined.append(docs[advanced - 1] if advanced else state.runtime.docs)
    top = max(scores)
    tied = [i for i, score in enumerate(scores) if score == top]
    if len(tied) > 1:
        fewest = min(docs_examined[i] for i in tied)
        tied = [i for i in tied if docs_examined[i] == fewest]
    best = tied[0]
    summary = []
    for index, candidate in enumerate(candidates):
        summary.append({
            "plan": candidate.label,
            "trialWorks": min(trials[index].works, horizon),
            "advancedInTrial": advanced_list[index],
            "reachedEOF": trials[index].eof and trials[index].works <= horizon,
            "score": round(scores[index], 6),
            "won": index == best,
        })
    for index, state in enumerate(trials):
        if index != best and hasattr(state.iterator, "close"):
            state.iterator.close()
    return best, summary, trials[best]
