"""The cost of a set of indexes for a collection's shapes: per shape, keys plus documents examined per execution
with the cheapest index of the set that serves it (or today's plan when none is cheaper).

Two models, and the report says which one gave each shape's numbers:

* **estimator** (a data sample: ``--data``, or ``$sample`` with ``--uri``; ``selection.estimated``, imported only
  then): each shape's latest execution is explained over the sample with today's indexes (held to the plan the log
  shows) and with each candidate that can bound its scan or give its sort, hinted; the numbers are calibrated against
  the log and scaled to the collection exactly as findings' evidence is (``whatif.evidence``). A candidate that
  cannot be built on the sample (two array fields) is no candidate.
* **log** (no sample, or a query the estimator cannot replay): today's cost is what the log shows, and a blocking
  sort adds the documents it held (three times when it spilled to disk); an index that serves the shape
  (``indexes.candidates.serves``: it bounds every predicate and gives the sort) examines a key and a document per
  document returned. Other indexes are not counted: the log cannot tell how much they would read.

With the estimator a candidate counts for a shape only when it cuts keys plus documents examined by
``--min-savings-pct``, as findings' evidence requires; by the log, any saving counts, since without a sample the
rules' own thresholds are the judgement (as they are for findings).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from idxadvisor.indexes.candidates import SharedKeyIndex
from idxadvisor.indexes.model import KeyPattern
from idxadvisor.selection.demand import Demand


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


def log_costs(demands: list[Demand], keys: list[KeyPattern], key_index: SharedKeyIndex | None = None) -> Costs:
    """The log model for every shape (see the module's documentation)."""
    costs = Costs([demand.logged_cost for demand in demands], [{} for _ in keys], ["log"] * len(demands))
    log_options(costs, demands, keys, range(len(demands)), key_index)
    return costs


def log_options(costs: Costs, demands: list[Demand], keys: list[KeyPattern], positions: range | list[int],
                key_index: SharedKeyIndex | None = None) -> None:
    """Fill in, for the shapes at ``positions``, the cost with each key that serves them, by the log. ``key_index``
    (the rules' proposed keys, with the look-ups done for them) is given ``keys``; it may hold other keys too."""
    position_of = {key: number for number, key in enumerate(keys)}
    index = key_index if key_index is not None else SharedKeyIndex()
    index.add(keys)
    for number in positions:
        demand = demands[number]
        served = demand.served_cost
        if not worth(served, costs.today[number], 0.0):
            continue
        for key in index.serving(demand.roles):
            position = position_of.get(key)
            if position is not None:
                costs.options[position][number] = served
