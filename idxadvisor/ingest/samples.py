"""Data samples for the what-if estimator (DESIGN.md "Data sample").

A sample is Extended JSON (relaxed or canonical) written as one array or as one document per line
(``mongoexport``'s default), or a ``mongodump`` ``.bson`` file; each may be gzip-compressed. Large files are
reservoir-sampled while streaming, so memory holds the sample, not the file.

Extended JSON is parsed by orjson into plain values and then walked once, turning each Extended JSON wrapper into its
BSON type: ``$oid``, the ``$number…`` wrappers and relaxed ``$date`` strings directly (the common ones: a document
of a typical export holds several), every other wrapper through ``bson.json_util``'s own hook, so that the values are
exactly what ``json_util`` decodes. Calling ``json_util``'s hook for every object of every document cost about 16 µs
of CPU a document; orjson and the walk cost about 6. Text orjson refuses (``NaN`` literals, integers beyond 64 bits)
is decoded by ``json_util`` as before. ``.bson`` files are read with ``bson.decode_file_iter``. Garbage collection
is paused while a sample loads.
"""

from __future__ import annotations

import gzip
import io
import json
import random
from collections.abc import Iterator, Mapping
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
#: What decoding one document may raise: it is then a bad document, counted, and the others are read.
_BAD_DOCUMENT = (ValueError, TypeError, OverflowError, BSONError, RecursionError, UnicodeDecodeError)
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

    Raises one of ``_BAD_DOCUMENT`` for text that is not a document (or is nested deeper than ``MAX_NESTING``)."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError:
        decoded = decode_extended_json(text if isinstance(text, str) else text.decode("utf-8"))
        if too_deep(decoded):
            raise _TooDeep(f"nested deeper than {MAX_NESTING} levels") from None
        return decoded
    return _converted(value, 1)


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


def _relaxed_date(text: str) -> Any:
    """A relaxed ``$date`` string as json_util gives it with these options (naive UTC); None to leave it to
    json_util (dates it formats otherwise, or out of the ``datetime`` range)."""
    if len(text) < 20 or text[10] != "T":
        return None
    try:
        if text[-1] == "Z":  # UTC already: read it as the naive time it is
            moment = datetime.fromisoformat(text[:-1])
            return moment if moment.tzinfo is None else None
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None
    return moment.astimezone(timezone.utc).replace(tzinfo=None)


#: The wrappers converted without json_util, from their string value (a None result leaves it to json_util).
_FAST_WRAPPERS: dict[str, Any] = {"$oid": ObjectId, "$numberLong": Int64, "$numberInt": int, "$numberDouble": float,
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
    sizes = []
    for doc in documents[::step]:
        try:
            sizes.append(len(bson.encode(doc)))
        except (BSONError, TypeError, ValueError, OverflowError):
            continue
    return sum(sizes) / len(sizes) if sizes else None



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
    for line in _lines_with_prefix(text, first):
        stripped = line.strip()
        if not stripped:
            continue
        try:
            doc = decode_document(stripped)  # checks the nesting depth as it walks
        except _BAD_DOCUMENT:
            problems += 1
            continue
        if type(doc) is not dict:
            problems += 1
            continue
        reservoir.offer(doc)
    if reservoir.seen == 0 and problems:
        raise InputError(f"{path}: not a data sample (no line is a JSON document)")
    return problems


def _lines_with_prefix(text: IO[str], prefix: str) -> Iterator[str]:
    first_line = True
    for line in text:
        if first_line:
            first_line = False
            yield prefix + line
        else:
            yield line
    if first_line and prefix:
        yield prefix


class _Window:
    """The unread part of a streamed text, refilled a chunk at a time."""

    def __init__(self, text: IO[str], path: Path) -> None:
        self.text, self.path = text, path
        self.buffer, self.position, self.eof = "", 0, False

    def more(self) -> None:
        """Append the next chunk to the unread part (rebased at 0); at the end of the text, set ``eof``."""
        if len(self.buffer) - self.position > _MAX_DOCUMENT_TEXT:
            raise InputError(f"{self.path}: a document is larger than {_MAX_DOCUMENT_TEXT} bytes")
        chunk = self.text.read(_CHUNK)
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
            self.buffer, self.position = self.buffer[self.position:], 0


def _read_json_array(text: IO[str], reservoir: _Reservoir, path: Path) -> int:
    """Stream ``[doc, doc, ...]`` with ``raw_decode`` over a sliding window (never one giant ``loads``)."""
    decoder = json.JSONDecoder()  # plain objects (the C scanner); wrappers are converted by the walk
    window = _Window(text, path)
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
        try:
            value, end = decoder.raw_decode(window.buffer, window.position)
        except json.JSONDecodeError:
            if window.eof:
                raise InputError(f"{path}: not a data sample (malformed JSON array)") from None
            window.more()
            continue
        except _BAD_DOCUMENT:
            value, end = None, _skip_value(window.buffer, window.position)  # a bad element, or one too deep
        if end >= len(window.buffer) and not window.eof:
            window.more()  # the value may go on in the next chunk (a number, or an element skipped unread)
            continue
        try:
            value = _converted(value, 1) if type(value) is dict else None
        except _BAD_DOCUMENT:
            value = None
        if value is not None:
            reservoir.offer(value)
        else:
            problems += 1
        window.consumed(end)
        expect_value = False
    return problems


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
