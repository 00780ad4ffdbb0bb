"""What a field costs and gives as an index key, from the log's literal values (``shapes.literals``) or a data
sample: how wide its keys are, how many values it takes, and which equality fields already find one or two
documents (so that fields after them add nothing).

* **Long free text**: string values averaging more than ``LONG_TEXT_BYTES`` characters. An ascending index holds each
  whole value (up to about 1 KB per key, past which the server refuses the key), so it is several times the size of
  an index on a short field, evicts more of the cache, and still answers only equality: no ascending index is made
  on such a field. A pure equality on it can use a ``hashed`` index (8 bytes a key); a range or sort cannot.
* **Low cardinality**: every equality value the log shows is one of at most ``LOW_CARDINALITY_VALUES`` (over at
  least ``MIN_EQUALITY_VALUES`` queries), or the sample holds at most that many. An index that leads with such a
  field splits the collection into one or two halves; it leads only for shapes that all fix it by equality.
* **Few values in the collection**: the sample holds at most ``DISTINCT_CAP`` values of the field, or the log's
  queries ask so few values so often that a collection holding twice as many would have shown more
  (``few_values_chance`` under ``FEW_VALUES_CHANCE``: for one shape, 2 values in 10 queries, 4 in 13, 8 in 21). One
  value then matches about ``1/d`` of the collection. A field the log shows finding one or two documents per value
  is not one, whatever its queries ask (a generator re-reading the same few documents asks few values of a field
  of many).
* **Selective equality sets**: a shape whose whole filter is equalities on some fields, without a limit, that returns
  at most ``FEW_RETURNED`` documents per execution (and some: nothing found says only that the values are absent),
  or a sampled field whose value matches that few: an index on those fields finds those documents alone, and fields
  after them in a key add only width.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from math import comb

from idxadvisor.indexes.candidates import Roles
from idxadvisor.indexes.model import KeyPattern
from idxadvisor.indexes.sampling import SampleStatistics, _hashable, path_values
from idxadvisor.shapes.digest import ShapeStats
from idxadvisor.shapes.literals import DISTINCT_CAP, FIRST_BATCH, FieldLiterals
from idxadvisor.shapes.shape import Filter

#: String values longer than this on average (characters) are free text: no ascending index on them.
LONG_TEXT_BYTES = 100
#: At most this many distinct equality values over the log's queries is a low-cardinality field.
LOW_CARDINALITY_VALUES = 2
#: Equality values the log must show before it says a field has few values.
MIN_EQUALITY_VALUES = 4
#: The chance, at most, that the log's queries would show as few values as they do if the collection held twice as
#: many (each shape's values drawn at random): under it, the collection holds about the values the log shows.
FEW_VALUES_CHANCE = 0.01
#: Documents per execution at or below which an equality set needs no further field.
FEW_RETURNED = 2.0
#: The share of a limited shape's executions that must return under their limit before the log takes what they
#: returned for what they matched (those reaching the limit are left out: the figure is low by what they matched
#: beyond it).
UNDER_LIMIT_SHARE = 0.75
#: Sampled documents read for a field's string length.
_LENGTH_SAMPLE = 2_000


@dataclass
class FieldFacts:
    """One field of a collection, as an index key."""

    name: str
    average_bytes: float | None = None  # its string values' average length
    longest: int = 0
    distinct: int | None = None  # distinct equality values seen (None: many, or unknown)
    equalities: int = 0  # equality values seen
    source: str = "the log's literal values"
    sampled: bool = False  # the distinct values are the sample's, not the queries'
    values: int | None = None  # about how many values the collection holds, when it holds few (None: many, unknown)

    @property
    def long_text(self) -> bool:
        return self.average_bytes is not None and self.average_bytes > LONG_TEXT_BYTES

    @property
    def low_cardinality(self) -> bool:
        return (self.distinct is not None and self.distinct <= LOW_CARDINALITY_VALUES
                and self.equalities >= MIN_EQUALITY_VALUES)

    @property
    def few_values(self) -> bool:
        """The collection itself holds few values of the field (``values`` of them): the sample says so, or the
        queries ask the same few again and again (one value asked every time says only what the application asks
        for)."""
        return self.values is not None

    def width_text(self) -> str:
        return (f"{self.name} holds free text ({self.average_bytes:,.0f} characters on average, up to "
                f"{self.longest:,} in {self.source})")

    def cardinality_text(self) -> str:
        values = "one value" if self.distinct == 1 else f"{self.distinct} values"
        if self.sampled:
            return f"{self.name} takes {values} in {self.equalities:,} sampled documents"
        return f"{self.name} takes {values} in {self.equalities:,} queries (the log's literal values)"


@dataclass
class CollectionFields:
    """The facts of one collection's fields, and its selective equality sets (by field set: documents returned per
    execution, and how that is known)."""

    facts: dict[str, FieldFacts] = field(default_factory=dict)
    selective: dict[frozenset[str], tuple[float, str]] = field(default_factory=dict)
    ordered: set[str] = field(default_factory=set)  # fields some shape sorts by or bounds by a range
    # per equality set: documents one equality value of it matches (and how that is known), by the log's shapes
    # that return what they match or by the sample; what an index bounding just those fields reads
    matches: dict[frozenset[str], tuple[float, str]] = field(default_factory=dict)
    _matched: dict[frozenset[str], tuple[int, int, str]] = field(default_factory=dict, repr=False)

    def get(self, name: str) -> FieldFacts | None:
        return self.facts.get(name)

    def long_text(self, name: str) -> FieldFacts | None:
        facts = self.facts.get(name)
        return facts if facts is not None and facts.long_text else None

    def low_cardinality(self, name: str) -> FieldFacts | None:
        facts = self.facts.get(name)
        return facts if facts is not None and facts.low_cardinality else None

    def few_values(self, name: str) -> FieldFacts | None:
        facts = self.facts.get(name)
        return facts if facts is not None and facts.few_values else None

    def selective_prefix(self, key: KeyPattern) -> tuple[int, str] | None:
        """Where to cut ``key``, and why: after the shortest prefix that is a selective equality set (the fields after
        it add only width), or before a later field that is selective on its own (the shapes that fix it are served
        best by an index on it alone, the others never reach it)."""
        for length in range(1, len(key)):
            found = self.selective.get(frozenset(name for name, _ in key[:length]))
            if found is not None:
                return length, found[1]
            alone = self.selective.get(frozenset({key[length][0]}))
            if alone is not None and key[length][0] not in self.ordered:
                return length, f"{key[length][0]} finds few documents on its own ({alone[1]}): an index on it serves " \
                               "the shapes that fix it"
        return None


def collection_fields(shapes: Iterable[ShapeStats], roles_of: Callable[[ShapeStats], Roles],
                      sample: SampleStatistics | None) -> CollectionFields:
    """The facts of the fields the collection's shapes filter on, from their literal values, and the sample's where
    it gives them (the sample wins: it sees the collection, the log only what was asked)."""
    merged: dict[str, FieldLiterals] = {}
    drawn: dict[str, list[tuple[int | None, int]]] = {}  # per field, each shape's distinct values and equalities
    result = CollectionFields()
    for stats in shapes:
        for name, literals in stats.literals.fields.items():
            if name not in merged:
                merged[name] = FieldLiterals()
            # the most values one shape saw (a workload file keeps no checksum to unite shapes by): a lower bound
            merged[name].merge(replace(literals, distinct=set()))
            if literals.equalities:
                drawn.setdefault(name, []).append((literals.distinct_values, literals.equalities))
        if stats.shape.known:
            roles = roles_of(stats)
            result.ordered.update(roles.range, (name for name, _ in roles.sort))
        _selective_shape(stats, roles_of, result)
    for name, literals in merged.items():
        result.facts[name] = FieldFacts(name, literals.average_string_bytes, literals.longest,
                                        literals.distinct_values, literals.equalities)
        if frozenset({name}) not in result.selective:  # one value finds one or two documents: a field of many
            result.facts[name].values = few_values_shown(drawn.get(name, []))
    result.matches = {fields: (returned / runs, how) for fields, (returned, runs, how) in result._matched.items()}
    if sample is not None and len(sample):
        _from_sample(result, sample)
    return result


def few_values_shown(drawn: list[tuple[int | None, int]]) -> int | None:
    """How many values the collection holds, when the shapes' queries (``drawn``: each shape's distinct equality
    values, None for more than ``DISTINCT_CAP``, and its equality values) show that it holds few: the most one shape
    saw, ``d``, when a collection of ``2 d`` values would show as few less often than ``FEW_VALUES_CHANCE``."""
    if any(distinct is None for distinct, _ in drawn):
        return None
    most = max((distinct for distinct, _ in drawn), default=0)
    if most < 2:
        return None  # one value asked every time is what the application asks, not what the collection holds
    return most if few_values_chance(drawn, 2 * most) <= FEW_VALUES_CHANCE else None


def few_values_chance(drawn: list[tuple[int | None, int]], domain: int) -> float:
    """At most the chance that each shape's equality values, drawn at random from ``domain`` values, show no more
    distinct values than they did: per shape, ``C(domain, d) (d / domain) ** n`` (some ``d`` of the values hold all
    ``n`` draws), the shapes independent. A shape that asked one value every time counts for nothing: a constant of
    the application, not a draw. (One shape of ``d`` values in ``4 d`` queries: 2.3% for 2 values, 0.5% for 3, 0.1% for
    4.)

    Why the shapes one by one: a workload file keeps no checksum of a value, so the values of two shapes cannot be
    united; each shape's own draws are evidence on their own, whatever the other shapes asked."""
    chance = 1.0
    for distinct, equalities in drawn:
        if distinct is not None and distinct >= 2:
            chance *= min(1.0, comb(domain, distinct) * (distinct / domain) ** equalities)
    return chance


