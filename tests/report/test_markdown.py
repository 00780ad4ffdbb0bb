"""The Markdown report's wording: counts in the singular or plural, evidence numbers with thousands separators."""

from __future__ import annotations

import io

import pytest

from idxadvisor.models.report import Evidence, Report
from idxadvisor.report import markdown
from tests.conftest import FIXTURES_DIR


@pytest.fixture(scope="module")
def report() -> Report:
    return Report.model_validate_json((FIXTURES_DIR / "reports" / "demo.json").read_text(encoding="utf-8"))


def render(report: Report) -> str:
    out = io.StringIO()
    markdown.render(report, out, verbose=False)
    return out.getvalue()


def test_one_input_is_singular_and_two_are_plural(report: Report) -> None:
    text = render(report)
    assert "\n1 input, 3,779 lines, 1,261 slow-operation entries, 1,216 operations, 19 shapes;" in text
    assert "input(s)" not in text
    two = report.model_copy(update={
        "summary": report.summary.model_copy(update={"inputs": 2, "lines": 1, "entries": 1, "operations": 1,
                                                      "shapes": 1}),
    })
    assert "\n2 inputs, 1 line, 1 slow-operation entry, 1 operation, 1 shape;" in render(two)


def test_evidence_numbers_have_thousands_separators(report: Report) -> None:
    finding = report.findings[0].model_copy(update={"evidence": Evidence(
        evaluator="estimator", query={}, before={"totalKeysExamined": 376370, "totalDocsExamined": 376370},
        after={"totalKeysExamined": 5974, "totalDocsExamined": 0})})
    text = render(report.model_copy(update={"findings": [finding]}))
    assert "keys examined 376,370 → 5,974, documents examined 376,370 → 0" in text


def test_input_paths_with_passwords_are_masked(report: Report) -> None:
    item = report.inputs[0].model_copy(update={"path": "https://u:hunter2@example.com/x.log",
                                               "error": "cannot read https://u:hunter2@example.com/x.log"})
    text = render(report.model_copy(update={"inputs": [item]}))
    assert "hunter2" not in text and "https://u:****@example.com/x.log" in text
