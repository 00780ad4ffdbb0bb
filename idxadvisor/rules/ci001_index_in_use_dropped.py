from __future__ import annotations

from collections.abc import Iterable

from idxadvisor.indexes.change import IndexChange, IndexEvent
from idxadvisor.indexes.plans import parse_plan_summary
from idxadvisor.rules.base import Rule, RuleContext, ShapeAnalysis, Verdict, analyze_shape
from idxadvisor.shapes.digest import ShapeStats
from idxadvisor.units import counted

_LISTED = 3  # shapes named in the message; the details list them all


class IndexInUseDropped(Rule):
    """A change drops or hides an index that the recorded workload uses.

    ## What it does
    For `idxadvisor check`: flags every index the change drops (`dropIndex`, `dropIndexes`, a collection `drop`, an
    entry removed from the index file) or hides (`hideIndex`, `collMod`), when shapes of the workload use it: their
    plan summaries name it, or it is the index that serves them. It is an error when at least one of those shapes is
    left with no index that can bound its scan, a warning when other indexes can take over (their plans change).

    ## Why is this bad?
    An index in use is dropped in one statement and rebuilt in minutes or hours, during which every query that used
    it scans the collection. The log shows which queries depend on it; a code review of the migration does not.

    ## Example
    ```js
    // migrations/20260105-cleanup.js
    db.orders.dropIndex("status_1")   // count({ status, region }) runs 47 times in the workload, on status_1
    ```

    ## Fix
    Keep the index, or create the index that replaces it first, in an earlier migration, and drop the old one once
    the workload's plans use the new one. Hiding an index (`hideIndex`) before dropping it is the safe way to test a
    removal: it can be unhidden at once.

    ## References
    - https://www.mongodb.com/docs/manual/core/index-hidden/
    """

    code = "CI001"
    name = "index-in-use-dropped"
    severity = "error"
    category = "change"
    checks_shapes = False

    def check(self, analysis: ShapeAnalysis, context: RuleContext) -> None:
        return None  # a finding about an index, not a shape (see check_collection)

    def check_collection(self, ns: str, context: RuleContext) -> Iterable[Verdict]:
        change = context.change
        if change is None:
            return
        shapes = [stats for stats in context.shapes_of(ns) if stats.shape.known]
        for event in change.events_of(ns, "dropped", "hidden"):
            users = [stats for stats in shapes if uses(stats, event, change, context)]
            if users:
                yield _verdict(event, users, change, context)


def uses(stats: ShapeStats, event: IndexEvent, change: IndexChange, context: RuleContext) -> bool:
    """The shape's plans name the index, or it is the index that serves the shape among the baseline indexes."""
    if any(event.index.key in parse_plan_summary(text).indexes for text in stats.plans):
        return True
    served = analyze_shape(stats, context).served_by(change.baseline.get(stats.shape.ns, []))
    return served is not None and served.name == event.index.name


def _verdict(event: IndexEvent, users: list[ShapeStats], change: IndexChange, context: RuleContext) -> Verdict:
    proposed = change.proposed.get(event.ns, [])
    stranded = [stats for stats in users if analyze_shape(stats, context).bounded_by(proposed) is None]
    executions = sum(max(stats.count - stats.getmores, 1) for stats in users)
    index = event.index
    verb = "drops" if event.action == "dropped" else "hides"
    shown = ", ".join(stats.shape.text for stats in users[:_LISTED]) + (" …" if len(users) > _LISTED else "")
    message = (f"the change {verb} {index.name} {index}, which {len(users)} shape{'s' if len(users) > 1 else ''} "
               f"of the workload use{'s' if len(users) == 1 else ''} ({counted(executions, 'execution')}): {shown}.")
    if stranded:
        message += (f" {len(stranded)} of them would be left with no index to bound {'its' if len(stranded) == 1 else 'their'} "
                    "scan: a collection scan.")
    else:
        message += " Other indexes can bound their scans: their plans change, check them before the index goes."
    details = [f"{stats.shape.text}: {max(stats.count - stats.getmores, 1):,} executions, plan "
               f"{stats.main_plan or 'not logged'}" for stats in users]
    command = index.unhide_index_command(event.ns) if event.action == "hidden" else index.create_index_command(event.ns)
    return Verdict(message, severity="error" if stranded else "warning", details=details, existing_index=index,
                   location=event.location, command=command)
