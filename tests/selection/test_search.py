"""The search for the best set: exact where it can be, greedy with its guarantee beyond, checked against brute
force on small random problems (seeded, so a failure is a reproducible problem)."""

from __future__ import annotations

import itertools
import math
import random

import pytest

from idxadvisor.selection import search
from idxadvisor.selection.search import Problem, saving, solve, value


def random_problem(rng: random.Random, shapes: int, candidates: int) -> Problem:
    today = [rng.uniform(10, 100) for _ in range(shapes)]
    levels = [1.0, 5.0, rng.uniform(0, 10)]  # repeated costs make ties and dominated candidates
    options = [{shape: rng.choice(levels + [rng.uniform(0, today[shape])]) for shape in range(shapes)
                if rng.random() < 0.5} for _ in range(candidates)]
    return Problem(weights=[rng.choice([0, 1, 2, 5]) for _ in range(shapes)], today=today, options=options,
                   write_costs=[rng.choice([0, 0, rng.uniform(0, 80)]) for _ in range(candidates)],
                   fields=[rng.randint(1, 3) for _ in range(candidates)], budget=rng.randint(1, candidates))


def best_value(problem: Problem, budget: int | None = None) -> float:
    """The best value of any set of at most ``budget`` candidates (brute force)."""
    numbers = range(len(problem.options))
    return max(value(problem, list(chosen)) for size in range((budget or problem.budget) + 1)
               for chosen in itertools.combinations(numbers, size))


@pytest.mark.parametrize("seed", range(6))
def test_the_exact_search_finds_the_best_set(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(40):
        problem = random_problem(rng, rng.randint(1, 7), rng.randint(1, 9))
        solution = solve(problem)
        assert solution.method == "exact"
        assert solution.value == pytest.approx(best_value(problem), abs=1e-6)
        assert len(solution.chosen) <= problem.budget


@pytest.mark.parametrize("seed", range(4))
def test_the_greedy_search_keeps_its_guarantee(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """g(S) - c(S) ≥ (1 - 1/e)·g(OPT) - c(OPT) for every set OPT within the budget (Harshaw et al. 2019)."""
    monkeypatch.setattr(search, "EXACT_CANDIDATES", 0)
    rng = random.Random(100 + seed)
    for _ in range(30):
        problem = random_problem(rng, rng.randint(1, 6), rng.randint(2, 8))
        solution = solve(problem)
        assert (solution.method == "greedy" and "at least (1 - 1/e)" in solution.note) or solution.chosen == []
        numbers = range(len(problem.options))
        for size in range(problem.budget + 1):
            for chosen in itertools.combinations(numbers, size):
                bound = (1 - 1 / math.e) * saving(problem, list(chosen)) - sum(problem.write_costs[n] for n in chosen)
                assert solution.value >= bound - 1e-6


def test_more_candidates_than_the_exact_search_takes_go_to_the_greedy_one() -> None:
    # 30 shapes, each with its own candidate, and a candidate serving every shape a little: all undominated
    shapes = 30
    options = [{shape: 1.0} for shape in range(shapes)] + [{shape: 5.0 for shape in range(shapes)}]
    problem = Problem([1.0] * shapes, [10.0] * shapes, options, [2.0] * (shapes + 1), [1] * (shapes + 1), 5)
    solution = solve(problem)
    assert solution.method == "greedy" and "over 31 candidates (more than 20 candidates)" in solution.note
    # the shared candidate saves 5 on all 30 shapes (150), then four own ones save 4 more each
    assert solution.chosen[0] == shapes and len(solution.chosen) == 5
    assert solution.value == pytest.approx(150 + 4 * 4 - 5 * 2)


def test_a_dominated_candidate_is_never_needed() -> None:
    # candidate 1 serves the same shape as 0, at the same cost, for more writes: the search sees one candidate
    problem = Problem([1.0], [100.0], [{0: 1.0}, {0: 1.0}], [0.0, 5.0], [1, 1], 2)
    solution = solve(problem)
    assert solution.chosen == [0] and solution.note == "exact search over 1 candidate"


def test_ties_go_to_fewer_indexes_then_fewer_fields() -> None:
    # two narrow candidates or one wide one serve both shapes equally well and cost no writes
    problem = Problem([1.0, 1.0], [10.0, 10.0], [{0: 1.0}, {1: 1.0}, {0: 1.0, 1: 1.0}], [0.0] * 3, [1, 1, 3], 3)
    assert solve(problem).chosen == [2]


def test_shapes_no_finding_asks_for_do_not_justify_an_index() -> None:
    # candidate 1 would help only shape 1, which carries no weight: it is not chosen
    problem = Problem([1.0, 0.0], [10.0, 10.0], [{0: 1.0}, {1: 1.0}], [0.0, 0.0], [1, 1], 2)
    assert solve(problem).chosen == [0]


def test_a_write_cost_above_the_saving_leaves_the_set_empty() -> None:
    problem = Problem([1.0], [10.0], [{0: 1.0}], [9.5], [1], 1)
    solution = solve(problem)
    assert solution.chosen == [] and solution.value == 0.0


def test_counted_options_are_the_shapes_that_count_served_for_less_than_today() -> None:
    problem = Problem([1.0, 0.0, 2.0, 1.0], [10.0, 10.0, 10.0, 10.0], [{0: 5.0, 1: 1.0, 2: 10.0, 3: 0.0}, {}],
                      [0.0, 0.0], [1, 1], 2)
    assert problem.counted == [[(0, 5.0), (3, 0.0)], []]


def _undominated_by_every_pair(problem: Problem, candidates: list[int]) -> list[int]:
    """The dominance test against every other candidate (what ``_undominated`` narrows down to fewer rivals)."""
    counted = {number: {shape: cost for shape, cost in problem.options[number].items() if problem.weights[shape]}
               for number in candidates}
    kept = []
    for number in candidates:
        mine = counted[number]
        if not any(other != number and problem.write_costs[other] <= problem.write_costs[number]
                   and mine.keys() <= counted[other].keys()
                   and all(counted[other][shape] <= cost for shape, cost in mine.items())
                   and (other < number or not (problem.write_costs[other] == problem.write_costs[number]
                                               and len(counted[other]) == len(mine)
                                               and all(counted[other][shape] == cost for shape, cost in mine.items())))
                   for other in candidates):
            kept.append(number)
    return kept


@pytest.mark.parametrize("seed", range(3))
def test_undominated_candidates_are_those_no_other_dominates(seed: int) -> None:
    rng = random.Random(200 + seed)
    for _ in range(60):
        problem = random_problem(rng, rng.randint(1, 6), rng.randint(1, 12))
        candidates = [number for number, counted in enumerate(problem.counted) if counted]
        assert search._undominated(problem, candidates) == _undominated_by_every_pair(problem, candidates)


@pytest.mark.parametrize("seed", range(3))
def test_the_exact_searchs_running_cheapest_agrees_with_needed_at_every_step(seed: int) -> None:
    rng = random.Random(300 + seed)
    for _ in range(60):
        problem = random_problem(rng, rng.randint(1, 8), rng.randint(1, 8))
        useful = [number for number, counted in enumerate(problem.counted) if counted]
        chosen: list[int] = []
        costs, cheapest = list(problem.today), search._Cheapest({}, {})
        for number in rng.sample(useful, len(useful)):
            cheapest = cheapest.adding(problem, number, costs)
            costs = search._add(problem, number, costs)
            chosen.append(number)
            held = {candidate for candidate, shapes in cheapest.shapes_held.items() if shapes}
            assert held == search._needed(problem, chosen)
            assert cheapest.all_needed() == (len(held) == len(chosen))
