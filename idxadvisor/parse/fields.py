"""Every server spelling of a slow-operation field, in one table.

The same counter is ``durationMillis`` in a 4.4+ log, ``millis`` in ``system.profile``, the trailing ``<N>ms`` of a text
line; ``nscanned`` before 3.2 and ``keysExamined`` after. Parsers look each name up here and never spell a server
field themselves.

Values are checked and converted by kind: a JSON log already holds numbers, so the common case is a type check; a
text log holds strings, and a malformed line may hold anything, which must never reach the statistics.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from idxadvisor.models.events import Event
from idxadvisor.models.values import as_bool, as_float, as_int

INT, FLOAT, BOOL, STR = "int", "float", "bool", "str"

#: server field name -> (Event attribute, kind)
FIELD_ALIASES: dict[str, tuple[str, str]] = {
    "durationMillis": ("duration_ms", FLOAT),
    "millis": ("duration_ms", FLOAT),
    "workingMillis": ("working_ms", FLOAT),
    "keysExamined": ("keys_examined", INT),
    "nscanned": ("keys_examined", INT),
    "docsExamined": ("docs_examined", INT),
    "nscannedObjects": ("docs_examined", INT),
    "nreturned": ("nreturned", INT),
    "nReturned": ("nreturned", INT),
    "nMatched": ("n_matched", INT),
    "nmatched": ("n_matched", INT),
    "nModified": ("n_modified", INT),
    "nmodified": ("n_modified", INT),
    "nupdated": ("n_modified", INT),
    "ndeleted": ("n_deleted", INT),
    "nDeleted": ("n_deleted", INT),
    "ninserted": ("n_inserted", INT),
    "nInserted": ("n_inserted", INT),
    "nUpserted": ("n_upserted", INT),
    "upserted": ("n_upserted", INT),
    "numYields": ("num_yields", INT),
    "numYield": ("num_yields", INT),
    "reslen": ("reslen", INT),
    "responseLength": ("reslen", INT),
    "planSummary": ("plan_summary", STR),
    "hasSortStage": ("has_sort_stage", BOOL),
    "scanAndOrder": ("has_sort_stage", BOOL),
    "usedDisk": ("used_disk", BOOL),
    "fromMultiPlanner": ("from_multi_planner", BOOL),
    "fromPlanCache": ("from_plan_cache", BOOL),
    "replanned": ("replanned", BOOL),
    "planningTimeMicros": ("planning_micros", INT),
    "cpuNanos": ("cpu_nanos", INT),
    "appName": ("app_name", STR),
    "remote": ("client", STR),
    "client": ("client", STR),
    "queryHash": ("query_hash", STR),
    "planCacheKey": ("plan_cache_key", STR),
    "planCacheShapeHash": ("plan_cache_shape_hash", STR),
    "queryShapeHash": ("query_shape_hash", STR),
    "errMsg": ("error", STR),
    "exception": ("error", STR),
    "errName": ("error", STR),  # after errMsg: the name wins when both are logged
}

#: The fields the analysis uses, in the spellings a 4.4+ JSON log (and the profiler) writes them: the hot path looks
#: up only these. Counters a report does not use (numYields, cpuNanos, planningTimeMicros ...) stay in the log.
JSON_LOG_NAMES = frozenset({
    "durationMillis", "workingMillis", "keysExamined", "docsExamined", "nreturned", "nMatched", "nModified", "ndeleted",
    "reslen", "planSummary", "hasSortStage", "usedDisk", "appName", "queryHash", "planCacheShapeHash",
    "queryShapeHash", "errName",
})


def _string(value: Any) -> str | None:
    if isinstance(value, (dict, list)):
        return None
    text = str(value)
    return text or None


_CONVERTERS = {INT: as_int, FLOAT: as_float, BOOL: as_bool, STR: _string}
_ACCEPTED = {INT: (int,), FLOAT: (int, float), BOOL: (bool,), STR: (str,)}  # bool is not an int here: type() is
_KIND_OF_ATTRIBUTE = {attribute: kind for attribute, kind in FIELD_ALIASES.values()}

Plan = tuple[tuple[str, str], ...]
ALL_NAMES: Plan = tuple((name, attribute) for name, (attribute, _) in FIELD_ALIASES.items())
JSON_NAMES: Plan = tuple(item for item in ALL_NAMES if item[0] in JSON_LOG_NAMES)
_PLAN_MAPS = {ALL_NAMES: dict(ALL_NAMES), JSON_NAMES: dict(JSON_NAMES)}


_EXPECTED = {attribute: _ACCEPTED[kind] for attribute, kind in _KIND_OF_ATTRIBUTE.items()}


def read_fields(values: Mapping[str, Any], plan: Plan = ALL_NAMES) -> dict[str, Any]:
    """The Event attributes that ``values`` holds under the plan's server names, each converted to its kind.

    A value of the wrong kind is converted (``"12"`` → 12) or dropped (``{}`` for a counter), never passed on.
    Values already of their kind (all of them, in a line the server wrote) cost one type check each.
    """
    names = _PLAN_MAPS[plan]
    found = {names[name]: value for name, value in values.items() if name in names and value is not None}
    expected = _EXPECTED
    for attribute, value in found.items():
        if type(value) not in expected[attribute]:
            return _converted(found)
    return found


def _converted(found: dict[str, Any]) -> dict[str, Any]:
    result = {}
    for attribute, value in found.items():
        kind = _KIND_OF_ATTRIBUTE[attribute]
        if type(value) not in _ACCEPTED[kind]:
            value = _CONVERTERS[kind](value)
            if value is None:
                continue
        result[attribute] = value
    return result


def apply_fields(event: Event, values: Mapping[str, Any], plan: Plan = ALL_NAMES) -> None:
    """Copy every known field of ``values`` onto ``event``, converted to its kind (unknown names are ignored)."""
    event.__dict__.update(read_fields(values, plan))
