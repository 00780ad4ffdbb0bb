"""What the rules on the causes of time (TM001 to TM007) share: the numbers of a shape's time breakdown, in words.

These rules never propose an index: their shapes' time is not work an index would cut (``shapes.timing``). Each
says what the log could not show.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from datetime import datetime
from typing import ClassVar

from idxadvisor.rules.base import QUERY_OPS, Quiet, Rule, RuleContext, ShapeAnalysis, Verdict
from idxadvisor.shapes.digest import ShapeStats
from idxadvisor.shapes.timing import LABELS, TimeBreakdown
from idxadvisor.units import human_ms

#: Every operation a slow-query line may time.
TIMED_OPS = frozenset({*QUERY_OPS, "insert", "getMore", "bulkWrite"})
DEFAULTS = {"min_share": 0.3, "min_mean_ms": 10.0, "min_executions": 3}
NOTICEABLE_SHARE = 0.1  # below this part of the time, a component is not worth a word, even under --verbose


def component_share(breakdown: TimeBreakdown | None, names: tuple[str, ...]) -> tuple[float, float]:
    """(the part of the duration the components took, their mean per execution in ms), over the executions that
    logged each; (0, 0) when none did."""
    if breakdown is None:
        return 0.0, 0.0
    share = sum(breakdown.share(name) or 0.0 for name in names)
    mean = sum(breakdown.mean(name) or 0.0 for name in names)
    return min(share, 1.0), mean


def significant(analysis: ShapeAnalysis, names: tuple[str, ...], options: dict) -> tuple[float, float] | str | None:
    """The share and mean of the components when they pass the rule's thresholds; else why not (for ``Quiet``) when
    they took a noticeable part of the time, or None when there is nothing to say (not logged, or negligible)."""
    breakdown = analysis.stats.timing
    if breakdown is None or not any(name in breakdown.components for name in names):
        return None
    share, mean = component_share(breakdown, names)
    if share < NOTICEABLE_SHARE:
        return None
    if analysis.executions < options["min_executions"]:
        return f"{analysis.executions} execution(s), fewer than {options['min_executions']}"
    if share < options["min_share"] or mean < options["min_mean_ms"]:
        return (f"{' and '.join(LABELS[name] for name in names)}: {share:.0%} of its time, {human_ms(mean)} per "
                f"execution (below {options['min_share']:.0%} or {human_ms(options['min_mean_ms'])})")
    return share, mean


class WaitRule(Rule):
    """A rule on one wait in a shape's time (TM002 to TM007): silent until the components it reads pass its
    thresholds (``significant``, the rule's options), then ``verdict`` words the finding. It never proposes an index."""

    category = "time"
    applies_to = TIMED_OPS
    defaults = dict(DEFAULTS)
    components: ClassVar[tuple[str, ...]]  # the time breakdown's components the rule is about

    def check(self, analysis: ShapeAnalysis, context: RuleContext) -> Verdict | Quiet | None:
        if analysis.stats.timing is None:  # most shapes of most logs: nothing to read (``significant`` says None)
            return None
        found = significant(analysis, self.components, self.options)
        if found is None or isinstance(found, str):
            return Quiet(found) if found is not None else None
        breakdown = analysis.stats.timing
        assert breakdown is not None  # significant() read the components from it
        share, mean = found
        return self.verdict(analysis, context, breakdown, share, mean)

    def verdict(self, analysis: ShapeAnalysis, context: RuleContext, breakdown: TimeBreakdown, share: float,
                mean: float) -> Verdict:
        """The finding: ``share`` of the shape's time went to the components, ``mean`` ms per execution."""
        raise NotImplementedError


DESCRIBED_LIMIT = 90  # characters of a shape's text in a message


def described(stats: ShapeStats) -> str:
    """The shape as the report names it (its text: fields and operators, never values), cut when long."""
    text = stats.shape.text or f"{stats.shape.op} {stats.shape.ns}"
    return text if len(text) <= DESCRIBED_LIMIT else text[: DESCRIBED_LIMIT - 1] + "…"


def worst(breakdown: TimeBreakdown, name: str) -> str:
    p95 = breakdown.percentile(name, 95)
    return f" (p95 {human_ms(p95)})" if p95 else ""


def span(stats: ShapeStats) -> tuple[datetime, datetime] | None:
    """When the shape ran: from its first execution's start to its last's end (None without timestamps)."""
    if stats.first_seen is None or stats.last_seen is None:
        return None
    from datetime import timedelta

    return stats.first_seen - timedelta(milliseconds=stats.duration.maximum), stats.last_seen


def overlapping(first: ShapeStats, second: ShapeStats) -> bool:
    a, b = span(first), span(second)
    return a is not None and b is not None and a[0] <= b[1] and b[0] <= a[1]


class BusyIndex:
    """The timeline buckets of many shapes by their start: which shapes ran in given minutes and how much, without
    going through every shape for every finding (TM003 and TM008 ask once per finding, over thousands of shapes)."""

    def __init__(self, shapes: Iterable[ShapeStats]) -> None:
        self._shapes: list[ShapeStats] = []
        # per bucket width, per bucket start: (shape number, executions, total ms) of each shape's bucket there
        self._by_width: dict[int, dict[int, list[tuple[int, int, float]]]] = {}
        self._busiest: dict[tuple[frozenset[int], int], list[tuple[ShapeStats, int, float]]] = {}
        self._rows: dict[tuple[int, int], list[tuple[float, int]]] = {}  # per start, its shapes by ms: ``_ranked``
        for stats in shapes:
            number = len(self._shapes)
            self._shapes.append(stats)
            starts = self._by_width.setdefault(stats.timeline.width_minutes, {})
            for start, bucket in stats.timeline.buckets.items():
                starts.setdefault(start, []).append((number, bucket.count, bucket.total_ms))

    def busy_in(self, minutes: set[int]) -> list[tuple[ShapeStats, int, float]]:
        """Each shape that ran in the given epoch minutes, with its executions and total ms in the buckets that hold
        them (a bucket's start is its first minute rounded down to its width, as ``Timeline`` aligns it)."""
        counts: dict[int, int] = {}
        totals: dict[int, float] = {}
        for width, starts in self._by_width.items():
            for start in sorted({minute - minute % width for minute in minutes}):
                for number, count, total in starts.get(start, ()):
                    if number in counts:
                        counts[number] += count
                        totals[number] += total
                    else:
                        counts[number] = count
                        totals[number] = total
        shapes = self._shapes
        return [(shapes[number], count, totals[number]) for number, count in counts.items()]

    def busiest(self, minutes: set[int], limit: int) -> list[tuple[ShapeStats, int, float]]:
        """The ``limit + 1`` shapes of ``busy_in`` with the most ms in those minutes (most first, then by fingerprint),
        executions logged: enough for a caller to leave out its own shape, or those under a floor of ms, and keep
        ``limit``. Worked out once per set of minutes (the victims of one saturated stretch share theirs)."""
        key = (frozenset(minutes), limit)
        found = self._busiest.get(key)
        if found is None:
            found = self._busiest[key] = self._top(minutes, limit + 1)
        return found

    def _top(self, minutes: set[int], wanted: int) -> list[tuple[ShapeStats, int, float]]:
        """The ``wanted`` busiest, reading each bucket start's shapes from the busiest down and stopping once no shape
        not read yet can make the top (the threshold algorithm: a shape not read yet holds at most the ms of the row
        reached in every start); when that would read about as much as ``busy_in``, ``busy_in`` itself."""
        starts = [(width, start) for width, held in self._by_width.items()
                  for start in sorted({minute - minute % width for minute in minutes}) if start in held]
        entries = sum(len(self._by_width[width][start]) for width, start in starts)
        rows = [self._ranked(width, start) for width, start in starts]
        order = lambda item: (-item[2], item[0].shape.fingerprint)  # noqa: E731
        read: set[int] = set()
        candidates: list[tuple[ShapeStats, int, float]] = []
        depth, work = 0, 0
        while True:
            bound, left = 0.0, False
            for row in rows:
                if depth < len(row):
                    left = True
                    total, number = row[depth]
                    bound += total
                    if number not in read:
                        read.add(number)
                        work += len(starts)
                        item = self._exact(number, starts)
                        if item[1]:
                            candidates.append(item)
            if not left:
                break
            if work > entries:  # about as much as summing every bucket of those minutes: do that instead
                return heapq.nsmallest(wanted, (item for item in self.busy_in(minutes) if item[1]), key=order)
            depth += 1
            if len(candidates) >= wanted:
                kth = heapq.nsmallest(wanted, candidates, key=order)[-1]
                if kth[2] > bound * (1 + 1e-9) + 1e-9:  # sums in another order may differ in their last bits
                    break
        return heapq.nsmallest(wanted, candidates, key=order)

    def _ranked(self, width: int, start: int) -> list[tuple[float, int]]:
        """(ms, shape number) of the shapes of one bucket start, the most ms first."""
        ranked = self._rows.get((width, start))
        if ranked is None:
            ranked = self._rows[(width, start)] = sorted(((total, number) for number, _, total
                                                          in self._by_width[width][start]), key=lambda row: -row[0])
        return ranked

    def _exact(self, number: int, starts: list[tuple[int, int]]) -> tuple[ShapeStats, int, float]:
        """One shape's executions and ms in those starts, summed in ``busy_in``'s order (the same float)."""
        stats = self._shapes[number]
        width = stats.timeline.width_minutes
        buckets = stats.timeline.buckets
        count, total, first = 0, 0.0, True
        for bucket_width, start in starts:
            bucket = buckets.get(start) if bucket_width == width else None
            if bucket is not None:
                if first:
                    count, total, first = bucket.count, bucket.total_ms, False
                else:
                    count += bucket.count
                    total += bucket.total_ms
        return stats, count, total


def minutes_of(stats: ShapeStats) -> set[int]:
    width = stats.timeline.width_minutes
    return {start + offset for start in stats.timeline.buckets for offset in range(width)}
