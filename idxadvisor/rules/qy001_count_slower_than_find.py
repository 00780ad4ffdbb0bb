from __future__ import annotations

from idxadvisor.indexes.plans import parse_plan_summary
from idxadvisor.rules.base import Quiet, Rule, RuleContext, ShapeAnalysis, Verdict, render_fields
from idxadvisor.shapes.shape import QueryShape

_COUNT_STAGES = ("$match", "$skip", "$limit")


def is_count(shape: QueryShape) -> bool:
    """A count command, or a pipeline that only filters and counts (countDocuments, $count, $group with $sum: 1)."""
    if shape.op == "count":
        return True
    if shape.op != "aggregate" or not shape.stages or shape.stages[0] != "$match":
        return False
    *leading, last = shape.stages
    counting = last == "$count" or last == "$group(_id=const; count)"
    return counting and all(stage in _COUNT_STAGES for stage in leading)


class CountSlowerThanFind(Rule):
    """Counting a predicate costs more than finding with it: usually the total of a paged listing.

    ## What it does
    Pairs each count (`count`, `countDocuments`, a `$count` stage, a `$group` with `$sum: 1` after a `$match`) with a
    find on the same collection whose filter has the same shape, and flags the count when it is markedly slower. It
    proposes an index that lets the count run as a `COUNT_SCAN` (index keys only, no documents), or caching the total.
    The finding joins the group of the find's own index finding (one root cause, one item in the report), and stands
    without an index when an existing one (the `--indexes` file, or the inventory the log gives) serves it already.

    ## Why is this bad?
    A listing page reads 50 documents and stops; its total must read every matching document. Shown on every page
    view, the count costs more than the page it decorates, and grows with the data while the page does not.

    ## Example
    ```js
    db.orders.find({ status: "pending", region: "north" }).limit(50)        //  30 ms
    db.orders.countDocuments({ status: "pending", region: "north" })        // 400 ms, 12,500 documents read
    ```

    ## Fix
    ```js
    db.orders.createIndex({ region: 1, status: 1 })   // the count becomes a COUNT_SCAN over index keys
    ```
    Or cache the total, refresh it periodically, or show an estimate ("more than 1,000") past the first pages.

    ## Options
    - `min_ratio` (1.5): how many times slower than the find (mean duration) the count must be.

    ## References
    - https://www.mongodb.com/docs/manual/reference/method/db.collection.countDocuments/
    - https://www.mongodb.com/docs/manual/reference/explain-results/#covered-queries
    """

    code = "QY001"
    name = "count-slower-than-find"
    category = "query"
    severity = "warning"
    applies_to = frozenset({"count", "aggregate"})
    proposes_index = True
    priority = 40
    stands_without_index = True  # a count slower than its find is worth saying even when the index exists
    defaults = {"min_ratio": 1.5}

    def check(self, analysis: ShapeAnalysis, context: RuleContext) -> Verdict | Quiet | None:
        shape = analysis.shape
        if not is_count(shape):
            return None
        finds = [stats for stats in context.shapes_of(shape.ns)
                 if stats.shape.op == "find" and stats.shape.filter == shape.filter and stats.count]
        if not finds:
            return Quiet("no find with the same filter to compare the count with")
        find = max(finds, key=lambda stats: stats.count)
        count_mean, find_mean = analysis.stats.duration.mean, find.duration.mean
        if count_mean < self.options["min_ratio"] * max(find_mean, 1e-9):
            return Quiet(f"the count ({count_mean:,.0f} ms on average) is not markedly slower than the find "
                         f"({find_mean:,.0f} ms)")
        message = (f"counting this filter takes {count_mean:,.0f} ms on average, {count_mean / max(find_mean, 1):,.1f}"
                   f"x the {find_mean:,.0f} ms of the find with the same filter ({max(find.count - find.getmores, 1):,} finds, "
                   f"{analysis.executions:,} counts): {_documents(analysis)}.")
        details = [f"the find: {find.shape.text}"]
        plan = analysis.plan
        if plan is not None and "COUNT_SCAN" in plan.stages:
            details.append("the count already runs as a COUNT_SCAN: cache the total or show an estimate instead")
            return Verdict(message, details=details, related=[find.shape.fingerprint])
        if plan is None and analysis.candidate and analysis.candidate in _indexes_in_plans(context, shape.ns):
            details.append(f"the log shows {render_fields(analysis.candidate)} in use on this collection (it does not "
                           "show the count's plan): the count can already read index keys only; cache the total or "
                           "show an estimate instead")
            return Verdict(message, details=details, related=[find.shape.fingerprint])
        if analysis.roles.residual:
            fields = ", ".join(sorted(analysis.roles.residual))
            details.append(f"{fields} cannot be answered from index keys: the count will still read documents; "
                           "caching the total is the lasting fix")
        elif analysis.candidate:
            details.append(f"with {render_fields(analysis.candidate)} the count reads index keys only (COUNT_SCAN); "
                           "or cache the total and refresh it in the background")
        return Verdict(message, details=details, index=analysis.candidate or None,
                       related=[find.shape.fingerprint])


def _indexes_in_plans(context: RuleContext, ns: str) -> set:
    """The key patterns the plans of the collection's shapes use: indexes the log proves exist."""
    return {key for stats in context.shapes_of(ns) for plan in stats.plans
            for key in parse_plan_summary(plan).indexes}


def _documents(analysis: ShapeAnalysis) -> str:
    stats, runs = analysis.stats, analysis.executions
    if not analysis.examined_measured:
        return "the log does not show how much a count reads (older servers log no counters for it)"
    if not stats.docs_measured:
        return f"{stats.keys_examined / runs:,.0f} documents or keys (nscanned) read per count"
    if stats.docs_examined == 0 and stats.keys_examined:
        return f"{stats.keys_examined / runs:,.0f} index keys (and no documents) read per count"
    return f"{stats.docs_examined / runs:,.0f} documents read per count"
