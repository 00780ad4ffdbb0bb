"""``explain()`` output as an input: one explained query becomes one event (log-formats.md §7).

Handles 3.0+ output (``queryPlanner`` / ``executionStats``, sharded ``shards[]``) and ≤2.6 legacy output (``cursor``,
``n``, ``nscanned``). The filter is the planner's ``parsedQuery`` unless the output carries the original ``command``
(4.4+ ``explain`` does).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from idxadvisor.models.events import EXPLAIN, Event
from idxadvisor.models.values import as_float, as_int
from idxadvisor.parse.classify import canonical_op, command_name, internal_reason

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
    pipeline.extend(stage for stage in document["stages"][1:] if type(stage) is dict)
    event.op = "aggregate"
    event.command = {"aggregate": event.ns.partition(".")[2], "pipeline": pipeline}
    return event


def _modern_event(document: dict[str, Any]) -> Event:
    planner = document.get("queryPlanner") if type(document.get("queryPlanner")) is dict else {}
    stats = document.get("executionStats") if type(document.get("executionStats")) is dict else {}
    ns = planner.get("namespace") if type(planner.get("namespace")) is str else ""
    command = document.get("command") if type(document.get("command")) is dict else None
    if command is None and type(planner.get("parsedQuery")) is dict:
        command = {"find": ns.partition(".")[2], "filter": planner["parsedQuery"]}
    plan = planner.get("winningPlan")
    summary = plan_summary(plan) if type(plan) is dict else None
    op = canonical_op(command_name(command) or "find")
    if summary and summary.startswith(("COUNT", "RECORD_STORE_FAST_COUNT")):
        op = "count"
        if command is not None and "find" in command:
            command = {"count": command["find"], "query": command.get("filter", {})}
    event = Event(ns=ns, op=op, command=command, plan_summary=summary, source_format=EXPLAIN)
    event.duration_ms = as_float(stats.get("executionTimeMillis")) or 0.0
    event.keys_examined = as_int(stats.get("totalKeysExamined"))
    event.docs_examined = as_int(stats.get("totalDocsExamined"))
    event.nreturned = as_int(stats.get("nReturned"))
    event.has_sort_stage = type(plan) is dict and any(
        stage.get("stage") == "SORT" for stage in _stages(plan))
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
    event.duration_ms = as_float(document.get("millis")) or 0.0
    event.keys_examined = as_int(document.get("nscanned"))
    event.docs_examined = as_int(document.get("nscannedObjects"))
    event.nreturned = as_int(document.get("n"))
    event.has_sort_stage = bool(document.get("scanAndOrder"))
    event.unparsed = True  # legacy explain output does not say which query or namespace it explains
    return event


def _stages(plan: dict[str, Any]) -> Iterator[dict[str, Any]]:
    stack = [plan]
    while stack:
        stage = stack.pop()
        yield stage
        for key in ("inputStage", "queryPlan"):
            child = stage.get(key)
            if type(child) is dict:
                stack.append(child)
        for key in ("inputStages", "shards"):
            children = stage.get(key)
            if type(children) is list:
                stack.extend(child for child in reversed(children) if type(child) is dict)
        inner = stage.get("winningPlan")
        if type(inner) is dict:
            stack.append(inner)


def plan_summary(plan: dict[str, Any]) -> str | None:
    """The log's planSummary for a winning plan: its leaf stages, index scans with their key patterns."""
    parts = []
    for stage in _stages(plan):
        name = stage.get("stage")
        if name not in _LEAF_STAGES:
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
    if number is None:
        return f'"{value}"'
    return str(int(number)) if number == int(number) else str(number)
