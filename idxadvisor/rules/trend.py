"""Growth over the log's span: a shape whose work per execution grows steadily while its traffic does not.

That is work that grows with the data, an unbounded scan waiting to become an incident. It is not a rule of its own:
the engine folds it into the findings of the shape (a detail line, and the impact counted at today's cost).

The series is the shape's documents examined per execution, minute by minute, when the log shows them, else its
duration per execution (an aggregation's runs one by one, when it has enough of them). It grows when the median of
its last third is at least ``MIN_FACTOR`` times the median of its first third, steadily (Spearman's rank correlation
with time at least ``MIN_CORRELATION``), while the executions per minute of the last third are at most
``MAX_COUNT_GROWTH`` times those of the first third.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from idxadvisor.shapes.digest import ShapeStats
from idxadvisor.units import human_count, human_ms

MIN_POINTS = 6
MIN_FACTOR = 2.0
MIN_CORRELATION = 0.6
MAX_COUNT_GROWTH = 1.5
DURATION, DOCUMENTS = "duration", "documents examined"


@dataclass(frozen=True)
class Growth:
    metric: str  # DURATION or DOCUMENTS, per execution
    first: float  # median of the first third of the series
    last: float  # median of the last third
    mean: float  # over the whole series, per execution
    span_ms: float
    correlation: float

    @property
    def factor(self) -> float:
        return self.last / self.first

    @property
    def current_rate(self) -> float:
        """Today's cost over the average cost: what counting every execution at the latest third's cost multiplies
        the shape's total by."""
        return max(1.0, self.last / self.mean) if self.mean > 0 else 1.0

    def describe(self) -> str:
        shown = human_ms if self.metric == DURATION else human_count
        return (f"its {self.metric} per execution grew steadily over the log's {human_ms(self.span_ms)}, from "
                f"{shown(self.first)} to {shown(self.last)} (x{self.factor:,.1f}, median of the first and last "
                "third) while its executions per minute did not: work that grows with the data")


def growth_of(stats: ShapeStats) -> Growth | None:
    """The shape's growth, documents examined first (the work itself), else duration; None when it does not grow."""
    if not _steady_traffic(stats):
        return None
    buckets = sorted(stats.timeline.buckets.items())
    executions = max(stats.count - stats.getmores, 1)
    if stats.docs_measured * 2 >= executions:
        found = _growth(DOCUMENTS, [(start * 60_000.0, bucket.docs_examined / bucket.count)
                                    for start, bucket in buckets if bucket.count],
                        stats.docs_examined / max(stats.count, 1))
        if found is not None:
            return found
    runs = stats.runs.latest()
    if len(runs) >= MIN_POINTS:
        return _growth(DURATION, [(start, duration) for start, duration in runs],
                       statistics.fmean(duration for _, duration in runs))
    return _growth(DURATION, [(start * 60_000.0, bucket.total_ms / bucket.count) for start, bucket in buckets
                              if bucket.count], stats.duration.mean)


def _growth(metric: str, series: Sequence[tuple[float, float]], mean: float) -> Growth | None:
    if len(series) < MIN_POINTS:
        return None
    third = len(series) // 3
    first = statistics.median(value for _, value in series[:third])
    last = statistics.median(value for _, value in series[-third:])
    if first <= 0 or last < MIN_FACTOR * first:
        return None
    correlation = spearman([moment for moment, _ in series], [value for _, value in series])
    if correlation < MIN_CORRELATION:
        return None
    return Growth(metric, first, last, mean, series[-1][0] - series[0][0], correlation)


def _steady_traffic(stats: ShapeStats) -> bool:
    """The executions per minute of the last third of the span are not much more than those of the first third (one
    minute buckets at least, so that a short log still has thirds)."""
    buckets = stats.timeline.buckets
    if len(buckets) < MIN_POINTS:
        return False
    first_minute, last_minute = min(buckets), max(buckets)
    width = stats.timeline.width_minutes
    third = (last_minute - first_minute + width) / 3
    early = sum(bucket.count for start, bucket in buckets.items() if start < first_minute + third)
    late = sum(bucket.count for start, bucket in buckets.items() if start >= last_minute + width - third)
    return late <= MAX_COUNT_GROWTH * max(early, 1)


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Spearman's rank correlation (average ranks for ties); 0 when either side does not vary."""
    rx, ry = _ranks(xs), _ranks(ys)
    mx, my = statistics.fmean(rx), statistics.fmean(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    vx = sum((a - mx) ** 2 for a in rx)
    vy = sum((b - my) ** 2 for b in ry)
    return cov / (vx * vy) ** 0.5 if vx and vy else 0.0


def _ranks(values: Sequence[float]) -> list[float]:
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    position = 0
    while position < len(order):
        end = position
        while end + 1 < len(order) and values[order[end + 1]] == values[order[position]]:
            end += 1
        for index in order[position: end + 1]:
            ranks[index] = (position + end) / 2
        position = end + 1
    return ranks
