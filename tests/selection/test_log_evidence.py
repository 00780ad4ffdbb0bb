"""Evidence the log holds about the collection, each on a small hand-written log: how many values a field takes
(from the values its queries repeat) and what a limited query matched (an execution that returned under its limit
returned all it matched)."""

from __future__ import annotations

from pathlib import Path

from idxadvisor.indexes.fields import (
    FEW_VALUES_CHANCE,
    few_values_chance,
    few_values_shown,
    keeps_matches,
)
from tests.selection.test_value import (
    analyze,
    new_keys,
    only_set,
    reasons,
    scan,
    shared_prefix_log,
)

TIERS = "abcd"


def counts_of(field: str, repeat: int, values: str = TIERS, **extra: object) -> list[dict]:
    return scan([{field: value} for value in values], repeat=repeat, op="aggregate", **extra)


def served(report) -> dict[str, tuple[str | None, float | None]]:
    return {shape.shape.split(" ", 2)[2]: (shape.index, shape.after) for shape in only_set(report).shapes}


# -- how many values a field takes -----------------------------------------------------------------------------------


def test_one_shape_asking_few_values_again_and_again_shows_a_field_of_few_values() -> None:
    assert few_values_shown([(4, 16)]) == 4 and few_values_shown([(2, 10)]) == 2 and few_values_shown([(8, 21)]) == 8
    # 2 values in 9 queries: a collection of 4 values would show that 1.2% of the time
    assert few_values_chance([(2, 10)], 4) < FEW_VALUES_CHANCE < few_values_chance([(2, 9)], 4)
    assert few_values_shown([(4, 12)]) is None
    assert few_values_shown([(4, 12), (3, 11)]) == 4  # a second shape's own draws add their evidence


def test_shapes_that_each_ask_a_value_or_two_say_nothing_of_the_collection() -> None:
    assert few_values_shown([(1, 500)]) is None  # one value every time: what the application asks, not the data
    assert few_values_shown([(2, 2)] * 40) is None  # 80 queries, yet no shape saw enough to tell
    assert few_values_shown([(2, 40), (None, 10)]) is None  # a shape saw more than 8 values


def test_a_field_of_four_values_leads_no_key_ahead_of_a_field_of_more(tmp_path: Path) -> None:
    # tier is asked by both shapes (the usual order would lead with it) and takes 4 values in 40 counts
    pairs = [{"tier": TIERS[number % 4], "owner": f"u{number}"} for number in range(10)]
    report = analyze(tmp_path, counts_of("tier", 40) + scan(pairs, at=5), min_saving=0)
    shapes = served(report)
    assert shapes["{owner: eq, tier: eq}"][0] == "owner_1_tier_1"
    # the count on tier reads about a quarter of the collection's 50,000 documents, not 2 keys
    assert shapes["{tier: eq} pipeline [$match, $group(_id=const; count)]"] == ("tier_1", 12_500)
    said = ("tier takes 4 values in 60 queries (the log's literal values): it leads only for shapes that fix it by "
            "equality and no field of many values (1 shape taken from it)")
    assert any(said in reason for reason in reasons(report))


def test_with_too_few_queries_to_tell_the_field_is_not_taken_for_one_of_few_values(tmp_path: Path) -> None:
    pairs = [{"tier": TIERS[number % 4], "owner": f"u{number}"} for number in range(8)]
    report = analyze(tmp_path, counts_of("tier", 8) + scan(pairs, repeat=8, at=5), min_saving=0)
    (index, after) = served(report)["{tier: eq} pipeline [$match, $group(_id=const; count)]"]
    assert index is not None and index.startswith("tier_1") and after != 12_500


def test_one_index_serves_the_pairs_and_the_count_on_the_field_of_more_values(tmp_path: Path) -> None:
    # the restaurants of the busy 8.0 log: counts by borough (5 values) and by cuisine (many), and both together
    boroughs = "ABCDE"
    pairs = [{"borough": boroughs[number % 5], "cuisine": f"c{number}"} for number in range(10)]
    operations = (counts_of("borough", 40, boroughs) + scan([{"cuisine": f"c{n}"} for n in range(10)], op="aggregate",
                                                            at=3) + scan(pairs, at=5))
    report = analyze(tmp_path, operations)
    shapes = served(report)
    assert shapes["{borough: eq, cuisine: eq}"][0] == shapes["{cuisine: eq} pipeline [$match, $group(_id=const; "
                                                             "count)]"][0] == "cuisine_1_borough_1"
    assert [("borough", 1), ("cuisine", 1)] not in new_keys(report)


