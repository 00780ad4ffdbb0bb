"""Query shapes: what they keep, what they drop, and one fingerprint per query whatever logged it."""

from __future__ import annotations

import copy
import random

import orjson
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from idxadvisor.models.events import Event
from idxadvisor.parse import jsonlog
from idxadvisor.parse.profile import event_from_profile
from idxadvisor.shapes.shape import shape_of
from tests.helpers import parse_block


def shape(op: str, command: dict, ns: str = "shop.orders", **event_fields):
    return shape_of(Event(ns, op, command=command, **event_fields))[0]


def text(op: str, command: dict) -> str:
    return shape(op, command).text


# -- one query, three formats -----------------------------------------------------------------------------------

JSON_LINE = (
    '{"t":{"$date":"2024-07-09T12:00:00.000+00:00"},"s":"I",  "c":"COMMAND",  "id":51803,   "ctx":"conn12",'
    '"msg":"Slow query","attr":{"type":"command","ns":"shop.orders","appName":"shop-api","command":{"find":"orders",'
    '"filter":{"status":"shipped","customerId":{"$oid":"5c03296ff84a0a3a94418d78"},"createdAt":{"$gte":{"$date":'
    '"2024-07-01T00:00:00.000Z"}}},"sort":{"createdAt":-1},"projection":{"total":1,"_id":0},"limit":20,'
    '"lsid":{"id":{"$uuid":"3b74eb10-ca8e-4cf0-b1db-ceaeb37d53da"}},"$db":"shop"},"planSummary":"IXSCAN { status: 1 }",'
    '"keysExamined":4000,"docsExamined":4000,"hasSortStage":true,"nreturned":20,"queryHash":"4B53BE76",'
    '"planCacheKey":"1A2B3C4D","reslen":900,"durationMillis":312}}'
)
TEXT_LINE = (
    '2020-06-23T10:21:26.019+0000 I  COMMAND  [conn12] command shop.orders appName: "shop-api" command: find '
    '{ find: "orders", filter: { customerId: ObjectId(\'5c03296ff84a0a3a94418d78\'), createdAt: { $gte: '
    'new Date(1719792000000) }, status: "shipped" }, sort: { createdAt: -1.0 }, projection: { _id: 0.0, total: 1.0 }, '
    'limit: 20.0, lsid: { id: UUID("3b74eb10-ca8e-4cf0-b1db-ceaeb37d53da") }, $db: "shop" } planSummary: IXSCAN '
    '{ status: 1 } keysExamined:4000 docsExamined:4000 hasSortStage:1 cursorExhausted:1 numYields:31 nreturned:20 '
    'queryHash:4B53BE76 planCacheKey:1A2B3C4D reslen:900 locks:{} storage:{} protocol:op_msg 312ms'
)
PROFILE_DOCUMENT = {
    "op": "query", "ns": "shop.orders",
    "command": {"find": "orders", "filter": {"createdAt": {"$gte": {"$date": "2024-07-01T00:00:00Z"}},
                                             "status": "delivered", "customerId": {"$oid": "5c03296ff84a0a3a94418d79"}},
                "sort": {"createdAt": -1}, "projection": {"_id": 0, "total": 1}, "limit": 50, "$db": "shop"},
    "keysExamined": 4000, "docsExamined": 4000, "nreturned": 20, "millis": 312, "planSummary": "IXSCAN { status: 1 }",
    "queryHash": "4B53BE76", "ts": {"$date": "2024-07-09T12:00:00.000Z"},
}


def test_one_query_logged_three_ways_has_one_fingerprint() -> None:
    from_json = shape_of(jsonlog.event_from_entry(orjson.loads(JSON_LINE)))[0]
    _, (text_event,) = parse_block(TEXT_LINE + "\n", "text-log")
    from_text = shape_of(text_event)[0]
    from_profile = shape_of(event_from_profile(PROFILE_DOCUMENT))[0]
    assert from_json.fingerprint == from_text.fingerprint == from_profile.fingerprint
    assert from_json.text == ("find shop.orders {createdAt: range, customerId: eq, status: eq} sort {createdAt: -1} "
                              "projection {_id: 0, total: 1} limit")


