"""What was read from each input: the ``inputs`` section of every report."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from idxadvisor.models.events import Problem
from idxadvisor.models.inventory import IndexSighting


@dataclass
class InputSummary:
    """Counts for one input, by the definitions of DESIGN.md ("JSON report", ``inputs``).

    ``entries`` are the slow-operation entries the server wrote (a multi-statement write counts once per entry);
    ``operations`` are the events they make once a write statement and its command entry count as one operation.
    """

    path: str
    format: str
    lines: int = 0
    entries: int = 0
    problems: int = 0
    truncated: int = 0
    operations: int = 0
    paired: int = 0  # command entries folded into the statement entries before them
    json_entries: int = 0
    text_entries: int = 0
    bytes: int = 0
    versions: set[str] = field(default_factory=set)
    first_ts: datetime | None = None
    last_ts: datetime | None = None
    error: str | None = None
    problem_examples: list[Problem] = field(default_factory=list)
    index_sightings: list[IndexSighting] = field(default_factory=list)  # what the input says about indexes
    head_sha256: str | None = None  # of the input's first 64 KiB as read (decompressed): with path and bytes, its identity
