from __future__ import annotations

from collections.abc import Iterable

from idxadvisor.rules.base import Rule, RuleContext, ShapeAnalysis, Verdict


class RefusedIndex(Rule):
    """The change creates an index the server would refuse to build.

    ## What it does
    For `idxadvisor check`: flags, at its index file entry or script call, every index the change creates that the
    server refuses: a specification it rejects (an unknown direction, a field named twice, no key at all), a name
    already taken by an index with another key, a collection's 65th index (the server allows 64, the `_id` index
    included), or, with `--data`, two fields that sampled documents hold as arrays side by side (error
    171, `cannot index parallel arrays`). The refused index is left out of the proposed set: no query can use it,
    so nothing it would have served counts as resolved. (An index on the key pattern of another is CI003's.)

    ## Why is this bad?
    The migration fails when it runs, in production, after the review that should have caught it; if the deployment
    carries on, the queries the index was for stay as slow as they were.

    ## Example
    ```js
    // products: { tags: ["summer", "sale"], sizes: ["S", "M"] }
    db.products.createIndex({ tags: 1, sizes: 1 }, { name: "tags_sizes" })   // cannot index parallel arrays
    ```

    ## Fix
    Index one of the array fields with the scalar ones (`{ tags: 1, inStock: 1 }`), fix the specification, or drop
    an index the collection no longer needs before creating another.

    ## References
    - https://www.mongodb.com/docs/manual/reference/limits/#indexes
    - https://www.mongodb.com/docs/manual/core/indexes/index-types/index-multikey/#compound-multikey-indexes
    """

    code = "CI004"
    name = "refused-index"
    severity = "error"
    category = "change"
    checks_shapes = False

    def check(self, analysis: ShapeAnalysis, context: RuleContext) -> None:
        return None  # a finding about an index, not a shape (see check_collection)

    def check_collection(self, ns: str, context: RuleContext) -> Iterable[Verdict]:
        change = context.change
        if change is None:
            return
        for refused in change.refused:
            if refused.ns == ns:
                yield Verdict(f"the change creates {refused.shown}, which the server would refuse: {refused.reason}.",
                              location=refused.location, subject=refused.shown)
