from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from idxadvisor.indexes.candidates import candidate_key, ers_key, first_misplaced, serves
from idxadvisor.indexes.model import IndexSpec, KeyPattern
from idxadvisor.rules.base import (
    QUERY_OPS,
    Quiet,
    Rule,
    RuleContext,
    ShapeAnalysis,
    Verdict,
    analyze_shape,
    render_fields,
)
from idxadvisor.units import human_bytes

SORT_MEMORY_LIMIT = 100 * 1024 * 1024  # internalQueryMaxBlockingSortMemoryUsageBytes, 4.4 and later


class EsrOrder(Rule):
    """A query sorts in memory, or uses an index whose keys are not in equality → sort → range order.

    ## What it does
    Flags a query shape with equality and sort (or range) predicates when the log shows a blocking in-memory sort,
    or when the index it uses puts a sort or range key before an equality key, such as a filter on `status` sorted
    by `createdAt` served by `{ createdAt: -1, status: 1 }`. It proposes the index in equality → sort → range order
    and says when equality → range → sort is the better choice. A blocking sort that spilled to disk (`usedDisk`),
    or that holds close to the memory a sort may use, is named as such. With `idxadvisor check`, it also flags a new
    index whose keys are out of that order for the shapes of the workload it would serve.
    With `--index-selection workload` (the default) the proposal is weighed with the collection's other shapes: the
    finding states the server time its index saves per hour of the log, and is made only above `--min-saving`
    (default 0.5 s per hour); a free-text field gets a `hashed` key (or none), fields after an equality that the log
    shows finds one or two documents are dropped (sorting those few costs nothing), and a field of few values leads no index for a shape that fixes a
    field of more values (docs/advice.md).

    ## Why is this bad?
    An index gives a sort for free only when the fields before the sort keys are fixed by equalities. A blocking
    sort must read and hold every matching document before returning the first one, and fails past the memory
    limit unless it spills to disk. An index that leads with the sort key instead walks the whole index in sort
    order and filters the equality field key by key: it avoids the sort by examining many more keys.

    ## Example
    ```js
    // index { createdAt: -1, status: 1 }
    db.orders.find({ status: "pending" }).sort({ createdAt: -1 }).limit(50)   // 1,000 keys for 50 orders
    ```

    ## Fix
    ```js
    db.orders.createIndex({ status: 1, createdAt: -1 })   // equality, then sort: 50 keys for 50 orders
    ```
    With a very selective range (a few matching documents), equality → range → sort examines fewer keys and sorts
    those few documents in memory; the finding names that alternative when the query has both.

    ## Options
    - `min_blocking_share` (0.1): the share of executions that sort in memory before the rule fires.
    - `min_sorted_per_execution` (100): documents read per execution before an in-memory sort counts (any sort that
      spilled to disk counts).
    - `min_keys_per_returned` (10) and `min_wasted_per_execution` (500): how wasteful an index out of order must be.
    - `sort_memory_share` (0.5): the share of the 100 MB blocking-sort memory limit above which the finding says a sort
      approaches it (the documents returned without a limit, times the sampled document size or the response bytes
      per document).

    ## References
    - https://www.mongodb.com/docs/manual/tutorial/equality-sort-range-guideline/
    - https://www.mongodb.com/docs/manual/tutorial/sort-results-with-indexes/
    """

    code = "IX002"
    name = "esr-order"
    severity = "warning"
    proposes_index = True
    priority = 30
    defaults = {"min_blocking_share": 0.1, "min_sorted_per_execution": 100.0, "min_keys_per_returned": 10.0,
                "min_wasted_per_execution": 500.0, "sort_memory_share": 0.5}

    def check(self, analysis: ShapeAnalysis, context: RuleContext) -> Verdict | Quiet | None:
        roles = analysis.roles
        if not roles.sort and not (roles.equality and roles.range):
            return None
        stats = analysis.stats
        used = analysis.used_index
        misplaced = first_misplaced(used, roles) if used else None
        if stats.blocking_sorts and roles.sort:
            quiet = self._cheap_sort(analysis)
            if quiet is not None:
                return quiet
            share = stats.blocking_sorts * 100 / analysis.executions
            sort = ", ".join(f"{name}: {direction}" for name, direction in roles.sort)
            problem = f"sorts {{ {sort} }} in memory in {share:.0f}% of {analysis.executions:,} executions"
            if used:
                problem += f" after scanning {render_fields(used)}"
            problem += self._spills(analysis)
        elif misplaced is not None and roles.equality:
            if not self._wasteful_scan(analysis):
                return Quiet(f"its index {render_fields(used)} is out of equality → sort → range order, but "  # type: ignore[arg-type]
                             f"examines {analysis.keys_per_returned or 0:,.1f} keys per document returned: below "
                             "the thresholds")
            later, equality = misplaced
            if equality in dict(used):  # type: ignore[arg-type]
                problem = f"uses {render_fields(used)}, which puts {later} before the equality field {equality}"  # type: ignore[arg-type]
            else:
                problem = (f"uses {render_fields(used)} for its {later} order, without the equality field "  # type: ignore[arg-type]
                           f"{equality}: it walks the index and filters {equality} document by document")
            problem += f": {_keys_examined(analysis)}"
        else:
            return Quiet("no blocking sort, and its index keeps equality fields first")
        message = f"{stats.shape.op} {problem}."
        details = []
        leading_ranges = [name for name in roles.range if name not in roles.never_leading]
        alternative = ers_key(roles, _order_of(analysis.candidate))
        if roles.sort and leading_ranges and alternative != analysis.candidate:
            details.append(f"when the range on {alternative[len(roles.equality)][0]} is very selective, "
                           f"{render_fields(alternative)} (equality, range, sort) examines fewer keys and sorts the "
                           "few matching documents in memory")
        return Verdict(message, details=details, index=analysis.candidate)

    def check_collection(self, ns: str, context: RuleContext) -> Iterable[Verdict]:
        """check: a new index out of equality → sort → range order for the shapes it is meant to serve."""
        if context.change is None:
            return
        for index in context.change.created(ns):
            if len(index.key) < 2 or not index.is_btree:
                continue
            targets = [(stats, better) for stats in context.shapes_of(ns)
                       if (better := _reordered(index, analyze_shape(stats, context))) is not None]
            if not targets:
                continue
            targets.sort(key=lambda target: -target[0].count)
            stats, better = targets[0]
            shapes = len(targets)
            yield Verdict(f"the new index {index.name} {index} is out of equality → sort → range order for "
                          f"{shapes} shape{'s' if shapes > 1 else ''} it would serve, such as {stats.shape.text} "
                          f"({stats.count:,} executions): {render_fields(better)} serves "
                          f"{'them' if shapes > 1 else 'it'}.",
                          details=[f"{other.shape.text}: {render_fields(key)}" for other, key in targets],
                          existing_index=index, index=better)

    def _spills(self, analysis: ShapeAnalysis) -> str:
        """The sort's memory: executions that spilled to disk, or an estimate close to the limit."""
        stats = analysis.stats
        said = ""
        if stats.used_disk:
            what = "spilled to disk" if analysis.shape.op != "aggregate" else "used disk (a $sort or $group spilled)"
            said = f"; {stats.used_disk:,} of them {what} (usedDisk)"
        estimate = sort_memory(analysis)
        if estimate is not None and estimate[2] >= self.options["sort_memory_share"] * SORT_MEMORY_LIMIT:
            documents, size, total = estimate
            said += (f"; it holds about {documents:,.0f} documents of {human_bytes(size)} per sort, "
                     f"{human_bytes(total)}: {total * 100 / SORT_MEMORY_LIMIT:.0f}% of the 100 MiB a blocking sort "
                     "may use (32 MiB before 4.4), past which it fails or spills to disk")
        return said

    def _cheap_sort(self, analysis: ShapeAnalysis) -> Quiet | None:
        """A rare blocking sort, or one over a handful of documents, costs less than another index."""
        stats = analysis.stats
        share = stats.blocking_sorts / analysis.executions
        if share < self.options["min_blocking_share"]:
            return Quiet(f"sorts in memory in only {share:.1%} of {analysis.executions:,} executions")
        sorted_per_execution = max(stats.docs_examined, stats.keys_examined) / analysis.executions
        if sorted_per_execution < self.options["min_sorted_per_execution"] and not stats.used_disk:
            return Quiet(f"sorts in memory, but only about {sorted_per_execution:,.0f} documents per execution: "
                         "below the thresholds")
        return None

    def _wasteful_scan(self, analysis: ShapeAnalysis) -> bool:
        ratio = analysis.keys_per_returned
        if ratio is None:
            ratio = float("inf") if analysis.returns_nothing else 0.0
        return (ratio >= self.options["min_keys_per_returned"]
                and analysis.wasted_per_execution >= self.options["min_wasted_per_execution"])


