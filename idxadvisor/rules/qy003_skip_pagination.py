from __future__ import annotations

from idxadvisor.rules.base import Quiet, Rule, RuleContext, ShapeAnalysis, Verdict, render_fields
from idxadvisor.rules.qy001_count_slower_than_find import is_count
from idxadvisor.units import counted, human_count


class SkipPagination(Rule):
    """A listing pages with large `skip` values: every page reads and throws away all the pages before it.

    ## What it does
    Flags a query shape (a find, a count, or a pipeline with a leading `$skip`) whose executions skip many
    documents. It proposes range (keyset) pagination on the listing's sort key, and names the count of the same
    listing when the log has one (the page total, QY001's subject): both grow with the page number.

    ## Why is this bad?
    The server cannot jump to the 1,000th page: it walks the index (or sorts the documents) from the start and
    discards `skip` of them before returning the page. The last pages cost a thousand times the first, and crawlers
    or "export" buttons that walk every page make the whole listing quadratic.

    ## Example
    ```js
    db.orders.find({ status: "pending" }).sort({ createdAt: -1 }).skip(48000).limit(50)
    ```

    ## Fix
    Remember where the previous page ended and start the next one there, with the sort key as a bound and `_id` to
    break ties:
    ```js
    db.orders.find({ status: "pending", $or: [
        { createdAt: { $lt: last.createdAt } },
        { createdAt: last.createdAt, _id: { $lt: last._id } } ] })
      .sort({ createdAt: -1, _id: -1 }).limit(50)
    ```
    With an index in equality → sort order (`{ status: 1, createdAt: -1, _id: -1 }`) every page costs what the first
    one does. Show "next" and "previous" instead of page numbers, or cap how deep the numbers go.

    ## Options
    - `min_skip` (1000): the largest skip seen before the rule fires.
    - `min_skipping_executions` (3): executions that skip before the rule fires.

    ## References
    - https://www.mongodb.com/docs/manual/reference/method/cursor.skip/
    - https://www.mongodb.com/docs/manual/tutorial/equality-sort-range-guideline/
    """

    code = "QY003"
    name = "skip-pagination"
    category = "query"
    severity = "warning"
    applies_to = frozenset({"find", "count", "aggregate"})
    defaults = {"min_skip": 1000, "min_skipping_executions": 3}

    def check(self, analysis: ShapeAnalysis, context: RuleContext) -> Verdict | Quiet | None:
        stats = analysis.stats
        if not stats.skipped_executions:
            return None
        mean = stats.skip_total / stats.skipped_executions
        if stats.skip_max < self.options["min_skip"]:
            return Quiet(f"skips at most {stats.skip_max:,} documents (fewer than {self.options['min_skip']:,})")
        if stats.skipped_executions < self.options["min_skipping_executions"]:
            return Quiet(f"skips in {counted(stats.skipped_executions, 'execution')} only")
        message = (f"{analysis.shape.op} pages with skip: up to {stats.skip_max:,} documents skipped (mean "
                   f"{mean:,.0f} over {counted(stats.skipped_executions, 'execution')}), each read and thrown away "
                   "before the page is returned.")
        details = [_keyset_advice(analysis)]
        related = []
        count = _count_of_listing(analysis, context)
        if count is not None:
            related.append(count.shape.fingerprint)
            details.append(f"the listing also counts its total ({count.shape.text}, {count.count - count.getmores:,} "
                           "counts): a count grows with the data as the deep pages do; show 'more than N' or cache it")
        return Verdict(message, details=details, impact=float(stats.skip_total), related=related)


def _keyset_advice(analysis: ShapeAnalysis) -> str:
    sort = list(analysis.shape.sort)
    if not sort:
        return ("page by range instead: sort by _id and ask for { _id: { $gt: <last _id of the previous page> } } "
                f"with a limit ({human_count(analysis.stats.skip_max)} skipped documents become none)")
    keys = sort + ([("_id", sort[-1][1])] if not any(name == "_id" for name, _ in sort) else [])
    first, direction = sort[0]
    bound = "$lt" if direction == -1 else "$gt"
    equality = [(name, 1) for name in analysis.roles.equality]
    return (f"page by range on the sort key instead: {{ {first}: {{ {bound}: <{first} of the last document of the "
            f"previous page> }} }}, with _id to break ties, sorted by {render_fields(tuple(keys))} and served by "
            f"{render_fields(tuple(equality + keys))}: every page then costs what the first one does")


def _count_of_listing(analysis: ShapeAnalysis, context: RuleContext):  # noqa: ANN202 - ShapeStats | None
    """The count with the same filter on the same collection: the listing's page total."""
    if is_count(analysis.shape):
        return None
    counts = [stats for stats in context.shapes_of(analysis.ns)
              if is_count(stats.shape) and stats.shape.filter == analysis.shape.filter]
    return max(counts, key=lambda stats: stats.count) if counts else None
