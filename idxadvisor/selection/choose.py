"""The index selection for one collection, from its findings to its set: candidates, costs, write costs, the search,
what to let go, the check of the chosen set with the multi-planner, and each finding's index or the reason it has
none."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from idxadvisor.config import Settings
from idxadvisor.indexes.candidates import SharedKeyIndex, candidate_key, serves
from idxadvisor.indexes.fields import CollectionFields, collection_fields
from idxadvisor.indexes.model import IndexSpec, KeyPattern, default_index_name, render_key_pattern
from idxadvisor.indexes.sampling import SampleStatistics
from idxadvisor.models.report import Evidence, Finding, IndexSet, LeftOut, SetIndex, SetShape, SetTotals
from idxadvisor.rules.base import RuleContext, ShapeAnalysis
from idxadvisor.rules.engine import IndexChoice, IndexRequest, equality_orders
from idxadvisor.rules.ix005_redundant_index import protected
from idxadvisor.rules.ix006_unused_index import span_ms
from idxadvisor.selection.candidates import MAX_CANDIDATES, Candidate, canonical, generate
from idxadvisor.selection.costs import Costs, apply_change, log_costs
from idxadvisor.selection.demand import Demand, demands_of
from idxadvisor.selection.drops import Letting, lettings
from idxadvisor.selection.search import Problem, Solution, gain_of, solve
from idxadvisor.selection.value import (
    LeftOutKey,
    ValueModel,
    low_cardinality,
    prefix_options,
    reshape,
    selective_options,
    value_model,
)
from idxadvisor.selection.writes import WriteLoad, key_writes, write_load
from idxadvisor.units import human_count, human_seconds

if TYPE_CHECKING:
    from idxadvisor.selection.estimated import EstimatedCosts

#: The most indexes a collection can have (the server refuses a 65th).
SERVER_INDEX_LIMIT = 64
#: How much worse than today the multi-planner's plan for a shape may be before an index let go is kept for it.
WORSE_TOLERANCE = 1.1
WRITE_OPS = frozenset({"insert", "update", "delete", "findAndModify"})

EstimatorFactory = Callable[[list[IndexSpec] | None], "EstimatedCosts"]


@dataclass
class _Row:
    """A shape under the set: keys plus documents examined per execution today and with the set."""

    demand: Demand
    before: float | None
    after: float | None
    index: KeyPattern | None  # the index serving it in the set (None: a collection scan)
    model: str
    evidence: Evidence | None = None
    note: str | None = None


@dataclass
class CollectionPlan:
    """Everything the report needs about one collection's set (built into an ``IndexSet`` once evidence has run)."""

    ns: str
    model: str
    solution: Solution
    candidates: int
    budget: int
    new: list[Candidate]
    letting: list[Letting]
    kept: list[tuple[IndexSpec, str]]
    rows: list[_Row]
    load: WriteLoad
    writes: dict[KeyPattern, float]  # index keys written per hour (or per log), by key
    hours: float | None
    factor: float
    per_finding: tuple[int, float, float]  # per-finding advice: indexes, work saved, index keys written
    names: dict[KeyPattern, str]  # the existing indexes' names, by key
    notes: list[str] = field(default_factory=list)
    value: ValueModel | None = None
    floor: float = 0.0  # --min-saving, when the shapes' durations give seconds
    left_out: list[LeftOutKey] = field(default_factory=list)
    why: dict[KeyPattern, str] = field(default_factory=dict)  # a key a key rule changed: what changed it


class WorkloadSelection:
    """The ``IndexChooser`` of ``--index-selection workload``: one set per collection whose findings ask for an
    index."""

    def __init__(self, settings: Settings, samples: Mapping[str, SampleStatistics]) -> None:
        self.settings = settings
        self.samples = samples
        self.plans: dict[str, CollectionPlan] = {}
        self._evaluator: Any = None  # the estimators over the samples, built on first use

    def choose(self, ns: str, requests: list[IndexRequest], context: RuleContext,
               key_index: SharedKeyIndex | None = None) -> list[IndexChoice]:
        plan, choices = select(ns, requests, context, self._estimator(ns), key_index)
        self.plans[ns] = plan
        return choices

    def _estimator(self, ns: str) -> EstimatorFactory | None:
        sample = self.samples.get(ns)
        if sample is None or not len(sample):
            return None
        from idxadvisor.selection.estimated import EstimatedCosts  # the estimator: only with a sample
        from idxadvisor.whatif.command import parse_server_version
        from idxadvisor.whatif.evidence import EstimatorEvaluator, EvidenceOptions

        version = parse_server_version(self.settings.server_version)
        if self._evaluator is None:
            self._evaluator = EstimatorEvaluator(self.samples, version)
        evaluator = self._evaluator
        options = EvidenceOptions(self.settings.min_savings_pct, version, self.settings.show_values)
        return lambda existing: EstimatedCosts(ns, sample, existing, evaluator, options)

    def index_sets(self, findings: list[Finding]) -> list[IndexSet]:
        """The sets, each without the new indexes no finding proposes any more (the evidence or a replay dropped
        their findings), the one saving the most server time first (then the most work)."""
        proposed = {(finding.ns, tuple(map(tuple, finding.index.key))) for finding in findings
                    if finding.index is not None and not finding.index.name}
        sets = [build_set(plan, {key for ns, key in proposed if ns == plan.ns}) for plan in self.plans.values()]
        return sorted(sets, key=lambda item: (-item.totals.seconds_saved, -item.totals.work_saved, item.ns))


