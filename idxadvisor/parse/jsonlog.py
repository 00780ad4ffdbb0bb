"""4.4+ structured JSON logs: one ``"id":51803`` ("Slow query") entry becomes one event.

Follows log-formats.md §1–§2 and §4: WRITE-component entries are write *statements* (``attr.command`` is
``{q, u, ...}``) and carry the plan counters; ``attr.originatingCommand`` gives a getMore its query; a top-level
``truncated`` object naming ``command`` (or ``originatingCommand``) means the server cut it, so the counters count and
the shape is unknown.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import orjson

from idxadvisor.models.events import Event
from idxadvisor.parse.accel import speedups
from idxadvisor.parse.classify import canonical_op, command_name, internal_reason, resolve_namespace
from idxadvisor.parse.fields import checked_timestamp, read_entry_fields
from idxadvisor.parse.timing import read_timing

SLOW_QUERY_ID = 51803
BUILD_INFO_ID = 23403
#: Byte patterns that find candidate lines without parsing every line (the server pads after the colon's value,
#: never before it; hand-written lines may have a space after the colon).
SLOW_QUERY_NEEDLES = (b'"id":51803', b'"id": 51803')
BUILD_INFO_NEEDLES = (b'"id":23403', b'"id": 23403')
_QUERY_SHAPE_ATTRIBUTES = ("command", "originatingCommand")


class NotAnEntry(ValueError):
    """The line is not a slow-query entry after all (or not a JSON object)."""


def parse_line(line: bytes) -> dict[str, Any]:
    """orjson-parse one log line; raises NotAnEntry when it is not a JSON object."""
    try:
        entry = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise NotAnEntry(f"not valid JSON ({exc.msg})") from None
    if type(entry) is not dict:
        raise NotAnEntry("not a JSON object")
    return entry


def parse_timestamp(entry: dict[str, Any]) -> datetime | None:
    """``t.$date``; one without an offset is UTC; one that is not a date between 1970 and 9999 is missing."""
    stamp = entry.get("t")
    if type(stamp) is dict:
        text = stamp.get("$date")
        if type(text) is str:
            try:
                return checked_timestamp(datetime.fromisoformat(text))
            except ValueError:
                return None
    return None


def event_from_entry(entry: dict[str, Any]) -> Event:
    """The event for one parsed slow-query entry. Raises NotAnEntry if it lacks the ``attr`` a slow query has.

    With the C extension, its ``event_fields`` builds the same fields for the lines it fully understands (nearly
    all a server writes) and returns None for the rest, which ``python_event_from_entry`` reads."""
    if _event_fields is not None:
        fields = _event_fields(entry)
        if fields is not None:
            return Event.from_fields(fields)
    return python_event_from_entry(entry)


def python_event_from_entry(entry: dict[str, Any]) -> Event:
    """``event_from_entry`` in Python: the reference the compiled ``event_fields`` is tested against."""
    attr = entry.get("attr")
    if type(attr) is not dict:
        raise NotAnEntry("slow-query entry without attr")
    fields = read_entry_fields(attr)
    command = attr.get("command")
    if type(command) is not dict:
        command = None
    entry_type = attr.get("type")
    statement = entry_type == "update" or entry_type == "remove"
    if statement:
        op = "update" if entry_type == "update" else "delete"
    else:
        op = canonical_op(command_name(command) or (entry_type if type(entry_type) is str else ""))
    raw_ns = attr.get("ns")
    ns = raw_ns if type(raw_ns) is str else ""
    if not statement and ns.endswith(".$cmd"):
        ns = resolve_namespace(ns, op, command)
    connection = entry.get("ctx")
    if type(connection) is not str:
        connection = None
    originating = attr.get("originatingCommand")
    if type(originating) is dict:
        fields["originating_command"] = originating
    truncated = entry.get("truncated")
    if type(truncated) is dict and ("command" in truncated or "originatingCommand" in truncated):
        fields["truncated"] = True
    if attr.get("ok") == 0 and "error" not in fields:
        fields["error"] = "failed"
    timing, damaged = read_timing(attr)
    if timing is not None:
        fields["timing"] = timing
    if damaged is not None and "problem" not in fields:
        fields["problem"] = damaged
    internal = internal_reason(ns, connection, fields.get("app_name"), attr.get("isFromUserConnection"))
    if internal is not None:
        fields["internal"] = internal
    fields.update(ns=ns, op=op, ts=parse_timestamp(entry), command=command, connection=connection,
                  statement=statement)
    return Event.from_fields(fields)


# getattr: an in-place build older than this module lacks event_fields (the events are then built in Python)
_event_fields = getattr(speedups, "event_fields", None)


def server_version(entry: dict[str, Any]) -> str | None:
    """The version in a Build Info entry (id 23403), if this is one."""
    if entry.get("id") != BUILD_INFO_ID:
        return None
    attr = entry.get("attr")
    info = attr.get("buildInfo") if type(attr) is dict else None
    version = info.get("version") if type(info) is dict else None
    return version if type(version) is str else None
