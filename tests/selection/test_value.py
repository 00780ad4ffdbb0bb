"""The value model of the index selection, each mechanism on a small hand-written log: server time saved per hour and
the --min-saving floor, free text (hashed or nothing), trailing fields the log shows add nothing, low-cardinality
fields, one order per set of fields."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from idxadvisor.models.report import IndexSet, Report
from idxadvisor.selection.choose import _search
from idxadvisor.selection.costs import Costs, worth
from idxadvisor.selection.search import Problem
from idxadvisor.selection.value import selective_options
from idxadvisor.testing import RuleCase, run_case
from tests.conftest import REPO_ROOT

NS = "shop.items"
PLOT = "A retired detective returns to the city of his youth to find the man who framed him, and finds instead " \
       "a town that forgot them both, a river that kept every secret, and a daughter he never knew he had."


def scan(filter_: dict[str, Any] | list[dict[str, Any]], repeat: int = 20, docs: int = 50_000, returned: int = 1,
         at: int = 0, millis: int = 400, op: str = "find", **extra: Any) -> list[dict[str, Any]]:
    """A collection scan ``repeat`` times a minute apart; a list of filters cycles through their literal values."""
    filters = filter_ if isinstance(filter_, list) else [filter_]
    command = ({"find": "items", **extra} if op == "find" else
               {"aggregate": "items", "pipeline": [{"$match": {}}, {"$group": {"_id": None, "n": {"$sum": 1}}}]})
    runs = []
    for number, literal in enumerate(filters):
        body = dict(command, filter=literal) if op == "find" else {
            **command, "pipeline": [{"$match": literal}, *command["pipeline"][1:]]}
        runs.append({"ns": NS, "command": body, "plan": "COLLSCAN", "keysExamined": 0, "docsExamined": docs,
                     "nreturned": returned, "repeat": max(1, repeat // len(filters)), "every": 60,
                     "at": at + number * 7, "durationMillis": millis})
    return runs


def analyze(tmp_path: Path, operations: list[dict[str, Any]], **config: Any) -> Report:
    tmp_path.mkdir(parents=True, exist_ok=True)
    return run_case(RuleCase("IX004", "value", {"operations": operations, "config": config}), tmp_path, REPO_ROOT)


def only_set(report: Report) -> IndexSet:
    (index_set,) = report.index_sets
    return index_set


def new_keys(report: Report) -> list[list[tuple[str, int | str]]]:
    return [index.key for index_set in report.index_sets for index in index_set.indexes if index.status == "new"]


def reasons(report: Report) -> list[str]:
    return [skip.reason for skip in report.skipped] + [item.reason for index_set in report.index_sets
                                                        for item in index_set.left_out]


def test_every_suggestion_states_the_server_time_it_saves_per_hour(tmp_path: Path) -> None:
    # 20 scans of 400 ms in 19 minutes: 8 s of server time, about 25 s per hour, nearly all of it saved
    report = analyze(tmp_path, scan({"sku": "A-1"}))
    (suggestion,) = report.suggested_indexes
    assert suggestion.key == [("sku", 1)]
    assert suggestion.saving_s_per_hour is not None and 20 < suggestion.saving_s_per_hour < 26
    (index,) = [index for index in only_set(report).indexes if index.status == "new"]
    assert index.saving_s_per_hour == suggestion.saving_s_per_hour
    (finding,) = [finding for finding in report.findings if finding.index is not None]
    assert finding.index.saving_s_per_hour == suggestion.saving_s_per_hour
    assert any(detail.startswith("the index saves about 2") for detail in finding.details)
    totals = only_set(report).totals
    assert totals.seconds_saved == suggestion.saving_s_per_hour and totals.min_saving == 0.5


def test_an_index_under_the_floor_is_not_suggested_and_says_why(tmp_path: Path) -> None:
    # 4 scans of 20 ms in an hour: 0.08 s of server time per hour
    operations = scan({"sku": "A-1"}, repeat=4, millis=20) + scan({"x": 1}, repeat=1, at=3600)
    report = analyze(tmp_path, operations)
    assert new_keys(report) == [] and report.suggested_indexes == []
    (reason,) = [reason for reason in reasons(report) if reason.startswith("IX004: index selection")]
    assert "below the floor: { sku: 1 } would save 0.0" in reason and "under --min-saving 0.5" in reason
    lowered = analyze(tmp_path / "lowered", operations, min_saving=0.01)
    assert new_keys(lowered) == [[("sku", 1)]]


def test_suggestions_are_ranked_by_the_server_time_they_save(tmp_path: Path) -> None:
    report = analyze(tmp_path, scan({"a": 1}, millis=100) + scan({"b": 1}, millis=900, at=3))
    assert [suggestion.key for suggestion in report.suggested_indexes] == [[("b", 1)], [("a", 1)]]


def test_free_text_gets_a_hashed_index_for_pure_equality(tmp_path: Path) -> None:
    plots = [{"plot": PLOT + str(number)} for number in range(10)]
    report = analyze(tmp_path, scan(plots))
    assert new_keys(report) == [[("plot", "hashed")]]
    (finding,) = [finding for finding in report.findings if finding.index is not None]
    assert "plot holds free text (20" in " ".join(finding.details) and "plot is hashed" in " ".join(finding.details)
    (left,) = only_set(report).left_out
    assert left.key == [("plot", 1)] and "proposed as { plot: \"hashed\" }" in left.reason


def test_free_text_under_a_range_gets_no_index_and_says_why(tmp_path: Path) -> None:
    ranges = [{"plot": {"$gt": PLOT + str(number)}} for number in range(10)]
    report = analyze(tmp_path, scan(ranges))
    assert new_keys(report) == []
    assert not any(pair[0] == "plot" and pair[1] == 1 for suggestion in report.suggested_indexes
                   for pair in suggestion.key)


def test_two_free_text_fields_get_no_index(tmp_path: Path) -> None:
    both = [{"plot": PLOT + str(number), "fullplot": PLOT * 3 + str(number)} for number in range(10)]
    report = analyze(tmp_path, scan(both))
    assert new_keys(report) == []
    assert any("an index holds one hashed field at most" in reason for reason in reasons(report))


def test_fields_after_an_equality_that_finds_one_document_are_dropped(tmp_path: Path) -> None:
    emails = [{"email": f"user{number}@example.com"} for number in range(10)]
    pairs = [{"email": f"user{number}@example.com", "team": f"t{number % 5}"} for number in range(10)]
    report = analyze(tmp_path, scan(emails) + scan(pairs, at=5))
    assert new_keys(report) == [[("email", 1)]]
    assert any("fields after { email: 1 } dropped: find shop.items {email: eq} returns 1.0 documents" in reason
               for reason in reasons(report))
    # without the evidence (each email finds 40 documents) the second field stays
    many = analyze(tmp_path / "many", scan(emails, returned=40) + scan(pairs, at=5))
    assert [("email", 1), ("team", 1)] in new_keys(many)


def test_a_limit_or_nothing_found_is_no_evidence_of_selectivity(tmp_path: Path) -> None:
    emails = [{"email": f"user{number}@example.com"} for number in range(10)]
    pairs = [{"email": f"user{number}@example.com", "team": f"t{number % 5}"} for number in range(10)]
    limited = analyze(tmp_path, scan(emails, limit=1) + scan(pairs, at=5))
    assert [("email", 1), ("team", 1)] in new_keys(limited)
    absent = analyze(tmp_path / "absent", scan(emails, returned=0) + scan(pairs, at=5))
    assert [("email", 1), ("team", 1)] in new_keys(absent)


def test_a_two_valued_field_does_not_lead_for_a_shape_with_a_field_of_more_values(tmp_path: Path) -> None:
    # active is asked true and false again and again, and by every shape: the usual order would lead with it
    counts = [{"active": value} for value in (True, False)]
    pairs = [{"active": number % 2 == 0, "owner": f"u{number}"} for number in range(10)]
    report = analyze(tmp_path, scan(counts, repeat=60, op="aggregate") + scan(pairs, at=5))
    served = {shape.shape.split(" ", 2)[2]: shape.index for shape in only_set(report).shapes}
    assert served["{active: eq, owner: eq}"] == "owner_1_active_1"
    assert not (served["{active: eq} pipeline [$match, $group(_id=const; count)]"] or "").startswith("owner")


def test_a_count_on_a_two_valued_field_reads_half_the_collection(tmp_path: Path) -> None:
    # the log does not show what the count matched: an index on a field of two values reads about half
    counts = [{"active": value} for value in (True, False)]
    report = analyze(tmp_path, scan(counts, repeat=60, op="aggregate", millis=200), min_saving=0)
    (shape,) = [shape for shape in only_set(report).shapes if "active" in shape.shape]
    assert shape.before == 50_000 and shape.after == 25_000


def test_one_order_per_set_of_fields() -> None:
    # two orders of { a, b } each serve a shape of their own: the set keeps one, and says the other merged into it
    problem = Problem(weights=[1.0, 1.0], today=[100.0, 100.0], options=[{0: 1.0}, {1: 1.0}],
                      write_costs=[0.5, 0.5], fields=[2, 2], budget=2)
    keys = [(("a", 1), ("b", 1)), (("b", 1), ("a", 1))]
    solution, _, excluded = _search(problem, keys, 0.5)
    assert len(solution.chosen) == 1
    assert any(reason.startswith("merged into { ") and "one order for the fields a, b" in reason
               for reason in excluded.values())


def test_no_busy_collection_gets_two_orders_of_the_same_fields(tmp_path: Path) -> None:
    orders = [{"a": number, "b": number + 1, "c": number + 2} for number in range(10)]
    swapped = [{"b": number, "c": number + 1} for number in range(10)]
    firsts = [{"c": number} for number in range(10)]
    report = analyze(tmp_path, scan(orders, returned=30) + scan(swapped, returned=30, at=3)
                     + scan(firsts, returned=30, at=5), min_saving=0)
    fields = [frozenset(name for name, _ in key) for key in new_keys(report)]
    assert fields and len(fields) == len(set(fields))


def test_per_finding_advice_states_the_saving_and_keeps_the_floor(tmp_path: Path) -> None:
    report = analyze(tmp_path, scan({"sku": "A-1"}), index_selection="per-finding")
    (suggestion,) = report.suggested_indexes
    assert suggestion.saving_s_per_hour is not None and 20 < suggestion.saving_s_per_hour < 26
    small = analyze(tmp_path / "small", scan({"sku": "A-1"}, repeat=4, millis=20) + scan({"x": 1}, repeat=1, at=3600),
                    index_selection="per-finding")
    assert small.suggested_indexes == []
    assert any(skip.reason.startswith("IX004: below the floor: { sku: 1 } would save 0.0") for skip in small.skipped)


def shared_prefix_log(alone_returns: int | None) -> list[dict[str, Any]]:
    """Three shapes fixing ``dst`` and, for two of them, one more field; ``alone_returns``: what the log's own query on
    ``dst`` alone returns per execution (None: no such query)."""
    operations = (scan([{"dst": "JFK", "cs": "Y"}, {"dst": "LHR", "cs": ""}], returned=1)
                  + scan([{"dst": "CDG", "stops": {"$gt": 0}}, {"dst": "SFO", "stops": {"$gt": 1}}], returned=3, at=3))
    if alone_returns is not None:
        operations += scan([{"dst": "AMS"}, {"dst": "FRA"}], returned=alone_returns, at=5)
    return operations


def test_one_index_whose_equality_prefix_serves_several_shapes_partly_replaces_narrow_ones(tmp_path: Path) -> None:
    # the log's queries on dst alone return 10 documents: an index led by dst reads at most 20 keys and documents for
    # each of the three shapes instead of 50,000; a second index would save 18 of 50,000 more: under the floor
    report = analyze(tmp_path, shared_prefix_log(alone_returns=10))
    (key,) = new_keys(report)
    assert key[0] == ("dst", 1)
    (index,) = [index for index in only_set(report).indexes if index.status == "new"]
    assert len(index.shapes) == 3
    left = {tuple(item.key): item.reason for item in only_set(report).left_out}
    assert "the set's indexes serve its shapes for more" in left[(("dst", 1), ("stops", 1))]
    (partly,) = [detail for finding in report.findings if finding.index is not None for detail in finding.details
                 if detail.startswith("it bounds")]
    assert partly == ("it bounds { dst: 1 } of this shape and tests the rest on each document: the log's queries on "
                      "dst alone return 10.0 documents per execution (20 measured)")


def test_without_the_logs_figure_for_the_prefix_each_shape_keeps_its_own_index(tmp_path: Path) -> None:
    # no query on dst alone: what { dst: 1 } reads for the other shapes is unknown, so it counts for nothing
    assert sorted(new_keys(analyze(tmp_path, shared_prefix_log(alone_returns=None)))) == [
        [("dst", 1), ("cs", 1)], [("dst", 1), ("stops", 1)]]
    # a query returning a first batch (101 documents) may have matched more: no figure either
    first_batch = new_keys(analyze(tmp_path / "batch", shared_prefix_log(alone_returns=101)))
    assert len(first_batch) == 2 and [("dst", 1)] not in first_batch


def test_a_query_whose_sorted_field_is_also_a_range_gives_no_figure_for_its_equalities(tmp_path: Path) -> None:
    # { dst: eq, t: range } sorted by t: the range is no role of its own (the sort bounds it), yet the query returns
    # what dst and t match, not what dst alone matches
    operations = shared_prefix_log(alone_returns=None) + scan(
        [{"dst": "AMS", "t": {"$gt": 5}}, {"dst": "FRA", "t": {"$gt": 6}}], returned=10, at=5, sort={"t": -1})
    keys = new_keys(analyze(tmp_path, operations))
    assert [("dst", 1), ("cs", 1)] in keys and [("dst", 1), ("stops", 1)] in keys


class _CountedDemand:
    """What ``selective_options`` reads of a shape, counting how often it reads its roles."""

    reads = 0

    def __init__(self, equality: tuple[str, ...], returned: float) -> None:
        self._roles = SimpleNamespace(equality=equality)
        self.served_cost = returned

    @property
    def roles(self) -> SimpleNamespace:
        _CountedDemand.reads += 1
        return self._roles


def _selective_by_definition(costs: Costs, demands: list, keys: list, fields: Any) -> None:
    """Every key against every shape, in order: what ``selective_options`` gives, the definition."""
    for position, key in enumerate(keys):
        names = frozenset(name for name, _ in key)
        found = fields.selective.get(names)
        for number, demand in enumerate(demands):
            if found is None or costs.models[number] != "log" or number in costs.options[position]:
                continue
            if names <= set(demand._roles.equality):
                cost = max(2 * found[0], demand.served_cost)
                if worth(cost, costs.today[number], 0.0):
                    costs.options[position][number] = cost


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sets(st.sampled_from("abcdef"), max_size=3), st.integers(0, 50),
                          st.sampled_from(["log", "log", "estimator"])), min_size=1, max_size=40),
       st.lists(st.lists(st.sampled_from("abcdef"), min_size=1, max_size=3, unique=True), min_size=1, max_size=30),
       st.dictionaries(st.frozensets(st.sampled_from("abcdef"), min_size=1, max_size=3), st.integers(1, 30)))
def test_selective_options_give_what_trying_every_key_on_every_shape_gives(shapes: list, key_fields: list,
                                                                           selective: dict) -> None:
    demands = [_CountedDemand(tuple(sorted(equality)), returned) for equality, returned, _ in shapes]
    keys = [tuple((name, 1) for name in names) for names in key_fields]
    fields = SimpleNamespace(selective={frozenset(names): (float(found), "by the log") for names, found in
                                        selective.items()})

    def fresh() -> Costs:
        costs = Costs([100.0] * len(demands), [{} for _ in keys], [model for _, _, model in shapes])
        costs.options[0][0] = 99.0  # an option a cheaper model gave already stays
        return costs

    expected, got = fresh(), fresh()
    _selective_by_definition(expected, demands, keys, fields)
    _CountedDemand.reads = 0
    selective_options(got, demands, keys, fields)  # type: ignore[arg-type]
    assert [list(options.items()) for options in got.options] == [list(options.items()) for options in
                                                                   expected.options]
    assert _CountedDemand.reads <= len(demands)  # each shape's roles read once, not once per key
