from __future__ import annotations

from idxadvisor.rules.base import Quiet, Rule, RuleContext, ShapeAnalysis, Verdict
from idxadvisor.shapes.shape import NE, NIN, NOT
from idxadvisor.units import counted


class NegationOnly(Rule):
    """A query selects only by what documents are not (`$ne`, `$nin`, `$not`), and reads most of the collection.

    ## What it does
    Flags a query shape whose only predicates that could narrow a scan are negations, when it examines many
    documents per execution. It says whether the query returns most of what it reads (it asks for too much) or
    little of it (a positive predicate would find those few directly).

    ## Why is this bad?
    A negation matches everything but a value: an index on the field must be scanned on both sides of that value,
    which is nearly the whole index, and the planner often prefers a collection scan. Such a query reads most of
    the collection every time, and grows with it.

    ## Example
    ```js
    db.orders.find({ status: { $ne: "archived" } })       // 240,000 documents read
    db.orders.find({ status: { $nin: ["archived", "cancelled"] }, region: { $ne: "test" } })
    ```

    ## Fix
    Name the values wanted, so that an index seeks to them, or add an equality on another field:
    ```js
    db.orders.find({ status: { $in: ["pending", "paid", "shipped"] } })
    db.orders.createIndex({ status: 1 })
    ```

    ## Options
    - `min_examined_per_execution` (1000): documents (or keys) examined per execution before the rule fires.

    ## References
    - https://www.mongodb.com/docs/manual/reference/operator/query/ne/
    - https://www.mongodb.com/docs/manual/reference/operator/query/nin/
    """

    code = "QY005"
    name = "negation-only"
    category = "query"
    severity = "warning"
    defaults = {"min_examined_per_execution": 1000.0}

    def check(self, analysis: ShapeAnalysis, context: RuleContext) -> Verdict | Quiet | None:
        roles = analysis.roles
        leading = roles.equality + tuple(name for name in roles.range if name not in roles.never_leading)
        if leading or roles.has_or:
            return None
        negated = analysis.fields_with(NE, NIN, NOT)
        if not negated:
            return None
        if analysis.executions < context.settings.min_count:
            return Quiet(f"too few executions ({analysis.executions} < --min-count {context.settings.min_count})")
        if not analysis.examined_measured:
            return Quiet("the log does not show what it examined")
        stats = analysis.stats
        examined = max(stats.docs_examined, stats.keys_examined) / analysis.executions
        if examined < self.options["min_examined_per_execution"]:
            return Quiet(f"examines {examined:,.0f} documents per execution (fewer than "
                         f"{self.options['min_examined_per_execution']:,.0f})")
        returned = stats.nreturned / analysis.executions
        message = (f"{analysis.shape.op} selects only by negation ({', '.join(negated)}: $ne, $nin or $not), which "
                   f"no index can narrow: it reads {examined:,.0f} documents per execution and returns "
                   f"{returned:,.0f}, {counted(analysis.executions, 'execution')}.")
        if stats.measured and returned >= examined / 2:
            advice = ("it returns most of what it reads: the query asks for most of the collection; page it, or "
                      "narrow it with a positive predicate")
        else:
            advice = ("it keeps few of the documents it reads: name the values it wants with $in ({ field: { $in: "
                      "[...] } }) so that an index can seek to them, or add an equality on another field")
        return Verdict(message, details=[advice])