def select(ns: str, requests: list[IndexRequest], context: RuleContext, estimator: EstimatorFactory | None = None,
           key_index: SharedKeyIndex | None = None) -> tuple[CollectionPlan, list[IndexChoice]]:
    """The set for ``ns`` and, per request, the index of the set that serves its shape or why none does
    (``key_index``: the keys the rules looked up for the requests, see ``SharedKeyIndex``)."""
    settings = context.settings
    known = context.indexes.get(ns)
    shapes = context.shapes_of(ns)
    demands = demands_of(shapes, requests, context.roles)
    existing = list(known) if known is not None else _logged_indexes(demands)
    orders = context.derived("equality_orders", lambda every: equality_orders(every, context))
    sample = context.samples.get(ns)
    fields = collection_fields(shapes, context.roles, sample)
    order = orders.get(ns, _by_name)
    reordered = _few_values_last(demands, fields, order)
    reshaped = reshape([*generate(demands, existing, order), *reordered], fields, settings.server_version)
    _say_few_values_last(reordered, requests, fields, reshaped.why)
    candidates = reshaped.candidates
    keys = [candidate.key for candidate in candidates]
    model = estimator(known) if estimator is not None else None
    costs = model.costs(demands, keys, key_index) if model is not None else log_costs(demands, keys, key_index)
    selective_options(costs, demands, keys, fields)
    partly = prefix_options(costs, demands, keys, fields)
    taken: dict[int, str] = {}  # keys led by a field of few values that lost some shapes to that rule
    left_out = [*reshaped.left_out, *low_cardinality(costs, demands, keys, fields, taken)]
    created = [index.key for index in context.change.created(ns) if index.is_btree and not index.hidden] \
        if context.change is not None else []
    if created:  # check: the set starts from the proposed indexes as they will exist, the change's new ones included
        final = _plannable(existing, [], [])
        apply_change(costs, demands, created, (lambda number: model.planned(number, final)[:2]) if model else None,
                     settings.min_savings_pct)
    span = context.derived("span_ms", span_ms) / 3_600_000
    hours = span if span * 60 >= 1 else None  # a log of less than a minute gives no rate: totals are per log
    value = value_model(demands, costs.today, hours or 1.0)
    load = write_load([stats for stats in shapes if stats.shape.op in WRITE_OPS], hours, sample, known)
    writes = {key: key_writes(key, load, sample) for key in keys}
    per_finding_keys = list(dict.fromkeys(request.shared for request in requests))
    # per-finding advice leads with a field of few values where the set would not: one more index for each such key
    limits = _limits(settings, existing, len(per_finding_keys) + len(reordered))
    budget = int(min(limits.values()))
    floor = settings.min_saving if value.timed and hours is not None else 0.0  # a floor per hour needs a rate
    options = costs.options
    if value.timed:
        # the server time of every shape run --min-count times counts (one run once or twice is no workload to index
        # for), and a candidate must serve a shape a finding asks an index for
        weights = [value.weight(number, costs.today[number], demand.request is not None or _counts(demand, settings))
                   for number, demand in enumerate(demands)]
        requested = {number for number, demand in enumerate(demands) if demand.request is not None}
        options = [served if requested.intersection(served) else {} for served in costs.options]
        write_costs = [settings.write_cost_factor * writes[key] * (value.per_work or 0.0) + floor for key in keys]
    else:
        weights = [demand.executions / (hours or 1.0) if demand.request is not None else 0.0 for demand in demands]
        write_costs = [settings.write_cost_factor * writes[key] for key in keys]
    problem = Problem(weights, [cost if cost is not None else 0.0 for cost in costs.start], options, write_costs,
                      [len(key) for key in keys], budget)
    solution, problem, excluded = _search(problem, keys, floor)
    left_out += [LeftOutKey(keys[number], reason) for number, reason in excluded.items()]
    attributed = _attributed(problem, solution.chosen)
    chosen = [candidates[number] for number in sorted(solution.chosen, key=lambda number: -attributed[number])]
    assignment = _assign(costs, solution.chosen, len(demands))
    notes = list(costs.notes)
    if not value.timed:
        notes.append("the log gives no duration for these shapes: the set is weighed by keys and documents examined, "
                     "and --min-saving does not apply")
    elif hours is None:
        notes.append("the log spans less than a minute: its server time is per log, not per hour, and --min-saving "
                     "does not apply")
    if len(candidates) >= MAX_CANDIDATES:
        notes.append(f"candidates were capped at {MAX_CANDIDATES:,}: what the findings ask for first, then merges")
    letting: list[Letting] = []
    if known is None:
        notes.append("without --indexes (or --uri) the collection's indexes are not known: the set keeps every index "
                     "the log's plans use, and says nothing about what to drop")
    else:
        served_by_new = {demands[shape].fingerprint: keys[number] for shape, number in assignment.items()}
        letting = lettings(ns, existing, [IndexSpec(key=candidate.key) for candidate in chosen], served_by_new, context)
    rows = _rows(demands, costs, assignment, keys, letting)
    if model is not None:
        letting = _planned(model, rows, existing, letting, [candidate.key for candidate in chosen])
    chosen_keys = {candidate.key for candidate in chosen}
    left_out += _requested_left_out(per_finding_keys, keys, problem, chosen_keys, value.timed, floor, settings)
    left_out = _with_taken(left_out, {keys[number]: reason for number, reason in taken.items()
                                      if keys[number] not in chosen_keys})
    plan = CollectionPlan(
        ns=ns, model=_model_name(costs), solution=solution, candidates=len(candidates), budget=budget, new=chosen,
        letting=letting, kept=_kept(existing, letting, rows, ns, context) if known is not None else [], rows=rows,
        load=load, writes={**writes, **{item.index.key: key_writes(item.index.key, load, sample) for item in letting}},
        hours=hours, factor=settings.write_cost_factor,
        per_finding=_per_finding(per_finding_keys, demands, costs, keys, writes, model, existing, hours or 1.0),
        names={index.key: index.name for index in existing}, notes=notes, value=value, floor=floor,
        left_out=_unique_left_out(left_out), why=reshaped.why)
    reasons = _Reasons(costs, problem, candidates, chosen, "; ".join(text for text, limit in limits.items()
                                                                      if limit == budget), settings, ns, value.timed,
                       floor, excluded, _shape_reasons(demands, left_out))
    position = {id(demand.request): number for number, demand in enumerate(demands) if demand.request is not None}
    usable = {canonical(index.key): index for index in existing if index.is_btree and not index.sparse
              and ShapeAnalysis.plannable(index, existing)}
    shares = Counter(assignment.values())
    savings = {key: _seconds_saved(value, served) for key, served in _numbered_by_index(rows).items()} \
        if value.timed else {}
    return plan, [_choice(request, position[id(request)], assignment, shares, keys, reasons, ns, usable, savings,
                          reshaped.why, partly) for request in requests]


