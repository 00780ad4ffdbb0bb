from __future__ import annotations

from collections.abc import Iterable

from idxadvisor.indexes.candidates import replaceable
from idxadvisor.indexes.change import IndexChange
from idxadvisor.indexes.model import IndexSpec
from idxadvisor.rules.base import Rule, RuleContext, ShapeAnalysis, Verdict


class RedundantNewIndex(Rule):
    """A new index is a prefix of, or the same as, another index of the collection.

    ## What it does
    For `idxadvisor check`: flags every index the change creates whose key pattern is the same as another index's
    of the collection (an error: the server refuses a second index on one key pattern unless their partial filter or
    collation differ), or a leading part of another B-tree index that the planner can use for the same queries (a
    warning). A new index that makes an existing one redundant is reported too, as information, with the index to
    drop.

    ## Why is this bad?
    `{ status: 1 }` answers nothing that `{ status: 1, createdAt: -1 }` does not: every query it serves, the longer
    index serves as well. The extra index costs every insert and update a key, and its share of the cache.

    ## Example
    ```js
    // shop.orders has { status: 1, createdAt: -1 }
    db.orders.createIndex({ status: 1 })
    ```

    ## Fix
    Do not create it. Unique, sparse, partial, TTL, hidden and collated indexes do more than speed up queries and are
    never called redundant.

    ## References
    - https://www.mongodb.com/docs/manual/core/indexes/index-types/index-compound/#index-prefixes
    """

    code = "CI003"
    name = "redundant-new-index"
    severity = "warning"
    category = "change"
    checks_shapes = False

    def check(self, analysis: ShapeAnalysis, context: RuleContext) -> None:
        return None  # a finding about an index, not a shape (see check_collection)

    def check_collection(self, ns: str, context: RuleContext) -> Iterable[Verdict]:
        change = context.change
        if change is None:
            return
        indexes = change.proposed.get(ns, [])
        for index in change.created(ns):
            others = [other for other in indexes if other.name != index.name]
            verdict = _duplicate(index, others) or _prefix(index, others) or _makes_redundant(index, others, change, ns)
            if verdict is not None:
                yield verdict


def _plain(index: IndexSpec) -> bool:
    """An index that does nothing but speed up queries."""
    return not (index.unique or index.sparse or index.partial_filter is not None or index.hidden
                or index.expire_after_seconds is not None or index.collation is not None or index.is_id_index)


def _duplicate(index: IndexSpec, others: list[IndexSpec]) -> Verdict | None:
    same = next((other for other in others if other.key == index.key and repr(other.partial_filter)
                 == repr(index.partial_filter) and repr(other.collation) == repr(index.collation)), None)
    if same is None:
        return None
    return Verdict(f"the new index {index.name} {index} has the key pattern of {same.name}: the server refuses a "
                   "second index on one key pattern unless their partial filter or collation differ.",
                   severity="error", existing_index=index)


def _prefix(index: IndexSpec, others: list[IndexSpec]) -> Verdict | None:
    if not _plain(index):
        return None
    longer = next((other for other in others if len(other.key) > len(index.key) and index.is_prefix_of(other)
                   and other.is_btree and not other.hidden and not other.sparse and other.partial_filter is None
                   and other.collation == index.collation), None)
    if longer is None:
        return None
    return Verdict(f"the new index {index.name} {index} is a prefix of {longer.name} {longer}, which serves every "
                   "query it would: it only costs writes and memory.", existing_index=index)


def _makes_redundant(index: IndexSpec, others: list[IndexSpec], change: IndexChange, ns: str) -> Verdict | None:
    shorter = replaceable([other for other in others if not change.is_created(ns, other)], index.key)
    if shorter is None or not index.is_btree or index.partial_filter is not None or index.sparse:
        return None
    return Verdict(f"the new index {index.name} {index} makes {shorter.name} {shorter} redundant: drop it once the "
                   "new one is built.", severity="info", existing_index=shorter, location=change.location_of(ns, index))
