"""Data samples for the what-if estimator (DESIGN.md "Data sample").

A sample is Extended JSON (relaxed or canonical) written as one array or as one document per line
(``mongoexport``'s default), or a ``mongodump`` ``.bson`` file; each may be gzip-compressed. Large files are
reservoir-sampled while streaming, so memory holds the sample, not the file.

Extended JSON is read a block of lines at a time: orjson parses each document into plain values, and each Extended
JSON wrapper becomes its BSON type: ``$oid``, the ``$number…`` wrappers and relaxed ``$date`` strings directly, every
other wrapper through ``bson.json_util``'s own hook, so that the values are exactly what ``json_util`` decodes. One C
pass over a block counts each document's ``$`` signs and opening brackets, so that a document without ``$`` is not
walked and a walk stops once it has converted as many wrappers as there are signs; the top-level fields where the
previous document had its wrappers are looked up before any walk (``_Wrappers``). An array is cut into runs of
elements at separators like the one before its second element and read the same way (``_Runs``); ``raw_decode``
reads what a run leaves. ``json_util``'s hook on every object cost about 20 µs of CPU a document, this about 4. Text
orjson refuses (``NaN`` literals) is decoded by ``json_util`` as before; orjson reads an integer beyond 64 bits as a
float, as a line always did, while an array leaves it to ``raw_decode``, which keeps an int, as before. ``.bson``
files are read with ``bson.decode_file_iter``. Garbage collection is paused while a sample loads.
"""

from __future__ import annotations

import gzip
import io
import json
import random
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

import bson
import orjson
from bson import json_util
from bson.errors import BSONError, InvalidBSON
from bson.int64 import Int64
from bson.json_util import JSONOptions
from bson.objectid import ObjectId

from idxadvisor.errors import InputError, UsageError
from idxadvisor.runtime import collector_paused

_JSON_OPTIONS: JSONOptions = json_util.RELAXED_JSON_OPTIONS
_CHUNK = 1 << 16
_MAX_DOCUMENT_TEXT = 64 << 20   # a single document larger than this is not a sample
#: What decoding one document may raise: it is then a bad document, counted, and the others are read. bson's
#: wrappers raise KeyError too (a ``$binary`` without its ``subType``) and decimal.InvalidOperation, an
#: ArithmeticError (``{"$numberDecimal": "abc"}``).
BAD_DOCUMENT = (ValueError, TypeError, KeyError, ArithmeticError, BSONError, RecursionError, UnicodeDecodeError)
MAX_NESTING = 100               # BSON documents may nest at most 100 levels (the manual's "Nested Depth" limit)


class Undefined:
    """BSON ``undefined`` (deprecated type 6), which ``bson`` would decode as ``None``."""

    _instance: Undefined | None = None

    def __new__(cls) -> Undefined:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "undefined"

    def __reduce__(self) -> str:
        return "UNDEFINED"


UNDEFINED = Undefined()


def _object_pairs_hook(pairs: list[tuple[str, Any]]) -> Any:
    keys = [key for key, _ in pairs]
    if keys == ["$undefined"]:
        return UNDEFINED
    if "$regex" in keys and not set(keys) <= {"$regex", "$options"}:
        # {"$gt": "a", "$regex": "^e"} is the query operator, not the legacy regex type.
        return dict(pairs)
    return json_util.object_pairs_hook(pairs, _JSON_OPTIONS)


def decode_extended_json(text: str) -> Any:
    """Extended JSON (relaxed or canonical) to BSON-typed Python values, keeping key order.

    Text nested too deeply for Python's decoder raises :class:`RecursionError` (callers treat it as bad input).
    """
    return json.loads(text, object_pairs_hook=_object_pairs_hook)


class _TooDeep(ValueError):
    """A document nested deeper than BSON allows."""