#: Rounds of the search at most: each merges a clashing order or drops an index under the floor, then searches again.
_SEARCH_ROUNDS = 12


def _search(problem: Problem, keys: list[KeyPattern], floor: float) -> tuple[Solution, Problem, dict[int, str]]:
    """The best set with one order per set of fields, each index clearing the floor on the shapes it serves: when
    the set orders the same fields twice, the search runs again without each of the two in turn and keeps the better
    set; an index under the floor is set aside and the search runs again (``excluded``: the candidates set aside, and
    why)."""
    excluded: dict[int, str] = {}
    current = problem
    solution = solve(current)
    for _ in range(_SEARCH_ROUNDS):
        pairs = _clashing(solution.chosen, keys)
        if pairs:
            trials = []
            for out, kept in (pairs[0], pairs[0][::-1]):
                names = ", ".join(sorted(name for name, _ in keys[out]))
                trial = {**excluded, out: f"merged into {render_key_pattern(keys[kept])}: one order for the fields "
                                          f"{names}"}
                trial_problem = _without(problem, trial)
                trials.append((solve(trial_problem), trial_problem, trial))
            solution, current, excluded = max(trials, key=lambda item: item[0].value)
            continue
        attributed = _attributed(current, solution.chosen)
        weak = [number for number in solution.chosen if attributed[number] < floor]
        if not weak:
            break
        for number in weak:
            excluded[number] = (f"saves {human_seconds(attributed[number])} of server time per hour on the shapes "
                                f"it would serve, under --min-saving {floor:g}")
        current = _without(problem, excluded)
        solution = solve(current)
    return solution, current, excluded


def _without(problem: Problem, excluded: dict[int, str]) -> Problem:
    return Problem(problem.weights, problem.today,
                   [{} if number in excluded else options for number, options in enumerate(problem.options)],
                   problem.write_costs, problem.fields, problem.budget)


def _clashing(chosen: list[int], keys: list[KeyPattern]) -> list[tuple[int, int]]:
    seen: dict[frozenset[str], int] = {}
    pairs = []
    for number in chosen:
        names = frozenset(name for name, _ in keys[number])
        if names in seen:
            pairs.append((seen[names], number))
        else:
            seen[names] = number
    return pairs