def test_a_legacy_op_query_has_the_fingerprint_of_the_find_command() -> None:
    legacy = ("2014-04-09T23:25:32.504+0000 [conn4492] query shop.orders query: { $query: { status: \"A\", "
              "createdAt: { $gte: new Date(1) }, customerId: 5 }, $orderby: { createdAt: -1 } } planSummary: "
              "IXSCAN { status: 1 } ntoreturn:20 nscanned:21 nreturned:1 reslen:1125 1ms")
    _, (event,) = parse_block(legacy + "\n", "text-log")
    modern = shape("find", {"find": "orders", "filter": {"status": "B", "customerId": 1, "createdAt": {"$gte": 2}},
                            "sort": {"createdAt": -1}})
    assert shape_of(event)[0].fingerprint == modern.fingerprint


# -- what a shape keeps ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("op", "command", "expected"), [
    ("find", {"find": "c", "filter": {"a": 1, "b": {"$gt": 1, "$lte": 9}}}, "find shop.orders {a: eq, b: range}"),
    ("find", {"find": "c", "filter": {"a": {"$in": [1, 2, 3]}, "b": {"$nin": [1]}, "c": {"$ne": 1}}},
     "find shop.orders {a: in, b: nin, c: ne}"),
    ("find", {"find": "c", "filter": {"a": {"$exists": True}, "b": {"$not": {"$gt": 3}}, "c": {"$type": "string"}}},
     "find shop.orders {a: exists, b: not, c: type}"),
    ("find", {"find": "c", "filter": {"a": {"$regex": "^abc"}, "b": {"$regex": "abc"}, "c": {"$regex": "^a",
                                                                                               "$options": "i"}}},
     "find shop.orders {a: regex-prefix, b: regex-unanchored, c: regex-unanchored}"),
    ("find", {"find": "c", "filter": {"a": {"$regularExpression": {"pattern": "^x", "options": ""}}}},
     "find shop.orders {a: regex-prefix}"),
    ("find", {"find": "c", "filter": {"a": {"$gt": 1, "$ne": 5}}}, "find shop.orders {a: ne+range}"),
    ("find", {"find": "c", "filter": {"tags": {"$elemMatch": {"k": "x", "v": {"$gte": 2}}}}},
     "find shop.orders {tags: elemMatch{k: eq, v: range}}"),
    ("find", {"find": "c", "filter": {"scores": {"$elemMatch": {"$gte": 80, "$lt": 90}}}},
     "find shop.orders {scores: elemMatch(range)}"),
    ("find", {"find": "c", "filter": {"$or": [{"b": 2}, {"a": 1}, {"a": 7}], "c": 1}},
     "find shop.orders {$or: [{a: eq}, {b: eq}], c: eq}"),
    ("find", {"find": "c", "filter": {"$expr": {"$gt": ["$a", "$b"]}, "$text": {"$search": "x"}}},
     "find shop.orders {$expr: expr, $text: text}"),
    ("find", {"find": "c", "filter": {"loc": {"$geoWithin": {"$centerSphere": [[0, 0], 1]}}}},
     "find shop.orders {loc: geo}"),
    ("find", {"find": "c", "filter": {"a": "###", "b": {"$in": "###"}}}, "find shop.orders {a: eq, b: in}"),
    ("find", {"find": "c", "filter": {"address": {"city": "x"}, "items": [1, 2]}},
     "find shop.orders {address: eq, items: eq}"),
    ("find", {"find": "c", "filter": {}, "sort": {"b": 1, "a": -1}, "skip": 10, "limit": 5, "hint": {"b": 1}},
     "find shop.orders {} sort {b: 1, a: -1} limit skip hint:b:1"),
    ("count", {"count": "c", "query": {"a": 1}}, "count shop.orders {a: eq}"),
    ("distinct", {"distinct": "c", "key": "city", "query": {"a": 1}}, "distinct shop.orders {a: eq} key:city"),
    ("findAndModify", {"findAndModify": "c", "query": {"a": 1}, "sort": {"t": 1}, "update": {"$set": {"x": 1}},
                       "new": True}, "findAndModify shop.orders {a: eq} sort {t: 1} update new"),
    ("update", {"q": {"a": 1}, "u": {"$set": {"b": 2}}, "multi": True, "upsert": False},
     "update shop.orders {a: eq} multi"),
    ("update", {"q": {"a": 1}, "u": {"b": 2}}, "update shop.orders {a: eq} replacement"),
    ("delete", {"q": {"a": {"$lt": 3}}, "limit": 1}, "delete shop.orders {a: range} one"),
    ("delete", {"delete": "orders", "ordered": True}, "delete shop.orders <statements not logged>"),
    ("insert", {"insert": "orders", "documents": 200}, "insert shop.orders"),
    ("createIndexes", {"createIndexes": "orders", "indexes": []}, "createIndexes shop.orders"),
])
def test_shape_texts(op: str, command: dict, expected: str) -> None:
    assert text(op, command) == expected


