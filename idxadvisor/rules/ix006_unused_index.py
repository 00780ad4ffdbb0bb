from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timezone

from idxadvisor.indexes.model import IndexSpec
from idxadvisor.indexes.plans import parse_plan_summary
from idxadvisor.models.values import as_datetime, as_int
from idxadvisor.rules.base import Rule, RuleContext, ShapeAnalysis, Verdict
from idxadvisor.rules.ix005_redundant_index import hide_advice, protected, redundant_prefixes
from idxadvisor.shapes.digest import ShapeStats
from idxadvisor.units import human_count, human_ms

_LOOKUP = re.compile(r"^\$lookup\((.*)\)$")
_SLOW_MS = 100.0  # the default slowms: a log whose fastest entries are this slow shows only slow operations


class UnusedIndex(Rule):
    """No operation of the log used an index, over a span long enough to say so.

    ## What it does
    Reads the `--indexes` file and flags an index of a collection that the log shows operations on when no shape's
    plan used it, no query hinted it and no `$lookup` or `$graphLookup` of the same database could join through it,
    and it is not the longer index IX005 advises keeping in place of a used prefix of it.
    It says how long the log covers and how many operations on the collection it saw, since a short log proves
    little, and whether the log holds only slow operations (then fast queries using the index are invisible to it).
    Where the index file carries the server's own counters (`idxadvisor indexes`, the export script, mdbkit's usage,
    or `--uri`: `$indexStats` `accesses`), an index the server counted uses of is never flagged, however quiet the
    log, and one it counted none of since `accesses.since` is flagged with that evidence too.
    It never flags the `_id` index, a unique, TTL, partial or hidden index, one that carries the shard key (the
    `shard-keys` setting, `--shard-key`), nor text, geo and wildcard indexes (their plans are not all in the log),
    nor an index known from the log alone (without `--indexes` or `--uri`, the inventory the log gives: its
    `createIndexes` commands and index builds; see docs/log-context.md).

    ## Why is this bad?
    An index nobody reads still costs every write that touches its fields, disk, and cache that the indexes in use
    need.

    ## Example
    ```js
    db.orders.getIndexes()   // { region: 1, createdAt: -1 }: not one plan used it in a week of logs
    ```

    ## Fix
    Confirm with the servers' own counters, on every member (`$indexStats`: `accesses.ops` since `accesses.since`),
    then hide the index, watch, and drop it:
    ```js
    db.orders.aggregate([{ $indexStats: {} }])
    db.orders.hideIndex("region_1_createdAt_-1")
    ```

    ## Options
    - `min_span_hours` (1.0): the span the log must cover before the rule says anything.
    - `watch_days` (7): how long to watch a hidden index before dropping it, in the advice.

    ## References
    - https://www.mongodb.com/docs/manual/reference/operator/aggregation/indexStats/
    - https://www.mongodb.com/docs/manual/core/index-hidden/
    """

    code = "IX006"
    name = "unused-index"
    severity = "info"
    defaults = {"min_span_hours": 1.0, "watch_days": 7}
    checks_shapes = False

    def check(self, analysis: ShapeAnalysis, context: RuleContext) -> None:
        return None  # a finding about the collection's indexes (see check_collection)

    def check_collection(self, ns: str, context: RuleContext) -> Iterable[Verdict]:
        for unused in unused_indexes(ns, context, self.options["min_span_hours"]):
            index = unused.index
            details = [unused.caveat] if unused.caveat else []
            if unused.server_note:
                details.append(f"{unused.server_note}; confirm on every other member (each counts its own uses)")
            else:
                details.append("confirm on every member with $indexStats (accesses.ops since accesses.since), which "
                               "counts every use, fast or slow")
            details.append(hide_advice(index, ns, self.options["watch_days"]))
            yield Verdict(f"index {index.name} {index} was used by no operation of the log: {unused.evidence}.",
                          details=details, existing_index=index, command=index.hide_index_command(ns))


@dataclass(frozen=True)
class Unused:
    """An index no operation of the log used, and what the log that says so covers."""

    index: IndexSpec
    evidence: str  # "1.2k operations on shop.orders (4 shapes with a plan) over 2h 10m"
    caveat: str | None  # the log shows only slow operations
    server_note: str | None = None  # "$indexStats counted no use since …" when the index file carries its accesses


