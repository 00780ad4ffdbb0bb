"""One what-if ``explain``: the request as the planner sees it, its candidate plans, the winner and its counters.

:func:`~idxadvisor.whatif.dispatch.explain_request` runs a ``find``, ``count``, ``distinct`` or ``aggregate`` (planner-semantics.md; issue 11
adds partial, hashed and collated indexes, collations, hints by name, ``min``/``max``, ``distinct`` and the
pipeline prefix the classic planner runs). :class:`Explainer` does the work: which indexes may serve the query
(a partial index only for a query that implies its filter, an index in another collation only for predicates
without strings), the candidate plans (index scans, the rooted ``$or``, whole-index sorts), the multi-planner's
trial, execution over the sample and the explain-style report.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from bson import MaxKey, MinKey, ObjectId, Regex

from idxadvisor.indexes.model import IndexSpec
from idxadvisor.whatif.bounds import ALL_VALUES, point
from idxadvisor.whatif.bsonorder import is_number, sort_key
from idxadvisor.whatif.collation import collator_for
from idxadvisor.whatif.keys import IndexModel
from idxadvisor.whatif.matching import filter_applies
from idxadvisor.whatif.partial import implies, parse_partial_filter
from idxadvisor.whatif.plan import (
    Candidate,
    IndexPlanner,
    QueryShape,
    Trial,
    analyze,
    choose,
    count_plan,
    scan_direction_for_sort,
    scan_under,
)
from idxadvisor.whatif.query import (
    ElemMatchObject,
    Leaf,
    Node,
    OrNode,
    RegexSpec,
    Unsupported,
    is_positional,
    iter_leaves,
    matcher_filter,
    parse_query,
)
from idxadvisor.whatif.request import WhatIfQuery, json_safe
from idxadvisor.whatif.scan import start_end_keys
from idxadvisor.whatif.source import Sample
from idxadvisor.whatif.stages import (
    CollScan,
    CountScan,
    CountStage,
    DistinctScan,
    Express,
    FastCount,
    Fetch,
    IxScan,
    Limit,
    OrStage,
    ProjectionStage,
    RangeScan,
    Runtime,
    Skip,
    Sort,
    SortMerge,
    Stage,
    render_key_pattern_plain,
)

NATURAL = "$natural"
_SPECIAL_REASON = {
    "text": "text indexes", "2d": "2d indexes", "2dsphere": "2dsphere indexes", "geoHaystack": "geoHaystack indexes",
}
NO_QUERY_EXECUTION_PLANS = (291, "NoQueryExecutionPlans")


class ServerError(Exception):
    """A request the server refuses; the report is ``{"error": {code, codeName, message}}``."""

    def __init__(self, code: int, code_name: str, message: str) -> None:
        super().__init__(message)
        self.error = {"code": code, "codeName": code_name, "message": message}


class BuildError(Exception):
    """An index that cannot be built on the sample (parallel arrays, duplicate keys, arrays under a hashed field)."""

    def __init__(self, spec: IndexSpec, error: dict[str, Any]) -> None:
        super().__init__(error.get("message", "index build failed"))
        self.spec = spec
        self.error = error


class Explainer:
    """One ``explain`` call: guards, candidate plans, plan choice, execution and the report."""

    def __init__(self, estimator: Sample, query: WhatIfQuery, specs: list[IndexSpec],
                 hint: IndexSpec | str | None, *, count_like: bool = False, strict_distinct: bool = False,
                 group_fields: Sequence[str] = ()) -> None:
        self.base = estimator.base
        self.query = query
        self.specs = specs
        self.hint = hint if isinstance(hint, IndexSpec) else None
        self.natural = -1 if hint == f"-{NATURAL}" else (1 if hint == NATURAL else 0)
        self.version = estimator.server_version
        self.collator = collator_for(query.collation)
        self.count_like = count_like   # an aggregation that needs no field: plans as a count, without a COUNT stage
        self.strict_distinct = strict_distinct   # a $group: one result per value, or no DISTINCT_SCAN
        self.group_fields = tuple(group_fields)  # the fields a $group's $first accumulators read
        if count_like and (query.sort or query.limit):
            raise Unsupported("a counting aggregation with $sort/$limit before the count is not modelled")
        limit = abs(query.limit) if query.limit else 0
        is_count = query.command == "count" or count_like
        raw_filter = self._collated(query.filter)
        sort = None if is_count else query.sort
        projection = None if is_count else self.distinct_projection() or query.projection
        self.raw_filter = raw_filter
        self.parsed = parse_query(raw_filter, sort, projection, self.version)
        self.shape = QueryShape("count" if is_count else "find", self.parsed.sort, self.parsed.projection, limit,
                                query.skip or 0, self.version, self.collator)
        fields = set(self.parsed.paths) | {name for name, _ in self.parsed.sort}
        if self.parsed.projection is not None:
            fields |= set(self.parsed.projection.fields)
        self.est = estimator.view(self.collator, fields)
        self.notes: list[str] = []
        self.matched: list[bool] | None = None
        self.match_problem: str | None = None
        self._partial_filters: dict[int, list[Node]] = {}

    @property
    def is_distinct(self) -> bool:
        return self.query.command == "distinct"

    def distinct_projection(self) -> dict[str, int] | None:
        """The projection a distinct plans with: its key, and for a ``$group`` the fields its ``$first``
        accumulators read (``_id`` excluded unless it is one of them)."""
        if not self.is_distinct:
            return None
        fields = [self.query.key or "", *self.group_fields]
        projection = {name: 1 for name in fields}
        if "_id" not in projection:
            projection = {"_id": 0, **projection}
        return projection

    def _collated(self, flt: Mapping[str, Any]) -> Mapping[str, Any]:
        """The filter with its strings as collation keys (regexes ignore the collation: not modelled with one)."""
        if self.collator is None:
            return flt
        if _has_regex(flt):
            raise Unsupported("a regex in a query with a collation (a regex ignores the collation; the model "
                              "compares collation keys)")
        return self.collator.transform(dict(flt))

    # --- setup ---

    def usable_models(self) -> list[IndexModel]:
        paths = set(self.parsed.paths) | {name for name, _ in self.parsed.sort}
        if self.parsed.projection is not None:
            paths |= set(self.parsed.projection.fields)
        models: list[IndexModel] = []
        for spec in self.specs:
            touches = spec is self.hint or any(_related(name.replace(".$**", "").replace("$**", ""), p)
                                               for name in spec.fields for p in paths) or "$**" in "".join(spec.fields)
            try:
                reason = self._unmodelled_reason(spec)
                if reason is not None:
                    raise Unsupported(f"{reason} are not modelled")
                if spec.hidden:
                    if spec is self.hint:
                        raise Unsupported("a hidden index cannot be hinted")
                    continue
                built = self._models_of(spec, paths)
            except Unsupported as exc:
                if touches:
                    raise Unsupported(f"index {spec.name}: {exc}") from None
                self.notes.append(f"index {spec.name} ignored: {exc}")
                continue
            for model in built:
                if model.build_error is not None:
                    if spec.is_id_index:
                        raise Unsupported("the sample holds duplicate _id values (it cannot be one collection)")
                    raise BuildError(spec, model.build_error)
                models.append(model)
        return models

    def _models_of(self, spec: IndexSpec, paths: set[str]) -> list[IndexModel]:
        """The index over the sample; a wildcard index as one expansion per queried field it holds."""
        if any("$**" in name for name in spec.fields):
            if spec.partial_filter is not None:
                self._partial_filters[id(spec)] = parse_partial_filter(spec.partial_filter, self.version)
            expansions = [self.base.wildcard_model(spec, path) for path in sorted(paths)
                          if self.base.wildcard_holds(spec, path)]
            return [model for model in expansions if model is not None]
        model = self.base.model(spec)
        if spec.partial_filter is not None:
            self._partial_filters[id(spec)] = parse_partial_filter(
                _collated_filter(spec.partial_filter, model.collator), self.version)
        return [model]

    def _unmodelled_reason(self, spec: IndexSpec) -> str | None:
        for _, direction in spec.key:
            if isinstance(direction, str) and direction != "hashed":
                return _SPECIAL_REASON.get(direction, f"{direction} indexes")
        if any(part.isdigit() for name in spec.fields for part in name.split(".")):
            return "positional index paths"
        return None

    def partial_allows(self, model: IndexModel, nodes: Sequence[Node]) -> bool:
        """A partial index may serve only a query (or ``$or`` branch) that implies its filter."""
        filter_nodes = self._partial_filters.get(id(model.catalog_spec))
        if filter_nodes is None:
            return True
        return implies(list(nodes), filter_nodes, strings=model.collator == self.collator)

    def guard_data(self) -> None:
        """Reject data on which mongomock and MongoDB disagree for this query."""
        for node in self.parsed.conjuncts:
            for path in _elem_match_paths(node):
                if self.est.column(path).nested_arrays:
                    raise Unsupported(f"{path}: an object $elemMatch over arrays nested in arrays (mongomock "
                                      "matches inside the inner arrays, MongoDB does not)")
        guard_leaves(self.est, iter_leaves(self.parsed.conjuncts))
        array_sort_fields = 0
        for path, _ in self.parsed.sort:
            column = self.est.column(path)  # an array's sort key is its least (or greatest) index key, nested
            if column.complex_keys:          # arrays included as values (SortKeyGenerator uses the key generator)
                array_sort_fields += 1
        if array_sort_fields > 1:
            raise Unsupported("sorting on several array fields (parallel arrays in the sort key)")

    def compute_matches(self) -> None:
        result = self.est.matches(self.parsed, self.raw_filter)
        if isinstance(result, str):
            self.match_problem = result
        else:
            self.matched = result

    # --- main ---

    def run(self) -> dict[str, Any]:
        models = self.usable_models()
        self.guard_data()
        self.compute_matches()
        if self.query.min is not None or self.query.max is not None:
            return self.report(self.min_max_plan(models), [], [])
        if self.natural:
            return self.report(self.finish(CollScan(not self.parsed.is_empty, self.natural), "COLLSCAN", []), [], [])
        if self.shape.is_count and not self.count_like and self.parsed.is_empty and self.hint is None:
            return self.report(Candidate(CountStage(FastCount(), self.shape.skip, self.shape.limit),
                                         "RECORD_STORE_FAST_COUNT", needs_matcher=False), [], [])
        if self.is_distinct:
            distinct = self.distinct_plan(models)
            if distinct is not None:
                return self.report(distinct, [], [])
        express = self.express(models)
        if express is not None:
            return self.report(express, [], [])
        candidates = self.candidates(models)
        return self.report(*self.pick(candidates))

    def run_group(self) -> dict[str, Any]:
        """A ``$group`` on the distinct key: a DISTINCT_SCAN, or unsupported (the slot-based engine runs it)."""
        models = self.usable_models()
        self.guard_data()
        self.compute_matches()
        distinct = self.distinct_plan(models)
        if distinct is not None:
            return self.report(distinct, [], [])
        if self.natural:
            self.notes.append("the $group runs after this collection scan (in the slot-based engine on 7.0+ defaults)")
            return self.report(self.finish(CollScan(not self.parsed.is_empty, self.natural), "COLLSCAN", []), [], [])
        raise Unsupported(f"no index gives a DISTINCT_SCAN for this $group on {self.query.key}: 7.0+ defaults "
                          "run the $group in the slot-based engine (not modelled)")

    def pick(self, candidates: list[Candidate]) -> tuple[Candidate, list[Candidate], list[dict[str, Any]],
                                                          Trial | None]:
        """The multi-planner's winner among the candidates (a count wraps it afterwards, §8)."""
        candidates = self.usable_without_matcher(candidates)
        summary: list[dict[str, Any]] = []
        winner = candidates[0]
        resumed: Trial | None = None
        if len(candidates) > 1:
            best, summary, resumed = choose(candidates, self.runtime, self.shape)
            winner = candidates[best]
        if self.shape.is_count:
            winner = self.as_count(winner)
            resumed = None
        return winner, candidates, summary, resumed

    def usable_without_matcher(self, candidates: list[Candidate]) -> list[Candidate]:
        if self.matched is not None:
            return candidates
        exact = [c for c in candidates if not c.needs_matcher]
        if not exact:
            raise Unsupported(self.match_problem or "the matcher is unavailable")
        return exact

    # --- min/max (QueryPlanner::plan, "Deal with the .min() and .max() query options") ---

    def min_max_plan(self, models: list[IndexModel]) -> Candidate:
        minimum, maximum = self.query.min or {}, self.query.max or {}
        if minimum and maximum and list(minimum) != list(maximum):
            raise ServerError(51176, "Location51176", "min() and max() must have the same field names")
        if self.natural:
            raise ServerError(*NO_QUERY_EXECUTION_PLANS, "min and max are incompatible with $natural")
        if self.hint is None:
            raise ServerError(51173, "Location51173",
                              "When using min()/max() a hint of which index to use must be provided")
        model = next((m for m in models if m.catalog_spec is self.hint), None)
        if model is None:
            raise Unsupported(f"min/max with index {self.hint.name}, which the model does not build")
        if any(model.hashed):
            raise Unsupported("min/max on a hashed index is not modelled")
        for bound in (minimum, maximum):
            if bound and not self._min_max_compatible(bound, model):
                raise ServerError(51174, "Location51174", "The index chosen is not compatible with min/max")
        start = self._finish_bound(model, minimum, low=True)
        end = self._finish_bound(model, maximum, low=False)
        if _compare_in_index_order(start, end, model.directions) >= 0:
            raise ServerError(51175, "Location51175", "The value provided for min() does not come before the "
                                                      "value provided for max() in the hinted index")
        access: Stage = RangeScan(model, start, end)
        if not self.parsed.is_empty:
            access = Fetch(access, True)
        self.notes.append("min/max: the hinted index is scanned from min (inclusive) to max (exclusive) in index "
                          "order; the filter is applied to the fetched documents")
        candidate = self.finish(access, f"IXSCAN {render_key_pattern_plain(model.spec.key)}", [model])
        candidate.incomplete = True  # the key range leaves out matching documents by design
        return candidate

    def _min_max_compatible(self, bound: Mapping[str, Any], model: IndexModel) -> bool:
        """``indexCompatibleMaxMin``: the bound names the index's fields in order; strings only when the index's
        collation is the query's."""
        if list(bound) != list(model.fields):
            return False
        has_strings = any(isinstance(v, (str, dict, list)) for v in bound.values())
        return not has_strings or model.collator == self.collator

    def _finish_bound(self, model: IndexModel, bound: Mapping[str, Any], low: bool) -> tuple[Any, ...]:
        """``finishMinObj``/``finishMaxObj``: a missing bound is the index's first (last) key; field names go."""
        if bound:
            values = [bound[name] for name in model.fields]
            return tuple(model.collator.transform(v) if model.collator is not None else v for v in values)
        first, last = MinKey(), MaxKey()
        return tuple((first if (d > 0) == low else last) for d in model.directions)

    # --- express / IDHACK (§9) ---

    def express(self, models: list[IndexModel]) -> Candidate | None:
        shape = self.shape
        if self.hint is not None or shape.is_count or shape.sort or shape.skip or self.is_distinct:
            return None
        if len(self.parsed.conjuncts) != 1:
            return None
        leaf = self.parsed.conjuncts[0]
        if not isinstance(leaf, Leaf) or leaf.op != "eq" or leaf.context is not None:
            return None
        value = leaf.value
        if value is None or isinstance(value, (list, RegexSpec)):
            return None
        if leaf.path == "_id":
            if not _is_simple_id_query(self.query.filter):
                if self.version >= (8, 0) and shape.projection is None:
                    raise Unsupported("an _id equality written through an operator (8.0 may take the indexed-"
                                      "equality express path on the _id index; not pinned down)")
                return None  # isSimpleIdQuery looks at the filter as written: planned normally
            if shape.projection is not None:
                raise Unsupported("_id lookups with a projection (express/IDHACK projection handling is not modelled)")
            if self.collator is not None and isinstance(value, (str, dict)):
                return None  # the _id index has the simple collation: no fast path, planned normally
            name = "EXPRESS_IXSCAN" if self.version >= (8, 0) else "IDHACK"
            model = models[0]
        else:
            if self.version < (8, 0) or shape.projection is not None:
                return None
            eligible = [m for m in models[1:] if self._express_eligible(m, leaf)]
            if not eligible:
                return None
            model = min(eligible, key=lambda m: len(m.fields))
            name = "EXPRESS_IXSCAN"
        rid = self.first_equal(model, value)
        if rid is None:
            raise Unsupported(f"{name} for a key that is not in the sample (its counters are not pinned down)")
        if self.matched is not None and not self.matched[rid]:
            raise Unsupported("express lookup found a document the matcher rejects")
        return Candidate(Express(name, model, rid), f"{name} {render_key_pattern_plain(model.spec.key)}",
                         [model], needs_matcher=False)

    def _express_eligible(self, model: IndexModel, leaf: Leaf) -> bool:
        """``getIndexForExpressEquality`` (8.0): a plain B-tree index led by the field, in the query's collation
        when the value is a string, a partial index only if the query implies its filter; at most one result
        (``limit: 1``, or a unique single-field index)."""
        if model.fields[0] != leaf.path or any(model.hashed):
            return False
        if isinstance(leaf.value, (str, dict)) and model.collator != self.collator:
            return False
        if not self.partial_allows(model, self.parsed.conjuncts):
            return False
        return self.shape.limit == 1 or (model.spec.unique and len(model.fields) == 1)

    def first_equal(self, model: IndexModel, value: Any) -> int | None:
        oils = [[point(value)]] + [[ALL_VALUES] for _ in model.fields[1:]]
        scan = IxScan(model, oils, 1)
        rt = self.runtime()
        return next(iter(scan.run(rt)), None)

    # --- candidates ---

    def candidates(self, models: list[IndexModel]) -> list[Candidate]:
        conjuncts = self.parsed.conjuncts
        if len(conjuncts) == 1 and isinstance(conjuncts[0], OrNode):
            return [self.or_plan(conjuncts[0], models)]
        self.check_contained_or(models)
        pool = [m for m in models if (self.hint is None or m.catalog_spec is self.hint) and self.partial_allows(m, conjuncts)]
        candidates: list[Candidate] = []
        for model in pool:
            candidates.extend(self.index_candidates(model, conjuncts))
        if self.hint is not None and not candidates:
            candidates.append(self.hinted_whole_index(models))
        if (self.hint is None and self.shape.sort and not self.shape.is_count
                and not any(not c.blocking_sort for c in candidates)):
            candidates.extend(self.sort_providing(models))
        if not candidates:
            candidates.append(self.finish(CollScan(bool(conjuncts)), "COLLSCAN", []))
        return candidates

    def hinted_whole_index(self, models: list[IndexModel]) -> Candidate:
        """A hinted index the query cannot use is scanned whole (``buildWholeIXSoln``); a partial index then returns
        only the documents it holds (SERVER-26413); a wildcard index is refused."""
        assert self.hint is not None
        if any("$**" in name for name in self.hint.fields):
            raise ServerError(*NO_QUERY_EXECUTION_PLANS,
                              "$hint: refusing to build whole-index solution, because it's a wildcard index")
        model = next(m for m in models if m.catalog_spec is self.hint)
        candidate = self.whole_index(model, 1)
        if model.members is not None and not self.partial_allows(model, self.parsed.conjuncts):
            candidate.incomplete = True
            self.notes.append(f"{model.spec.name}: the query does not imply the partial filter; the hinted index is "
                              "scanned whole and can miss matching documents (SERVER-26413)")
        return candidate

    def index_candidates(self, model: IndexModel, conjuncts: list[Any]) -> list[Candidate]:
        planner = IndexPlanner(model, self.shape)
        out = []
        for chosen in planner.assignments(conjuncts):
            access, _ = planner.access_plan(conjuncts, chosen)
            label = f"IXSCAN {render_key_pattern_plain(model.spec.key)}"
            out.append(self.finish(access, label, [model]))
        if len(out) > 1:
            self.notes.append(f"{model.spec.name}: multikey bounds cannot be intersected without $elemMatch; "
                              f"{len(out)} alternative bounds were tried (planner-semantics §13)")
        return out

    def whole_index(self, model: IndexModel, direction: int) -> Candidate:
        planner = IndexPlanner(model, self.shape)
        access = planner.whole_index_plan(self.parsed.conjuncts, direction)
        candidate = self.finish(access, f"IXSCAN {render_key_pattern_plain(model.spec.key)} (whole index)", [model])
        candidate.incomplete = model.spec.sparse
        return candidate

    def sort_providing(self, models: list[IndexModel]) -> list[Candidate]:
        """Whole-index scans that give the sort: not sparse, in the query's collation, a partial index only when
        the query implies its filter; the order ends at the first hashed field (``getSortPattern``)."""
        out = []
        wanted = list(self.shape.sort)
        for model in models:
            if model.spec.sparse or model.collator != self.collator:
                continue
            if not self.partial_allows(model, self.parsed.conjuncts):
                continue
            pattern = []
            for name, direction, hashed in zip(model.fields, model.directions, model.hashed):
                if hashed:
                    break
                pattern.append((name, direction))
            if wanted == pattern[: len(wanted)]:
                out.append(self.whole_index(model, 1))
            if wanted == [(n, -d) for n, d in pattern][: len(wanted)]:
                out.append(self.whole_index(model, -1))
        return out

    def check_contained_or(self, models: list[IndexModel]) -> None:
        indexed = {name for m in models for name in m.fields}
        for node in self.parsed.conjuncts:
            if isinstance(node, OrNode):
                paths = {leaf.path for leaf in iter_leaves([node])}
                if paths & indexed:
                    raise Unsupported("an $or next to other predicates whose branches could use an index "
                                      "(indexed $or plans under AND are not modelled)")

    def or_plan(self, node: OrNode, models: list[IndexModel]) -> Candidate:
        """A rooted ``$or``: each branch planned on its own (subplanning), then OR or SORT_MERGE (§5); a partial
        index serves the branches that imply its filter."""
        pool = [m for m in models if self.hint is None or m.catalog_spec is self.hint]
        branch_shape = QueryShape("find", (), None, 0, 0, self.version, self.collator)
        children: list[Stage] = []
        used: list[IndexModel] = []
        for branch in node.branches:
            match = self.branch_matches(branch)
            options: list[Candidate] = []
            for model in pool:
                if not self.partial_allows(model, branch):
                    continue
                planner = IndexPlanner(model, branch_shape)
                for chosen in planner.assignments(branch):
                    access, _ = planner.access_plan(branch, chosen)
                    _retarget_fetch(access, match)
                    options.append(Candidate(access, f"IXSCAN {render_key_pattern_plain(model.spec.key)}", [model]))
            if not options:
                if self.hint is not None:
                    return self.hinted_whole_index(models)
                return self.finish(CollScan(True), "COLLSCAN", [])
            best = 0
            if len(options) > 1:
                best, _, _ = choose(options, self.runtime, branch_shape)
            children.append(options[best].root)
            used.extend(options[best].models)
        root: Stage
        if len(children) == 1:
            root = children[0]
        elif self.shape.sort and all(_branch_sort_direction(c, self.shape) is not None for c in children):
            for child in children:
                scan = scan_under(child)
                if scan is not None and _branch_sort_direction(child, self.shape) == -1:
                    scan.direction = -1
            root = SortMerge(children, self.shape.sort, dedup=True)
        else:
            root = OrStage(children)
        label = "OR(" + ", ".join(f"IXSCAN {render_key_pattern_plain(m.spec.key)}" for m in used) + ")"
        return self.finish(root, label, used)

    def branch_matches(self, branch: list[Any]) -> list[bool] | None:
        if self.matched is None:
            return None
        result = self.est.match_all(matcher_filter(branch))
        return result if isinstance(result, list) else None

    def finish(self, access: Stage, label: str, models: list[IndexModel]) -> Candidate:
        if self.shape.is_count:
            root, blocking = access, False
        else:
            root, blocking = analyze(access, self.shape)
        needs = any((isinstance(n, (Fetch, CollScan)) and getattr(n, "has_filter", False))
                    or (isinstance(n, IxScan) and n.key_filter is not None) for n in root.walk())
        return Candidate(root, label, models, blocking_sort=blocking, needs_matcher=needs)

    def as_count(self, candidate: Candidate) -> Candidate:
        root = count_plan(candidate.root, self.shape, wrap=not self.count_like)
        return Candidate(root, candidate.label, candidate.models, incomplete=candidate.incomplete,
                         needs_matcher=candidate.needs_matcher)

    # --- distinct (getExecutorDistinct) ---

    def distinct_plan(self, models: list[IndexModel]) -> Candidate | None:
        """A DISTINCT_SCAN when an index can give the key's values (else ``None``: the distinct runs as a query
        projecting the key, planned as any other)."""
        if self.natural:
            return None
        key = self.query.key or ""
        with_key = [m for m in models if key in m.fields]
        if any(m.wildcard is not None for m in with_key):
            raise Unsupported(f"distinct on {key} with a wildcard index that holds it is not modelled")
        if any(m.multikey_paths[m.fields.index(key)] for m in with_key):
            raise Unsupported(f"distinct on {key}, which an index holds as multikey (not modelled)")
        if self.parsed.is_empty and not self.shape.sort:
            simple = self._simple_distinct_index(with_key, key)
            if simple is None:
                return None
            scan = IxScan(simple, [[ALL_VALUES] for _ in simple.fields], 1)
            root: Stage = DistinctScan(scan, 0)
            root = Fetch(root, False) if simple.collator is not None else root
            return self._distinct_candidate(root, simple)
        pool = [m for m in with_key if (self.hint is None or m.catalog_spec is self.hint)
                and self.partial_allows(m, self.parsed.conjuncts)]
        candidates = [c for model in pool for c in self.index_candidates(model, self.parsed.conjuncts)]
        if self.shape.sort and not any(not c.blocking_sort for c in candidates):
            candidates.extend(self.sort_providing(pool))
        for candidate in candidates:
            converted = self._to_distinct_scan(candidate.root, key, self.strict_distinct)
            if converted is not None:
                return self._distinct_candidate(converted, candidate.models[0])
        return None

    def _simple_distinct_index(self, models: list[IndexModel], key: str) -> IndexModel | None:
        """``getDistinctNodeIndex``: in the query's collation, not special or partial, led by the key; fewest
        fields wins."""
        eligible = [m for m in models if m.fields[0] == key and m.collator == self.collator and not any(m.hashed)
                    and m.members is None and (self.hint is None or m.catalog_spec is self.hint)]
        return min(eligible, key=lambda m: len(m.fields)) if eligible else None

    def _to_distinct_scan(self, root: Stage, key: str, strict: bool) -> Stage | None:
        """``turnIxscanIntoDistinctIxscan``: PROJECTION over IXSCAN, or over FETCH without a filter over IXSCAN, whose
        scan has no key filter: the scan becomes a DISTINCT_SCAN on the key's field (``strict``: only when every
        field before it has one point interval, so that each value comes once)."""
        if not isinstance(root, ProjectionStage):
            return None
        child = root.children[0]
        fetch = child if isinstance(child, Fetch) else None
        scan = child.children[0] if fetch is not None else child
        if (fetch is not None and fetch.has_filter) or not isinstance(scan, IxScan) or scan.key_filter is not None:
            return None
        field_no = scan.model.fields.index(key)
        if strict and not all(len(oil) == 1 and oil[0].is_point for oil in scan.oils[:field_no]):
            return None
        distinct = DistinctScan(scan, field_no)
        if fetch is not None:
            return Fetch(distinct, False)
        root.children = [distinct]
        return root

    def _distinct_candidate(self, root: Stage, model: IndexModel) -> Candidate:
        if not isinstance(root, (ProjectionStage, Fetch)):
            root = ProjectionStage(root, "PROJECTION_COVERED", self.parsed.projection)  # type: ignore[arg-type]
        return Candidate(root, f"DISTINCT_SCAN {render_key_pattern_plain(model.spec.key)}", [model],
                         needs_matcher=False, incomplete=True)

    # --- execution ---

    def runtime(self) -> Runtime:
        return Runtime(self.matched, self.est.documents, self._rank_function, self._sort_ranks, self._key_filter)

    def _rank_function(self, path: str, direction: int) -> Any:
        column = self.est.column(path)
        if column.complex_keys:
            return lambda rid: self._sort_rank(rid, path, direction)
        rank = column.ordering.rank
        keys = column.sort_keys
        return lambda rid: rank[keys[rid]] * direction

    def _sort_ranks(self, rows: list[int], path: str, direction: int) -> list[int]:
        column = self.est.column(path)
        if column.complex_keys:
            return [self._sort_rank(rid, path, direction) for rid in rows]
        rank = column.ordering.rank
        keys = column.sort_keys
        return [rank[keys[rid]] * direction for rid in rows]

    def _sort_rank(self, rid: int, path: str, direction: int) -> int:
        """A document's sort key for one field as a signed rank: arrays sort by their least element
        ascending, their greatest descending; an empty array (undefined) before null."""
        column = self.est.column(path)
        rank = column.ordering.rank
        keys = column.complex_keys.get(rid)
        if keys is None:
            return rank[column.sort_keys[rid]] * direction
        options = [key[0] for key in keys]
        return rank[min(options) if direction > 0 else max(options)] * direction

    def _key_filter(self, model: IndexModel, flt: Any, rid: int) -> bool:
        doc: dict[str, Any] = {}
        for name, value in zip(model.fields, model.doc_values(rid)):
            target = doc
            parts = name.split(".")
            for part in parts[:-1]:
                target = target.setdefault(part, {})
            target[parts[-1]] = value
        try:
            return bool(filter_applies(flt, doc))
        except (NotImplementedError, TypeError) as exc:
            raise Unsupported(f"mongomock cannot evaluate an index-key filter ({exc})") from None

    # --- report ---

    def report(self, winner: Candidate, candidates: list[Candidate], summary: list[dict[str, Any]],
               resumed: Trial | None = None) -> dict[str, Any]:
        root = winner.root
        if resumed is not None:
            rt = resumed.runtime
            results = resumed.rows + list(resumed.iterator)
        else:
            rt = self.runtime()
            results = list(root.run(rt))
        counted = root.counted if isinstance(root, CountStage) else None
        self.check_consistency(winner, results, counted)
        out: dict[str, Any] = {}
        if counted is not None:
            out["nCounted"] = counted
            out["nReturned"] = 0
        else:
            out["nReturned"] = len(results)
        out["totalKeysExamined"] = rt.keys
        out["totalDocsExamined"] = rt.docs
        out["stages"] = root.chain()
        out["planSummary"] = _plan_summary(root)
        sort_node = next((n for n in root.walk() if isinstance(n, Sort)), None)
        out["blockingSort"] = sort_node is not None
        uses_index = any(isinstance(n, (IxScan, CountScan, DistinctScan)) for n in root.walk())
        out["covered"] = uses_index and not any(isinstance(n, (Fetch, CollScan, Express)) for n in root.walk())
        out.update(_index_details(root, rt))
        out.update(_stage_details(root, sort_node))
        if counted is None and len(results) <= 1000:
            out["returnedIds"] = [json_safe(self.base.documents[rid]["_id"]) for rid in results]
        out["plan"] = root.describe()
        out["executionEngine"] = "classic"
        if self.collator is not None:
            out["collation"] = self.collator.spec
        if summary:
            out["candidates"] = summary
        if self.notes:
            out["notes"] = list(dict.fromkeys(self.notes))
        return out

    def check_consistency(self, winner: Candidate, results: list[int], counted: int | None) -> None:
        """The plan's answer must equal the matcher's; otherwise the model is wrong for this case."""
        if self.matched is None:
            return
        if isinstance(winner.root, CountStage) and winner.root.children and isinstance(
                winner.root.children[0], FastCount):
            counted_expected = len(self.matched)
            got = counted
            expected = _windowed(counted_expected, self.shape.skip, self.shape.limit)
            if got != expected:
                raise Unsupported("internal consistency check failed (fast count)")
            return
        total = sum(self.matched)
        if counted is not None:
            expected = _windowed(total, self.shape.skip, self.shape.limit)
            if counted != expected and not winner.incomplete:
                raise Unsupported("internal consistency check failed: the modelled count differs from the matcher")
            return
        if any(not self.matched[rid] for rid in results):
            raise Unsupported("internal consistency check failed: the plan returned a non-matching document")
        if len(set(results)) != len(results):
            raise Unsupported("internal consistency check failed: a document was returned twice")
        if not winner.incomplete and len(results) != _windowed(total, self.shape.skip, self.shape.limit):
            raise Unsupported("internal consistency check failed: the plan's bounds missed matching documents")




