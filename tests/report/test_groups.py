"""One root cause, one item: a slow listing that trips IX002, QY003 and (through its count) QY001 is one group in
every report; JSON keeps every finding and adds the groups; SARIF keeps one result per finding with its group."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from idxadvisor.api import analyze
from idxadvisor.config import Settings
from idxadvisor.models.report import Finding, IndexProposal, Report
from idxadvisor.report import render
from idxadvisor.rules.grouping import assign_groups, describe_groups
from idxadvisor.testing import operation_entries

LISTING = {"ns": "shop.orders", "command": {"find": "orders", "filter": {"status": "pending"},
                                            "sort": {"createdAt": -1}, "skip": 20000, "limit": 50},
           "plan": "IXSCAN { status: 1 }", "keysExamined": 20050, "docsExamined": 20050, "nreturned": 50,
           "hasSortStage": True, "durationMillis": 140, "repeat": 10}
TOTAL = {"ns": "shop.orders", "command": {"count": "orders", "query": {"status": "pending"}},
         "plan": "IXSCAN { status: 1 }", "keysExamined": 30000, "docsExamined": 30000, "nreturned": 1,
         "durationMillis": 600, "repeat": 10, "at": 5}
OTHER = {"ns": "shop.customers", "command": {"find": "customers", "filter": {"city": "Porto", "lastName": "Silva"}},
         "plan": "COLLSCAN", "docsExamined": 120000, "nreturned": 1, "repeat": 10, "at": 7200}


@pytest.fixture
def report(tmp_path: Path) -> Report:
    log = tmp_path / "shop.log"
    log.write_text("\n".join(operation_entries([LISTING, TOTAL, OTHER])["json"]) + "\n")
    return analyze([str(log)], Settings())


def test_a_listing_its_sort_its_pages_and_its_count_are_one_group(report: Report) -> None:
    rules = {finding.rule: finding for finding in report.findings}
    assert {"IX002", "QY003", "QY001", "IX001"} <= set(rules)
    listing = rules["QY003"].group
    assert rules["IX002"].group == listing and rules["QY001"].group == listing and rules["IX001"].group != listing
    (group,) = [group for group in report.groups if group.id == listing]
    assert sorted(report.findings[position].rule for position in group.findings) == ["IX002", "QY001", "QY003"]
    # the count is served by status_1 already (the log's plans show it): no index of its own, yet it names the listing
    # as its related shape, so it stays in the listing's group
    assert (group.fingerprint, group.ns) == (None, "shop.orders")
    assert rules["QY001"].index is None
    assert group.title == "count shop.orders {status: eq} (and 1 related shape)"
    impacts = [report.findings[position].impact for position in group.findings]
    assert impacts == sorted(impacts, reverse=True)
    # each shape's largest impact once: the find's IX002 and QY003 count the same documents
    find_impact = max(rules["IX002"].impact, rules["QY003"].impact)
    assert group.impact == pytest.approx(find_impact + rules["QY001"].impact, abs=0.2)
    assert [group.impact for group in report.groups] == sorted((group.impact for group in report.groups), reverse=True)


def test_every_format_shows_the_group(report: Report) -> None:
    out = io.StringIO()
    render(report, out, format="text")
    text = out.getvalue()
    assert "Findings: 4 in 2 groups by root cause" in text and "3 findings, one root cause" in text
    assert text.index("QY003 skip-pagination") > text.index("3 findings, one root cause")
    out = io.StringIO()
    render(report, out, format="markdown")
    markdown = out.getvalue()
    assert "### Findings (4 in 2 groups by root cause)" in markdown
    assert "  - **warning** `QY003` skip-pagination:" in markdown
    out = io.StringIO()
    render(report, out, format="json")
    document = json.loads(out.getvalue())
    assert len(document["findings"]) == 4 and {finding["group"] for finding in document["findings"]} == {
        group["id"] for group in document["groups"]}
    out = io.StringIO()
    render(report, out, format="sarif")
    results = json.loads(out.getvalue())["runs"][0]["results"]
    assert [result["properties"]["group"] for result in results] == [finding.group for finding in report.findings]


def finding(rule: str, fingerprint: str, impact: float, index: IndexProposal | None = None) -> Finding:
    return Finding(rule=rule, name=rule.lower(), severity="warning", fingerprint=fingerprint, ns="shop.orders",
                   message="m", impact=impact, index=index)


def test_shapes_that_need_one_index_are_one_access_path_and_ids_are_stable() -> None:
    key = [("status", 1), ("createdAt", -1)]
    proposal = IndexProposal(ns="shop.orders", key=key, command="createIndex")
    existing = IndexProposal(ns="shop.orders", key=[("status", 1)], command="hideIndex", name="status_1")
    findings = [finding("IX002", "a", 50, proposal), finding("IX001", "b", 30, proposal), finding("QY005", "c", 10),
                finding("IX005", "x1", 0, existing), finding("IX006", "x2", 0, existing)]
    assign_groups(findings, {})
    first = [item.group for item in findings]
    assert first[0] == first[1] != first[2] and first[3] == first[4] not in first[:3]
    assign_groups(findings, {})
    assert [item.group for item in findings] == first
    groups = describe_groups(findings, {"a": "find a", "b": "find b", "c": "find c"})
    assert [group.title for group in groups] == ["shop.orders: 2 shapes that need { status: 1, createdAt: -1 }",
                                                "find c", "index status_1 on shop.orders"]
    assert groups[0].impact == 80 and groups[0].fingerprint is None and groups[1].fingerprint == "c"
    assign_groups(findings, {"c": {"a"}})  # a rule names c as related to a: one root cause now
    assert findings[2].group == findings[0].group != first[0]
    assert describe_groups(findings, {"a": "find a"})[0].title == "find a (and 2 related shapes)"


def test_a_report_built_without_groups_shows_one_item_per_finding() -> None:
    report = Report.model_validate_json((Path(__file__).parents[2] / "fixtures/reports/demo.json").read_text())
    report.groups = []
    out = io.StringIO()
    render(report, out, format="text")
    assert "groups by root cause" not in out.getvalue() and f"Findings: {len(report.findings)}" in out.getvalue()


def test_a_group_of_many_findings_is_hashed_once_not_once_per_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    import hashlib

    from idxadvisor.rules import grouping

    hashed: list[bytes] = []
    sha256 = hashlib.sha256

    def counting(data: bytes) -> Any:
        hashed.append(data)
        return sha256(data)

    monkeypatch.setattr(grouping.hashlib, "sha256", counting)
    proposal = IndexProposal(ns="shop.orders", key=[("status", 1)], command="createIndex")
    findings = [finding("IX001", f"s{number}", number, proposal) for number in range(500)] + [finding("QY005", "q", 1)]
    assign_groups(findings, {})
    assert len(hashed) == 2  # two groups: 500 shapes needing one index, and one alone
    assert len({item.group for item in findings[:500]}) == 1 and findings[500].group != findings[0].group
