from __future__ import annotations

from idxadvisor.rules.base import RuleContext, ShapeAnalysis, Verdict
from idxadvisor.rules.causes import WaitRule, described, worst
from idxadvisor.shapes.timing import TimeBreakdown
from idxadvisor.units import human_ms

_PLANNED = frozenset({"find", "count", "distinct", "aggregate", "update", "delete", "findAndModify"})


class PlanSelection(WaitRule):
    """A shape spends its time choosing a plan: the planner races many candidate indexes, again and again.

    ## What it does
    Flags a shape whose executions spent a large part of their time planning (`planningTimeMicros`, 7.0+ JSON
    logs): the planning time per execution, how often the shape was replanned, and the indexes of its collection
    (from `--indexes`) that could compete for it. It says what the log cannot show: the candidate plans themselves.

    ## Why is this bad?
    Without a cached plan, the planner runs every candidate index for a while and keeps the winner. With many
    indexes sharing a leading field, or a plan evicted again and again (replanning), each execution pays the race;
    a query that reads 10 documents spends most of its time choosing how.

    ## Example
    ```js
    db.events.find({ campaignId: 3, type: "click" })  // 210 ms, 180 ms of it planning
    ```

    ## Fix
    Drop the indexes that only compete (prefixes of others, unused ones: IX005, IX006), so that fewer plans race;
    pin the plan with `setQuerySettings` (`indexHints`, 8.0+), a plan cache filter or `hint()`; look at why the
    cached plan is evicted (PL001).

    ## Options
    - `min_share` (0.3): the part of the time spent planning before the rule fires.
    - `min_mean_ms` (10): the planning time per execution before the rule fires.
    - `min_executions` (3)

    ## References
    - https://www.mongodb.com/docs/manual/core/query-plans/
    - https://www.mongodb.com/docs/manual/reference/command/setQuerySettings/
    """

    code = "TM007"
    name = "plan-selection"
    applies_to = _PLANNED
    components = ("planning_ms",)

    def verdict(self, analysis: ShapeAnalysis, context: RuleContext, breakdown: TimeBreakdown, share: float,
                mean: float) -> Verdict:
        stats = analysis.stats
        message = (f"{described(stats)} spent {share:.0%} of its time planning, {human_ms(mean)} per "
                   f"execution{worst(breakdown, 'planning_ms')}: choosing a plan costs more than running it.")
        details = []
        if stats.replanned:
            details.append(f"it was replanned {stats.replanned:,} times: the cached plan keeps being evicted")
        fields = set(analysis.roles.equality) | set(analysis.roles.range) | {name for name, _ in stats.shape.sort}
        if analysis.existing is not None:
            competing = [index for index in analysis.existing if index.key and index.key[0][0] in fields]
            details.append(f"{len(competing)} index(es) of the collection lead with one of its fields and may race: "
                           + ", ".join(index.name or str(index.key) for index in competing[:6]))
        details.append("drop the indexes that only compete, or pin the plan (setQuerySettings indexHints 8.0+, a plan "
                       "cache filter, hint())")
        details.append("the log cannot show the candidate plans: explain('allPlansExecution') can")
        return Verdict(message, details=details, impact=0.0)
