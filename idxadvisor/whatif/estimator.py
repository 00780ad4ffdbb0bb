"""The public what-if API: :class:`WhatIfQuery` and :class:`Estimator` (DESIGN.md step 7).

``Estimator.explain`` predicts what ``explain("executionStats")`` would report for a ``find`` or
``count`` over the sample with a set of indexes (the ``_id`` index always exists), or answers
``{"unsupported": reason}`` when the query, the indexes or the data fall outside the model
(planner-semantics.md is the spec). Matching is mongomock's; the numbers come from the planner model.

Result keys use explain's names: ``nReturned``, ``nCounted`` (count), ``totalKeysExamined``,
``totalDocsExamined``, ``stages`` (root to leaf, following the first input of OR/SORT_MERGE), ``plan`` (the
whole stage tree), ``planSummary``, ``blockingSort``, ``sortType``, ``covered``, ``isMultiKey``,
``multiKeyPaths``, ``indexName``, ``winningIndex``, ``indexBounds`` (of the first index scan; when the
plan has several scans, ``scans`` lists each with its bounds and keys examined), ``countScanBounds``,
``skipAmount``, ``limitAmount``, ``returnedIds`` (up to 1000), ``candidates`` (every plan the
multi-planner tried, when there were several) and ``notes``. An index that cannot be built on the
sample (parallel arrays, duplicate keys in a unique index) gives ``{"error": {...}, "index": name}``.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bson import Code, Decimal128, ObjectId, json_util
from bson.json_util import CANONICAL_JSON_OPTIONS
from mongomock.filtering import filter_applies

from idxadvisor.errors import UsageError
from idxadvisor.ingest.samples import MAX_NESTING, Undefined, decode_extended_json, too_deep
from idxadvisor.indexes.model import IndexSpec, IndexSpecError, KeyPattern, key_pattern
from idxadvisor.whatif.bounds import ALL_VALUES, point
from idxadvisor.whatif.bsonorder import MISSING, UNDEFINED, SortKey, is_number
from idxadvisor.whatif.keys import IndexModel, PathColumn, build_column, build_index
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
    ElemMatchValue,
    Leaf,
    OrNode,
    ParsedQuery,
    RegexSpec,
    Unsupported,
    iter_leaves,
    matcher_filter,
    parse_query,
)
from idxadvisor.whatif.scan import start_end_keys
from idxadvisor.whatif.stages import (
    CollScan,
    CountScan,
    CountStage,
    Express,
    FastCount,
    Fetch,
    IxScan,
    Limit,
    OrStage,
    Runtime,
    Skip,
    Sort,
    SortMerge,
    Stage,
)

_QUERY_KEYS = ("command", "filter", "sort", "projection", "limit", "skip")
_SPECIAL_REASON = {
    "text": "text indexes", "2d": "2d indexes", "2dsphere": "2dsphere indexes",
    "geoHaystack": "geoHaystack indexes", "hashed": "hashed indexes",
}


@dataclass(frozen=True)
class WhatIfQuery:
    """A ``find`` or ``count`` with BSON-typed values; ``limit`` < 0 means a single batch of ``-limit``."""

    command: str = "find"
    filter: Mapping[str, Any] = field(default_factory=dict)
    sort: Mapping[str, Any] | None = None
    projection: Mapping[str, Any] | None = None
    limit: int | None = None
    skip: int | None = None

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> WhatIfQuery:
        """From decoded (or raw) Extended JSON: ``{"command", "filter", "sort", "projection", "limit", "skip"}``."""
        if not isinstance(obj, Mapping):
            raise UsageError("the query must be a JSON object")
        unknown = [k for k in obj if k not in _QUERY_KEYS]
        if unknown:
            raise UsageError(f"unknown query field(s) {', '.join(map(str, unknown))}; expected {', '.join(_QUERY_KEYS)}")
        if too_deep(obj, MAX_NESTING + 1):
            decoded = dict(obj)  # explain answers unsupported; the round trip below would recurse too deeply
        else:
            try:
                decoded = decode_extended_json(json_util.dumps(json_safe(dict(obj)),
                                                               json_options=CANONICAL_JSON_OPTIONS))
            except (TypeError, ValueError) as exc:
                raise UsageError(f"the query is not valid Extended JSON: {exc}") from None
        command = decoded.get("command", "find")
        if command not in ("find", "count"):
            raise UsageError(f"query command must be 'find' or 'count', not {command!r}")
        flt = decoded.get("filter")
        if flt is None:
            flt = {}
        if not isinstance(flt, Mapping):
            raise UsageError("query filter must be an object")
        for name in ("sort", "projection"):
            value = decoded.get(name)
            if value is not None and not isinstance(value, Mapping):
                raise UsageError(f"query {name} must be an object")
        limit = _integer(decoded.get("limit"), "limit")
        skip = _integer(decoded.get("skip"), "skip")
        if skip is not None and skip < 0:
            raise UsageError("query skip must not be negative")
        return cls(command, flt, decoded.get("sort") or None, decoded.get("projection") or None, limit, skip)


def _integer(value: Any, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or int(value) != value:
        raise UsageError(f"query {name} must be an integer")
    return int(value)


def _generated_id(position: int) -> ObjectId:
    """Deterministic, increasing ObjectIds for sample documents without ``_id`` (mongod would add one)."""
    return ObjectId(bytes.fromhex("65000000") + position.to_bytes(8, "big"))


def _with_ids(documents: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for position, doc in enumerate(documents):
        if "_id" in doc:
            out.append(doc if type(doc) is dict else dict(doc))
        else:
            copy = {"_id": _generated_id(position)}
            copy.update(doc)
            out.append(copy)
    return out


@dataclass
class _ColumnFacts:
    numbers01: bool = False
    booleans: bool = False
    decimals: bool = False
    nan: bool = False
    undefined: bool = False
    strings_in_arrays: bool = False
    code: bool = False


def render_key_pattern_plain(key: KeyPattern) -> str:
    """The key pattern as mongod writes it in ``planSummary``: ``{ a: 1, b.c: -1 }``."""
    return "{ " + ", ".join(f"{name}: {direction}" for name, direction in key) + " }"


class Estimator:
    """An in-process model of mongod's classic planner over one data sample."""

    def __init__(self, documents: Sequence[Mapping[str, Any]], *, server_version: tuple[int, int] = (8, 0)) -> None:
        self._docs = _with_ids(documents)
        self.server_version = tuple(server_version)
        self._columns: dict[str, PathColumn] = {}
        self._facts: dict[str, _ColumnFacts] = {}
        self._models: dict[tuple[Any, ...], IndexModel] = {}
        self._matches: dict[str, list[bool] | str] = {}
        self._id_spec = IndexSpec.from_key({"_id": 1}, name="_id_", unique=True)

    @property
    def documents(self) -> list[dict[str, Any]]:
        return self._docs

    # --- caches ---

    def column(self, path: str) -> PathColumn:
        column = self._columns.get(path)
        if column is None:
            column = build_column(self._docs, path)
            self._columns[path] = column
        return column

    def model(self, spec: IndexSpec) -> IndexModel:
        cache_key = (spec.key, spec.sparse, spec.unique)
        model = self._models.get(cache_key)
        if model is None:
            model = build_index(spec, [self.column(name) for name in spec.fields], self._docs)
            if model.build_error is None and spec.unique:
                model.build_error = self._duplicate_key_error(model)
            self._models[cache_key] = model
        if model.spec is not spec:  # plans compare specs by identity: hand back this call's spec
            model = IndexModel(spec, model.columns, model.multikey_paths, model.full_keys, model.build_error)
        return model

    def _duplicate_key_error(self, model: IndexModel) -> dict[str, Any] | None:
        error = {"code": 11000, "codeName": "DuplicateKey",
                 "message": f"E11000 duplicate key error index: {model.spec.name}"}
        if not model.special_docs and not model.spec.sparse:
            keys = list(zip(*(c.sort_keys for c in model.columns)))
            return error if len(set(keys)) != len(keys) else None
        seen: dict[tuple[SortKey, ...], int] = {}
        for doc_index in range(len(self._docs)):
            for key in model.doc_keys(doc_index):
                owner = seen.setdefault(key, doc_index)
                if owner != doc_index:
                    return error
        return None

    def facts(self, path: str) -> _ColumnFacts:
        facts = self._facts.get(path)
        if facts is None:
            facts = _column_facts(self.column(path))
            self._facts[path] = facts
        return facts

    def matches(self, parsed: ParsedQuery, raw: Mapping[str, Any]) -> list[bool] | str:
        """mongomock's verdict for every document, once per query (a string: why it could not match)."""
        cache_key = json_util.dumps(raw, json_options=CANONICAL_JSON_OPTIONS)
        cached = self._matches.get(cache_key)
        if cached is None:
            cached = self._match_all(matcher_filter(parsed.conjuncts, self._mergeable))
            self._matches[cache_key] = cached
        return cached

    def _mergeable(self, path: str) -> bool:
        return not self.column(path).array_before_leaf

    def _match_all(self, flt: Mapping[str, Any]) -> list[bool] | str:
        if not flt:
            return [True] * len(self._docs)
        try:
            return [bool(filter_applies(flt, doc)) for doc in self._docs]
        except (NotImplementedError, TypeError) as exc:
            return f"mongomock cannot evaluate this filter on the sample ({exc})"
        except Exception as exc:  # mongomock raises OperationFailure for filters MongoDB would reject
            raise Unsupported(f"the filter is rejected by the matcher: {exc}") from None

    # --- public ---

    def explain(self, query: WhatIfQuery, indexes: Sequence[IndexSpec] = (),
                hint: IndexSpec | KeyPattern | Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The explain-style prediction, or ``{"unsupported": reason}``."""
        specs = self._index_list(indexes)
        hint_spec = self._resolve_hint(hint, specs)
        if any(too_deep(part) for part in (query.filter, query.sort, query.projection) if part is not None):
            return {"unsupported": f"the query is nested deeper than BSON's {MAX_NESTING} levels"}
        try:
            return _Explainer(self, query, specs, hint_spec).run()
        except Unsupported as exc:
            return {"unsupported": str(exc)}
        except RecursionError:
            return {"unsupported": f"a sample document is nested too deeply to be ordered (BSON allows "
                                   f"{MAX_NESTING} levels)"}

    def _index_list(self, indexes: Sequence[IndexSpec]) -> list[IndexSpec]:
        specs = [self._id_spec]
        seen = {self._id_spec.key}
        for spec in indexes:
            if not isinstance(spec, IndexSpec):
                raise UsageError(f"index {spec!r} is not an IndexSpec")
            if spec.key in seen:
                continue
            seen.add(spec.key)
            specs.append(spec)
        return specs

    def _resolve_hint(self, hint: Any, specs: list[IndexSpec]) -> IndexSpec | None:
        if hint is None:
            return None
        if isinstance(hint, IndexSpec):
            wanted = hint.key
        else:
            try:
                wanted = key_pattern(hint)
            except IndexSpecError as exc:
                raise UsageError(f"hint is not a key pattern: {exc}") from None
        for spec in specs:
            if spec.key == wanted:
                return spec
        raise UsageError(f"hint {render_key_pattern_plain(wanted)} names no index given with --index")


def _column_facts(column: PathColumn) -> _ColumnFacts:
    facts = _ColumnFacts()
    plain = column.values
    kinds = {type(v) for v in plain}
    if bool in kinds:
        facts.booleans = True
    if int in kinds or float in kinds:
        facts.numbers01 = any(v == 0 or v == 1 for v in plain if type(v) is int or type(v) is float)
        facts.nan = any(v != v for v in plain if type(v) is float)
    if Undefined in kinds:
        facts.undefined = True
    if kinds - {str, int, float, bool, type(None), type(MISSING), Undefined, ObjectId, datetime.datetime}:
        for value in plain:
            if isinstance(value, (Mapping, Decimal128, Code)) or not isinstance(value, (str, int, float)):
                _visit_facts(value, False, facts)
    for keys in column.complex_keys.values():
        for values in keys.values():
            _visit_facts(values[0], True, facts)
    return facts


def _visit_facts(value: Any, in_array: bool, facts: _ColumnFacts) -> None:
    if value is UNDEFINED:
        facts.undefined = True
    elif isinstance(value, Code):  # before str: Code subclasses str
        facts.code = True
    elif isinstance(value, bool):
        facts.booleans = True
    elif is_number(value):
        if isinstance(value, float) and value != value:
            facts.nan = True
        elif not isinstance(value, (int, float)):
            facts.decimals = True
        elif value in (0, 1):
            facts.numbers01 = True
    elif isinstance(value, str):
        if in_array:
            facts.strings_in_arrays = True
    elif isinstance(value, list):
        for item in value:
            _visit_facts(item, True, facts)
    elif isinstance(value, Mapping):
        for item in value.values():
            _visit_facts(item, in_array, facts)


class _Explainer:
    """One ``explain`` call: guards, candidate plans, plan choice, execution and the report."""

    def __init__(self, estimator: Estimator, query: WhatIfQuery, specs: list[IndexSpec],
                 hint: IndexSpec | None) -> None:
        self.est = estimator
        self.query = query
        self.specs = specs
        self.hint = hint
        self.version = estimator.server_version
        limit = abs(query.limit) if query.limit else 0
        is_count = query.command == "count"
        self.parsed = parse_query(query.filter, None if is_count else query.sort,
                                  None if is_count else query.projection, self.version)
        self.shape = QueryShape(query.command, self.parsed.sort, self.parsed.projection, limit,
                                query.skip or 0, self.version)
        self.notes: list[str] = []
        self.matched: list[bool] | None = None
        self.match_problem: str | None = None

    # --- setup ---

    def usable_models(self) -> list[IndexModel]:
        paths = set(self.parsed.paths) | {name for name, _ in self.parsed.sort}
        if self.parsed.projection is not None:
            paths |= set(self.parsed.projection.fields)
        models: list[IndexModel] = []
        for spec in self.specs:
            reason = self._unmodelled_reason(spec)
            touches = any(_related(name.replace(".$**", "").replace("$**", ""), p)
                          for name in spec.fields for p in paths) or "$**" in "".join(spec.fields)
            if reason is not None:
                if spec is self.hint or touches:
                    raise Unsupported(f"index {spec.name}: {reason} are not modelled")
                self.notes.append(f"index {spec.name} ignored: {reason} are not modelled")
                continue
            if spec.hidden:
                if spec is self.hint:
                    raise Unsupported(f"index {spec.name} is hidden and cannot be hinted")
                continue
            model = self.est.model(spec)
            if model.build_error is not None:
                if spec.is_id_index:
                    raise Unsupported("the sample holds duplicate _id values (it cannot be one collection)")
                raise _BuildError(spec, model.build_error)
            models.append(model)
        return models

    def _unmodelled_reason(self, spec: IndexSpec) -> str | None:
        for _, direction in spec.key:
            if isinstance(direction, str):
                return _SPECIAL_REASON.get(direction, f"{direction} indexes")
        if any("$**" in name for name in spec.fields):
            return "wildcard indexes"
        if spec.collation is not None:
            return "indexes with a collation (collation-aware bounds)"
        if spec.partial_filter is not None:
            return "partial indexes"
        if any(part.isdigit() for name in spec.fields for part in name.split(".")):
            return "positional index paths"
        return None

    def guard_data(self) -> None:
        """Reject data on which mongomock and MongoDB disagree for this query."""
        nullish_ops = ("ne", "nin", "not", "exists", "not_regex")
        for node in self.parsed.conjuncts:
            for path in _node_paths(node):
                if self.est.column(path).nested_arrays:
                    raise Unsupported(f"{path}: arrays nested in arrays are not modelled")
        for leaf in iter_leaves(self.parsed.conjuncts):
            column = self.est.column(leaf.path)
            facts = self.est.facts(leaf.path)
            if facts.decimals:
                raise Unsupported(f"{leaf.path}: Decimal128 values (mongomock compares them by type)")
            if facts.nan:
                raise Unsupported(f"{leaf.path}: NaN values")
            if facts.code:
                raise Unsupported(f"{leaf.path}: JavaScript code values (mongomock compares them as strings)")
            operands = _operands(leaf)
            nullish = leaf.op in nullish_ops or any(v is None for v in operands)
            if nullish and column.array_before_leaf:
                raise Unsupported(f"{leaf.path}: null/$exists/$ne semantics through an array on the path "
                                  "differ between mongomock and MongoDB versions")
            if nullish and facts.undefined and self.version < (8, 0):
                raise Unsupported(f"{leaf.path}: before 8.0 null matches undefined, mongomock does not")
            if any(isinstance(v, bool) for v in operands) and facts.numbers01:
                raise Unsupported(f"{leaf.path}: booleans and 0/1 numbers (mongomock treats True == 1)")
            if any(is_number(v) and v in (0, 1) for v in operands) and facts.booleans:
                raise Unsupported(f"{leaf.path}: booleans and 0/1 numbers (mongomock treats True == 1)")
            if any(isinstance(v, ObjectId) for v in operands) and facts.strings_in_arrays:
                raise Unsupported(f"{leaf.path}: ObjectId equality against arrays of strings (mongomock quirk)")
        array_sort_fields = 0
        for path, _ in self.parsed.sort:
            column = self.est.column(path)
            if column.nested_arrays:
                raise Unsupported(f"sort on {path}: arrays nested in arrays")
            if column.complex_keys:
                array_sort_fields += 1
        if array_sort_fields > 1:
            raise Unsupported("sorting on several array fields (parallel arrays in the sort key)")

    def compute_matches(self) -> None:
        result = self.est.matches(self.parsed, self.query.filter)
        if isinstance(result, str):
            self.match_problem = result
        else:
            self.matched = result

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

    # --- main ---

    def run(self) -> dict[str, Any]:
        try:
            models = self.usable_models()
        except _BuildError as exc:
            return {"error": exc.error, "index": exc.spec.name}
        self.guard_data()
        self.compute_matches()
        if self.shape.is_count and self.parsed.is_empty and self.hint is None:
            return self.report(Candidate(CountStage(FastCount(), self.shape.skip, self.shape.limit),
                                         "RECORD_STORE_FAST_COUNT", needs_matcher=False), [], [])
        express = self.express(models)
        if express is not None:
            return self.report(express, [], [])
        candidates = self.candidates(models)
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
        return self.report(winner, candidates, summary, resumed)

    def usable_without_matcher(self, candidates: list[Candidate]) -> list[Candidate]:
        if self.matched is not None:
            return candidates
        exact = [c for c in candidates if not c.needs_matcher]
        if not exact:
            raise Unsupported(self.match_problem or "the matcher is unavailable")
        return exact

    # --- express / IDHACK (§9) ---

    def express(self, models: list[IndexModel]) -> Candidate | None:
        shape = self.shape
        if self.hint is not None or shape.is_count or shape.sort or shape.skip:
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
            name = "EXPRESS_IXSCAN" if self.version >= (8, 0) else "IDHACK"
            model = models[0]
        else:
            if self.version < (8, 0) or shape.projection is not None:
                return None
            eligible = [m for m in models[1:] if m.fields[0] == leaf.path
                        and (shape.limit == 1 or (m.spec.unique and len(m.fields) == 1))]
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
        pool = [m for m in models if self.hint is None or m.spec is self.hint]
        candidates: list[Candidate] = []
        for model in pool:
            candidates.extend(self.index_candidates(model, conjuncts))
        if self.hint is not None and not candidates:
            candidates.append(self.whole_index(pool[0], 1))
        if (self.hint is None and self.shape.sort and not self.shape.is_count
                and not any(not c.blocking_sort for c in candidates)):
            candidates.extend(self.sort_providing(models))
        if not candidates:
            candidates.append(self.finish(CollScan(bool(conjuncts)), "COLLSCAN", []))
        return candidates

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
        out = []
        wanted = list(self.shape.sort)
        for model in models:
            if model.spec.sparse:
                continue
            pattern = list(zip(model.fields, model.directions))
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
        """A rooted ``$or``: each branch planned on its own (subplanning), then OR or SORT_MERGE (§5)."""
        pool = [m for m in models if self.hint is None or m.spec is self.hint]
        branch_shape = QueryShape("find", (), None, 0, 0, self.version)
        children: list[Stage] = []
        used: list[IndexModel] = []
        for branch in node.branches:
            match = self.branch_matches(branch)
            options: list[Candidate] = []
            for model in pool:
                planner = IndexPlanner(model, branch_shape)
                for chosen in planner.assignments(branch):
                    access, _ = planner.access_plan(branch, chosen)
                    _retarget_fetch(access, match)
                    options.append(Candidate(access, f"IXSCAN {render_key_pattern_plain(model.spec.key)}", [model]))
            if not options:
                if self.hint is not None:
                    return self.whole_index(pool[0], 1)
                return self.finish(CollScan(True), "COLLSCAN", [])
            best = 0
            if len(options) > 1:
                best, _, _ = choose(options, self.runtime, branch_shape)
            children.append(options[best].root)
            used.extend(options[best].models)
        root: Stage
        if len(children) == 1:
            root = children[0]
        elif self.shape.sort and all(_branch_sort_direction(c, self.shape.sort) is not None for c in children):
            for child in children:
                scan = scan_under(child)
                if scan is not None and _branch_sort_direction(child, self.shape.sort) == -1:
                    scan.direction = -1
            root = SortMerge(children, self.shape.sort, dedup=True)
        else:
            root = OrStage(children)
        label = "OR(" + ", ".join(f"IXSCAN {render_key_pattern_plain(m.spec.key)}" for m in used) + ")"
        return self.finish(root, label, used)

    def branch_matches(self, branch: list[Any]) -> list[bool] | None:
        if self.matched is None:
            return None
        result = self.est._match_all(matcher_filter(branch))
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
        root = count_plan(candidate.root, self.shape)
        return Candidate(root, candidate.label, candidate.models, incomplete=candidate.incomplete,
                         needs_matcher=candidate.needs_matcher)

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
        scans = [n for n in root.walk() if isinstance(n, (IxScan, CountScan, Express))]
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
        uses_index = any(isinstance(n, (IxScan, CountScan)) for n in root.walk())
        out["covered"] = uses_index and not any(isinstance(n, (Fetch, CollScan, Express)) for n in root.walk())
        first = scans[0] if scans else None
        if first is not None:
            model = first.model
            out["indexName"] = model.spec.name
            out["winningIndex"] = model.spec.key_document()
            out["isMultiKey"] = model.is_multikey
            out["multiKeyPaths"] = model.explain_multikey_paths()
        else:
            out["isMultiKey"] = False
        if isinstance(first, IxScan):
            out["indexBounds"] = first.explain_bounds()
        elif isinstance(first, CountScan):
            out["indexBounds"] = first.scan.explain_bounds()
            start, start_inc, end, end_inc = start_end_keys(first.scan.oils, first.scan.effective_directions,
                                                            first.model.fields)
            out["countScanBounds"] = {"startKey": json_safe(start), "startKeyInclusive": start_inc,
                                      "endKey": json_safe(end), "endKeyInclusive": end_inc}
        if len(scans) > 1:
            out["scans"] = [_scan_report(n, rt) for n in scans]
        if sort_node is not None:
            out["sortType"] = sort_node.sort_type
            out["sortPattern"] = dict(sort_node.pattern)
        skip_node = next((n for n in root.walk() if isinstance(n, Skip)), None)
        if skip_node is not None:
            out["skipAmount"] = skip_node.amount
        limit_node = next((n for n in root.walk() if isinstance(n, Limit)), None)
        if limit_node is not None:
            out["limitAmount"] = limit_node.amount
        if counted is None and len(results) <= 1000:
            out["returnedIds"] = [json_safe(self.est.documents[rid]["_id"]) for rid in results]
        out["plan"] = root.describe()
        out["executionEngine"] = "classic"
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


class _BuildError(Exception):
    def __init__(self, spec: IndexSpec, error: dict[str, Any]) -> None:
        super().__init__(error.get("message", "index build failed"))
        self.spec = spec
        self.error = error


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


def _node_paths(node: Any) -> list[str]:
    if isinstance(node, Leaf):
        return [node.path]
    if isinstance(node, (ElemMatchValue, ElemMatchObject)):
        return [node.path] + [c.path for c in node.children]
    if isinstance(node, OrNode):
        return [p for branch in node.branches for n in branch for p in _node_paths(n)]
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


def _branch_sort_direction(root: Stage, sort: tuple[tuple[str, int], ...]) -> int | None:
    scan = scan_under(root)
    if scan is None:
        return None
    return scan_direction_for_sort(scan, sort)


def _plan_summary(root: Stage) -> str:
    parts: list[str] = []
    for node in root.walk():
        if isinstance(node, IxScan):
            text = f"IXSCAN {render_key_pattern_plain(node.model.spec.key)}"
        elif isinstance(node, CountScan):
            text = f"COUNT_SCAN {render_key_pattern_plain(node.model.spec.key)}"
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
    if isinstance(node, IxScan):
        out["indexBounds"] = node.explain_bounds()
    elif isinstance(node, CountScan):
        out["indexBounds"] = node.scan.explain_bounds()
    out["keysExamined"] = rt.scan_keys.get(id(node), 0)
    return out


def json_safe(value: Any) -> Any:
    """A result value ``bson.json_util`` can write: ``undefined`` (which bson has no type for) becomes the
    Extended JSON ``{"$undefined": true}`` that the sample and case readers decode back to undefined."""
    if value is UNDEFINED:
        return {"$undefined": True}
    if isinstance(value, Mapping):
        return {key: json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(item) for item in value]
    return value


def dumps_result(result: Mapping[str, Any]) -> str:
    """The result as relaxed Extended JSON (what ``--format json`` prints)."""
    return json.dumps(json.loads(json_util.dumps(result)), indent=2)
