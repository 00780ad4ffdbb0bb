"""Parse one newline-aligned block of a line-oriented input (JSON log, text log, or profiler export lines).

Speed comes from not looking at lines that cannot matter. In a JSON log most lines are ordinary messages: the block
is searched for ``"id":51803`` with ``bytes.find`` and only those lines are parsed; that every other line is a whole
JSON log line is checked by counting line starts and ends in C, and only a block that fails the count is walked line
by line. A text block is searched for lines ending in ``ms`` (only those can be slow operations) and for lines that do
not start with a timestamp (problems, on this path and on the line-by-line one, as is a timestamped line ending in a
duration that cannot be read). Every path ends in
the same per-line handlers, and lines are always handled in log order, which statement pairing relies on.
Line numbers are worked out only for the problems kept as examples.

Every line is either counted and ignored, an entry, or a problem; nothing a line holds can raise out of here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol, TypeVar, Union

import orjson

from idxadvisor.models.events import JSON_LOG, PROFILE, TEXT_LOG, Event, Problem
from idxadvisor.models.inventory import IndexSighting
from idxadvisor.parse import indexlog, jsonlog, textlog
from idxadvisor.parse.accel import speedups
from idxadvisor.parse.pairing import StatementMark, StatementPairing
from idxadvisor.parse.profile import NotAProfileDocument, event_from_profile

_SLOW_NEEDLE = jsonlog.SLOW_QUERY_NEEDLES[0]
_SPACED_SLOW_NEEDLE = jsonlog.SLOW_QUERY_NEEDLES[1]
_BUILD_INFO_NEEDLE = jsonlog.BUILD_INFO_NEEDLES[0]
_SLOW_QUERY_NUMBER = str(jsonlog.SLOW_QUERY_ID).encode()
_ID_KEY, _SPACED_ID_KEY = b'"id":', b'"id": '

_TEXT_CANDIDATE_END = re.compile(r"ms\r?$", re.M)
# A line that does not start with a timestamp and is not blank (``line.rstrip("\r\n\t ")`` is not empty): the one
# kind of text line that is a problem, on every path. Anchored on the newline before the line, so that the regex
# engine jumps from newline to newline (a pattern starting with ^ under re.M is tried at every position, several
# times slower).
_NOT_BLANK = r"[ \t\r]*[^ \t\r\n]"
_ODD_LINE = re.compile(rf"\n(?!{textlog.TIMESTAMP_START})(?={_NOT_BLANK})")
_ODD_FIRST_LINE = re.compile(rf"(?!{textlog.TIMESTAMP_START})(?={_NOT_BLANK})")
_TIMESTAMPED = re.compile(textlog.TIMESTAMP_START)
_DURATION_END = re.compile(r"\d+ms\r?$")
UNKNOWN_SLOW_LAYOUT = "a timestamped line ending in a duration, in a layout not understood"
_BOM = "\ufeff".encode()
_VERSION_HINTS = ("db version", "MongoS version", "mongos version")
EXCERPT_LIMIT = 200


LineNumber = Union[int, None, Callable[[], int]]  # a line number, unknown, or how to work it out when needed


class EventSink(Protocol):
    def add(self, event: Event) -> None: ...


@dataclass(frozen=True, slots=True)
class BlockOptions:
    reference_year: int  # for ctime timestamps, which have no year
    keep_excerpts: bool = False  # problem excerpts may hold query values: only with --show-values
    max_problem_examples: int = 5


@dataclass
class BlockStats:
    """What a block held. Line numbers in ``problem_examples`` are 1-based within the block."""

    lines: int = 0
    entries: int = 0
    json_entries: int = 0
    text_entries: int = 0
    truncated: int = 0
    problems: int = 0
    problem_examples: list[Problem] = field(default_factory=list)
    operations: int = 0
    versions: set[str] = field(default_factory=set)
    first_ts: datetime | None = None
    last_ts: datetime | None = None
    held_wrappers: list[Event] = field(default_factory=list)  # wrappers pairing could not settle inside the block
    early_statements: list[StatementMark] = field(default_factory=list)  # unclaimed, near the block's start
    tail_statements: list[StatementMark] = field(default_factory=list)  # unclaimed, near the block's end
    absorbed: int = 0
    # pairing's first and latest times in the block, epoch ms: a block opening before the one before closed is a
    # restart of the log (``BoundaryState.resolve``)
    opening_ms: float | None = None
    closing_ms: float | None = None
    #: the log started again inside the block (time went back): how many of ``held_wrappers`` and of
    #: ``tail_statements`` (the first ones) came before that, and are settled before the rest
    before_restart: tuple[int, int] | None = None
    index_sightings: list[IndexSighting] = field(default_factory=list)  # index builds, creations and drops


def count_lines(data: bytes) -> int:
    """Lines as ``bytes.splitlines`` counts them for LF and CRLF text: a final unterminated line counts too."""
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


class BlockParser:
    """Parses one block into a sink; ``stats`` holds the counts and what pairing left open."""

    def __init__(self, mode: str, options: BlockOptions, sink: EventSink) -> None:
        self.mode = mode
        self.options = options
        self.sink = sink
        self.stats = BlockStats()
        self.pairing = StatementPairing(self._count)
        self._numbers: _LineNumbers | None = None
        self._line_offset = 0  # lines in the pieces fed before this one

    # -- entry points -------------------------------------------------------------------------------------------

    def parse(self, data: bytes) -> BlockStats:
        self.feed(data)
        return self.finish()

    def feed(self, data: bytes) -> None:
        """Parse the next piece of the block: newline-aligned, following the pieces fed before (pairing and line
        numbers carry on), so that one block can be read a piece at a time."""
        if type(data) is bytes:
            # blank lines only (a gzip of a GiB of newlines), after the first block's byte-order mark as below:
            # counted, nothing else to look at
            if (data[len(_BOM):] if not self.stats.lines and data.startswith(_BOM) else data).isspace():
                self._line_offset = self.stats.lines
                self.stats.lines += count_lines(data)
                return
            if self.mode == JSON_LOG and _scan_json_block is not None:
                self._feed_json_compiled(data)
                return
            if self.mode == TEXT_LOG and _scan_text_block is not None:
                self._feed_text_compiled(data)
                return
        lines = count_lines(data)
        self._line_offset = self.stats.lines
        self.stats.lines += lines
        if not self._line_offset and data.startswith(_BOM):  # the first block of a file saved by an editor
            data = data[len(_BOM):]
        if data.isspace():  # blank lines only (a gzip of a GiB of newlines): counted, and nothing else to look at
            return
        if self.mode == JSON_LOG:
            if _is_plain_json_block(data, lines):
                self._parse_json_block(data)
            else:
                self._parse_json_mixed(data, 0)
        elif self.mode == TEXT_LOG:
            self._parse_text_block(data.decode("utf-8", "replace"))
        else:
            self._parse_lines(data.decode("utf-8", "replace").split("\n"), first_line=1)

    def finish(self) -> BlockStats:
        stats = self.stats
        stats.held_wrappers, stats.early_statements, stats.tail_statements = self.pairing.finish()
        stats.absorbed = self.pairing.absorbed
        stats.opening_ms, stats.closing_ms = self.pairing.first_ms, self.pairing.now_ms
        stats.before_restart = self.pairing.before_restart
        return stats

    # -- JSON log fast path -------------------------------------------------------------------------------------

    def _feed_json_compiled(self, data: bytes) -> None:
        """``feed`` for a JSON log with the block scan in C: one pass counts the lines, checks that every line is a
        whole JSON log line and finds the candidate lines, which the same handlers as ``_parse_json_block`` get."""
        lines, bom, slow, build = _scan_json_block(data, not self.stats.lines)
        self._line_offset = self.stats.lines
        self.stats.lines += lines
        if slow is None:  # not a plain block
            self._parse_json_mixed(data, bom)
            return
        self._json_lines_found(data, slow, build, data, 0)

    def _json_lines_found(self, data: bytes, slow: list[int], build: list[int], whole: bytes, base: int) -> None:
        """The slow-query and Build Info lines the compiled scan found in ``data`` (which starts at ``base`` in the
        block ``whole``, for problems' line numbers), and the block's index lines."""
        json_line = self._json_line
        for index in range(0, len(slow), 2):
            start = slow[index]
            json_line(data[start:slow[index + 1]], whole, base + start)
        for index in range(0, len(build), 2):
            self._build_info(data[build[index]:build[index + 1]])
        self._json_index_lines(data)

    def _parse_json_mixed(self, data: bytes, begin: int) -> None:
        """A JSON block with lines that are not whole JSON log lines (a line cut at rotation, another program's
        output, a damaged line): its runs of whole lines go the way of a plain block, the other lines line by line,
        in order, with the same handlers and line numbers as reading every line of the block alone (which took about
        twice as long as plain blocks on a log with such a line every 4 MB)."""
        position, run, number = begin, begin, 1
        odd: list[bytes] = []  # consecutive odd lines, read together, from line ``odd_number`` on
        odd_number = 1
        for line in data[begin:].split(b"\n"):
            end = position + len(line)
            if line.startswith(_LINE_START) and line.endswith(_LINE_ENDS):
                if odd:
                    self._parse_lines(b"\n".join(odd).decode("utf-8", "replace").split("\n"), first_line=odd_number)
                    odd = []
            else:
                if run < position:
                    self._json_run(data, run, position)
                if not odd:
                    odd_number = number
                odd.append(line)
                run = end + 1
            position, number = end + 1, number + 1
        if odd:
            self._parse_lines(b"\n".join(odd).decode("utf-8", "replace").split("\n"), first_line=odd_number)
        if run < len(data):
            self._json_run(data, run, len(data))

    def _json_run(self, data: bytes, start: int, end: int) -> None:
        """Whole JSON log lines ``data[start:end]`` of a block: scanned as a plain block."""
        run = data[start:end]
        if _scan_json_block is not None:
            _, _, slow, build = _scan_json_block(run, False)
            if slow is not None:
                self._json_lines_found(run, slow, build, data, start)
                return
        elif _is_plain_json_block(run, count_lines(run)):
            self._parse_json_block(run, data, start)
            return
        self._parse_lines(run.decode("utf-8", "replace").split("\n"), first_line=data.count(b"\n", 0, start) + 1)

    def _parse_json_block(self, data: bytes, whole: bytes | None = None, base: int = 0) -> None:
        """A plain block's slow-query, Build Info and index lines; ``whole``/``base``: ``data`` is the part of a block
        that starts there (for problems' line numbers)."""
        find, rfind = data.find, data.rfind
        block = data if whole is None else whole
        json_line = self._json_line
        number = _SLOW_QUERY_NUMBER
        position = find(number)
        while position >= 0:  # both spellings in one pass: "id":51803 as servers write it, "id": 51803 by hand
            if data[position - 5:position] != _ID_KEY and data[position - 6:position] != _SPACED_ID_KEY:
                position = find(number, position + 5)
                continue
            start = rfind(b"\n", 0, position) + 1
            end = find(b"\n", position)
            if end < 0:
                end = len(data)
            json_line(data[start:end], block, base + start)
            position = find(number, end)
        position = find(_BUILD_INFO_NEEDLE)  # a plain block has only the server's own spelling
        while position >= 0:
            start = rfind(b"\n", 0, position) + 1
            end = find(b"\n", position)
            end = len(data) if end < 0 else end
            self._build_info(data[start:end])
            position = find(_BUILD_INFO_NEEDLE, end)
        self._json_index_lines(data)

    def _json_index_lines(self, data: bytes) -> None:
        """The rare index-build and drop lines (parse/indexlog.py): a search of the block for each needle, like the
        build info's; both block paths (Python and the compiled scan) call it."""
        for line in _lines_holding(data, indexlog.JSON_NEEDLES):
            self._index_line(line)

    # -- text log fast path -------------------------------------------------------------------------------------

    def _parse_text_block(self, text: str) -> None:
        odd_lines = [match.start() + 1 for match in _ODD_LINE.finditer(text)]
        if _ODD_FIRST_LINE.match(text):
            odd_lines.insert(0, 0)
        if any(text.startswith("{", start) for start in odd_lines):
            self._parse_lines(text.split("\n"), first_line=1)  # JSON lines mixed in: keep strict log order
            return
        numbers = _LineNumbers(text)
        room = max(0, self.options.max_problem_examples - len(self.stats.problem_examples))
        for start in odd_lines[:room]:  # in order, so numbering them is one pass
            self.add_problem(textlog.NOT_A_LOG_LINE, numbers.at(start), _line_at(text, start))
        self.stats.problems += max(0, len(odd_lines) - room)
        for candidate in _TEXT_CANDIDATE_END.finditer(text):
            start = text.rfind("\n", 0, candidate.start()) + 1
            line = text[start:candidate.end()].rstrip("\r")
            self._text_line(line, lambda start=start: numbers.at(start), counted_if_unreadable=True)
        for line in _lines_holding(text, _VERSION_HINTS):
            self._text_version(line)
        for line in _lines_holding(text, indexlog.TEXT_HINTS):
            self._text_index_line(line)

    def _feed_text_compiled(self, data: bytes) -> None:
        """``feed`` for a text log with the search of ``_parse_text_block`` in C: only the lines it finds are decoded,
        and handled in the same order (problem lines, then slow-operation candidates, then version lines)."""
        lines, bom, odd, candidates, versions = _scan_text_block(data, not self.stats.lines)
        self._line_offset = self.stats.lines
        self.stats.lines += lines
        if odd is None:  # JSON lines mixed in, or line starts the C code cannot judge: the Python path
            self._parse_text_block(data[bom:].decode("utf-8", "replace"))
            return
        numbers = _LineNumbers(data)  # bytes: the newlines before an offset are the decoded text's
        room = max(0, self.options.max_problem_examples - len(self.stats.problem_examples))
        for start in odd[:room]:
            end = data.find(b"\n", start)
            line = data[start:end if end >= 0 else len(data)].decode("utf-8", "replace").rstrip("\r")
            self.add_problem(textlog.NOT_A_LOG_LINE, numbers.at(start), line)
        self.stats.problems += max(0, len(odd) - room)
        text_line = self._text_line
        for index in range(0, len(candidates), 2):
            start = candidates[index]
            line = data[start:candidates[index + 1]].decode("utf-8", "replace")
            text_line(line, lambda start=start: numbers.at(start), counted_if_unreadable=True)
        for index in range(0, len(versions), 2):
            self._text_version(data[versions[index]:versions[index + 1]].decode("utf-8", "replace"))
        for line in _lines_holding(data, _TEXT_INDEX_HINTS):
            self._text_index_line(line.decode("utf-8", "replace"))

    # -- the general line-by-line path --------------------------------------------------------------------------

    def _parse_lines(self, lines: list[str], first_line: int) -> None:
        for offset, raw in enumerate(lines):
            line = raw.rstrip("\r\n\t ")
            if not line:
                continue
            number = first_line + offset
            if line[0] == "{":
                if self.mode == PROFILE:
                    self._profile_line(line, number)
                else:
                    self._json_text_line(line, number)
            elif line[0] == "[" and self.mode == PROFILE:
                self.add_problem("a JSON array inside a line-per-document export", number, line)
            else:
                self._text_line(line, number, counted_if_unreadable=False)
                if any(hint in line for hint in _VERSION_HINTS):
                    self._text_version(line)
                if indexlog.TEXT_HINTS[0] in line:
                    self._text_index_line(line)

    def _json_text_line(self, line: str, number: int) -> None:
        encoded = line.encode("utf-8", "surrogateescape")
        if _SLOW_NEEDLE in encoded or _SPACED_SLOW_NEEDLE in encoded:
            self._json_line(encoded, None, number)
        elif any(needle in encoded for needle in jsonlog.BUILD_INFO_NEEDLES):
            self._build_info(encoded)
        elif b"Index build: " in encoded or b"CMD: dropIndexes" in encoded:
            self._index_line(encoded)
        elif not (line.startswith('{"t"') and line.endswith("}")):
            self.add_problem("not a complete JSON log line", number, line)

    # -- per-line handlers --------------------------------------------------------------------------------------

    def _json_line(self, line: bytes, data: bytes | None = None, start: int = 0) -> None:
        """A line holding the slow-query id; ``data``/``start`` locate it, for a problem's line number."""
        try:
            entry = jsonlog.parse_line(line)
        except jsonlog.NotAnEntry as exc:
            repaired = _valid_utf8(line)
            if repaired is not line:  # bytes that are not UTF-8 (in a value): read as U+FFFD, as a decoded line is
                self._json_line(repaired, data, start)
                return
            self.stats.entries += 1
            self.stats.json_entries += 1
            self._json_problem(f"slow-query line: {exc}", line, data, start)
            return
        if entry.get("id") != jsonlog.SLOW_QUERY_ID:
            return
        self.stats.entries += 1
        self.stats.json_entries += 1
        try:
            event = jsonlog.event_from_entry(entry)
        except jsonlog.NotAnEntry as exc:
            self._json_problem(str(exc), line, data, start)
            return
        if event.problem is not None:
            self._json_problem(event.problem, line, data, start)
        self.emit(event)

    def _json_problem(self, reason: str, line: bytes, data: bytes | None, start: int) -> None:
        text = line.decode("utf-8", "replace").rstrip("\r")  # a block's line ends before its newline: CRLF's \r too
        if data is None:
            self.add_problem(reason, start, text)
        else:
            self.add_problem(reason, lambda: self._json_numbers(data).at(start), text)

    def _json_numbers(self, data: bytes) -> _LineNumbers:
        numbers = self._numbers
        if numbers is None or numbers.text is not data:
            numbers = self._numbers = _LineNumbers(data)
        return numbers

    def _build_info(self, line: bytes) -> None:
        try:
            version = jsonlog.server_version(jsonlog.parse_line(line))
        except jsonlog.NotAnEntry:
            return
        if version:
            self.stats.versions.add(version)

    def _index_line(self, line: bytes) -> None:
        """A JSON line holding an index-build or dropIndexes message (a damaged one is only not a sighting)."""
        if not indexlog.may_give_sightings(line):
            return
        try:
            entry = jsonlog.parse_line(line)
        except jsonlog.NotAnEntry:
            return
        self.stats.index_sightings += indexlog.from_json_entry(entry, jsonlog.parse_timestamp(entry))

    def _text_index_line(self, line: str) -> None:
        try:
            parts = textlog.split_line(line, self.options.reference_year)
        except textlog.UnreadableLine:
            return
        self.stats.index_sightings += indexlog.from_text_message(parts.message, parts.ts)

    def _text_line(self, line: str, number: LineNumber, counted_if_unreadable: bool) -> None:
        """One text line; ``counted_if_unreadable`` when the caller has already counted it if it is a problem (a line
        without a timestamp: a timestamped line of another layout is a server message, not a problem)."""
        if _text_slow_line is not None:
            parts = _text_slow_line(line, self.options.reference_year)
            if parts is not None:  # the common slow line, read in C; anything else takes the Python path, whole
                self._text_entry(*textlog.event_from_slow_parts(parts), number, line)
                return
        try:
            parts = textlog.split_line(line, self.options.reference_year)
        except textlog.UnreadableLine:
            timestamped = _TIMESTAMPED.match(line) is not None
            if timestamped and _DURATION_END.search(line):
                self.add_problem(UNKNOWN_SLOW_LAYOUT, number, line)  # a slow operation, maybe: never lost silently
            elif not timestamped and not counted_if_unreadable:
                self.add_problem(textlog.NOT_A_LOG_LINE, number, line)
            return
        operation = textlog.slow_operation_match(parts.message)
        if operation is None:
            return
        self._text_entry(*textlog.event_from_line(parts, operation), number, line)

    def _text_entry(self, event: Event, problem: str | None, number: LineNumber, line: str) -> None:
        """A text log's slow-operation entry: counted, its problem (the body's, else the event's) noted, emitted."""
        self.stats.entries += 1
        self.stats.text_entries += 1
        problem = problem or event.problem
        if problem is not None:
            self.add_problem(problem, number, line)
        self.emit(event)

    def _text_version(self, line: str) -> None:
        try:
            parts = textlog.split_line(line, self.options.reference_year)
        except textlog.UnreadableLine:
            return
        version = textlog.server_version(parts.message)
        if version:
            self.stats.versions.add(version)

    def _profile_line(self, line: str, number: int) -> None:
        try:
            document = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            self.add_problem(f"not valid JSON ({exc.msg})", number, line)
            return
        self.add_profile_document(document, number)

    def add_profile_document(self, document: object, number: int | None) -> None:
        try:
            event = event_from_profile(document)  # type: ignore[arg-type]
        except NotAProfileDocument as exc:
            self.add_problem(str(exc), number, None)
            return
        self.stats.entries += 1
        if event.problem is not None:
            self.add_problem(event.problem, number, None)
        self.emit(event)

    # -- bookkeeping --------------------------------------------------------------------------------------------

    def emit(self, event: Event) -> None:
        stats = self.stats
        if event.truncated:
            stats.truncated += 1
        ts = event.ts
        if ts is not None:  # one comparison in the usual case, a log in time order (first_ts <= last_ts always)
            first, last = stats.first_ts, stats.last_ts
            if first is None or last is None:
                stats.first_ts = stats.last_ts = ts
            elif ts > last:
                stats.last_ts = ts
            elif ts < first:
                stats.first_ts = ts
        if event.op in indexlog.INDEX_COMMANDS:
            stats.index_sightings += indexlog.from_event(event)
        if self.pairing.admit(event):
            self._count(event)

    def _count(self, event: Event) -> None:
        """An operation: counted and handed to the sink (pairing calls this for wrappers it settles later)."""
        self.stats.operations += 1
        self.sink.add(event)

    def add_problem(self, reason: str, line: LineNumber, text: str | None) -> None:
        """Count a problem; keep it as an example while there is room (only then is a lazy line number worked out)."""
        stats = self.stats
        stats.problems += 1
        if len(stats.problem_examples) < self.options.max_problem_examples:
            excerpt = text[:EXCERPT_LIMIT] if (text is not None and self.options.keep_excerpts) else None
            number = line() if callable(line) else line
            if number is not None:
                number += self._line_offset
            stats.problem_examples.append(Problem(reason, number, excerpt))


# getattr: an in-place build older than this module lacks the newer functions (that part then runs in Python)
_TEXT_INDEX_HINTS = tuple(hint.encode() for hint in indexlog.TEXT_HINTS)
_scan_json_block = getattr(speedups, "scan_json_block", None)
_scan_text_block = getattr(speedups, "scan_text_block", None)
_text_slow_line = textlog.slow_line_parts

_LINE_START = b'{"t":{"$date":"'
_LINE_JOINS = (b'}\n' + _LINE_START, b'}\r\n' + _LINE_START)
_LINE_ENDS = (b"}", b"}\r")
_NEWLINE_BYTES = b"\r\n"
_CLOSING_BRACE = ord("}")


def _valid_utf8(line: bytes) -> bytes:
    """The line itself when it is UTF-8; else a copy with each invalid sequence replaced by U+FFFD."""
    try:
        line.decode("utf-8")
    except UnicodeDecodeError:
        return line.decode("utf-8", "replace").encode("utf-8")
    return line


def _is_plain_json_block(data: bytes, lines: int) -> bool:
    """Every line is a whole JSON log line: it starts with ``{"t":{"$date":"`` and ends with ``}``.

    One count of a long needle checks both ends of every line boundary at once (a short needle such as ``}\\n``
    is several times slower to count); only a block that fails it is walked line by line. The last line is checked
    where it ends, without copying the block to strip it.
    """
    if not data.startswith(_LINE_START):
        return False
    end = len(data)
    while end and data[end - 1] in _NEWLINE_BYTES:
        end -= 1
    if not end or data[end - 1] != _CLOSING_BRACE:
        return False
    joins = data.count(_LINE_JOINS[0])
    if joins != lines - 1:
        joins += data.count(_LINE_JOINS[1])
    return joins == lines - 1


class _LineNumbers:
    """1-based line numbers of offsets into a block, counted on from the last offset asked for (offsets come in
    increasing order, so numbering every line of a block costs one pass, not one pass per line)."""

    __slots__ = ("text", "_offset", "_number")

    def __init__(self, text: str | bytes) -> None:
        self.text = text
        self._offset = 0
        self._number = 1

    def at(self, offset: int) -> int:
        newline = "\n" if isinstance(self.text, str) else b"\n"
        if offset < self._offset:
            self._offset, self._number = 0, 1
        self._number += self.text.count(newline, self._offset, offset)  # type: ignore[arg-type]
        self._offset = offset
        return self._number


_Text = TypeVar("_Text", str, bytes)


def _lines_holding(text: _Text, needles: tuple[_Text, ...]) -> list[_Text]:
    """The lines of ``text`` (a decoded block, or its bytes) that hold any of ``needles`` (as ``text.split("\\n")``
    gives them), in order, each once. Searched for with ``find``: splitting a whole block into lines to look at each
    costs more than the search."""
    newline = "\n" if isinstance(text, str) else b"\n"
    ends: dict[int, int] = {}  # line start -> line end
    for needle in needles:
        position = text.find(needle)
        while position >= 0:
            start = text.rfind(newline, 0, position) + 1  # type: ignore[arg-type]
            end = text.find(newline, position)  # type: ignore[arg-type]
            end = len(text) if end < 0 else end
            ends[start] = end
            position = text.find(needle, end)
    return [text[start:ends[start]] for start in sorted(ends)]


def _line_at(text: str, start: int) -> str:
    end = text.find("\n", start)
    return text[start: end if end >= 0 else len(text)].rstrip("\r")