def test_pipelines_keep_the_leading_stages_and_the_stage_sequence() -> None:
    pipeline = [
        {"$match": {"campaignId": 17, "createdAt": {"$gte": {"$date": "2026-01-01T00:00:00Z"}}}},
        {"$sort": {"createdAt": -1}}, {"$limit": 100},
        {"$lookup": {"from": "users", "localField": "userId", "foreignField": "_id", "as": "user"}},
        {"$unwind": "$user"},
        {"$group": {"_id": "$type", "n": {"$sum": 1}, "amount": {"$sum": "$amount"}}},
        {"$match": {"n": {"$gt": 5}}},
    ]
    assert text("aggregate", {"aggregate": "events", "pipeline": pipeline}) == (
        "aggregate shop.orders {campaignId: eq, createdAt: range} sort {createdAt: -1} limit pipeline [$match, "
        "$sort{createdAt: -1}, $limit, $lookup(from=users, localField=userId, foreignField=_id), $unwind($user), "
        "$group(_id=$type; $sum($amount), count), $match]")


def test_a_getmore_has_the_shape_of_its_originating_command() -> None:
    origin = {"find": "orders", "filter": {"status": "A"}, "sort": {"_id": 1}}
    getmore = shape("getMore", {"getMore": 1, "collection": "orders"}, originating_command=origin)
    assert getmore.fingerprint == shape("find", origin).fingerprint
    assert shape("getMore", {"getMore": 1}).text == "getMore shop.orders <originating command not logged>"


def test_truncated_and_unreadable_commands_have_an_unknown_shape() -> None:
    truncated = shape("find", {"find": "orders", "filter": {}}, truncated=True)
    assert truncated.text == "find shop.orders <command truncated by the server>" and not truncated.known
    assert shape("find", {}, unparsed=True).text == "find shop.orders <command could not be read>"


def test_the_longest_in_list_is_observed_not_shaped() -> None:
    small = shape_of(Event("a.b", "find", command={"find": "b", "filter": {"x": {"$in": [1, 2]}}}))
    large = shape_of(Event("a.b", "find", command={"find": "b", "filter": {"x": {"$in": list(range(500))}}}))
    assert small[0].fingerprint == large[0].fingerprint
    assert (small[1].in_length, large[1].in_length) == (2, 500)


def test_the_filter_holds_each_field_with_its_class_and_logical_branches_apart() -> None:
    from idxadvisor.shapes.shape import Branches, ElemMatch

    found = shape("find", {"find": "c", "filter": {"a": 1, "b": {"$in": [1]}, "$or": [{"c": 1}],
                                                   "d": {"$elemMatch": {"x": 1}}}})
    assert found.filter == (("$or", Branches(((("c", "eq"),),))), ("a", "eq"), ("b", "in"),
                            ("d", ElemMatch((("x", "eq"),))))


# -- properties ------------------------------------------------------------------------------------------------

FIELDS = ["a", "b", "c", "d.e", "tags"]
LITERALS = (st.integers(-1000, 1000) | st.text(max_size=5) | st.booleans() | st.none() | st.just("###")
            | st.builds(lambda n: {"$oid": f"{n:024x}"}, st.integers(0, 2**40))
            | st.builds(lambda n: {"$date": f"20{n:02d}-01-01T00:00:00.000Z"}, st.integers(10, 40))
            | st.lists(st.integers(), max_size=3) | st.dictionaries(st.sampled_from(["x", "y"]), st.integers(),
                                                                     min_size=1, max_size=2))
