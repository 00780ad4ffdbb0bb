"""Conformance: every case of ``shared/planner/cases.json`` is reproduced exactly, or declared unsupported.

A wrong number fails the suite; ``unsupported`` is allowed (the estimator must say so rather than guess).
Cases marked with ``versions`` run against the server version they describe.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from idxadvisor.whatif import Estimator

from .conftest import (
    CONFORMANCE_SCORE,
    case_documents,
    case_indexes,
    case_query,
    case_version,
    check_expectations,
    load_cases,
)

_CASES_FILE = Path(__file__).resolve().parents[2].parent / "shared" / "planner" / "cases.json"


def _case_ids() -> list[str]:
    if not _CASES_FILE.is_file():
        return ["<no shared dir>"]
    with _CASES_FILE.open(encoding="utf-8") as handle:
        return [case["id"] for case in json.load(handle)]


_RESULTS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}


@pytest.fixture(scope="module")
def outcomes(shared_dir: Path) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    if not _RESULTS:
        for case in load_cases(shared_dir):
            estimator = Estimator(case_documents(case), server_version=case_version(case))
            result = estimator.explain(case_query(case), case_indexes(case), case["hint"])
            _RESULTS[case["id"]] = (case, result)
    return _RESULTS


@pytest.mark.parametrize("case_id", _case_ids())
def test_case(case_id: str, outcomes: dict[str, tuple[dict[str, Any], dict[str, Any]]]) -> None:
    case, result = outcomes[case_id]
    if "unsupported" in result:
        assert isinstance(result["unsupported"], str) and result["unsupported"]
        pytest.skip(f"unsupported: {result['unsupported']}")
    problems = check_expectations(case, result, case_version(case))
    assert not problems, f"{case_id}: " + "; ".join(problems)


def test_conformance_score(outcomes: dict[str, tuple[dict[str, Any], dict[str, Any]]]) -> None:
    exact = wrong = 0
    unsupported: list[tuple[str, str]] = []
    wrong_ids: list[str] = []
    for case_id, (case, result) in outcomes.items():
        if "unsupported" in result:
            unsupported.append((case_id, result["unsupported"]))
        elif check_expectations(case, result, case_version(case)):
            wrong += 1
            wrong_ids.append(case_id)
        else:
            exact += 1
    total = len(outcomes)
    CONFORMANCE_SCORE.update(exact=exact, unsupported=len(unsupported), wrong=wrong, total=total,
                             unsupported_ids=unsupported)
    print(f"\nwhat-if conformance: exact {exact} / unsupported {len(unsupported)} / wrong {wrong} of {total}")
    for case_id, reason in unsupported:
        print(f"  unsupported {case_id}: {reason}")
    assert wrong == 0, f"wrong numbers in {wrong_ids}"
    assert exact >= 0.9 * total, f"only {exact} of {total} cases are exact"
