from __future__ import annotations

from idxadvisor.rules.base import RuleContext, ShapeAnalysis, Verdict
from idxadvisor.rules.causes import WaitRule, described, worst
from idxadvisor.shapes.timing import TimeBreakdown
from idxadvisor.units import human_ms

_WAITS = ("oplog_slot_ms", "write_concern_ms")


class ReplicationWaits(WaitRule):
    """Writes of one shape spend their time waiting for oplog slots or for the write concern.

    ## What it does
    Flags a shape whose executions spent a large part of their time in `totalOplogSlotDurationMicros` (waiting for
    the oplog slots of earlier writes to commit) or `waitForWriteConcernDurationMillis` (waiting for the replica set
    to acknowledge, `w: "majority"`): the part of the time, per execution and its p95. These fields are logged from
    6.0 (JSON logs). It says what the log cannot show: the secondaries' lag and the network.

    ## Why is this bad?
    A write is acknowledged only once the replica set has it. With retryable writes and `w: "majority"` every
    command waits for the oplog before it to commit and for a majority of members to confirm: seconds per insert
    when the disks or the secondaries are slow, though the write itself took a millisecond. An index cannot
    shorten this; more indexes make each write slower.

    ## Example
    ```js
    db.audit.insertOne(doc, { writeConcern: { w: "majority" } })  // 2 s, of which 1.7 s waiting for oplog slots
    ```

    ## Fix
    Batch writes (`insertMany`, `bulkWrite`) so that each batch pays the wait once; check the secondaries' lag
    (`rs.printSecondaryReplicationInfo()`), the journal disk's latency and the network between members; relax the
    write concern only where the data's durability allows it.

    ## Options
    - `min_share` (0.3): the part of the time spent waiting before the rule fires.
    - `min_mean_ms` (10): the wait per execution before the rule fires.
    - `min_executions` (3)

    ## References
    - https://www.mongodb.com/docs/manual/reference/write-concern/
    - https://www.mongodb.com/docs/manual/core/retryable-writes/
    """

    code = "TM002"
    name = "replication-waits"
    components = _WAITS

    def verdict(self, analysis: ShapeAnalysis, context: RuleContext, breakdown: TimeBreakdown, share: float,
                mean: float) -> Verdict:
        stats = analysis.stats
        parts = []
        details = []
        slots = breakdown.mean("oplog_slot_ms")
        if slots:
            parts.append(f"{human_ms(slots)} per execution for oplog slots{worst(breakdown, 'oplog_slot_ms')}")
            details.append("an oplog slot is held from a write until it commits: with retryable writes and w:majority "
                           "each write waits for the writes before it; look at the write concurrency and at the "
                           "journal disk's latency")
        concern = breakdown.mean("write_concern_ms")
        if concern:
            parts.append(f"{human_ms(concern)} per execution for the write concern"
                         f"{worst(breakdown, 'write_concern_ms')}")
            details.append("each command waits for the replica set to acknowledge it (the write concern): batch "
                           "writes to pay the wait once per batch, or relax the write concern where durability "
                           "allows")
        message = (f"{described(stats)} spent {share:.0%} of its time waiting for replication, "
                   f"{' and '.join(parts)}: not work an index could shorten.")
        details.append("the log cannot show the secondaries' lag or the network: rs.printSecondaryReplicationInfo() "
                       "and the replication metrics can")
        return Verdict(message, details=details, impact=0.0)
