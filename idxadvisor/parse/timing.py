"""Where an operation's time went, as the server logged it: the components of a slow-query entry's time.

Read only when a line carries one of them (``TIMING_KEYS``): most lines of most logs have none, so the hot path pays
one set test. Every value is validated (a number, not negative, finite, at most ``MAX_COMPONENT``): a bad one is left
out (the component is unknown, never 0) and named in the problem returned. Absent means unknown; a component is only
ever 0 when the server wrote 0. Times are converted to milliseconds.

Names (``Event.timing`` keys), from the JSON log's ``attr`` (4.4+; see docs/time-breakdown.md for the versions):
``working_ms`` (workingMillis), ``queued_ms`` (queues.execution.totalTimeQueuedMicros), ``ingress_queued_ms``
(queues.ingress.totalTimeQueuedMicros), ``admissions`` (queues.execution.admissions), ``disk_read_ms``
(storage.data.timeReadingMicros), ``bytes_read`` (storage.data.bytesRead), ``lock_wait_ms``
(locks.*.timeAcquiringMicros, summed over resources and modes), ``flow_control_ms`` (flowControl.timeAcquiringMicros), ``oplog_slot_ms``
(totalOplogSlotDurationMicros), ``write_concern_ms`` (waitForWriteConcernDurationMillis), ``write_conflicts``
(writeConflicts), ``planning_ms`` (planningTimeMicros), ``cpu_ms`` (cpuNanos).
"""

from __future__ import annotations

import re
from typing import Any

TIMING_KEYS = frozenset({"workingMillis", "queues", "storage", "locks", "flowControl", "totalOplogSlotDurationMicros",
                         "waitForWriteConcernDurationMillis", "writeConflicts", "planningTimeMicros", "cpuNanos"})
MAX_COMPONENT = 1e15  # far above any real value (a year in microseconds is 3e13): past it, a value is damaged

#: top-level attr name -> (component, factor to milliseconds or 1 for counts)
_FLAT = (("workingMillis", "working_ms", 1.0), ("totalOplogSlotDurationMicros", "oplog_slot_ms", 1e-3),
         ("waitForWriteConcernDurationMillis", "write_concern_ms", 1.0), ("writeConflicts", "write_conflicts", 1.0),
         ("planningTimeMicros", "planning_ms", 1e-3), ("cpuNanos", "cpu_ms", 1e-6))
_QUEUES = (("execution", "totalTimeQueuedMicros", "queued_ms", 1e-3), ("ingress", "totalTimeQueuedMicros",
                                                                       "ingress_queued_ms", 1e-3),
           ("execution", "admissions", "admissions", 1.0))
_STORAGE = (("timeReadingMicros", "disk_read_ms", 1e-3), ("bytesRead", "bytes_read", 1.0))
_NUMBERS = (int, float)


def _valid(value: Any) -> bool:
    return type(value) in _NUMBERS and 0 <= value <= MAX_COMPONENT  # NaN fails the comparison


_EXTENDED = frozenset({"$numberLong", "$numberInt", "$numberDouble"})


def _extended_number(value: Any) -> float | None:
    """A component as a number in range: plain (a log line), or canonical Extended JSON (``{"$numberLong": "12"}``,
    in profiler documents exported as such); None when it is neither."""
    if type(value) in _NUMBERS:
        return value if 0 <= value <= MAX_COMPONENT else None
    if type(value) is dict and len(value) == 1:
        (marker, text), = value.items()
        if marker in _EXTENDED and type(text) is str:
            try:
                number = float(text)
            except ValueError:
                return None
            return number if 0 <= number <= MAX_COMPONENT else None
    return None


