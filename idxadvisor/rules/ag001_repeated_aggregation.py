from __future__ import annotations

from idxadvisor.rules.base import Quiet, Rule, RuleContext, ShapeAnalysis, Verdict
from idxadvisor.rules.trend import growth_of
from idxadvisor.shapes.digest import ShapeStats
from idxadvisor.shapes.sketch import DurationHistogram
from idxadvisor.units import counted, human_ms

_REGULAR = 0.5  # interquartile spread of the intervals, relative to their median, below which runs are periodic
YIELD_ITERATIONS = 128  # work cycles between yields before 4.4 (internalQueryExecYieldIterations, SERVER-46161)


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
    take longer than the period between them, or start before the previous run has ended: they then overlap and pile
    up.

    Servers before 4.2 log no `docsExamined` (and often no plan) for an aggregation, only `numYields`, `reslen` and
    the duration. The rule then judges from what the log does show: the period, the overlap, a duration that grows
    run after run, and `numYields` as a measure of work (a server before 4.4 yields every 128 documents or 10 ms of
    work, so yields × 128 bounds the documents a run reads). The finding says what the log could not show.

    The same aggregation means the same values: a run's literal values are compared by a fingerprint (a hash of
    the pipeline as logged; the values themselves are never kept). When the runs counted different values, as an
    ad-hoc generator or a person trying values does, and do not come on a regular period, the rule stays quiet
    (`-v` says why): each run is then a query to index (the IX rules), not a counter to keep. A dashboard whose time
    window moves with the clock changes its values at every run, but polls on a period: that still counts.

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
    - `min_runs` (10): executions before the rule fires; without a regular period, runs with the same values.
    - `min_docs_per_run` (1000): documents a run reads before the rule fires (from `numYields` when the log does not
      show documents examined).
    - `min_ms_per_run` (1000): when the log shows neither documents examined nor yields, the median duration of a run
      that counts as heavy.

    ## References
    - https://www.mongodb.com/docs/manual/core/materialized-views/
    - https://www.mongodb.com/docs/manual/reference/operator/aggregation/merge/
    """

    code = "AG001"
    name = "repeated-aggregation"
    category = "aggregation"
    severity = "warning"
    applies_to = frozenset({"aggregate"})
    defaults = {"min_runs": 10, "min_docs_per_run": 1000.0, "min_ms_per_run": 1000.0}

    def check(self, analysis: ShapeAnalysis, context: RuleContext) -> Verdict | Quiet | None:
        stats = analysis.stats
        if not counts_or_sums(stats.shape.stages):
            return None
        runs = analysis.executions
        if runs < self.options["min_runs"]:
            return Quiet(f"ran {counted(runs, 'time')} (fewer than {self.options['min_runs']})")
        intervals = stats.intervals  # worked out from the runs: once per shape, not once per question
        different = self._different_values(stats, runs, intervals)
        if different is not None:
            return different
        if stats.docs_measured * 2 >= runs:
            return self._measured(analysis, intervals)
        return self._judged(analysis, intervals)

    def _different_values(self, stats: ShapeStats, runs: int, intervals: DurationHistogram) -> Quiet | None:
        """Quiet when the runs counted different values (an ad-hoc generator, a user trying values) and do not come
        on a regular period: each is a query to index, not one counter to maintain. None: the same aggregation."""
        values = stats.literal_values
        if values.runs * 2 < runs or period_of(stats, intervals) is not None:
            return None  # most runs' values unknown (truncated), or a dashboard whose window moves with the clock
        same = values.most_repeated()
        if same >= self.options["min_runs"]:
            return None
        return Quiet(f"its {runs:,} runs counted {values.distinct():,.0f} different sets of values (at most {same:,} "
                     f"run{'s' if same != 1 else ''} with the same values, fewer than {self.options['min_runs']}) and do not come on a regular "
                     "period: ad-hoc counts, an indexing question for the IX rules, not a counter to maintain",
                     told=True)

    def _measured(self, analysis: ShapeAnalysis, intervals: DurationHistogram) -> Verdict | Quiet:
        stats, runs = analysis.stats, analysis.executions
        documents = stats.docs_examined / min(stats.docs_measured, runs)  # getMores add to their run's count
        if documents < self.options["min_docs_per_run"]:
            return Quiet(f"reads {documents:,.0f} documents per run (fewer than {self.options['min_docs_per_run']:,.0f})")
        message = (f"the same aggregation ran {counted(runs, 'time')}{_span(stats)}, reading {documents:,.0f} "
                   "documents each time to produce a few counts or sums.")
        details, severity = _rhythm(stats, intervals)
        details.append(_ADVICE)
        return Verdict(message, severity=severity, details=details, impact=documents * runs)

    def _judged(self, analysis: ShapeAnalysis, intervals: DurationHistogram) -> Verdict | Quiet:
        """No docsExamined in the log (a server before 4.2): judge from the period, the overlap, the trend and the
        yields, and say so."""
        stats, runs = analysis.stats, analysis.executions
        details, severity = _rhythm(stats, intervals)
        bound = _documents_from_yields(stats)
        typical = stats.duration.percentile(50)
        heavy = bound >= self.options["min_docs_per_run"] if bound is not None else \
            typical >= self.options["min_ms_per_run"]
        growing = growth_of(stats) is not None
        if not (heavy or growing or severity == "error"):
            work = (f"its yields bound a run to {bound:,.0f} documents" if bound is not None
                    else f"a run takes {human_ms(typical)} (p50)")
            return Quiet(f"the log does not show documents examined, and what it shows is light: {work}, runs do "
                         "not overlap and do not grow")
        message = (f"the same aggregation ran {counted(runs, 'time')}{_span(stats)} to produce a few counts or sums; "
                   "the log does not show the documents each run reads (servers before 4.2 log no docsExamined for an "
                   "aggregation), so this is judged from the period, the durations, the overlap and numYields.")
        if bound is not None:
            details.append(f"{stats.num_yields / stats.yields_measured:,.0f} yields per run: a server before 4.4 "
                           f"yields every 128 documents or 10 ms of work, so a run reads up to about {bound:,.0f} "
                           "documents")
        else:
            details.append(f"a run takes {human_ms(typical)} (p50, up to {human_ms(stats.duration.maximum)}); the log "
                           "shows no yields either")
        details.append(_ADVICE)
        return Verdict(message, severity=severity, details=details, impact=(bound or 0.0) * runs)


_ADVICE = ("maintain the counts on write ($inc in the same update), or refresh a materialized view with $merge on a "
           "schedule and read that")


def _rhythm(stats: ShapeStats, intervals: DurationHistogram) -> tuple[list[str], str | None]:
    """Details on the period and the overlap of the runs (``intervals``: between their starts), and ``error`` when
    they pile up."""
    details: list[str] = []
    severity = None
    typical = stats.duration.percentile(50)
    values = stats.literal_values
    if values.runs and values.distinct() > 1 and values.most_repeated() > 1:
        details.append(f"{values.most_repeated():,} of its runs counted the same values ({values.distinct():,.0f} "
                       "different sets of values in all)")
    if intervals.n >= 3:
        period = intervals.percentile(50)
        if period_of(stats, intervals) is not None:
            details.append(f"it runs on a fixed period of about {human_ms(period)}, like a dashboard polling")
        if period > 0 and typical > period:
            severity = "error"
            details.append(f"a run takes {human_ms(typical)} (p50, up to {human_ms(stats.duration.maximum)}), "
                           f"longer than the {human_ms(period)} between runs: runs overlap and pile up")
    overlapping, most = overlap(stats.runs.latest())
    if overlapping:
        if overlapping * 4 >= len(stats.runs):
            severity = "error"
        details.append(f"{overlapping:,} of the latest {counted(len(stats.runs), 'run')} started before the previous "
                       f"one had ended (up to {most} at once)")
    return details, severity


def period_of(stats: ShapeStats, intervals: DurationHistogram | None = None) -> float | None:
    """The period of the runs in milliseconds when they come regularly (the interquartile spread of the intervals
    between starts within ``_REGULAR`` of their median), else None. ``intervals``: ``stats.intervals``, when the
    caller has them."""
    intervals = stats.intervals if intervals is None else intervals
    if intervals.n < 3:
        return None
    period, low, high = intervals.percentiles((50, 25, 75))
    spread = high - low
    return period if period > 0 and spread <= _REGULAR * period else None


def overlap(runs: list[tuple[float, float]]) -> tuple[int, int]:
    """Of runs given as (start, duration): how many started while an earlier one was still running, and the most
    that ran at once."""
    overlapping, most = 0, 1 if runs else 0
    ends: list[float] = []
    for start, duration in sorted(runs):
        ends = [end for end in ends if end > start]
        if ends:
            overlapping += 1
        ends.append(start + duration)
        most = max(most, len(ends))
    return overlapping, most


def _documents_from_yields(stats: ShapeStats) -> float | None:
    """An upper bound of the documents a run reads: at most 128 work cycles between two yields (before 4.4)."""
    if not stats.yields_measured:
        return None
    return (stats.num_yields / stats.yields_measured + 1) * YIELD_ITERATIONS


def _span(stats: ShapeStats) -> str:
    if stats.first_seen is None or stats.last_seen is None:
        return ""
    return f" in {human_ms((stats.last_seen - stats.first_seen).total_seconds() * 1000)}"
