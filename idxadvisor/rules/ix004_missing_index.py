from __future__ import annotations

from idxadvisor.indexes.candidates import serves
from idxadvisor.rules.base import Quiet, Rule, RuleContext, ShapeAnalysis, Verdict, render_fields
from idxadvisor.rules.ix001_missing_compound_index import NO_PLAN_NOR_WORK, UNKNOWN_PLAN, efficiency_reason, wasteful
from idxadvisor.units import counted


class MissingIndex(Rule):
    """A query on one field scans the whole collection.

    ## What it does
    Flags a query shape whose filter has a single field an index could use, when its plan is a collection scan (or
    an index that does not hold that field) and it examines many documents for each one it returns. It proposes the
    single-field index (with the query's sort appended when it has one).
    With `--index-selection workload` (the default) the proposal is weighed with the collection's other shapes: the
    finding states the server time its index saves per hour of the log, and is made only above `--min-saving`
    (default 0.5 s per hour); a free-text field gets a `hashed` key (or none), fields after an equality that the log
    shows finds one or two documents are dropped, and a field of few values leads no index for a shape that fixes a
    field of more values (docs/advice.md).

    ## Why is this bad?
    A collection scan reads every document to find the few that match: its cost grows with the collection while the
    result stays the same size. It also evicts useful data from the cache.

    ## Example
    ```js
    db.orders.find({ trackingNumber: "1Z999AA10123456784" })   // COLLSCAN over 2 million orders
    ```

    ## Fix
    ```js
    db.orders.createIndex({ trackingNumber: 1 })
    ```

    ## Options
    - `min_docs_per_returned` (10): documents examined per document returned before the rule fires.
    - `min_wasted_per_execution` (500): documents examined beyond those returned, per execution.

    ## References
    - https://www.mongodb.com/docs/manual/core/indexes/index-types/index-single/
    """

    code = "IX004"
    name = "missing-index"
    severity = "warning"
    proposes_index = True
    priority = 10
    defaults = {"min_docs_per_returned": 10.0, "min_wasted_per_execution": 500.0}

    def check(self, analysis: ShapeAnalysis, context: RuleContext) -> Verdict | Quiet | None:
        roles = analysis.roles
        leading = roles.equality + tuple(f for f in roles.range if f not in roles.never_leading)
        if len(leading) != 1:
            return None
        used = analysis.used_index
        if analysis.plan is None and not analysis.examined_measured:
            return Quiet(NO_PLAN_NOR_WORK)
        if analysis.plan is not None and not analysis.collection_scan:
            if used is None:
                return Quiet(f"its plan, {analysis.plan.text}, uses no index to improve on")
            if serves(used, roles) or leading[0] in dict(used):
                return Quiet(f"the index it uses, {render_fields(used)}, bounds {leading[0]}")
        if not wasteful(analysis, self.options["min_docs_per_returned"], self.options["min_wasted_per_execution"]):
            return Quiet(efficiency_reason(analysis))
        if analysis.plan is None:
            how = f"uses {UNKNOWN_PLAN}"
        elif analysis.collection_scan:
            how = "scans the collection"
        else:
            how = f"uses {render_fields(used)}, which does not bound it,"  # type: ignore[arg-type]
        message = (f"{analysis.shape.op} filtering on {leading[0]} {how} and "
                   f"{analysis.examination()}, {counted(analysis.executions, 'execution')}.")
        return Verdict(message, index=analysis.candidate)