def read_timing(attr: dict[str, Any]) -> tuple[dict[str, float] | None, str | None]:
    """The time components ``attr`` holds (None when it holds none), and a problem naming the first damaged one.

    On the hot path of JSON logs (most 4.4+ lines have ``locks``, many ``storage`` and ``cpuNanos``): plain loops
    over a few names, no function call per value."""
    if TIMING_KEYS.isdisjoint(attr):
        return None, None
    timing: dict[str, float] = {}
    damaged: str | None = None
    get = attr.get
    for source, name, factor in _FLAT:
        value = get(source)
        if value is not None:
            if type(value) in _NUMBERS and 0 <= value <= MAX_COMPONENT:
                timing[name] = value * factor
            elif (number := _extended_number(value)) is not None:
                timing[name] = number * factor
            elif damaged is None:
                damaged = source
    queues = get("queues")
    if type(queues) is dict:
        for queue, leaf, name, factor in _QUEUES:
            inner = queues.get(queue)
            if type(inner) is dict and leaf in inner:
                value = inner[leaf]
                if type(value) in _NUMBERS and 0 <= value <= MAX_COMPONENT:
                    timing[name] = value * factor
                elif (number := _extended_number(value)) is not None:
                    timing[name] = number * factor
                elif damaged is None:
                    damaged = f"queues.{queue}.{leaf}"
    storage = get("storage")
    data = storage.get("data") if type(storage) is dict else None
    if type(data) is dict:
        for leaf, name, factor in _STORAGE:
            if leaf in data:
                value = data[leaf]
                if type(value) in _NUMBERS and 0 <= value <= MAX_COMPONENT:
                    timing[name] = value * factor
                elif (number := _extended_number(value)) is not None:
                    timing[name] = number * factor
                elif damaged is None:
                    damaged = f"storage.data.{leaf}"
    locks = get("locks")
    if type(locks) is dict:
        waited = _lock_waits(locks)
        if type(waited) is str:
            damaged = damaged or waited
        elif waited is not None:
            timing["lock_wait_ms"] = waited * 1e-3
    flow = get("flowControl")
    if type(flow) is dict and "timeAcquiringMicros" in flow:
        value = _extended_number(flow["timeAcquiringMicros"])
        if value is not None:
            timing["flow_control_ms"] = value * 1e-3
        elif damaged is None:
            damaged = "flowControl.timeAcquiringMicros"
    problem = f"a damaged time component ({damaged})" if damaged is not None else None
    return (timing or None), problem


def _lock_waits(locks: dict[str, Any]) -> float | str | None:
    """The microseconds waited for every lock resource and mode together; the name of a damaged value; None when no
    resource logged a wait."""
    total: float | None = None
    for resource, counters in locks.items():
        if type(counters) is not dict or "timeAcquiringMicros" not in counters:
            continue
        by_mode = counters["timeAcquiringMicros"]
        if type(by_mode) is dict and len(by_mode) == 1 and next(iter(by_mode)).startswith("$"):
            by_mode = {"": by_mode}  # one Extended JSON number ({"$numberLong": ...}), not a document of modes
        for value in (by_mode.values() if type(by_mode) is dict else (by_mode,)):
            number = _extended_number(value)
            if number is None:
                return f"locks.{resource}.timeAcquiringMicros"
            total = (total or 0.0) + number
    return total

#: Text logs (3.0 to 4.2) write a few of the components among their counters: ``writeConflicts:N``, the lock documents'
#: ``timeAcquiringMicros: { w: N }`` and, from 4.0, ``storage:{ data: { bytesRead: N, timeReadingMicros: N } }``.
TEXT_MARKERS = ("writeConflicts:", "timeAcquiringMicros", "storage:")
_TEXT_LOCK_WAITS = re.compile(r"(\w+): ?\{ (?:[^{}]|\{[^{}]*\})*?timeAcquiringMicros: (\{ [^{}]* \}|[^\s,}]+)")
_TEXT_MODE = re.compile(r"\w+: (\S+?)(?:,| \})")
_TEXT_STORAGE = re.compile(r"\b(bytesRead|timeReadingMicros): (\S+?)(?:,| \})")


def read_text_timing(text: str, values: dict[str, str]) -> tuple[dict[str, float] | None, str | None]:
    """The components among a text line's counters (``values``: its ``name:value`` pairs; ``text``: the counters'
    text, for the documents of locks and storage), and a problem naming the first damaged one."""
    timing: dict[str, float] = {}
    damaged: list[str] = []

    def put(name: str, source: str, raw: str, factor: float) -> None:
        number = _number(raw)
        if number is None:
            damaged.append(source)
        else:
            timing[name] = number * factor

    if "writeConflicts" in values:
        put("write_conflicts", "writeConflicts", values["writeConflicts"], 1.0)
    if "timeAcquiringMicros" in text:
        locks = 0.0
        found = False
        for resource, waits in _TEXT_LOCK_WAITS.findall(text):
            raws = _TEXT_MODE.findall(waits) if waits.startswith("{") else [waits]
            for raw in raws:
                number = _number(raw)
                if number is None:
                    damaged.append(f"{resource}.timeAcquiringMicros")
                elif resource == "flowControl":
                    timing["flow_control_ms"] = number * 1e-3
                else:
                    locks += number
                    found = True
        if found:
            timing["lock_wait_ms"] = locks * 1e-3
    if "storage:" in text:
        for name, raw in _TEXT_STORAGE.findall(text):
            if name == "bytesRead":
                put("bytes_read", name, raw, 1.0)
            else:
                put("disk_read_ms", name, raw, 1e-3)
    problem = f"a damaged time component ({damaged[0]})" if damaged else None
    return (timing or None), problem


def _number(raw: str) -> float | None:
    try:
        value = float(raw)
    except ValueError:
        return None
    return value if _valid(value) else None