def test_a_value_the_log_shows_matching_one_document_is_no_field_of_few_values(tmp_path: Path) -> None:
    # a generator re-reading the same four documents: each value of stamp finds one document (a find without a
    # limit returns it), so the count on stamp reads a key or two, not a quarter of the collection
    operations = counts_of("stamp", 40) + scan([{"stamp": value} for value in TIERS], returned=1, at=5)
    shapes = served(analyze(tmp_path, operations, min_saving=0))
    index, after = shapes["{stamp: eq} pipeline [$match, $group(_id=const; count)]"]
    assert index == "stamp_1" and after is not None and after < 10


def test_a_count_on_a_field_of_few_values_reads_what_the_log_shows_one_value_matching(tmp_path: Path) -> None:
    # finds by tier return 60 documents each (all they matched): the count reads that, not 50,000 / 4
    operations = counts_of("tier", 40) + scan([{"tier": value} for value in TIERS], returned=60, at=5)
    shapes = served(analyze(tmp_path, operations, min_saving=0))
    assert shapes["{tier: eq} pipeline [$match, $group(_id=const; count)]"] == ("tier_1", 60)


# -- what a limited query matched ------------------------------------------------------------------------------------

EMAILS = [{"email": f"user{number}@example.com"} for number in range(10)]
PAIRS = [{"email": f"user{number}@example.com", "team": f"t{number % 5}"} for number in range(10)]


def test_a_limited_query_returning_under_its_limit_shows_what_its_equalities_find(tmp_path: Path) -> None:
    report = analyze(tmp_path, scan(EMAILS, limit=10) + scan(PAIRS, at=5))
    assert new_keys(report) == [[("email", 1)]]
    assert any("fields after { email: 1 } dropped: find shop.items {email: eq} limit returns 1.0 documents per "
               "execution (20 of 20 executions returned under their limit)" in reason for reason in reasons(report))


def test_a_limited_query_that_mostly_reaches_its_limit_shows_nothing(tmp_path: Path) -> None:
    # 10 of 10: each may have matched thousands
    report = analyze(tmp_path, scan(EMAILS, limit=10, returned=10) + scan(PAIRS, at=5))
    assert [("email", 1), ("team", 1)] in new_keys(report)


def limited_alone(returned: int, limit: int) -> list[dict]:
    """shared_prefix_log's shapes, and a limited query on dst alone."""
    return shared_prefix_log(alone_returns=None) + scan([{"dst": "AMS"}, {"dst": "FRA"}], returned=returned, at=5,
                                                         limit=limit)


def test_a_limited_query_on_a_prefix_lets_one_index_serve_several_shapes(tmp_path: Path) -> None:
    report = analyze(tmp_path, limited_alone(returned=10, limit=50))
    (key,) = new_keys(report)
    assert key[0] == ("dst", 1)
    (partly,) = {detail for finding in report.findings if finding.index is not None for detail in finding.details
                 if detail.startswith("it bounds")}
    assert partly == ("it bounds { dst: 1 } of this shape and tests the rest on each document: the log's queries on "
                      "dst alone return 10.0 documents per execution (20 measured)")
    # queries that reach their limit give no figure: each shape keeps its own index
    assert len(new_keys(analyze(tmp_path / "reached", limited_alone(returned=50, limit=50)))) == 2


def test_only_stages_that_pass_on_every_document_keep_what_a_pipeline_matched() -> None:
    assert keeps_matches("$match") and keeps_matches("$project") and keeps_matches("$sort{a: 1}")
    assert not keeps_matches("$sortByCount")  # a $group by another name
    assert not keeps_matches("$group(_id=const; count)") and not keeps_matches("$count")
    assert keeps_matches("$limit", limited=True) and not keeps_matches("$limit")