def decode_document(text: str | bytes) -> Any:
    """One Extended JSON document, fast: orjson, then one walk converting the wrappers (see the module's doc).

    Raises one of ``BAD_DOCUMENT`` for text that is not a document (or is nested deeper than ``MAX_NESTING``)."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        decoded = decode_extended_json(text if isinstance(text, str) else text.decode("utf-8"))
        if too_deep(decoded):
            raise _TooDeep(f"nested deeper than {MAX_NESTING} levels") from None
        return decoded
    return _converted(value, 1)


#: A top-level field where the previous document had a common wrapper: its key, the wrapper's key and converter.
_Hint = tuple[str, str, Callable[[str], Any]]


class _Wrappers:
    """Converts the wrappers of the documents orjson decodes from a sample, as ``_converted(value, 1)`` would.

    Each object a ``$`` key opens has that ``$`` in the document's text, so once as many of them as the text has ``$``
    signs are converted, none is left and the walk stops. A document nests no deeper than it has opening brackets, so
    one with at most ``MAX_NESTING`` of them needs no depth checks (and one without ``$`` no walk at all). A key written
    ``\\u0024`` escapes the count, and a document with more brackets the shortcut: both take the full walk.

    The documents of a sample mostly share a layout, so the top-level fields where the previous document had its
    common wrappers (``_id``'s ``$oid``, ``$date``s) are looked up first: cheaper than a walk over every field."""

    def __init__(self) -> None:
        self.hints: list[_Hint] | None = None  # None: learn them from the next document

    def converted(self, value: dict[str, Any], text: str, marks: bytes) -> Any:
        """``value``, decoded from ``text``, whose ``$`` signs and opening brackets are ``marks`` (see ``_marks``).

        One function, hints inline: it runs for every document, and each call it saves is 1% of a sample's load."""
        budget = marks.count(b"$")
        if len(marks) - budget > MAX_NESTING or ("\\" in text and "\\u0024" in text):
            return _converted(value, 1)
        if not budget:
            return value
        for first in value:
            break
        else:
            return value
        if "$" <= first < "%":
            return _wrapped(value, 1)
        hints = self.hints
        if hints is None:
            hints = self.hints = _hints(value)
        for key, marker, converter in hints:
            item = value.get(key)
            if item.__class__ is dict and len(item) == 1:  # __class__: a little cheaper than type() (orjson's values)
                inner = item.get(marker)
                if inner.__class__ is str:
                    try:
                        converted = converter(inner)
                    except BAD_DOCUMENT:
                        converted = None  # the walk raises it again, in its order
                    if converted is not None:
                        value[key] = converted
                        budget -= 1
                        continue
            self.hints = None
        if budget:
            _convert_counted(value, budget)
        return value


def _hints(document: dict[str, Any]) -> list[_Hint]:
    hints = []
    for key, item in document.items():
        if type(item) is dict and len(item) == 1:
            marker = next(iter(item))
            converter = _FAST_WRAPPERS.get(marker)
            if converter is not None:
                hints.append((key, marker, converter))
    return hints


def _convert_counted(document: dict[str, Any], budget: int) -> int:
    """Convert the wrappers in ``document`` until ``budget`` objects opened by a ``$`` key are converted; returns the
    budget left (0: stop). For documents within ``MAX_NESTING`` (no depth checks)."""
    fast = _FAST_WRAPPERS
    for key, item in document.items():
        kind = type(item)
        if kind is dict:
            for marker in item:
                break
            else:
                continue
            if "$" <= marker < "%":
                converted = None
                if len(item) == 1:  # the common wrappers, inline: this loop is the loader's hot path
                    inner = item[marker]
                    converter = fast.get(marker) if type(inner) is str else None
                    if converter is not None:
                        converted = converter(inner)
                document[key] = _wrapped(item, 1) if converted is None else converted
                budget -= 1
            else:
                budget = _convert_counted(item, budget)
        elif kind is list:
            budget = _convert_counted_list(item, budget)
        else:
            continue
        if not budget:
            return 0
    return budget


def _convert_counted_list(items: list[Any], budget: int) -> int:
    for position, item in enumerate(items):
        kind = type(item)
        if kind is dict:
            if "$" <= next(iter(item), "") < "%":
                items[position] = _wrapped(item, 1)
                budget -= 1
            else:
                budget = _convert_counted(item, budget)
        elif kind is list:
            budget = _convert_counted_list(item, budget)
        else:
            continue
        if not budget:
            return 0
    return budget


def _converted(value: Any, depth: int) -> Any:
    """``value`` with its wrappers converted; containers are converted in place (they are fresh from orjson)."""
    if type(value) is dict:
        if value and next(iter(value))[:1] == "$":
            return _wrapped(value, depth)
        _convert_dict(value, depth)
    elif type(value) is list:
        _convert_list(value, depth)
    return value


def _convert_dict(document: dict[str, Any], depth: int) -> None:
    if depth > MAX_NESTING:
        raise _TooDeep(f"nested deeper than {MAX_NESTING} levels")
    fast = _FAST_WRAPPERS
    for key, item in document.items():
        kind = type(item)
        if kind is dict:
            if len(item) == 1:  # the common wrappers, inline: this loop is the loader's hot path
                marker, inner = next(iter(item.items()))
                converter = fast.get(marker) if type(inner) is str else None
                if converter is not None:
                    converted = converter(inner)
                    if converted is not None:
                        document[key] = converted
                        continue
            if item and next(iter(item))[:1] == "$":
                document[key] = _wrapped(item, depth + 1)
            else:
                _convert_dict(item, depth + 1)
        elif kind is list:
            _convert_list(item, depth + 1)


def _convert_list(items: list[Any], depth: int) -> None:
    if depth > MAX_NESTING:
        raise _TooDeep(f"nested deeper than {MAX_NESTING} levels")
    for position, item in enumerate(items):
        kind = type(item)
        if kind is dict:
            if item and next(iter(item))[:1] == "$":
                items[position] = _wrapped(item, depth + 1)
            else:
                _convert_dict(item, depth + 1)
        elif kind is list:
            _convert_list(item, depth + 1)


def _wrapped(document: dict[str, Any], depth: int) -> Any:
    """An object whose first key starts with ``$``: its own values converted first (``{"$date": {"$numberLong":
    …}}``), then the object itself, as json_util would decode it."""
    if len(document) == 1:
        (marker, inner), = document.items()
        converter = _FAST_WRAPPERS.get(marker) if type(inner) is str else None
        converted = converter(inner) if converter is not None else None
        if converted is not None:
            return converted
    _convert_dict(document, depth)
    return _object_pairs_hook(list(document.items()))


_from_iso = datetime.fromisoformat  # bound once: its look-up is a quarter of this hot function's cost


def _relaxed_date(text: str) -> Any:
    """A relaxed ``$date`` string as json_util gives it with these options (naive UTC); None to leave it to
    json_util (dates it formats otherwise, or out of the ``datetime`` range)."""
    if len(text) < 20 or text[10] != "T":
        return None
    try:
        if text[-1] == "Z":  # UTC already: read it as the naive time it is
            moment = _from_iso(text[:-1])
            return moment if moment.tzinfo is None else None
        moment = _from_iso(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None
    return moment.astimezone(timezone.utc).replace(tzinfo=None)


_from_hex = bytes.fromhex
_new_object = object.__new__
#: ObjectId's private slot, set directly; a bson release without it makes every ObjectId through its constructor.
_object_id_slot = getattr(ObjectId, "_ObjectId__id", None)
_set_object_id = _object_id_slot.__set__ if hasattr(_object_id_slot, "__set__") else None


def _object_id(text: str) -> ObjectId:
    """``ObjectId(text)``, without its constructor's checks for 24 hex digits (a third of its cost)."""
    if len(text) == 24 and _set_object_id is not None:
        try:
            binary = _from_hex(text)
        except ValueError:
            binary = b""
        if len(binary) == 12:  # fromhex skips whitespace
            oid = _new_object(ObjectId)
            _set_object_id(oid, binary)
            return oid
    return ObjectId(text)


#: The wrappers converted without json_util, from their string value (a None result leaves it to json_util).
_FAST_WRAPPERS: dict[str, Any] = {"$oid": _object_id, "$numberLong": Int64, "$numberInt": int, "$numberDouble": float,
                                  "$date": _relaxed_date}


def nesting_depth(value: Any, limit: int = MAX_NESTING) -> int:
    """How many levels of documents and arrays ``value`` holds (a flat document is 1), counted without
    recursion; counting stops once past ``limit``."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, Mapping):
            children = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if depth > deepest:
            deepest = depth
            if deepest > limit:
                return deepest
        stack.extend((child, depth + 1) for child in children if isinstance(child, (Mapping, list, tuple)))
    return deepest


def too_deep(value: Any, limit: int = MAX_NESTING) -> bool:
    """Nested deeper than BSON allows (and than the what-if model orders safely)."""
    return nesting_depth(value, limit) > limit


@dataclass
class Sample:
    path: Path
    documents: list[dict[str, Any]]
    documents_seen: int
    sampled: bool
    average_document_size: float | None
    problems: int = 0


class _Reservoir:
    """Algorithm R with a seeded generator: a uniform, reproducible subset of a stream."""

    def __init__(self, size: int, seed: int) -> None:
        self.size = size
        self.random = random.Random(seed)
        self.items: list[dict[str, Any]] = []
        self.seen = 0

    def offer(self, item: dict[str, Any]) -> None:
        self.seen += 1
        if len(self.items) < self.size:
            self.items.append(item)
            return
        slot = self.random.randrange(self.seen)
        if slot < self.size:
            self.items[slot] = item

    def offer_all(self, items: list[Any]) -> None:
        """``offer`` each of ``items`` in turn (the ones that fill the reservoir at C speed)."""
        room = self.size - len(self.items)
        if room > 0:
            taken = items[:room]
            self.items.extend(taken)
            self.seen += len(taken)
            items = items[room:]
        for item in items:
            self.offer(item)


def load_sample(path: Path, *, sample_size: int = 10_000, seed: int = 0) -> Sample:
    """Read a data sample, keeping at most ``sample_size`` documents (reservoir sampling)."""
    if not isinstance(sample_size, int) or isinstance(sample_size, bool) or sample_size <= 0:
        raise UsageError(f"--sample-size must be a positive integer, not {sample_size!r}")
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    reservoir = _Reservoir(sample_size, seed)
    problems = 0
    try:
        with _open(path) as stream, collector_paused():
            if _is_bson(path, stream):
                problems = _read_bson(stream, reservoir, path)
            else:
                problems = _read_json(io.TextIOWrapper(stream, encoding="utf-8", errors="strict"), reservoir, path)
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise InputError(f"{path}: cannot read the sample: {exc}") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not a data sample (not UTF-8 Extended JSON nor BSON)") from None
    if reservoir.seen == 0:
        raise InputError(f"{path}: not a data sample (no documents found)")
    documents = reservoir.items
    return Sample(path, documents, reservoir.seen, reservoir.seen > len(documents), average_size(documents),
                  problems)


#: Documents whose BSON size makes the average: an even spread of the sample is as good an estimate of the
#: collection's average as all of it, at a fraction of the cost.
SIZE_SAMPLE = 10_000


def average_size(documents: list[dict[str, Any]]) -> float | None:
    """The average BSON size of the documents (over at most ``SIZE_SAMPLE`` of them, evenly spread)."""
    step = max(1, len(documents) // SIZE_SAMPLE)
    chosen = documents[::step]
    total = counted = 0
    for start in range(0, len(chosen), _SIZE_BATCH):
        size, count = _total_size(chosen[start:start + _SIZE_BATCH])
        total, counted = total + size, counted + count
    return total / counted if counted else None


#: Documents encoded in one ``bson.encode`` call, as an array (``_total_size``).
_SIZE_BATCH = 256
#: The bytes an array's element takes besides its document, before the n-th element: type, index as a key, NUL.
_INDEX_BYTES = [0]
for _index in range(_SIZE_BATCH):
    _INDEX_BYTES.append(_INDEX_BYTES[-1] + 2 + len(str(_index)))


def _total_size(documents: list[Any]) -> tuple[int, int]:
    """The BSON sizes of the ``documents`` that encode, summed, and how many they are. All of them in one call when
    each encodes: ``{"d": [...]}`` is 13 bytes and the array's keys around them (a call each costs a third more)."""
    if set(map(type, documents)) == {dict}:
        try:
            return len(bson.encode({"d": documents})) - 13 - _INDEX_BYTES[len(documents)], len(documents)
        except (BSONError, TypeError, ValueError, OverflowError):
            pass
    sizes = []
    for doc in documents:
        try:
            sizes.append(len(bson.encode(doc)))
        except (BSONError, TypeError, ValueError, OverflowError):
            continue
    return sum(sizes), len(sizes)


def _open(path: Path) -> IO[bytes]:
    raw = path.open("rb")
    head = raw.read(2)
    raw.seek(0)
    if head == b"\x1f\x8b":
        return gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[return-value]
    return raw


def _is_bson(path: Path, stream: IO[bytes]) -> bool:
    name = path.name[:-3] if path.name.endswith(".gz") else path.name
    if name.endswith(".bson"):
        return True
    peek = _peek(stream, 5)
    if len(peek) < 5:
        return False
    size = int.from_bytes(peek[:4], "little")
    return 5 <= size <= 16 * 1024 * 1024 + 16 * 1024 and peek[4] in range(1, 20) and not peek[:1].isspace() \
        and peek[:1] not in (b"[", b"{")


def _peek(stream: IO[bytes], count: int) -> bytes:
    if hasattr(stream, "peek"):
        return stream.peek(count)[:count]  # type: ignore[attr-defined]
    position = stream.tell()
    data = stream.read(count)
    stream.seek(position)
    return data


def _read_bson(stream: IO[bytes], reservoir: _Reservoir, path: Path) -> int:
    problems = 0
    try:
        for doc in bson.decode_file_iter(stream):
            if too_deep(doc):
                problems += 1
                continue
            reservoir.offer(doc)
    except (InvalidBSON, BSONError, RecursionError) as exc:
        if reservoir.seen == 0 and not problems:
            raise InputError(f"{path}: not a data sample (invalid BSON: {exc})") from None
        return problems + 1
    return problems


def _read_json(text: IO[str], reservoir: _Reservoir, path: Path) -> int:
    first = _first_significant_char(text)
    if first == "":
        return 0
    if first == "[":
        return _read_json_array(text, reservoir, path)
    if first != "{":
        raise InputError(f"{path}: not a data sample (expected a JSON array or one document per line)")
    return _read_json_lines(text, reservoir, path, first)


def _first_significant_char(text: IO[str]) -> str:
    """Skip a byte-order mark and leading whitespace; return (and consume) the first other character."""
    char = text.read(1)
    while char and (char.isspace() or char == "\ufeff"):
        char = text.read(1)
    return char


def _read_json_lines(text: IO[str], reservoir: _Reservoir, path: Path, first: str) -> int:
    problems = 0
    wrappers = _Wrappers()
    documents: list[Any] = []
    for block in _line_blocks(text, first):
        problems += _read_lines(block, wrappers, documents)
        reservoir.offer_all(documents)
        documents.clear()
    if reservoir.seen == 0 and problems:
        raise InputError(f"{path}: not a data sample (no line is a JSON document)")
    return problems


def _line_blocks(text: IO[str], first: str) -> Iterator[str]:
    """``first`` and the rest of the text, a run of whole lines at a time (the last one's newline left out)."""
    pending = [first]
    while chunk := text.read(_CHUNK):
        end = chunk.rfind("\n")
        if end < 0:
            pending.append(chunk)
            continue
        pending.append(chunk[:end])
        yield "".join(pending)
        pending = [chunk[end + 1:]]
    rest = "".join(pending)
    if rest:
        yield rest


def _read_lines(block: str, wrappers: _Wrappers, documents: list[Any]) -> int:
    """Append the documents of ``block``'s lines to ``documents``; returns how many lines are not documents."""
    problems = 0
    keep = documents.append
    converted = wrappers.converted
    loads = orjson.loads
    for line, marks in zip(block.split("\n"), _marks(block)):
        try:
            value = loads(line)
        except orjson.JSONDecodeError:
            problems += _read_line_slowly(line, documents)
            continue
        try:
            document = converted(value, line, marks) if type(value) is dict else None
        except BAD_DOCUMENT:
            document = None
        if type(document) is dict:
            keep(document)
        else:
            problems += 1
    return problems


def _read_line_slowly(line: str, documents: list[Any]) -> int:
    """A line orjson refuses as it stands (blank, padded with other white space than JSON's, or not JSON as orjson
    reads it); returns 1 if it is not a document."""
    stripped = line.strip()
    if not stripped:
        return 0
    try:
        document = decode_document(stripped)
    except BAD_DOCUMENT:
        return 1
    if type(document) is not dict:
        return 1
    documents.append(document)
    return 0


#: The bytes ``_marks`` deletes: all but ``$`` signs, opening brackets and newlines.
_UNMARKED = bytes(code for code in range(256) if chr(code) not in "${[\n")


def _marks(block: str) -> list[bytes]:
    """Each line's ``$`` signs and opening brackets: two C passes over the block instead of three counts a line."""
    return block.encode().translate(None, _UNMARKED).split(b"\n")


class _Window:
    """The unread part of a streamed text, refilled a chunk at a time."""

    def __init__(self, text: IO[str], path: Path) -> None:
        self.text, self.path = text, path
        self.buffer, self.position, self.eof = "", 0, False
        self.base = 0  # where the buffer starts in the text

    def more(self) -> None:
        """Append the next chunk to the unread part (rebased at 0); at the end of the text, set ``eof``."""
        if len(self.buffer) - self.position > _MAX_DOCUMENT_TEXT:
            raise InputError(f"{self.path}: a document is larger than {_MAX_DOCUMENT_TEXT} bytes")
        chunk = self.text.read(_CHUNK)
        self.base += self.position
        self.buffer, self.position = self.buffer[self.position:] + chunk, 0
        self.eof = not chunk

    def next_character(self) -> str | None:
        """The next non-blank character, reading on as needed; None at the end of the text."""
        while True:
            while self.position < len(self.buffer) and self.buffer[self.position] in " \t\r\n":
                self.position += 1
            if self.position < len(self.buffer):
                return self.buffer[self.position]
            if self.eof:
                return None
            self.more()

    def consumed(self, end: int) -> None:
        self.position = end
        if self.position > _CHUNK:
            self.base += self.position
            self.buffer, self.position = self.buffer[self.position:], 0


def _read_json_array(text: IO[str], reservoir: _Reservoir, path: Path) -> int:
    """Stream ``[doc, doc, ...]`` over a sliding window (never one giant ``loads``): runs of elements as ``_Runs``
    reads them, any other element with ``raw_decode``."""
    decoder = json.JSONDecoder()  # plain objects (the C scanner); wrappers are converted by the walk
    window = _Window(text, path)
    runs = _Runs(window, reservoir)
    problems = 0
    expect_value = True
    while (char := window.next_character()) != "]":
        if char is None:
            raise InputError(f"{path}: not a data sample (the JSON array is not closed)")
        if not expect_value:
            if char != ",":
                raise InputError(f"{path}: not a data sample (malformed JSON array near offset {window.position})")
            window.consumed(window.position + 1)
            expect_value = True
            continue
        if char == "{" and (run := runs.read()) is not None:
            problems += run[0]
            expect_value = not run[1]
            continue
        try:
            value, end = decoder.raw_decode(window.buffer, window.position)
        except json.JSONDecodeError:
            if window.eof:
                raise InputError(f"{path}: not a data sample (malformed JSON array)") from None
            window.more()
            continue
        except BAD_DOCUMENT:
            value, end = None, _skip_value(window.buffer, window.position)  # a bad element, or one too deep
        if end >= len(window.buffer) and not window.eof:
            window.more()  # the value may go on in the next chunk (a number, or an element skipped unread)
            continue
        try:
            value = _converted(value, 1) if type(value) is dict else None
        except BAD_DOCUMENT:
            value = None
        if value is not None:
            reservoir.offer(value)
        else:
            problems += 1
        window.consumed(end)
        expect_value = False
    return problems


class _Runs:
    """Runs of an array's elements read the way lines are (orjson and ``_Wrappers``), instead of one ``raw_decode``
    each.

    A run goes from an element's start to the buffer's last separator like the one before it (``, {"_id"``: comma,
    blanks, brace, first key), each separator's comma made a NUL to split the run at. Every piece orjson decodes,
    starting where an element starts, is that element, so a separator inside an element (a nested object with the
    same first key) only ends the run at the piece it cuts. The piece orjson refuses, and the rest of the run, go the
    ``raw_decode`` way, and so does a run with an integer orjson would make a float (beyond 64 bits: 20 characters)."""

    def __init__(self, window: _Window, reservoir: _Reservoir) -> None:
        self.window, self.reservoir = window, reservoir
        self.wrappers = _Wrappers()
        self.separator: str | None = None
        self.blocked_until = 0  # no run starts before this offset in the text (each piece is tried once)

    def read(self) -> tuple[int, bool] | None:
        """Read a run from the window's position, at an element's ``{``: how many elements were not documents and
        whether it ended at a separator's comma (else at an element to ``raw_decode``); None to ``raw_decode`` this
        one."""
        window = self.window
        if window.base + window.position < self.blocked_until or (self.separator or self._learn()) is None:
            return None
        stop = self._stop()
        start = window.position
        pieces, marks = self._split(start, stop)
        problems, documents, end = self._decode(pieces, marks, start)
        self.reservoir.offer_all(documents)
        if end == start:
            return None
        window.consumed(stop if end is None else end)
        return problems, end is None

    def _learn(self) -> str | None:
        """The separator before the element at the window's position, if it is all in the buffer."""
        buffer, start = self.window.buffer, self.window.position
        comma = start - 1
        while comma >= 0 and buffer[comma] in " \t\r\n":
            comma -= 1
        quote = start + 1
        while quote < len(buffer) and buffer[quote] in " \t\r\n":
            quote += 1
        close = buffer.find('"', quote + 1)
        if comma < 0 or buffer[comma] != "," or quote >= len(buffer) or buffer[quote] != '"' or close < 0:
            return None
        separator = buffer[comma:close + 1]
        if "\\" in separator or "\x00" in separator:
            return None
        self.separator = separator
        return separator

    def _stop(self) -> int:
        """Where the run ends: the buffer's last separator, after reading on when none follows the position (the
        element goes on in the next chunk)."""
        window, separator = self.window, self.separator
        assert separator is not None
        stop = window.buffer.rfind(separator, window.position)
        if stop < 0 and not window.eof:
            window.more()
            stop = window.buffer.rfind(separator, window.position)
        self.blocked_until = window.base + (stop if stop >= 0 else len(window.buffer))
        return stop

    def _split(self, start: int, stop: int) -> tuple[list[str], list[bytes]]:
        """The run's pieces and their marks (none: no run here)."""
        separator = self.separator
        assert separator is not None
        run = self.window.buffer[start:stop] if stop >= 0 else ""
        if not run or "\x00" in run:
            return [], []
        run = run.replace(separator, "\x00" + separator[1:])  # as long: offsets stay
        classes = run.encode().translate(_CLASSES, _UNCLASSED)
        if _LONG_NUMBER in classes:
            return [], []
        return run.split("\x00"), classes.translate(None, b'0D"').split(b"\x00")

    def _decode(self, pieces: list[str], marks: list[bytes], start: int) -> tuple[int, list[Any], int | None]:
        """Problems, documents, and the offset of the first piece orjson refuses (None: none)."""
        problems = 0
        documents: list[Any] = []
        keep = documents.append
        converted = self.wrappers.converted
        loads = orjson.loads
        for piece, mark in zip(pieces, marks):
            try:
                value = loads(piece)
            except orjson.JSONDecodeError:
                done = problems + len(documents)
                return problems, documents, start + sum(map(len, pieces[:done])) + done
            try:
                value = converted(value, piece, mark) if type(value) is dict else None
            except BAD_DOCUMENT:
                value = None
            if value is not None:
                keep(value)
            else:
                problems += 1
        return problems, documents, None if pieces else start


#: The classes ``_Runs._split`` translates a run to, deleting the rest, in one pass: ``$`` signs, opening brackets
#: ("{") and the NULs between pieces, which ``_Wrappers`` counts; and for integers beyond 64 bits (orjson reads them
#: as floats, ``raw_decode`` as ints), digits and minus signs ("0"), what ends a number (``,}]`` and blanks: "D") and
#: quotes. Such an integer has 20 characters: 20 zeros and a "D". Digits in a string end at a quote, so only a string
#: with 20 digits before a blank sends a run to ``raw_decode`` for nothing.
_CLASS_OF = {"$": "$", "{": "{", "[": "{", "\x00": "\x00", '"': '"'} | dict.fromkeys("0123456789-", "0") \
    | dict.fromkeys(",}] \t\r\n", "D")
_CLASSES = bytes(ord(_CLASS_OF.get(chr(code), " ")) for code in range(256))
_UNCLASSED = bytes(code for code in range(256) if chr(code) not in _CLASS_OF)
_LONG_NUMBER = b"0" * 20 + b"D"


def _skip_value(buffer: str, position: int) -> int:
    """End of the JSON value at ``position`` (for an element whose Extended JSON is invalid)."""
    depth = 0
    in_string = False
    escaped = False
    for index in range(position, len(buffer)):
        char = buffer[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
            if depth == 0:
                return index + 1
    return len(buffer)