def _windowed(total: int, skip: int, limit: int) -> int:
    remaining = max(0, total - skip)
    return min(remaining, limit) if limit else remaining


def _is_simple_id_query(flt: Mapping[str, Any]) -> bool:
    """``CanonicalQuery::isSimpleIdQuery`` on the filter as written: only ``_id``, and not through an operator
    (``{_id: {$eq: 5}}`` or ``{_id: {$in: [5]}}`` are planned normally)."""
    if list(flt) != ["_id"]:
        return False
    value = flt["_id"]
    return not (isinstance(value, Mapping) and any(str(key).startswith("$") for key in value))


def _related(a: str, b: str) -> bool:
    return a == b or a.startswith(b + ".") or b.startswith(a + ".")


def _elem_match_paths(node: Any) -> list[str]:
    """The paths an object ``$elemMatch`` reads (nested arrays are modelled elsewhere: keys, bounds and the matcher
    agree with MongoDB on one level of array traversal, and a value ``$elemMatch`` compares an inner array as one
    value (``matching``), but mongomock looks into an inner array for an object ``$elemMatch``)."""
    if isinstance(node, ElemMatchObject):
        return [node.path] + [c.path for c in node.children]
    if isinstance(node, OrNode):
        return [p for branch in node.branches for n in branch for p in _elem_match_paths(n)]
    return []


