"""The index set chosen for a collection's whole workload, on workloads written to have one right answer: a prefix
family one index serves, shapes whose equality fields reorder into one chain, two unrelated access paths, existing
prefixes a new index makes redundant, a budget of one, and a write-heavy collection where the cheapest set is
smaller. Per-finding advice runs beside each, and the set is never larger."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from idxadvisor.models.report import IndexSet, Report
from idxadvisor.testing import RuleCase, run_case
from tests.conftest import REPO_ROOT

NS = "shop.orders"


def scan(filter_: dict[str, Any], repeat: int = 10, docs: int = 50_000, returned: int = 1, at: int | None = None,
         every: int = 60, **extra: Any) -> dict[str, Any]:
    """A find that scans the collection, ``repeat`` times a minute apart."""
    operation = {"ns": NS, "command": {"find": "orders", "filter": filter_, **extra}, "plan": "COLLSCAN",
                 "keysExamined": 0, "docsExamined": docs, "nreturned": returned, "repeat": repeat, "every": every}
    return {**operation, "at": at} if at is not None else operation


def run(tmp_path: Path, operations: list[dict[str, Any]], **spec: Any) -> tuple[Report, Report]:
    """The report with the workload's index sets, and the per-finding report of the same workload (without the floor
    of server time saved unless the test sets one: these workloads are a few minutes of scans; test_value.py tests
    the floor)."""
    spec["config"] = {"min_saving": 0, **spec.get("config", {})}
    workload = run_case(RuleCase("IX001", "workload", {"operations": operations, **spec}), tmp_path, REPO_ROOT)
    config = {**spec.get("config", {}), "index_selection": "per-finding"}
    (tmp_path / "per-finding").mkdir()
    per_finding = run_case(RuleCase("IX001", "per-finding", {"operations": operations, **spec, "config": config}),
                           tmp_path / "per-finding", REPO_ROOT)
    return workload, per_finding


def only_set(report: Report) -> IndexSet:
    (index_set,) = report.index_sets
    return index_set


def new_keys(report: Report) -> list[list[tuple[str, int]]]:
    return [index.key for index in only_set(report).indexes if index.status == "new"]


def served_by(report: Report) -> dict[str, str | None]:
    """Each shape's text and the index serving it in the set."""
    return {shape.shape.split(" ", 2)[2]: shape.index for shape in only_set(report).shapes}


def test_a_prefix_family_is_served_by_one_index(tmp_path: Path) -> None:
    # each shorter filter finds more documents (else the fields after it would add nothing: see test_value.py)
    report, per_finding = run(tmp_path, [scan({"a": 1}, returned=500, at=0), scan({"a": 1, "b": 2}, returned=50, at=3600),
                                         scan({"a": 1, "b": 2, "c": 3}, at=7200)])
    assert new_keys(report) == [[("a", 1), ("b", 1), ("c", 1)]]
    assert set(served_by(report).values()) == {"a_1_b_1_c_1"}
    assert [suggestion.key for suggestion in report.suggested_indexes] == new_keys(report)
    assert len(per_finding.suggested_indexes) == 1 and per_finding.index_sets == []
    assert only_set(report).search == "exact" and only_set(report).model == "log"


def test_equality_fields_reorder_so_that_one_index_serves_a_shorter_shape_too(tmp_path: Path) -> None:
    # a is the most used field, so per-finding advice leads every key with it: { b } needs an index of its own
    report, per_finding = run(tmp_path, [scan({"b": 1}, repeat=5, returned=100, at=0), scan({"a": 1, "b": 2}, at=3600),
                                         scan({"a": 1, "c": 3}, repeat=20, at=7200)])
    assert len(per_finding.suggested_indexes) == 3
    assert sorted(new_keys(report)) == [[("a", 1), ("c", 1)], [("b", 1), ("a", 1)]]
    assert served_by(report) == {"{b: eq}": "b_1_a_1", "{a: eq, b: eq}": "b_1_a_1", "{a: eq, c: eq}": "a_1_c_1"}
    totals = only_set(report).totals
    assert (totals.per_finding_indexes, totals.per_finding_work_saved) == (3, totals.work_saved)
    shortest = next(shape.fingerprint for shape in only_set(report).shapes if shape.shape.endswith("{b: eq}"))
    (finding,) = [finding for finding in report.findings if finding.fingerprint == shortest]
    assert "per-finding advice would be { b: 1 }; the workload's set chose { b: 1, a: 1 }" in finding.details


def test_a_sort_and_a_range_on_one_field_share_the_sorts_direction(tmp_path: Path) -> None:
    report, _ = run(tmp_path, [
        {"ns": NS, "command": {"find": "orders", "filter": {"u": 7}, "sort": {"t": -1}, "limit": 20},
         "plan": "IXSCAN { u: 1 }", "keysExamined": 9000, "docsExamined": 9000, "nreturned": 20, "hasSortStage": True,
         "repeat": 10, "at": 0},
        scan({"u": 7, "t": {"$gt": 5}}, at=3600)])
    assert new_keys(report) == [[("u", 1), ("t", -1)]]
    assert len(served_by(report)) == 2 and set(served_by(report).values()) == {"u_1_t_-1"}


