"""Choose the set of new indexes that saves the most work net of what it costs the writes, under a budget.

The value of a set ``S`` of candidates is ``g(S) - c(S)``: ``g`` the work it saves (per shape, its executions times
how much less the cheapest index of the set examines than today's plan), ``c`` the write cost of its indexes. ``g``
is monotone and submodular (a facility-location function: a second index helps a shape only where it beats the
first), ``c`` is a sum.

Candidates another one dominates (it serves every counted shape they serve at no greater cost, for no greater write
cost) are set aside first: the best set never needs them.

* **exact** (at most ``EXACT_CANDIDATES`` candidates left): a depth-first branch and bound over the sets of at most
  ``budget`` candidates. A branch stops where even the ``budget`` largest gains of the candidates left could not beat
  the best set found: submodularity makes gains only shrink as a set grows, so that bound never cuts the optimum.
  Candidates whose gain is not positive are skipped for the same reason. If it would visit more than
  ``EXACT_NODES`` sets it gives up and the greedy search answers.
* **greedy** beyond: the distorted greedy algorithm (Harshaw, Feldman, Ward and Karbasi, "Submodular Maximization
  beyond Non-negativity", ICML 2019): in step ``i`` of ``k = budget``, add the candidate with the largest
  ``(1 - 1/k)^(k - i - 1) · gain - write cost`` if positive. It guarantees
  ``g(S) - c(S) ≥ (1 - 1/e)·g(OPT) - c(OPT)`` for the best set ``OPT`` of at most ``k`` candidates: at least 63%
  of the best set's saving, less no more than its write cost. Gains are evaluated lazily (a stale gain bounds the
  fresh one).

Only the shapes whose findings ask for an index count (the others' savings are reported, not sought): so every index
of the set is the cheapest for at least one of them, and the selection never advises an index no finding asked for.
An index that is no counted shape's cheapest in the final set is taken out: it would only cost writes. Ties go to
fewer indexes, then fewer fields, then the candidate listed first.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from functools import cached_property

EXACT_CANDIDATES = 20
EXACT_NODES = 100_000
DOMINANCE_CANDIDATES = 2_000  # beyond, comparing every pair of candidates costs more than the search saves
_EPSILON = 1e-9


@dataclass
class Problem:
    weights: list[float]  # per shape: executions (per hour) that count: 0 for a shape no finding asks an index for
    today: list[float]  # per shape: cost per execution today
    options: list[dict[int, float]]  # per candidate: shape -> cost per execution with it
    write_costs: list[float]  # per candidate: what it costs the writes, in the unit of the savings
    fields: list[int]  # per candidate: its number of fields (ties)
    budget: int

    @cached_property
    def counted(self) -> list[list[tuple[int, float]]]:
        """Per candidate, the shapes that count which it serves for less than today, with that cost (in ``options``
        order): all the search looks at, worked out once rather than at every step."""
        weights, today = self.weights, self.today
        return [[(shape, cost) for shape, cost in options.items() if weights[shape] and cost < today[shape]]
                for options in self.options]


@dataclass
class Solution:
    chosen: list[int]
    value: float
    method: str  # "exact" or "greedy"
    note: str


def saving(problem: Problem, chosen: list[int]) -> float:
    """``g``: the work the set saves."""
    best = list(problem.today)
    for candidate in chosen:
        for shape, cost in problem.options[candidate].items():
            if cost < best[shape]:
                best[shape] = cost
    return sum(weight * (today - cost) for weight, today, cost in zip(problem.weights, problem.today, best))


def gain_of(problem: Problem, candidate: int) -> float:
    """The work one candidate saves on its own."""
    return _gain(problem, candidate, problem.today)


def value(problem: Problem, chosen: list[int]) -> float:
    return saving(problem, chosen) - sum(problem.write_costs[candidate] for candidate in chosen)


def solve(problem: Problem) -> Solution:
    useful = _undominated(problem, [number for number, counted in enumerate(problem.counted) if counted])
    budget = min(problem.budget, len(useful))
    if budget <= 0:
        return Solution([], 0.0, "exact", "no candidate saves work for a shape a finding asks an index for"
                        if not useful else "the budget allows no new index")
    if len(useful) <= EXACT_CANDIDATES:
        found = _exact(problem, useful, budget)
        if found is not None:
            chosen = _pruned(problem, found)
            return Solution(chosen, value(problem, chosen), "exact",
                            f"exact search over {len(useful)} candidate{'s' if len(useful) != 1 else ''}")
    chosen = _pruned(problem, _distorted_greedy(problem, useful, budget))
    why = (f"more than {EXACT_CANDIDATES} candidates" if len(useful) > EXACT_CANDIDATES
           else f"the exact search would visit more than {EXACT_NODES:,} sets")
    return Solution(chosen, value(problem, chosen), "greedy",
                    f"greedy search over {len(useful)} candidates ({why}): its net saving is at least (1 - 1/e) = 63% "
                    "of the best set's saving less that set's write cost (distorted greedy)")


def _undominated(problem: Problem, candidates: list[int]) -> list[int]:
    """The candidates no other one dominates (serving every counted shape it serves at no greater cost, for no
    greater write cost; of equals, the one listed first): a set with a dominated candidate does no better with it
    than with the one that dominates it, so the search need not look at it."""
    if len(candidates) > DOMINANCE_CANDIDATES:
        return candidates
    counted = {number: {shape: cost for shape, cost in problem.options[number].items() if problem.weights[shape]}
               for number in candidates}
    serving: dict[int, list[int]] = {}  # per counted shape, the candidates serving it
    for number in candidates:
        for shape in counted[number]:
            serving.setdefault(shape, []).append(number)
    kept = []
    for number in candidates:
        mine = counted[number]
        # only a candidate serving every shape of this one can dominate it: look among those serving its rarest
        rivals = min((serving[shape] for shape in mine), key=len) if mine else candidates
        dominated = False
        for other in rivals:
            if other == number or problem.write_costs[other] > problem.write_costs[number]:
                continue
            theirs = counted[other]
            if not mine.keys() <= theirs.keys() or not all(theirs[shape] <= cost for shape, cost in mine.items()):
                continue
            equal = (problem.write_costs[other] == problem.write_costs[number] and len(theirs) == len(mine)
                     and all(theirs[shape] == cost for shape, cost in mine.items()))
            if not equal or other < number:
                dominated = True
                break
        if not dominated:
            kept.append(number)
    return kept


def _gain(problem: Problem, candidate: int, best: list[float]) -> float:
    """What adding ``candidate`` saves, given each shape's cheapest cost so far (only the shapes that count, and that
    it serves for less than today, can add to it)."""
    weights = problem.weights
    return sum(weights[shape] * (best[shape] - cost) for shape, cost in problem.counted[candidate]
               if cost < best[shape])


def _add(problem: Problem, candidate: int, best: list[float]) -> list[float]:
    """Each counted shape's cheapest cost once ``candidate`` is added (``_gain`` reads no other)."""
    best = list(best)
    for shape, cost in problem.counted[candidate]:
        if cost < best[shape]:
            best[shape] = cost
    return best