def _operands(leaf: Leaf) -> list[Any]:
    if leaf.op in ("eq", "ne", "gt", "gte", "lt", "lte"):
        return [leaf.value]
    if leaf.op in ("in", "nin"):
        return list(leaf.value)
    if leaf.op == "not":
        inner, value = leaf.value
        return list(value) if inner == "in" else [value]
    return []


def _retarget_fetch(root: Stage, match: list[bool] | None) -> None:
    for node in root.walk():
        if isinstance(node, Fetch) and node.has_filter:
            node.matched_override = match


def _branch_sort_direction(root: Stage, shape: QueryShape) -> int | None:
    scan = scan_under(root)
    if scan is None:
        return None
    return scan_direction_for_sort(scan, shape.sort, shape.collator)


def _plan_summary(root: Stage) -> str:
    parts: list[str] = []
    for node in root.walk():
        if isinstance(node, IxScan):
            text = f"IXSCAN {render_key_pattern_plain(node.model.spec.key)}"
        elif isinstance(node, (CountScan, DistinctScan)):
            text = f"{node.name} {render_key_pattern_plain(node.model.spec.key)}"
        elif isinstance(node, Express):
            text = "IDHACK" if node.name == "IDHACK" else f"{node.name} {render_key_pattern_plain(node.model.spec.key)}"
        elif isinstance(node, (CollScan, FastCount)):
            text = node.name
        else:
            continue
        if not parts or parts[-1] != text:
            parts.append(text)
    return ", ".join(parts)


