"""Every case of every rules/<CODE>.yaml: the rule fires where it should and stays silent where it should."""

from __future__ import annotations

from pathlib import Path

import pytest

from idxadvisor.testing import RuleCase, check_case, load_rule_cases, run_case
from tests.conftest import REPO_ROOT

CASES = load_rule_cases(REPO_ROOT / "rules")


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_rule_case(case: RuleCase, tmp_path: Path) -> None:
    if case.todo:
        pytest.xfail(case.todo)
    report = run_case(case, tmp_path, REPO_ROOT)
    problems = check_case(case, report)
    assert not problems, "\n".join(problems)