def _attributed(problem: Problem, chosen: list[int]) -> dict[int, float]:
    """Per chosen candidate, what it saves on the counted shapes it is the cheapest of the set for (the earliest
    chosen of equals), in the problem's unit."""
    best: dict[int, tuple[float, int]] = {}
    for number in chosen:
        for shape, cost in problem.counted[number]:
            if shape not in best or cost < best[shape][0]:
                best[shape] = (cost, number)
    attributed = dict.fromkeys(chosen, 0.0)
    for shape, (cost, number) in best.items():
        attributed[number] += problem.weights[shape] * (problem.today[shape] - cost)
    return attributed


def _requested_left_out(asked: list[KeyPattern], keys: list[KeyPattern], problem: Problem, chosen: set[KeyPattern],
                        timed: bool, floor: float, settings: Settings) -> list[LeftOutKey]:
    """The keys the findings asked for that the set does not hold, and what they would save on their own."""
    position_of = {key: number for number, key in enumerate(keys)}
    left = []
    for key in asked:
        number = position_of.get(key)
        if key in chosen or number is None:
            continue
        gain = gain_of(problem, number)
        if timed:
            said = f"saves {human_seconds(gain)} of server time per hour on its own"
            if gain < problem.write_costs[number]:
                said += (f": under --min-saving {floor:g} plus its writes (x{settings.write_cost_factor:g} "
                         "--write-cost-factor)")
            else:
                said += ": the set's indexes serve its shapes for more"
        else:
            said = f"saves {human_count(gain)} keys and documents examined per hour on its own, less than the set"
        left.append(LeftOutKey(key, said))
    return left


def _with_taken(left_out: list[LeftOutKey], taken: dict[KeyPattern, str]) -> list[LeftOutKey]:
    """The keys left out, each that lost shapes to the rule of few values saying so before its other reason."""
    said: set[KeyPattern] = set()
    result = []
    for item in left_out:
        if item.key in taken and item.key not in said:
            said.add(item.key)
            item = LeftOutKey(item.key, f"{taken[item.key]}; {item.reason}", item.instead)
        result.append(item)
    return result + [LeftOutKey(key, reason) for key, reason in taken.items() if key not in said]


def _unique_left_out(left_out: list[LeftOutKey]) -> list[LeftOutKey]:
    seen: dict[KeyPattern, LeftOutKey] = {}
    for item in left_out:
        seen.setdefault(item.key, item)
    return list(seen.values())


def _shape_reasons(demands: list[Demand], left_out: list[LeftOutKey]) -> dict[int, str]:
    """Per requested shape whose own key was left out by a key rule, the reason (its skip says it)."""
    why = {item.key: item.reason for item in left_out if item.instead is None}
    return {number: why[demand.request.shared] for number, demand in enumerate(demands)
            if demand.request is not None and demand.request.shared in why}


def _numbered_by_index(rows: list[_Row]) -> dict[KeyPattern | None, list[tuple[int, _Row]]]:
    grouped: dict[KeyPattern | None, list[tuple[int, _Row]]] = {}
    for number, row in enumerate(rows):
        grouped.setdefault(row.index, []).append((number, row))
    return grouped


def _seconds_saved(value: ValueModel, served: list[tuple[int, _Row]]) -> float:
    """Server seconds per hour the rows' plans save."""
    return sum(value.saved(number, row.before, row.after) for number, row in served)


def _few_values_last(demands: list[Demand], fields: CollectionFields, order: Callable[[str], tuple]) -> list[Candidate]:
    """Each requested shape's key with its equality fields of few values after the others, the fewest last (the
    collection's usual order may put a popular field of few values first, which then leads for no shape that fixes a
    field of more values)."""
    def later(name: str) -> tuple:
        few = fields.few_values(name)
        return (False, *order(name)) if few is None else (True, -(few.values or 0), *order(name))

    keys = dict.fromkeys(candidate_key(demand.roles, later) for demand in demands if demand.request is not None
                         and any(fields.few_values(name) is not None for name in demand.roles.equality))
    return [Candidate(key, "a requested shape's key, its fields of few values last") for key in keys if key]


def _say_few_values_last(reordered: list[Candidate], requests: list[IndexRequest], fields: CollectionFields,
                         why: dict[KeyPattern, str]) -> None:
    """Why a key that no finding asks for puts its fields of few values last (a key rule's own note comes first)."""
    asked = {request.shared for request in requests}
    for candidate in reordered:
        if candidate.key in asked:
            continue
        few = [facts for facts in (fields.few_values(name) for name, _ in candidate.key) if facts is not None]
        said = "; ".join(facts.cardinality_text() for facts in few)
        why.setdefault(candidate.key, f"{said}: the fields of fewer values go last")


