from __future__ import annotations

from idxadvisor.rules.base import Quiet, Rule, RuleContext, ShapeAnalysis, Verdict
from idxadvisor.rules.causes import described
from idxadvisor.shapes.digest import ShapeStats
from idxadvisor.units import human_count

_WRITES = frozenset({"update", "delete", "findAndModify", "insert", "bulkWrite"})


class WriteConflicts(Rule):
    """Writes of one shape retry again and again on write conflicts with each other.

    ## What it does
    Flags a write shape whose executions logged many `writeConflicts` (text logs from 3.0, JSON logs): the number
    per execution and in all, how many ran side by side and from how many connections, and whether each one writes
    a whole collection (an empty filter and no limit), the pattern of concurrent `deleteMany({})` or
    `updateMany({})` jobs. It says what the log cannot show: the documents that conflicted and the operations on
    the other side of each conflict.

    ## Why is this bad?
    WiredTiger lets one writer change a document at a time; the other gets a write conflict, yields, and retries.
    Writers that touch the same documents at the same moment (several jobs emptying one collection, a hot counter)
    spend their time retrying: a `deleteMany({})` of a few million documents run ten times at once can take
    minutes and finish nothing. An index does not help: the work is the retries.

    ## Example
    ```js
    // ten workers, at the same time:
    db.examples.deleteMany({})
    ```

    ## Fix
    To empty a collection, `drop()` it and recreate its indexes (one metadata change instead of millions of
    deletes). To delete part of one, delete in bounded batches (by `_id` ranges) from one client. To expire
    documents, use a TTL index. For a hot document, spread the writes (one document per shard of the counter) or
    batch them.

    ## Options
    - `min_per_execution` (10): write conflicts per execution before the rule fires.
    - `min_total` (1000): write conflicts over the shape's executions.

    ## References
    - https://www.mongodb.com/docs/manual/faq/concurrency/
    - https://www.mongodb.com/docs/manual/core/index-ttl/
    """

    code = "TM001"
    name = "write-conflicts"
    category = "time"
    severity = "warning"
    applies_to = _WRITES
    defaults = {"min_per_execution": 10.0, "min_total": 1000}

    def check(self, analysis: ShapeAnalysis, context: RuleContext) -> Verdict | Quiet | None:
        stats = analysis.stats
        breakdown = stats.timing
        total = breakdown.total("write_conflicts") if breakdown is not None else None
        if not total:
            return None
        mean = breakdown.mean("write_conflicts") or 0.0  # type: ignore[union-attr]
        if mean < self.options["min_per_execution"] or total < self.options["min_total"]:
            return Quiet(f"{human_count(total)} write conflicts, {mean:,.0f} per execution (below "
                         f"{self.options['min_per_execution']:,.0f} or {self.options['min_total']:,} in all)")
        executions = analysis.executions
        connections = len(stats.connections)
        message = (f"{described(stats)} hit {human_count(total)} write conflicts in {executions:,} executions "
                   f"({mean:,.0f} each on average): concurrent writes to the same documents retry instead of "
                   "working.")
        details = []
        unbounded = not stats.shape.filter and stats.shape.op in ("delete", "update")
        together = "at the same time" if _concurrent(stats) else "one after another"
        if unbounded:
            details.append(f"each execution {'deletes' if stats.shape.op == 'delete' else 'updates'} every document "
                           f"of the collection (an empty filter, no limit), from {connections:,} connection(s) "
                           f"{together}: they fight over the same documents. To empty a collection, drop() it and "
                           "recreate "
                           "its indexes; to remove part of it, delete in bounded batches (by _id ranges) from one "
                           "client; to expire documents, a TTL index")
        else:
            details.append(f"{connections:,} connection(s) write the same documents at the same time (a hot "
                           "document, a counter): spread the writes or batch them")
        if stats.errors:
            details.append(f"{stats.errors:,} of the executions failed")
        details.append("no index shortens this: the time is the retries")
        details.append("the log cannot show which documents conflicted, nor the operations on the other side of each "
                       "conflict")
        return Verdict(message, details=details, impact=float(total))


def _concurrent(stats: ShapeStats) -> bool:
    """Whether executions overlapped: they all ended within the longest one's duration."""
    if stats.first_seen is None or stats.last_seen is None or stats.count < 2:
        return False
    return (stats.last_seen - stats.first_seen).total_seconds() * 1000 < stats.duration.maximum
