"""The estimator's model of the cost of a set (``selection.costs`` says what it is): imported only with a data sample,
since the what-if estimator (mongomock, bson) costs a tenth of a second to import."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from idxadvisor.indexes.candidates import SharedKeyIndex
from idxadvisor.indexes.model import IndexSpec, KeyPattern
from idxadvisor.indexes.plans import parse_plan_summary
from idxadvisor.indexes.sampling import SampleStatistics
from idxadvisor.models.report import Evidence
from idxadvisor.selection.costs import Costs, log_options, worth
from idxadvisor.selection.demand import Demand
from idxadvisor.shapes.digest import ShapeStats
from idxadvisor.whatif.estimator import WhatIfQuery
from idxadvisor.whatif.evidence import (
    EstimatorEvaluator,
    EvidenceOptions,
    build_evidence,
    calibration,
    collection_factors,
    representative_query,
    scale_explain,
    todays_indexes,
    window_of,
)

#: Explains of (shape, candidate) pairs per collection (the requested shapes come first); beyond, no more are weighed.
MAX_EXPLAINS = 600


@dataclass
class _Shape:
    """What the estimator needs to come back to a shape: its query, today's explain and how to scale it."""

    stats: ShapeStats
    query: WhatIfQuery
    today: list[IndexSpec]
    before: dict[str, Any]
    scaling: tuple[float, str] = (1.0, "")
    factor: float | None = None
    hinted: dict[KeyPattern, dict[str, Any]] = field(default_factory=dict)  # unlimited explains, by index key


