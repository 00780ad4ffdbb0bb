"""The fast reading of a JSON log entry's fields (by its key sequence) reads exactly what ``read_fields`` reads."""

from __future__ import annotations

from datetime import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from idxadvisor.parse import fields
from idxadvisor.parse.fields import EARLIEST, FIELD_ALIASES, LATEST, checked_timestamp, read_entry_fields, read_fields

_NAMES = sorted(FIELD_ALIASES) + ["ns", "command", "type", "locks", "cpuNanos"]
_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-5, max_value=2**64 + 5), st.sampled_from([2**64 - 1, 2**64]),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=4), st.sampled_from(["12", "1e400", "nan"]),
    st.dictionaries(st.sampled_from(["$numberLong", "a"]), st.sampled_from(["7", "x"]), max_size=1),
    st.lists(st.integers(), max_size=2),
)


def _read(read, attr: dict) -> list[tuple[str, str]]:
    return [(key, repr(value)) for key, value in read(attr).items()]  # repr: NaN is NaN, 1 is not True


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_NAMES), _VALUES), max_size=12))
def test_an_entry_reads_as_read_fields_reads_it_in_values_and_order(pairs: list) -> None:
    """Aliases of one attribute (the last wins), values of the wrong kind, counters out of range, damaged durations:
    the same attributes, values, problems and order, read afresh or from a remembered key sequence."""
    attr = dict(pairs)
    expected = _read(read_fields, attr)
    fields._LAYOUTS.clear()
    assert _read(read_entry_fields, attr) == expected
    assert _read(read_entry_fields, attr) == expected
    same_keys_other_values = {key: 1 for key in attr}
    assert _read(read_entry_fields, same_keys_other_values) == _read(read_fields, same_keys_other_values)


def test_the_key_sequences_remembered_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fields, "LAYOUT_ENTRIES", 3)
    fields._LAYOUTS.clear()
    for n in range(10):
        attr = {f"k{n}": 1, "durationMillis": n, "keysExamined": n}
        assert read_entry_fields(attr) == {"duration_ms": n, "keys_examined": n}
    assert 0 < len(fields._LAYOUTS) <= 3
    many = {f"k{n}": n for n in range(fields.LAYOUT_KEY_LIMIT)} | {"nreturned": 4}
    fields._LAYOUTS.clear()
    assert read_entry_fields(many) == {"nreturned": 4} and not fields._LAYOUTS
    long_key = {"k" * fields.LAYOUT_TEXT_LIMIT: 1, "nreturned": 4}
    assert read_entry_fields(long_key) == {"nreturned": 4} and not fields._LAYOUTS


@pytest.mark.parametrize("stamp", [
    "1970-01-01T00:30:00+01:00", "1970-01-01T00:00:00-00:01", "1971-01-01T00:00:00+23:59", "1969-12-31T23:59:59",
    "9997-12-31T23:59:59-23:59", "9998-12-31T23:00:00-05:00", "9998-12-31T23:00:00+05:00", "9999-01-01T00:00:00",
    "2024-05-01T10:00:00+05:30",
])
def test_a_timestamp_the_year_settles_is_checked_as_the_comparison_would(stamp: str) -> None:
    parsed = datetime.fromisoformat(stamp)
    aware = parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=EARLIEST.tzinfo)
    assert checked_timestamp(parsed) == (aware if EARLIEST <= aware < LATEST else None)
