"""The cost of a set of indexes for a collection's shapes: per shape, keys plus documents examined per execution
with the cheapest index of the set that serves it (or today's plan when none is cheaper).

Two models, and the report says which one gave each shape's numbers:

* **estimator** (a data sample: ``--data``, or ``$sample`` with ``--uri``): each shape's latest execution is
  explained over the sample with today's indexes (held to the plan the log shows) and with each candidate that can
  bound its scan or give its sort, hinted; the numbers are calibrated against the log and scaled to the collection
  exactly as findings' evidence is (``whatif.evidence``). A candidate that cannot be built on the sample (two array
  fields) is no candidate.
* **log** (no sample, or a query the estimator cannot replay): today's cost is what the log shows, and a blocking
  sort adds the documents it held (three times when it spilled to disk); an index that serves the shape
  (``indexes.candidates.serves``: it bounds every predicate and gives the sort) examines a key and a document per
  document returned. Other indexes are not counted: the log cannot tell how much they would read.

With the estimator a candidate counts for a shape only when it cuts keys plus documents examined by
``--min-savings-pct``, as findings' evidence requires; by the log, any saving counts, since without a sample the
rules' own thresholds are the judgement (as they are for findings).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from idxadvisor.indexes.candidates import KeyIndex
from idxadvisor.indexes.model import IndexSpec, KeyPattern
from idxadvisor.indexes.plans import parse_plan_summary
from idxadvisor.indexes.sampling import SampleStatistics
from idxadvisor.models.report import Evidence
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

#: Explains of (shape, candidate) pairs per collection; beyond it, the pairs left are judged by the log model.
MAX_EXPLAINS = 600


@dataclass
class Costs:
    """Per shape (``Demand``, by position): today's keys plus documents examined per execution; per candidate (by
    position): its cost for each shape it serves well enough."""

    today: list[float | None]
    options: list[dict[int, float]]
    models: list[str]  # per shape: "estimator" or "log"
    invalid: dict[int, str] = field(default_factory=dict)  # candidates that cannot be built: why
    closest: dict[int, tuple[float, int]] = field(default_factory=dict)  # per estimated shape: its cheapest candidate
    notes: list[str] = field(default_factory=list)


def worth(cost: float, today: float | None, min_savings_pct: float) -> bool:
    """A cost below today's, by at least the minimum saving."""
    return today is not None and today > 0 and cost < today and cost <= today * (1 - min_savings_pct / 100)


def log_costs(demands: list[Demand], keys: list[KeyPattern]) -> Costs:
    """The log model for every shape (see the module's documentation)."""
    costs = Costs([demand.logged_cost for demand in demands], [{} for _ in keys], ["log"] * len(demands))
    _log_options(costs, demands, keys, range(len(demands)))
    return costs


def _log_options(costs: Costs, demands: list[Demand], keys: list[KeyPattern], positions: range | list[int]) -> None:
    position_of = {key: number for number, key in enumerate(keys)}
    index = KeyIndex(keys)
    for number in positions:
        demand = demands[number]
        served = demand.served_cost
        if not worth(served, costs.today[number], 0.0):
            continue
        for key in index.serving(demand.roles):
            costs.options[position_of[key]][number] = served


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

    def costs(self, demands: list[Demand], keys: list[KeyPattern]) -> Costs:
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
        parallel = {number: self.sample.parallel_arrays([name for name, _ in key]) for number, key in enumerate(keys)}
        costs.invalid = {number: f"{pairs[0][0]} and {pairs[0][1]} hold arrays in one sampled document: an index on "
                                 "both cannot be built (parallel arrays)"
                         for number, pairs in parallel.items() if pairs}
        explains = 0
        for number, demand in enumerate(demands):
            shape = self.shapes.get(number)
            if shape is None:
                continue
            for position, key in enumerate(keys):
                if position in costs.invalid or not _relevant(key, demand):
                    continue
                if explains >= MAX_EXPLAINS:
                    break
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
        if explains >= MAX_EXPLAINS:
            costs.notes.append(f"the estimator stopped after {MAX_EXPLAINS} explains; the other shapes and "
                               "candidates are judged by the log")
        unestimated = [number for number in range(len(demands)) if number not in self.shapes]
        if unestimated:
            _log_options(costs, demands, keys, unestimated)
        for position in costs.invalid:
            costs.options[position] = {}
        return costs

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