def test_two_unrelated_access_paths_get_one_index_each(tmp_path: Path) -> None:
    report, per_finding = run(tmp_path, [scan({"a": 1}, at=0), scan({"x": 1}, at=3600)])
    assert sorted(new_keys(report)) == [[("a", 1)], [("x", 1)]]
    assert served_by(report) == {"{a: eq}": "a_1", "{x: eq}": "x_1"}
    assert len(per_finding.suggested_indexes) == 2


def test_every_existing_prefix_the_new_index_makes_redundant_is_listed_to_hide(tmp_path: Path) -> None:
    indexes = {NS: [{"key": {"_id": 1}, "name": "_id_"}, {"key": {"a": 1}, "name": "a_1"},
                    {"key": {"a": 1, "b": 1}, "name": "a_1_b_1"},
                    {"key": {"a": 1, "u": 1}, "name": "a_u", "unique": True}]}
    shape = {"ns": NS, "command": {"find": "orders", "filter": {"a": 1, "b": 2, "c": 3}},
             "plan": "IXSCAN { a: 1, b: 1 }", "keysExamined": 20_000, "docsExamined": 20_000, "nreturned": 1,
             "repeat": 20, "every": 600}
    report, per_finding = run(tmp_path, [shape], indexes=indexes)
    index_set = only_set(report)
    assert new_keys(report) == [[("a", 1), ("b", 1), ("c", 1)]]
    hidden = {index.name: index for index in index_set.indexes if index.status == "hide"}
    assert set(hidden) == {"a_1", "a_1_b_1"}
    assert hidden["a_1_b_1"].reason.startswith("redundant: a prefix of the new index { a: 1, b: 1, c: 1 }")
    assert hidden["a_1"].command == 'db.getSiblingDB("shop").orders.hideIndex("a_1")'
    assert hidden["a_1"].drop_command == 'db.getSiblingDB("shop").orders.dropIndex("a_1")'
    kept = {index.name: index.reason for index in index_set.indexes if index.status == "kept"}
    assert kept["a_u"] == "kept: unique: it enforces uniqueness" and "_id_" in kept
    assert [suggestion.replaces for suggestion in per_finding.suggested_indexes] == ["a_1_b_1"]  # one name only


def test_a_budget_of_one_keeps_the_index_that_saves_the_most(tmp_path: Path) -> None:
    operations = [scan({"a": 1}, docs=90_000, at=0), scan({"x": 1}, docs=40_000, at=3600),
                  scan({"y": 1}, docs=5_000, at=7200)]
    report, per_finding = run(tmp_path, operations, config={"max_new_indexes": 1})
    assert new_keys(report) == [[("a", 1)]] and only_set(report).budget == 1
    assert len(per_finding.suggested_indexes) == 3
    reasons = {skip.shape: skip.reason for skip in report.skipped if "index selection" in skip.reason}
    assert set(reasons) == {"find shop.orders {x: eq}", "find shop.orders {y: eq}"}
    assert all("budget (--max-new-indexes 1)" in reason and "{ a: 1 }" in reason for reason in reasons.values())
    assert [finding.index.key for finding in report.findings if finding.index is not None] == [[("a", 1)]]


def test_a_budget_reason_names_a_few_of_the_chosen_indexes_not_the_whole_set(tmp_path: Path) -> None:
    operations = [scan({name: 1}, docs=90_000 - 1_000 * number, at=3600 * number)
                  for number, name in enumerate("abcd")] + [scan({"y": 1}, docs=5_000, at=20_000)]
    report, _ = run(tmp_path, operations, config={"max_new_indexes": 4})
    assert len(new_keys(report)) == 4
    (reason,) = [skip.reason for skip in report.skipped if skip.shape == "find shop.orders {y: eq}"]
    named = reason.split("chosen for shop.orders (")[1].split(" and ")[0]
    assert "the 4 new indexes chosen for shop.orders" in reason and named.count("{ ") == 3  # the rest: "1 more"
    assert "and 1 more: see its index set) save more; { y: 1 } would save" in reason


def write_heavy(config: dict[str, Any] | None = None) -> dict[str, Any]:
    inserts = {"ns": NS, "command": {"insert": "orders", "ordered": True, "$db": "shop"}, "ninserted": 100,
               "repeat": 600, "every": 10, "at": 0}
    return {"operations": [inserts, scan({"a": 1}, docs=100_000, repeat=60, every=100, at=0),
                           {**scan({"x": 1}, docs=2_000, repeat=10, every=600, at=60), "durationMillis": 3}],
            "config": config or {}}


