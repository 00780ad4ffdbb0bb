"""Before and after: did the index help? Two digests of one workload (logs, profiler dumps or workload files read
before a change and after it) compared shape by shape (``idxadvisor compare``).

Shapes are matched by fingerprint. Per shape: executions per hour (over each side's time span), mean and p95
duration, keys and documents examined per document returned, the most frequent plan (``COLLSCAN → IXSCAN``), a
blocking sort gone or new, and the change in time spent, the ranking key (per hour when both sides span time, so a
day compared with an hour is fair; totals otherwise). The regression rule is stated in ``models/compare.py``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from idxadvisor import __version__
from idxadvisor.models.compare import ChangeStatus, Comparison, ShapeChange, ShapeSide, SideSummary
from idxadvisor.models.inputs import InputSummary
from idxadvisor.models.report import ToolInfo
from idxadvisor.shapes.digest import Digest, ShapeStats
from idxadvisor.shapes.timing import COMPONENTS, LABELS, WAITS
from idxadvisor.units import human_ms

DEFAULT_REGRESSION_PCT = 20.0
DEFAULT_MIN_EXECUTIONS = 10
MIN_CHANGE_MS = 1.0  # servers log whole milliseconds: a smaller change is rounding
_MIN_SPAN_HOURS = 1 / 60


@dataclass(frozen=True)
class Side:
    """One side of the comparison: its digest (shapes already scoped) and what it was read from."""

    digest: Digest
    inputs: list[InputSummary]


@dataclass(frozen=True)
class CompareOptions:
    regression_pct: float = DEFAULT_REGRESSION_PCT
    min_executions: int = DEFAULT_MIN_EXECUTIONS


def compare_workloads(before: Side, after: Side, options: CompareOptions) -> Comparison:
    summaries = _summary(before), _summary(after)
    per_hour = all(summary.hours for summary in summaries)
    changes = []
    for fingerprint in sorted(before.digest.shapes.keys() | after.digest.shapes.keys()):
        old, new = before.digest.shapes.get(fingerprint), after.digest.shapes.get(fingerprint)
        if (old is None or not old.count) and (new is None or not new.count):
            continue  # only executions below --min-ms on both sides
        changes.append(_change(old if old is not None and old.count else None,
                               new if new is not None and new.count else None, summaries, per_hour, options))
    changes.sort(key=lambda change: (-abs(change.time_change_ms), change.fingerprint))
    counts = {status: sum(change.status == status for change in changes)
              for status in ("regressed", "improved", "appeared", "vanished")}
    return Comparison(tool=ToolInfo(version=__version__), before=summaries[0], after=summaries[1],
                      regression_pct=options.regression_pct, min_executions=options.min_executions,
                      time_basis="per_hour" if per_hour else "total", shapes=changes, **counts)


def _summary(side: Side) -> SideSummary:
    firsts = [summary.first_ts for summary in side.inputs if summary.first_ts is not None]
    lasts = [summary.last_ts for summary in side.inputs if summary.last_ts is not None]
    first, last = (min(firsts) if firsts else None), (max(lasts) if lasts else None)
    hours = (last - first).total_seconds() / 3600 if first is not None and last is not None else None
    return SideSummary(inputs=[summary.path for summary in side.inputs],
                       errors=[f"{summary.path}: {summary.error}" for summary in side.inputs if summary.error],
                       operations=side.digest.operations, shapes=sum(1 for s in side.digest.shapes.values() if s.count),
                       first_seen=first, last_seen=last,
                       hours=round(hours, 4) if hours is not None and hours >= _MIN_SPAN_HOURS else None)


def _side(stats: ShapeStats, hours: float | None) -> ShapeSide:
    return ShapeSide(
        count=stats.count,
        per_hour=round(stats.count / hours, 2) if hours else None,
        total_ms=stats.duration.total,
        mean_ms=round(stats.duration.mean, 3),
        p95_ms=stats.duration.percentile(95),
        keys_examined_per_returned=_rounded(stats.per_returned(stats.keys_examined)),
        docs_examined_per_returned=_rounded(stats.per_returned(stats.docs_examined)),
        plans=dict(sorted(stats.plans.items(), key=lambda item: (-item[1], item[0]))),
        blocking_sorts=stats.blocking_sorts,
        time_components_ms=_components(stats),
    )


def _components(stats: ShapeStats) -> dict[str, float]:
    breakdown = stats.timing
    if breakdown is None:
        return {}
    return {name: round(mean, 3) for name, _, unit in COMPONENTS
            if unit == "ms" and (mean := breakdown.mean(name)) is not None}


def _change(old: ShapeStats | None, new: ShapeStats | None, summaries: tuple[SideSummary, SideSummary],
            per_hour: bool, options: CompareOptions) -> ShapeChange:
    known = new if new is not None else old
    assert known is not None
    before = _side(old, summaries[0].hours) if old is not None else None
    after = _side(new, summaries[1].hours) if new is not None else None
    change = ShapeChange(fingerprint=known.shape.fingerprint, ns=known.shape.ns, op=known.shape.op,
                         shape=known.shape.text, status="appeared" if before is None else "vanished",
                         before=before, after=after,
                         time_change_ms=_time(after, summaries[1], per_hour) - _time(before, summaries[0], per_hour))
    if before is None or after is None:
        return change
    change.mean_change_pct = _pct(before.mean_ms, after.mean_ms)
    change.p95_change_pct = _pct(before.p95_ms, after.p95_ms)
    old_plan, new_plan = next(iter(before.plans), None), next(iter(after.plans), None)
    if old_plan != new_plan:
        change.plan_change = f"{old_plan or 'no plan logged'} → {new_plan or 'no plan logged'}"
    old_sorts, new_sorts = before.blocking_sorts * 2 > before.count, after.blocking_sorts * 2 > after.count
    change.sort_change = "gone" if old_sorts and not new_sorts else "new" if new_sorts and not old_sorts else None
    change.status, change.reasons = _judge(before, after, options)
    if change.status == "regressed":
        change.cause = _cause(before, after)
        if change.cause is not None:
            change.reasons.append(change.cause)
    return change


#: The part of a regression one wait must explain for it to be named the cause.
CAUSE_SHARE = 0.5


def _cause(before: ShapeSide, after: ShapeSide) -> str | None:
    """A regression explained by a wait rather than by work: the wait that grew by most, when it grew by at least
    ``CAUSE_SHARE`` of the mean's growth (None: the time components do not explain it, or were not logged)."""
    grown = after.mean_ms - before.mean_ms
    if grown <= 0:
        return None
    old, new = before.time_components_ms, after.time_components_ms
    waits = [(new[name] - old.get(name, 0.0), name) for name in WAITS if name in new and name in old]
    if not waits:
        return None
    growth, name = max(waits)
    if growth < CAUSE_SHARE * grown:
        return None
    words = (f"slower because it waited, not because it worked more: {LABELS[name]} {human_ms(old[name])} → "
             f"{human_ms(new[name])} per execution")
    if "working_ms" in old and "working_ms" in new:
        words += f", working {human_ms(old['working_ms'])} → {human_ms(new['working_ms'])}"
    return words


