"""Legacy text logs (2.2 to 4.2): one slow-operation line becomes one event.

Follows log-formats.md §3–§4. A slow-operation line is ``<ts> [<S> <COMPONENT>] [<ctx>] <op> <ns> … <N>ms`` with op in
query|getmore|update|remove|insert|command|killcursors. Its documents are mongo-shell syntax (``parse.shelldoc``);
legacy forms are normalised into the modern command documents a 4.4+ server would log, so shapes need not know the
log's age:

* ``query db.c query: { $query: {…}, $orderby: {…} }`` (OP_QUERY) → ``{"find": "c", "filter": {…}, "sort": {…}}``
* ``update db.c query: {…} update: {…}`` (≤3.4) → the statement ``{"q": {…}, "u": {…}}``
* ``getmore db.c query: {…}`` (≤3.4) → a getMore whose originating command is that find

Lines the server cut (``warning: log line attempted (NNkB) over max size (10kB), printing beginning and end …``)
keep their counters, which sit in the line's tail, and are flagged truncated. ctime timestamps carry no year: it is
inferred from the weekday (the latest year, not after the reference year, in which that date fell on that weekday).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import lru_cache
from typing import Any

from idxadvisor.models.events import TEXT_LOG, Event, ShapeSlot
from idxadvisor.parse.classify import canonical_op, command_name, internal_reason, resolve_namespace
from idxadvisor.parse.fields import MAX_DURATION_MS, checked_timestamp, read_fields, unusable_duration
from idxadvisor.models.values import as_int
from idxadvisor.parse.accel import speedups
from idxadvisor.parse.shelldoc import ShellSyntaxError, parse_shell_value
from idxadvisor.parse.timing import TEXT_MARKERS, read_text_timing

_MONTHS = {name: number for number, name in enumerate(
    ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), start=1)}
_WEEKDAYS = {name: number for number, name in enumerate(("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"))}

LINE = re.compile(
    r"""(?:
          (?P<iso>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?)
        | (?P<weekday>Mon|Tue|Wed|Thu|Fri|Sat|Sun)\ (?P<month>Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)
          \ {1,2}(?P<day>\d{1,2})\ (?P<clock>\d\d):(?P<minute>\d\d):(?P<second>\d\d)(?P<fraction>\.\d+)?
        )
        \s+(?:[FEWID]\d?\s+(?:[A-Z_]+|-)\s+)?
        \[(?P<context>[^\]]*)\]\ (?P<message>.*)""",
    re.X | re.S,
)
SLOW_OPERATION = re.compile(r"(?P<op>query|getmore|update|remove|insert|command|killcursors) (?P<ns>\S+)")
TRUNCATION_WARNING = re.compile(
    r"warning: log line attempted \(\d+k(?:B)?\) over max size ?\(\d+k(?:B)?\), printing beginning and end \.\.\. "
)
ELISION_MARKER = " .......... "
_DURATION_DIGITS = len(str(int(MAX_DURATION_MS)))
_NUMBERISH = re.compile(r"[-+]?[0-9][0-9.]*(?:[eE][-+]?[0-9]+)?")  # what a damaged <N>ms may hold instead of N
SERVER_VERSION = re.compile(r"(?:db version|MongoS version|mongos version) v?(\d+\.\d+(?:\.\d+)?(?:-[\w.]+)?)")

_APP_NAME = re.compile(r' appName: "((?:[^"\\]|\\.)*)"')
_LABELLED_DOCUMENT = re.compile(r" (command|query|update|updateobj|originatingCommand): (?:([A-Za-z_$][\w$]*) )?(?=\{)")
_PLAN_SUMMARY = re.compile(r" planSummary: ((?:[A-Z_]+(?: \{[^{}]*\})?)(?:, [A-Z_]+(?: \{[^{}]*\})?)*)")
#: Where a line's documents may end: a closing brace followed by a ``name:`` that is not another document's label (in
#: shell syntax a brace inside a document is followed by ``,``, `` }`` or `` ]``; only a string could hold this).
_DOCUMENTS_END = re.compile(r"\}(?= (?!(?:command|query|update|updateobj|originatingCommand):)[A-Za-z]+:)")
#: Parsed documents by their text: real text logs repeat the same command text over and over (92 % of the slow lines
#: of the corpus's real 2.x–4.0 logs repeat one seen before), and parsing shell syntax is the costliest step of a line.
_DOCUMENTS_MEMO: dict[str, tuple[dict[str, tuple[str | None, Any]], bool]] = {}
#: Counters (the ``name:value`` pairs after the documents) by their text: the event attributes they hold, and ntoskip.
_COUNTERS_MEMO: dict[str, tuple[dict[str, Any], int]] = {}
#: What a slow line's body sets on its event, by the body (with its op word, namespace and whether it was cut).
_BODY_MEMO: dict[tuple[str, str, str, bool], tuple[dict[str, Any], str | None]] = {}
MEMO_ENTRIES = 1024
MEMO_TEXT_LIMIT = 4096
_FIELD = re.compile(r" ([A-Za-z]+):\s?(-?\d+(?:\.\d+)?(?![\w.])|[\w.]+)")
_EXCEPTION = re.compile(r" exception: (.*?) code:\d+")

_QUERY_WRAPPERS = ("$query", "query")
_SORT_MODIFIERS = ("$orderby", "orderby")
_QUERY_MODIFIERS = frozenset(
    {"$query", "query", "$orderby", "orderby", "$hint", "hint", "$explain", "explain", "$snapshot", "snapshot",
     "$maxScan", "$comment", "$readPreference", "$maxTimeMS", "$returnKey", "$showDiskLoc", "$min", "$max"}
)


@dataclass(slots=True)
class TextLine:
    """The parts of a text line every reader needs (timestamp, thread, message)."""

    ts: datetime | None
    context: str
    message: str


#: What starts every log line, of any layout. A line without it is a problem; a line with it that LINE does not read
#: is a message of another layout (``***** SERVER RESTARTED *****``, ``dbexit:``), not a slow operation.
TIMESTAMP_START = (r"(?:\d{4}-\d\d-\d\dT|(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) "
                   r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) )")
NOT_A_LOG_LINE = "not a log line (no timestamp)"


class UnreadableLine(ValueError):
    """A line that is not a log line of any known layout."""


def split_line(line: str, reference_year: int) -> TextLine:
    match = LINE.match(line)
    if match is None:
        raise UnreadableLine(NOT_A_LOG_LINE)
    return TextLine(_timestamp(match, reference_year), match["context"], match["message"])


def _timestamp(match: re.Match[str], reference_year: int) -> datetime | None:
    iso = match["iso"]
    if iso is not None:
        try:
            return checked_timestamp(datetime.fromisoformat(iso))
        except ValueError:
            return None
    fraction = match["fraction"]
    micros = int((fraction[1:] + "000000")[:6]) if fraction else 0
    day = _ctime_date(match["weekday"], match["month"], int(match["day"]), reference_year)
    if day is None:
        return None
    try:
        stamp = datetime(day[0], day[1], day[2], int(match["clock"]), int(match["minute"]), int(match["second"]),
                         micros, tzinfo=timezone.utc)
    except ValueError:  # 25:61:61
        return None
    return checked_timestamp(stamp)


@lru_cache(maxsize=4096)
def _ctime_date(weekday: str, month_name: str, day: int, reference_year: int) -> tuple[int, int, int] | None:
    """(year, month, day) for a ctime date, which has no year: the latest year ≤ reference with that weekday."""
    month = _MONTHS[month_name]
    wanted = _WEEKDAYS[weekday]
    for year in range(reference_year, reference_year - 40, -1):
        try:
            if datetime(year, month, day).weekday() == wanted:
                return year, month, day
        except ValueError:  # 29 Feb in a common year
            continue
    return None


def server_version(message: str) -> str | None:
    match = SERVER_VERSION.match(message)
    return match[1] if match else None


@dataclass(slots=True)
class SlowOperation:
    """The parts of a slow-operation message: ``<op> <ns><body> <N>ms``."""

    op: str
    ns: str
    body: str
    duration: int | None  # None when the number cannot be a real duration
    truncated: bool  # the server cut the line in the middle
    damaged_duration: str | None = None  # a number that is not a count of milliseconds: -1ms, 1e400ms, 1.5ms


def slow_operation_match(message: str) -> SlowOperation | None:
    """The slow-operation parts of a message, or None when it is not one.

    The duration is the last token; finding it from the end (rather than with a lazy regex) keeps long lines cheap.
    """
    truncated = False
    warning = TRUNCATION_WARNING.match(message)
    if warning is not None:
        message = message[warning.end():]
        truncated = True
    match = SLOW_OPERATION.match(message)
    if match is None:
        return None
    message = message.rstrip()
    last_space = message.rfind(" ")  # the head is message[:last_space]: sliced once, for the body only
    digits = message[last_space + 1:-2]
    if not message.endswith("ms") or last_space < match.end():
        return None
    if not (digits.isdigit() and digits.isascii()):
        if _NUMBERISH.fullmatch(digits) is None:
            return None
        op, ns = match.group(1, 2)  # a slow operation whose duration is damaged: a counted problem, not a lost line
        return SlowOperation(op, ns, message[match.end():last_space], None, truncated, digits[:40])
    duration = int(digits) if len(digits) <= _DURATION_DIGITS else None  # int() of 5000 digits raises
    op, ns = match.group(1, 2)
    return SlowOperation(op, ns, message[match.end():last_space], duration, truncated)


def event_from_line(line: TextLine, operation: SlowOperation) -> tuple[Event, str | None]:
    """The event for one slow-operation line, and a problem reason when its documents could not be read."""
    return event_from_parts(line.ts, line.context, operation.op, operation.ns, operation.body, operation.duration,
                            operation.truncated, operation.damaged_duration)


#: The compiled split_line + slow_operation_match for the common line (None where the extension lacks it): a tuple
#: (ts, context, op, ns, body, duration) for event_from_parts, or None where split_line and friends must read the line.
slow_line_parts = getattr(speedups, "text_slow_line", None)


_text_event = getattr(speedups, "text_event", None)


def event_from_slow_parts(parts: tuple[Any, ...]) -> tuple[Event, str | None]:
    """``event_from_parts(*parts)`` for the parts ``slow_line_parts`` gave: in C when the body is remembered."""
    if _text_event is not None:
        made = _text_event(parts, _BODY_MEMO, Event.from_fields, TEXT_LOG)
        if made is not None:
            return made  # type: ignore[no-any-return]
    return event_from_parts(*parts)


def event_from_parts(ts: datetime | None, context: str, op_word: str, ns: str, body: str, duration: int | None,
                     truncated: bool = False, damaged_duration: str | None = None) -> tuple[Event, str | None]:
    """``event_from_line`` from the parts of the line, as ``text_slow_line`` gives them."""
    fields: dict[str, Any] = {"ns": ns, "op": canonical_op(op_word), "ts": ts,
                              "connection": context, "source_format": TEXT_LOG}
    if duration is not None and duration <= MAX_DURATION_MS:
        fields["duration_ms"] = duration
    else:
        fields["duration_ms"] = None  # unknown, not 0: left out of the shape's durations
        fields["problem"] = unusable_duration(damaged_duration + "ms" if damaged_duration
                                              else f"{_DURATION_DIGITS}+ digits" if duration is None else duration)
    attributes, problem = _read_body(op_word, ns, body, truncated)
    fields.update(attributes)
    event = Event.from_fields(fields)
    event.internal = internal_reason(event.ns, event.connection, event.app_name)
    return event, problem


def _read_body(op_word: str, ns: str, body: str, truncated: bool) -> tuple[dict[str, Any], str | None]:
    """What a line's body (between its namespace and its duration) sets on its event, and the problem reason when its
    documents could not be read.

    Memoized by the body, with the op and namespace it depends on: most slow lines of a real log repeat the whole body
    of an earlier one (only the time, thread and duration differ), so a repeated line costs one look-up. The
    attributes are copied onto each event; the documents in them are shared, as in ``_read_documents``, and so is a
    ``ShapeSlot``, so that the digest shapes a repeated body once.
    """
    if len(body) > MEMO_TEXT_LIMIT:
        return _parse_body(op_word, ns, body, truncated)
    key = (op_word, ns, body, truncated)
    known = _BODY_MEMO.get(key)
    if known is not None:
        return known
    reading = _parse_body(op_word, ns, body, truncated)
    reading[0]["shape_slot"] = ShapeSlot()  # the events of this body share their shape as they share its inputs
    if len(_BODY_MEMO) >= MEMO_ENTRIES:
        _BODY_MEMO.clear()
    _BODY_MEMO[key] = reading
    return reading


def _parse_body(op_word: str, ns: str, body: str, truncated: bool) -> tuple[dict[str, Any], str | None]:
    event = Event.from_fields({"ns": ns, "op": canonical_op(op_word)})
    app = _APP_NAME.match(body)
    position = 0
    if app is not None:
        event.app_name = _unescape(app[1])
        position = app.end()
    head, _, tail = body.partition(ELISION_MARKER) if truncated else (body, "", "")
    documents, position, elided, failure = _read_documents(head, position)
    # A cut line keeps its counters in the tail; otherwise they follow the documents (the last value of a name wins,
    # so a document that could not be read does not shadow them).
    counters, skip = _read_counters(tail if truncated else head[position:])
    event.__dict__.update(counters)
    _shape_from_documents(event, op_word, documents, skip)
    event.truncated = truncated or elided
    problem = None
    if failure and not truncated:
        event.unparsed = True
        problem = f"{op_word} document could not be read: {failure}"
    return event.__dict__, problem


def _read_documents(body: str, position: int) -> tuple[dict[str, tuple[str | None, Any]], int, bool, str | None]:
    """Consecutive ``label: [name] { … }`` documents from ``position``: (documents, end, elided, failure).

    Memoized by their text. A text is remembered only when parsing it read exactly to its end without a failure, and
    parsing a brace-delimited document never looks past its closing brace, so a line that holds the same text at
    ``position`` holds the same documents, whatever follows them. The documents are shared between events: nothing
    downstream changes an event's command in place.
    """
    candidate = _DOCUMENTS_END.search(body, position)
    if candidate is None:
        return _parse_documents(body, position)
    end = candidate.end()
    text = body[position:end]
    known = _DOCUMENTS_MEMO.get(text)
    if known is not None:
        return known[0], end, known[1], None
    documents, parsed_end, elided, failure = _parse_documents(body, position)
    if parsed_end == end and failure is None and documents and len(text) <= MEMO_TEXT_LIMIT:
        if len(_DOCUMENTS_MEMO) >= MEMO_ENTRIES:
            _DOCUMENTS_MEMO.clear()
        _DOCUMENTS_MEMO[text] = (documents, elided)
    return documents, parsed_end, elided, failure


def _parse_documents(body: str, position: int) -> tuple[dict[str, tuple[str | None, Any]], int, bool, str | None]:
    documents: dict[str, tuple[str | None, Any]] = {}
    elided = False
    while True:
        label = _LABELLED_DOCUMENT.match(body, position)
        if label is None:
            return documents, position, elided, None
        try:
            parsed = parse_shell_value(body, label.end(), raw_strings=True)
        except ShellSyntaxError as exc:
            documents[label[1]] = (label[2], None)
            return documents, label.end(), elided, str(exc)
        documents[label[1]] = (label[2], parsed.value)
        elided = elided or parsed.elided
        position = parsed.end


def _read_counters(text: str) -> tuple[dict[str, Any], int]:
    """The event attributes that the ``name:value`` pairs after the documents hold, and the ``ntoskip`` among them.

    Memoized by their text, like the documents: most lines of a log repeat the counters of another line exactly, and
    reading them is the costliest step once the documents are remembered. The attributes are copied onto each event.
    """
    known = _COUNTERS_MEMO.get(text)
    if known is not None:
        return known
    counters = _parse_counters(text)
    if len(text) <= MEMO_TEXT_LIMIT:
        if len(_COUNTERS_MEMO) >= MEMO_ENTRIES:
            _COUNTERS_MEMO.clear()
        _COUNTERS_MEMO[text] = counters
    return counters


def _parse_counters(text: str) -> tuple[dict[str, Any], int]:
    """The last of a name wins. The plan summary's key pattern is cut out first, since its field names could be taken
    for counters."""
    attributes: dict[str, Any] = {}
    plan = _PLAN_SUMMARY.search(text)
    if plan is not None:
        attributes["plan_summary"] = plan[1]
        text = text[: plan.start()] + text[plan.end():]
    values: dict[str, Any] = dict(_FIELD.findall(text))
    exception = _EXCEPTION.search(text) if " exception: " in text else None
    if exception is not None:
        values["exception"] = exception[1]
    attributes.update(read_fields(values))
    if any(marker in text for marker in TEXT_MARKERS):  # rare: most text lines carry no time component
        timing, damaged = read_text_timing(text, values)
        if timing is not None:
            attributes["timing"] = timing
        if damaged is not None and "problem" not in attributes:
            attributes["problem"] = damaged
    return attributes, as_int(values.get("ntoskip")) or 0


def _shape_from_documents(event: Event, op_word: str, documents: dict[str, tuple[str | None, Any]],
                          skip: int = 0) -> None:
    """Turn the line's documents into the command (or statement) a 4.4+ server would log (``skip``: a legacy query's
    ``ntoskip``, which its query document does not hold)."""
    collection = event.ns.partition(".")[2]
    name, command = documents.get("command", (None, None))
    _, query = documents.get("query", (None, None))
    if op_word == "command":
        event.op = canonical_op(name or command_name(command) or "")
        event.command = command if type(command) is dict else None
        event.ns = resolve_namespace(event.ns, event.op, event.command)
        if event.op == "getMore":
            event.originating_command = _document(documents, "originatingCommand")
    elif op_word == "query":
        event.command = legacy_find(collection, query, skip)
    elif op_word in ("update", "remove"):
        event.statement = True
        if type(command) is dict:
            event.command = command
        elif type(query) is dict:
            statement: dict[str, Any] = {"q": query}
            update = _document(documents, "update") or _document(documents, "updateobj")
            if update is not None:
                statement["u"] = update
            event.command = statement
    elif op_word == "insert":
        event.statement = True
        event.command = {"insert": collection}
    elif op_word == "getmore":
        originating = _document(documents, "originatingCommand")
        event.originating_command = originating or (legacy_find(collection, query) if query is not None else None)


def _document(documents: dict[str, tuple[str | None, Any]], label: str) -> dict[str, Any] | None:
    value = documents.get(label, (None, None))[1]
    return value if type(value) is dict else None


def legacy_find(collection: str, query: Any, skip: int = 0) -> dict[str, Any] | None:
    """An OP_QUERY query document (possibly ``{$query: …, $orderby: …}``) as the find command it stands for, with the
    ``ntoskip`` the server logged beside it as its ``skip``."""
    if type(query) is not dict:
        return None
    command: dict[str, Any] = {"find": collection}
    if skip > 0:
        command["skip"] = skip
    wrapper = next((key for key in _QUERY_WRAPPERS if type(query.get(key)) is dict), None)
    if wrapper is not None and all(key in _QUERY_MODIFIERS for key in query):
        command["filter"] = query[wrapper]
        sort = next((query[key] for key in _SORT_MODIFIERS if type(query.get(key)) is dict), None)
        if sort:
            command["sort"] = sort
        hint = query.get("$hint", query.get("hint"))
        if hint is not None:
            command["hint"] = hint
    else:
        command["filter"] = query
    return command


def _unescape(text: str) -> str:
    return text.replace('\\"', '"').replace("\\\\", "\\") if "\\" in text else text
