"""Candidate keys for a collection's workload: a key grown to serve one more shape, merges along chains of shapes,
existing indexes grown, and the directions a range takes from the collection's sorts."""

from __future__ import annotations

from idxadvisor.indexes.candidates import Roles, candidate_key, serves
from idxadvisor.indexes.model import IndexSpec
from idxadvisor.models.events import Event
from idxadvisor.rules.base import ShapeAnalysis
from idxadvisor.rules.engine import IndexRequest
from idxadvisor.selection.candidates import canonical, extend, generate
from idxadvisor.selection.demand import Demand
from idxadvisor.shapes.digest import ShapeStats
from idxadvisor.shapes.shape import shape_of


def by_name(name: str) -> tuple:
    return (name,)


def test_a_key_grows_by_the_fields_a_shape_still_needs() -> None:
    assert extend((("movie_id", 1),), Roles(equality=("movie_id", "text")), by_name, {}) == (
        ("movie_id", 1), ("text", 1))
    # equality fields the key holds already may come in any order; the rest follow
    assert extend((("text", 1), ("date", 1)), Roles(equality=("date", "movie_id", "text")), by_name, {}) == (
        ("text", 1), ("date", 1), ("movie_id", 1))
    # then the sort, then the ranges (in the direction the collection sorts them by)
    assert extend((("a", 1),), Roles(equality=("a", "b"), range=("t",)), by_name, {"t": -1}) == (
        ("a", 1), ("b", 1), ("t", -1))
    assert extend((("a", 1),), Roles(equality=("a",), sort=(("t", -1),)), by_name, {}) == (("a", 1), ("t", -1))


def test_a_key_that_serves_a_shape_already_is_its_own_growth() -> None:
    key = (("a", 1), ("t", 1))
    assert extend(key, Roles(equality=("a",), sort=(("t", -1),)), by_name, {}) == key  # scanned backwards


def test_a_key_cannot_grow_past_a_field_in_the_wrong_place() -> None:
    assert extend((("date", 1), ("text", 1)), Roles(equality=("movie_id", "text")), by_name, {}) is None
    assert extend((("a", 1), ("b", 1)), Roles(equality=("a",), range=("t",)), by_name, {}) is None
    assert extend((("a", 1), ("s", 1), ("t", 1)), Roles(equality=("a",), sort=(("s", 1), ("t", -1))), by_name, {}) \
        is None  # one part of the sort forwards, the other backwards


def demand(filter_: dict, rule: str | None = "IX001", sort: dict | None = None) -> Demand:
    command = {"find": "c", "filter": filter_, **({"sort": sort} if sort else {})}
    stats = ShapeStats(shape_of(Event("db.c", "find", command=command))[0], count=10)
    roles = Roles(equality=tuple(name for name, value in filter_.items() if not isinstance(value, dict)),
                  sort=tuple(sort.items()) if sort else (),
                  range=tuple(name for name, value in filter_.items() if isinstance(value, dict)))
    request = None
    if rule is not None:
        shared = tuple((name, 1) for name in roles.equality) + roles.sort
        analysis = ShapeAnalysis(stats, roles, candidate_key(roles, by_name), None, 0.0, None, None)
        request = IndexRequest(rule, analysis, shared)
    return Demand(stats, roles, request)


def test_merges_follow_chains_of_shapes_and_reorder_equality_fields() -> None:
    demands = [demand({"a": 1, "b": 1}), demand({"b": 1}), demand({"a": 1, "c": 1})]
    keys = [candidate.key for candidate in generate(demands, [], by_name)]
    assert (("b", 1), ("a", 1)) in keys  # { b } grown to serve { a, b } too
    merged = next(candidate for candidate in generate(demands, [], by_name) if candidate.key == (("b", 1), ("a", 1)))
    assert merged.origin == "merges the keys of several shapes"
    assert all(serves(key, demands[0].roles) or serves(key, demands[1].roles) or serves(key, demands[2].roles)
               for key in keys)


def test_an_existing_index_grows_and_an_unusable_one_is_neither_a_base_nor_a_reason_to_skip() -> None:
    existing = [IndexSpec.from_key({"_id": 1}, name="_id_"), IndexSpec.from_key({"a": 1}, name="a_1"),
                IndexSpec.from_document({"key": {"x": 1, "y": 1}, "name": "xy", "partialFilterExpression": {"v": 1}})]
    candidates = generate([demand({"a": 1, "b": 1}), demand({"x": 1, "y": 1})], existing, by_name)
    grown = next(candidate for candidate in candidates if candidate.key == (("a", 1), ("b", 1)))
    assert grown.grows == "a_1" and grown.origin == "asked for by IX001"  # and it grows a_1 as well
    assert (("x", 1), ("y", 1)) in [candidate.key for candidate in candidates]  # the partial index serves not all


def test_an_existing_index_is_no_candidate_nor_is_its_mirror_image() -> None:
    existing = [IndexSpec.from_key({"a": -1, "t": 1}, name="a_-1_t_1")]
    candidates = generate([demand({"a": 1}, sort={"t": -1})], existing, by_name)
    assert all(canonical(candidate.key) != canonical(existing[0].key) for candidate in candidates)


def test_a_grown_existing_index_says_so() -> None:
    existing = [IndexSpec.from_key({"a": 1}, name="a_1")]
    demands = [demand({"a": 1, "b": 1}, rule=None), demand({"a": 1, "b": 1, "c": {"$gt": 1}})]
    grown = [candidate for candidate in generate(demands, existing, by_name) if candidate.grows == "a_1"]
    assert [candidate.key for candidate in grown] == [(("a", 1), ("b", 1), ("c", 1))]
    assert grown[0].origin == "grows the existing index a_1"


def test_no_candidate_has_the_key_of_a_hidden_or_sparse_index() -> None:
    existing = [IndexSpec.from_document({"key": {"a": 1, "b": 1}, "name": "ab", "hidden": True}),
                IndexSpec.from_document({"key": {"x": 1}, "name": "x", "sparse": True})]
    keys = [candidate.key for candidate in generate([demand({"a": 1, "b": 1}), demand({"x": 1})], existing, by_name)]
    assert (("a", 1), ("b", 1)) not in keys and (("x", 1),) not in keys


def test_a_requested_shapes_own_key_is_the_one_its_analysis_made() -> None:
    asked = demand({"a": 1, "b": 1})
    assert asked.request is not None
    # the rules ordered the equality fields by how many executions use them, which here puts b first
    asked.request.analysis.candidate = (("b", 1), ("a", 1))
    candidates = {candidate.key: candidate.origin for candidate in generate([asked], [], by_name)}
    assert candidates == {(("a", 1), ("b", 1)): "asked for by IX001",
                          (("b", 1), ("a", 1)): "a requested shape's own key"}