def _scan_report(node: Stage, rt: Runtime) -> dict[str, Any]:
    out: dict[str, Any] = {"stage": node.name}
    model = getattr(node, "model", None)
    if model is not None:
        out["indexName"] = model.spec.name
        out["keyPattern"] = model.spec.key_document()
    if isinstance(node, IxScan) and not isinstance(node, RangeScan):
        out["indexBounds"] = node.explain_bounds()
    elif isinstance(node, (CountScan, DistinctScan)):
        out["indexBounds"] = node.scan.explain_bounds()
    out["keysExamined"] = rt.scan_keys.get(id(node), 0)
    return out




def guard_leaves(estimator: Sample, leaves: Sequence[Leaf]) -> None:
    """Reject predicates whose values in the sample mongomock and MongoDB compare differently."""
    nullish_ops = ("ne", "nin", "not", "exists", "not_regex")
    for leaf in leaves:
        column = estimator.column(leaf.path)
        facts = estimator.facts(leaf.path)
        if facts.decimals:
            raise Unsupported(f"{leaf.path}: Decimal128 values (mongomock compares them by type)")
        if facts.nan:
            raise Unsupported(f"{leaf.path}: NaN values")
        if facts.code:
            raise Unsupported(f"{leaf.path}: JavaScript code values (mongomock compares them as strings)")
        operands = _operands(leaf)
        nullish = leaf.op in nullish_ops or any(v is None for v in operands)
        if nullish and is_positional(leaf.path):  # matched on the values MongoDB reaches (matching.path_values)
            if not (leaf.op == "exists" and leaf.value):
                raise Unsupported(f"{leaf.path}: null/$exists: false/$ne on a positional path are not modelled")
        elif nullish and column.array_before_leaf and not _elements_only(leaf, column.multikey_paths):
            raise Unsupported(f"{leaf.path}: null/$exists/$ne semantics through an array on the path "
                              "differ between mongomock and MongoDB versions")
        if nullish and facts.undefined and estimator.server_version < (8, 0):
            raise Unsupported(f"{leaf.path}: before 8.0 null matches undefined, mongomock does not")
        if any(isinstance(v, bool) for v in operands) and facts.numbers01:
            raise Unsupported(f"{leaf.path}: booleans and 0/1 numbers (mongomock treats True == 1)")
        if any(is_number(v) and v in (0, 1) for v in operands) and facts.booleans:
            raise Unsupported(f"{leaf.path}: booleans and 0/1 numbers (mongomock treats True == 1)")
        if any(isinstance(v, ObjectId) for v in operands) and facts.strings_in_arrays:
            raise Unsupported(f"{leaf.path}: ObjectId equality against arrays of strings (mongomock quirk)")


