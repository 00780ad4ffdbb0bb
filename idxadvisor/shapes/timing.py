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


#: Each component's factor to whole units: microseconds for a time, itself for a count. Sums of whole numbers merge
#: exactly, in any order (sums of floats do not).
_WHOLE = {name: 1000 if unit == "ms" else 1 for name, _, unit in COMPONENTS}
#: The components sketched for percentiles: the waits and planning (working and CPU time are in the duration's).
SKETCHED = frozenset({*WAITS, "planning_ms"})
SUM, EXECUTIONS, DURATION = 0, 1, 2  # the places of a component's numbers


@dataclass(slots=True)
class TimeBreakdown:
    """The time components of one shape's executions. Per component: its sum in whole units (microseconds for a
    time), the executions that logged it and their total duration in microseconds; times sketched in whole
    milliseconds. So any split of the executions merges to the same numbers."""

    executions: int = 0  # executions that logged any component
    duration_us: int = 0  # their total duration, in microseconds
    components: dict[str, list[int]] = field(default_factory=dict)  # name -> [sum, executions, duration µs]
    histograms: dict[str, DurationHistogram] = field(default_factory=dict)  # SKETCHED components, whole ms

    def add(self, timing: dict[str, float], duration_ms: float) -> None:
        self.executions += 1
        duration = round(duration_ms * 1000)
        self.duration_us += duration
        components = self.components
        for name, value in timing.items():
            numbers = components.get(name)
            if numbers is None:
                numbers = components[name] = [0, 0, 0]
            numbers[0] += round(value * _WHOLE[name])
            numbers[1] += 1
            numbers[2] += duration
            if name in SKETCHED:
                histogram = self.histograms.get(name)
                if histogram is None:
                    histogram = self.histograms[name] = DurationHistogram()
                histogram.add(round(value))

    def merge(self, other: TimeBreakdown) -> None:
        self.executions += other.executions
        self.duration_us += other.duration_us
        for name, theirs in other.components.items():
            mine = self.components.get(name)
            if mine is None:
                self.components[name] = list(theirs)
            else:
                for place, value in enumerate(theirs):
                    mine[place] += value
        for name, histogram in other.histograms.items():
            kept = self.histograms.get(name)
            if kept is None:
                self.histograms[name] = kept = DurationHistogram()
            kept.merge(histogram)

    def measured(self, name: str) -> int:
        """The executions that logged the component."""
        numbers = self.components.get(name)
        return numbers[EXECUTIONS] if numbers is not None else 0

    def total(self, name: str) -> float | None:
        """The component summed over the executions that logged it, in its unit (ms for a time); None: unknown."""
        numbers = self.components.get(name)
        if numbers is None:
            return None
        return numbers[SUM] / _WHOLE[name] if _WHOLE[name] != 1 else float(numbers[SUM])

    def share(self, name: str) -> float | None:
        """The component's part of the duration of the executions that logged it (None: unknown; times only)."""
        numbers = self.components.get(name)
        if numbers is None or not numbers[DURATION] or UNITS.get(name) != "ms":
            return None
        return numbers[SUM] / numbers[DURATION]

    def mean(self, name: str) -> float | None:
        """Per execution that logged it, in its unit."""
        total = self.total(name)
        count = self.measured(name)
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
