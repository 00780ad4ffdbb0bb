"""The words of ``idxadvisor compare`` that every human-readable format shares (text, Markdown, HTML): the side and
verdict lines and one shape's numbers, before → after. Kept apart from the renderers so that ``comparison.py``
(which loads ``html_compare.py`` lazily) and ``html_compare.py`` both import it and not each other."""

from __future__ import annotations

from typing import Any

from idxadvisor.models.compare import Comparison, ShapeChange, SideSummary
from idxadvisor.units import counted, human_count, human_ms


def side_line(name: str, summary: SideSummary) -> str:
    span = f" over {summary.hours:,.1f} h" if summary.hours else ""
    inputs = f"{len(summary.inputs)} input{'s' if len(summary.inputs) != 1 else ''}"
    operations = "operation" if summary.operations == 1 else "operations"
    return f"{name}: {inputs}, {human_count(summary.operations)} {operations}, {counted(summary.shapes, 'shape')}{span}"


def verdict_line(comparison: Comparison) -> str:
    rule = (f"mean or p95 up more than {comparison.regression_pct:g}% with at least {comparison.min_executions} "
            "executions on each side")
    counts = (f"{comparison.improved} improved, {comparison.appeared} appeared, {comparison.vanished} vanished")
    if comparison.regressed:
        return f"{comparison.regressed} shape{'s' if comparison.regressed != 1 else ''} regressed ({rule}); {counts}"
    return f"no shape regressed ({rule}); {counts}"


def exit_line(comparison: Comparison) -> tuple[int, str]:
    """The exit status of ``compare`` and why (the text and Markdown reports' last line; the command exits with it)."""
    errors = comparison.before.errors + comparison.after.errors
    if errors:
        return 2, f"exit 2: {len(errors)} input{'s' if len(errors) != 1 else ''} could not be read ({errors[0]})"
    if comparison.regressed:
        return 1, (f"exit 1: {comparison.regressed} shape{'s' if comparison.regressed != 1 else ''} regressed (mean "
                   f"or p95 up more than {comparison.regression_pct:g}%, --regression-pct)")
    return 0, f"exit 0: no shape regressed (mean or p95 up more than {comparison.regression_pct:g}%, --regression-pct)"


def time_change(change: ShapeChange, basis: str) -> str:
    unit = " per hour" if basis == "per_hour" else ""
    if change.time_change_ms < 0:
        return f"saves {human_ms(-change.time_change_ms)}{unit}"
    return f"costs {human_ms(change.time_change_ms)} more{unit}"


def arrow(before: Any, after: Any, shown: Any) -> str:
    """``before → after``, a dash for a side the shape did not run on."""
    return f"{'–' if before is None else shown(before)} → {'–' if after is None else shown(after)}"


def pct(value: float | None) -> str:
    return "" if value is None else f" ({value:+,.0f}%)"


def per_returned(value: float | None) -> str:
    return f"{value:,.1f}"


def side_values(change: ShapeChange, name: str) -> tuple[Any, Any]:
    return (getattr(change.before, name) if change.before is not None else None,
            getattr(change.after, name) if change.after is not None else None)


def detail_lines(change: ShapeChange) -> list[str]:
    """The numbers of one shape, before → after, as lines people read."""
    rate = side_values(change, "per_hour")
    lines = [f"executions {arrow(*side_values(change, 'count'), human_count)}"
             + (f", per hour {arrow(*rate, lambda value: f'{value:,.1f}')}" if any(rate) else "")
             + f" · mean {arrow(*side_values(change, 'mean_ms'), human_ms)}{pct(change.mean_change_pct)}"
             + f" · p95 {arrow(*side_values(change, 'p95_ms'), human_ms)}{pct(change.p95_change_pct)}"]
    keys, docs = side_values(change, "keys_examined_per_returned"), side_values(change, "docs_examined_per_returned")
    if any(keys) or any(docs):
        lines.append(f"keys examined per returned {arrow(*keys, per_returned)} · docs examined per returned "
                     f"{arrow(*docs, per_returned)}")
    known = change.after or change.before
    plan = change.plan_change or (next(iter(known.plans), None) if known is not None else None)
    if plan:
        sort = f" · blocking sort {change.sort_change}" if change.sort_change else ""
        unchanged = change.plan_change is None and change.before is not None and change.after is not None
        lines.append(f"plan {plan}{' (unchanged)' if unchanged else ''}{sort}")
    if change.cause:
        lines.append(change.cause)
    if change.status == "unchanged":
        lines += change.reasons  # why it was not judged (a regression or an improvement shows in the numbers)
    return lines
