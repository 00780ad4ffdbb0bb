"""Values inside command documents: relaxed Extended JSON in memory, real BSON types on request."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any


#: The keys that make a one- or two-key dict an Extended JSON *value* rather than a sub-document or an operator.
#: ``$regex``/``$options`` and ``$type`` are missing on purpose: in a filter they are query operators.
EXTENDED_JSON_MARKERS = frozenset(
    {
        "$oid",
        "$date",
        "$numberInt",
        "$numberLong",
        "$numberDouble",
        "$numberDecimal",
        "$binary",
        "$uuid",
        "$timestamp",
        "$regularExpression",
        "$minKey",
        "$maxKey",
        "$undefined",
        "$symbol",
        "$code",
        "$dbPointer",
    }
)



def is_extended_json_value(value: Any) -> bool:
    """True for ``{"$oid": ...}``, ``{"$date": ...}`` and the other one-value wrappers (and ``{"$code", "$scope"}``)."""
    if type(value) is not dict or not value or len(value) > 2:
        return False
    return next(iter(value)) in EXTENDED_JSON_MARKERS


def decode_extended_json(value: Any) -> Any:
    """Turn relaxed or canonical Extended JSON structures into BSON types (ObjectId, datetime, Regex, Int64...)."""
    hook, options = _decoder()
    return _decode(value, hook, options)


def _decode(value: Any, hook: Any, options: Any) -> Any:
    if isinstance(value, Mapping):
        return hook({key: _decode(item, hook, options) for key, item in value.items()}, options)
    if isinstance(value, list):
        return [_decode(item, hook, options) for item in value]
    return value


@functools.cache
def _decoder() -> tuple[Any, Any]:
    """bson's Extended JSON hook, imported on first use: reading logs never needs it."""
    from bson import json_util
    from bson.binary import UuidRepresentation

    options = json_util.JSONOptions(json_mode=json_util.JSONMode.RELAXED, tz_aware=True,
                                    uuid_representation=UuidRepresentation.STANDARD)
    return json_util.object_hook, options


def as_int(value: Any) -> int | None:
    """An integer counter from a number, a numeric string, or ``{"$numberLong": "5"}``; None when it is not one."""
    if type(value) is int:
        return value
    if type(value) is str:  # a text log's counters
        return _int_of_text(value)
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):  # bson's Int64, as pymongo and the shell-document parser give NumberLong
        return int(value)
    if isinstance(value, float):
        return int(value) if value == value and abs(value) != float("inf") else None
    if isinstance(value, dict) and len(value) == 1:
        (marker, inner), = value.items()
        if marker in ("$numberInt", "$numberLong", "$numberDouble"):
            return as_int(inner)
        return None
    if isinstance(value, str):
        return _int_of_text(value)
    return None


def _int_of_text(value: str) -> int | None:
    try:
        return int(value)
    except ValueError:
        try:
            return as_int(float(value))
        except ValueError:
            return None


def as_float(value: Any) -> float | None:
    if type(value) in (int, float) and not isinstance(value, bool):
        return float(value)
    number = as_int(value) if not isinstance(value, str) else None
    if number is not None:
        return float(number)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    if isinstance(value, dict) and len(value) == 1 and "$numberDouble" in value:
        return as_float(value["$numberDouble"])
    return None


def as_bool(value: Any) -> bool:
    """Server flags: ``true``, ``1`` (text logs), ``"1"``, ``{"$numberInt": "1"}``."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true")
    number = as_int(value)
    return bool(number)


def as_datetime(value: Any) -> datetime | None:
    """A moment as a server reply or relaxed Extended JSON gives it: a ``datetime``, an ISO 8601 string, or
    ``{"$date": ISO string or milliseconds}``; UTC when it names no offset; None for anything else."""
    if isinstance(value, Mapping) and len(value) == 1 and "$date" in value:
        value = value["$date"]
        if isinstance(value, Mapping):  # canonical: {"$date": {"$numberLong": "…"}}
            value = as_int(value)
        if isinstance(value, int) and not isinstance(value, bool):
            return datetime.fromtimestamp(value / 1000, tz=timezone.utc)
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
    if not isinstance(value, datetime):
        return None
    return value if value.tzinfo is not None else value.replace(tzinfo=timezone.utc)
