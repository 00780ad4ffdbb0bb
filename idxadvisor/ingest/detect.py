"""Which format an input is in, from its first bytes (log-formats.md §0).

Line formats (JSON log, text log, one profiler document per line) are streamed; everything that is one JSON or
mongo-shell value spread over many lines (a JSON array of profiler documents, pretty-printed explain output) is a
whole-document input, and so is anything that opens with ``[`` (an array written a document per line looks like a
profiler export line by line). Otherwise the first lines vote, so one damaged line at the top does not decide the
format; the parsers still look at every line by itself, so a file that changes format half-way (a 4.2 → 4.4
upgrade) is read whole.
"""

from __future__ import annotations

import re
from collections import Counter

import orjson

from idxadvisor.models.events import JSON_LOG, PROFILE, PROFILE_OPS, TEXT_LOG, UNKNOWN

WHOLE_DOCUMENT = "document"
EMPTY = "empty"
WORKLOAD = "workload"  # a workload file (``analyze --save-workload``): a digest, not a log
WORKLOAD_KIND = "idxadvisor-workload"
_WORKLOAD_HEAD = re.compile(rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"kind"\s*:\s*"' + WORKLOAD_KIND.encode() + rb'"')
HEAD_SIZE = 64 * 1024
_VOTING_LINES = 50
_TEXT_TIMESTAMP = re.compile(
    r"(?:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d|(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov"
    r"|Dec) [ \d]\d \d\d:\d\d:\d\d)\S*\s+(?:[FEWID]\d?\s+\S+\s+)?\["
)


def is_workload_head(head: bytes) -> bool:
    """A workload file opens with its ``kind`` marker (the writer puts it first)."""
    return _WORKLOAD_HEAD.match(head) is not None


def detect_format(head: bytes) -> str:
    """``json-log``, ``text-log``, ``profile`` (a document per line), ``document`` (whole), ``workload``, ``empty`` or
    ``unknown``."""
    if is_workload_head(head):
        return WORKLOAD
    text = head.decode("utf-8", "replace").lstrip("\ufeff")
    if not text.strip():
        return EMPTY
    if text.lstrip().startswith("["):  # a JSON array, even one written a document per line, is one document
        return WHOLE_DOCUMENT
    lines = text.split("\n")
    if len(head) >= HEAD_SIZE and len(lines) > 1:
        lines.pop()  # the head may end in the middle of a line
    votes: Counter[str] = Counter()
    first = ""
    for line in lines:
        stripped = line.strip()
        if not stripped:
            continue
        first = first or stripped
        votes[_line_kind(stripped)] += 1
        if sum(votes.values()) >= _VOTING_LINES:
            break
    votes.pop(UNKNOWN, None)
    if votes:
        kind, _ = votes.most_common(1)[0]
        return kind
    return WHOLE_DOCUMENT if first.startswith(("{", "[")) else UNKNOWN


def _line_kind(line: str) -> str:
    if line.startswith("{"):
        try:
            value = orjson.loads(line)
        except orjson.JSONDecodeError:
            return UNKNOWN
        if type(value) is not dict:
            return UNKNOWN
        if "t" in value and ("msg" in value or "attr" in value or "c" in value):
            return JSON_LOG
        op = value.get("op")
        if type(op) is str and op in PROFILE_OPS and "ns" in value:
            return PROFILE
        return WHOLE_DOCUMENT
    if line.startswith("["):
        return WHOLE_DOCUMENT if _parses(line) else UNKNOWN
    if _TEXT_TIMESTAMP.match(line):
        return TEXT_LOG
    return UNKNOWN


def _parses(line: str) -> bool:
    try:
        orjson.loads(line)
    except orjson.JSONDecodeError:
        return False
    return True