def _selective_shape(stats: ShapeStats, roles_of: Callable[[ShapeStats], Roles], result: CollectionFields) -> None:
    shape = stats.shape
    if not shape.known or shape.op not in ("find", "aggregate") or not stats.measured:
        return
    runs_returned = _returned_whole(stats)
    if runs_returned is None:
        return
    roles = roles_of(stats)
    if not roles.equality or roles.range or roles.residual or roles.has_or or _sorted_predicate(shape.filter, roles):
        return
    runs, returned_all, said = runs_returned
    returned = returned_all / runs
    fields = frozenset(roles.equality)
    if returned_all and returned < FIRST_BATCH:  # else the cursor may have held more
        held_returned, held_runs, _ = result._matched.get(fields, (0, 0, ""))
        returned_all, runs = held_returned + returned_all, held_runs + runs
        result._matched[fields] = (returned_all, runs, f"the log's queries on {_names(fields)} alone return "
                                   f"{returned_all / runs:,.1f} documents per execution ({runs:,} measured)")
    if not 0 < returned <= FEW_RETURNED:
        return  # nothing found says only that the values asked for are absent
    how = f"{shape.text} returns {returned:,.1f} documents per execution{said}"
    held = result.selective.get(fields)
    if held is None or returned < held[0]:
        result.selective[fields] = (returned, how)


