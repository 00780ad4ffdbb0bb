"""The demo workload's index sets, with its data samples (the estimator's costs and the multi-planner's check), in
every report format, against per-finding advice, and through the command line and ``check``."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from idxadvisor.api import analyze
from idxadvisor.cli import run
from idxadvisor.config import Settings
from idxadvisor.models.report import IndexSet, Report
from idxadvisor.report import render
from idxadvisor.rules import select_rules
from idxadvisor.rules.base import RuleContext
from idxadvisor.rules.engine import run_rules
from idxadvisor.selection import WorkloadSelection
from tests.conftest import FIXTURES_DIR

DEMO = FIXTURES_DIR / "demo"
INPUTS = [str(DEMO / "shop.log")]


def demo_settings(**overrides: object) -> Settings:
    return Settings(format="json", jobs=1, indexes=[str(DEMO / "indexes.json")], data=[str(DEMO / "data")],
                    **overrides)


@pytest.fixture(scope="module")
def workload() -> Report:
    return analyze(INPUTS, demo_settings())


@pytest.fixture(scope="module")
def per_finding() -> Report:
    return analyze(INPUTS, demo_settings(index_selection="per-finding"))


def set_of(report: Report, ns: str) -> IndexSet:
    return next(index_set for index_set in report.index_sets if index_set.ns == ns)


def test_the_demo_needs_fewer_indexes_than_per_finding_advice(workload: Report, per_finding: Report) -> None:
    assert (workload.index_selection, per_finding.index_selection) == ("workload", "per-finding")
    assert per_finding.index_sets == []
    assert (len(workload.suggested_indexes), len(per_finding.suggested_indexes)) == (8, 9)
    for index_set in workload.index_sets:
        new = [index for index in index_set.indexes if index.status == "new"]
        assert len(new) <= index_set.totals.per_finding_indexes
        assert index_set.model == "estimator"
        requested = {shape.fingerprint for shape in index_set.shapes if shape.requested}
        assert all(set(index.shapes) & requested for index in new)  # every new index serves a finding's shape
    proposed = {(finding.ns, tuple(map(tuple, finding.index.key))) for finding in workload.findings
                if finding.index is not None and not finding.index.name}
    in_sets = {(index_set.ns, tuple(map(tuple, index.key))) for index_set in workload.index_sets
               for index in index_set.indexes if index.status == "new"}
    assert proposed == in_sets


def test_one_orders_index_serves_both_customer_listings(workload: Report) -> None:
    orders = set_of(workload, "shop.orders")
    new = {index.name: index for index in orders.indexes if index.status == "new"}
    # status and region both hold few values (5 and 8 in the sample): either may lead for the shapes that fix both,
    # and status leading makes status_1 redundant
    assert set(new) == {"status_1_region_1", "status_1_createdAt_-1", "customerId_1_createdAt_-1"}
    listings = [shape for shape in orders.shapes if shape.shape.startswith("find shop.orders {customerId: eq")
                or shape.shape.startswith("find shop.orders {createdAt: range, customerId: eq}")]
    assert len(listings) == 2 and {shape.index for shape in listings} == {"customerId_1_createdAt_-1"}
    assert all((shape.after or 0) < (shape.before or 0) and shape.evidence is not None for shape in listings)
    assert orders.totals.per_finding_indexes == 4
    assert orders.totals.index_writes_added < orders.totals.per_finding_index_writes  # one index fewer to maintain
    assert orders.totals.work_saved >= 0.99 * orders.totals.per_finding_work_saved


def test_what_the_orders_set_hides_and_what_the_multi_planner_keeps(workload: Report) -> None:
    orders = set_of(workload, "shop.orders")
    status = {index.name: index.status for index in orders.indexes}
    assert status["customerId_1"] == status["status_1"] == "hide"
    # the shape sorted by _id would scan the collection without it: the check with the multi-planner keeps it
    assert status["createdAt_-1_status_1"] == "kept"
    by_id = next(shape for shape in orders.shapes if "sort {_id: 1}" in shape.shape)
    assert by_id.index == "createdAt_-1_status_1" and by_id.after == by_id.before


def test_every_format_shows_the_sets(workload: Report) -> None:
    def rendered(fmt: str, verbose: bool = False) -> str:
        out = io.StringIO()
        render(workload, out, format=fmt, verbose=verbose)
        return out.getvalue()

    text = rendered("text", verbose=True)
    assert "Index sets for the workload: 5 collections: 8 new indexes where per-finding advice gives 9" in text
    assert "create { customerId: 1, createdAt: -1 }: 2 shapes (IX002)" in text
    assert 'db.getSiblingDB("shop").orders.hideIndex("status_1"), then' in text
    markdown = rendered("markdown", verbose=True)
    assert "### Index sets for the workload" in markdown
    assert '| hide | `status_1 { status: 1 }` |' in markdown and "| shape | today | with the set |" in markdown
    sarif = json.loads(rendered("sarif"))
    properties = sarif["runs"][0]["properties"]
    assert properties["indexSelection"] == "workload" and len(properties["indexSets"]) == 5
    page = rendered("html")
    assert '<section id="sets">' in page and "Index sets (5)" in page and "customerId_1_createdAt_-1" in page


def test_sets_lose_the_indexes_whose_findings_the_evidence_dropped() -> None:
    settings = Settings(jobs=1, indexes=[str(DEMO / "indexes.json")])
    from idxadvisor.api import read_inputs
    from idxadvisor.indexes.catalog import load_index_arguments
    from idxadvisor.report.build import select_shapes

    digest, _ = read_inputs(INPUTS, settings)
    chooser = WorkloadSelection(settings, {})
    findings, _ = run_rules(select_shapes(digest, settings).shapes,
                            RuleContext(settings, load_index_arguments(settings.indexes), {}),
                            select_rules([], [], {}), chooser)
    orders = next(index_set for index_set in chooser.index_sets(findings) if index_set.ns == "shop.orders")
    assert any(index.status == "new" for index in orders.indexes) and orders.model == "log"
    kept = [finding for finding in findings if not (finding.ns == "shop.orders" and finding.index is not None
                                                    and not finding.index.name)]
    emptied = next(index_set for index_set in chooser.index_sets(kept) if index_set.ns == "shop.orders")
    assert not any(index.status == "new" for index in emptied.indexes)
    assert any(note.startswith("dropped after the selection") for note in emptied.notes)
    assert not any(index.reason.startswith("redundant: a prefix of the new index") for index in emptied.indexes)


def test_the_options_and_settings_of_the_index_set(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    assert run(["analyze", *INPUTS, "--index-selection", "nope", "-f", "json"]) == 2
    assert "setting 'index-selection'" in capsys.readouterr().err
    assert run(["analyze", *INPUTS, "--max-new-indexes", "-1", "-f", "json"]) == 2
    assert "setting 'max-new-indexes'" in capsys.readouterr().err
    (tmp_path / ".idxadvisor.toml").write_text('index-selection = "per-finding"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert run(["analyze", *INPUTS, "-f", "json", "--fail-on", "never", "--jobs", "1"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["index_selection"] == "per-finding" and report["index_sets"] == []
    assert run(["analyze", *INPUTS, "-f", "json", "--fail-on", "never", "--jobs", "1", "--index-selection",
                "workload", "--max-new-indexes", "1", "--write-cost-factor", "0"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["index_selection"] == "workload"
    assert all(sum(index["status"] == "new" for index in index_set["indexes"]) <= 1
               for index_set in report["index_sets"])
    # the largest factor: what a new index saves is weighed against its writes, and the reasons say so
    assert run(["analyze", *INPUTS, "-f", "json", "--fail-on", "never", "--jobs", "1", "--index-selection",
                "workload", "--write-cost-factor", "1e6"]) == 0
    reasons = [skip["reason"] for skip in json.loads(capsys.readouterr().out)["skipped"]]
    assert sum("times --write-cost-factor 1e+06" in reason for reason in reasons) >= 3


def test_check_shows_the_set_the_proposed_indexes_still_need(capsys: pytest.CaptureFixture[str]) -> None:
    code = run(["check", "--workload", str(DEMO / "shop.log"), "--baseline-indexes", str(DEMO / "indexes.json"),
                "--indexes", str(DEMO / "migrations"), "--format", "json", "--jobs", "1"])
    report = json.loads(capsys.readouterr().out)
    assert code == 1 and report["index_selection"] == "workload"
    orders = next(index_set for index_set in report["index_sets"] if index_set["ns"] == "shop.orders")
    status = {index["name"]: index["status"] for index in orders["indexes"]}
    assert status["customerId_1_createdAt_-1"] == "kept"  # the migration creates it


def test_no_candidate_holds_two_array_fields_of_one_document(workload: Report) -> None:
    products = set_of(workload, "shop.products")
    category = next(index for index in products.indexes if index.name == "category_1")
    assert category.status == "hide" and category.reason.startswith(
        "superseded: the 1 shape whose plans used it is served by { brand: 1, category: 1, price: 1 } in the set")
    new = [index.key for index in products.indexes if index.status == "new"]
    assert [("tags", 1), ("inStock", 1)] in new  # IX003's key: tags and sizes are arrays side by side
    assert not any({"tags", "sizes"} <= {name for name, _ in key} for key in new)


def test_the_estimator_stops_at_its_explain_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    from idxadvisor.selection import estimated

    monkeypatch.setattr(estimated, "MAX_EXPLAINS", 2)
    report = analyze(INPUTS, demo_settings(ns=["shop.orders"]))
    orders = set_of(report, "shop.orders")
    assert "the estimator stopped after 2 explains: the candidates left were not weighed for the shapes left" in \
        orders.notes
    assert sum(index.status == "new" for index in orders.indexes) <= 2  # only two shapes could be weighed


def test_people_read_the_top_sets_json_has_them_all(workload: Report) -> None:
    out = io.StringIO()
    render(workload, out, format="text", top=2)
    text = out.getvalue()
    assert "(the 2 saving the most; --format json lists all)" in text
    shown = [index_set.ns for index_set in workload.index_sets if f"  {index_set.ns}: " in text]
    assert shown == [index_set.ns for index_set in workload.index_sets[:2]]
