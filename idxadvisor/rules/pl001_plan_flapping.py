from __future__ import annotations

from idxadvisor.indexes.plans import parse_plan_summary
from idxadvisor.rules.base import Quiet, Rule, RuleContext, ShapeAnalysis, Verdict, render_fields
from idxadvisor.shapes.digest import PlanCost
from idxadvisor.units import counted, human_count, human_ms


class PlanFlapping(Rule):
    """One query shape keeps changing plans, and one of its plans costs far more than another.

    ## What it does
    Flags a query shape whose executions use several plan summaries, in turns (the plan changes again and again
    from one execution to the next, not once when an index was built), or that the server replans again and again,
    or whose plan cache key keeps changing. It names the competing plans with their share and what each costs per
    execution (duration, keys and documents examined), and what the worse plan cost the workload.

    ## Why is this bad?
    The planner picks a plan by racing the candidates for a few documents, then caches the winner. When the data a
    query touches varies (one customer with 10 orders, another with 2 million), the cached plan is good for some
    values and disastrous for others; each bad run may evict it and replan, so latency swings from milliseconds to
    seconds with nothing changed.

    ## Example
    ```js
    // indexes { customerId: 1 } and { createdAt: -1 } both compete for:
    db.orders.find({ customerId: 7, createdAt: { $gte: lastMonth } }).sort({ createdAt: -1 })
    ```

    ## Fix
    Give the shape one index that is best for every value, so that the race always ends the same way
    (`{ customerId: 1, createdAt: -1 }` above, equality → sort → range). Or pin the good plan: `setQuerySettings`
    with `indexHints` (8.0+), `planCacheSetFilter` (before 8.0), or `hint()` in the application.

    ## Options
    - `min_plan_share` (0.05): the share of executions a plan needs to count as competing.
    - `min_switches` (3): plan changes from one execution to the next before the rule fires.
    - `min_replans` (3): replans (`replanned`) that make a shape flap whatever its switches.
    - `min_cache_keys` (3): distinct plan cache keys (`planCacheKey`) that make a shape flap whatever its switches.
    - `min_cost_ratio` (2.0): how many times the worse plan's mean duration must exceed the better one's.

    ## References
    - https://www.mongodb.com/docs/manual/core/query-plans/
    - https://www.mongodb.com/docs/manual/reference/command/setQuerySettings/
    - https://www.mongodb.com/docs/manual/reference/command/planCacheSetFilter/
    """

    code = "PL001"
    name = "plan-flapping"
    category = "plan"
    severity = "warning"
    defaults = {"min_plan_share": 0.05, "min_switches": 3, "min_replans": 3, "min_cache_keys": 3, "min_cost_ratio": 2.0}

    def check(self, analysis: ShapeAnalysis, context: RuleContext) -> Verdict | Quiet | None:
        stats = analysis.stats
        if len(stats.plan_costs) < 2 and len(stats.plans) < 2:  # one plan (most shapes): nothing to compare
            return None
        executions = analysis.executions
        competing = {plan: cost for plan, cost in stats.plan_costs.items()
                     if cost.count >= 2 and cost.count >= self.options["min_plan_share"] * executions}
        cache_keys = len(stats.server_hashes.get("planCacheKey", ()))
        if len(competing) < 2:
            if len(stats.plans) > 1:
                return Quiet(f"{len(stats.plans)} plans, but only one with {self.options['min_plan_share']:.0%} of the "
                             "executions or more")
            return None
        switches = stats.plan_order.switches
        flapping = (switches >= self.options["min_switches"] or stats.replanned >= self.options["min_replans"]
                    or cache_keys >= self.options["min_cache_keys"])
        if not flapping:
            return Quiet(f"{len(competing)} plans, but the plan changed {switches} time(s) and was replanned "
                         f"{stats.replanned} time(s): not flapping (an index built or dropped during the log?)")
        good, bad = min(competing.items(), key=_mean), max(competing.items(), key=_mean)
        ratio = _mean(bad) / max(_mean(good), 1e-9)
        if ratio < self.options["min_cost_ratio"]:
            return Quiet(f"its {len(competing)} plans cost about the same ({_mean(good):,.0f} and "
                         f"{_mean(bad):,.0f} ms on average)")
        why = [f"the plan changed {counted(switches, 'time')} from one execution to the next"]
        if stats.replanned:
            why.append(f"it was replanned {counted(stats.replanned, 'time')}")
        if cache_keys >= self.options["min_cache_keys"]:
            why.append(f"its plan cache key took {cache_keys} values")
        message = (f"{analysis.shape.op} flaps between {len(competing)} plans ({'; '.join(why)}): "
                   f"{_describe(*bad, executions)} against {_describe(*good, executions)}.")
        extra = _extra_work(good[1], bad[1])
        details = [f"the worse plan cost {human_ms(bad[1].total_ms - bad[1].count * _mean(good))} more than the "
                   f"better one would have over its {counted(bad[1].count, 'execution')}"
                   + (f", and {human_count(extra)} more documents or keys examined" if extra else "")]
        indexes = [render_fields(key) for plan in competing for key in parse_plan_summary(plan).indexes]
        candidate = analysis.candidate
        if candidate and render_fields(candidate) not in indexes:
            details.append(f"an index in equality → sort → range order, {render_fields(candidate)}, is best for every "
                           "value and ends the race")
        details.append("or pin the better plan: setQuerySettings with indexHints (8.0+), planCacheSetFilter (before "
                       "8.0), or hint() in the application")
        return Verdict(message, details=details, impact=float(extra))


def _mean(item: tuple[str, PlanCost]) -> float:
    cost = item[1]
    return cost.total_ms / cost.count


def _describe(plan: str, cost: PlanCost, executions: int) -> str:
    examined = max(cost.docs_examined, cost.keys_examined) / cost.count
    return (f"{plan} in {cost.count * 100 / max(executions, 1):.0f}% of executions, {human_ms(cost.total_ms / cost.count)}"
            f" and {examined:,.0f} examined on average")


def _extra_work(good: PlanCost, bad: PlanCost) -> float:
    """Documents (or keys) the worse plan examined beyond what the better one would have, over its executions."""
    def per_execution(cost: PlanCost) -> float:
        return max(cost.docs_examined, cost.keys_examined) / cost.count

    return max(0.0, per_execution(bad) - per_execution(good)) * bad.count
