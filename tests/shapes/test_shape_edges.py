"""Shapes of unusual but legal queries: nested $elemMatch, deep nesting, canonical numbers, regex prefixes as the
planner sees them, pipelines that limit before they filter, and explain output that names no command."""

from __future__ import annotations

import json

import pytest

from idxadvisor.models.events import Event
from idxadvisor.parse import jsonlog
from idxadvisor.parse.profile import event_from_profile
from idxadvisor.shapes.digest import Digest
from idxadvisor.shapes.shape import TOO_DEEP, regex_class, regex_prefix, shape_of
from tests.helpers import json_line, slow_attr


def shape(op: str, command: dict, ns: str = "shop.orders"):
    return shape_of(Event(ns, op, command=command))[0]


def find(filter_: dict, **options) -> dict:
    return {"find": "orders", "filter": filter_, **options}


# -- $elemMatch ----------------------------------------------------------------------------------------------------


def test_an_elem_match_inside_an_elem_match_has_a_shape() -> None:
    nested = shape("find", find({"a": {"$elemMatch": {"$elemMatch": {"$gt": 1}}}}))
    assert nested.text == "find shop.orders {a: elemMatch(elemMatch(range))}"
    plain = shape("find", find({"a": {"$elemMatch": {"$gt": 1}}}))
    assert nested.fingerprint != plain.fingerprint


def test_operators_beside_an_elem_match_stay_in_the_shape() -> None:
    both = shape("find", find({"a": {"$size": 3, "$elemMatch": {"b": 1}}}))
    alone = shape("find", find({"a": {"$elemMatch": {"b": 1}}}))
    after = shape("find", find({"a": {"$elemMatch": {"b": 1}, "$size": 3}}))
    assert both.text == "find shop.orders {a: elemMatch{b: eq}+size}"
    assert both.fingerprint != alone.fingerprint
    assert both.fingerprint == after.fingerprint  # operator order within a field does not matter


def test_the_em_log_line_of_the_review_is_digested() -> None:
    line = json_line(slow_attr({"find": "b", "filter": {"a": {"$elemMatch": {"$elemMatch": {"$gt": 1}}}}}, ns="a.b"))
    digest = Digest()
    digest.add(jsonlog.event_from_entry(json.loads(line)))
    (stats,) = digest.shapes.values()
    assert stats.shape.text == "find a.b {a: elemMatch(elemMatch(range))}"


# -- depth ---------------------------------------------------------------------------------------------------------


def _nested_and(levels: int) -> dict:
    query: dict = {"x": 1}
    for _ in range(levels):
        query = {"$and": [query]}
    return query


@pytest.mark.parametrize("build", [
    _nested_and,
    lambda n: {"a": _nested_elem_match(n)},
    lambda n: {"$or": [_nested_and(n)]},
])
def test_a_filter_nested_too_deep_has_an_unknown_shape(build) -> None:
    deep = shape("find", find(build(500)))
    assert deep.unknown == TOO_DEEP and deep.text == f"find shop.orders <{TOO_DEEP}>"
    assert shape("find", find(build(20))).known  # real queries nest a few levels


def _nested_elem_match(levels: int) -> dict:
    query: dict = {"$gt": 1}
    for _ in range(levels):
        query = {"$elemMatch": query}
    return query


def test_a_group_key_nested_too_deep_has_an_unknown_shape() -> None:
    key: object = "$a"
    for _ in range(500):
        key = {"k": key}
    deep = shape("aggregate", {"aggregate": "orders", "pipeline": [{"$group": {"_id": key}}]})
    assert deep.unknown == TOO_DEEP


def test_the_deep2_log_line_of_the_review_is_digested() -> None:
    filter_text = '{"$and":[' * 500 + '{"x":1}' + "]}" * 500  # too deep for json.dumps to write
    line = json_line(slow_attr({"find": "b", "filter": "FILTER"}, ns="a.b")).replace('"FILTER"', filter_text)
    digest = Digest()
    digest.add(jsonlog.event_from_entry(jsonlog.parse_line(line.encode())))
    (stats,) = digest.shapes.values()
    assert stats.count == 1 and stats.shape.unknown == TOO_DEEP


# -- canonical Extended JSON numbers --------------------------------------------------------------------------------


@pytest.mark.parametrize(("relaxed", "canonical"), [
    ({"q": {"a": 1}, "limit": 1}, {"q": {"a": 1}, "limit": {"$numberInt": "1"}}),
    ({"q": {"a": 1}, "limit": 0}, {"q": {"a": 1}, "limit": {"$numberInt": "0"}}),
    ({"q": {"a": 1}, "limit": 1}, {"q": {"a": 1}, "limit": {"$numberDouble": "1.0"}}),
])
def test_a_delete_limit_reads_the_same_in_any_spelling(relaxed: dict, canonical: dict) -> None:
    assert shape("delete", relaxed).text == shape("delete", canonical).text


@pytest.mark.parametrize(("relaxed", "canonical"), [
    (find({"a": 1}, skip=0), find({"a": 1}, skip={"$numberInt": "0"})),
    (find({"a": 1}, skip=5), find({"a": 1}, skip={"$numberInt": "5"})),
    (find({"a": 1}, limit=0), find({"a": 1}, limit={"$numberLong": "0"})),
    (find({"a": 1}, projection={"a": 1, "b": 0}), find({"a": 1}, projection={"a": {"$numberInt": "1"},
                                                                             "b": {"$numberDouble": "0.0"}})),
    (find({"a": 1}, sort={"a": -1}), find({"a": 1}, sort={"a": {"$numberInt": "-1"}})),
])
def test_find_options_read_the_same_in_any_spelling(relaxed: dict, canonical: dict) -> None:
    assert shape("find", relaxed).text == shape("find", canonical).text