OPERATOR_VALUES = st.one_of(
    LITERALS,
    st.builds(lambda v: {"$gt": v}, LITERALS),
    st.builds(lambda v, w: {"$gte": v, "$lt": w}, LITERALS, LITERALS),
    st.builds(lambda vs: {"$in": vs}, st.lists(LITERALS, max_size=5)),
    st.builds(lambda v: {"$ne": v}, LITERALS),
    st.builds(lambda b: {"$exists": b}, st.booleans()),
    st.builds(lambda p: {"$regex": "^" + p}, st.text(alphabet="abc", min_size=1, max_size=3)),
    st.builds(lambda v: {"$elemMatch": {"x": v, "y": {"$gt": v}}}, LITERALS),
    st.builds(lambda v: {"$size": 2, "$elemMatch": {"x": v}}, LITERALS),
    st.builds(lambda v: {"$elemMatch": {"$elemMatch": {"$gt": v}}}, LITERALS),
)
FILTERS = st.recursive(
    st.dictionaries(st.sampled_from(FIELDS), OPERATOR_VALUES, max_size=4),
    lambda inner: st.dictionaries(st.sampled_from(FIELDS), OPERATOR_VALUES, max_size=3).flatmap(
        lambda base: st.builds(lambda branches, logical: {**base, logical: branches} if branches else base,
                               st.lists(inner, max_size=3), st.sampled_from(["$or", "$and", "$nor"]))),
    max_leaves=8,
)


def _new_literal(value, rng: random.Random):
    """Another literal of the same kind of class: the shape must not notice."""
    choices = [rng.randint(-5, 5), "other", None, True, {"$oid": "0" * 24}, [9, 9], {"z": 1}]
    return rng.choice(choices)


def vary_literals(document: dict, rng: random.Random) -> dict:
    """Every literal value of a filter (or operator document) changed; operators, field names and structure kept."""
    result = {}
    for key, value in document.items():
        if key in ("$or", "$and", "$nor"):
            result[key] = [vary_literals(branch, rng) for branch in value]
        elif key == "$in":
            result[key] = [_new_literal(v, rng) for v in range(rng.randint(0, 7))]
        elif key == "$exists":
            result[key] = not value
        elif key == "$regex":
            result[key] = "^" + "z" * rng.randint(1, 4)
        elif key == "$elemMatch":
            result[key] = vary_literals(value, rng) if isinstance(value, dict) else value
        elif key.startswith("$"):
            result[key] = _new_literal(value, rng)
        elif isinstance(value, dict) and value and next(iter(value)).startswith("$") and \
                next(iter(value)) not in ("$oid", "$date"):
            result[key] = vary_literals(value, rng)
        else:
            result[key] = _new_literal(value, rng)
    return result


def permute_keys(document, rng: random.Random):
    """Every object's keys (and every logical operator's branches) in another order."""
    if isinstance(document, list):
        return [permute_keys(item, rng) for item in document]
    if not isinstance(document, dict):
        return document
    items = list(document.items())
    rng.shuffle(items)
    result = {}
    for key, value in items:
        if key in ("$or", "$and", "$nor") and isinstance(value, list):
            value = [permute_keys(branch, rng) for branch in value]
            rng.shuffle(value)
        elif isinstance(value, dict) and value and next(iter(value)) not in ("$oid", "$date"):
            value = permute_keys(value, rng) if next(iter(value)).startswith("$") else value
        result[key] = value
    return result


def find(filter_: dict, sort: dict | None = None) -> dict:
    command = {"find": "c", "filter": filter_}
    if sort:
        command["sort"] = sort
    return command


@settings(max_examples=300, deadline=None)
@given(FILTERS, st.integers(0, 2**32))
@example({"a": {"$in": []}}, 0)
def test_literal_values_never_change_the_fingerprint(filter_: dict, seed: int) -> None:
    varied = vary_literals(filter_, random.Random(seed))
    assert shape("find", find(filter_)).fingerprint == shape("find", find(varied)).fingerprint


@settings(max_examples=300, deadline=None)
@given(FILTERS, st.integers(0, 2**32))
def test_filter_key_order_never_changes_the_fingerprint(filter_: dict, seed: int) -> None:
    permuted = permute_keys(copy.deepcopy(filter_), random.Random(seed))
    assert shape("find", find(filter_)).fingerprint == shape("find", find(permuted)).fingerprint


@settings(max_examples=200, deadline=None)
@given(FILTERS)
@example({"a": {"$size": 2, "$elemMatch": {"$elemMatch": {"$gt": 1}}}})
def test_shaping_is_idempotent(filter_: dict) -> None:
    """Shaping a query rebuilt from a shape's own structure gives that structure back, and shaping is a function of
    the query alone: the memo of finished shapes hides no difference."""
    from idxadvisor.shapes import shape as shape_module

    first = shape("find", find(filter_))
    rebuilt = rebuild_filter(first.filter)
    again = shape("find", find(rebuilt))
    assert again.filter == first.filter and again.text == first.text
    shape_module._FINISHED.clear()
    fresh = shape("find", find(copy.deepcopy(filter_)))
    assert fresh is not first
    assert (fresh.filter, fresh.text, fresh.fingerprint) == (first.filter, first.text, first.fingerprint)


