from __future__ import annotations

from collections import Counter

from idxadvisor.indexes.sampling import SampleStatistics
from idxadvisor.rules.base import Quiet, Rule, RuleContext, ShapeAnalysis, Verdict
from idxadvisor.units import counted, human_bytes

#: Pipeline stages after which the client no longer gets whole documents.
_RESHAPING = ("$project", "$unset", "$group", "$count", "$replaceRoot", "$replaceWith", "$bucket", "$bucketAuto",
              "$facet", "$sortByCount")


class UnprojectedLargeResponse(Rule):
    """A query returns whole documents of many kilobytes, many of them, with no projection.

    ## What it does
    Flags a find or aggregation without a projection (no `projection`, no `$project`, `$unset`, `$group` …) whose
    responses (`reslen`, `responseLength`) are large per document returned and large per execution: the client
    gets every field of every document. With a `--data` sample it names the largest fields, the ones a projection
    would leave out.

    ## Why is this bad?
    The server reads, serialises and sends every byte of every document, the network carries them, the driver
    decodes them, and the application uses a few fields. Large documents also crowd the cache. Responses past
    16 MB are split into more batches, each another round trip.

    ## Example
    ```js
    db.articles.find({ section: "news" }).limit(100)   // 100 articles of 48 kB with their full body and history
    ```

    ## Fix
    Ask for the fields the page shows:
    ```js
    db.articles.find({ section: "news" }, { title: 1, summary: 1, publishedAt: 1 }).limit(100)
    ```
    A covered query (an index holding the filter and every projected field) does not read the documents at all.

    ## Options
    - `min_bytes_per_document` (10240): response bytes per document returned before the rule fires.
    - `min_bytes_per_execution` (262144): response bytes per execution before the rule fires.

    ## References
    - https://www.mongodb.com/docs/manual/tutorial/project-fields-from-query-results/
    - https://www.mongodb.com/docs/manual/core/query-optimization/#covered-query
    """

    code = "QY007"
    name = "unprojected-large-response"
    category = "query"
    severity = "warning"
    applies_to = frozenset({"find", "aggregate"})
    defaults = {"min_bytes_per_document": 10240.0, "min_bytes_per_execution": 262144.0}

    def check(self, analysis: ShapeAnalysis, context: RuleContext) -> Verdict | Quiet | None:
        shape, stats = analysis.shape, analysis.stats
        if shape.projection or any(stage.split("(", 1)[0].split("{", 1)[0] in _RESHAPING for stage in shape.stages):
            return None
        if not stats.responses_measured or not stats.nreturned:
            return None
        per_document = stats.response_bytes / stats.nreturned
        per_execution = stats.response_bytes / analysis.executions
        if per_document < self.options["min_bytes_per_document"]:
            return None  # small documents: not this rule's kind
        if analysis.executions < context.settings.min_count:
            return Quiet(f"too few executions ({analysis.executions} < --min-count {context.settings.min_count})")
        if per_execution < self.options["min_bytes_per_execution"]:
            return Quiet(f"responses hold {human_bytes(per_execution)} per execution (less than "
                         f"{human_bytes(self.options['min_bytes_per_execution'])})")
        message = (f"{shape.op} returns whole documents of about {human_bytes(per_document)} with no projection: "
                   f"{human_bytes(per_execution)} per execution, {stats.nreturned / analysis.executions:,.0f} "
                   f"documents, {counted(analysis.executions, 'execution')} "
                   f"({human_bytes(stats.response_bytes)} in all).")
        details = ["project the fields the client uses ({ title: 1, … } or a $project stage); an index holding the "
                   "filter and those fields covers the query without reading the documents"]
        if analysis.sample is not None:
            largest = largest_fields(analysis.sample)
            if largest:
                details.append("the largest fields of sampled documents: " + ", ".join(
                    f"{name} ({human_bytes(size)})" for name, size in largest))
        return Verdict(message, details=details, impact=float(stats.nreturned))


def largest_fields(sample: SampleStatistics, count: int = 3) -> list[tuple[str, float]]:
    """The top-level fields that weigh the most in sampled documents, with their average BSON size."""
    import bson  # a sample was read with it already

    if not len(sample):
        return []
    sizes: Counter[str] = Counter()
    for document in sample.documents:
        for name, value in document.items():
            try:
                sizes[name] += len(bson.encode({name: value})) - 5  # less the document's own length and end
            except (bson.errors.BSONError, TypeError, OverflowError):
                continue
    return [(name, total / len(sample)) for name, total in sizes.most_common(count)]