def _counts(demand: Demand, settings: Settings) -> bool:
    """A shape no finding asks an index for still counts for the set's saving when it ran --min-count times and its
    plan's index does not already serve it."""
    index = demand.plan_index
    return demand.executions >= settings.min_count and not (index is not None and serves(index, demand.roles))


def _by_name(name: str) -> tuple:
    return (name,)


def _limits(settings: Settings, existing: list[IndexSpec], per_finding: int) -> dict[str, float]:
    """What bounds the number of new indexes, each with how it says so: --max-new-indexes, the server's 64 indexes
    (the _id index included), and per-finding advice's count."""
    room = SERVER_INDEX_LIMIT - len(existing) - (0 if any(index.is_id_index for index in existing) else 1)
    return {f"--max-new-indexes {settings.max_new_indexes}": settings.max_new_indexes
            if settings.max_new_indexes is not None else math.inf,
            f"the server's {SERVER_INDEX_LIMIT}-index limit": room,
            f"no more than the {per_finding} per-finding advice asks for": per_finding}


def _per_finding(keys_asked: list[KeyPattern], demands: list[Demand], costs: Costs, keys: list[KeyPattern],
                 writes: dict[KeyPattern, float], model: EstimatedCosts | None, existing: list[IndexSpec],
                 per: float) -> tuple[int, float, float]:
    """What per-finding advice would do, judged the same way as the set: its indexes, the work they save and the
    index keys they write."""
    position_of = {key: number for number, key in enumerate(keys)}
    numbers = [position_of[key] for key in keys_asked if key in position_of]
    rows = _rows(demands, costs, _assign(costs, numbers, len(demands)), keys, [])
    if model is not None:
        _planned(model, rows, existing, [], keys_asked)
    return len(keys_asked), _saved(rows, per), sum(writes.get(key, 0.0) for key in keys_asked)


def _logged_indexes(demands: list[Demand]) -> list[IndexSpec]:
    """Without an index file, the indexes the log's plans show (plain indexes: their options are not known)."""
    keys = dict.fromkeys(demand.plan_index for demand in demands if demand.plan_index is not None)
    return [IndexSpec(key=key) for key in keys if key != (("_id", 1),)]  # type: ignore[arg-type]


def _assign(costs: Costs, chosen: list[int], shapes: int) -> dict[int, int]:
    """Per shape, the chosen candidate that serves it most cheaply (the first chosen of equals), where one beats
    today."""
    best: dict[int, tuple[float, int]] = {}
    start = costs.start
    for number in chosen:
        for shape, cost in costs.options[number].items():
            today = start[shape]
            if (today is None or cost < today) and (shape not in best or cost < best[shape][0]):
                best[shape] = (cost, number)
    return {shape: number for shape, (_, number) in best.items()}


def _rows(demands: list[Demand], costs: Costs, assignment: dict[int, int], keys: list[KeyPattern],
          letting: list[Letting]) -> list[_Row]:
    """Each shape with the index that serves it in the set: a new one, else one a change creates, else today's
    plan's (or the longer index that takes the queries of a redundant one let go)."""
    replaced = {item.index.key: item.replacement for item in letting if item.replacement is not None}
    rows = []
    for number, demand in enumerate(demands):
        today = costs.today[number]
        if number in assignment:
            chosen = assignment[number]
            rows.append(_Row(demand, today, costs.options[chosen][number], keys[chosen], costs.models[number]))
        elif number in costs.changed:
            key, cost = costs.changed[number]
            rows.append(_Row(demand, today, cost, key, costs.models[number]))
        else:
            index = demand.plan_index
            rows.append(_Row(demand, today, today, replaced.get(index, index) if index else None, costs.models[number]))
    return rows


def _planned(model: EstimatedCosts, rows: list[_Row], existing: list[IndexSpec], letting: list[Letting],
             new: list[KeyPattern]) -> list[Letting]:
    """Explain every estimated shape with the final set (the indexes kept and the ``new`` ones) and let the
    multi-planner pick its plan; an index let go without which a shape's plan would be more than 10% worse than
    today is kept after all."""
    for _ in range(3):
        gone = {item.index.name for item in letting}
        final = _plannable(existing, gone, new)
        missed: set[str] = set()
        for number, row in enumerate(rows):
            key, cost, evidence = model.planned(number, final)
            if cost is None:
                continue
            row.note = None
            if key != row.index and row.index in new:
                shown = render_key_pattern(key) if key is not None else "a collection scan"
                row.note = f"the multi-planner picks {shown} over {render_key_pattern(row.index)}"
            row.index, row.after, row.evidence = key, cost, evidence
            if row.before is not None and cost > row.before * WORSE_TOLERANCE:
                today = model.today_index(number)
                missed |= {item.index.name for item in letting if item.index.key == today}
        if not missed:
            return letting
        letting = [item for item in letting if item.index.name not in missed]
    return letting


