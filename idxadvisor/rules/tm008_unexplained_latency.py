from __future__ import annotations

from idxadvisor.rules.base import Quiet, Rule, RuleContext, ShapeAnalysis, Verdict
from idxadvisor.rules.causes import DEFAULTS, TIMED_OPS, BusyIndex, described, minutes_of
from idxadvisor.shapes.digest import ShapeStats
from idxadvisor.shapes.timing import LABELS, NOT_WORK
from idxadvisor.units import human_ms

NEIGHBOURS = 3  # busy shapes named as running in the same minutes


class UnexplainedLatency(Rule):
    """A shape does almost no work yet takes long: its time is not work, and the log does not say where it went.

    ## What it does
    Flags a shape whose executions examine or write only a few documents (a 1-key, 1-document `IXSCAN`, a
    one-document insert) but whose p95 duration is long, when the time components the log gives do not explain it
    (the other TM rules name the cause when they do). It says which components the log's server version writes and
    which it lacks, and names the busiest shapes that ran in the same minutes.

    ## Why is this bad?
    An index cannot make a 1-key lookup faster: its 250 ms are spent waiting, for an execution ticket, a lock, the
    disk, the replica set or the client. Suggesting an index would be wrong; saying nothing hides the problem. Older
    servers do not log the waits (queues from 8.0, oplog slots and write concern from 6.0), so the log can only
    show that the time is not work.

    ## Example
    ```js
    db.orders.find({ customerId: 7 })  // p95 253 ms for 1 key and 1 document examined
    ```

    ## Fix
    Look at what ran at the same time (the busiest shapes of those minutes are named), at `db.serverStatus()`
    (queues or `wiredTiger.concurrentTransactions`, `wiredTiger.cache`, `locks`) and at the replica set's lag. A
    server of 8.0 or later logs where each operation's time went.

    ## Options
    - `max_work` (10): documents or keys examined (or documents written) per execution, at most.
    - `min_p95_ms` (200): the p95 duration before the rule fires (twice the default slow-query threshold: a
      lookup logged at 100 ms is slow, not yet unexplained).
    - `min_executions` (3)

    ## References
    - https://www.mongodb.com/docs/manual/reference/command/serverStatus/
    """

    code = "TM008"
    name = "unexplained-latency"
    category = "time"
    severity = "info"
    applies_to = TIMED_OPS
    defaults = {"max_work": 10.0, "min_p95_ms": 200.0, "min_executions": DEFAULTS["min_executions"]}

    def check(self, analysis: ShapeAnalysis, context: RuleContext) -> Verdict | Quiet | None:
        stats = analysis.stats
        executions = analysis.executions
        if executions < self.options["min_executions"] or stats.getmores:
            return None
        if stats.shape.op == "insert":
            work = stats.nreturned  # the documents inserted, where logged
        elif stats.keys_measured or stats.docs_measured:
            work = max(stats.keys_examined, stats.docs_examined)
        else:
            return None  # the log does not say what it examined: its work is unknown
        if not work:
            return None  # nothing examined or inserted was logged: unknown rather than none
        per_execution = work / executions
        if per_execution > self.options["max_work"]:
            return None
        p95 = stats.duration.percentile(95)
        if p95 < self.options["min_p95_ms"]:
            return None
        breakdown = stats.timing
        shares = {name: share for name in NOT_WORK
                  if breakdown is not None and (share := breakdown.share(name)) is not None}
        explained = sum(shares.values())
        if explained >= DEFAULTS["min_share"]:
            return Quiet(f"{explained:.0%} of its time is named by the time components: the other TM rules say")
        one = round(per_execution, 2) == 1
        if stats.shape.op == "insert":
            noun = "document inserted" if one else "documents inserted"
        else:
            noun = "document or key examined" if one else "documents or keys examined"
        examined = f"{per_execution:,.{0 if per_execution >= 1 else 2}f} {noun} per execution"
        message = (f"{described(stats)} takes {human_ms(p95)} (p95) for {examined}: its time is not work an index "
                   "could shorten, and the log does not say where it went.")
        details = []
        if shares:
            details.append("the components the log gives explain only "
                           + ", ".join(f"{LABELS[name]} {share:.0%}" for name, share in shares.items()))
        else:
            details.append("the log gives none of the fields that would tell: 8.0 logs the admission queues and the "
                           "working time, 6.0 the oplog slots and the write concern, 4.0 and later the reads from "
                           "disk and every version the lock waits when there are any")
        conflicts = breakdown.mean("write_conflicts") if breakdown is not None else None
        if conflicts:
            details.append(f"{conflicts:,.0f} write conflicts per execution: concurrent writes to the same documents "
                           "retry (TM001 names them when they are many)")
        neighbours = _neighbours(stats, context)
        if neighbours:
            details.append("busiest in the same minutes: " + "; ".join(
                f"{described(other)} ({count:,} executions, {human_ms(total)})" for other, count, total in neighbours))
        details.append("the log cannot show the server's queues, cache or replication at the time: "
                       "db.serverStatus() and the replica set's lag can")
        return Verdict(message, details=details, impact=0.0,
                       related=[other.shape.fingerprint for other, _, _ in neighbours])


def _neighbours(victim: ShapeStats, context: RuleContext) -> list[tuple[ShapeStats, int, float]]:
    every = context.derived("TM008 shapes by minute", BusyIndex)  # once per run, not once per finding
    # the NEIGHBOURS + 1 busiest, most first: those at or under the victim's own total come after all the others,
    # so only the victim's own entry can be left out ahead of the NEIGHBOURS kept
    found = [item for item in every.busiest(minutes_of(victim), NEIGHBOURS)
             if item[0] is not victim and item[2] > victim.duration.total]
    return found[:NEIGHBOURS]
