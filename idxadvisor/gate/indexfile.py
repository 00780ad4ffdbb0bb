"""An index file for ``check``, read by ``analyze``'s reader (every format ``--indexes`` takes), with the position of
every entry where the file is JSON: DESIGN.md's map (namespace → ``listIndexes`` output) or mdbkit's export.

SARIF results point at the line and column of the entry a finding concerns, so the file is walked by hand at its
two outer levels (the object of namespaces, each one's array) and every index document is decoded with the standard
library's ``JSONDecoder.raw_decode`` at its own offset, which keeps key order and reports errors with their
position. Each entry then goes through the same validation as ``--indexes`` of ``analyze``
(``indexes.catalog.parse_index_entry``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from json.decoder import scanstring
from pathlib import Path

import orjson

from idxadvisor.errors import InputError
from idxadvisor.gate.positions import location_at, read_text
from idxadvisor.indexes.catalog import (
    IndexCatalog,
    check_namespace,
    load_index_file,
    mdbkit_database,
    parse_index_entry,
    qualified_name,
    with_id_index,
)
from idxadvisor.models.report import SourceLocation

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


@dataclass
class LocatedCatalog:
    """An index file as read: the catalog, and where each index (namespace, name) and each namespace is."""

    path: str
    catalog: IndexCatalog = field(default_factory=dict)
    locations: dict[tuple[str, str], SourceLocation] = field(default_factory=dict)
    namespace_locations: dict[str, SourceLocation] = field(default_factory=dict)


class _Walker:
    def __init__(self, text: str, path: str) -> None:
        self.text = text
        self.path = path
        self.position = 0

    def location(self, offset: int) -> SourceLocation:
        return location_at(self.text, self.path, offset)

    def fail(self, message: str, offset: int | None = None) -> InputError:
        return InputError(f"{self.location(self.position if offset is None else offset)}: {message}")

    def skip(self) -> str:
        """Skip whitespace; the next character, or "" at the end."""
        self.position = _WHITESPACE.match(self.text, self.position).end()  # type: ignore[union-attr]
        return self.text[self.position: self.position + 1]

    def expect(self, character: str, what: str) -> None:
        if self.skip() != character:
            found = repr(self.text[self.position]) if self.position < len(self.text) else "the end of the file"
            raise self.fail(f"expected {what}, found {found}")
        self.position += 1

    def string(self) -> str:
        if self.skip() != '"':
            raise self.fail("expected a namespace in double quotes")
        try:
            value, self.position = scanstring(self.text, self.position + 1)
        except json.JSONDecodeError as exc:
            raise self.fail(exc.msg, exc.pos) from None
        return value

    def value(self) -> object:
        self.skip()
        try:
            value, self.position = _DECODER.raw_decode(self.text, self.position)
        except json.JSONDecodeError as exc:
            raise self.fail(exc.msg, exc.pos) from None
        return value


def read_index_file(path: Path, option: str = "--indexes") -> LocatedCatalog:
    """An index file in any format ``analyze``'s ``--indexes`` reads, read by the same reader
    (``indexes.catalog.load_index_file``), with the position of every namespace and index where the file is JSON:
    DESIGN.md's namespace map, or mdbkit's export (its ``collections``); InputError with file, line and column for
    anything wrong in those, naming ``option`` otherwise."""
    text = read_text(path, "index file")
    try:
        document = orjson.loads(text)
    except orjson.JSONDecodeError:
        document = None
    located = parse_index_text(text, str(path), mdbkit_database(document)) if type(document) is dict \
        else LocatedCatalog(str(path))
    located.catalog = load_index_file(path, option=option)
    return located


def parse_index_text(text: str, path: str, database: str | None = None) -> LocatedCatalog:
    """DESIGN.md's namespace map with positions; with ``database`` (mdbkit's export, ``mdbkit_database``), the map
    under its ``collections``, each bare collection name read as a namespace of ``database``."""
    walker = _Walker(text, path)
    result = LocatedCatalog(path)
    if database is None:
        _namespace_map(walker, result, "")
    else:
        walker.expect("{", "an mdbkit export")
        while walker.skip() != "}":
            member = walker.string()
            walker.expect(":", f"':' after {member!r}")
            if member == "collections":
                _namespace_map(walker, result, database)
            else:
                walker.value()
            if walker.skip() != "}":
                walker.expect(",", "',' or '}' after a member of the export")
        walker.position += 1
    if walker.skip():
        raise walker.fail("unexpected text after the index file's object")
    return result


def _namespace_map(walker: _Walker, result: LocatedCatalog, database: str) -> None:
    walker.expect("{", "an object mapping each namespace to its list of indexes")
    if walker.skip() == "}":
        walker.position += 1
        return
    while True:
        walker.skip()
        start = walker.position
        ns = qualified_name(walker.string(), database)
        origin = str(walker.location(start))
        check_namespace(ns, origin)
        if ns in result.catalog:
            raise walker.fail(f"namespace {ns} is listed twice", start)
        result.namespace_locations[ns] = walker.location(start)
        walker.expect(":", "':' after the namespace")
        result.catalog[ns] = _indexes(walker, result, ns)
        walker.skip()
        if walker.text[walker.position: walker.position + 1] == "}":
            walker.position += 1
            return
        walker.expect(",", "',' or '}' after a namespace's indexes")


def _indexes(walker: _Walker, result: LocatedCatalog, ns: str) -> list:
    walker.expect("[", f"a list of indexes for {ns} (as listIndexes returns it)")
    specs = []
    if walker.skip() == "]":
        walker.position += 1
        return with_id_index(specs)
    while True:
        walker.skip()
        location = walker.location(walker.position)
        spec = parse_index_entry(walker.value(), str(location), ns, len(specs))
        if any(other.name == spec.name for other in specs):
            raise InputError(f"{location}: {ns}: two indexes are named {spec.name}")
        specs.append(spec)
        result.locations[ns, spec.name] = location
        if walker.skip() == "]":
            walker.position += 1
            return with_id_index(specs)
        walker.expect(",", "',' or ']' after an index")
