"""Take every literal value out of a command, keeping what the estimator replays and what a shape is made of.

A workload file stores each shape's representative command (the query ``whatif/evidence.py`` replays over a
``--data`` sample), so it must hold the command's structure but none of its values. Values become ``"###"``, the
marker mongod writes under ``redactClientLogData``, which the evidence code already fills from the sample:

* filters (``filter``, ``query``, ``q``, a pipeline's ``$match``, ``arrayFilters``): field names and operators stay,
  every value goes, a whole ``$in``/``$nin``/``$all`` list becomes one ``"###"``, an embedded document or an
  Extended JSON value (``{"$oid": …}``) is one value; a regex keeps what its shape and the rules read of it and no
  more: its flags, and whether it has a prefix an index seeks to (``^###``), is anchored without one (``^(?:###)``,
  such as ``/^a/i``) or is not anchored (``###``);
* updates (``u``, ``update``): operators and field names stay, values go; a replacement document keeps its field
  names only;
* expressions (``$expr``, projections with expressions, pipeline stages other than the leading ``$match``/``$sort``/
  ``$limit``/``$skip``): field paths (``"$status"``) and operator names stay, constants go (but the ``1`` of the
  counting accumulator ``{$sum: 1}``, which a shape records as ``count``);
* kept as they are: the collection name, ``sort``, ``hint``, ``collation``, ``limit``, ``skip``, ``batchSize`` and
  the write flags (``multi``, ``upsert``, ``new``, ``remove``, ``ordered``), a projection's inclusion flags, the
  ``key`` of a distinct;
* everything else (``documents`` of an insert, ``let``, ``comment``, ``lsid``, ``$clusterTime``, …) is dropped.
"""

from __future__ import annotations

from typing import Any

from idxadvisor.models.values import is_extended_json_value
from idxadvisor.shapes.shape import regex_prefix

REDACTED = "###"

_FILTER_KEYS = frozenset({"filter", "query", "q"})
_KEPT_KEYS = frozenset({"sort", "hint", "collation", "limit", "skip", "batchSize", "multi", "upsert", "new", "remove",
                        "ordered", "singleBatch", "allowDiskUse", "key"})
_LOGICAL = frozenset({"$and", "$or", "$nor"})
_KEPT_STAGES = frozenset({"$sort", "$limit", "$skip", "$count"})


def redact_command(command: dict[str, Any]) -> dict[str, Any]:
    """The command with every literal value replaced by ``"###"`` and every key it does not need dropped."""
    redacted: dict[str, Any] = {}
    for position, (key, value) in enumerate(command.items()):
        if position == 0 and not key.startswith("$") and key not in _FILTER_KEYS and key not in ("u", "update"):
            redacted[key] = value if isinstance(value, (str, int, float)) else REDACTED  # the collection name
        elif key in _FILTER_KEYS:
            redacted[key] = redact_filter(value)
        elif key == "pipeline":
            redacted[key] = [_redact_stage(stage) for stage in value] if type(value) is list else REDACTED
        elif key in ("u", "update"):
            redacted[key] = _redact_update(value)
        elif key in ("updates", "deletes"):
            redacted[key] = [redact_command(item) if type(item) is dict else REDACTED
                             for item in (value if type(value) is list else [])]
        elif key == "arrayFilters":
            redacted[key] = [redact_filter(item) for item in value] if type(value) is list else REDACTED
        elif key in ("projection", "fields"):
            redacted[key] = _redact_projection(value)
        elif key in _KEPT_KEYS:
            redacted[key] = value
    return redacted


def redact_filter(value: Any) -> Any:
    """A query filter with its structure and without its values."""
    if type(value) is not dict:
        return REDACTED
    redacted: dict[str, Any] = {}
    for key, item in value.items():
        if key in _LOGICAL:
            redacted[key] = [redact_filter(branch) for branch in item] if type(item) is list else REDACTED
        elif key == "$expr":
            redacted[key] = redact_expression(item)
        elif key.startswith("$"):  # $text, $where, $jsonSchema, $comment …: all values
            redacted[key] = REDACTED
        else:
            redacted[key] = _redact_condition(item)
    return redacted


def redact_regex(pattern: Any, options: Any = "") -> str:
    """A placeholder pattern of the same kind as ``pattern``: one with a seekable prefix, anchored without one, or not
    anchored (see the module's doc)."""
    if type(pattern) is not str:
        return REDACTED
    flags = options if type(options) is str else ""
    if regex_prefix(pattern, flags):
        return "^" + REDACTED
    if pattern.startswith(("^", "\\A")):
        return "^(?:" + REDACTED + ")"
    return REDACTED


def _redact_condition(value: Any) -> Any:
    """The condition on one field: an operator document keeps its operators, anything else is one value."""
    if type(value) is dict and type(value.get("$regularExpression")) is dict and len(value) == 1:
        inner = value["$regularExpression"]
        return {"$regularExpression": {"pattern": redact_regex(inner.get("pattern"), inner.get("options", "")),
                                       "options": inner.get("options", "")}}
    if type(value) is not dict or not value or is_extended_json_value(value) or not next(iter(value)).startswith("$"):
        return REDACTED
    redacted: dict[str, Any] = {}
    for operator, operand in value.items():
        if operator == "$regex":
            redacted[operator] = redact_regex(operand, value.get("$options", ""))
        elif operator == "$options" and type(operand) is str:
            redacted[operator] = operand  # flags, not a value
        elif operator == "$elemMatch":
            redacted[operator] = (redact_filter(operand) if _is_sub_filter(operand) else _redact_condition(operand))
        elif operator == "$not":
            redacted[operator] = _redact_condition(operand)
        else:  # a value, or a whole $in/$nin/$all list as one value
            redacted[operator] = REDACTED
    return redacted


def _is_sub_filter(value: Any) -> bool:
    """An ``$elemMatch`` over sub-documents (field names) rather than over values (operators only)."""
    return type(value) is dict and any(not key.startswith("$") or key in _LOGICAL for key in value)


def redact_expression(value: Any) -> Any:
    """An aggregation expression: operators, field paths (``"$a"``) and variables (``"$$NOW"``) stay, constants go."""
    if type(value) is dict:
        if is_extended_json_value(value):
            return REDACTED
        if len(value) == 1 and type(value.get("$sum")) is int:  # {$sum: 1}: the counting idiom, not a value
            return dict(value)
        return {key: (REDACTED if key == "$literal" else redact_expression(item)) for key, item in value.items()}
    if type(value) is list:
        return [redact_expression(item) for item in value]
    if type(value) is str and value.startswith("$"):
        return value
    return REDACTED


def _redact_update(value: Any) -> Any:
    if type(value) is list:  # a pipeline update
        return [_redact_stage(stage) for stage in value]
    if type(value) is not dict:
        return REDACTED
    if value and next(iter(value)).startswith("$"):
        return {operator: ({name: REDACTED for name in fields} if type(fields) is dict else REDACTED)
                for operator, fields in value.items()}
    return {name: REDACTED for name in value}  # a replacement document


def _redact_projection(value: Any) -> Any:
    if type(value) is not dict:
        return REDACTED
    return {name: (flag if isinstance(flag, (bool, int, float)) else redact_expression(flag))
            for name, flag in value.items()}


def _redact_stage(stage: Any) -> Any:
    if type(stage) is not dict or not stage:
        return REDACTED
    name, body = next(iter(stage.items()))
    if name == "$match":
        return {name: redact_filter(body)}
    if name in _KEPT_STAGES:
        return {name: body}
    return {name: redact_expression(body)}
