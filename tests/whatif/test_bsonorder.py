"""BSON comparison order and explain's string form of values (planner-semantics.md §2.6, §3)."""

from __future__ import annotations

import datetime
import math
import re

from bson import Binary, Decimal128, Int64, MaxKey, MinKey, ObjectId, Regex, Timestamp

from idxadvisor.whatif.bsonorder import (
    MISSING,
    UNDEFINED,
    compare,
    render_double,
    render_value,
    sort_key,
)


def test_canonical_type_order() -> None:
    ordered = [MinKey(), UNDEFINED, None, -math.inf, 1, "a", {"a": 1}, [1], Binary(b"x"),
               ObjectId("0" * 24), False, True, datetime.datetime(2020, 1, 1), Timestamp(1, 1),
               Regex("a"), MaxKey()]
    keys = [sort_key(v) for v in ordered]
    assert keys == sorted(keys)
    for left, right in zip(ordered, ordered[1:]):
        assert compare(left, right) < 0, (left, right)


def test_numbers_compare_as_numbers_across_types() -> None:
    assert compare(1, 1.0) == 0
    assert compare(Int64(2), 1.5) > 0
    assert compare(Decimal128("2.5"), 3) < 0
    assert compare(float("nan"), -math.inf) < 0      # NaN sorts before every number
    assert compare(float("nan"), float("nan")) == 0


def test_missing_is_null_and_strings_compare_by_bytes() -> None:
    assert sort_key(MISSING) == sort_key(None)
    assert compare("B", "a") < 0                     # binary, not case-insensitive
    assert compare("é", "z") > 0                     # UTF-8 order: non-ASCII after ASCII


def test_documents_compare_field_by_field_then_by_length() -> None:
    assert compare({"a": 1}, {"a": 1, "b": 1}) < 0
    assert compare({"a": 2}, {"b": 1}) < 0           # field name decides after equal types
    assert compare({"a": "x"}, {"a": 1}) > 0         # type of the first value decides first
    assert compare([1, 2], [1, 3]) < 0
    assert compare([2], [1, 5]) > 0


def test_dates_before_epoch_and_timestamps() -> None:
    assert compare(datetime.datetime(1960, 1, 1), datetime.datetime(1970, 1, 1)) < 0
    assert compare(Timestamp(0, 4294967295), Timestamp(1, 0)) < 0


def test_render_doubles_like_explain() -> None:
    assert render_double(27.0) == "27.0"
    assert render_double(math.inf) == "inf.0"
    assert render_double(-math.inf) == "-inf.0"
    assert render_double(2.5) == "2.5"
    assert render_double(1e20) == "1e+20.0"


def test_render_values_like_explain() -> None:
    assert render_value(27) == "27"
    assert render_value("bob") == '"bob"'
    assert render_value(MinKey()) == "MinKey"
    assert render_value(MaxKey()) == "MaxKey"
    assert render_value(None) == "null"
    assert render_value(UNDEFINED) == "undefined"
    assert render_value({}) == "{}"
    assert render_value([5.0, 9.0]) == "[ 5.0, 9.0 ]"
    assert render_value(Regex("^bob", "i")) == "/^bob/i"
    assert render_value(re.compile("^a")) == "/^a/"
    assert render_value(ObjectId("0" * 24)) == "ObjectId('000000000000000000000000')"
    assert render_value(datetime.datetime(1970, 1, 1, 0, 0, 1)) == "new Date(1000)"
    assert render_value(Timestamp(1, 2)) == "Timestamp(1, 2)"
