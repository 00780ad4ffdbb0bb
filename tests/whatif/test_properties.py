"""Properties of the estimator over random samples, indexes and predicates (Hypothesis).

The plan the model builds must return exactly the documents mongomock's matcher accepts (respecting
limit and skip); a plan on an index holding every field the query uses is covered and reads no documents;
fetches never exceed keys; and with the plan fixed by
a hint and no limit/skip, the counters do not depend on the order the documents were inserted in.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st
from mongomock.filtering import filter_applies

from idxadvisor.indexes.model import IndexSpec
from idxadvisor.whatif import Estimator, WhatIfQuery
from idxadvisor.whatif.query import matcher_filter, parse_query

FIELDS = ["a", "b", "c", "d.x"]

scalars = st.one_of(st.integers(-2, 3), st.sampled_from([0.5, 2.5]), st.sampled_from(["x", "y", "z"]), st.none())
ordered = st.one_of(st.integers(-2, 3), st.sampled_from(["x", "y", "z"]))
values = st.one_of(scalars, st.lists(scalars, max_size=3))
documents = st.lists(
    st.fixed_dictionaries({}, optional={
        "a": values,
        "b": values,
        "c": scalars,
        "d": st.one_of(st.fixed_dictionaries({}, optional={"x": values, "y": scalars}),
                       st.lists(st.fixed_dictionaries({}, optional={"x": scalars}), max_size=2)),
    }),
    max_size=14,
)


def _leaf(path: str) -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(
        scalars.map(lambda v: {path: v}),
        st.lists(scalars, min_size=1, max_size=3).map(lambda vs: {path: {"$in": vs}}),
        st.tuples(st.sampled_from(["$gt", "$gte", "$lt", "$lte"]), ordered).map(lambda t: {path: {t[0]: t[1]}}),
        st.tuples(ordered, ordered).map(lambda t: {path: {"$gte": t[0], "$lte": t[1]}}),
        scalars.map(lambda v: {path: {"$ne": v}}),
        st.lists(scalars, min_size=1, max_size=2).map(lambda vs: {path: {"$nin": vs}}),
        st.booleans().map(lambda b: {path: {"$exists": b}}),
    )


leaves = st.sampled_from(FIELDS).flatmap(_leaf)
filters = st.one_of(
    st.just({}),
    leaves,
    st.lists(leaves, min_size=2, max_size=3).map(lambda ls: {"$and": ls}),
    st.lists(leaves, min_size=2, max_size=3).map(lambda ls: {"$or": ls}),
)
indexes = st.tuples(
    st.lists(st.sampled_from(FIELDS), min_size=1, max_size=3, unique=True),
    st.lists(st.sampled_from([1, -1]), min_size=3, max_size=3),
    st.booleans(),
).map(lambda t: IndexSpec.from_key(dict(zip(t[0], t[1])), sparse=t[2]))


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, Any]:
    index = draw(indexes)
    sort = draw(st.one_of(st.none(), st.sampled_from(FIELDS).flatmap(
        lambda f: st.sampled_from([1, -1]).map(lambda d: {f: d}))))
    projection = draw(st.one_of(st.none(), st.just({"_id": 0, index.fields[0]: 1})))
    return {
        "docs": draw(documents),
        "index": index,
        "hint": draw(st.booleans()),
        "query": WhatIfQuery(
            command=draw(st.sampled_from(["find", "find", "count"])),
            filter=draw(filters),
            sort=sort,
            projection=projection,
            limit=draw(st.one_of(st.none(), st.integers(1, 5))),
            skip=draw(st.one_of(st.none(), st.integers(0, 3))),
        ),
    }


def _expected(docs: list[dict[str, Any]], query: WhatIfQuery) -> int:
    flt = matcher_filter(parse_query(query.filter, None, None).conjuncts)
    total = sum(1 for doc in docs if filter_applies(flt, doc))
    remaining = max(0, total - (query.skip or 0))
    return min(remaining, query.limit) if query.limit else remaining


def _explain(docs: list[dict[str, Any]], query: WhatIfQuery, index: IndexSpec, hint: bool) -> dict[str, Any]:
    docs = [dict(doc, _id=i) for i, doc in enumerate(docs)]
    return Estimator(docs).explain(query, [index], index.key if hint else None)


def _predicates(flt: dict[str, Any]) -> list[tuple[str, Any]] | None:
    """The (path, condition) pairs of a generated filter ANDed together; None when it has an $or."""
    pairs: list[tuple[str, Any]] = []
    for key, value in flt.items():
        if key == "$or":
            return None
        if key == "$and":
            for child in value:
                inner = _predicates(child)
                if inner is None:
                    return None
                pairs.extend(inner)
        else:
            pairs.append((key, value))
    return pairs


def _needs_a_document(condition: Any) -> bool:
    """Predicates whose bounds are not exact on a plain index: null equality with the field projected (the index
    cannot tell null from missing, §7) and $exists."""
    if condition is None:
        return True
    if isinstance(condition, dict):
        return "$exists" in condition or "$elemMatch" in condition or None in condition.get("$in", [0])
    return False


def _index_has_everything(query: WhatIfQuery, index: IndexSpec, result: dict[str, Any]) -> bool:
    """The plan scans this index, which holds every field the filter, sort and projection use (``_id`` excluded),
    is neither sparse nor multikey, and no predicate needs the document: then nothing needs a FETCH (§7)."""
    if query.command != "find" or query.projection is None or query.projection.get("_id", 1) or index.sparse:
        return False
    if result.get("indexName") != index.name or result.get("isMultiKey") or "COLLSCAN" in result["stages"]:
        return False
    predicates = _predicates(query.filter)
    if predicates is None:
        return False
    fields = set(index.fields)
    filtered = {path for path, _ in predicates}
    if filtered and index.fields[0] not in filtered:
        return False  # no bounds: a hinted whole-index scan applies the filter after FETCH (scanWholeIndex)
    used = filtered | set(query.sort or {}) | {f for f in query.projection if f != "_id"}
    return used <= fields and not any(_needs_a_document(condition) for _, condition in predicates)


def _check(scenario: dict[str, Any]) -> dict[str, Any]:
    docs, query, index, hint = scenario["docs"], scenario["query"], scenario["index"], scenario["hint"]
    result = _explain(docs, query, index, hint)
    assert "internal consistency" not in result.get("unsupported", ""), result
    assume("unsupported" not in result and "error" not in result)
    expected = _expected([dict(doc, _id=i) for i, doc in enumerate(docs)], query)
    produced = result["nCounted"] if query.command == "count" else result["nReturned"]
    hinted_sparse = hint and index.sparse
    if hinted_sparse:
        assert produced <= expected
    else:
        assert produced == expected, result
    if _index_has_everything(query, index, result):
        assert result["covered"] and "FETCH" not in result["stages"], result
        assert result["totalDocsExamined"] == 0, result
    if any(s in ("IXSCAN", "COUNT_SCAN") for s in result["stages"]) and "COLLSCAN" not in result["stages"]:
        assert result["totalDocsExamined"] <= result["totalKeysExamined"]
        if query.command == "find":
            assert result["nReturned"] <= result["totalKeysExamined"]
    if "COLLSCAN" in result["stages"] and not query.limit:
        assert result["totalDocsExamined"] == len(docs)
    return result


@settings(max_examples=int(__import__("os").environ.get("WHATIF_EXAMPLES", "300")), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(scenarios())
@example({"docs": [{"a": [1, 2]}, {"a": 2}, {}], "index": IndexSpec.from_key({"a": 1}), "hint": True,
          "query": WhatIfQuery(filter={"a": {"$ne": 2}})})
@example({"docs": [{"a": None}, {}, {"a": []}], "index": IndexSpec.from_key({"a": 1}), "hint": False,
          "query": WhatIfQuery(filter={"a": None}, projection={"_id": 0, "a": 1})})
@example({"docs": [{"a": []}], "index": IndexSpec.from_key({"a": 1}), "hint": False,
          "query": WhatIfQuery(filter={"$or": [{"a": 0}, {"a": {"$ne": 0}}]})})  # FETCH above OR re-read a row
@example({"docs": [{}], "index": IndexSpec.from_key({"a": 1}), "hint": False,
          "query": WhatIfQuery(command="count")})  # RECORD_STORE_FAST_COUNT counted nothing
@example({"docs": [{"a": 1, "b": 2}, {"a": 2, "b": 2}, {"a": 3}], "index": IndexSpec.from_key({"a": 1, "b": -1}),
          "hint": False, "query": WhatIfQuery(filter={"a": {"$gte": 2}, "b": {"$ne": None}}, sort={"b": 1},
                                              projection={"_id": 0, "a": 1})})  # covered: everything is in the index
def test_plan_returns_what_the_matcher_accepts(scenario: dict[str, Any]) -> None:
    _check(scenario)


@settings(max_examples=int(__import__("os").environ.get("WHATIF_EXAMPLES", "150")), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(scenarios(), st.randoms(use_true_random=False))
def test_counters_do_not_depend_on_insertion_order(scenario: dict[str, Any], rnd: Any) -> None:
    query = scenario["query"]
    query = WhatIfQuery(command=query.command, filter=query.filter, sort=query.sort, projection=query.projection)
    docs = scenario["docs"]
    first = _explain(docs, query, scenario["index"], True)
    assume("unsupported" not in first and "error" not in first)
    shuffled = list(docs)
    rnd.shuffle(shuffled)
    second = _explain(shuffled, query, scenario["index"], True)
    assume("unsupported" not in second)
    for name in ("nReturned", "nCounted", "totalKeysExamined", "totalDocsExamined", "stages", "indexBounds"):
        assert first.get(name) == second.get(name), name


def _rich_leaf(path: str) -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(
        _leaf(path),
        st.sampled_from(["^x", "y", "^z$", "^.", "x|y"]).map(lambda p: {path: {"$regex": p}}),
        st.tuples(ordered, ordered).map(lambda t: {path: {"$elemMatch": {"$gte": t[0], "$lte": t[1]}}}),
        ordered.map(lambda v: {path: {"$not": {"$gt": v}}}),
    )


rich_filters = st.one_of(
    st.sampled_from(FIELDS).flatmap(_rich_leaf),
    st.lists(st.sampled_from(FIELDS).flatmap(_rich_leaf), min_size=2, max_size=3).map(lambda ls: {"$and": ls}),
)


@st.composite
def rich_scenarios(draw: st.DrawFn) -> dict[str, Any]:
    first, second = draw(indexes), draw(indexes)
    sort_fields = draw(st.lists(st.sampled_from(FIELDS), max_size=2, unique=True))
    sort = {f: draw(st.sampled_from([1, -1])) for f in sort_fields} or None
    projection = draw(st.one_of(st.none(), st.just(dict({"_id": 0}, **{f: 1 for f in first.fields}))))
    return {
        "docs": draw(documents),
        "indexes": [first, second],
        "query": WhatIfQuery(filter=draw(rich_filters), sort=sort, projection=projection,
                             limit=draw(st.one_of(st.none(), st.integers(1, 4)))),
    }


@settings(max_examples=int(__import__("os").environ.get("WHATIF_EXAMPLES", "150")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(rich_scenarios())
def test_multi_planning_with_regex_elem_match_and_sorts(scenario: dict[str, Any]) -> None:
    docs = [dict(doc, _id=i) for i, doc in enumerate(scenario["docs"])]
    query = scenario["query"]
    result = Estimator(docs).explain(query, scenario["indexes"])
    assert "internal consistency" not in result.get("unsupported", ""), result
    assume("unsupported" not in result and "error" not in result)
    assert result["nReturned"] == _expected(docs, query)
    chosen = next((index for index in scenario["indexes"] if index.name == result.get("indexName")), None)
    if chosen is not None and _index_has_everything(query, chosen, result):
        assert result["covered"] and result["totalDocsExamined"] == 0, result
    if query.sort and not any(isinstance(_get(doc, f), list) or isinstance(doc.get("d"), list)
                              for doc in docs for f in query.sort):
        rows = {doc["_id"]: doc for doc in docs}
        keys = [tuple(_SortValue(_get(rows[i], f), d) for f, d in query.sort.items()) for i in result["returnedIds"]]
        assert keys == sorted(keys), "results are not in sort order"


class _SortValue:
    def __init__(self, value: Any, direction: int) -> None:
        from idxadvisor.whatif.bsonorder import sort_key

        self.key = sort_key(value)
        self.direction = direction

    def __lt__(self, other: "_SortValue") -> bool:
        return self.key < other.key if self.direction > 0 else self.key > other.key

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _SortValue) and self.key == other.key


def _get(doc: dict[str, Any], path: str) -> Any:
    value: Any = doc
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


grouped_docs = st.lists(st.fixed_dictionaries({
    "a": st.integers(0, 2),
    "b": st.one_of(st.integers(0, 12), st.integers(0, 12), st.integers(0, 12), st.none(),
                   st.lists(st.integers(0, 12), max_size=2)),
    "c": st.integers(0, 4),
}), min_size=20, max_size=80)
second_field = st.one_of(
    st.tuples(st.integers(0, 12), st.integers(0, 12)).map(lambda t: {"b": {"$gte": min(t), "$lte": max(t)}}),
    st.lists(st.integers(0, 12), min_size=1, max_size=3).map(lambda vs: {"b": {"$in": vs}}),
    st.integers(0, 12).map(lambda v: {"b": {"$ne": v}}),
    st.tuples(st.integers(0, 12), st.integers(0, 4)).map(lambda t: {"b": {"$gt": t[0]}, "c": {"$lte": t[1]}}),
)


@settings(max_examples=int(__import__("os").environ.get("WHATIF_EXAMPLES", "150")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(grouped_docs, st.lists(st.integers(0, 3), min_size=1, max_size=3), second_field,
       st.lists(st.sampled_from([1, -1]), min_size=3, max_size=3), st.booleans(),
       st.one_of(st.none(), st.sampled_from([{"b": 1}, {"b": -1}, {"c": 1}])), st.one_of(st.none(), st.integers(1, 4)))
def test_narrowing_point_groups_changes_nothing(docs: list[dict[str, Any]], points: list[int], more: dict[str, Any],
                                                directions: list[int], three: bool, sort: dict[str, int] | None,
                                                limit: int | None) -> None:
    """Materialising only the reachable part of each leading-point group gives the same counters."""
    from idxadvisor.whatif import scan

    fields = ["a", "b", "c"] if three else ["a", "b"]
    index = IndexSpec.from_key(dict(zip(fields, directions)))
    query = WhatIfQuery(filter={"a": {"$in": points}, **more}, sort=sort, limit=limit)
    narrowed = _explain(docs, query, index, True)
    scan.NARROW_GROUPS = False
    try:
        full = _explain(docs, query, index, True)
    finally:
        scan.NARROW_GROUPS = True
    assert narrowed == full