def unused_indexes(ns: str, context: RuleContext, min_span_hours: float,
                   indexes: Iterable[IndexSpec] | None = None) -> list[Unused]:
    """The indexes of ``ns`` (or of ``indexes``) that no plan used, no query hinted and no ``$lookup`` could join
    through, over a log of at least ``min_span_hours``: the judgement IX006 and the index selection share."""
    shapes = [stats for stats in context.shapes_of(ns) if stats.plans]
    span = context.derived("span_ms", span_ms)
    if not shapes or span < min_span_hours * 3_600_000:
        return []
    used = _used_keys(shapes)
    catalog = context.indexes.get(ns, [])
    # an index IX005 says takes over the queries of a used prefix of it is about to be used: not unused
    used |= {longer.key for shorter, longer in redundant_prefixes(catalog, catalog, ns, context) if shorter.key in used}
    hinted = {option[5:] for stats in context.shapes_of(ns) for option in stats.shape.options
              if option.startswith("hint:")}
    joined = _joined_fields(ns, context.derived("lookups", _lookups))
    operations = sum(stats.count for stats in context.shapes_of(ns))
    evidence = (f"{human_count(operations)} operations on {ns} ({len(shapes)} shape{'s' if len(shapes) != 1 else ''} "
                f"with a plan) over {human_ms(span)}")
    caveat = slow_only_caveat(context)
    found = []
    for index in catalog if indexes is None else indexes:
        if (index.inferred or protected(index, ns, context) or not index.is_btree or index.key in used
                or index.name in hinted
                or _hint_text(index) in hinted or index.key[0][0] in joined or "*" in joined):
            continue
        counted = server_uses(index)
        if counted is None:
            found.append(Unused(index, evidence, caveat))
        elif counted[0] == 0:  # the server's count covers the fast operations a slow-query log leaves out
            found.append(Unused(index, evidence, None, f"$indexStats counted no use {counted[1]}"))
        # else: the server counted uses the log does not show (fast queries, another client's): not unused
    return found


def server_uses(index: IndexSpec) -> tuple[int, str] | None:
    """The uses ``$indexStats`` counted on the member it was read from, and since when ("since 2026-11-01 10:00
    UTC"); None when the index file does not carry them."""
    accesses = index.accesses
    ops = as_int(accesses.get("ops")) if accesses else None
    if ops is None:
        return None
    since = as_datetime(accesses.get("since")) if accesses else None
    return ops, (f"since {since.astimezone(timezone.utc):%Y-%m-%d %H:%M} UTC" if since is not None
                 else "since the server started")


def slow_only_caveat(context: RuleContext) -> str | None:
    """What a log of slow operations only cannot show about an index (None when it shows fast ones too)."""
    if not context.shapes or context.derived("fastest_ms", _fastest_ms) < _SLOW_MS:
        return None
    return (f"the log shows only operations slower than {_SLOW_MS:g} ms (slowms): fast queries that use the index "
            "never appear in it")


def _fastest_ms(shapes: list[ShapeStats]) -> float:
    return min(stats.duration.percentile(0) for stats in shapes)


def span_ms(shapes: list[ShapeStats]) -> float:
    firsts = [stats.first_seen for stats in shapes if stats.first_seen is not None]
    lasts = [stats.last_seen for stats in shapes if stats.last_seen is not None]
    return (max(lasts) - min(firsts)).total_seconds() * 1000 if firsts and lasts else 0.0


def _used_keys(shapes: list[ShapeStats]) -> set:
    return {key for stats in shapes for plan in stats.plans for key in parse_plan_summary(plan).indexes}


def _hint_text(index: IndexSpec) -> str:
    """An index hinted by its key pattern, as a shape records the hint (``a:1,b:-1``)."""
    return ",".join(f"{name}:{direction}" for name, direction in index.key)


_Lookups = tuple[dict[tuple[str, str], set[str]], set[str]]


def _joined_fields(ns: str, lookups: _Lookups) -> set[str]:
    """Fields of ``ns`` that a $lookup of the same database joins on (an index starting with one may serve the join,
    whose plan the log does not show); every field (``*``) for a $lookup with a pipeline, or a $graphLookup."""
    database, _, collection = ns.partition(".")
    by_target, any_of_database = lookups
    return by_target.get((database, collection), set()) | ({"*"} if database in any_of_database else set())


def _lookups(shapes: list[ShapeStats]) -> _Lookups:
    """The fields each $lookup joins on, by database and joined collection; and the databases with a $graphLookup
    (its collection is not in the shape: any may be joined)."""
    by_target: dict[tuple[str, str], set[str]] = {}
    any_of_database: set[str] = set()
    for stats in shapes:
        database = stats.shape.ns.partition(".")[0]
        for stage in stats.shape.stages:
            if stage == "$graphLookup":
                any_of_database.add(database)
            match = _LOOKUP.match(stage)
            if match is None:
                continue
            parts = dict(part.split("=", 1) for part in match[1].split(", ") if "=" in part)
            if "from" not in parts:
                continue
            fields = by_target.setdefault((database, parts["from"]), set())
            if "foreignField" in parts:
                fields.add(parts["foreignField"])
            if "pipeline" in match[1].split(", ") or "foreignField" not in parts:
                fields.add("*")
    return by_target, any_of_database