class _TooMany(Exception):
    pass


def _rank(problem: Problem, chosen: list[int], worth: float) -> tuple:
    """Higher is better: value, then fewer indexes, then fewer fields, then earlier candidates."""
    return (round(worth, 6), -len(chosen), -sum(problem.fields[number] for number in chosen),
            tuple(-number for number in sorted(chosen)))


def _exact(problem: Problem, useful: list[int], budget: int) -> list[int] | None:
    order = sorted(useful, key=lambda number: -(_gain(problem, number, problem.today) - problem.write_costs[number]))
    best_set: list[int] = []
    best_rank = _rank(problem, [], 0.0)
    best_value = 0.0
    visited = 0

    def visit(start: int, chosen: list[int], worth: float, costs: list[float], cheapest: _Cheapest) -> None:
        nonlocal best_set, best_rank, best_value, visited
        visited += 1
        if visited > EXACT_NODES:
            raise _TooMany
        if not cheapest.all_needed():
            return  # an index no counted shape needs stays so in every larger set
        rank = _rank(problem, chosen, worth)
        if rank > best_rank:
            best_set, best_rank, best_value = list(chosen), rank, worth
        room = budget - len(chosen)
        if room == 0:
            return
        gains = [(_gain(problem, number, costs) - problem.write_costs[number], position)
                 for position, number in enumerate(order[start:], start)]
        positive = sorted((gain for gain, _ in gains if gain > _EPSILON), reverse=True)[:room]
        if worth + sum(positive) < best_value - _EPSILON:
            return
        for gain, position in gains:
            if gain > _EPSILON:
                number = order[position]
                chosen.append(number)
                visit(position + 1, chosen, worth + gain, _add(problem, number, costs),
                      cheapest.adding(problem, number, costs))
                chosen.pop()

    try:
        visit(0, [], 0.0, list(problem.today), _Cheapest({}, {}))
    except _TooMany:
        return None
    return best_set


