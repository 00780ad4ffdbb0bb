"""What a logged ``planSummary`` says: which stages ran and which index key patterns they used.

``COLLSCAN``; ``IXSCAN { status: 1, createdAt: -1 }``; ``IXSCAN { a: 1 }, IXSCAN { b: 1 }`` for an ``$or``;
``COUNT_SCAN``/``DISTINCT_SCAN``/``EXPRESS_IXSCAN { … }``; ``IDHACK``; ``EOF``. Key patterns are printed in shell syntax
with unquoted field names (log-formats.md §2).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from idxadvisor.indexes.model import IndexSpecError, KeyPattern, key_pattern

_STAGE = re.compile(r"\s*([A-Z_]+)(?:\s*\{([^{}]*)\})?\s*(?:,|$)")
_INDEX_STAGES = frozenset({"IXSCAN", "COUNT_SCAN", "DISTINCT_SCAN", "EXPRESS_IXSCAN", "EXPRESS_CLUSTERED_IXSCAN"})
_PAIR = re.compile(r'\s*(?:"((?:[^"\\]|\\.)*)"|([^:,]+?))\s*:\s*(-?\d+(?:\.\d+)?|"[^"]*")\s*(?:,|$)')


@dataclass(frozen=True, slots=True)
class PlanSummary:
    text: str
    stages: tuple[str, ...]
    indexes: tuple[KeyPattern, ...]

    @property
    def is_collection_scan(self) -> bool:
        return "COLLSCAN" in self.stages and not self.indexes


@functools.lru_cache(maxsize=16_384)  # a workload's few plan texts are read again by each rule and the selection
def parse_plan_summary(text: str) -> PlanSummary:
    """Stages and index key patterns of a plan summary; anything unreadable is simply left out."""
    stages: list[str] = []
    indexes: list[KeyPattern] = []
    position = 0
    while position < len(text):
        match = _STAGE.match(text, position)
        if match is None or match.end() == position:
            break
        stage, body = match.group(1), match.group(2)
        stages.append(stage)
        if body is not None and stage in _INDEX_STAGES:
            key = _key(body)
            if key:
                indexes.append(key)
        position = match.end()
    return PlanSummary(text, tuple(stages), tuple(indexes))


def _key(body: str) -> KeyPattern:
    pairs = []
    position = 0
    while position < len(body):
        match = _PAIR.match(body, position)
        if match is None or match.end() == position:
            return ()
        name = match.group(1) if match.group(1) is not None else match.group(2).strip()
        value = match.group(3)
        pairs.append((name, value.strip('"') if value.startswith('"') else float(value)))
        position = match.end()
    try:
        return key_pattern(pairs)
    except IndexSpecError:
        return ()
