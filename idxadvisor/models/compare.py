"""The result of ``idxadvisor compare``: one workload before a change and one after, shape by shape.

Every renderer reads this model (``report/comparison.py``); ``--format json`` writes it as it is. A shape is
*regressed* when it ran at least ``min_executions`` times on each side and its mean or its p95 duration grew by more
than ``regression_pct`` percent (and by at least a whole millisecond, the resolution of server logs); *improved* when
either fell by that much and neither grew; *appeared* or *vanished* when only one side ran it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field

from idxadvisor.models.report import SCHEMA_VERSION, ToolInfo, _Model

ChangeStatus = Literal["regressed", "improved", "unchanged", "appeared", "vanished"]


class SideSummary(_Model):
    """What one side was read from, and the time it spans (executions per hour are counted over it)."""

    inputs: list[str]
    errors: list[str] = Field(default_factory=list)  # inputs that could not be read: "path: reason"
    operations: int = 0
    shapes: int = 0
    first_seen: datetime | None = None
    last_seen: datetime | None = None
    hours: float | None = None  # None when the side spans less than a minute or has no timestamps


class ShapeSide(_Model):
    """One shape on one side."""

    count: int
    per_hour: float | None = None
    total_ms: float
    mean_ms: float
    p95_ms: float
    keys_examined_per_returned: float | None = None
    docs_examined_per_returned: float | None = None
    plans: dict[str, int] = Field(default_factory=dict)  # plan summary -> executions, most frequent first
    blocking_sorts: int = 0
    #: where the time went: each time component's mean per execution that logged it (ms); absent when not logged
    time_components_ms: dict[str, float] = Field(default_factory=dict)


class ShapeChange(_Model):
    fingerprint: str
    ns: str
    op: str
    shape: str
    status: ChangeStatus
    before: ShapeSide | None = None
    after: ShapeSide | None = None
    time_change_ms: float  # after minus before: time per hour when both sides span time, else total time
    mean_change_pct: float | None = None
    p95_change_pct: float | None = None
    plan_change: str | None = None  # "COLLSCAN → IXSCAN { status: 1 }": the most frequent plan, when it changed
    sort_change: Literal["gone", "new"] | None = None  # a blocking (in-memory) sort gone or new
    reasons: list[str] = Field(default_factory=list)  # why it is regressed or improved, or why it was not judged
    #: a regression the server's time components explain: the time went to a wait (queued, locks, replication...),
    #: not to more work ("queued for execution 3 ms → 240 ms per execution, working 3 ms → 3 ms")
    cause: str | None = None


class Comparison(_Model):
    schema_version: int = SCHEMA_VERSION
    kind: Literal["comparison"] = "comparison"
    tool: ToolInfo
    before: SideSummary
    after: SideSummary
    regression_pct: float
    min_executions: int
    time_basis: Literal["per_hour", "total"]  # what time_change_ms measures
    shapes: list[ShapeChange]  # ranked by the size of the change in time, largest first
    regressed: int = 0
    improved: int = 0
    appeared: int = 0
    vanished: int = 0

    @property
    def passed(self) -> bool:
        return self.regressed == 0
