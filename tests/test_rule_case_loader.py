"""The rule-case loader (idxadvisor.testing): a typo in a case file is an error, not a case that tests nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from idxadvisor.testing import RuleCaseError, load_rule_cases
from tests.conftest import REPO_ROOT

GOOD_OPERATION = """\
      - ns: shop.orders
        command: {find: orders, filter: {a: 1}}
        plan: COLLSCAN
        docsExamined: 1000
"""


def write(tmp_path: Path, body: str) -> Path:
    (tmp_path / "IX004.yaml").write_text("rule: IX004\ncases:\n  c:\n" + body, encoding="utf-8")
    return tmp_path / "IX004.yaml"


def test_every_case_file_of_the_repository_loads() -> None:
    cases = load_rule_cases(REPO_ROOT / "rules")
    assert {case.rule for case in cases} == {"AG001", "AG002", "CI001", "CI002", "CI003", "CI004", "IX001", "IX002",
                                             "IX003", "IX004", "IX005", "IX006", "PL001", "QY001", "QY002", "QY003",
                                             "QY004", "QY005", "QY006", "QY007", "TM001", "TM002", "TM003", "TM004",
                                             "TM005", "TM006", "TM007", "TM008"}


@pytest.mark.parametrize(("body", "message"), [
    ("    operations:\n" + GOOD_OPERATION.replace("docsExamined", "docExamined") + "    expect: []\n",
     "case 'c': operations[0]: unknown key 'docExamined' (did you mean 'docsExamined'?)"),
    ("    operations:\n" + GOOD_OPERATION + GOOD_OPERATION + "        nreturnd: 3\n    expect: []\n",
     "case 'c': operations[1]: unknown key 'nreturnd' (did you mean 'nreturned'?)"),
    ("    operations:\n" + GOOD_OPERATION + "    expects: []\n",
     "case 'c': unknown key 'expects' (did you mean 'expect'?)"),
    ("    operations:\n" + GOOD_OPERATION + "    expect:\n      - {ns: shop.orders, index: {keys: [[a, 1]]}}\n",
     "case 'c': expect[0].index: unknown key 'keys' (did you mean 'key'?)"),
    ("    operations:\n" + GOOD_OPERATION + "    expect:\n      - {namespace: shop.orders}\n",
     "case 'c': expect[0]: unknown key 'namespace'"),
    ("    operations:\n" + GOOD_OPERATION + "    check: {baseline: x.json}\n    expect: []\n",
     "case 'c': check: unknown key 'baseline' (did you mean 'baseline_indexes'?)"),
    ("    operations:\n" + GOOD_OPERATION + "    expect: []\n    skipped:\n      - {shape: x, why: y}\n",
     "case 'c': skipped[0]: unknown key 'why'"),
    ("    operations:\n      - command: {find: orders}\n    expect: []\n", "case 'c': operations[0]: 'ns' is missing"),
    ("    operations:\n" + GOOD_OPERATION + "        format: text-2.4\n    expect: []\n",
     "case 'c': operations[0]: format 'text-2.4' is not one of json, text, text-4.0, profile"),
    ("    operations:\n" + GOOD_OPERATION + "        ramp: {docExamined: [1, 2]}\n    expect: []\n",
     "case 'c': operations[0]: ramp: 'docExamined' is not a counter an operation can give"),
    ("    operations:\n" + GOOD_OPERATION + "        ramp: {docsExamined: [1]}\n    expect: []\n",
     "case 'c': operations[0]: ramp: docsExamined: expected [first, last], two numbers"),
])
def test_unknown_keys_name_the_file_the_case_and_the_key(tmp_path: Path, body: str, message: str) -> None:
    path = write(tmp_path, body)
    with pytest.raises(RuleCaseError) as info:
        load_rule_cases(tmp_path)
    assert str(info.value).startswith(f"{path}: {message}")


def test_unknown_top_level_keys_are_errors_too(tmp_path: Path) -> None:
    path = tmp_path / "IX004.yaml"
    path.write_text("rule: IX004\nconfigs: {min_count: 1}\ncases: {}\n", encoding="utf-8")
    with pytest.raises(RuleCaseError, match=r"unknown key 'configs' \(did you mean 'config'\?\)"):
        load_rule_cases(tmp_path)
