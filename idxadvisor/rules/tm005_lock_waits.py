from __future__ import annotations

from idxadvisor.rules.base import RuleContext, ShapeAnalysis, Verdict
from idxadvisor.rules.causes import WaitRule, described, overlapping, worst
from idxadvisor.shapes.digest import ShapeStats
from idxadvisor.shapes.timing import TimeBreakdown
from idxadvisor.units import human_ms

#: Operations that take a collection's or a database's lock exclusively (or long enough to block others).
DDL_OPS = frozenset({"createIndexes", "dropIndexes", "collMod", "drop", "dropDatabase", "renameCollection", "compact",
                     "reIndex", "convertToCapped", "cloneCollectionAsCapped", "create", "validate", "emptycapped"})


class LockWaits(WaitRule):
    """A shape waits for locks: another operation held its collection or database.

    ## What it does
    Flags a shape whose executions spent a large part of their time acquiring locks (`locks.*.timeAcquiringMicros`,
    text logs from 3.0 and JSON logs) and names the operation that held the lock when the log shows one: an index
    build, a `collMod`, a drop or a rename of the same collection or database that ran in the same window. It says so
    when the log does not show the holder.

    ## Why is this bad?
    DDL takes exclusive locks: a foreground index build (before 4.2), the start and end of a background one, a
    `collMod` with a validator, a `renameCollection`. Every operation on the collection waits behind it, however
    well indexed. The waiting shape needs no index; the DDL needs another time.

    ## Example
    ```js
    db.orders.find({ status: "A" })  // 900 ms, 880 ms of it waiting for the lock a createIndexes held
    ```

    ## Fix
    Run DDL in a maintenance window, build indexes on a rolling basis (one member at a time), or split a large
    `collMod` or migration. When the log shows no holder, look at `db.currentOp({ waitingForLock: true })` while it
    happens.

    ## Options
    - `min_share` (0.3): the part of the time spent waiting for locks before the rule fires.
    - `min_mean_ms` (10): the wait per execution before the rule fires.
    - `min_executions` (3)

    ## References
    - https://www.mongodb.com/docs/manual/faq/concurrency/
    - https://www.mongodb.com/docs/manual/core/index-creation/
    """

    code = "TM005"
    name = "lock-waits"
    components = ("lock_wait_ms",)

    def verdict(self, analysis: ShapeAnalysis, context: RuleContext, breakdown: TimeBreakdown, share: float,
                mean: float) -> Verdict:
        stats = analysis.stats
        holders = self._holders(stats, context)
        message = (f"{described(stats)} spent {share:.0%} of its time waiting for locks, {human_ms(mean)} per "
                   f"execution{worst(breakdown, 'lock_wait_ms')}: another operation held them.")
        if holders:
            details = ["held the lock meanwhile: " + "; ".join(
                f"{described(holder)} ({human_ms(holder.duration.maximum)}, ended {holder.last_seen:%Y-%m-%d %H:%M:%S})"
                for holder in holders) + ": run such changes in a maintenance window or member by member"]
        else:
            details = ["the log does not show which operation held the lock (one faster than the slow-query "
                       "threshold, or on another collection): db.currentOp({waitingForLock: true}) while it happens "
                       "can"]
        details.append("no index shortens this wait")
        return Verdict(message, details=details, impact=0.0, related=[holder.shape.fingerprint for holder in holders])

    def _holders(self, victim: ShapeStats, context: RuleContext) -> list[ShapeStats]:
        database = victim.shape.ns.partition(".")[0]
        found = [stats for stats in context.shapes
                 if stats.shape.op in DDL_OPS and stats.last_seen is not None
                 and (stats.shape.ns == victim.shape.ns or stats.shape.ns.partition(".")[0] == database)
                 and overlapping(victim, stats)]
        found.sort(key=lambda stats: (stats.shape.ns != victim.shape.ns, -stats.duration.maximum))
        return found[:3]
