from __future__ import annotations

from idxadvisor.rules.base import RuleContext, ShapeAnalysis, Verdict
from idxadvisor.rules.causes import WaitRule, described, worst
from idxadvisor.shapes.timing import TimeBreakdown
from idxadvisor.units import human_ms


class FlowControl(WaitRule):
    """Writes of one shape are throttled by flow control: the secondaries lag behind the primary.

    ## What it does
    Flags a shape whose executions spent a large part of their time waiting for flow control
    (`flowControl.timeAcquiringMicros`, 4.2+). It says what the log cannot show: how far the secondaries lag.

    ## Why is this bad?
    From 4.2 the primary throttles writes when the majority commit point falls behind (flow control): every write
    waits for a ticket the primary hands out slowly, to let the secondaries catch up. The writes are slow because
    the replica set cannot keep up, not because of their own work; an index adds work to every write.

    ## Example
    ```js
    db.sessions.findOneAndUpdate({ token: "t1" }, { $set: { seen: 1 } })  // 160 ms, 150 ms of it flow control
    ```

    ## Fix
    Find why the secondaries lag (`rs.printSecondaryReplicationInfo()`, `db.serverStatus().flowControl`): slower
    disks or CPUs than the primary's, a network between sites, an index build on a secondary. Lower the write rate
    (batches, fewer writers) until they catch up.

    ## Options
    - `min_share` (0.3): the part of the time spent throttled before the rule fires.
    - `min_mean_ms` (10): the wait per execution before the rule fires.
    - `min_executions` (3)

    ## References
    - https://www.mongodb.com/docs/manual/replication/#flow-control
    """

    code = "TM006"
    name = "flow-control"
    components = ("flow_control_ms",)

    def verdict(self, analysis: ShapeAnalysis, context: RuleContext, breakdown: TimeBreakdown, share: float,
                mean: float) -> Verdict:
        stats = analysis.stats
        message = (f"{described(stats)} spent {share:.0%} of its time throttled by flow control, {human_ms(mean)} "
                   f"per execution{worst(breakdown, 'flow_control_ms')}: the secondaries lag behind the primary.")
        details = ["find why the secondaries lag (their disks, CPUs, network, an index build on them) or lower the "
                   "write rate until they catch up; no index shortens this wait",
                   "the log cannot show the lag: rs.printSecondaryReplicationInfo() and "
                   "db.serverStatus().flowControl can"]
        return Verdict(message, details=details, impact=0.0)