def _plannable(existing: list[IndexSpec], gone: set[str] | list[str], new: list[KeyPattern]) -> list[IndexSpec]:
    """The indexes the multi-planner chooses among: the visible B-tree indexes kept (not the _id index), and the
    ``new`` ones."""
    return [index for index in existing if index.is_btree and not index.hidden and index.name not in gone
            and not index.is_id_index] + [IndexSpec(key=key) for key in new]


def _saved(rows: list[_Row], per: float) -> float:
    """Keys plus documents examined the rows' plans save, per hour (or per log)."""
    return sum(row.demand.executions / per * (row.before - row.after) for row in rows
               if row.before is not None and row.after is not None)


def _kept(existing: list[IndexSpec], letting: list[Letting], rows: list[_Row], ns: str,
          context: RuleContext) -> list[tuple[IndexSpec, str]]:
    gone = {item.index.name for item in letting}
    rows_served = _by_index(rows)
    kept = []
    for index in existing:
        if index.name in gone:
            continue
        serving = len(rows_served.get(index.key, []))
        reason = protected(index, ns, context)
        if serving:
            text = f"serves {serving} shape{'s' if serving != 1 else ''} of the log in the set"
        elif reason:
            text = f"kept: {reason}"
        else:
            text = "no shape of the log uses it in the set (IX006 says whether it is unused)"
        kept.append((index, text))
    return kept


def _model_name(costs: Costs) -> str:
    models = set(costs.models)
    return "estimator and log" if len(models) > 1 else (models.pop() if models else "log")


def _choice(request: IndexRequest, number: int, assignment: dict[int, int], shares: Counter[int],
            keys: list[KeyPattern], reasons: _Reasons, ns: str, existing: dict[KeyPattern, IndexSpec],
            savings: dict[KeyPattern | None, float], why: dict[KeyPattern, str],
            partly: dict[tuple[int, int], str]) -> IndexChoice:
    """``shares``: per chosen candidate, the shapes it serves in ``assignment``; ``savings``: per index of the set,
    the server seconds per hour it saves (empty when the log gives no durations); ``partly``: per (candidate, shape)
    served by an equality prefix only, what it bounds."""
    there = existing.get(canonical(request.shared))
    if there is not None and number not in assignment:
        return IndexChoice(None, details=[f"the index it asks for, {there}, exists already (the log's plans use it): "
                                          "nothing to create"])
    if number not in assignment:
        return IndexChoice(None, reason=reasons.why_not(number, request.rule))
    key = keys[assignment[number]]
    served = shares[assignment[number]]
    details = []
    saving = savings.get(key)
    if saving is not None:
        details.append(f"the index saves about {human_seconds(saving)} of server time per hour of the log (the "
                       "durations of the shapes it serves, times the share of their work it removes)")
    if served > 1:
        details.append(f"the index serves {served} shapes of {ns}, this one included, in the set chosen for the "
                       "workload")
    if key != request.shared:
        because = f" ({why[key]})" if key in why else ""
        details.append(f"per-finding advice would be {render_key_pattern(request.shared)}; the workload's set chose "
                       f"{render_key_pattern(key)}{because}")
    if (assignment[number], number) in partly:
        details.append(partly[assignment[number], number])
    return IndexChoice(key, details=details, saving=round(saving, 2) if saving is not None else None)


