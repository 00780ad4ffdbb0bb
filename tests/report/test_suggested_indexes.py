"""The suggested-indexes list: one row per distinct index, with every shape and rule that asks for it."""

from __future__ import annotations

from pathlib import Path

from idxadvisor.api import analyze
from idxadvisor.config import Settings
from idxadvisor.models.report import Finding, IndexProposal
from idxadvisor.report.build import suggested_indexes
from tests.helpers import json_line, slow_attr


def finding(rule: str, fingerprint: str, key: list[tuple[str, int | str]], impact: float, *,
            ns: str = "shop.orders", severity: str = "warning", name: str | None = None) -> Finding:
    command = f"db.{ns.split('.', 1)[1]}.createIndex({dict(key)})"
    return Finding(rule=rule, name=rule.lower(), severity=severity, fingerprint=fingerprint, ns=ns,  # type: ignore[arg-type]
                   message="m", impact=impact, index=IndexProposal(ns=ns, key=key, command=command, name=name))


def test_findings_proposing_the_same_index_become_one_suggestion_with_their_impact_summed() -> None:
    findings = [finding("IX001", "f1", [("a", 1), ("b", 1)], 100.0),
                finding("QY001", "f2", [("a", 1), ("b", 1)], 50.0, severity="error"),
                finding("IX002", "f3", [("a", 1), ("b", -1)], 120.0),
                finding("IX001", "f4", [("a", 1), ("b", 1)], 10.0, ns="shop.other")]
    suggestions = suggested_indexes(findings)
    assert [(s.ns, s.key, s.impact) for s in suggestions] == [
        ("shop.orders", [("a", 1), ("b", 1)], 150.0),
        ("shop.orders", [("a", 1), ("b", -1)], 120.0),
        ("shop.other", [("a", 1), ("b", 1)], 10.0)]
    first = suggestions[0]
    assert first.rules == ["IX001", "QY001"] and first.fingerprints == ["f1", "f2"] and first.severity == "error"


def test_findings_about_an_existing_index_are_not_suggestions() -> None:
    existing = finding("IX003", "f1", [("tags", 1), ("sizes", 1)], 0.0, name="tags_1_sizes_1", severity="error")
    assert suggested_indexes([existing]) == []


def test_two_shapes_needing_the_same_index_share_one_suggestion(tmp_path: Path) -> None:
    lines = []
    for command in ({"find": "orders", "filter": {"customerId": 7, "status": "open"}},
                    {"find": "orders", "filter": {"customerId": 7, "status": "open"}, "limit": 10}):
        lines += [json_line(slow_attr(command, docsExamined=50_000, nreturned=2))] * 5
    log = tmp_path / "slow.log"
    log.write_text("\n".join(lines) + "\n")
    report = analyze([str(log)], Settings())
    assert len({finding.fingerprint for finding in report.findings}) == 2
    [suggestion] = report.suggested_indexes
    assert suggestion.key == [("customerId", 1), ("status", 1)]
    assert len(suggestion.fingerprints) == 2
    assert suggestion.impact == sum(finding.impact for finding in report.findings) == 2 * 5 * (50_000 - 2)
