"""The shapes of a collection as the index selection weighs them: what each examines today, how often it runs, and
whether a finding asks for an index for it."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property

from idxadvisor.indexes.candidates import Roles
from idxadvisor.indexes.model import KeyPattern
from idxadvisor.indexes.plans import parse_plan_summary
from idxadvisor.rules.base import QUERY_OPS
from idxadvisor.rules.engine import IndexRequest
from idxadvisor.shapes.digest import ShapeStats


@dataclass
class Demand:
    """One query shape of the collection."""

    stats: ShapeStats
    roles: Roles
    request: IndexRequest | None  # the finding that asks for an index for it, if any

    @property
    def fingerprint(self) -> str:
        return self.stats.shape.fingerprint

    @property
    def executions(self) -> int:
        return self.stats.executions

    @property
    def logged_cost(self) -> float | None:
        """Keys plus documents examined per execution as the log shows them, plus the documents a blocking sort held
        (three times when it spilled to disk: written and read back); None when the log does not say."""
        stats = self.stats
        if not (stats.keys_measured or stats.docs_measured):
            return None
        examined = (stats.keys_examined + stats.docs_examined) / self.executions
        sorted_share = (stats.blocking_sorts + 2 * stats.used_disk) / max(stats.count, 1)
        return examined + sorted_share * max(stats.docs_examined, stats.keys_examined) / self.executions

    @property
    def served_cost(self) -> float:
        """What an index that serves the shape examines per execution, by the log alone: a key and a document for
        each document it returns (a count or an aggregation that returns less than it reads makes this a floor, so
        the saving an upper bound)."""
        return 2 * self.stats.nreturned / self.executions

    @cached_property
    def plan_index(self) -> KeyPattern | None:
        """The index today's plan (the one most executions used) scans, if any."""
        plan = self.stats.main_plan
        used = parse_plan_summary(plan).indexes if plan else ()
        return used[0] if used else None


def demands_of(shapes: Iterable[ShapeStats], requests: list[IndexRequest],
               roles_for: Callable[[ShapeStats], Roles]) -> list[Demand]:
    """The collection's query shapes an index could serve (the requested ones first, in report order), each with
    the finding that asks for an index for it; ``roles_for`` gives a shape's roles (``RuleContext.roles``, worked out
    once for the rules and the selection)."""
    asked = {request.analysis.stats.shape.fingerprint: request for request in requests}
    demands = [Demand(request.analysis.stats, request.analysis.roles, request) for request in requests]
    for stats in shapes:
        shape = stats.shape
        if shape.fingerprint in asked or not shape.known or shape.op not in QUERY_OPS:
            continue
        roles = roles_for(stats)
        if roles.leading_fields and "_id" not in roles.equality and not roles.has_or:
            demands.append(Demand(stats, roles, None))
    return demands
