"""The registry holds every rule once, in code order, and every rule documents itself and has cases."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import idxadvisor.rules
from idxadvisor.errors import UsageError
from idxadvisor.rules import ALL_RULES, rule_class, select_rules
from idxadvisor.rules.base import CODE_PATTERN, NAME_PATTERN, REQUIRED_SECTIONS, Rule
from idxadvisor.testing import load_rule_cases
from tests.conftest import REPO_ROOT

MISSION_RULES = {"IX001": "missing-compound-index", "IX002": "esr-order", "IX003": "parallel-array-index",
                 "QY001": "count-slower-than-find", "AG001": "repeated-aggregation"}


def rule_modules() -> list[type[Rule]]:
    found = []
    for module in pkgutil.iter_modules(idxadvisor.rules.__path__):
        if CODE_PATTERN.match(module.name.split("_")[0].upper()):
            loaded = importlib.import_module(f"idxadvisor.rules.{module.name}")
            found += [value for value in vars(loaded).values()
                      if isinstance(value, type) and issubclass(value, Rule) and value is not Rule
                      and value.__module__ == loaded.__name__]
    return found


def test_every_rule_module_is_registered_once_in_code_order() -> None:
    assert sorted(rule_modules(), key=lambda rule: rule.code) == list(ALL_RULES)
    codes = [rule.code for rule in ALL_RULES]
    assert codes == sorted(codes) and len(set(codes)) == len(codes)


def test_the_mission_rules_keep_their_public_codes_and_names() -> None:
    assert {code: rule_class(code).name for code in MISSION_RULES} == MISSION_RULES


@pytest.mark.parametrize("rule", ALL_RULES, ids=[rule.code for rule in ALL_RULES])
def test_rule_identity_and_documentation(rule: type[Rule]) -> None:
    assert CODE_PATTERN.match(rule.code) and NAME_PATTERN.match(rule.name)
    assert rule.__module__.split(".")[-1].startswith(rule.code.lower() + "_" + rule.name.replace("-", "_"))
    assert rule.severity in ("info", "warning", "error")
    doc = rule.documentation()
    assert rule.summary() and rule.summary().endswith(".")
    for section in REQUIRED_SECTIONS:
        assert section in doc, f"{rule.code} lacks '{section}'"
    for option in rule.defaults:
        assert f"`{option}`" in doc, f"{rule.code} does not document its option {option}"


@pytest.mark.parametrize("rule", ALL_RULES, ids=[rule.code for rule in ALL_RULES])
def test_every_rule_has_cases_that_fire_and_cases_that_stay_silent(rule: type[Rule]) -> None:
    cases = [case for case in load_rule_cases(REPO_ROOT / "rules") if case.rule == rule.code]
    assert any(case.spec.get("expect") for case in cases), f"{rule.code} has no case where it fires"
    assert any(case.spec.get("expect") == [] for case in cases), f"{rule.code} has no case where it stays silent"


def test_selection_by_code_prefix_name_and_ignore() -> None:
    assert [r.code for r in select_rules(["IX"])] == ["IX001", "IX002", "IX003", "IX004", "IX005", "IX006"]
    assert [r.code for r in select_rules(["repeated-aggregation", "QY001"])] == ["AG001", "QY001"]
    assert [r.code for r in select_rules([], ["IX", "CI", "QY", "TM"])] == ["AG001", "AG002", "PL001"]
    assert [r.code for r in select_rules([], ["IX", "QY", "PL", "TM"])] == ["AG001", "AG002", "CI001", "CI002", "CI003",
                                                                          "CI004"]
    configured = {rule.code: rule for rule in select_rules([], [], {"IX001": {"min_docs_per_returned": 50}})}
    assert configured["IX001"].options["min_docs_per_returned"] == 50


@pytest.mark.parametrize(("select", "ignore", "options", "message"), [
    (["ZZ9"], [], {}, "--select/--ignore: 'ZZ9' names no rule"),
    ([], [], {"IX001": {"min_ratio": 3}}, "settings for IX001: unknown option(s) for IX001: min_ratio"),
    ([], [], {"NOPE1": {}}, "no rule 'NOPE1'"),
])
def test_bad_selections_are_usage_errors(select: list, ignore: list, options: dict, message: str) -> None:
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        select_rules(select, ignore, options)


# -- the key index that keeps index sharing linear in shapes ---------------------------------------------------------

from unittest.mock import patch  # noqa: E402

from hypothesis import example, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from idxadvisor.indexes import candidates  # noqa: E402
from idxadvisor.indexes.candidates import KeyIndex, Roles, SharedKeyIndex, serves  # noqa: E402

_NAMES = st.sampled_from(["a", "b", "c", "d", "e"])
_KEYS = st.lists(st.tuples(_NAMES, st.sampled_from([1, -1, "hashed"])), min_size=1, max_size=4,
                 unique_by=lambda pair: pair[0]).map(tuple)


@st.composite
def _roles(draw) -> Roles:  # noqa: ANN001
    names = draw(st.permutations(["a", "b", "c", "d", "e"]))
    equality, sort, ranges = draw(st.integers(0, 2)), draw(st.integers(0, 2)), draw(st.integers(0, 2))
    fields = list(names)
    chosen_ranges = tuple(fields[equality + sort: equality + sort + ranges])
    if draw(st.booleans()):  # roles_of keeps the roles apart; the index must agree with serves even when they overlap
        chosen_ranges = tuple(draw(st.lists(st.sampled_from(fields), max_size=3, unique=True)))
    never = frozenset(name for name in chosen_ranges if draw(st.booleans()))
    return Roles(equality=tuple(fields[:equality]),
                 sort=tuple((name, draw(st.sampled_from([1, -1]))) for name in fields[equality: equality + sort]),
                 range=chosen_ranges, never_leading=never)


@settings(max_examples=300, deadline=None)
@given(st.lists(_KEYS, max_size=25), _roles())
# a range field that is also an equality field, so not after the sort: rare in random draws
@example([(("a", 1), ("b", 1), ("c", 1))], Roles(equality=("a",), sort=(("b", 1),), range=("a", "c")))
def test_the_key_index_finds_exactly_the_keys_that_serve(keys: list, roles: Roles) -> None:
    expected = [key for key in dict.fromkeys(keys) if serves(key, roles)]
    assert KeyIndex(keys).serving(roles) == expected
    with patch.object(candidates, "_FEW_CANDIDATES", 0):  # narrowed by the fields every serving key holds, always
        assert KeyIndex(keys).serving(roles) == expected


@settings(max_examples=200, deadline=None)
@given(st.lists(_KEYS, max_size=15), st.lists(_KEYS, max_size=15), st.lists(_roles(), min_size=1, max_size=4))
def test_the_shared_key_index_finds_the_keys_added_before_and_after_a_look_up(first: list, second: list,
                                                                              looked_up: list[Roles]) -> None:
    index = SharedKeyIndex()
    index.add(first)
    for roles in looked_up[:2]:  # looked up once before the second batch: kept, then completed
        assert index.serving(roles) == [key for key in dict.fromkeys(first) if serves(key, roles)]
    index.add(second)
    every = list(dict.fromkeys(first + second))
    for roles in looked_up:
        assert index.serving(roles) == [key for key in every if serves(key, roles)]


def test_the_rules_list_keeps_its_columns_whatever_the_longest_name(capsys: pytest.CaptureFixture[str]) -> None:
    from idxadvisor.cli import run

    assert run(["rules"]) == 0
    heads = [line for line in capsys.readouterr().out.splitlines() if CODE_PATTERN.match(line[:5])]
    assert len(heads) == len(ALL_RULES)
    columns = {line.index(rule.severity, 7 + len(rule.name)) for line, rule in zip(heads, ALL_RULES)}
    assert len(columns) == 1 and all(f"{rule.name} " in line for line, rule in zip(heads, ALL_RULES))