def _distorted_greedy(problem: Problem, useful: list[int], budget: int) -> list[int]:
    costs = list(problem.today)
    chosen: list[int] = []
    # a stale gain less the write cost bounds every later step's distorted score (gains only shrink, and the
    # distortion is at most 1): the heap holds those bounds
    heap = [(-(_gain(problem, number, costs) - problem.write_costs[number]), number) for number in useful]
    heapq.heapify(heap)
    for step in range(budget):
        distortion = math.pow(1 - 1 / budget, budget - step - 1)
        popped: list[tuple[float, int]] = []
        best: tuple[float, int] | None = None  # (exact distorted score, candidate) among those popped
        while heap and (best is None or -heap[0][0] > best[0]):
            _, number = heapq.heappop(heap)
            gain = _gain(problem, number, costs)
            popped.append((-(gain - problem.write_costs[number]), number))
            score = distortion * gain - problem.write_costs[number]
            if best is None or score > best[0] + _EPSILON:
                best = (score, number)
        picked = best[1] if best is not None and best[0] > _EPSILON else None
        for item in popped:
            if item[1] != picked:
                heapq.heappush(heap, item)
        if picked is not None:
            chosen.append(picked)
            costs = _add(problem, picked, costs)
    return chosen


def _needed(problem: Problem, chosen: list[int]) -> set[int]:
    """The chosen candidates that are the cheapest of the set for at least one counted shape."""
    counted = problem.counted
    cheapest: dict[int, tuple[float, int, int]] = {}  # shape -> (cost, position, candidate): ties go to the earlier
    for position, number in enumerate(chosen):
        for shape, cost in counted[number]:
            offer = (cost, position, number)
            held = cheapest.get(shape)
            if held is None or offer < held:
                cheapest[shape] = offer
    return {number for _, _, number in cheapest.values()}


@dataclass
class _Cheapest:
    """``_needed`` kept up to date as the exact search adds candidates one at a time, rather than worked out again
    at every node: per counted shape, the chosen candidate that is its cheapest (the earliest of equals); per chosen
    candidate, for how many shapes it is."""

    holder: dict[int, int]
    shapes_held: dict[int, int]

    def adding(self, problem: Problem, candidate: int, costs: list[float]) -> _Cheapest:
        """With ``candidate`` chosen after the others, ``costs`` being each shape's cheapest cost before it (today's
        for a shape no chosen candidate serves for less)."""
        holder, shapes_held = dict(self.holder), dict(self.shapes_held)
        shapes_held[candidate] = 0
        for shape, cost in problem.counted[candidate]:
            if cost < costs[shape]:  # the latest chosen takes a shape only by costing strictly less
                before = holder.get(shape)
                if before is not None:
                    shapes_held[before] -= 1
                holder[shape] = candidate
                shapes_held[candidate] += 1
        return _Cheapest(holder, shapes_held)

    def all_needed(self) -> bool:
        return all(self.shapes_held.values())


def _pruned(problem: Problem, chosen: list[int]) -> list[int]:
    """Take out, one at a time, the indexes that are no counted shape's cheapest."""
    chosen = list(chosen)
    while True:
        needed = _needed(problem, chosen)
        idle = [number for number in chosen if number not in needed]
        if not idle:
            return chosen
        chosen.remove(idle[-1])
