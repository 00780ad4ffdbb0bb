"""What one refresh shows: the top shapes of the window and of the whole watch, the findings (the new ones marked)
and the suggested indexes; the same for the live view and the NDJSON lines.

The rules and the index advice run on the total digest, as ``analyze`` runs them, but not at every refresh: a run
waits until new lines arrived and until several times its own duration has passed since the last one, so that a
large digest never makes the view lag (the findings shown are then a few seconds old, and say so).
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from idxadvisor.api import advise
from idxadvisor.config import Settings
from idxadvisor.models.report import Finding, SuggestedIndex
from idxadvisor.shapes.digest import ShapeStats
from idxadvisor.watch.session import WatchSession
from idxadvisor.watch.window import WindowShape

#: Sort keys of the view: key pressed -> (name, what it sorts by, in words).
SORTS = {"t": ("total", "total time"), "c": ("count", "count"), "p": ("p95", "p95"),
         "r": ("ratio", "docs examined per returned")}
SORT_NAMES = [name for name, _ in SORTS.values()]
#: The advice takes at most this share of the time: after a run of d seconds, the next waits (1/share - 1) * d.
ADVICE_SHARE = 0.2


@dataclass(frozen=True)
class ShapeRow:
    fingerprint: str
    ns: str
    op: str
    shape: str
    count: int
    rate: float  # executions per second
    total_ms: float
    p95_ms: float
    docs_per_returned: float | None
    keys_per_returned: float | None

    def as_json(self) -> dict[str, Any]:
        return {"fingerprint": self.fingerprint, "ns": self.ns, "op": self.op, "shape": self.shape,
                "count": self.count, "rate_per_s": round(self.rate, 3), "total_ms": round(self.total_ms, 1),
                "p95_ms": round(self.p95_ms, 1), "docs_examined_per_returned": _rounded(self.docs_per_returned),
                "keys_examined_per_returned": _rounded(self.keys_per_returned)}


@dataclass(frozen=True)
class FindingRow:
    finding: Finding
    new: bool  # appeared since the previous refresh

    def as_json(self) -> dict[str, Any]:
        finding = self.finding
        document: dict[str, Any] = {"rule": finding.rule, "severity": finding.severity,
                                    "fingerprint": finding.fingerprint, "ns": finding.ns, "message": finding.message}
        if finding.index is not None:
            document["index"] = finding.index.model_dump(mode="json", exclude_none=True)
        return document


@dataclass
class Snapshot:
    time: datetime
    elapsed: float
    source: str
    status: str
    lines: int
    operations: int  # read, whatever the filters
    problems: int
    window_seconds: float
    window_covered: float
    window_operations: int  # of the shapes in scope (--ns, --exclude-ns, internal traffic, --min-ms)
    total_operations: int  # the same, since start
    window: list[ShapeRow]
    total: list[ShapeRow]
    findings: list[FindingRow]
    suggested: list[SuggestedIndex]
    advice_age: float | None  # seconds since the findings were worked out (None: not yet)
    sort: str
    paused: bool = False
    finished: bool = False

    @property
    def new_findings(self) -> list[FindingRow]:
        return [row for row in self.findings if row.new]

    def as_json(self) -> dict[str, Any]:
        """One NDJSON line (``idxadvisor watch`` without a terminal)."""
        return {
            "type": "interval",
            "time": self.time.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "elapsed_s": round(self.elapsed, 3),
            "input": {"source": self.source, "status": self.status or None, "lines": self.lines,
                      "operations": self.operations, "problems": self.problems},
            "window": {"seconds": self.window_seconds, "covered_s": round(self.window_covered, 3),
                       "operations": self.window_operations, "shapes": [row.as_json() for row in self.window]},
            "total": {"operations": self.total_operations, "shapes": [row.as_json() for row in self.total]},
            "sort": self.sort,
            "new_findings": [row.as_json() for row in self.new_findings],
            "findings": len(self.findings),
            "suggested_indexes": [{"ns": index.ns, "command": index.command, "impact": index.impact,
                                   "rules": index.rules} for index in self.suggested],
            "finished": self.finished,
        }


def _finding_key(finding: Finding) -> tuple[str, str, str, str]:
    return finding.rule, finding.fingerprint, finding.ns, finding.index.command if finding.index else ""


@dataclass
class Advisor:
    """The rules and index advice on the total digest, run when due (see the module's docstring)."""

    settings: Settings
    interval: float
    clock: Callable[[], float] = time.monotonic
    findings: list[Finding] = field(default_factory=list)
    suggested: list[SuggestedIndex] = field(default_factory=list)
    ran_at: float | None = None
    _next: float = 0.0
    _first_seen: dict[tuple[str, str, str, str], float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # one shape is enough in the report built here: the view shows its own rows, and shapes cost most of a report
        self._settings = self.settings.model_copy(update={"top": 1, "format": "text"})

    def run_if_due(self, session: WatchSession) -> bool:
        now = self.clock()
        if not session.changed or now < self._next:
            return False
        started = time.perf_counter()
        report = advise(session.total, session.summaries, self._settings)
        took = time.perf_counter() - started
        session.changed = False
        self.ran_at = now = self.clock()
        self._next = now + max(self.interval, took * (1 / ADVICE_SHARE - 1))
        self.findings, self.suggested = report.findings, report.suggested_indexes
        self._first_seen = {key: self._first_seen.get(key, now) for key in map(_finding_key, self.findings)}
        return True

    def rows(self, since: float) -> list[FindingRow]:
        """The findings, most important first; those that appeared after ``since`` are new."""
        return [FindingRow(finding, self._first_seen.get(_finding_key(finding), 0.0) > since)
                for finding in self.findings]


def _sort_key(sort: str, count: int, total_ms: float, p95: Callable[[], float], docs: int, returned: int,
              measured: int) -> tuple[float, int]:
    """The value a shape is ranked by (``p95`` is worked out only when the view is sorted by it)."""
    if sort == "count":
        value = float(count)
    elif sort == "p95":
        value = p95()
    elif sort == "ratio":
        ratio = _per_returned(docs, returned, measured)
        value = ratio if ratio is not None else -1.0
    else:
        value = total_ms
    return value, count


def _total_key(sort: str) -> Callable[[ShapeStats], tuple[float, int]]:
    def key(stats: ShapeStats) -> tuple[float, int]:
        return _sort_key(sort, stats.count, stats.duration.total, lambda: stats.duration.percentile(95),
                         stats.docs_examined, stats.nreturned, stats.measured)
    return key


def _window_key(sort: str) -> Callable[[tuple[ShapeStats, WindowShape]], tuple[float, int]]:
    def key(item: tuple[ShapeStats, WindowShape]) -> tuple[float, int]:
        shape = item[1]
        return _sort_key(sort, shape.count, shape.total_ms, lambda: shape.percentile(95), shape.docs_examined,
                         shape.nreturned, shape.measured)
    return key


def _per_returned(examined: int, returned: int, measured: int) -> float | None:
    return examined / returned if measured and returned else None


def _rounded(value: float | None) -> float | None:
    return round(value, 2) if value is not None else None


def total_row(stats: ShapeStats, seconds: float) -> ShapeRow:
    shape = stats.shape
    return ShapeRow(shape.fingerprint, shape.ns, shape.op, shape.text, stats.count, stats.count / seconds,
                    stats.duration.total, stats.duration.percentile(95),
                    _per_returned(stats.docs_examined, stats.nreturned, stats.measured),
                    _per_returned(stats.keys_examined, stats.nreturned, stats.measured))


def window_row(stats: ShapeStats, shape: WindowShape, seconds: float) -> ShapeRow:
    query = stats.shape
    return ShapeRow(query.fingerprint, query.ns, query.op, query.text, shape.count, shape.count / seconds,
                    shape.total_ms, shape.percentile(95),
                    _per_returned(shape.docs_examined, shape.nreturned, shape.measured),
                    _per_returned(shape.keys_examined, shape.nreturned, shape.measured))


def take_snapshot(session: WatchSession, advisor: Advisor, *, now: float, started: float, since: float, sort: str,
                  limit: int, source: str, status: str) -> Snapshot:
    """The view at ``now`` (clock seconds); findings that appeared after ``since`` are new."""
    elapsed = max(now - started, 1e-3)
    selected = session.selected_shapes()
    total_seconds = max(elapsed, _log_span(session))
    # ranked on the statistics themselves: rows (and percentiles) only for the few shown, whatever the digest's size
    total = [total_row(stats, total_seconds)
             for stats in heapq.nlargest(limit, selected.values(), key=_total_key(sort))]
    covered = session.window.covered(now)
    in_window = [(selected[fingerprint], shape) for fingerprint, shape in session.window.shapes.items()
                 if fingerprint in selected and shape.count > 0]
    window = [window_row(stats, shape, covered)
              for stats, shape in heapq.nlargest(limit, in_window, key=_window_key(sort))]
    summaries = session.summaries
    return Snapshot(
        time=datetime.now(timezone.utc), elapsed=elapsed, source=source, status=status,
        lines=sum(summary.lines for summary in summaries), operations=session.operations,
        problems=sum(summary.problems for summary in summaries), window_seconds=session.window.seconds,
        window_covered=covered, window_operations=sum(shape.count for _, shape in in_window),
        total_operations=sum(stats.count for stats in selected.values()), window=window,
        total=total, findings=advisor.rows(since), suggested=list(advisor.suggested),
        advice_age=None if advisor.ran_at is None else max(0.0, now - advisor.ran_at), sort=sort)


def _log_span(session: WatchSession) -> float:
    """Seconds between the first and last operation the log shows (a backlog read with --from-start spans more than
    the watch itself)."""
    firsts = [summary.first_ts for summary in session.summaries if summary.first_ts is not None]
    lasts = [summary.last_ts for summary in session.summaries if summary.last_ts is not None]
    if not firsts or not lasts:
        return 0.0
    return max(0.0, (max(lasts) - min(firsts)).total_seconds())
