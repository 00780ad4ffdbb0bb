"""The public what-if API: :class:`WhatIfQuery` and :class:`Estimator` (DESIGN.md step 7).

``Estimator.explain`` predicts what ``explain("executionStats")`` would report for a ``find``, ``count``,
``distinct`` or ``aggregate`` over the sample with a set of indexes (the ``_id`` index always exists), or answers
``{"unsupported": reason}`` when the query, the indexes or the data fall outside the model (planner-semantics.md
is the spec). Matching is mongomock's; the numbers come from the planner model (:mod:`.explainer`).

Result keys use explain's names: ``nReturned``, ``nCounted`` (count), ``totalKeysExamined``,
``totalDocsExamined``, ``stages`` (root to leaf, following the first input of OR/SORT_MERGE), ``plan`` (the
whole stage tree), ``planSummary``, ``blockingSort``, ``sortType``, ``covered``, ``isMultiKey``,
``multiKeyPaths``, ``indexName``, ``winningIndex``, ``indexBounds`` (of the first index scan; when the
plan has several scans, ``scans`` lists each with its bounds and keys examined), ``countScanBounds``,
``keyRange`` (a ``min``/``max`` scan), ``skipAmount``, ``limitAmount``, ``returnedIds`` (up to 1000),
``collation``, ``candidates`` (every plan the multi-planner tried, when there were several) and ``notes``; an
aggregation adds ``pipeline`` (the stages after the query layer). An index that cannot be built on the sample
(parallel arrays, duplicate keys in a unique index, an array under a hashed field) gives
``{"error": {...}, "index": name}``; a request the server refuses (a hint naming no index, bad ``min``/``max``)
gives ``{"error": {...}}``.

An index with a collation is built over the sample as that collation sees it: a *view* of the documents whose
strings are replaced by their collation keys (:mod:`.collation`); a query with a collation is matched and sorted
in its own view. Views keep the documents' positions, so record ids agree across them.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from bson import Code, Decimal128, ObjectId, json_util
from bson.json_util import CANONICAL_JSON_OPTIONS

from idxadvisor.errors import UsageError
from idxadvisor.ingest.samples import MAX_NESTING, Undefined, too_deep
from idxadvisor.indexes.model import IndexSpec, IndexSpecError, KeyPattern, key_pattern
from idxadvisor.whatif.bsonorder import MISSING, UNDEFINED, SortKey, is_number
from idxadvisor.whatif.collation import Collator, collator_for
from idxadvisor.whatif.dispatch import explain_request
from idxadvisor.whatif.explainer import NATURAL, ServerError, guard_leaves
from idxadvisor.whatif.keys import IndexModel, PathColumn, build_column, build_index, hashed_column
from idxadvisor.whatif.matching import matcher
from idxadvisor.whatif.partial import parse_partial_filter
from idxadvisor.whatif.query import ParsedQuery, Unsupported, is_positional, iter_leaves, matcher_filter
from idxadvisor.whatif.request import COMMANDS, QUERY_FIELDS, WhatIfQuery, json_safe
from idxadvisor.whatif.source import ColumnFacts
from idxadvisor.whatif.stages import render_key_pattern_plain
from idxadvisor.whatif.wildcard import WildcardKeys, build_wildcard_keys, expanded_model, wildcard_root
from idxadvisor.whatif.wildcard import included as wildcard_included

__all__ = ["Estimator", "ServerError", "WhatIfQuery", "dumps_result", "json_safe", "render_key_pattern_plain"]


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


class Estimator:
    """An in-process model of mongod's classic planner over one data sample."""

    def __init__(self, documents: Sequence[Mapping[str, Any]], *, server_version: tuple[int, int] = (8, 0)) -> None:
        self._docs = _with_ids(documents)
        self.server_version = tuple(server_version)
        self._columns: dict[str, PathColumn] = {}
        self._hashed: dict[str, PathColumn | dict[str, Any]] = {}
        self._facts: dict[str, ColumnFacts] = {}
        self._models: dict[tuple[Any, ...], IndexModel] = {}
        self._matches: dict[str, list[bool] | str] = {}
        self._id_spec = IndexSpec.from_key({"_id": 1}, name="_id_", unique=True)
        self._base: Estimator | None = None  # a view's owner (not ``self``: a self-reference would keep the
        #                                      estimator alive until the cyclic collector runs)
        self.collator: Collator | None = None
        self._views: dict[Collator, Estimator] = {}
        self._wildcards: dict[tuple[Any, ...], WildcardKeys] = {}
        self._view_fields: set[str] = set()

    @property
    def documents(self) -> list[dict[str, Any]]:
        return self._docs

    @property
    def base(self) -> Estimator:
        """The estimator over the documents as stored (a collation view's owner)."""
        return self._base or self

    # --- collation views ---

    def view(self, collator: Collator | None, fields: Iterable[str]) -> Estimator:
        """The sample as ``collator`` sees it: every string of the given top-level fields replaced by its collation
        key (same documents, same positions), or this estimator itself for the simple collation."""
        base = self.base
        if collator is None:
            return base
        view = base._views.get(collator)
        if view is None:
            view = Estimator((), server_version=base.server_version)
            view._docs = [dict(doc) for doc in base._docs]
            view._base = base
            view.collator = collator
            base._views[collator] = view
        missing = {name.split(".")[0] for name in fields} - view._view_fields
        for name in sorted(missing):
            for copy, doc in zip(view._docs, base._docs):
                if name in doc:
                    copy[name] = collator.transform(doc[name])
            view._view_fields.add(name)
        return view

    # --- caches ---

    def column(self, path: str) -> PathColumn:
        column = self._columns.get(path)
        if column is None:
            column = build_column(self._docs, path)
            self._columns[path] = column
        return column

    def hashed_column(self, path: str) -> PathColumn | dict[str, Any]:
        """The hashes of one path, or the build error an array on it causes."""
        column = self._hashed.get(path)
        if column is None:
            column = hashed_column(self.column(path))
            self._hashed[path] = column
        return column

    def model(self, spec: IndexSpec) -> IndexModel:
        """The index over the sample (built in its own collation's view; a partial index holds only the documents
        its filter keeps)."""
        base = self.base
        collator = collator_for(spec.collation)
        cache_key = (spec.key, spec.sparse, spec.unique, _frozen(spec.partial_filter), collator)
        model = base._models.get(cache_key)
        if model is None:
            model = base._build_model(spec, collator)
            base._models[cache_key] = model
        if model.spec is not spec:  # plans compare specs by identity: hand back this call's spec
            model = replace(model, spec=spec)
        return model

    def _build_model(self, spec: IndexSpec, collator: Collator | None) -> IndexModel:
        owner = self.view(collator, spec.fields)
        hashed = [direction == "hashed" for _, direction in spec.key]
        if any(hashed) and (spec.sparse or spec.unique):
            raise Unsupported(f"index {spec.name}: sparse or unique hashed indexes are not modelled")
        columns: list[PathColumn] = []
        for name, is_hashed in zip(spec.fields, hashed):
            column = owner.hashed_column(name) if is_hashed else owner.column(name)
            if isinstance(column, dict):
                return IndexModel(spec, [], [set() for _ in spec.fields], {}, column)
            columns.append(column)
        model = build_index(spec, columns, owner.documents)
        model.collator = collator
        if any(hashed) and model.full_keys:
            raise Unsupported(f"index {spec.name}: a compound hashed index over several arrays is not modelled")
        if spec.partial_filter is not None:
            expression = spec.partial_filter if collator is None else collator.transform(dict(spec.partial_filter))
            model.members = owner.partial_members(expression)
        if model.build_error is None and spec.unique:
            model.build_error = self._duplicate_key_error(model)
        return model

    def wildcard_keys(self, spec: IndexSpec) -> WildcardKeys:
        """Every key of a wildcard index over the sample (in its collation's view), built once."""
        base = self.base
        collator = collator_for(spec.collation)
        cache_key = (spec.key, _frozen(spec.wildcard_projection), _frozen(spec.partial_filter), collator)
        keys = base._wildcards.get(cache_key)
        if keys is None:
            wildcard_root(spec)  # compound wildcard indexes are refused before any work
            owner = base.view(collator, {name.split(".")[0] for name in base._all_fields()})
            members = None
            if spec.partial_filter is not None:
                if collator is not None:
                    raise Unsupported(f"index {spec.name}: a partial wildcard index with a collation is not modelled")
                members = base.partial_members(spec.partial_filter)
            documents = owner.documents if members is None else [
                doc if i in members else {} for i, doc in enumerate(owner.documents)]
            keys = build_wildcard_keys(spec, spec.wildcard_projection, documents)
            base._wildcards[cache_key] = keys
        return keys

    def wildcard_holds(self, spec: IndexSpec, path: str) -> bool:
        return wildcard_included(spec, spec.wildcard_projection, path)

    def wildcard_model(self, spec: IndexSpec, path: str) -> IndexModel | None:
        """The expansion ``{$_path: 1, <path>: 1}`` of a wildcard index (``expandWildcardIndexEntry``)."""
        keys = self.wildcard_keys(spec)
        model = expanded_model(keys, path)
        if model is None:
            return None
        model.collator = collator_for(spec.collation)
        if spec.partial_filter is not None:
            model.members = self.partial_members(spec.partial_filter)
        return model

    def _all_fields(self) -> set[str]:
        return {name for doc in self._docs for name in doc}

    def partial_members(self, expression: Mapping[str, Any]) -> frozenset[int]:
        """The documents a partial filter keeps (``IndexCatalogEntry``'s filter, evaluated by the matcher)."""
        nodes = parse_partial_filter(expression, self.server_version)
        guard_leaves(self, iter_leaves(nodes))
        result = self.match_all(matcher_filter(nodes, self._mergeable))
        if isinstance(result, str):
            raise Unsupported(f"partial filter expression: {result}")
        return frozenset(i for i, kept in enumerate(result) if kept)

    def _duplicate_key_error(self, model: IndexModel) -> dict[str, Any] | None:
        error = {"code": 11000, "codeName": "DuplicateKey",
                 "message": f"E11000 duplicate key error index: {model.spec.name}"}
        if not model.special_docs and not model.spec.sparse and model.members is None:
            keys = list(zip(*(c.sort_keys for c in model.columns)))
            return error if len(set(keys)) != len(keys) else None
        seen: dict[tuple[SortKey, ...], int] = {}
        for doc_index in range(len(self._docs)):
            for key in model.doc_keys(doc_index):
                owner = seen.setdefault(key, doc_index)
                if owner != doc_index:
                    return error
        return None

    def facts(self, path: str) -> ColumnFacts:
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
            cached = self.match_all(matcher_filter(parsed.conjuncts, self._mergeable))
            self._matches[cache_key] = cached
        return cached

    def _mergeable(self, path: str) -> bool:
        return not is_positional(path) and not self.column(path).array_before_leaf

    def match_all(self, flt: Mapping[str, Any]) -> list[bool] | str:
        if not flt:
            return [True] * len(self._docs)
        try:
            applies = matcher(flt)
            return [applies(doc) for doc in self._docs]
        except (NotImplementedError, TypeError) as exc:
            return f"mongomock cannot evaluate this filter on the sample ({exc})"
        except Exception as exc:  # mongomock raises OperationFailure for filters MongoDB would reject
            raise Unsupported(f"the filter is rejected by the matcher: {exc}") from None

    # --- public ---

    def explain(self, query: WhatIfQuery, indexes: Sequence[IndexSpec] = (),
                hint: IndexSpec | KeyPattern | Mapping[str, Any] | str | None = None) -> dict[str, Any]:
        """The explain-style prediction, ``{"error": {...}}`` where the server refuses the request, or
        ``{"unsupported": reason}``. A ``hint`` given here (the CLI's ``--hint``) wins over the query's and must
        name one of ``indexes``."""
        specs = self._index_list(indexes)
        if query.unknown:
            return {"unsupported": f"{', '.join(query.unknown)}: not part of the modelled request "
                                   f"(fields: {', '.join(QUERY_FIELDS)}; commands: {', '.join(COMMANDS)})"}
        try:
            hint_spec = self._resolve_hint(hint if hint is not None else query.hint, specs)
        except ServerError as exc:
            if hint is None:
                return {"error": exc.error}
            if exc.error["codeName"] == "BadValue" and not isinstance(hint, (str, Mapping)):
                shown = render_key_pattern_plain(hint.key if isinstance(hint, IndexSpec) else hint)
                raise UsageError(f"hint {shown} names no index given with --index") from None
            raise UsageError(f"hint: {exc}") from None
        parts = (query.filter, query.sort, query.projection, query.min, query.max, query.pipeline)
        if any(too_deep(part) for part in parts if part is not None):
            return {"unsupported": f"the query is nested deeper than BSON's {MAX_NESTING} levels"}
        try:
            return explain_request(self, query, specs, hint_spec)
        except Unsupported as exc:
            return {"unsupported": str(exc)}
        except RecursionError:
            return {"unsupported": f"a sample document is nested too deeply to be ordered (BSON allows "
                                   f"{MAX_NESTING} levels)"}

    def _index_list(self, indexes: Sequence[IndexSpec]) -> list[IndexSpec]:
        specs = [self._id_spec]
        seen = {_identity(self._id_spec)}
        for spec in indexes:
            if not isinstance(spec, IndexSpec):
                raise UsageError(f"index {spec!r} is not an IndexSpec")
            if _identity(spec) in seen:
                continue
            seen.add(_identity(spec))
            specs.append(spec)
        return specs

    def _resolve_hint(self, hint: Any, specs: list[IndexSpec]) -> IndexSpec | str | None:
        """The hinted index (by name or key pattern), ``NATURAL`` for ``{$natural: ±1}``, or ``None``."""
        if hint is None:
            return None
        if isinstance(hint, IndexSpec):
            hint = hint.key
        if isinstance(hint, str):
            found = [spec for spec in specs if spec.name == hint]
        else:
            if isinstance(hint, Mapping) and list(hint) == [NATURAL]:
                if hint[NATURAL] not in (1, -1):
                    raise ServerError(2, "BadValue", "$natural hint must be 1 or -1")
                return NATURAL if hint[NATURAL] == 1 else f"-{NATURAL}"
            try:
                wanted = key_pattern(hint)
            except IndexSpecError as exc:
                raise ServerError(2, "BadValue", f"hint is not a key pattern: {exc}") from None
            found = [spec for spec in specs if spec.key == wanted]
        if not found:
            raise ServerError(2, "BadValue", "hint provided does not correspond to an existing index")
        if len(found) > 1:
            raise ServerError(27, "IndexNotFound", f"Hint matched multiple indexes, must hint by index name. Matched: "
                                                 f"{found[0].name} and {found[1].name}")
        return found[0]


def _identity(spec: IndexSpec) -> tuple[Any, ...]:
    """What makes two indexes the same index: the server refuses a second one with the same key and options."""
    return (spec.key, _frozen(spec.partial_filter), _frozen(spec.collation))


def _frozen(document: Mapping[str, Any] | None) -> str | None:
    return None if document is None else json_util.dumps(document, json_options=CANONICAL_JSON_OPTIONS)
def _column_facts(column: PathColumn) -> ColumnFacts:
    facts = ColumnFacts()
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


def _visit_facts(value: Any, in_array: bool, facts: ColumnFacts) -> None:
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


def dumps_result(result: Mapping[str, Any]) -> str:
    """The result as relaxed Extended JSON (what ``--format json`` prints)."""
    return json.dumps(json.loads(json_util.dumps(result)), indent=2)