def _reordered(index: IndexSpec, analysis: ShapeAnalysis) -> KeyPattern | None:
    """The index's own fields in equality → sort → range order, when the index holds only fields of the shape, puts
    one of them before an equality field, and would serve the shape once reordered; else None."""
    shape, roles = analysis.shape, analysis.roles
    if not shape.known or shape.op not in QUERY_OPS or not set(index.fields) <= roles.fields:
        return None
    if first_misplaced(index.key, roles) is None:
        return None
    kept = set(index.fields)
    narrowed = replace(roles, equality=tuple(name for name in roles.equality if name in kept),
                       sort=tuple(pair for pair in roles.sort if pair[0] in kept),
                       range=tuple(name for name in roles.range if name in kept))
    better = candidate_key(narrowed, _order_of(index.key))
    if set(name for name, _ in better) != kept or serves(index.key, narrowed) or not serves(better, narrowed):
        return None
    return better

def sort_memory(analysis: ShapeAnalysis) -> tuple[float, float, float] | None:
    """(documents, bytes each, bytes) a blocking sort holds per execution: every document returned when the query has
    no limit (with one it keeps only the top documents), times the sampled document size, or the response bytes per
    document when the query projects nothing. None when the log does not tell."""
    stats, shape = analysis.stats, analysis.shape
    if shape.has_option("limit") or not stats.measured or not stats.nreturned:
        return None
    size = analysis.sample.average_document_size if analysis.sample is not None else None
    if not size and stats.responses_measured and not shape.projection:
        size = stats.response_bytes / stats.nreturned
    if not size:
        return None
    documents = stats.nreturned / analysis.executions
    return documents, size, documents * size


def _keys_examined(analysis: ShapeAnalysis) -> str:
    if analysis.returns_nothing:
        keys = analysis.stats.keys_examined / analysis.executions
        return f"{keys:,.0f} keys examined per execution, and nothing returned"
    return f"{analysis.keys_per_returned or 0:,.0f} keys examined per document returned"


def _order_of(key: tuple) -> object:
    """Keep the candidate's own equality order in the alternative."""
    position = {name: index for index, (name, _) in enumerate(key)}
    return lambda name: (position.get(name, len(position)), name)
