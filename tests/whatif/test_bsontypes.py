"""``$type``: type sets, the stored type of sample values, matching through arrays, and the server's bounds."""

from __future__ import annotations

import pytest
from bson import Int64

from idxadvisor.whatif.bounds import IndexContext, Tightness, render_oil, translate_type
from idxadvisor.whatif.bsontypes import (
    ARRAY,
    BOOL,
    DOUBLE,
    INT,
    LONG,
    NULL,
    STRING,
    TypeSet,
    TypeSetError,
    parse_type_set,
    type_code,
    value_matches,
)
from idxadvisor.whatif.matching import filter_applies

PLAIN = IndexContext(sparse=False, multikey=False, field_multikey=False, compound=False, null_has_undefined=False)


def test_aliases_codes_and_number() -> None:
    assert parse_type_set("string") == TypeSet(frozenset({STRING}))
    assert parse_type_set(2) == TypeSet(frozenset({STRING}))
    assert parse_type_set(["number", "bool"]) == TypeSet(frozenset({BOOL}), all_numbers=True)
    with pytest.raises(TypeSetError):
        parse_type_set("text")
    with pytest.raises(TypeSetError):
        parse_type_set(2.5)


def test_stored_types_keep_int_long_and_bool_apart() -> None:
    assert [type_code(v) for v in (1, 2**40, Int64(1), 1.0, True, None)] == [INT, LONG, LONG, DOUBLE, BOOL, NULL]


def test_an_array_matches_its_own_type_and_its_elements() -> None:
    assert value_matches([[1]], TypeSet(frozenset({ARRAY})))
    assert value_matches(["x", 2.0], TypeSet(frozenset(), all_numbers=True))
    assert not value_matches([[1.0]], TypeSet(frozenset(), all_numbers=True))  # one level only


def test_the_matcher_uses_server_types_not_mongomocks() -> None:
    ints = {"a": {"$type": parse_type_set("int")}}
    assert filter_applies(ints, {"a": 3})
    assert not filter_applies(ints, {"a": Int64(3)})
    assert not filter_applies(ints, {"a": True})
    assert filter_applies({"a": {"$type": parse_type_set("null")}}, {"a": None})
    assert not filter_applies({"a": {"$type": parse_type_set("null")}}, {})


def test_bounds_and_tightness_follow_the_index_bounds_builder() -> None:
    oil, tightness = translate_type(parse_type_set(["string", "double"]), PLAIN)
    assert render_oil(oil) == ["[nan.0, inf.0]", '["", {})'] and tightness == Tightness.INEXACT_COVERED
    oil, tightness = translate_type(parse_type_set("number"), PLAIN)
    assert render_oil(oil) == ["[nan.0, inf.0]"] and tightness == Tightness.EXACT
    oil, tightness = translate_type(parse_type_set("array"), PLAIN)
    assert render_oil(oil) == ["[MinKey, MaxKey]"] and tightness == Tightness.INEXACT_FETCH
    assert translate_type(parse_type_set("null"), PLAIN)[1] == Tightness.INEXACT_FETCH
