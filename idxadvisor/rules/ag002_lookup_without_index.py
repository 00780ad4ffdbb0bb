from __future__ import annotations

import re

from idxadvisor.indexes.model import IndexSpec, collection_reference, render_key_pattern
from idxadvisor.rules.base import Quiet, Rule, RuleContext, ShapeAnalysis, Verdict
from idxadvisor.shapes.shape import QueryShape

_LOOKUP = re.compile(r"^\$lookup\((.*)\)$")


def lookups_of(shape: QueryShape) -> list[dict[str, str]]:
    """The ``$lookup`` stages of a pipeline shape, each as its ``from``, ``localField`` and ``foreignField`` (and
    ``pipeline`` when it has one), as the shape records them."""
    found = []
    for stage in shape.stages:
        match = _LOOKUP.match(stage)
        if match is None:
            continue
        parts = match[1].split(", ")
        stage_parts = dict(part.split("=", 1) for part in parts if "=" in part)
        if "pipeline" in parts:
            stage_parts["pipeline"] = "yes"
        found.append(stage_parts)
    return found


def joins_through(index: IndexSpec, field: str, indexes: list[IndexSpec]) -> bool:
    """An index the planner may use for the inner equality lookup on ``field``: it starts with that field."""
    return bool(index.key) and index.key[0][0] == field and ShapeAnalysis.plannable(index, indexes) and \
        not index.sparse and (isinstance(index.key[0][1], int) or index.key[0][1] == "hashed")


class LookupWithoutIndex(Rule):
    """A `$lookup` joins on a field of the other collection that no index starts with: every input document scans it.

    ## What it does
    Reads each `$lookup` of an aggregation shape (`from`, `localField`, `foreignField`) and flags one whose
    `foreignField` no index of the joined collection starts with: in the `--indexes` file or the server's indexes
    (`--uri`), or, without either, in the inventory the log itself gives (its plans, `createIndexes` commands and
    index builds: docs/log-context.md). An equality join on `_id` is always served by the `_id` index. A `$lookup`
    with a `pipeline` and no `foreignField` is left out (its join condition is inside the pipeline), as is one into a
    collection the index file does not describe.

    The log cannot show the cost: a slow-query entry's `docsExamined` counts the documents the pipeline read from
    its own collection, not those each `$lookup` read from the joined one. A collection scan of the joined
    collection per input document is invisible in these counters; only the duration shows it.

    ## Why is this bad?
    For every document reaching the `$lookup`, the server runs a query on the joined collection with an equality on
    `foreignField`. Without an index that starts with that field, each of those queries scans the whole joined
    collection: N input documents, N collection scans.

    ## Example
    ```js
    db.orders.aggregate([
      { $match: { status: "paid" } },
      { $lookup: { from: "customers", localField: "customerId", foreignField: "customerId", as: "customer" } }
    ])
    // customers has no index on customerId: one scan of customers per paid order
    ```

    ## Fix
    Index the joined field on the joined collection:
    ```js
    db.customers.createIndex({ customerId: 1 })
    ```
    or join on `_id` where the data allows it.
    """

    code = "AG002"
    name = "lookup-without-index"
    category = "aggregation"
    severity = "warning"
    applies_to = frozenset({"aggregate"})

    def check(self, analysis: ShapeAnalysis, context: RuleContext) -> Verdict | Quiet | None:
        lookups = [lookup for lookup in lookups_of(analysis.shape) if "from" in lookup]
        if not lookups:
            return None
        database = analysis.ns.partition(".")[0]
        inferred = not context.settings.indexes and context.settings.uri is None
        unindexed: list[tuple[str, str]] = []
        reasons: list[str] = []
        for lookup in lookups:
            joined, field = f"{database}.{lookup['from']}", lookup.get("foreignField")
            if field is None:
                reasons.append(f"the $lookup into {joined} joins inside its pipeline")
                continue
            if field == "_id":
                reasons.append(f"{joined}.{field}: the _id index serves the join")
                continue
            indexes = list(context.indexes.get(joined, ()))
            if joined not in context.indexes and not inferred:
                reasons.append(f"the indexes of {joined} are not known (not in the --indexes file)")
                continue
            serving = next((index for index in indexes if joins_through(index, field, indexes)), None)
            if serving is not None:
                reasons.append(f"{joined}.{field}: index {serving.name} {serving} serves the join")
                continue
            unindexed.append((joined, field))
        if not unindexed:
            return Quiet("; ".join(reasons))
        joins = ", ".join(f"{joined}.{field}" for joined, field in unindexed)
        known = ("the inventory the log gives (its plans, createIndexes commands and index builds)" if inferred
                 else "the known indexes")
        message = (f"$lookup joins on {joins}, and no index in {known} starts with "
                   f"{'that field' if len(unindexed) == 1 else 'those fields'}: every document reaching the $lookup "
                   f"scans the joined collection, {analysis.executions:,} executions.")
        details = ["the log's docsExamined counts only the documents read from "
                   f"{analysis.ns}: the joined collection's scans are not in it, only in the duration"]
        details += [f"{collection_reference(joined)}.createIndex({render_key_pattern(((field, 1),))})"
                    for joined, field in unindexed]
        return Verdict(message, details=details)
