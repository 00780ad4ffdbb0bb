"""Conformance: every ground-truth case is reproduced exactly, or declared unsupported.

Two case files: ``shared/planner/cases.json`` (the planner-semantics cases) and ``planner_cases_issue11.json`` beside
this test (partial, collation, hashed, ``$or``, distinct, aggregate, min/max and express cases, each from a jstest
assertion or the server source it names). A wrong number fails the suite; ``unsupported`` is allowed (the estimator
must say so rather than guess), and each file must be exact on at least 90% of its cases. The score per category is
printed at the end of the run. Cases marked with ``versions`` run against the server version they describe.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from idxadvisor.whatif import Estimator

from .conftest import (
    CONFORMANCE_SCORE,
    ISSUE11_CASES,
    case_documents,
    case_hint,
    case_indexes,
    case_query,
    case_version,
    check_expectations,
    load_cases,
    load_issue11_cases,
)

_SHARED_FILE = Path(__file__).resolve().parents[2].parent / "shared" / "planner" / "cases.json"
Outcomes = dict[str, tuple[dict[str, Any], dict[str, Any]]]


def _ids(path: Path) -> list[str]:
    if not path.is_file():
        return ["<no shared dir>"]
    with path.open(encoding="utf-8") as handle:
        return [case["id"] for case in json.load(handle)]


def _explain_all(cases: list[dict[str, Any]], hint_from_query: bool) -> Outcomes:
    out: Outcomes = {}
    for case in cases:
        estimator = Estimator(case_documents(case), server_version=case_version(case))
        query = case_query(case)
        if hint_from_query:  # the issue-11 cases hint as the server's request does (names, $natural)
            from dataclasses import replace

            result = estimator.explain(replace(query, hint=case_hint(case)), case_indexes(case))
        else:
            result = estimator.explain(query, case_indexes(case), case["hint"])
        out[case["id"]] = (case, result)
    return out


_RESULTS: dict[str, Outcomes] = {}


@pytest.fixture(scope="module")
def shared_outcomes(shared_dir: Path) -> Outcomes:
    if "shared" not in _RESULTS:
        _RESULTS["shared"] = _explain_all(load_cases(shared_dir), hint_from_query=False)
    return _RESULTS["shared"]


@pytest.fixture(scope="module")
def issue11_outcomes() -> Outcomes:
    if "issue11" not in _RESULTS:
        _RESULTS["issue11"] = _explain_all(load_issue11_cases(), hint_from_query=True)
    return _RESULTS["issue11"]


def _assert_case(case: dict[str, Any], result: dict[str, Any]) -> None:
    if "unsupported" in result:
        assert isinstance(result["unsupported"], str) and result["unsupported"]
        pytest.skip(f"unsupported: {result['unsupported']}")
    problems = check_expectations(case, result, case_version(case))
    assert not problems, f"{case['id']}: " + "; ".join(problems)


@pytest.mark.parametrize("case_id", _ids(_SHARED_FILE))
def test_shared_case(case_id: str, shared_outcomes: Outcomes) -> None:
    _assert_case(*shared_outcomes[case_id])


@pytest.mark.parametrize("case_id", _ids(ISSUE11_CASES))
def test_issue11_case(case_id: str, issue11_outcomes: Outcomes) -> None:
    _assert_case(*issue11_outcomes[case_id])


def _score(label: str, outcomes: Outcomes) -> dict[str, Any]:
    per_category: dict[str, Counter[str]] = {}
    unsupported: list[tuple[str, str]] = []
    wrong_ids: list[str] = []
    for case_id, (case, result) in outcomes.items():
        tally = per_category.setdefault(case["category"], Counter())
        if "unsupported" in result:
            tally["unsupported"] += 1
            unsupported.append((case_id, result["unsupported"]))
        elif check_expectations(case, result, case_version(case)):
            tally["wrong"] += 1
            wrong_ids.append(case_id)
        else:
            tally["exact"] += 1
    total = Counter[str]()
    for tally in per_category.values():
        total.update(tally)
    score = {"label": label, "exact": total["exact"], "unsupported": total["unsupported"], "wrong": total["wrong"],
             "total": len(outcomes), "categories": per_category, "unsupported_ids": unsupported, "wrong_ids": wrong_ids}
    CONFORMANCE_SCORE[label] = score
    return score


def test_shared_conformance_score(shared_outcomes: Outcomes) -> None:
    score = _score("shared/planner/cases.json", shared_outcomes)
    assert score["wrong"] == 0, f"wrong numbers in {score['wrong_ids']}"
    assert score["exact"] >= 0.9 * score["total"], f"only {score['exact']} of {score['total']} cases are exact"


def test_issue11_conformance_score(issue11_outcomes: Outcomes) -> None:
    score = _score(ISSUE11_CASES.name, issue11_outcomes)
    assert score["wrong"] == 0, f"wrong numbers in {score['wrong_ids']}"
    assert score["exact"] >= 0.9 * score["total"], f"only {score['exact']} of {score['total']} cases are exact"
