"""The issue-11 model pieces on their own: implication, collation keys, hashed bounds, min/max, distinct, pipelines."""

from __future__ import annotations

import pytest

from idxadvisor.errors import UsageError
from idxadvisor.indexes.model import IndexSpec
from idxadvisor.whatif import Estimator, WhatIfQuery
from idxadvisor.whatif.collation import CollationKey, Collator, OpaqueCollator, collator_for
from idxadvisor.whatif.partial import implies, parse_partial_filter
from idxadvisor.whatif.pipeline import push_down
from idxadvisor.whatif.query import Unsupported, parse_query


def _implies(query: dict, partial: dict) -> bool:
    return implies(parse_query(query, None, None).conjuncts, parse_partial_filter(partial, (8, 0)))


@pytest.mark.parametrize(("query", "partial", "expected"), [
    ({"a": 1}, {"a": {"$lte": 1.5}}, True),
    ({"a": {"$lt": 1.6}}, {"a": {"$lte": 1.5}}, False),
    ({"a": {"$lt": 1.5}}, {"a": {"$lte": 1.5}}, True),
    ({"a": {"$lte": 1.5}}, {"a": {"$lt": 1.5}}, False),
    ({"a": "x"}, {"a": {"$lte": 1.5}}, False),                      # another canonical type
    ({"a": 3}, {"a": {"$in": [3, 5]}}, True),
    ({"a": {"$in": [3, 5]}}, {"a": {"$in": [3, 5]}}, True),         # equivalent
    ({"a": {"$in": [3, 4]}}, {"a": {"$in": [3, 5]}}, False),
    ({"a": {"$lt": 6}}, {"a": {"$in": [3, 5]}}, False),
    ({"a": 5, "b": 5, "x": 1}, {"$or": [{"a": 3}, {"$and": [{"a": 5}, {"b": 5}]}]}, True),
    ({"a": 5, "b": 1}, {"$or": [{"a": 3}, {"$and": [{"a": 5}, {"b": 5}]}]}, False),
    ({"a": {"$ne": None}}, {"a": {"$exists": True}}, True),
    ({"a": None}, {"a": {"$exists": True}}, False),
    ({"a": {"$in": [1, None]}}, {"a": {"$exists": True}}, False),
    ({"$or": [{"a": 1}, {"a": 2}]}, {"a": {"$gte": 0}}, True),        # an $or of equalities is an $in
])
def test_partial_filter_implication(query: dict, partial: dict, expected: bool) -> None:
    assert _implies(query, partial) is expected


def test_partial_filters_outside_the_partial_language_are_unsupported() -> None:
    with pytest.raises(Unsupported):
        parse_partial_filter({"a": {"$ne": 1}}, (8, 0))


def test_en_collation_keys_order_and_equality() -> None:
    strength2 = collator_for({"locale": "en_US", "strength": 2})
    strength3 = collator_for({"locale": "en"})
    assert strength2 is not None and strength3 is not None
    assert strength2.key("FOO") == strength2.key("foo") and isinstance(strength2.key("x"), CollationKey)
    assert strength2.key("a") < strength2.key("B") < strength2.key("c")      # binary order would put B first
    assert strength3.key("a") < strength3.key("A") < strength3.key("b")      # lower case first at strength 3
    assert strength2.key(" z") < strength2.key("_") < strength2.key("0") < strength2.key("a")
    with pytest.raises(Unsupported):
        strength2.key("café")


def test_collations_the_model_cannot_order_are_exact_without_strings() -> None:
    opaque = collator_for({"locale": "da"})  # Danish contracts "aa" and puts upper case first
    assert isinstance(opaque, OpaqueCollator)
    assert opaque.transform({"a": [1, 2.5]}) == {"a": [1, 2.5]}
    with pytest.raises(Unsupported):
        opaque.transform({"a": "x"})
    assert collator_for({"locale": "simple"}) is None


def test_french_canadian_orders_ascii_as_english_and_refuses_accents() -> None:
    french, english = collator_for({"locale": "fr_CA"}), collator_for({"locale": "en"})
    assert isinstance(french, Collator) and isinstance(english, Collator)
    words = ["b", "A", "a", "_x", "10", "9", "B-c"]
    assert sorted(words, key=french.key) == sorted(words, key=english.key) == ["_x", "10", "9", "a", "A", "b", "B-c"]
    with pytest.raises(Unsupported):
        french.key("côte")  # the backwards secondary level orders accents: not modelled


