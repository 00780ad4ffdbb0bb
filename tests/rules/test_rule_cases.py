"""Every case of every rules/<CODE>.yaml: the rule fires where it should and stays silent where it should.

A case marked ``todo`` is a strict expected failure: once it passes, the test fails until the mark is removed.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from idxadvisor.testing import RuleCase, check_case, load_rule_cases, run_case
from tests.conftest import REPO_ROOT


def case_params(cases: Iterable[RuleCase]) -> list[Any]:
    return [pytest.param(case, id=case.id,
                         marks=pytest.mark.xfail(strict=True, reason=case.todo) if case.todo else ())
            for case in cases]


@pytest.mark.parametrize("case", case_params(load_rule_cases(REPO_ROOT / "rules")))
def test_rule_case(case: RuleCase, tmp_path: Path) -> None:
    report = run_case(case, tmp_path, REPO_ROOT)
    problems = check_case(case, report)
    assert not problems, "\n".join(problems)


def test_a_todo_case_is_a_strict_expected_failure() -> None:
    todo, ready = case_params([RuleCase("IX001", "later", {"todo": "not modelled yet"}),
                               RuleCase("IX001", "now", {"expect": []})])
    (mark,) = todo.marks
    assert (mark.name, mark.kwargs) == ("xfail", {"strict": True, "reason": "not modelled yet"})
    assert (todo.id, ready.id, list(ready.marks)) == ("IX001-later", "IX001-now", [])