def test_the_fp1_profile_documents_of_the_review_match_their_log_lines() -> None:
    delete = event_from_profile({"op": "remove", "ns": "shop.orders", "millis": 150,
                                 "command": {"q": {"a": {"$numberInt": "1"}}, "limit": {"$numberInt": "1"}}})
    assert shape_of(delete)[0].text == "delete shop.orders {a: eq} one"
    skip = event_from_profile({"op": "query", "ns": "shop.orders", "millis": 150,
                               "command": {"find": "orders", "filter": {"a": 1}, "skip": {"$numberInt": "0"}}})
    assert shape_of(skip)[0].text == "find shop.orders {a: eq}"


def test_a_canonical_count_accumulator_is_a_count() -> None:
    relaxed = shape("aggregate", {"aggregate": "o", "pipeline": [{"$group": {"_id": "$a", "n": {"$sum": 1}}}]})
    canonical = shape("aggregate", {"aggregate": "o", "pipeline": [{"$group": {"_id": "$a",
                                                                               "n": {"$sum": {"$numberInt": "1"}}}}]})
    assert relaxed.text == canonical.text


# -- regex prefixes (IndexBoundsBuilder::simpleRegex) ----------------------------------------------------------------


@pytest.mark.parametrize(("pattern", "flags", "prefix"), [
    ("^abc", "", "abc"),
    ("abc", "", ""),  # not anchored
    ("^aa*", "", "a"),  # a character followed by * or ? is dropped (planner-semantics §3, regex6)
    ("^a*", "", ""),
    ("^a?", "", ""),
    ("^ab?c", "", "a"),
    ("^ab|c", "", ""),  # a | anywhere
    ("^a|", "", ""),
    ("^abc", "i", ""),  # case-insensitive
    ("^abc", "m", ""),  # ^ under m matches after any newline
    ("\\Aabc", "m", "abc"),  # \A does not
    ("\\Aabc", "", "abc"),
    ("^abc", "s", "abc"),
    ("^abc", "u", ""),  # any other flag
    ("^a b#c", "x", "ab"),  # x: spaces ignored, # starts a comment
    ("^a b", "", "a b"),
    ("^\\Q[\\Ewi\\Qth]some?s\\Eym", "", "[with]some?sym"),  # regex6.js
    ("^\\.a", "", ".a"),  # escaped punctuation is literal
    ("^\\d", "", ""),  # an escaped letter is a class
    ("^a.b", "", "a"),
    ("^(ab)", "", ""),
    ("^é", "", "é"),
    ("^", "", ""),
])
def test_regex_prefixes_follow_the_planner(pattern: str, flags: str, prefix: str) -> None:
    assert regex_prefix(pattern, flags) == prefix
    assert regex_class(pattern, flags) == ("regex-prefix" if prefix else "regex-unanchored")


def test_regex_options_are_read_in_every_spelling() -> None:
    as_operator = shape("find", find({"a": {"$regex": "^ab", "$options": "i"}}))
    as_value = shape("find", find({"a": {"$regularExpression": {"pattern": "^ab", "options": "i"}}}))
    assert as_operator.text == as_value.text == "find shop.orders {a: regex-unanchored}"
    assert shape("find", find({"a": {"$regex": "^ab", "$options": 3}})).text == "find shop.orders {a: regex-prefix}"


# -- pipelines -----------------------------------------------------------------------------------------------------


def test_a_match_after_a_limit_is_not_part_of_the_leading_filter() -> None:
    limited = shape("aggregate", {"aggregate": "o", "pipeline": [{"$match": {"a": 1}}, {"$limit": 5},
                                                                 {"$match": {"b": 1}}]})
    assert limited.text == "aggregate shop.orders {a: eq} limit pipeline [$match, $limit, $match]"


def test_a_match_after_a_skip_is_not_part_of_the_leading_filter() -> None:
    skipped = shape("aggregate", {"aggregate": "o", "pipeline": [{"$skip": 10}, {"$match": {"a": 1}},
                                                                 {"$sort": {"a": 1}}]})
    assert skipped.text == "aggregate shop.orders {} skip pipeline [$skip, $match, $sort{a: 1}]"


def test_pagination_keeps_both_options_and_the_filter_before_them() -> None:
    page = shape("aggregate", {"aggregate": "o", "pipeline": [{"$match": {"a": 1}}, {"$sort": {"t": -1}},
                                                              {"$skip": 20}, {"$limit": 10}]})
    assert page.text == ("aggregate shop.orders {a: eq} sort {t: -1} skip limit pipeline "
                         "[$match, $sort{t: -1}, $skip, $limit]")


def test_consecutive_matches_before_any_limit_are_one_filter() -> None:
    both = shape("aggregate", {"aggregate": "o", "pipeline": [{"$match": {"a": 1}}, {"$match": {"b": 1}}]})
    assert both.text.startswith("aggregate shop.orders {$and: [{a: eq}, {b: eq}]}")


# -- explain output without its command ------------------------------------------------------------------------------


def test_an_unknown_op_keeps_its_filter() -> None:
    unknown = shape("unknown", {"filter": {"a": 1, "b": {"$gt": 2}}})
    assert unknown.text == "unknown shop.orders {a: eq, b: range}"
    assert unknown.fingerprint != shape("find", find({"a": 1, "b": {"$gt": 2}})).fingerprint
