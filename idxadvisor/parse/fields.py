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

#: Fields kept in ``Event.extra`` (shown in reports, not used by the analysis).
EXTRA_FIELDS = ("replanReason", "queryFramework", "nBatches", "cursorExhausted", "writeConflicts", "errCode",
                "protocol")

_PLAN = tuple((name, attribute, kind) for name, (attribute, kind) in FIELD_ALIASES.items())


def _string(value: Any) -> str | None:
    if isinstance(value, (dict, list)):
        return None
    text = str(value)
    return text or None


_CONVERTERS = {INT: as_int, FLOAT: as_float, BOOL: as_bool, STR: _string}
_NATIVE = {INT: int, FLOAT: int, BOOL: bool, STR: str}  # types that need no conversion (a float duration is fine too)


def apply_fields(event: Event, values: Mapping[str, Any]) -> None:
    """Copy every known field of ``values`` onto ``event``, converted to its kind (unknown names are ignored)."""
    get = values.get
    for name, attribute, kind in _PLAN:
        value = get(name)
        if value is None:
            continue
        if type(value) is not _NATIVE[kind] and not (kind == FLOAT and type(value) is float):
            value = _CONVERTERS[kind](value)
            if value is None:
                continue
        setattr(event, attribute, value)
    extra = None
    for name in EXTRA_FIELDS:
        value = get(name)
        if value is not None:
            if extra is None:
                extra = event.extra
            extra[name] = value
