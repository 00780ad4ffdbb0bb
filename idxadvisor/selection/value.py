"""What an index is worth in server time, and what its key costs: the value model of the index selection.

**Saving.** A shape's server time is its executions' own durations (per hour of the log's span; per log when it
spans under a minute). An index that cuts its keys plus documents examined per execution from ``today`` to
``cost`` saves that share of its time: ``seconds × (today − cost) / today``, the costs by the log or, with a data
sample, by the estimator. A shape the log gives no duration counts at the collection's own seconds per key or
document examined.

**Cost.** An index's writes (``selection.writes``: index keys written per hour, times ``--write-cost-factor``) are
turned into seconds at the same rate, and every new index must clear ``--min-saving`` seconds per hour on top
(default 0.5 s: below that nobody would notice it missing, while it takes disk, cache and write time for as long as
it exists; a log spanning under a minute gives no rate, and no floor). The set search maximises the saving net of
both, so the number of indexes follows from their value.

**Keys** (``indexes.fields`` says what the log and the sample tell of a field):

* fields after an equality prefix that already finds one or two documents are dropped (a shape of those equalities
  alone returns that few), and so are a field selective on its own and those after it (an index on that field alone
  serves the shapes that fix it);
* a free-text field (long strings) is never an ascending key: a pure equality on it gets a ``hashed`` key instead
  (one hashed field per index, compound from 4.4), anything else on it nothing;
* an index led by a low-cardinality field serves only the shapes that fix that field by equality (for the others
  it would walk half the collection in the field's order); when the collection itself holds few values of it (the
  sample says so, or the queries ask the same few again and again: ``indexes.fields.few_values_shown``), only the
  shapes that fix no equality field of many values (which should lead; between fields of few values the search
  picks the order), and by the log such a shape's count or
  ``$group`` (whose matches the log does not show) reads the log's figure for its fields (what a query on them alone
  returned, all it matched), else about ``1/d`` of the collection for each field of ``d`` values;
* a key that does not serve a shape but leads with some of its equality fields (``{ a: 1, b: 1 }`` for
  ``{ a: eq, c: eq }``) bounds its scan by them: it reads a key and a document per document those fields match, by
  the log's own figure (its queries on ``a`` alone return so many documents per execution) or the sample's; without
  such a figure it counts for nothing. So one index whose equality prefix is shared serves several shapes partly, and
  the search weighs that against a narrower index per shape;
* one order per set of fields: when the search picks two orders of the same fields, the one saving less is merged
  into the other and the search runs again.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from idxadvisor.config import server_version_of
from idxadvisor.indexes.fields import CollectionFields, keeps_matches
from idxadvisor.indexes.model import KeyPattern, render_key_pattern
from idxadvisor.selection.candidates import Candidate, canonical
from idxadvisor.selection.costs import Costs, worth
from idxadvisor.selection.demand import Demand

#: The server version from which a compound index may hold a hashed field.
COMPOUND_HASHED = (4, 4)


@dataclass
class LeftOutKey:
    """A candidate key the selection does not propose, why, and the key it became instead (if any)."""

    key: KeyPattern
    reason: str
    instead: KeyPattern | None = None


@dataclass
class Reshaped:
    """The candidates once the key rules have run, and what each rule left out or changed."""

    candidates: list[Candidate]
    left_out: list[LeftOutKey] = field(default_factory=list)
    why: dict[KeyPattern, str] = field(default_factory=dict)  # a changed key: what changed it


def reshape(candidates: list[Candidate], fields: CollectionFields, server_version: str) -> Reshaped:
    """Drop trailing fields that add no selectivity, then make free-text keys hashed (or drop them); merge the keys
    that became one (see the module's documentation)."""
    version = server_version_of(server_version) or (8, 0)
    result = Reshaped([])
    pool: dict[KeyPattern, Candidate] = {}
    for candidate in candidates:
        key, notes = candidate.key, []
        prefix = fields.selective_prefix(key)
        if prefix is not None:
            length, how = prefix
            notes.append(f"fields after {render_key_pattern(key[:length])} dropped: {how}")
            key = key[:length]
        key, reason = _text_key(key, fields, version)
        if reason is not None and key is None:
            result.left_out.append(LeftOutKey(candidate.key, reason))
            continue
        if reason is not None:
            notes.append(reason)
        assert key is not None
        if key != candidate.key:
            result.left_out.append(LeftOutKey(candidate.key, "; ".join(notes), key))
        same = canonical(key)
        held = pool.get(same)
        if held is None:
            pool[same] = replace(candidate, key=key, rules=list(candidate.rules))
            if notes:
                result.why[key] = "; ".join(notes)
        else:
            held.rules += [rule for rule in candidate.rules if rule not in held.rules]
            held.grows = held.grows or candidate.grows
    result.candidates = list(pool.values())
    return result


def _text_key(key: KeyPattern, fields: CollectionFields, version: tuple[int, int]) -> tuple[KeyPattern | None,
                                                                                             str | None]:
    """``key`` with its free-text field hashed, or None when it cannot be (and why)."""
    texts = [fields.long_text(name) for name, _ in key]
    long = [facts for facts in texts if facts is not None]
    if not long:
        return key, None
    said = "; ".join(facts.width_text() for facts in long)
    if len(long) > 1:
        return None, f"{said}: no ascending index on free text, and an index holds one hashed field at most"
    if len(key) > 1 and version < COMPOUND_HASHED:
        return None, f"{said}: no ascending index on free text, and a compound hashed index needs 4.4"
    if any(direction == "hashed" for _, direction in key):
        return None, f"{said}: no ascending index on free text, and the index has a hashed field already"
    name = long[0].name
    hashed = tuple((field_name, "hashed" if field_name == name else direction) for field_name, direction in key)
    return hashed, f"{said}: {name} is hashed (8 bytes a key; it answers equality only)"


def selective_options(costs: Costs, demands: list[Demand], keys: list[KeyPattern], fields: CollectionFields) -> None:
    """By the log, a key whose fields are all equalities of a shape and form a selective set examines about the
    documents that set finds (twice: a key and a document each), though it does not bound every predicate."""
    if not fields.selective:
        return
    by_log = [number for number in range(len(demands)) if costs.models[number] == "log"]
    equalities = {number: frozenset(demands[number].roles.equality) for number in by_log}
    fixing: dict[str, list[int]] = {}  # per field, the shapes (by the log, in order) that fix it by equality
    for number in by_log:
        for name in equalities[number]:
            fixing.setdefault(name, []).append(number)
    for position, key in enumerate(keys):
        names = frozenset(name for name, _ in key)
        found = fields.selective.get(names)
        if found is None:
            continue
        # only the shapes fixing every field of the key can qualify: look among those fixing its rarest field, in
        # order (not every shape for every key: thousands of each)
        among = min((fixing.get(name, []) for name in names), key=len) if names else by_log
        for number in among:
            if number in costs.options[position]:
                continue
            demand = demands[number]
            if names <= equalities[number]:
                cost = max(2 * found[0], demand.served_cost)
                if worth(cost, costs.today[number], 0.0):
                    costs.options[position][number] = cost


def prefix_options(costs: Costs, demands: list[Demand], keys: list[KeyPattern],
                   fields: CollectionFields) -> dict[tuple[int, int], str]:
    """By the log, a key whose leading fields are some of a shape's equalities, but which does not serve all of it,
    still bounds its scan by them: the server reads the keys of those values and fetches each document to test the
    rest, so it examines a key and a document per document the leading equalities match (the log's own figure for
    those fields, ``CollectionFields.matches``), plus that many again to sort them when the shape sorts. Returns, per
    (candidate, shape) so served, what it bounds and how that is known."""
    partly: dict[tuple[int, int], str] = {}
    if not fields.matches:
        return partly
    fixing: dict[str, list[int]] = {}  # per field, the shapes (by the log) that fix it by equality
    for number, demand in enumerate(demands):
        if costs.models[number] == "log":
            for name in demand.roles.equality:
                fixing.setdefault(name, []).append(number)
    for position, key in enumerate(keys):
        options = costs.options[position]
        for number in fixing.get(key[0][0], ()) if key else ():
            if number in options:
                continue
            demand = demands[number]
            equality = set(demand.roles.equality)
            length = 0
            while length < len(key) and key[length][0] in equality:
                length += 1
            found = fields.matches.get(frozenset(name for name, _ in key[:length])) if length else None
            if found is None:
                continue
            cost = max((3 if demand.roles.sort else 2) * found[0], demand.served_cost)
            if worth(cost, costs.today[number], 0.0):
                options[number] = cost
                partly[position, number] = (f"it bounds {render_key_pattern(key[:length])} of this shape and tests the "
                                            f"rest on each document: {found[1]}")
    return partly


def low_cardinality(costs: Costs, demands: list[Demand], keys: list[KeyPattern], fields: CollectionFields,
                    taken: dict[int, str] | None = None) -> list[LeftOutKey]:
    """Take from a key led by a low-cardinality field, or by a field the collection holds few values of, the shapes
    it may not serve (see the module's documentation); the keys left serving nothing, and why (``taken``: per key
    that still serves some shapes, why it lost the others)."""
    left: list[LeftOutKey] = []
    for position, key in enumerate(keys):
        facts = fields.few_values(key[0][0]) or fields.low_cardinality(key[0][0])
        options = costs.options[position]
        if facts is None or not options:
            continue
        lost = 0
        for number in list(options):
            demand = demands[number]
            equality = demand.roles.equality
            if facts.name not in equality or (facts.few_values and _many_values(fields, equality)):
                del options[number]  # a field of many values leads for it
                lost += 1
            elif facts.few_values and costs.models[number] == "log" and not demand.roles.sort \
                    and not returns_matches(demand):
                # the log does not show what a count or a $group matched: the log's figure for its fields, else
                # about the share of the collection one value of each holds
                today = costs.today[number]
                cost = max(options[number], _count_reads(fields, equality, today or 0.0))
                if worth(cost, today, 0.0):
                    options[number] = cost
                else:
                    del options[number]
        why = (f"{facts.cardinality_text()}: it leads only for shapes that fix it by equality"
               + (" and no field of many values" if facts.few_values else ""))
        if not options:
            left.append(LeftOutKey(key, why))
        elif lost and taken is not None:
            taken[position] = f"{why} ({lost} shape{'s' if lost != 1 else ''} taken from it)"
    return left


def _many_values(fields: CollectionFields, equality: tuple[str, ...] | list[str]) -> bool:
    """Some equality field is not known to hold few values (so it holds many, and should lead). Between two fields of
    few values the order is left to the search: a shape fixing both reads the same either way, and which one leads
    decides what else the key serves (an existing ``{ status: 1 }`` it makes redundant, say)."""
    return any(fields.few_values(name) is None for name in equality)


def _count_reads(fields: CollectionFields, equality: tuple[str, ...] | list[str], today: float) -> float:
    """Keys an index on the equality fields reads for a count or ``$group`` that examines ``today`` per execution
    with a collection scan: the documents the log shows those fields' values matching, else the collection's share
    that one value of each field holds (each of ``d`` values about ``1/d`` of it)."""
    found = fields.matches.get(frozenset(equality))
    if found is not None:
        return found[0]
    share = 1.0
    for name in equality:
        held = fields.few_values(name)
        share /= max((held.values if held is not None else None) or 1, 1)
    return today * share


def returns_matches(demand: Demand) -> bool:
    """The documents the shape returns are those its filter matches: a find or a pipeline of ``$match``,
    ``$project`` and ``$sort`` only, without a limit."""
    shape = demand.stats.shape
    if shape.has_option("limit") or shape.op not in ("find", "aggregate"):
        return False
    return shape.op == "find" or all(keeps_matches(stage) for stage in shape.stages)


@dataclass
class ValueModel:
    """Server seconds per hour, by shape, and what one key or document examined costs in seconds."""

    seconds: list[float]  # per shape: its server seconds per hour (per log)
    per_work: float | None  # the collection's seconds per key or document examined (None: no durations)

    @property
    def timed(self) -> bool:
        return self.per_work is not None

    def weight(self, number: int, today: float | None, counted: bool) -> float:
        """Seconds saved per unit of work cut per execution, for shape ``number`` (0 when it does not count)."""
        if not counted or not today:
            return 0.0
        return self.seconds[number] / today

    def saved(self, number: int, before: float | None, after: float | None) -> float:
        if not before or after is None or after >= before:
            return 0.0
        return self.seconds[number] * (before - after) / before


def value_model(demands: list[Demand], today: list[float | None], per: float) -> ValueModel:
    """Each shape's seconds per hour, a shape without durations at the collection's rate (``per``: hours)."""
    seconds = [demand.stats.duration.total / 1000 / per for demand in demands]
    timed = [(seconds[number], demand.executions / per * (today[number] or 0.0))
             for number, demand in enumerate(demands) if seconds[number] > 0 and today[number]]
    work = sum(amount for _, amount in timed)
    per_work = sum(time for time, _ in timed) / work if work else None
    if per_work is not None:
        seconds = [time if time > 0 else demand.executions / per * (today[number] or 0.0) * per_work
                   for number, (time, demand) in enumerate(zip(seconds, demands))]
    return ValueModel(seconds, per_work)
