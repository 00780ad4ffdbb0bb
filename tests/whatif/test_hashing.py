"""Hashed-index keys against the values the server's own hasher unit test pins (``hasher_test.cpp``)."""

from __future__ import annotations

from typing import Any

import pytest
from bson import Binary, Code, Int64, MaxKey, MinKey, ObjectId, Regex, Timestamp
from bson.datetime_ms import DatetimeMS

from idxadvisor.whatif.bsonorder import UNDEFINED
from idxadvisor.whatif.hashing import hash64
from idxadvisor.whatif.query import Unsupported

PINNED: list[tuple[Any, int]] = [
    (42, -944302157085130861), (42.123, -944302157085130861), (Int64(42), -944302157085130861),
    (0, 4854801880128277513), (0.456, 4854801880128277513), (float("nan"), 4854801880128277513),
    (1, 5902408780260971510), (-1.789, 1140205862565771219), (-(2**31), 6165898260261354870),
    (2**31 - 1, 1143184177162245883), (1.7976931348623157e308, 921523596458303250),
    (Int64(2**63 - 1), 921523596458303250), (-1.7976931348623157e308, 4532067210535695462),
    (MinKey(), 7961148599568647290), (MaxKey(), 5504842513779440750), (UNDEFINED, 40158834000849533),
    (None, 2338878944348059895), ("abc", 8478485326885698097), ("", 2049396243249673340),
    ({"a": "abc", "b": Int64(123)}, 4771603801758380216), ({}, 7980500913326740417),
    (["bar", "baz", "qux"], -2938911267422831539), ([], 8849948234993459283),
    (Binary(bytes([0, 1, 2, 3, 4, 6]), 0), 7252465090394235301), (Binary(bytes([0, 1, 2, 3, 4, 6]), 128), 5736670452907618262),
    (Binary(bytes(range(16)), 4), 6084661258071355978), (ObjectId("010203040506070809101112"), -5588663249627035708),
    (True, 6405873908747105701), (False, 6289544573401934092), (DatetimeMS(0x5566778811223344), 4476222765095560467),
    (DatetimeMS(0), -1178696894582842035), (Regex("mongodb"), -7275792090268217043), (Regex(".*", "i"), 7095855029187981886),
    (Code("func f() { return 1; }"), 6861638109178014270),
]


@pytest.mark.parametrize(("value", "expected"), PINNED)
def test_hash_matches_the_server(value: Any, expected: int) -> None:
    assert hash64(value) == expected


def test_nested_numbers_are_squashed_like_top_level_ones() -> None:
    assert hash64({"a": 3, "b": [3.1, {"c": 3}]}) == hash64({"a": 3.1, "b": [3, {"c": 3.0}]})
    assert hash64({"a": {}, "b": 1}) != hash64({"a": {"b": 1}})


def test_timestamps_are_not_guessed() -> None:
    with pytest.raises(Unsupported):
        hash64(Timestamp(1, 1))