class _Reasons:
    """Why a requested shape gets no new index: a key rule, no candidate saves enough, the floor and its write cost,
    or the budget."""

    def __init__(self, costs: Costs, problem: Problem, candidates: list[Candidate], chosen: list[Candidate],
                 binding: str, settings: Settings, ns: str, timed: bool, floor: float, excluded: dict[int, str],
                 shape_reasons: dict[int, str]) -> None:
        self.costs, self.problem, self.candidates, self.settings, self.ns = costs, problem, candidates, settings, ns
        self.binding = binding  # the limits that set the budget
        self.timed, self.floor, self.excluded, self.shape_reasons = timed, floor, excluded, shape_reasons
        self.none_chosen = not chosen
        self.chosen = _chosen_text(chosen, ns)
        self.gains: dict[int, float] = {}  # per candidate: what it saves on its own (``gain_of``)
        self.offers: dict[int, list[tuple[float, int]]] = {}  # per shape: (cost, candidate) of every candidate
        for position, options in enumerate(costs.options):
            for shape, cost in options.items():
                self.offers.setdefault(shape, []).append((cost, position))

    def why_not(self, number: int, rule: str) -> str:
        costs, problem, settings = self.costs, self.problem, self.settings
        if costs.today[number] is None:
            return (f"{rule}: index selection: the log does not show what this shape examines, so no index can be "
                    "weighed")
        offers = self.offers.get(number)
        if not offers and number in costs.changed:
            key, cost = costs.changed[number]
            today = costs.today[number] or 0.0
            return (f"{rule}: index selection: {render_key_pattern(key)}, which the change creates, cuts its keys plus "
                    f"documents examined from {human_count(today)} to {human_count(cost)} per execution; no other "
                    "index would save enough more")
        if not offers:
            if number in self.shape_reasons:
                return f"{rule}: index selection, key: {self.shape_reasons[number]}"
            closest = costs.closest.get(number)
            if closest is not None:
                saved = (1 - closest[0] / costs.today[number]) * 100 if costs.today[number] else 0.0
                key = render_key_pattern(self.candidates[closest[1]].key)
                text = (f"{rule}: by the estimate, {key} cuts keys plus documents examined by {saved:.0f}% only "
                        f"(--min-savings-pct {settings.min_savings_pct:g})")
            else:
                text = f"{rule}: index selection: by the log, no candidate index serves it with less work than today"
            invalid = sorted(set(costs.invalid.values()))
            return text + (f"; {invalid[0]}" if invalid else "")
        kept = [offer for offer in offers if offer[1] not in self.excluded]
        if not kept:
            best = min(offers)[1]
            return f"{rule}: index selection: {render_key_pattern(self.candidates[best].key)} {self.excluded[best]}"
        best = min(kept)[1]
        key = render_key_pattern(self.candidates[best].key)
        gain = self.gains.get(best)
        if gain is None:
            gain = self.gains[best] = gain_of(problem, best)
        saves = (f"{human_seconds(gain)} of server time" if self.timed
                 else f"{human_count(gain)} keys and documents examined")
        if gain <= problem.write_costs[best]:
            writes = problem.write_costs[best] - self.floor
            if self.timed and gain > writes:
                return (f"{rule}: index selection, below the floor: {key} would save {saves} per hour, under "
                        f"--min-saving {self.floor:g}" + (f" plus its writes ({human_seconds(writes)} per hour)"
                                                          if writes > 0 else ""))
            if self.timed:
                return (f"{rule}: index selection, write cost: {key} would save {saves} per hour, less than its writes "
                        f"({human_seconds(writes)} per hour: index keys written times --write-cost-factor "
                        f"{settings.write_cost_factor:g}, at the collection's seconds per key examined) plus "
                        f"--min-saving {self.floor:g}")
            written = problem.write_costs[best] / settings.write_cost_factor if settings.write_cost_factor else 0.0
            return (f"{rule}: index selection, write cost: {key} would save {saves} per hour, less than the "
                    f"{human_count(written)} index keys it would write per hour times --write-cost-factor "
                    f"{settings.write_cost_factor:g}")
        if self.none_chosen:
            return f"{rule}: index selection, budget ({self.binding}): no new index; {key} would save {saves} per hour"
        return (f"{rule}: index selection, budget ({self.binding}): {self.chosen} save more; {key} would save "
                f"{saves} per hour")


_KEYS_NAMED = 3  # a skipped shape's reason names this many of the chosen indexes; its index set lists them all


def _chosen_text(chosen: list[Candidate], ns: str) -> str:
    """The chosen indexes as a budget reason names them: every skipped shape's reason says it, so a set of 64 is
    named by its first few (thousands of shapes once repeated the whole list, a kilobyte each)."""
    keys = [render_key_pattern(candidate.key) for candidate in chosen[:_KEYS_NAMED]]
    more = len(chosen) - len(keys)
    listed = ", ".join(keys) + (f" and {more} more: see its index set" if more else "")
    return f"the {len(chosen)} new index{'es' if len(chosen) != 1 else ''} chosen for {ns} ({listed or 'none'})"


