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

In ``check`` the set starts from the proposed indexes as they will exist (``apply_change``): a shape an index the
change creates serves more cheaply than today's plan starts from that cost, and a candidate must beat it. Today's cost
stays what the shape's logged durations are weighed against (seconds per key or document examined).

With the estimator a candidate counts for a shape only when it cuts keys plus documents examined by
``--min-savings-pct``, as findings' evidence requires; by the log, any saving counts, since without a sample the
rules' own thresholds are the judgement (as they are for findings).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from idxadvisor.indexes.candidates import SharedKeyIndex, serves
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
    # per shape an index a change creates serves more cheaply than today's plan (``check``): that index and its cost
    changed: dict[int, tuple[KeyPattern, float]] = field(default_factory=dict)

    @property
    def start(self) -> list[float | None]:
        """Per shape, what the set starts from: today's cost, or the cost with an index the change creates."""
        return [self.changed[number][1] if number in self.changed else today
                for number, today in enumerate(self.today)]


def worth(cost: float, today: float | None, min_savings_pct: float) -> bool:
    """A cost below today's, by at least the minimum saving."""
    return today is not None and today > 0 and cost < today and cost <= today * (1 - min_savings_pct / 100)


#: Per shape (by position), the plan the planner picks among the indexes as the change leaves them: the index it scans
#: (None: a collection scan) and its cost (None: not estimated).
PlannedWith = Callable[[int], tuple[KeyPattern | None, float | None]]


def apply_change(costs: Costs, demands: list[Demand], created: list[KeyPattern], planned: PlannedWith | None,
                 min_savings_pct: float) -> None:
    """Start each shape from the indexes as the change will leave them (``check``): a shape that an index the change
    creates serves more cheaply than today's plan starts from that cost (by the estimator, the plan its
    multi-planner picks among the proposed indexes; by the log, an index that serves the shape), and a candidate
    counts for it only when it beats that cost as it must beat today's."""
    for number, demand in enumerate(demands):
        today = costs.today[number]
        if costs.models[number] == "estimator" and planned is not None:
            key, cost = planned(number)
        else:
            key = next((key for key in created if serves(key, demand.roles)), None)
            cost = demand.served_cost if key is not None else None
        if key in created and cost is not None and worth(cost, today, 0.0):
            costs.changed[number] = (key, cost)  # type: ignore[assignment]
    for options in costs.options:
        for number in [number for number in options if number in costs.changed]:
            pct = min_savings_pct if costs.models[number] == "estimator" else 0.0
            if not worth(options[number], costs.changed[number][1], pct):
                del options[number]


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