def test_collated_index_serves_only_queries_in_its_collation() -> None:
    docs = [{"_id": i, "s": s} for i, s in enumerate(["foo", "FOO", "bar", "Foo", "baz"])]
    index = IndexSpec.from_document({"key": {"s": 1}, "collation": {"locale": "en", "strength": 2}})
    estimator = Estimator(docs)
    same = estimator.explain(WhatIfQuery(filter={"s": "foo"}, collation={"locale": "en", "strength": 2}), [index])
    assert (same["planSummary"], same["nReturned"], same["totalKeysExamined"]) == ("IXSCAN { s: 1 }", 3, 3)
    assert same["indexBounds"]["s"][0].startswith('[CollationKey("foo")')
    simple = estimator.explain(WhatIfQuery(filter={"s": "foo"}), [index])
    assert (simple["planSummary"], simple["nReturned"]) == ("COLLSCAN", 1)
    covered = estimator.explain(WhatIfQuery(filter={"s": "foo"}, projection={"_id": 0, "s": 1},
                                            collation={"locale": "en", "strength": 2}), [index])
    assert "FETCH" in covered["stages"]  # collation keys cannot rebuild the strings


def test_hashed_bounds_are_the_servers_hashes_and_always_fetch() -> None:
    docs = [{"_id": i, "a": i % 4} for i in range(20)]
    result = Estimator(docs).explain(WhatIfQuery(filter={"a": 1}, projection={"_id": 0, "a": 1}),
                                     [IndexSpec.from_key({"a": "hashed"})])
    assert result["indexBounds"] == {"a": ["[5902408780260971510, 5902408780260971510]"]}
    assert result["planSummary"] == 'IXSCAN { a: "hashed" }'
    assert (result["nReturned"], result["totalKeysExamined"], result["totalDocsExamined"]) == (5, 5, 5)
    arrays = Estimator([{"a": [1, 2]}]).explain(WhatIfQuery(filter={"a": 1}), [IndexSpec.from_key({"a": "hashed"})])
    assert arrays["error"]["code"] == 16766


def test_partial_index_holds_only_its_documents() -> None:
    docs = [{"_id": i, "x": i, "a": i} for i in range(10)]
    index = IndexSpec.from_document({"key": {"x": 1}, "partialFilterExpression": {"a": {"$lt": 5}}})
    estimator = Estimator(docs)
    used = estimator.explain(WhatIfQuery(filter={"x": {"$gte": 0}, "a": {"$lt": 5}}), [index])
    assert (used["planSummary"], used["totalKeysExamined"], used["nReturned"]) == ("IXSCAN { x: 1 }", 5, 5)
    refused = estimator.explain(WhatIfQuery(filter={"x": 2}), [index])
    assert refused["planSummary"] == "COLLSCAN"
    hinted = estimator.explain(WhatIfQuery(filter={"x": {"$gte": 0}}, hint="x_1"), [index])
    assert (hinted["nReturned"], hinted["totalKeysExamined"]) == (5, 5)  # the server returns only what it holds
    assert any("SERVER-26413" in note for note in hinted["notes"])


def test_min_max_scans_the_key_range_and_reports_server_errors() -> None:
    docs = [{"_id": i, "a": i} for i in range(10)]
    index = IndexSpec.from_key({"a": 1})
    estimator = Estimator(docs)
    result = estimator.explain(WhatIfQuery(min={"a": 3}, max={"a": 7}, hint={"a": 1}), [index])
    assert (result["nReturned"], result["totalKeysExamined"], result["totalDocsExamined"]) == (4, 4, 4)
    assert result["keyRange"]["startKey"] == {"a": 3} and result["keyRange"]["endKeyInclusive"] is False
    no_hint = estimator.explain(WhatIfQuery(min={"a": 3}), [index])
    assert no_hint["error"]["code"] == 51173
    backwards = estimator.explain(WhatIfQuery(min={"a": 7}, max={"a": 3}, hint="a_1"), [index])
    assert backwards["error"]["code"] == 51175


def test_distinct_scan_reads_one_key_per_value() -> None:
    docs = [{"_id": i, "a": i % 5, "b": i} for i in range(50)]
    estimator = Estimator(docs)
    scan = estimator.explain(WhatIfQuery(command="distinct", key="a"), [IndexSpec.from_key({"a": 1})])
    assert (scan["stages"], scan["nReturned"], scan["totalKeysExamined"]) == (
        ["PROJECTION_COVERED", "DISTINCT_SCAN"], 5, 5)
    bounded = estimator.explain(WhatIfQuery(command="distinct", key="a", filter={"a": {"$lt": 3}}),
                                [IndexSpec.from_key({"a": 1})])
    assert (bounded["nReturned"], bounded["totalKeysExamined"]) == (3, 4)  # the key past the bounds counts
    scanned = estimator.explain(WhatIfQuery(command="distinct", key="b", filter={"a": 1}), [IndexSpec.from_key({"a": 1})])
    assert (scanned["planSummary"], scanned["nReturned"]) == ("IXSCAN { a: 1 }", 10)


