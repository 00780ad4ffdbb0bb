"""Whole-document inputs: a JSON array of profiler documents, pretty-printed explain output, or a mongo-shell
``printjson`` dump (``ISODate(…)``, ``NumberLong(…)``). Read whole: these are small (``system.profile`` is a capped
collection), unlike logs, which are streamed.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from idxadvisor.models.events import EXPLAIN, PROFILE, UNKNOWN
from idxadvisor.parse.block import BlockOptions, BlockParser, BlockStats, EventSink, count_lines
from idxadvisor.parse.explain import event_from_explain, looks_like_explain
from idxadvisor.parse.profile import looks_like_profile_document
from idxadvisor.parse.shelldoc import ShellSyntaxError, iter_shell_documents, parse_shell_value

_BOM = "\ufeff".encode()
_WHITESPACE = re.compile(r"\s*")


def read_documents(data: bytes) -> tuple[list[Any], str | None]:
    """The top-level documents of a whole-document input, and why reading stopped early (None if it did not).

    An array that does not parse whole (cut off, or one damaged element) gives the elements before the damage.
    """
    if data.startswith(_BOM):
        data = data[len(_BOM):]
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    else:
        return (value if type(value) is list else [value]), None
    text = data.decode("utf-8", "replace")
    if text.lstrip().startswith("["):
        return _array_elements(text)
    documents: list[Any] = []
    try:
        for parsed in iter_shell_documents(text):
            documents.append(parsed.value)
    except ShellSyntaxError as exc:
        return documents, f"not JSON or mongo-shell syntax: {exc}"
    return documents, None


def _array_elements(text: str) -> tuple[list[Any], str | None]:
    """The elements of an array one by one, up to the first that cannot be read (JSON or mongo-shell syntax)."""
    documents: list[Any] = []
    position = text.index("[") + 1
    while True:
        position = _WHITESPACE.match(text, position).end()  # type: ignore[union-attr]  # always matches
        if position == len(text):
            return documents, _cut_off(documents)
        if text[position] == "]" and not documents:
            break
        try:
            parsed = parse_shell_value(text, position)
        except ShellSyntaxError as exc:
            if not text.rstrip().endswith("]"):  # no end to the array: it was cut, not damaged
                return documents, _cut_off(documents)
            return documents, f"array element {len(documents) + 1} cannot be read ({exc}); the rest is left out"
        try:
            documents.append(orjson.loads(text[position:parsed.end]))  # JSON is read as JSON, exactly
        except orjson.JSONDecodeError:
            documents.append(parsed.value)
        position = _WHITESPACE.match(text, parsed.end).end()  # type: ignore[union-attr]
        if position == len(text):
            return documents, _cut_off(documents)
        if text[position] == "]":
            break
        if text[position] != ",":
            return documents, f"array element {len(documents) + 1} cannot be read (no ',' at offset {position})"
        position += 1
    if text[position + 1:].strip():
        return documents, f"text after the array, from offset {position + 1}"
    return documents, None


def _cut_off(documents: list[Any]) -> str:
    count = len(documents)
    return f"the array is cut off after {count} element{'' if count == 1 else 's'}; the rest is left out"


def classify_documents(documents: list[Any]) -> str | None:
    """``explain`` or ``profile`` from the first document that is either; None when neither."""
    for document in documents:
        if looks_like_explain(document):
            return EXPLAIN
        if looks_like_profile_document(document):
            return PROFILE
    return None


def parse_documents(data: bytes, options: BlockOptions, sink: EventSink) -> tuple[BlockStats, str]:
    """Parse a whole-document input; returns its counts and its format (``explain``, ``profile`` or ``unknown``)."""
    documents, failure = read_documents(data)
    parser = BlockParser(PROFILE, options, sink)
    stats = parser.stats
    stats.lines = count_lines(data)
    for document in documents:
        if looks_like_explain(document):
            stats.entries += 1
            parser.emit(event_from_explain(document))
        elif looks_like_profile_document(document):
            parser.add_profile_document(document, None)
        else:
            parser.add_problem("neither a profiler document nor explain output", None, None)
    if failure is not None:
        parser.add_problem(failure, None, None)
    return parser.finish(), classify_documents(documents) or UNKNOWN
