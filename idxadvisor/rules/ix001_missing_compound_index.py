from __future__ import annotations

from idxadvisor.indexes.candidates import serves
from idxadvisor.rules.base import Quiet, Rule, RuleContext, ShapeAnalysis, Verdict, render_fields
from idxadvisor.units import counted

NO_PLAN_NOR_WORK = ("the log shows neither a plan nor what this shape examined (servers before 4.2 log neither for an "
                    "aggregation): nothing to judge an index by")
UNKNOWN_PLAN = "an unknown plan (the log shows none: servers before 2.6 log no planSummary)"


class MissingCompoundIndex(Rule):
    """A query on several fields reads far more documents than it returns, for want of a compound index.

    ## What it does
    Flags a query shape that filters on two or more fields when its plan is a collection scan, or an index scan on
    an index that holds only some of its equality fields (or all of them but not the range that would narrow the
    scan), and it examines many documents for each one it returns.
    It proposes the compound index, fields in equality → sort → range order, and names an existing index that the
    new one makes redundant.
    With `--index-selection workload` (the default) the proposal is weighed with the collection's other shapes: the
    finding states the server time its index saves per hour of the log, and is made only above `--min-saving`
    (default 0.5 s per hour); a free-text field gets a `hashed` key (or none), fields after an equality that the log
    shows finds one or two documents are dropped, and a field of few values leads no index for a shape that fixes a
    field of more values (docs/advice.md).

    ## Why is this bad?
    Without an index on every equality field, the server reads each document that matches the indexed part of
    the filter and discards the rest. The cost grows with the collection, not with the result: a lookup that
    returns one document can read hundreds of thousands.

    ## Example
    ```js
    // shop.customers has only { email: 1 }
    db.customers.find({ lastName: "Silva", city: "Porto" })   // COLLSCAN, 120,000 documents for 2
    ```

    ## Fix
    ```js
    db.customers.createIndex({ city: 1, lastName: 1 })
    ```
    Equality fields may come in any order; put first the one other queries on the collection share, so that one
    index serves several of them.

    ## Options
    - `min_docs_per_returned` (10): documents examined per document returned before the rule fires.
    - `min_wasted_per_execution` (500): documents examined beyond those returned, per execution.

    ## References
    - https://www.mongodb.com/docs/manual/core/indexes/index-types/index-compound/
    - https://www.mongodb.com/docs/manual/tutorial/equality-sort-range-guideline/
    """

    code = "IX001"
    name = "missing-compound-index"
    severity = "warning"
    proposes_index = True
    priority = 20
    defaults = {"min_docs_per_returned": 10.0, "min_wasted_per_execution": 500.0}

    def check(self, analysis: ShapeAnalysis, context: RuleContext) -> Verdict | Quiet | None:
        roles = analysis.roles
        filtered = len(roles.equality) + len([f for f in roles.range if f not in roles.never_leading])
        if filtered < 2:
            return None
        used = analysis.used_index
        if analysis.plan is None and not analysis.examined_measured:
            return Quiet(NO_PLAN_NOR_WORK)
        if analysis.plan is not None and not analysis.collection_scan:
            if used is None:
                return Quiet(f"its plan, {analysis.plan.text}, uses no index to improve on")
            if serves(used, roles):
                return Quiet(f"the index it uses, {render_fields(used)}, bounds the scan on every field it can")
        if not wasteful(analysis, self.options["min_docs_per_returned"], self.options["min_wasted_per_execution"]):
            return Quiet(efficiency_reason(analysis))
        plan = plan_words(analysis)
        fields = ", ".join(sorted(roles.fields - {name for name, _ in roles.sort}))
        message = (f"{analysis.shape.op} filtering on {fields} uses {plan} and {analysis.examination()}, "
                   f"{counted(analysis.executions, 'execution')}.")
        return Verdict(message, index=analysis.candidate)


def plan_words(analysis: ShapeAnalysis) -> str:
    if analysis.plan is None:
        return UNKNOWN_PLAN
    return "a collection scan" if analysis.collection_scan else render_fields(analysis.used_index)  # type: ignore[arg-type]


def wasteful(analysis: ShapeAnalysis, min_ratio: float, min_waste: float) -> bool:
    """Many documents examined per document returned (returning nothing counts as many), and many per execution."""
    ratio = analysis.docs_per_returned
    if ratio is None:
        ratio = analysis.keys_per_returned
    if ratio is None and analysis.returns_nothing:
        ratio = float("inf")
    return ratio is not None and ratio >= min_ratio and analysis.wasted_per_execution >= min_waste


def efficiency_reason(analysis: ShapeAnalysis) -> str:
    ratio = analysis.docs_per_returned
    if ratio is None:
        ratio = analysis.keys_per_returned
    if ratio is None and analysis.returns_nothing:
        return (f"returns nothing but examines only {analysis.wasted_per_execution:,.0f} documents per execution: "
                "below the thresholds")
    if ratio is None:
        return "the log does not show both what it examined and what it returned"
    return (f"examines {ratio:,.1f} documents per document returned and wastes "
            f"{analysis.wasted_per_execution:,.0f} per execution: below the thresholds")