def test_pipeline_push_down() -> None:
    pushed = push_down([{"$match": {"a": 1}}, {"$match": {"b": 2}}, {"$sort": {"c": 1}}, {"$limit": 5},
                        {"$project": {"_id": 0, "c": 1}}])
    assert pushed.filter == {"$and": [{"a": 1}, {"b": 2}]} and pushed.sort == {"c": 1} and pushed.limit == 5
    assert pushed.projection == {"_id": 0, "c": 1} and pushed.later == ["$limit", "$project"]
    assert push_down([{"$match": {"a": 1}}, {"$count": "n"}]).tail == "count"
    with pytest.raises(Unsupported):
        push_down([{"$unwind": "$a"}])
    with pytest.raises(Unsupported):
        push_down([{"$group": {"_id": "$a", "n": {"$sum": 1}}}])


def test_aggregate_count_plans_like_a_count_without_a_count_stage() -> None:
    docs = [{"_id": i, "a": i} for i in range(10)]
    result = Estimator(docs).explain(WhatIfQuery(command="aggregate", pipeline=(
        {"$match": {"a": {"$gte": 5}}}, {"$count": "n"})), [IndexSpec.from_key({"a": 1})])
    assert result["stages"] == ["COUNT_SCAN"] and result["pipeline"] == ["$cursor", "$count"]


def test_hints_by_name_and_their_errors() -> None:
    docs = [{"_id": i, "a": i} for i in range(5)]
    estimator = Estimator(docs)
    by_name = estimator.explain(WhatIfQuery(filter={"a": 2}, hint="a_1"), [IndexSpec.from_key({"a": 1})])
    assert by_name["planSummary"] == "IXSCAN { a: 1 }"
    unknown = estimator.explain(WhatIfQuery(filter={"a": 2}, hint="nope"), [IndexSpec.from_key({"a": 1})])
    assert unknown["error"]["codeName"] == "BadValue"
    with pytest.raises(UsageError):
        estimator.explain(WhatIfQuery(filter={"a": 2}), [IndexSpec.from_key({"a": 1})], "nope")
    natural = estimator.explain(WhatIfQuery(filter={"a": 2}, hint={"$natural": -1}), [IndexSpec.from_key({"a": 1})])
    assert natural["planSummary"] == "COLLSCAN" and natural["plan"]["direction"] == "backward"


def test_wildcard_keys_follow_the_server_key_generator() -> None:
    from idxadvisor.whatif.bsonorder import UNDEFINED
    from idxadvisor.whatif.wildcard import build_wildcard_keys

    spec = IndexSpec.from_key({"$**": 1})
    keys = build_wildcard_keys(spec, None, [{"_id": 1, "a": [1, [2, 3], {"b": 4}], "c": [], "d": {}, "e.f": 5}])
    found = {(path[1], value) for path, value, _ in keys.entries}
    from idxadvisor.whatif.bsonorder import sort_key

    assert found == {("a", sort_key(1)), ("a", sort_key([2, 3])), ("a.b", sort_key(4)), ("c", sort_key(UNDEFINED)),
                     ("d", sort_key({}))}  # _id is not indexed, "e.f" is not queryable
    assert keys.multikey == {"a", "c"}


def test_wildcard_expansion_counts_the_next_fields_key_past_its_bounds() -> None:
    docs = [{"_id": i, "a": i, "b": i} for i in range(10)]
    estimator = Estimator(docs)
    result = estimator.explain(WhatIfQuery(filter={"a": {"$in": [2.0, 9.0]}}), [IndexSpec.from_key({"$**": 1})])
    assert result["winningIndex"] == {"$_path": 1, "a": 1}
    assert result["indexBounds"] == {"$_path": ['["a", "a"]'], "a": ["[2.0, 2.0]", "[9.0, 9.0]"]}
    # (a, 2), (a, 3) reveals the gap, (a, 9), then the first key of path "b" ends the scan
    assert (result["nReturned"], result["totalKeysExamined"]) == (2, 4)
    hinted = estimator.explain(WhatIfQuery(filter={"z": 1}, hint={"$**": 1}), [IndexSpec.from_key({"$**": 1})])
    assert hinted["error"]["codeName"] == "NoQueryExecutionPlans"