def build_set(plan: CollectionPlan, proposed: set[KeyPattern]) -> IndexSet:
    """The report's ``IndexSet`` of a plan, without the new indexes no finding proposes any more, nor those the
    multi-planner passes over for every shape (an index of the set serves their shapes as well)."""
    served = {row.index for row in plan.rows}
    idle = [candidate.key for candidate in plan.new if candidate.key in proposed and candidate.key not in served]
    new = [candidate for candidate in plan.new if candidate.key in proposed and candidate.key not in idle]
    unproposed = [candidate.key for candidate in plan.new if candidate.key not in proposed]
    gone = {*unproposed, *idle}
    notes = list(plan.notes)
    if unproposed:
        notes.append("dropped after the selection, their findings gone (the evidence's --min-savings-pct): "
                     + ", ".join(render_key_pattern(key) for key in unproposed))
    if idle:
        notes.append("dropped after the selection, serving no shape: the multi-planner picks another index of the set "
                     "for every shape they would serve: " + ", ".join(render_key_pattern(key) for key in idle))
    letting = [item for item in plan.letting if not item.because & gone]
    rows = [_Row(row.demand, row.before, row.before, row.demand.plan_index, row.model, None,
                 "its new index was dropped after the selection") if row.index in gone else row for row in plan.rows]
    per = plan.hours or 1.0
    serving = _by_index(rows)
    numbered = _numbered_by_index(rows)
    indexes = sorted((_new_index(candidate, numbered.get(candidate.key, []), plan, per) for candidate in new),
                     key=lambda index: -(index.saving_s_per_hour or 0.0))
    indexes += [SetIndex(name=index.name, key=list(index.key), status="kept", reason=reason,
                         shapes=[row.demand.fingerprint for row in serving.get(index.key, [])])
                for index, reason in plan.kept]
    indexes += [SetIndex(name=item.index.name, key=list(item.index.key), status="hide", reason=item.reason,
                         command=item.index.hide_index_command(plan.ns),
                         drop_command=item.index.drop_index_command(plan.ns),
                         writes_per_hour=_rounded(plan.writes.get(item.index.key)))
                for item in letting]
    return IndexSet(ns=plan.ns, model=plan.model, search=plan.solution.method,  # type: ignore[arg-type]
                    search_note=plan.solution.note, candidates=plan.candidates, budget=plan.budget, indexes=indexes,
                    shapes=[_shape_row(row, plan.names) for row in rows], writes=plan.load.rates(),
                    totals=_totals(plan, rows, new, letting, per), notes=notes,
                    left_out=[LeftOut(key=list(item.key), reason=item.reason + (
                        f"; proposed as {render_key_pattern(item.instead)}" if item.instead else ""))
                              for item in plan.left_out])


def _by_index(rows: list[_Row]) -> dict[KeyPattern | None, list[_Row]]:
    """The rows each index serves in the set, in order (None: the rows a collection scan serves)."""
    grouped: dict[KeyPattern | None, list[_Row]] = {}
    for row in rows:
        grouped.setdefault(row.index, []).append(row)
    return grouped


def _new_index(candidate: Candidate, served: list[tuple[int, _Row]], plan: CollectionPlan, per: float) -> SetIndex:
    """A new index of the set, and the rows it serves."""
    rows = [row for _, row in served]
    saved = _saved(rows, per)
    rules = {row.demand.request.rule for row in rows if row.demand.request is not None} | set(candidate.rules)
    reason = candidate.origin + (f"; {plan.why[candidate.key]}" if candidate.key in plan.why else "")
    seconds = _seconds_saved(plan.value, served) if plan.value is not None and plan.value.timed else None
    return SetIndex(name=default_index_name(candidate.key), key=list(candidate.key), status="new",
                    command=IndexSpec(key=candidate.key).create_index_command(plan.ns), reason=reason,
                    shapes=[row.demand.fingerprint for row in rows], rules=sorted(rules),
                    work_saved_per_hour=round(saved, 1), writes_per_hour=_rounded(plan.writes.get(candidate.key)),
                    saving_s_per_hour=_rounded(seconds, 2))


def _shape_row(row: _Row, names: dict[KeyPattern, str]) -> SetShape:
    index = (names.get(row.index) or ("_id_" if row.index == (("_id", 1),) else default_index_name(row.index))
             if row.index else None)
    return SetShape.of(row.demand.fingerprint, row.demand.stats.shape.text, row.demand.executions,
                       row.demand.request is not None, index, _rounded(row.before), _rounded(row.after), row.model,
                       row.evidence, row.note)


def _totals(plan: CollectionPlan, rows: list[_Row], new: list[Candidate], letting: list[Letting],
            per: float) -> SetTotals:
    measured = [row for row in rows if row.before is not None]
    before = sum(row.demand.executions / per * (row.before or 0.0) for row in measured)
    after = sum(row.demand.executions / per * (row.after if row.after is not None else row.before or 0.0)
                for row in measured)
    added = sum(plan.writes.get(candidate.key, 0.0) for candidate in new)
    removed = sum(plan.writes.get(item.index.key, 0.0) for item in letting)
    count, per_finding_saved, per_finding_writes = plan.per_finding
    value, chosen = plan.value, {candidate.key for candidate in new}
    return SetTotals(per="hour" if plan.hours else "log", span_hours=_rounded(plan.hours, 2),
                     work_before=round(before, 1), work_after=round(after, 1), work_saved=round(before - after, 1),
                     index_writes_added=round(added, 1), index_writes_removed=round(removed, 1),
                     write_cost_factor=plan.factor, net_saved=round(before - after - plan.factor * added, 1),
                     per_finding_indexes=count, per_finding_work_saved=round(per_finding_saved, 1),
                     per_finding_index_writes=round(per_finding_writes, 1),
                     seconds_before=round(sum(value.seconds), 2) if value is not None and value.timed else 0.0,
                     seconds_saved=round(_seconds_saved(value, [(number, row) for number, row in enumerate(rows)
                                                               if row.index in chosen]), 2)
                     if value is not None and value.timed else 0.0, min_saving=plan.floor)


def _rounded(value: float | None, digits: int = 1) -> float | None:
    return None if value is None else round(value, digits)