_EXAMPLE_OPERAND = {"eq": 1, "in": {"$in": [1]}, "range": {"$gt": 1}, "ne": {"$ne": 1}, "nin": {"$nin": [1]},
                    "not": {"$not": {"$gt": 1}}, "exists": {"$exists": True}, "regex-prefix": {"$regex": "^a"},
                    "regex-unanchored": {"$regex": "a"}, "type": {"$type": "int"}, "size": {"$size": 1},
                    "?": "###"}


def _split_classes(text: str) -> list[str]:
    """``range+elemMatch(eq+range)`` -> ``["range", "elemMatch(eq+range)"]`` (a + inside parentheses is kept)."""
    parts, depth, current = [], 0, ""
    for char in text:
        if char == "+" and depth == 0:
            parts.append(current)
            current = ""
            continue
        depth += (char == "(") - (char == ")")
        current += char
    return [*parts, current]


def _operators_for(classes) -> dict:
    merged: dict = {}
    for name in classes:
        if name.startswith("elemMatch(") and name.endswith(")"):
            merged["$elemMatch"] = _operators_for(_split_classes(name[len("elemMatch("):-1]))
        else:
            merged.update(_EXAMPLE_OPERAND[name] if name != "eq" else {"$eq": 1})
    return merged


def rebuild_filter(shaped) -> dict:
    from idxadvisor.shapes.shape import Branches, ElemMatch

    result = {}
    for key, node in shaped:
        if isinstance(node, Branches):
            result[key] = [rebuild_filter(branch) for branch in node.filters]
        elif isinstance(node, ElemMatch):
            inner = node.inner
            body = _operators_for(inner) if inner and isinstance(inner[0], str) else rebuild_filter(inner)
            result[key] = {**_operators_for(node.also), "$elemMatch": body}
        elif isinstance(node, tuple):
            result[key] = _operators_for(node)
        else:
            result[key] = _EXAMPLE_OPERAND[node]
    return result


@pytest.mark.parametrize(("before", "after"), [
    ({"a": 1}, {"a": {"$gt": 1}}),
    ({"a": {"$in": [1]}}, {"a": {"$nin": [1]}}),
    ({"a": {"$regex": "^x"}}, {"a": {"$regex": "x"}}),
    ({"a": {"$gt": 1}}, {"a": {"$gt": 1, "$ne": 3}}),
    ({"$or": [{"a": 1}]}, {"$and": [{"a": 1}]}),
    ({"a": {"$elemMatch": {"b": 1}}}, {"a": {"b": 1}}),
])
def test_changing_an_operator_class_changes_the_fingerprint(before: dict, after: dict) -> None:
    assert shape("find", find(before)).fingerprint != shape("find", find(after)).fingerprint


@settings(max_examples=200, deadline=None)
@given(FILTERS, st.sampled_from(FIELDS), st.sampled_from(["$gt", "$in", "$ne", "$exists", "$regex"]))
def test_adding_an_operator_to_a_field_changes_the_fingerprint(filter_: dict, field: str, operator: str) -> None:
    operand = {"$gt": 1, "$in": [1], "$ne": 1, "$exists": True, "$regex": "x"}[operator]
    before = {key: value for key, value in filter_.items() if key != field}
    after = {**before, field: {operator: operand}}
    assert shape("find", find(before)).fingerprint != shape("find", find(after)).fingerprint


def test_sort_key_order_changes_the_fingerprint_and_filter_order_does_not() -> None:
    one = shape("find", find({"a": 1, "b": 2}, {"x": 1, "y": -1}))
    two = shape("find", find({"b": 5, "a": 6}, {"x": 1, "y": -1}))
    three = shape("find", find({"a": 1, "b": 2}, {"y": -1, "x": 1}))
    assert one.fingerprint == two.fingerprint != three.fingerprint
    assert shape("find", find({"a": 1}, {"x": 1})).fingerprint != shape("find", find({"a": 1}, {"x": -1})).fingerprint
