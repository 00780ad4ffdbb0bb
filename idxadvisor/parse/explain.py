"""``explain()`` output as an input: one explained query becomes one event (log-formats.md §7).

Handles 3.0+ output (``queryPlanner`` / ``executionStats``, sharded ``shards[]``) and ≤2.6 legacy output (``cursor``,
``n``, ``nscanned``). The filter is the planner's ``parsedQuery`` unless the output carries the original ``command``
(newer servers' ``explain`` does). ``parsedQuery`` spells an implicit AND as ``{$and: [{a: …}, {b: …}]}``; it is
folded back into ``{a: …, b: …}`` so that the query has the shape a log gives it. Without ``command``, the output
does not say which command was explained: a count shows in its plan (``COUNT``, ``COUNT_SCAN``) and a distinct in
its ``DISTINCT_SCAN``; anything else could be a find, a distinct or a findAndModify, and its op is ``unknown``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from idxadvisor.models.events import EXPLAIN, UNKNOWN, Event
from idxadvisor.models.values import as_float, as_int, is_extended_json_value
from idxadvisor.parse.classify import canonical_op, command_name, internal_reason
from idxadvisor.parse.fields import duration

_LEAF_STAGES = frozenset(
    {"COLLSCAN", "IXSCAN", "COUNT_SCAN", "DISTINCT_SCAN", "IDHACK", "EOF", "RECORD_STORE_FAST_COUNT",
     "EXPRESS_IXSCAN", "EXPRESS_CLUSTERED_IXSCAN", "CLUSTERED_IXSCAN", "TEXT", "GEO_NEAR_2D", "GEO_NEAR_2DSPHERE"}
)


def looks_like_explain(document: Any) -> bool:
    if type(document) is not dict:
        return False
    return ("queryPlanner" in document or "executionStats" in document or _cursor_stage(document) is not None
            or ("cursor" in document and "nscanned" in document))


def event_from_explain(document: dict[str, Any]) -> Event:
    cursor = _cursor_stage(document)
    if cursor is not None:
        return _aggregate_event(document, cursor)
    if "queryPlanner" in document or "executionStats" in document:
        return _modern_event(document)
    return _legacy_event(document)


def _cursor_stage(document: dict[str, Any]) -> dict[str, Any] | None:
    """The ``$cursor`` stage of an aggregation explain (``{"stages": [{"$cursor": {...}}, ...]}``, ≤4.4)."""
    stages = document.get("stages")
    if type(stages) is list and stages and type(stages[0]) is dict:
        cursor = stages[0].get("$cursor")
        if type(cursor) is dict and "queryPlanner" in cursor:
            return cursor
    return None


def _aggregate_event(document: dict[str, Any], cursor: dict[str, Any]) -> Event:
    event = _modern_event(cursor)
    pipeline: list[Any] = []
    if type(cursor.get("query")) is dict and cursor["query"]:
        pipeline.append({"$match": cursor["query"]})
    if type(cursor.get("sort")) is dict:
        pipeline.append({"$sort": cursor["sort"]})
    for stage in document["stages"][1:]:
        if type(stage) is dict:
            pipeline.extend(_logged_stages(stage))
    event.op = "aggregate"
    event.command = {"aggregate": event.ns.partition(".")[2], "pipeline": pipeline}
    event.unparsed = not event.ns
    return event


def _logged_stages(stage: dict[str, Any]) -> list[dict[str, Any]]:
    """An explained stage as the pipeline spelled it: explain writes ``$sort`` as ``{sortKey: {…}, limit: n}``."""
    body = stage.get("$sort")
    if len(stage) == 1 and type(body) is dict and type(body.get("sortKey")) is dict:
        stages: list[dict[str, Any]] = [{"$sort": body["sortKey"]}]
        if "limit" in body:  # a $limit the optimiser folded into the sort
            stages.append({"$limit": body["limit"]})
        return stages
    return [stage]


def _modern_event(document: dict[str, Any]) -> Event:
    planner = document.get("queryPlanner") if type(document.get("queryPlanner")) is dict else {}
    stats = document.get("executionStats") if type(document.get("executionStats")) is dict else {}
    plan = planner.get("winningPlan") if type(planner.get("winningPlan")) is dict else None
    source = planner
    shards = plan.get("shards") if plan is not None else None
    if "namespace" not in planner and type(shards) is list and shards and type(shards[0]) is dict:
        source = shards[0]  # through mongos (3.2+): each shard names the namespace and parsed query, mongos does not
    ns = source.get("namespace") if type(source.get("namespace")) is str else ""
    summary = plan_summary(plan) if plan is not None else None
    command = document.get("command") if type(document.get("command")) is dict else None
    unparsed = not ns
    if command is not None:
        op = canonical_op(command_name(command) or "")
    else:
        op = _op_from_plan(plan) if plan is not None else UNKNOWN
        parsed = source.get("parsedQuery")
        query = fold_and(parsed) if type(parsed) is dict else {}
        unparsed = unparsed or (type(parsed) is not dict and op != "count")  # a fast count has no parsedQuery
        collection = ns.partition(".")[2]
        if op == "count":
            command = {"count": collection, "query": query}
        elif op == "distinct":
            command = {"distinct": collection, "query": query}
        else:
            command = {"filter": query}
    event = Event(ns=ns, op=op, command=command, plan_summary=summary, source_format=EXPLAIN)
    event.unparsed = unparsed
    event.duration_ms = duration(stats.get("executionTimeMillis")) or 0.0
    event.keys_examined = as_int(stats.get("totalKeysExamined"))
    event.docs_examined = as_int(stats.get("totalDocsExamined"))
    event.nreturned = as_int(stats.get("nReturned"))
    event.has_sort_stage = type(plan) is dict and any(
        stage.get("stage") == "SORT" for stage in iter_stages(plan))
    event.internal = internal_reason(ns, None, None)
    return event


def _legacy_event(document: dict[str, Any]) -> Event:
    cursor = str(document.get("cursor", ""))
    if cursor.startswith("BtreeCursor"):
        summary = "IXSCAN { " + cursor.split()[1] + " }" if len(cursor.split()) > 1 else "IXSCAN"
    elif cursor.startswith("BasicCursor"):
        summary = "COLLSCAN"
    else:
        summary = cursor or None
    event = Event(ns="", op="find", plan_summary=summary, source_format=EXPLAIN)
    event.duration_ms = duration(document.get("millis")) or 0.0
    event.keys_examined = as_int(document.get("nscanned"))
    event.docs_examined = as_int(document.get("nscannedObjects"))
    event.nreturned = as_int(document.get("n"))
    event.has_sort_stage = bool(document.get("scanAndOrder"))
    event.unparsed = True  # legacy explain output does not say which query or namespace it explains
    return event


def iter_stages(plan: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """Every stage of a plan tree, root first: a ``winningPlan`` (through mongos' ``shards`` and SBE's ``queryPlan``)
    or an ``executionStages`` tree (``thenStage``/``elseStage`` of a cached plan, ``outerStage``/``innerStage`` of a
    join, each shard's ``executionStages``)."""
    stack = [plan] if isinstance(plan, Mapping) else []
    while stack:
        stage = stack.pop()
        yield stage
        for key in ("inputStage", "queryPlan", "thenStage", "elseStage", "outerStage", "innerStage"):
            child = stage.get(key)
            if isinstance(child, Mapping):
                stack.append(child)
        for key in ("inputStages", "shards"):
            children = stage.get(key)
            if type(children) is list:
                stack.extend(child for child in reversed(children) if isinstance(child, Mapping))
        for key in ("winningPlan", "executionStages"):
            inner = stage.get(key)
            if isinstance(inner, Mapping):
                stack.append(inner)


def stage_names(stages: Iterable[Mapping[str, Any]]) -> set[str]:
    """The names of these stages (a ``stage`` that is not text names none)."""
    return {name for stage in stages if isinstance(name := stage.get("stage"), str)}


def plan_summary(plan: dict[str, Any]) -> str | None:
    """The log's planSummary for a winning plan: its leaf stages, index scans with their key patterns."""
    parts = []
    for stage in iter_stages(plan):
        name = stage.get("stage")
        if not isinstance(name, str) or name not in _LEAF_STAGES:
            continue
        key = stage.get("keyPattern")
        if type(key) is dict:
            rendered = ", ".join(f"{field}: {_direction(value)}" for field, value in key.items())
            parts.append(f"{name} {{ {rendered} }}")
        else:
            parts.append(str(name))
    unique = list(dict.fromkeys(parts))
    return ", ".join(unique) if unique else None


def _direction(value: Any) -> str:
    number = as_float(value)
    if number is None or not math.isfinite(number):  # "nan", "inf", "2dsphere", "text"
        return f'"{value}"'
    return str(int(number)) if number == int(number) and abs(number) < 1e15 else repr(number)


_COUNT_STAGES = frozenset({"COUNT", "COUNT_SCAN", "RECORD_STORE_FAST_COUNT"})


def _op_from_plan(plan: dict[str, Any]) -> str:
    """What the winning plan proves about the command explained: ``count``, ``distinct``, or ``unknown``."""
    names = stage_names(iter_stages(plan))
    if names & _COUNT_STAGES:
        return "count"
    if "DISTINCT_SCAN" in names:
        return "distinct"
    return UNKNOWN


_MAX_FOLD_DEPTH = 100


def fold_and(query: dict[str, Any], depth: int = 0) -> dict[str, Any]:
    """``parsedQuery`` with each ``$and`` folded into the document holding it, where that loses nothing.

    ``{$and: [{age: {$gte: 1}}, {age: {$lte: 9}}]}`` is ``{age: {$gte: 1, $lte: 9}}``; ``{$and: []}`` is ``{}``. A
    conjunct that cannot be merged (the same operator twice on one field) stays in a smaller ``$and``. Branches of
    ``$or``/``$nor`` and ``$elemMatch`` documents are folded too.
    """
    if depth > _MAX_FOLD_DEPTH:
        return query
    merged: dict[str, Any] = {}
    rest: list[Any] = []
    for key, value in query.items():
        if key == "$and" and type(value) is list and all(type(item) is dict for item in value):
            for conjunct in value:
                for inner_key, inner_value in fold_and(conjunct, depth + 1).items():
                    if inner_key == "$and" and type(inner_value) is list:
                        rest.extend(inner_value)
                    elif not _merge(merged, inner_key, inner_value):
                        rest.append({inner_key: inner_value})
        else:
            value = _fold_value(key, value, depth)
            if not _merge(merged, key, value):
                rest.append({key: value})
    if rest:
        merged["$and"] = rest
    return merged


def _fold_value(key: str, value: Any, depth: int) -> Any:
    if key in ("$or", "$nor") and type(value) is list:
        return [fold_and(branch, depth + 1) if type(branch) is dict else branch for branch in value]
    if type(value) is dict and type(value.get("$elemMatch")) is dict:
        body = value["$elemMatch"]
        if not all(name.startswith("$") for name in body) or "$and" in body:
            return {**value, "$elemMatch": fold_and(body, depth + 1)}
    return value


def _is_operators(value: Any) -> bool:
    return (type(value) is dict and bool(value) and not is_extended_json_value(value)
            and all(name.startswith("$") for name in value))


def _merge(merged: dict[str, Any], key: str, value: Any) -> bool:
    """Add ``key: value`` to ``merged``; False when the key is there already and the two cannot be one."""
    if key not in merged:
        merged[key] = value
        return True
    held = merged[key]
    if _is_operators(held) and _is_operators(value) and not set(held) & set(value) and not key.startswith("$"):
        merged[key] = {**held, **value}
        return True
    return False
