"""Whole-document inputs: a JSON array of profiler documents, pretty-printed explain output, or a mongo-shell
``printjson`` dump (``ISODate(…)``, ``NumberLong(…)``). Read whole: these are small (``system.profile`` is a capped
collection), unlike logs, which are streamed.
"""

from __future__ import annotations

from typing import Any

import orjson

from idxadvisor.models.events import EXPLAIN, PROFILE, UNKNOWN
from idxadvisor.parse.block import BlockOptions, BlockParser, BlockStats, EventSink, count_lines
from idxadvisor.parse.explain import event_from_explain, looks_like_explain
from idxadvisor.parse.profile import looks_like_profile_document
from idxadvisor.parse.shelldoc import ShellSyntaxError, iter_shell_documents


def read_documents(data: bytes) -> tuple[list[Any], str | None]:
    """The top-level documents of a whole-document input, and why reading stopped early (None if it did not)."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    else:
        return (value if type(value) is list else [value]), None
    documents: list[Any] = []
    try:
        for parsed in iter_shell_documents(data.decode("utf-8", "replace")):
            documents.append(parsed.value)
    except ShellSyntaxError as exc:
        return documents, f"not JSON or mongo-shell syntax: {exc}"
    return documents, None


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
