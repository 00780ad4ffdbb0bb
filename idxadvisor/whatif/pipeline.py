"""Aggregations: the prefix of a pipeline the classic query planner runs, and what the rest asks of it.

The planner sees the pipeline's leading ``$match`` stages (one conjunction), a ``$sort``, the ``$limit`` stages that
follow (coalesced into the smallest, folded into the sort or pushed down as the query's limit), and the fields the
later stages depend on:

* nothing after the prefix: whole documents (a FETCH or COLLSCAN);
* a final ``$project`` of plain fields: that projection (a covered plan is possible);
* a final ``$count``: no field at all, planned like a count (COUNT_SCAN possible) but without a COUNT stage;
* a ``$group`` on one field with no accumulator: a DISTINCT_SCAN when one index gives the values in order with
  equality bounds before the field (``STRICT_DISTINCT_ONLY``).

Anything else (``$skip``, ``$unwind``, ``$lookup``, expressions, a ``$group`` the DISTINCT_SCAN cannot answer,
which 7.0+ defaults run in the slot-based engine) is answered unsupported.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from idxadvisor.indexes.model import IndexSpec
from idxadvisor.whatif.explainer import Explainer
from idxadvisor.whatif.query import Unsupported
from idxadvisor.whatif.request import WhatIfQuery
from idxadvisor.whatif.source import Sample


@dataclass
class PushedDown:
    """The part of a pipeline the query layer runs."""

    filter: dict[str, Any] = field(default_factory=dict)
    sort: dict[str, Any] | None = None
    limit: int | None = None
    projection: dict[str, Any] | None = None
    tail: str = "documents"        # documents | project | count | group
    group_key: str | None = None
    group_fields: list[str] = field(default_factory=list)   # what the $group's $first accumulators read
    later: list[str] = field(default_factory=list)   # the stages left to the pipeline, by name
    transforms: bool = False       # single-document transformations were stepped over (collection scans only)


def push_down(pipeline: Sequence[Mapping[str, Any]]) -> PushedDown:
    """Split a pipeline into the query the planner sees and the stages after it."""
    out = PushedDown()
    stages = [_stage(item) for item in pipeline]
    position = 0
    matches = []
    while position < len(stages) and stages[position][0] == "$match":
        body = stages[position][1]
        if not isinstance(body, Mapping):
            raise Unsupported("$match needs a document")
        matches.append(dict(body))
        position += 1
    if matches:
        out.filter = matches[0] if len(matches) == 1 else {"$and": matches}
    if _transform_before_sort_or_limit(stages[position:]):
        _push_past_transforms(out, stages[position:])
        return out
    if position < len(stages) and stages[position][0] == "$sort":
        if not isinstance(stages[position][1], Mapping):
            raise Unsupported("$sort needs a document")
        out.sort = dict(stages[position][1])
        position += 1
    # $limit stages right after the prefix coalesce into the smallest and go down into the query (the sort's
    # top-k, or a LIMIT over the scan); the pipeline keeps a $limit of its own.
    while position < len(stages) and stages[position][0] == "$limit":
        limit = stages[position][1]
        if isinstance(limit, bool) or not isinstance(limit, (int, float)) or limit != int(limit) or limit < 1:
            raise Unsupported("$limit needs a positive integer")
        out.limit = int(limit) if out.limit is None else min(out.limit, int(limit))
        if "$limit" not in out.later:
            out.later.append("$limit")
        position += 1
    rest = stages[position:]
    _classify_tail(out, rest)
    out.later.extend(name for name, _ in rest)
    return out


# Single-document transformations: a $limit moves ahead of them and the query still reads every document they
# see; a $sort on fields they keep moves ahead too (Pipeline::optimize).
_TRANSFORMS = frozenset({"$project", "$addFields", "$set", "$unset"})


def _transform_before_sort_or_limit(stages: list[tuple[str, Any]]) -> bool:
    names = [name for name, _ in stages]
    first = next((i for i, name in enumerate(names) if name in _TRANSFORMS), None)
    return first is not None and any(name in ("$sort", "$limit") for name in names[first + 1:])


def _push_past_transforms(out: PushedDown, stages: list[tuple[str, Any]]) -> None:
    """A prefix of transformations, ``$sort`` and ``$limit`` stages: the limits before a ``$sort`` (or after it,
    as its top-k) go down into the query with the sort; whatever follows a ``$sort`` that comes after a ``$limit``
    stays in the pipeline. Planned as a collection scan only, the query's projection (the pipeline's
    dependencies) is not modelled: :func:`explain_aggregate` refuses secondary indexes here."""
    out.transforms = True
    position = 0
    while position < len(stages):
        name, body = stages[position]
        if name in _TRANSFORMS:
            position += 1
        elif name == "$limit":
            out.limit = _limit_of(body) if out.limit is None else min(out.limit, _limit_of(body))
            position += 1
        elif name == "$sort" and out.sort is None and out.limit is None:
            if not isinstance(body, Mapping) or not body:
                raise Unsupported("$sort needs a document")
            if any(str(key) == "_id" or str(key).startswith("_id.") for key in body):
                raise Unsupported("a $sort on _id after a transformation stage (the _id index may serve it)")
            out.sort = dict(body)
            position += 1
        else:
            break
    rest = stages[position:]
    if any(name in ("$group", "$count") for name, _ in rest):
        raise Unsupported("a $group or $count after transformation stages is not modelled")
    out.later.extend(name for name, _ in stages if name != "$match")


def _limit_of(body: Any) -> int:
    if isinstance(body, bool) or not isinstance(body, (int, float)) or body != int(body) or body < 1:
        raise Unsupported("$limit needs a positive integer")
    return int(body)


def _stage(item: Mapping[str, Any]) -> tuple[str, Any]:
    if not isinstance(item, Mapping) or len(item) != 1:
        raise Unsupported("each pipeline stage must be a document with one field")
    ((name, body),) = item.items()
    return str(name), body


def _classify_tail(out: PushedDown, rest: list[tuple[str, Any]]) -> None:
    if not rest:
        return
    name, body = rest[0]
    if len(rest) == 1 and name == "$count":
        out.tail = "count"
    elif len(rest) == 1 and name == "$project":
        out.tail = "project"
        out.projection = _plain_projection(body)
    elif name == "$group":
        out.tail = "group"
        out.group_key, out.group_fields = _distinct_group(body)
    else:
        raise Unsupported(f"the pipeline stage {name} after the query prefix is not modelled (modelled: leading "
                          "$match, $sort with $limit, then nothing, $project, $count or a $group on one field)")


def _plain_projection(body: Any) -> dict[str, Any]:
    if not isinstance(body, Mapping) or not body:
        raise Unsupported("$project needs a non-empty document")
    for name, value in body.items():
        if isinstance(value, bool) or (isinstance(value, (int, float)) and value in (0, 1)):
            continue
        raise Unsupported(f"$project of {name!r} computes a value (only field inclusion is modelled)")
    return dict(body)


def _distinct_group(body: Any) -> tuple[str, list[str]]:
    """The field of ``{$group: {_id: "$field", x: {$first: "$other"}, ...}}`` and the fields its ``$first``
    accumulators read: a DISTINCT_SCAN candidate (other accumulators are not)."""
    if not isinstance(body, Mapping) or "_id" not in body:
        raise Unsupported("a $group needs an _id")
    key = _field_path(body["_id"])
    if key is None:
        raise Unsupported("a $group whose _id is not one field path is not modelled")
    fields = []
    for name, accumulator in body.items():
        if name == "_id":
            continue
        operand = accumulator.get("$first") if isinstance(accumulator, Mapping) and len(accumulator) == 1 else None
        path = _field_path(operand)
        if path is None:
            raise Unsupported("a $group with accumulators other than $first of a field runs in the slot-based "
                              "engine on 7.0+ defaults (not modelled)")
        fields.append(path)
    return key, fields


def _field_path(expression: Any) -> str | None:
    if not isinstance(expression, str) or not expression.startswith("$") or expression.startswith("$$"):
        return None
    return expression[1:] or None


def explain_aggregate(estimator: Sample, query: WhatIfQuery, specs: list[IndexSpec],
                      hint: IndexSpec | str | None) -> dict[str, Any]:
    """The query layer's plan for an aggregation, with ``pipeline`` naming the stages left after it."""
    pushed = push_down(query.pipeline or ())
    if pushed.transforms and any(spec.fields != ("_id",) for spec in specs):
        raise Unsupported("a pipeline with transformation stages before its $sort/$limit is modelled over a "
                          "collection scan only (the query's projection from the pipeline's dependencies is not)")
    inner = replace(query, command="find", filter=pushed.filter, sort=pushed.sort, limit=pushed.limit,
                    projection=pushed.projection, skip=None, pipeline=None)
    if pushed.tail == "group":
        inner = replace(inner, command="distinct", key=pushed.group_key, projection=None)
        explainer = Explainer(estimator, inner, specs, hint, strict_distinct=True, group_fields=pushed.group_fields)
        result = explainer.run_group()
    else:
        explainer = Explainer(estimator, inner, specs, hint, count_like=pushed.tail == "count")
        result = explainer.run()
    if "nReturned" in result:
        result["pipeline"] = ["$cursor", *pushed.later]
    return result
