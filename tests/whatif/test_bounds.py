"""Predicates to interval lists and their explain strings (planner-semantics.md §3)."""

from __future__ import annotations

import datetime

import pytest
from bson import MaxKey, MinKey, ObjectId, Regex

from idxadvisor.whatif.bounds import (
    IndexContext,
    Interval,
    Tightness,
    complement,
    intersect,
    point,
    regex_prefix,
    render_oil,
    translate_leaf,
    translate_regex,
    unionize,
)
from idxadvisor.whatif.query import Leaf, compile_regex

PLAIN = IndexContext(sparse=False, multikey=False, field_multikey=False, compound=False, null_has_undefined=False)
OLD = IndexContext(sparse=False, multikey=False, field_multikey=False, compound=False, null_has_undefined=True)
MULTIKEY = IndexContext(sparse=False, multikey=True, field_multikey=True, compound=False, null_has_undefined=False)


def _bounds(op: str, value: object, ctx: IndexContext = PLAIN) -> tuple[list[str], Tightness]:
    result = translate_leaf(Leaf("a", op, value), ctx)
    assert result is not None
    return render_oil(result[0]), result[1]


def test_equality_and_type_bracketed_ranges() -> None:
    assert _bounds("eq", 27.0) == (["[27.0, 27.0]"], Tightness.EXACT)
    assert _bounds("gt", 50.0) == (["(50.0, inf.0]"], Tightness.EXACT)
    assert _bounds("lte", 2.0) == (["[-inf.0, 2.0]"], Tightness.EXACT)
    assert _bounds("gt", "a")[0] == ['("a", {})']
    assert _bounds("lt", "m")[0] == ['["", "m")']
    assert _bounds("gte", True)[0] == ["[true, true]"]
    assert _bounds("gt", ObjectId("0" * 24))[0] == [
        "(ObjectId('000000000000000000000000'), ObjectId('ffffffffffffffffffffffff')]"]
    assert _bounds("lt", datetime.datetime(1970, 1, 1))[0] == ["[new Date(-9223372036854775808), new Date(0))"]


def test_null_bounds_by_version() -> None:
    assert _bounds("eq", None) == (["[null, null]"], Tightness.EXACT_MAYBE_COVERED)
    assert _bounds("eq", None, OLD)[0] == ["[undefined, undefined]", "[null, null]"]
    assert _bounds("ne", None) == (["[MinKey, null)", "(null, MaxKey]"], Tightness.EXACT)


def test_in_ne_nin_and_multikey_negation() -> None:
    assert _bounds("in", [9.0, 0.0, 9.0])[0] == ["[0.0, 0.0]", "[9.0, 9.0]"]
    assert _bounds("ne", 0.0) == (["[MinKey, 0.0)", "(0.0, MaxKey]"], Tightness.EXACT)
    assert _bounds("nin", [5.0, 8.0])[0] == ["[MinKey, 5.0)", "(5.0, 8.0)", "(8.0, MaxKey]"]
    assert _bounds("ne", 3.0, MULTIKEY)[1] == Tightness.INEXACT_FETCH


def test_array_equality_and_exists() -> None:
    assert _bounds("eq", [5.0, 9.0]) == (["[5.0, 5.0]", "[[ 5.0, 9.0 ], [ 5.0, 9.0 ]]"], Tightness.INEXACT_FETCH)
    assert _bounds("eq", [])[0] == ["[undefined, undefined]", "[[], []]"]
    assert _bounds("exists", True) == (["[MinKey, MaxKey]"], Tightness.INEXACT_FETCH)
    sparse = IndexContext(sparse=True, multikey=False, field_multikey=False, compound=False, null_has_undefined=False)
    assert _bounds("exists", True, sparse) == (["[MinKey, MaxKey]"], Tightness.EXACT)
    assert _bounds("exists", False) == (["[null, null]"], Tightness.INEXACT_FETCH)


@pytest.mark.parametrize(("pattern", "flags", "prefix", "exact"), [
    ("^bob", "", "bob", True),
    ("^\\/", "", "/", True),
    ("^\\Qblah\\E", "", "blah", True),
    ("^\\Q[\\Ewi\\Qth]some?s\\Eym", "", "[with]some?sym", True),
    ("^aa*", "", "a", False),
    ("^ab?c", "", "a", False),
    ("^.", "", "", False),
    ("^abc.*", "", "abc", True),
    ("^a|b", "", "", False),
    ("abc", "", "", False),
    ("^abc", "i", "", False),
    ("^abc", "m", "", False),
    ("\\Aabc", "m", "abc", True),
    ("^a b", "x", "ab", True),
    ("^ab\\d", "", "ab", False),
])
def test_regex_prefix_rules(pattern: str, flags: str, prefix: str, exact: bool) -> None:
    assert regex_prefix(pattern, flags) == (prefix, exact)


def test_regex_bounds_strings() -> None:
    oil, tightness = translate_regex(compile_regex("^bob", ""))
    assert render_oil(oil) == ['["bob", "boc")', "[/^bob/, /^bob/]"] and tightness == Tightness.EXACT
    oil, tightness = translate_regex(compile_regex("0", ""))
    assert render_oil(oil) == ['["", {})', "[/0/, /0/]"] and tightness == Tightness.INEXACT_COVERED


def test_interval_algebra() -> None:
    a = [Interval(-1.0, False, 1.0, False)]
    holes = complement([point(0.0)])
    assert render_oil(intersect(a, holes)) == ["(-1.0, 0.0)", "(0.0, 1.0)"]
    assert render_oil(unionize([Interval(1.0, True, 2.0, False), Interval(2.0, True, 3.0, True)])) == ["[1.0, 3.0]"]
    assert render_oil(unionize([Interval(1.0, True, 2.0, False), Interval(2.0, False, 3.0, True)])) == [
        "[1.0, 2.0)", "(2.0, 3.0]"]
    assert render_oil(complement([Interval(MinKey(), True, MaxKey(), True)])) == []
    string_range = [Interval("emily", True, "emilz", False), point(Regex("^emily"))]
    assert render_oil(intersect(string_range, [Interval("a", False, {}, False)])) == ['["emily", "emilz")']
