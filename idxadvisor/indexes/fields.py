"""What a field costs and gives as an index key, from the log's literal values (``shapes.literals``) or a data
sample: how wide its keys are, how many values it takes, and which equality fields already find one or two
documents (so that fields after them add nothing).

* **Long free text**: string values averaging more than ``LONG_TEXT_BYTES`` characters. An ascending index holds each
  whole value (up to about 1 KB per key, past which the server refuses the key), so it is several times the size of
  an index on a short field, evicts more of the cache, and still answers only equality: no ascending index is made
  on such a field. A pure equality on it can use a ``hashed`` index (8 bytes a key); a range or sort cannot.
* **Low cardinality**: every equality value the log shows is one of at most ``LOW_CARDINALITY_VALUES`` (over at
  least ``MIN_EQUALITY_VALUES`` queries), or the sample holds at most that many. The collection itself holds few
  values of it when the sample says so, or when ``FEW_VALUES_QUERIES`` queries or more ask for just two values. An index that leads with such a
  field splits the collection into one or two halves; it leads only for shapes that all fix it by equality.
* **Selective equality sets**: a shape whose whole filter is equalities on some fields, without a limit, that returns
  at most ``FEW_RETURNED`` documents per execution (and some: nothing found says only that the values are absent) (or a sampled field whose value matches that few): an index on
  those fields finds those documents alone, and fields after them in a key add only width.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from idxadvisor.indexes.candidates import Roles
from idxadvisor.indexes.model import KeyPattern
from idxadvisor.indexes.sampling import SampleStatistics, _hashable, path_values
from idxadvisor.shapes.digest import ShapeStats
from idxadvisor.shapes.shape import Filter
from idxadvisor.shapes.literals import FieldLiterals

#: String values longer than this on average (characters) are free text: no ascending index on them.
LONG_TEXT_BYTES = 100
#: At most this many distinct equality values over the log's queries is a low-cardinality field.
LOW_CARDINALITY_VALUES = 2
#: Equality values the log must show before it says a field has few values.
MIN_EQUALITY_VALUES = 4
#: Queries that must ask only two values of a field before the log says the collection holds few values of it.
FEW_VALUES_QUERIES = 16
#: Documents per execution at or below which an equality set needs no further field.
FEW_RETURNED = 2.0
#: Documents a cursor's first batch returns by default: a query returning that many may have matched more.
FIRST_BATCH = 101
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

    @property
    def long_text(self) -> bool:
        return self.average_bytes is not None and self.average_bytes > LONG_TEXT_BYTES

    @property
    def low_cardinality(self) -> bool:
        return (self.distinct is not None and self.distinct <= LOW_CARDINALITY_VALUES
                and self.equalities >= MIN_EQUALITY_VALUES)

    @property
    def few_values(self) -> bool:
        """The collection itself holds few values of the field: the sample says so, or the queries ask for two
        different ones again and again (one value asked every time says only what the application asks for)."""
        return self.low_cardinality and (self.sampled or (self.distinct == LOW_CARDINALITY_VALUES
                                                          and self.equalities >= FEW_VALUES_QUERIES))

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
    result = CollectionFields()
    for stats in shapes:
        for name, literals in stats.literals.fields.items():
            if name not in merged:
                merged[name] = FieldLiterals()
            # the most values one shape saw (a workload file keeps no checksum to unite shapes by): a lower bound
            merged[name].merge(replace(literals, distinct=set()))
        if stats.shape.known:
            roles = roles_of(stats)
            result.ordered.update(roles.range, (name for name, _ in roles.sort))
        _selective_shape(stats, roles_of, result)
    for name, literals in merged.items():
        result.facts[name] = FieldFacts(name, literals.average_string_bytes, literals.longest,
                                        literals.distinct_values, literals.equalities)
    result.matches = {fields: (returned / runs, how) for fields, (returned, runs, how) in result._matched.items()}
    if sample is not None and len(sample):
        _from_sample(result, sample)
    return result


def _selective_shape(stats: ShapeStats, roles_of: Callable[[ShapeStats], Roles], result: CollectionFields) -> None:
    shape = stats.shape
    if not shape.known or shape.op not in ("find", "aggregate") or shape.has_option("limit") or not stats.measured:
        return
    if shape.op == "aggregate" and any(not stage.startswith(("$match", "$project", "$sort")) for stage in shape.stages):
        return  # a $group or $count returns less than the documents it matched
    roles = roles_of(stats)
    if not roles.equality or roles.range or roles.residual or roles.has_or or _sorted_predicate(shape.filter, roles):
        return
    returned = stats.nreturned / stats.measured
    fields = frozenset(roles.equality)
    if stats.nreturned and not stats.getmores and returned < FIRST_BATCH:  # else the cursor may have held more
        held_returned, held_runs, _ = result._matched.get(fields, (0, 0, ""))
        returned_all, runs = held_returned + stats.nreturned, held_runs + stats.measured
        result._matched[fields] = (returned_all, runs, f"the log's queries on {_names(fields)} alone return "
                                   f"{returned_all / runs:,.1f} documents per execution ({runs:,} measured)")
    if not 0 < returned <= FEW_RETURNED:
        return  # nothing found says only that the values asked for are absent
    how = f"{shape.text} returns {returned:,.1f} documents per execution"
    held = result.selective.get(fields)
    if held is None or returned < held[0]:
        result.selective[fields] = (returned, how)


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
        facts.distinct = len(values) if len(values) <= LOW_CARDINALITY_VALUES else None
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
