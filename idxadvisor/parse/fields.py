"""Every server spelling of a slow-operation field, in one table.

The same counter is ``durationMillis`` in a 4.4+ log, ``millis`` in ``system.profile``, the trailing ``<N>ms`` of a text
line; ``nscanned`` before 3.2 and ``keysExamined`` after. Parsers look each name up here and never spell a server
field themselves.

Values are checked and converted by kind: a JSON log already holds numbers, so the common case is a type check; a
text log holds strings, and a malformed line may hold anything, which must never reach the statistics.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from idxadvisor.models.events import Event
from idxadvisor.models.values import as_bool, as_float, as_int

INT, FLOAT, BOOL, STR = "int", "float", "bool", "str"

#: server field name -> (Event attribute, kind). Only what the analysis reads: counters a report does not use
#: (cpuNanos, planningTimeMicros, nModified ...) stay in the log.
FIELD_ALIASES: dict[str, tuple[str, str]] = {
    "durationMillis": ("duration_ms", FLOAT),
    "millis": ("duration_ms", FLOAT),
    "keysExamined": ("keys_examined", INT),
    "nscanned": ("keys_examined", INT),
    "docsExamined": ("docs_examined", INT),
    "nscannedObjects": ("docs_examined", INT),
    "nreturned": ("nreturned", INT),
    "nReturned": ("nreturned", INT),
    "nMatched": ("n_matched", INT),
    "nmatched": ("n_matched", INT),
    "ndeleted": ("n_deleted", INT),
    "nDeleted": ("n_deleted", INT),
    "ninserted": ("n_inserted", INT),
    "nInserted": ("n_inserted", INT),
    "planSummary": ("plan_summary", STR),
    "hasSortStage": ("has_sort_stage", BOOL),
    "scanAndOrder": ("has_sort_stage", BOOL),
    "usedDisk": ("used_disk", BOOL),
    # 8.x counts each stage's spills (and 8.1+ their bytes) where older servers only said usedDisk; any of them
    # non-zero means the operation spilled to disk (the digest counts it as usedDisk)
    **{name: ("spills", INT) for name in ("sortSpills", "sortSpilledBytes", "sortSpillBytes", "groupSpills",
                                          "groupSpilledBytes", "setWindowFieldsSpills", "graphLookupSpills",
                                          "hashLookupSpills", "bucketAutoSpills", "textOrSpills")},
    "appName": ("app_name", STR),
    "remote": ("remote", STR),
    "client": ("remote", STR),
    "queryHash": ("query_hash", STR),
    "planCacheShapeHash": ("plan_cache_shape_hash", STR),
    "queryShapeHash": ("query_shape_hash", STR),
    "planCacheKey": ("plan_cache_key", STR),
    "numYields": ("num_yields", INT),
    "numYield": ("num_yields", INT),
    "reslen": ("response_length", INT),
    "responseLength": ("response_length", INT),
    "replanned": ("replanned", BOOL),
    "errMsg": ("error", STR),
    "exception": ("error", STR),
    "errName": ("error", STR),
}

#: The longest duration taken as real: about 31 years. Anything longer, negative or not finite is a damaged value.
MAX_DURATION_MS = 1e12
#: The largest counter taken as real: the server counts in 64-bit integers. A larger or negative one is damaged (a
#: 400-digit "keysExamined" would make every ratio computed from it overflow a float).
MAX_COUNTER = 2**64 - 1
#: Timestamps outside these bounds are damaged values (a year 1 or 9999 date breaks date arithmetic later on).
EARLIEST = datetime(1970, 1, 1, tzinfo=timezone.utc)
LATEST = datetime(9999, 1, 1, tzinfo=timezone.utc)
_YEARS_IN_BOUNDS = range(EARLIEST.year + 1, LATEST.year - 1)


def _string(value: Any) -> str | None:
    if isinstance(value, (dict, list)):
        return None
    text = str(value)
    return text or None


_CONVERTERS = {INT: as_int, FLOAT: as_float, BOOL: as_bool, STR: _string}
_ACCEPTED = {INT: (int,), FLOAT: (int, float), BOOL: (bool,), STR: (str,)}  # bool is not an int here: type() is
_KIND_OF_ATTRIBUTE = {attribute: kind for attribute, kind in FIELD_ALIASES.values()}
_ATTRIBUTE_OF_NAME = {name: attribute for name, (attribute, _) in FIELD_ALIASES.items()}
_EXPECTED = {attribute: _ACCEPTED[kind] for attribute, kind in _KIND_OF_ATTRIBUTE.items()}
_INTEGERS = _ACCEPTED[INT]


def read_fields(values: Mapping[str, Any]) -> dict[str, Any]:
    """The Event attributes that ``values`` holds under any server name, each converted to its kind.

    A value of the wrong kind is converted (``"12"`` → 12) or dropped (``{}`` for a counter), never passed on.
    Values already of their kind (all of them, in a line the server wrote) cost one type check each. A duration
    that cannot be real (negative, not finite, over ``MAX_DURATION_MS``) or a counter outside 0 … ``MAX_COUNTER``
    is dropped, and ``problem`` says so.
    """
    names = _ATTRIBUTE_OF_NAME
    found = {names[name]: value for name, value in values.items() if name in names and value is not None}
    expected, integers = _EXPECTED, _INTEGERS
    for attribute, value in found.items():
        kinds = expected[attribute]
        if type(value) not in kinds or (kinds is integers and not 0 <= value <= MAX_COUNTER):
            found = _converted(found)
            break
    if "duration_ms" not in found and any(values.get(name, 0) is None for name in _DURATION_NAMES):
        found["duration_ms"] = None  # "durationMillis": null
        found["problem"] = unusable_duration(None)
    return _checked_duration(found)


_DURATION_NAMES = tuple(name for name, (attribute, _) in FIELD_ALIASES.items() if attribute == "duration_ms")


def _checked_duration(found: dict[str, Any]) -> dict[str, Any]:
    """A duration that cannot be real becomes unknown (None, never 0: a shape's percentiles leave it out), and a
    counted problem."""
    duration = found.get("duration_ms")
    if duration is not None and not 0 <= duration <= MAX_DURATION_MS:
        found["duration_ms"] = None
        found["problem"] = unusable_duration(duration)
    return found


#: For each key sequence of a JSON log's ``attr`` met so far: its aliased names in order, with each one's attribute,
#: accepted types and whether it is a counter. A server writes the same keys in the same order for one kind of entry,
#: so a log has a few dozen sequences. Bounded (5 MB at most): cleared when full; an ``attr`` of many keys, or of
#: long ones, is not remembered.
_LAYOUTS: dict[tuple[str, ...], tuple[tuple[str, str, tuple[type, ...], bool], ...]] = {}
LAYOUT_ENTRIES = 256
LAYOUT_KEY_LIMIT = 64
LAYOUT_TEXT_LIMIT = 4096  # characters in all the keys of one sequence


def read_entry_fields(attr: dict[str, Any]) -> dict[str, Any]:
    """``read_fields(attr)`` for a JSON log entry's ``attr``, with the aliased names found by its key sequence (one
    look-up) rather than by testing every key. Any value not already of its kind takes ``read_fields`` itself."""
    if len(attr) > LAYOUT_KEY_LIMIT:
        return read_fields(attr)
    keys = tuple(attr)
    layout = _LAYOUTS.get(keys)
    if layout is None:
        layout = _layout(keys)
    found: dict[str, Any] = {}
    for name, attribute, kinds, counter in layout:
        value = attr[name]
        if value is None:
            if attribute == "duration_ms":
                return read_fields(attr)
            continue
        if type(value) not in kinds or (counter and not 0 <= value <= MAX_COUNTER):
            return read_fields(attr)
        found[attribute] = value
    duration = found.get("duration_ms")  # _checked_duration, inlined: this runs for every JSON slow-query line
    if duration is not None and not 0 <= duration <= MAX_DURATION_MS:
        found["duration_ms"] = None
        found["problem"] = unusable_duration(duration)
    return found


def _layout(keys: tuple[str, ...]) -> tuple[tuple[str, str, tuple[type, ...], bool], ...]:
    names = _ATTRIBUTE_OF_NAME
    layout = tuple((name, names[name], _EXPECTED[names[name]], _EXPECTED[names[name]] is _INTEGERS)
                   for name in keys if name in names)
    if sum(map(len, keys)) <= LAYOUT_TEXT_LIMIT:
        if len(_LAYOUTS) >= LAYOUT_ENTRIES:
            _LAYOUTS.clear()
        _LAYOUTS[keys] = layout
    return layout


def _converted(found: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for attribute, value in found.items():
        kind = _KIND_OF_ATTRIBUTE[attribute]
        original = value
        if kind == FLOAT and type(value) not in _ACCEPTED[kind]:
            value = None if isinstance(value, bool) else as_float(value)  # true is not 1 ms
            if value is None:  # "abc", [], {}: the duration is unknown, and the line has a problem
                result[attribute] = None
                result["problem"] = unusable_duration(original)
                continue
        if type(value) not in _ACCEPTED[kind]:
            value = None if kind == INT and isinstance(value, bool) else _CONVERTERS[kind](value)  # true is not 1
        if kind == INT and (value is None or not 0 <= value <= MAX_COUNTER):
            text = str(original)
            result["problem"] = f"counter is not a usable number ({text[:20]}{'…' if len(text) > 20 else ''})"
            continue
        if value is not None:
            result[attribute] = value
    return result


def apply_fields(event: Event, values: Mapping[str, Any]) -> None:
    """Copy every known field of ``values`` onto ``event``, converted to its kind (unknown names are ignored)."""
    event.__dict__.update(read_fields(values))


def duration(value: Any) -> float | None:
    """A duration in milliseconds from any spelling of a number; None when it cannot be a real one."""
    number = as_float(value)
    return number if number is not None and 0 <= number <= MAX_DURATION_MS else None


def unusable_duration(value: Any) -> str:
    """The problem reason for a duration that cannot be real."""
    text = value if isinstance(value, str) else "null" if value is None else repr(value)
    return f"duration is not a usable number of milliseconds ({text[:40]})"


def checked_timestamp(stamp: datetime) -> datetime | None:
    """``stamp`` (naive means UTC), or None when it lies outside 1970–9999: a damaged timestamp is a missing one.

    Comparing aware datetimes is slow when their offsets differ, so the year answers where it is enough: a UTC offset
    is under a day, so a stamp of a year strictly between the bounds' years (but the last, which a negative offset can
    push to the upper bound) is inside them whatever its offset."""
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=timezone.utc)
    elif stamp.year in _YEARS_IN_BOUNDS:
        return stamp
    return stamp if EARLIEST <= stamp < LATEST else None