def _elements_only(leaf: Leaf, array_paths: set[str]) -> bool:
    """Whether the leaf sees array elements rather than a path through arrays: inside a value ``$elemMatch``, or
    inside an object ``$elemMatch`` with no array below its path (mongomock and MongoDB agree there)."""
    context = leaf.context
    if context is None:
        return False
    if context.is_value:
        return True
    return all(path == context.path or context.path.startswith(path + ".") for path in array_paths)


def _collated_filter(expression: Mapping[str, Any], collator: Any) -> Mapping[str, Any]:
    """A partial filter's operands as its index's collation compares them."""
    return expression if collator is None else collator.transform(dict(expression))


def _has_regex(value: Any) -> bool:
    if isinstance(value, (Regex, re.Pattern)):
        return True
    if isinstance(value, Mapping):
        return "$regex" in value or any(_has_regex(item) for item in value.values())
    if isinstance(value, (list, tuple)):
        return any(_has_regex(item) for item in value)
    return False


def _compare_in_index_order(left: Sequence[Any], right: Sequence[Any], directions: Sequence[int]) -> int:
    """``BSONObj::woCompare`` with the key pattern: field by field, a descending field reversed."""
    for a, b, direction in zip(left, right, directions):
        ka, kb = sort_key(a), sort_key(b)
        if ka != kb:
            return (1 if ka > kb else -1) * direction
    return 0


