from __future__ import annotations

from idxadvisor.indexes.candidates import IN_EQUALITY_LIMIT
from idxadvisor.rules.base import Quiet, Rule, RuleContext, ShapeAnalysis, Verdict
from idxadvisor.shapes.shape import IN
from idxadvisor.units import counted


class LargeIn(Rule):
    """A query sends an `$in` of hundreds or thousands of values.

    ## What it does
    Flags a query shape whose `$in` lists exceed 200 values (the largest list the log shows). Shapes do not depend
    on a list's length, so one finding covers every size the application sends.

    ## Why is this bad?
    Every value is one more seek into the index and one more interval to plan; the query document is parsed, planned
    and logged with all of them, and past `maxLogSizeKB` the log cuts it. Above 200 values the planner stops
    turning the `$in` into one scan per value merged in sort order, so a sort after it becomes a blocking sort. An
    `$in` that grows with the data (the ids of everything a user ever saw) usually hides a join done by the client.

    ## Example
    ```js
    db.products.find({ _id: { $in: idsOfEveryViewedProduct } })   // 3,000 ids
    ```

    ## Fix
    Send batches of at most 200 values, or let the server join (`$lookup` from the collection the ids come from),
    or keep the relation in a field one equality can query:
    ```js
    db.viewedProducts.aggregate([{ $match: { userId } },
      { $lookup: { from: "products", localField: "productId", foreignField: "_id", as: "product" } }])
    ```

    ## Options
    - `max_in_values` (200): the longest `$in` list that is fine.

    ## References
    - https://www.mongodb.com/docs/manual/reference/operator/query/in/
    - https://www.mongodb.com/docs/manual/reference/limits/#mongodb-limit-Sort-Operations
    """

    code = "QY006"
    name = "large-in"
    category = "query"
    severity = "warning"
    defaults = {"max_in_values": IN_EQUALITY_LIMIT}

    def check(self, analysis: ShapeAnalysis, context: RuleContext) -> Verdict | Quiet | None:
        longest, limit = analysis.stats.max_in_length, self.options["max_in_values"]
        if longest <= limit:
            return None  # a list this short is fine (or no $in at all)
        fields = analysis.fields_with(IN)
        if not fields:
            return None
        if analysis.executions < context.settings.min_count:
            return Quiet(f"too few executions ({analysis.executions} < --min-count {context.settings.min_count})")
        message = (f"{analysis.shape.op} sends $in lists of up to {longest:,} values (on {', '.join(fields)}), "
                   f"{counted(analysis.executions, 'execution')}: each value is one more index seek, and the whole list "
                   "is parsed, planned and logged every time.")
        details = []
        if analysis.shape.sort:
            details.append(f"past {IN_EQUALITY_LIMIT} values the planner no longer merges one scan per value in sort "
                           "order: its sort is a blocking sort whatever the index")
        details.append(f"send batches of at most {limit} values, or join on the server with $lookup from the "
                       "collection the values come from")
        return Verdict(message, details=details)
