"""``system.profile`` documents: one profiled operation becomes one event (log-formats.md §6).

Field names differ from the log (``millis``, ``numYield``, ``responseLength``, ``ts``); the alias table covers them.
Profiles ≤3.0 carry ``query``/``updateobj`` instead of ``command``; they are normalised to the modern command, as the
text-log parser does. A command the profiler cut is ``{"$truncated": "…"}``.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from idxadvisor.models.events import PROFILE, PROFILE_OPS, Event
from idxadvisor.models.values import as_int
from idxadvisor.parse.classify import canonical_op, command_name, internal_reason, resolve_namespace
from idxadvisor.parse.fields import apply_fields, checked_timestamp
from idxadvisor.parse.textlog import legacy_find
from idxadvisor.parse.timing import read_timing


class NotAProfileDocument(ValueError):
    pass


def looks_like_profile_document(document: Any) -> bool:
    if type(document) is not dict:
        return False
    op = document.get("op")
    return type(op) is str and op in PROFILE_OPS and type(document.get("ns")) is str


def profile_timestamp(value: Any) -> datetime | None:
    """``ts`` as Extended JSON (``{"$date": "…"}`` or ``{"$date": {"$numberLong": "…"}}``); naive means UTC, and a
    date outside 1970–9999 is missing."""
    if type(value) is dict:
        value = value.get("$date")
    if type(value) is dict:  # {"$date": {"$numberLong": "…"}}
        millis = value.get("$numberLong")
        try:
            return checked_timestamp(datetime.fromtimestamp(int(millis) / 1000, tz=timezone.utc))
        except (TypeError, ValueError, OverflowError, OSError):
            return None
    if type(value) is str:
        try:
            return checked_timestamp(datetime.fromisoformat(value))
        except ValueError:
            return None
    return None


def event_from_profile(document: dict[str, Any]) -> Event:
    if not looks_like_profile_document(document):
        raise NotAProfileDocument("not a system.profile document (needs 'op' and 'ns')")
    op_word: str = document["op"]
    ns: str = document["ns"]
    collection = ns.partition(".")[2]
    command = document.get("command")
    command = command if type(command) is dict else None
    event = Event(ns=ns, op=canonical_op(op_word), ts=profile_timestamp(document.get("ts")), source_format=PROFILE)
    if op_word == "command":
        event.op = canonical_op(command_name(command) or "")
        event.command = command
        event.ns = resolve_namespace(ns, event.op, command)
    elif op_word == "query":
        event.command = command if command is not None and "find" in command else legacy_find(
            collection, document.get("query"), as_int(document.get("ntoskip")) or 0)
    elif op_word in ("update", "remove"):
        event.statement = True
        event.command = command if command is not None else _legacy_statement(document)
    elif op_word == "getmore":
        event.command = command
        originating = document.get("originatingCommand")
        if type(originating) is dict:
            event.originating_command = originating
        elif type(document.get("query")) is dict:
            event.originating_command = legacy_find(collection, document["query"])
    elif op_word == "insert":
        event.command = {"insert": collection}
    apply_fields(event, document)
    timing, damaged = read_timing(document)
    if timing is not None:
        event.timing = timing
    if damaged is not None and event.problem is None:
        event.problem = damaged
    event.truncated = _is_truncated(command) or _is_truncated(event.originating_command)
    event.internal = internal_reason(event.ns, None, event.app_name)
    return event


def _legacy_statement(document: dict[str, Any]) -> dict[str, Any] | None:
    query = document.get("query")
    if type(query) is not dict:
        return None
    statement: dict[str, Any] = {"q": query}
    if type(document.get("updateobj")) is dict:
        statement["u"] = document["updateobj"]
    return statement


def _is_truncated(command: Any) -> bool:
    return type(command) is dict and "$truncated" in command