def _index_details(root: Stage, rt: Runtime) -> dict[str, Any]:
    """The winning index, its bounds (or COUNT_SCAN keys, or min/max key range) and, for several scans, each one."""
    scans = [n for n in root.walk() if isinstance(n, (IxScan, CountScan, Express, DistinctScan))]
    out: dict[str, Any] = {}
    first = scans[0] if scans else None
    if first is None:
        out["isMultiKey"] = False
        return out
    model = first.model
    out["indexName"] = model.spec.name
    out["winningIndex"] = model.spec.key_document()
    out["isMultiKey"] = model.is_multikey
    out["multiKeyPaths"] = model.explain_multikey_paths()
    if isinstance(first, RangeScan):
        out["keyRange"] = json_safe(first.key_range())
    elif isinstance(first, IxScan):
        out["indexBounds"] = first.explain_bounds()
    elif isinstance(first, DistinctScan):
        out["indexBounds"] = first.scan.explain_bounds()
    elif isinstance(first, CountScan):
        out["indexBounds"] = first.scan.explain_bounds()
        start, start_inc, end, end_inc = start_end_keys(first.scan.oils, first.scan.effective_directions,
                                                        first.model.fields)
        out["countScanBounds"] = {"startKey": json_safe(start), "startKeyInclusive": start_inc,
                                  "endKey": json_safe(end), "endKeyInclusive": end_inc}
    if len(scans) > 1:
        out["scans"] = [_scan_report(n, rt) for n in scans]
    return out


def _stage_details(root: Stage, sort_node: Sort | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if sort_node is not None:
        out["sortType"] = sort_node.sort_type
        out["sortPattern"] = dict(sort_node.pattern)
    skip_node = next((n for n in root.walk() if isinstance(n, Skip)), None)
    if skip_node is not None:
        out["skipAmount"] = skip_node.amount
    limit_node = next((n for n in root.walk() if isinstance(n, Limit)), None)
    if limit_node is not None:
        out["limitAmount"] = limit_node.amount
    return out