class EstimatedCosts:
    """The estimator model for one collection: computes ``Costs``, then explains the chosen set for each shape
    (its multi-planner picks the plan) and gives the evidence."""

    def __init__(self, ns: str, sample: SampleStatistics, existing: list[IndexSpec] | None,
                 evaluator: EstimatorEvaluator, options: EvidenceOptions) -> None:
        self.ns, self.sample, self.existing, self.evaluator, self.options = ns, sample, existing, evaluator, options
        self.shapes: dict[int, _Shape] = {}

    def costs(self, demands: list[Demand], keys: list[KeyPattern], key_index: SharedKeyIndex | None = None) -> Costs:
        """Today's cost of every shape the estimator can replay, and each candidate's that bounds its scan or gives
        its sort; the log's for the others (``log_options``, with ``key_index``)."""
        for number, demand in enumerate(demands):
            self._today(number, demand)
        factors = collection_factors(((self.ns, shape.factor) for shape in self.shapes.values()),
                                     [demand.stats for demand in demands], {self.ns: self.sample})
        costs = Costs([demand.logged_cost for demand in demands], [{} for _ in keys], ["log"] * len(demands))
        for number, shape in self.shapes.items():
            if shape.factor is None:
                shape.scaling = factors.get(self.ns, (1.0, ""))
            costs.today[number] = self.scaled_cost(shape, shape.before)
            costs.models[number] = "estimator"
        for position, key in enumerate(keys):
            pairs = self.sample.parallel_arrays([name for name, _ in key])
            if pairs:
                costs.invalid[position] = (f"{pairs[0][0]} and {pairs[0][1]} hold arrays in one sampled document: an "
                                           "index on both cannot be built (parallel arrays)")
        self._candidates(demands, keys, costs)
        log_options(costs, demands, keys, [number for number in range(len(demands)) if number not in self.shapes],
                    key_index)
        for position in costs.invalid:
            costs.options[position] = {}
        return costs

    def _candidates(self, demands: list[Demand], keys: list[KeyPattern], costs: Costs) -> None:
        """Each candidate's cost for each estimated shape it is relevant to, the requested shapes first, up to
        ``MAX_EXPLAINS`` explains."""
        explains = 0
        for number, shape in sorted(self.shapes.items()):
            for position, key in enumerate(keys):
                if position in costs.invalid or not _relevant(key, demands[number]):
                    continue
                if explains == MAX_EXPLAINS:
                    costs.notes.append(f"the estimator stopped after {MAX_EXPLAINS} explains: the candidates left were "
                                       "not weighed for the shapes left")
                    return
                explains += 1
                after = self.hinted(shape, key)
                if "error" in after and "index" in after:
                    costs.invalid[position] = f"it cannot be built on the sample ({after['error'].get('message')})"
                    continue
                cost = self.scaled_cost(shape, after)
                if cost is None:
                    continue
                if number not in costs.closest or cost < costs.closest[number][0]:
                    costs.closest[number] = (cost, position)
                if worth(cost, costs.today[number], self.options.min_savings_pct):
                    costs.options[position][number] = cost

    def _today(self, number: int, demand: Demand) -> None:
        query = representative_query(demand.stats, self.sample)
        if isinstance(query, str):
            return
        today, hint = todays_indexes(demand.stats, self.existing)
        before = self.evaluator.explain(self.ns, replace(query, limit=None, skip=None), today, hint)
        if "totalKeysExamined" not in before:
            return
        shape = _Shape(demand.stats, query, today, before)
        shape.factor, how = calibration(demand.stats, before, query)
        if shape.factor is not None:
            shape.scaling = (shape.factor, how)
        self.shapes[number] = shape

    def hinted(self, shape: _Shape, key: KeyPattern) -> dict[str, Any]:
        """The shape's query without its limit, hinted to ``key`` (explained once)."""
        if key not in shape.hinted:
            spec = next((index for index in shape.today if index.key == key), None) or IndexSpec(key=key)
            shape.hinted[key] = self.evaluator.explain(self.ns, replace(shape.query, limit=None, skip=None),
                                                       [*shape.today, spec], spec)
        return shape.hinted[key]

    def scaled_cost(self, shape: _Shape, result: dict[str, Any]) -> float | None:
        query = shape.query
        scaled = scale_explain(result, shape.scaling[0], window_of(query), query.limit, query.skip)
        if "totalKeysExamined" not in scaled:
            return None
        return float(scaled["totalKeysExamined"] + scaled["totalDocsExamined"])

    def today_index(self, number: int) -> KeyPattern | None:
        """The index today's estimated plan for shape ``number`` scans (None: a collection scan, or no estimate)."""
        shape = self.shapes.get(number)
        used = parse_plan_summary(shape.before.get("planSummary", "")).indexes if shape is not None else ()
        return used[0] if used else None

    def planned(self, number: int, indexes: list[IndexSpec]) -> tuple[KeyPattern | None, float | None, Evidence | None]:
        """The plan the multi-planner picks for shape ``number`` among ``indexes`` (its query as logged, limit
        included): the index it scans (None: a collection scan), its cost and the evidence against today."""
        shape = self.shapes.get(number)
        if shape is None:
            return None, None, None
        result = self.evaluator.explain(self.ns, shape.query, indexes, None)
        if "planSummary" not in result:
            return None, None, None
        used = parse_plan_summary(result["planSummary"]).indexes
        key = used[0] if used else None
        if key is None:
            after = self.evaluator.explain(self.ns, replace(shape.query, limit=None, skip=None), indexes,
                                           {"$natural": 1})
        else:
            after = self.hinted(shape, key)
        evidence = build_evidence(shape.stats, shape.query, shape.before, after, shape.scaling, self.options,
                                  "estimator", self.evaluator.describe(self.ns, self.sample))
        return key, self.scaled_cost(shape, after), evidence


def _relevant(key: KeyPattern, demand: Demand) -> bool:
    """The planner would consider the index for the shape: its first field bounds the scan or gives the sort."""
    roles = demand.roles
    first = key[0][0]
    leading = {name for name in roles.range if name not in roles.never_leading}
    return first in roles.equality or first in leading or (bool(roles.sort) and first == roles.sort[0][0])