def _time(side: ShapeSide | None, summary: SideSummary, per_hour: bool) -> float:
    if side is None:
        return 0.0
    return side.total_ms / summary.hours if per_hour and summary.hours else side.total_ms


def _judge(before: ShapeSide, after: ShapeSide, options: CompareOptions) -> tuple[ChangeStatus, list[str]]:
    """Regressed, improved or unchanged, and why (models/compare.py defines each)."""
    if min(before.count, after.count) < options.min_executions:
        return "unchanged", [f"not judged: {before.count} executions before, {after.count} after (fewer than "
                             f"--min-executions {options.min_executions} on a side)"]
    factor = 1 + options.regression_pct / 100
    grew = [f"{name} {human_ms(old)} → {human_ms(new)} (+{(new / old - 1) * 100 if old else float('inf'):.0f}%)"
            for name, old, new in _durations(before, after) if new > old * factor and new - old >= MIN_CHANGE_MS]
    if grew:
        return "regressed", grew
    fell = [f"{name} {human_ms(old)} → {human_ms(new)} ({(new / old - 1) * 100:.0f}%)"
            for name, old, new in _durations(before, after) if new * factor < old and old - new >= MIN_CHANGE_MS]
    return ("improved", fell) if fell else ("unchanged", [])


def _durations(before: ShapeSide, after: ShapeSide) -> Iterable[tuple[str, float, float]]:
    return (("mean", before.mean_ms, after.mean_ms), ("p95", before.p95_ms, after.p95_ms))


def _pct(old: float, new: float) -> float | None:
    return round((new / old - 1) * 100, 1) if old else None


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


__all__ = ["DEFAULT_MIN_EXECUTIONS", "DEFAULT_REGRESSION_PCT", "CompareOptions", "Side", "compare_workloads"]
