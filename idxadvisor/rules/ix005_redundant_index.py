from __future__ import annotations

from collections.abc import Iterable, Iterator

from idxadvisor.indexes.candidates import replaceable
from idxadvisor.indexes.catalog import shard_key_patterns
from idxadvisor.indexes.inventory import PLAN_SOURCE as PLAN_ONLY
from idxadvisor.indexes.model import IndexSpec
from idxadvisor.indexes.plans import parse_plan_summary
from idxadvisor.rules.base import Rule, RuleContext, ShapeAnalysis, Verdict


class RedundantIndex(Rule):
    """An index is a prefix of another index of the same collection: the longer one serves every query it serves.

    ## What it does
    Reads the `--indexes` file and flags an index whose key pattern is the leading part of another index's (same
    fields, same order, same directions): `{ status: 1 }` beside `{ status: 1, createdAt: -1 }`. It never flags the
    `_id` index, a unique, TTL, partial, sparse, hidden or collated index, or an index that carries the collection's
    shard key (`shard-keys` setting, `--shard-key`), since those do more than speed up queries; nor one whose longer
    index is hidden, partial, sparse or collated. It says which shapes of the log used the index, and advises hiding
    it before dropping it.

    ## Why is this bad?
    Every insert, every update of an indexed field and every delete maintains both indexes, and both compete for the
    cache, while the queries would run as well on the longer one alone.

    ## Example
    ```js
    db.orders.getIndexes()   // { status: 1 } and { status: 1, createdAt: -1 }
    ```

    ## Fix
    Hide the shorter index (4.4+: the planner ignores it, the server still maintains it), watch the workload for a
    full cycle of it, then drop it; unhide it at once if a query slows down:
    ```js
    db.orders.hideIndex("status_1")
    // a week (or a month-end) later, nothing slowed down:
    db.orders.dropIndex("status_1")
    ```
    When the longer index's extra fields hold arrays, it is multikey and cannot cover queries the shorter one
    covered: the finding says so when `--data` shows it.

    ## Options
    - `watch_days` (7): how long to watch a hidden index before dropping it, in the advice.

    ## References
    - https://www.mongodb.com/docs/manual/core/index-hidden/
    - https://www.mongodb.com/docs/manual/core/indexes/index-types/index-compound/#index-prefixes
    """

    code = "IX005"
    name = "redundant-index"
    severity = "warning"
    defaults = {"watch_days": 7}
    checks_shapes = False

    def check(self, analysis: ShapeAnalysis, context: RuleContext) -> None:
        return None  # a finding about the collection's indexes (see check_collection)

    def check_collection(self, ns: str, context: RuleContext) -> Iterable[Verdict]:
        indexes = context.indexes.get(ns, [])
        change = context.change
        # idxadvisor check: CI003 says what a new index makes redundant, at the line that creates it
        longer_ones = [index for index in indexes if change is None or not change.is_created(ns, index)]
        for shorter, longer in redundant_prefixes(indexes, longer_ones, ns, context):
            users = shapes_using(shorter, ns, context)
            message = (f"index {shorter.name} {shorter} is a prefix of {longer.name} {longer}: every query it serves, "
                       f"{longer.name} serves too, and every write maintains both.")
            details = []
            if shorter.inferred or longer.inferred:
                details.append("without --indexes or --uri, these indexes are known from the log: "
                               + "; ".join(f"{index.name}: {index.origin}" for index in (shorter, longer)
                                           if index.inferred))
            if users:
                details.append(f"{users} shape{'s' if users != 1 else ''} of the log used {shorter.name}; "
                               f"{longer.name} leads with the same fields and serves {'them' if users != 1 else 'it'}")
            sample = context.samples.get(ns)
            arrays = [name for name, _ in longer.key[len(shorter.key):] if sample is not None and sample.is_array(name)]
            if arrays:
                details.append(f"{', '.join(arrays)} hold{'s' if len(arrays) == 1 else ''} arrays in sampled "
                               f"documents: {longer.name} is multikey and cannot cover the queries {shorter.name} "
                               "covers without fetching documents")
            details.append(hide_advice(shorter, ns, self.options["watch_days"]))
            yield Verdict(message, details=details, existing_index=shorter, command=shorter.hide_index_command(ns))


def redundant_prefixes(indexes: list[IndexSpec], longer_ones: Iterable[IndexSpec], ns: str,
                       context: RuleContext) -> Iterator[tuple[IndexSpec, IndexSpec]]:
    """Each index of ``indexes`` that is a strict prefix of one of ``longer_ones`` and may go, with that longer index
    (the longest prefix first; an index once): the judgement IX005 and the index selection share."""
    reported: set[str] = set()
    for longer in longer_ones:
        if not _can_replace(longer, [*indexes, longer]):
            continue
        shorter = replaceable(indexes, longer.key)
        if shorter is None or shorter.name in reported or protected(shorter, ns, context) or not shorter.is_btree:
            continue
        reported.add(shorter.name)
        yield shorter, longer


def _can_replace(index: IndexSpec, indexes: list[IndexSpec]) -> bool:
    """An index the planner can use for anything a prefix of it serves."""
    return (ShapeAnalysis.plannable(index, indexes) and not index.sparse and index.collation is None
            and index.is_btree and len(index.key) > 1)


def protected(index: IndexSpec, ns: str, context: RuleContext) -> str | None:
    """Why an index must never be called redundant or unused: it does more than speed up queries."""
    shard_key = shard_key_patterns(context.settings.shard_keys).get(ns)
    if index.is_id_index:
        return "the _id index"
    if index.inferred and index.origin == PLAN_ONLY:
        return "known from the log's plans only: whether it is unique, TTL or partial is not known"
    if index.unique:
        return "unique: it enforces uniqueness"
    if index.expire_after_seconds is not None:
        return "a TTL index: it deletes expired documents"
    if index.partial_filter is not None:
        return "partial"
    if index.hidden:
        return "hidden already"
    if shard_key is not None and index.starts_with(shard_key):
        return "it carries the shard key"
    return None


def shapes_using(index: IndexSpec, ns: str, context: RuleContext) -> int:
    """How many shapes of the collection have a plan that used the index's key pattern."""
    return sum(any(index.key in parse_plan_summary(plan).indexes for plan in stats.plans)
               for stats in context.shapes_of(ns))


def hide_advice(index: IndexSpec, ns: str, days: int) -> str:
    return (f"hide it first, {index.hide_index_command(ns)} (4.4+), and watch the slow queries for {days} days or a "
            f"full business cycle (month-end jobs, reports); unhide it at once if a query slows down, and drop it "
            f"when nothing did: {index.drop_index_command(ns)}")
