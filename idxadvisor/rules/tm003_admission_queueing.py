from __future__ import annotations

from idxadvisor.rules.base import RuleContext, ShapeAnalysis, Verdict
from idxadvisor.rules.causes import (
    BusyIndex,
    WaitRule,
    component_share,
    described,
    minutes_of,
    worst,
)
from idxadvisor.shapes.digest import ShapeStats
from idxadvisor.shapes.timing import TimeBreakdown
from idxadvisor.units import human_ms

_QUEUES = ("queued_ms", "ingress_queued_ms")
HOLDERS = 3  # shapes named as holding the tickets


class AdmissionQueueing(WaitRule):
    """A shape waits in the admission queue: the server was saturated, and this shape is the victim.

    ## What it does
    Flags a shape whose executions spent a large part of their time queued for admission
    (`queues.execution.totalTimeQueuedMicros`, and the ingress queue, 8.0 JSON logs): the part of the time and the
    wait per execution. It names the shapes that ran in the same minutes without queueing, the longest first: those
    held the tickets. It says what the log cannot show: operations faster than the slow-query threshold, which hold
    tickets too, and the number of tickets.

    ## Why is this bad?
    The server runs a limited number of operations at once (execution tickets); the others wait. A 1-key lookup that
    takes 250 ms because it waited 245 ms for a ticket is not slow: long operations hold the tickets. Indexing the
    victim changes nothing; shortening or spreading the holders does.

    ## Example
    ```js
    db.orders.find({ customerId: 7 })  // 253 ms, 249 ms of it queued, while reports scan events for 9 s each
    ```

    ## Fix
    Make the holders shorter (an index for them, a smaller scan) or run them elsewhere (a secondary with
    `readPreference`, an analytics node) or at another time; limit the application's concurrency. Check
    `db.serverStatus().queues` (8.0) or `wiredTiger.concurrentTransactions` for the tickets in use.

    ## Options
    - `min_share` (0.3): the part of the time spent queued before the rule fires.
    - `min_mean_ms` (10): the wait per execution before the rule fires.
    - `min_executions` (3)

    ## References
    - https://www.mongodb.com/docs/manual/reference/command/serverStatus/#queues
    """

    code = "TM003"
    name = "admission-queueing"
    components = _QUEUES

    def verdict(self, analysis: ShapeAnalysis, context: RuleContext, breakdown: TimeBreakdown, share: float,
                mean: float) -> Verdict:
        stats = analysis.stats
        holders = self._holders(stats, context)
        message = (f"{described(stats)} spent {share:.0%} of its time queued for admission, {human_ms(mean)} per "
                   f"execution{worst(breakdown, 'queued_ms')}: the server was saturated and this shape waited; its "
                   "own work is not the problem.")
        details = []
        if holders:
            details.append("held the tickets meanwhile: " + "; ".join(
                f"{described(holder)} ({count:,} executions, {human_ms(total)} in those minutes)"
                for holder, count, total in holders))
        else:
            details.append("no slow shape of the log ran in those minutes without queueing")
        details.append("the log cannot show the operations faster than the slow-query threshold, which hold tickets "
                       "too, nor the number of tickets: db.serverStatus().queues (8.0) or "
                       "wiredTiger.concurrentTransactions can")
        return Verdict(message, details=details, impact=0.0,
                       related=[holder.shape.fingerprint for holder, _, _ in holders])

    def _holders(self, victim: ShapeStats, context: RuleContext) -> list[tuple[ShapeStats, int, float]]:
        # the shapes that did not queue themselves, by the minutes they ran: worked out once per run, not once per
        # victim (a saturated log has many victims among thousands of shapes)
        threshold = self.options["min_share"]
        unqueued = context.derived(f"{self.code} ticket holders below {threshold}",
                                   lambda shapes: BusyIndex(stats for stats in shapes
                                                            if component_share(stats.timing, _QUEUES)[0] < threshold))
        return [item for item in unqueued.busiest(minutes_of(victim), HOLDERS) if item[0] is not victim][:HOLDERS]