def test_on_a_write_heavy_collection_the_cheapest_set_is_smaller(tmp_path: Path) -> None:
    spec = write_heavy()
    report, per_finding = run(tmp_path, spec.pop("operations"), **spec)
    assert len(per_finding.suggested_indexes) == 2
    assert new_keys(report) == [[("a", 1)]]
    index_set = only_set(report)
    assert index_set.writes.source == "log" and index_set.writes.inserted > 30_000  # 60,000 documents in 1.7 hours
    (new,) = [index for index in index_set.indexes if index.status == "new"]
    assert new.writes_per_hour == index_set.writes.inserted  # one key per document inserted
    (reason,) = [skip.reason for skip in report.skipped if skip.shape == "find shop.orders {x: eq}"]
    assert reason.startswith("IX004: index selection, write cost: { x: 1 } would save")
    assert "times --write-cost-factor 10" in reason
    totals = index_set.totals
    assert totals.net_saved == round(totals.work_saved - 10 * totals.index_writes_added, 1)


def test_writes_that_cost_nothing_leave_the_set_as_large_as_per_finding_advice(tmp_path: Path) -> None:
    spec = write_heavy({"write_cost_factor": 0})
    report, _ = run(tmp_path, spec.pop("operations"), **spec)
    assert sorted(new_keys(report)) == [[("a", 1)], [("x", 1)]]


def test_a_budget_of_none_keeps_every_finding_out_with_its_reason(tmp_path: Path) -> None:
    report, _ = run(tmp_path, [scan({"a": 1}, at=0)], config={"max_new_indexes": 0})
    assert new_keys(report) == [] and report.suggested_indexes == []
    (reason,) = [skip.reason for skip in report.skipped if "index selection" in skip.reason]
    assert reason.startswith("IX004: index selection, budget (--max-new-indexes 0): no new index; { a: 1 } would save")


def test_an_index_no_operation_used_is_let_go_as_ix006_judges_it(tmp_path: Path) -> None:
    indexes = {NS: [{"key": {"_id": 1}, "name": "_id_"}, {"key": {"z": 1}, "name": "z_1"},
                    {"key": {"email": 1}, "name": "email_1", "unique": True}]}
    report, _ = run(tmp_path, [scan({"a": 1}, repeat=10, every=900)], indexes=indexes)  # 2h 15m of log
    statuses = {index.name: (index.status, index.reason) for index in only_set(report).indexes}
    assert statuses["z_1"][0] == "hide" and statuses["z_1"][1].startswith("unused: no operation of the log used it")
    assert "(IX006)" in statuses["z_1"][1] and statuses["email_1"][0] == "kept"
    assert any(finding.rule == "IX006" and finding.index and finding.index.name == "z_1" for finding in report.findings)


def test_an_index_the_server_counted_uses_of_is_kept_and_one_it_never_used_goes_with_that_evidence(
        tmp_path: Path) -> None:
    since = {"$date": "2026-01-01T00:00:00Z"}
    indexes = {NS: [{"key": {"_id": 1}, "name": "_id_"},
                    {"key": {"y": 1}, "name": "y_1", "accesses": {"ops": 4_200, "since": since}},
                    {"key": {"z": 1}, "name": "z_1", "accesses": {"ops": 0, "since": since}}]}
    report, _ = run(tmp_path, [scan({"a": 1}, repeat=10, every=900)], indexes=indexes)
    statuses = {index.name: (index.status, index.reason) for index in only_set(report).indexes}
    assert statuses["y_1"][0] == "kept"  # fast queries the log does not show use it
    assert statuses["z_1"][0] == "hide"
    assert statuses["z_1"][1].endswith("$indexStats counted no use since 2026-01-01 00:00 UTC")
    assert [finding.index.name for finding in report.findings if finding.rule == "IX006" and finding.index] == ["z_1"]


def test_a_superseded_index_says_how_many_uses_the_server_counted(tmp_path: Path) -> None:
    lookup = {"ns": NS, "command": {"find": "orders", "filter": {"a": 1, "b": 2}}, "plan": "IXSCAN { b: 1 }",
              "keysExamined": 40_000, "docsExamined": 40_000, "nreturned": 1, "repeat": 10, "every": 900}
    indexes = {NS: [{"key": {"_id": 1}, "name": "_id_"},
                    {"key": {"b": 1}, "name": "b_1", "accesses": {"ops": 4_200, "since": "2026-01-01T00:00:00Z"}}]}
    report, _ = run(tmp_path, [lookup], indexes=indexes)
    statuses = {index.name: (index.status, index.reason) for index in only_set(report).indexes}
    assert statuses["b_1"][0] == "hide" and statuses["b_1"][1].startswith("superseded: the 1 shape")
    assert statuses["b_1"][1].endswith("$indexStats counted 4,200 uses since 2026-01-01 00:00 UTC: some may be "
                                       "operations the log does not show")
