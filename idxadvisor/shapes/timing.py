"""Where a shape's time went: the time components its executions logged (``Event.timing``), summed and sketched.

A component is counted over the executions that logged it (``measured``), never over all of them: a server version
that does not log it leaves it unknown, not 0. Time components also keep a histogram (``shapes.sketch``) for their
percentiles. Everything merges by adding, so partial breakdowns from blocks, processes and workload files combine
exactly.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from idxadvisor.shapes.sketch import DurationHistogram

#: Every component, in report order: (name, label, unit). Units: ``ms`` (a time), ``count``, ``bytes``.
COMPONENTS: tuple[tuple[str, str, str], ...] = (
    ("working_ms", "working", "ms"),
    ("queued_ms", "queued for execution", "ms"),
    ("ingress_queued_ms", "queued at ingress", "ms"),
    ("disk_read_ms", "reading from disk", "ms"),
    ("lock_wait_ms", "waiting for locks", "ms"),
    ("flow_control_ms", "flow control", "ms"),
    ("oplog_slot_ms", "waiting for oplog slots", "ms"),
    ("write_concern_ms", "waiting for write concern", "ms"),
    ("planning_ms", "planning", "ms"),
    ("cpu_ms", "on CPU", "ms"),
    ("write_conflicts", "write conflicts", "count"),
    ("admissions", "admissions", "count"),
    ("bytes_read", "bytes read from disk", "bytes"),
)
UNITS = {name: unit for name, _, unit in COMPONENTS}
LABELS = {name: label for name, label, _ in COMPONENTS}
#: The waits: time an execution spent not working (the stacked bar's segments, besides the rest).
WAITS = ("queued_ms", "ingress_queued_ms", "disk_read_ms", "lock_wait_ms", "flow_control_ms", "oplog_slot_ms",
         "write_concern_ms")


def _whole(name: str, value: float) -> int:
    """A component in whole units: microseconds for a time, itself for a count. Sums of whole numbers merge exactly,
    in any order (sums of floats do not)."""
    return round(value * 1000) if UNITS.get(name) == "ms" else round(value)


@dataclass(slots=True)
class TimeBreakdown:
    """The time components of one shape's executions. Times are summed in whole microseconds, and sketched in whole
    milliseconds, so that any split of the executions merges to the same numbers."""

    executions: int = 0  # executions that logged any component
    duration_us: int = 0  # their total duration, in microseconds
    sums: dict[str, int] = field(default_factory=dict)  # microseconds for a time, else the count
    measured: dict[str, int] = field(default_factory=dict)  # executions that logged each component
    measured_us: dict[str, int] = field(default_factory=dict)  # the total duration of those executions (µs)
    histograms: dict[str, DurationHistogram] = field(default_factory=dict)  # time components, whole milliseconds

    def add(self, timing: dict[str, float], duration_ms: float) -> None:
        self.executions += 1
        duration = round(duration_ms * 1000)
        self.duration_us += duration
        sums, measured, measured_us = self.sums, self.measured, self.measured_us
        for name, value in timing.items():
            sums[name] = sums.get(name, 0) + _whole(name, value)
            measured[name] = measured.get(name, 0) + 1
            measured_us[name] = measured_us.get(name, 0) + duration
            if UNITS.get(name) == "ms":
                histogram = self.histograms.get(name)
                if histogram is None:
                    histogram = self.histograms[name] = DurationHistogram()
                histogram.add(round(value))

    def merge(self, other: TimeBreakdown) -> None:
        self.executions += other.executions
        self.duration_us += other.duration_us
        for mine, theirs in ((self.sums, other.sums), (self.measured, other.measured),
                             (self.measured_us, other.measured_us)):
            for name, value in theirs.items():
                mine[name] = mine.get(name, 0) + value
        for name, histogram in other.histograms.items():
            kept = self.histograms.get(name)
            if kept is None:
                self.histograms[name] = kept = DurationHistogram()
            kept.merge(histogram)

    def total(self, name: str) -> float | None:
        """The component summed over the executions that logged it, in its unit (ms for a time); None: unknown."""
        if name not in self.sums:
            return None
        value = self.sums[name]
        return value / 1000 if UNITS.get(name) == "ms" else float(value)

    def share(self, name: str) -> float | None:
        """The component's part of the duration of the executions that logged it (None: unknown; times only)."""
        total = self.measured_us.get(name)
        if not total or name not in self.sums or UNITS.get(name) != "ms":
            return None
        return self.sums[name] / total

    def mean(self, name: str) -> float | None:
        """Per execution that logged it, in its unit."""
        count = self.measured.get(name)
        total = self.total(name)
        return total / count if count and total is not None else None

    def percentile(self, name: str, p: float) -> float | None:
        histogram = self.histograms.get(name)
        return histogram.percentile(p) if histogram is not None and histogram.n else None

    def waited_share(self) -> float | None:
        """The waits' part of the duration, where the log says it: ``1 - working/duration`` when the server logged
        working time (8.0+), else the sum of the waits it logged over their executions' duration (None: unknown)."""
        working = self.share("working_ms")
        if working is not None:
            return max(0.0, 1.0 - working)
        shares = [share for share in (self.share(name) for name in WAITS) if share is not None]
        return min(1.0, sum(shares)) if shares else None


#: What is not work for an index to shorten: the waits, reading into the cache, planning.
NOT_WORK = (*WAITS, "planning_ms")
NOT_WORK_SHARE = 0.5  # past this part of its time spent not working, a shape's time is not about indexes
#: Work an index would still cut, whatever the waits: this many documents examined per execution, this many per
#: document returned.
HEAVY_EXAMINED = 1000
HEAVY_RATIO = 100


def not_work_share(breakdown: TimeBreakdown | None) -> float | None:
    """The part of the time the log says was not work (None: it does not say)."""
    if breakdown is None:
        return None
    shares = [share for share in (breakdown.share(name) for name in NOT_WORK) if share is not None]
    waited = breakdown.waited_share()
    if not shares and waited is None:
        return None
    return min(1.0, max(sum(shares), waited or 0.0))


def time_not_work(breakdown: TimeBreakdown | None, executions: int, docs_examined: int,
                  returned: int) -> str | None:
    """Why an index would not shorten a shape's time (None: it might): most of its time was waiting, reading from
    disk or planning, and it does little work. The index rules and the selection leave such a shape alone."""
    share = not_work_share(breakdown)
    if share is None or share < NOT_WORK_SHARE or executions <= 0:
        return None
    per_execution = docs_examined / executions
    if per_execution >= HEAVY_EXAMINED and docs_examined >= HEAVY_RATIO * max(returned, 1):
        return None
    assert breakdown is not None
    parts = sorted(((breakdown.share(name) or 0.0, name) for name in NOT_WORK), reverse=True)
    main = ", ".join(f"{LABELS[name]} {part:.0%}" for part, name in parts[:2] if part >= 0.05)
    return f"its time is not work ({main or f'waiting {share:.0%}'}, as the server logged it): no index shortens it"
