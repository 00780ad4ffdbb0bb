from __future__ import annotations

from idxadvisor.indexes.model import IndexSpec
from idxadvisor.rules.base import Quiet, Rule, RuleContext, ShapeAnalysis, Verdict
from idxadvisor.units import counted


class ShapeLosesSupport(Rule):
    """A query shape the baseline indexes serve is served by none of the proposed indexes.

    ## What it does
    For `idxadvisor check`: compares, for each shape of the recorded workload on a collection the change touches,
    the index that serves it today (among the baseline indexes, or the one its plan uses) with the proposed set. It
    is an error when no proposed index can even bound the scan (a collection scan), a warning when a shape served in
    equality → sort → range order is left with an index that bounds only part of it. With `--data`, the what-if
    estimator's numbers for today's plan and the proposed one are the evidence.

    ## Why is this bad?
    A query that loses its index examines the whole collection, or many more keys, for the same result: its latency
    and the server's load grow with the collection, and a blocking sort may appear. The change looks harmless in the
    diff of an index file or a migration; the recorded workload shows which queries pay for it.

    ## Example
    ```js
    // today: { status: 1, createdAt: -1 } serves find({ status }).sort({ createdAt: -1 })
    db.orders.dropIndex("status_1_createdAt_-1")
    db.orders.createIndex({ createdAt: -1, status: 1 })   // sort first: walks the index for every status
    ```

    ## Fix
    Keep an index that serves the shape (equality fields, then sort, then ranges), or change the queries in the same
    pull request. When an index is replaced, create the new one before dropping the old one.

    ## References
    - https://www.mongodb.com/docs/manual/tutorial/equality-sort-range-guideline/
    """

    code = "CI002"
    name = "shape-loses-support"
    severity = "error"
    category = "change"

    def check(self, analysis: ShapeAnalysis, context: RuleContext) -> Verdict | Quiet | None:
        change = context.change
        if change is None or not change.events_of(analysis.ns):
            return None
        if analysis.executions < context.settings.min_count:
            return Quiet(f"too few executions ({analysis.executions} < --min-count {context.settings.min_count})")
        baseline, proposed = change.baseline.get(analysis.ns, []), change.proposed.get(analysis.ns, [])
        served_today = analysis.served_by(baseline)
        today = served_today or analysis.bounded_by(baseline)
        if today is None:
            return Quiet("no baseline index serves it: nothing to lose")
        if analysis.served_by(proposed) is not None:
            return Quiet("a proposed index serves it")
        after = analysis.bounded_by(proposed)
        if after is not None and served_today is None:
            return Quiet(f"the proposed {after.name} {after} bounds its scan as today's {today.name} did")
        location = change.location_of(analysis.ns, today)
        runs = f"{counted(analysis.executions, 'execution')}"
        if after is None:
            return Verdict(f"{analysis.shape.op} {_how(served_today, today)} today; no proposed index can bound its "
                           f"scan: it would scan the collection ({runs}, {analysis.examination()} today).",
                           details=_details(today, analysis), location=location)
        return Verdict(f"{analysis.shape.op} is served by {today.name} {today} today; of the proposed indexes only "
                       f"{after.name} {after} bounds part of its scan ({runs}).", severity="warning",
                       details=_details(today, analysis), location=location)


def _how(served: IndexSpec | None, today: IndexSpec) -> str:
    return f"is served by {today.name} {today}" if served is not None else f"bounds its scan with {today.name} {today}"


def _details(today: IndexSpec, analysis: ShapeAnalysis) -> list[str]:
    details = [f"shape: {analysis.shape.text}"]
    if analysis.stats.main_plan:
        details.append(f"today's plan in the log: {analysis.stats.main_plan}")
    details.append(f"keep {today.name}, or create an index that serves the shape before it goes")
    return details
