from __future__ import annotations

from collections.abc import Iterable

from idxadvisor.indexes.sampling import SampleStatistics, path_values
from idxadvisor.rules.base import Quiet, Rule, RuleContext, ShapeAnalysis, Verdict, render_fields

_MOSTLY_SINGLE = 0.9  # share of documents holding at most one value that makes a scalar field the better model


class ParallelArrayIndex(Rule):
    """A compound index would hold two fields that are arrays in the data: the server cannot build it.

    ## What it does
    Checks every proposed compound index, and every existing one, against a sample of the collection's documents
    (`--data`). When two of its fields hold arrays in the same documents, it never proposes that index: it proposes
    one that can work, with a single array field (the most selective one), and says when the data model is the
    real fix. An existing index like that is reported as an error: inserting documents like the sampled ones fails.

    ## Why is this bad?
    A compound multikey index can have at most one array-valued field per document. The server refuses to build
    such an index, and refuses inserts and updates that would create such a document once it exists
    (`cannot index parallel arrays`, error 171).

    ## Example
    ```js
    // products: { tags: ["summer", "sale"], sizes: ["S", "M", "L"], inStock: true }
    db.products.find({ tags: "summer", sizes: "M", inStock: true })
    db.products.createIndex({ inStock: 1, sizes: 1, tags: 1 })   // cannot index parallel arrays [tags] [sizes]
    ```

    ## Fix
    ```js
    db.products.createIndex({ tags: 1, inStock: 1 })   // the more selective array, plus the scalar fields
    ```
    If one of the arrays almost always holds a single value, store that value in a scalar field and the rare
    extra values in another: both can then be indexed together.

    ## References
    - https://www.mongodb.com/docs/manual/core/indexes/index-types/index-multikey/#compound-multikey-indexes
    """

    code = "IX003"
    name = "parallel-array-index"
    severity = "error"
    proposes_index = True
    priority = 100
    checks_shapes = False

    def check(self, analysis: ShapeAnalysis, context: RuleContext) -> Verdict | Quiet | None:
        return None  # IX003 reviews the proposals of the other index rules (see review)

    def review(self, analysis: ShapeAnalysis, proposal: Verdict, context: RuleContext) -> Verdict | Quiet | None:
        if proposal.index is None or len(proposal.index) < 2:
            return None
        sample = analysis.sample
        if sample is None:
            return None  # without a sample nothing says which fields hold arrays (the report says so once)
        pairs = sample.parallel_arrays([name for name, _ in proposal.index])
        if not pairs:
            return None
        arrays = [name for name, _ in proposal.index if any(name in pair for pair in pairs)]
        kept: list[str] = []
        for name in sorted(arrays, key=lambda name: (sample.selectivity(name) or 1.0, name)):
            if not any({name, other} == set(pair) for other in kept for pair in pairs):
                kept.append(name)
        dropped = [name for name in arrays if name not in kept]
        workable = tuple(pair for pair in proposal.index if pair[0] not in dropped)
        become = "becomes" if len(dropped) == 1 else "become"
        conflicts = ", ".join(f"{first} and {second}" for first, second in pairs)
        message = (f"the index this query needs, {render_fields(proposal.index)}, would hold arrays that sampled "
                   f"documents have side by side ({conflicts}): the server cannot build it. Proposing "
                   f"{render_fields(workable)}: it keeps {', '.join(kept)}, the most selective; "
                   f"{', '.join(dropped)} {become} a filter on the fetched documents.")
        details = [proposal.message]
        details += _model_advice(sample, dropped + [name for name in arrays if name not in dropped])
        return Verdict(message, details=details, index=workable)

    def check_collection(self, ns: str, context: RuleContext) -> Iterable[Verdict]:
        sample = context.samples.get(ns)
        for index in context.indexes.get(ns, []):
            if sample is None or len(index.key) < 2:
                continue
            pairs = sample.parallel_arrays(index.fields)
            if pairs:
                first, second = pairs[0]
                yield Verdict(
                    f"existing index {index.name} holds {first} and {second}, which are arrays side by side in "
                    f"sampled documents: inserting or updating such a document fails with 'cannot index parallel "
                    "arrays'.", existing_index=index, details=_model_advice(sample, [first, second]))


def _model_advice(sample: SampleStatistics, arrays: list[str]) -> list[str]:
    """For an array field that almost always holds one value: the data-model fix."""
    advice = []
    for name in arrays:
        sizes = [len(values) if crossed else 1
                 for values, crossed in (path_values(document, name) for document in sample.documents)
                 if values or crossed]
        single = sum(size <= 1 for size in sizes)
        if sizes and single / len(sizes) >= _MOSTLY_SINGLE:
            advice.append(f"{name} holds a single value in {single * 100 // len(sizes)}% of the sampled documents "
                          "that have it: storing that value in a scalar field (and the rare extra values in another) "
                          "would let one index hold both fields")
            break  # one field to remodel is enough
    return advice
