from __future__ import annotations

from collections.abc import Iterable

from idxadvisor.indexes.model import KeyPattern
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

    def check(self, analysis: ShapeAnalysis, context: RuleContext) -> Verdict | Quiet | None:
        return None  # IX003 reviews the proposals of the other index rules (see review)

    def review(self, analysis: ShapeAnalysis, proposal: Verdict, context: RuleContext) -> Verdict | Quiet | None:
        if proposal.index is None or len(proposal.index) < 2:
            return None
        sample = analysis.sample
        if sample is None:
            return None  # without a sample nothing says which fields hold arrays (the report says so once)
        arrays = [name for name, _ in proposal.index if sample.is_array(name)]
        if len(arrays) < 2:
            return None
        keep = min(arrays, key=lambda name: (sample.selectivity(name) or 1.0, name))
        workable = tuple(pair for pair in proposal.index if pair[0] not in arrays or pair[0] == keep)
        dropped = [name for name in arrays if name != keep]
        become = "becomes" if len(dropped) == 1 else "become"
        message = (f"the index this query needs, {render_fields(proposal.index)}, would hold {len(arrays)} fields "
                   f"that are arrays in the data ({', '.join(arrays)}): the server cannot build it. "
                   f"Proposing {render_fields(workable)}: {keep} is the most selective array field; "
                   f"{', '.join(dropped)} {become} a filter on the fetched documents.")
        details = [proposal.message]
        details += _model_advice(sample, arrays)
        return Verdict(message, details=details, index=workable)

    def check_collection(self, ns: str, context: RuleContext) -> Iterable[Verdict]:
        sample = context.samples.get(ns)
        for index in context.indexes.get(ns, []):
            if sample is None or len(index.key) < 2:
                continue
            parallel = _parallel_in_one_document(sample, index.key)
            if parallel:
                yield Verdict(
                    f"existing index {index.name} holds {' and '.join(parallel)}, which are both arrays in sampled "
                    f"documents: inserting or updating such a document fails with 'cannot index parallel arrays'.",
                    existing_index=index, details=_model_advice(sample, parallel))


def _parallel_in_one_document(sample: SampleStatistics, key: KeyPattern) -> list[str]:
    fields = [name for name, _ in key if sample.is_array(name)]
    if len(fields) < 2:
        return []
    for document in sample.documents:
        in_arrays = [name for name in fields if path_values(document, name)[1]]
        if len(in_arrays) >= 2:
            return in_arrays[:2]
    return []


def _model_advice(sample: SampleStatistics, arrays: list[str]) -> list[str]:
    advice = []
    for name in arrays:
        sizes = [len(values) for values, crossed in (path_values(d, name) for d in sample.documents) if crossed]
        if sizes and sum(size <= 1 for size in sizes) / len(sizes) >= _MOSTLY_SINGLE:
            advice.append(f"{name} holds a single value in {sum(s <= 1 for s in sizes) * 100 // len(sizes)}% of "
                          "the sampled arrays: storing that value in a scalar field (and the rare extra values in "
                          "another) would let one index hold both fields")
    return advice