def keeps_matches(stage: str, limited: bool = False) -> bool:
    """A pipeline stage (as a shape summarises it) that passes on every document it gets: ``$match`` (the shape's
    filter), ``$project``, ``$sort`` (not ``$sortByCount``, a group), and ``$limit`` where ``limited`` counts only
    the executions that returned under it."""
    return stage in ("$match", "$project") or stage.startswith("$sort{") or (limited and stage == "$limit")


def _returned_whole(stats: ShapeStats) -> tuple[int, int, str] | None:
    """The executions of a find or pipeline that returned everything its filter matched, the documents they
    returned, and what to add when saying so; None when the shape's replies say nothing of what it matched: a
    ``$group`` or ``$count`` (it returns less than it matched), a cursor continued by ``getMore``, a skip, or a limit
    reached in most executions (``UNDER_LIMIT_SHARE``). An execution with a limit that returned fewer documents than
    its limit returned all it matched; those that reached it are left out (they matched that many or more)."""
    shape = stats.shape
    limited = shape.has_option("limit")
    if shape.op == "aggregate" and not all(keeps_matches(stage, limited) for stage in shape.stages):
        return None
    if not limited:
        return None if stats.getmores else (stats.measured, stats.nreturned, "")
    if shape.has_option("skip") or not stats.under_limit or stats.under_limit < UNDER_LIMIT_SHARE * stats.executions:
        return None
    return (stats.under_limit, stats.under_limit_returned,
            f" ({stats.under_limit:,} of {stats.executions:,} executions returned under their limit)")


def _from_sample(result: CollectionFields, sample: SampleStatistics) -> None:
    documents = sample.documents[:_LENGTH_SAMPLE]
    total = sample.documents_seen
    for name in list(result.facts):
        facts = result.facts[name]
        lengths = [len(value) for document in documents for value in path_values(document, name)[0]
                   if isinstance(value, str)]
        source = f"the data sample ({len(documents):,} documents)"
        if lengths:
            facts.average_bytes, facts.longest, facts.source = sum(lengths) / len(lengths), max(lengths), source
        values = {_hashable(value) for document in documents for value in path_values(document, name)[0] or [None]}
        facts.distinct = len(values) if len(values) <= DISTINCT_CAP else None
        seen = [(facts.distinct, len(documents))]
        facts.values = facts.distinct if facts.distinct == 1 or few_values_shown(seen) else None
        facts.equalities, facts.source, facts.sampled = len(documents), source, True
        selectivity = sample.selectivity(name)
        if selectivity is None or selectivity <= 0:
            continue
        result.matches[frozenset({name})] = (total * selectivity, f"by the data sample, a value of {name} matches "
                                             f"{total * selectivity:,.1f} documents")
        if total * selectivity <= FEW_RETURNED and name not in result.ordered:
            result.selective.setdefault(frozenset({name}), (total * selectivity, f"by the data sample, a value of "
                                                            f"{name} matches {total * selectivity:,.1f} documents"))


def _sorted_predicate(filter_: Filter, roles: Roles) -> bool:
    """A sorted field is also filtered on (its range is then no role of its own: the sort bounds it), or an ``$and``
    may hide one: the shape's filter is not equalities alone."""
    sorted_fields = {name for name, _ in roles.sort}
    return any(key in sorted_fields or key == "$and" for key, _ in filter_) if sorted_fields else False


def _names(fields: frozenset[str]) -> str:
    return ", ".join(sorted(fields))
