from __future__ import annotations

from idxadvisor.rules.base import Quiet, Rule, RuleContext, ShapeAnalysis, Verdict
from idxadvisor.units import human_ms

_REGULAR = 0.5  # interquartile spread of the intervals, relative to their median, below which runs are periodic


def counts_or_sums(stages: tuple[str, ...]) -> bool:
    """A ``$match`` and a ``$count``, or a ``$group`` with a ``$sum`` accumulator (shaped ``$group(_id=…; count,
    $sum($amount))``)."""
    if "$match" not in stages:
        return False
    accumulators = [accumulator for stage in stages if stage.startswith("$group(") and "; " in stage
                    for accumulator in stage[stage.rindex("; ") + 2: -1].split(", ")]
    return "$count" in stages or any(name == "count" or name.startswith("$sum") for name in accumulators)


class RepeatedAggregation(Rule):
    """The same counting or summing aggregation runs again and again, re-reading the data each time.

    ## What it does
    Flags an aggregation shape with a `$match` and a `$group` that counts or sums (or a `$count`) that runs many
    times, often on a fixed period, such as a dashboard or a progress bar polling. The severity is raised when runs
    take longer than the period between them: they then overlap and pile up.

    ## Why is this bad?
    Each run reads every matching document again to produce a handful of numbers that changed little since the last
    run. Its cost grows with the data while the answer does not, and polling multiplies it by every open screen.

    ## Example
    ```js
    // every 15 s from the marketing dashboard, reading 380,000 events each time
    db.events.aggregate([
      { $match: { campaignId: 17, createdAt: { $gte: lastWeek } } },
      { $group: { _id: "$type", n: { $sum: 1 } } }
    ])
    ```

    ## Fix
    Maintain the counters as the data changes, in the same write:
    ```js
    db.campaignStats.updateOne({ campaignId: 17, day: today }, { $inc: { "views": 1 } }, { upsert: true })
    ```
    or refresh a materialized view on a schedule with `$merge` and let the dashboard read that.

    ## Options
    - `min_runs` (10): executions before the rule fires.
    - `min_docs_per_run` (1000): documents a run reads before the rule fires.

    ## References
    - https://www.mongodb.com/docs/manual/core/materialized-views/
    - https://www.mongodb.com/docs/manual/reference/operator/aggregation/merge/
    """

    code = "AG001"
    name = "repeated-aggregation"
    category = "aggregation"
    severity = "warning"
    applies_to = frozenset({"aggregate"})
    defaults = {"min_runs": 10, "min_docs_per_run": 1000.0}

    def check(self, analysis: ShapeAnalysis, context: RuleContext) -> Verdict | Quiet | None:
        stats = analysis.stats
        if not counts_or_sums(stats.shape.stages):
            return None
        runs = stats.count - stats.getmores
        if runs < self.options["min_runs"]:
            return Quiet(f"ran {runs} times (fewer than {self.options['min_runs']})")
        documents = stats.docs_examined / max(runs, 1)
        if documents < self.options["min_docs_per_run"]:
            return Quiet(f"reads {documents:,.0f} documents per run (fewer than {self.options['min_docs_per_run']:,.0f})")
        span = _span(stats)
        message = (f"the same aggregation ran {runs:,} times{span}, reading {documents:,.0f} documents each time to "
                   "produce a few counts or sums.")
        details = []
        severity = None
        intervals = stats.intervals
        if intervals.n >= 3:
            period = intervals.percentile(50)
            spread = intervals.percentile(75) - intervals.percentile(25)
            if period > 0 and spread <= _REGULAR * period:
                details.append(f"it runs on a fixed period of about {human_ms(period)}, like a dashboard polling")
            typical = stats.duration.percentile(50)
            if period > 0 and typical > period:
                severity = "error"
                details.append(f"a run takes {human_ms(typical)} (p50, up to {human_ms(stats.duration.maximum)}), "
                               f"longer than the {human_ms(period)} between runs: runs overlap and pile up")
        details.append("maintain the counts on write ($inc in the same update), or refresh a materialized view with "
                       "$merge on a schedule and read that")
        return Verdict(message, severity=severity, details=details, impact=float(stats.docs_examined))


def _span(stats) -> str:  # noqa: ANN001 - ShapeStats
    if stats.first_seen is None or stats.last_seen is None:
        return ""
    return f" in {human_ms((stats.last_seen - stats.first_seen).total_seconds() * 1000)}"
