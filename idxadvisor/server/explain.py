"""``explain`` at the pymongo boundary: the command for a what-if query, and the counters of a server's reply.

``explain_command`` turns a ``WhatIfQuery`` into the find, count, distinct or aggregate command a server explains,
with its collation and min/max, the candidate as ``hint``, and ``maxTimeMS``. ``execution_counters`` reads an ``explain("executionStats")`` reply (3.0+, sharded or not) into the
names the estimator answers with (``planSummary``, ``nReturned``, ``nCounted``, ``totalKeysExamined``,
``totalDocsExamined``, ``executionTimeMillis``, ``blockingSort``), so the evidence of both evaluators is built alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from idxadvisor.indexes.model import KeyPattern
from idxadvisor.parse.explain import iter_stages, plan_summary, stage_names
from idxadvisor.server.connection import MAX_TIME_MS
from idxadvisor.server.source import counter_of
from idxadvisor.whatif.estimator import WhatIfQuery


def explain_command(collection: str, query: WhatIfQuery, hint: KeyPattern | None) -> dict[str, Any]:
    """The command to explain, as the log ran it: ``find`` (filter, sort, projection, skip, limit, min, max),
    ``count``, ``distinct`` (key) or ``aggregate`` (pipeline), with its collation; ``hint`` is the plan to measure
    (today's index or the candidate), else the query's own hint."""
    command: dict[str, Any]
    if query.command == "count":
        command = {"count": collection, "query": dict(query.filter)}
    elif query.command == "distinct":
        command = {"distinct": collection, "key": query.key, "query": dict(query.filter)}
    elif query.command == "aggregate":
        command = {"aggregate": collection, "pipeline": [dict(stage) for stage in query.pipeline or ()], "cursor": {}}
    else:
        command = {"find": collection, "filter": dict(query.filter)}
        for name in ("sort", "projection", "min", "max"):
            value = getattr(query, name)
            if value:
                command[name] = dict(value)
    if query.command in ("find", "count"):
        if query.skip:
            command["skip"] = query.skip
        if query.limit:
            command["limit"] = query.limit
    if query.collation:
        command["collation"] = dict(query.collation)
    if hint is not None:
        command["hint"] = dict(hint)
    elif query.hint is not None:
        command["hint"] = query.hint if isinstance(query.hint, str) else dict(query.hint)
    command["maxTimeMS"] = MAX_TIME_MS
    return command


def execution_counters(reply: Mapping[str, Any]) -> dict[str, Any]:
    """The counters of an ``explain("executionStats")`` reply, or ``{"unsupported": …}`` when it has none."""
    planner = reply.get("queryPlanner") if isinstance(reply.get("queryPlanner"), Mapping) else {}
    stats = reply.get("executionStats") if isinstance(reply.get("executionStats"), Mapping) else None
    if stats is None:
        return {"unsupported": "the explain reply has no executionStats"}
    plan = planner.get("winningPlan") if isinstance(planner.get("winningPlan"), Mapping) else {}
    plan = plan.get("queryPlan", plan) if isinstance(plan.get("queryPlan"), Mapping) else plan  # 7.0+ SBE wrapper
    stages = list(iter_stages(stats.get("executionStages") or {}))
    names = stage_names(stages)
    counted = next((stage.get("nCounted") for stage in stages if "nCounted" in stage), None)
    read = {name: stats.get(name) or 0 for name in _COUNTERS}
    if counted is not None:
        read["nCounted"] = counted
    numbers = {name: counter_of(value) for name, value in read.items()}
    unreadable = next((name for name, number in numbers.items() if number is None), None)
    if unreadable is not None:  # measured evidence that cannot be read is no evidence, never a zero
        return {"unsupported": f"the explain reply's {unreadable} is not a count ({read[unreadable]!r:.40})"}
    counters: dict[str, Any] = {"planSummary": plan_summary(dict(plan)) or "?",
                                **{name: int(numbers[name]) for name in _COUNTERS},  # type: ignore[arg-type]
                                "blockingSort": bool(names & {"SORT", "sort"})}
    if counted is not None:
        counters["nCounted"] = int(numbers["nCounted"])  # type: ignore[arg-type]
    return counters


_COUNTERS = ("nReturned", "totalKeysExamined", "totalDocsExamined", "executionTimeMillis")

