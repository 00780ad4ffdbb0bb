from __future__ import annotations

from datetime import datetime, timezone

from idxadvisor.rules.base import Quiet, Rule, RuleContext, ShapeAnalysis, Verdict
from idxadvisor.shapes.digest import BURST_GAP_MS
from idxadvisor.shapes.shape import point_lookup_field
from idxadvisor.units import counted, human_ms


class NPlusOne(Rule):
    """One connection sends the same point lookup many times in a row: an N+1 loop loading documents one by one.

    ## What it does
    Follows each connection's point lookups (a find with an equality on one field: `_id` or a reference such as
    `orderId`) and finds bursts: lookups of one shape, each starting within 10 ms of the end of the previous one.
    It reports the worst burst (its size, its window, the connection and the application) and how many bursts the
    log holds. Lookups spread out over time, as many users' requests are, are no burst.

    The profiler records no connection, only the client's address: with profiler documents a burst is per client
    address, so it may mix the requests of one application server, and the finding says so.

    ## Why is this bad?
    An ORM that loads an order and then each of its lines, one query per line, pays a network round trip, a
    parse, a plan and a lock for every document. Twenty lines cost twenty times what one batched query costs, and
    the round trips add up in the page's latency even when each lookup is fast.

    ## Example
    ```js
    const order = db.orders.findOne({ _id: orderId })
    for (const id of order.lineIds) db.lines.findOne({ _id: id })   // one query per line
    ```

    ## Fix
    Batch the lookups into one query, or let the server join:
    ```js
    db.lines.find({ _id: { $in: order.lineIds } })
    db.orders.aggregate([{ $match: { _id: orderId } },
      { $lookup: { from: "lines", localField: "lineIds", foreignField: "_id", as: "lines" } }])
    ```
    In an ORM: eager loading (`populate`, `include`, `select_related`), or a data loader that batches per request.

    ## Options
    - `min_lookups` (20): lookups in one burst before the rule fires.

    ## References
    - https://www.mongodb.com/docs/manual/reference/operator/aggregation/lookup/
    - https://www.mongodb.com/docs/manual/reference/operator/query/in/
    """

    code = "QY002"
    name = "n-plus-one"
    category = "query"
    severity = "warning"
    applies_to = frozenset({"find"})
    defaults = {"min_lookups": 20}

    def check(self, analysis: ShapeAnalysis, context: RuleContext) -> Verdict | Quiet | None:
        field = point_lookup_field(analysis.shape)
        if field is None:
            return None
        worst, sizes = analysis.stats.bursts.final()
        least = self.options["min_lookups"]
        if worst is None or worst.size < 2:
            return None  # no burst at all
        if worst.size < least:
            return Quiet(f"no burst of {counted(least, 'lookup')} from one connection (the largest: {worst.size})")
        bursts = sum(count for size, count in sizes.items() if size >= least)
        in_bursts = sum(size * count for size, count in sizes.items() if size >= least)
        when = datetime.fromtimestamp(worst.start_ms / 1000, tz=timezone.utc).isoformat(sep=" ", timespec="seconds")
        app = f" ({worst.app})" if worst.app else ""
        message = (f"find by {field} ran {counted(worst.size, 'time')} in a row on {worst.connection}{app} within "
                   f"{human_ms(worst.end_ms - worst.start_ms)} at {when}: a loop loading documents one by one "
                   f"(N+1). {bursts:,} such burst{'s' if bursts != 1 else ''} of {least}+ lookups, "
                   f"{counted(in_bursts, 'lookup')} in all.")
        details = [f"fetch them in one query, {{ {field}: {{ $in: [...] }} }}, or join on the server with $lookup "
                   f"(foreignField: \"{field}\"); in an ORM, eager loading or a batching data loader"]
        connections = analysis.stats.connections
        if worst.connection not in connections.members and not connections.capped:  # a client address
            details.append("the profiler records the client's address, not the connection: a burst may mix the "
                           "requests of one application server")
        details.append(f"a burst: lookups each starting within {BURST_GAP_MS:g} ms of the end of the previous one")
        return Verdict(message, details=details, impact=float(in_bursts - bursts))
