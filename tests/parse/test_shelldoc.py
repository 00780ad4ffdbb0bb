"""Tests for the mongo-shell document parser (idxadvisor.parse.shelldoc).

Sections: the syntax table (one test per row); what the ≤4.2 server really prints; real log lines from the corpus;
equivalence with the 4.4+ JSON logger on random values; robustness on hostile text.
"""

from __future__ import annotations

import base64
import inspect
import json
import math
import re
import sys
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from bson import Binary, Decimal128, MaxKey, MinKey, ObjectId, Timestamp
from bson.datetime_ms import DatetimeMS
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from idxadvisor.parse.shelldoc import (
    MAX_DEPTH,
    ShellSyntaxError,
    ShellValue,
    iter_shell_documents,
    parse_shell_value,
)


def value(text: str, **kwargs: Any) -> Any:
    return parse_shell_value(text, **kwargs).value


def one(text: str, **kwargs: Any) -> Any:
    """The value of ``text`` as the only element of an array (values are normally inside documents)."""
    (item,) = value(f"[ {text} ]", **kwargs)
    return item


# --- the syntax table, one test per row -------------------------------------------------------------------------------


def test_keys_unquoted_dotted_dollar_quoted_and_single_quoted_keep_their_order() -> None:
    doc = value(
        "{ a: 1, b.c: \"x\", $or: [ { d: 1 } ], \"quoted key\": 2, 'single': 3, a-b: 4, 0: 5, x.$[e]: 6, $**: 7 }"
    )
    assert doc == {"a": 1, "b.c": "x", "$or": [{"d": 1}], "quoted key": 2, "single": 3, "a-b": 4, "0": 5,
                   "x.$[e]": 6, "$**": 7}  # fmt: skip
    assert list(doc) == ["a", "b.c", "$or", "quoted key", "single", "a-b", "0", "x.$[e]", "$**"]


def test_a_repeated_key_keeps_the_last_value_in_the_first_place() -> None:
    doc = value("{ a: 1, b: 2, a: 3 }")
    assert doc == {"a": 3, "b": 2}
    assert list(doc) == ["a", "b"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [("1", 1), ("-5", -5), ("0", 0), ("5908578361554239489", 5908578361554239489), ("1" * 40, int("1" * 40))],
)
def test_integers_of_any_size(text: str, expected: int) -> None:
    got = one(text)
    assert got == expected
    assert type(got) is int


@pytest.mark.parametrize(
    ("text", "expected"),
    [("1.0", 1.0), ("-0.5", -0.5), ("1e+20", 1e20), ("1.5e-07", 1.5e-07), (".5", 0.5), ("5.", 5.0)],
)
def test_floats(text: str, expected: float) -> None:
    got = one(text)
    assert got == expected
    assert type(got) is float


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("inf", "Infinity"),
        ("-inf", "-Infinity"),
        ("inf.0", "Infinity"),
        ("-inf.0", "-Infinity"),
        ("nan", "NaN"),
        ("nan.0", "NaN"),
        ("-nan.0", "NaN"),
        ("NaN", "NaN"),
        ("Infinity", "Infinity"),
        ("-Infinity", "-Infinity"),
    ],
)
def test_non_finite_doubles(text: str, name: str) -> None:
    assert one(text) == {"$numberDouble": name}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("NumberLong(5)", 5),
        ('NumberLong("5")', 5),
        ("NumberLong(-5)", -5),
        ('NumberLong("-9223372036854775808")', -9223372036854775808),
        ("NumberInt(3)", 3),
        ("Long('7')", 7),
        ("Int32(8)", 8),
    ],
)
def test_number_long_and_int(text: str, expected: int) -> None:
    got = one(text)
    assert got == expected
    assert type(got) is int


@pytest.mark.parametrize(
    ("text", "expected"),
    [('NumberDecimal("1.50")', "1.50"), ("NumberDecimal(1.5)", "1.5"), ('Decimal128("1E+3")', "1E+3")],
)
def test_number_decimal_keeps_the_text_as_written(text: str, expected: str) -> None:
    assert one(text) == {"$numberDecimal": expected}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('"str"', "str"),
        ("'str'", "str"),
        (r'"a\"b"', 'a"b'),
        (r'"back\\slash"', "back\\slash"),
        (r'"line\nnext\ttab"', "line\nnext\ttab"),
        (r'"\u00e9\u20ac"', "é€"),
        (r'"\ud83d\ude00"', "\U0001f600"),
        (r'"a\ud800b"', "a\ufffdb"),  # half a surrogate pair alone: the replacement character
        (r'"\udc00"', "\ufffd"),
        (r'"\ud83d\u0041"', "\ufffdA"),
        (r'"\ude00\ud83d"', "\ufffd\ufffd"),
        ('"héllo wörld 日本"', "héllo wörld 日本"),
        (r"'it\'s'", "it's"),
        (r'"keep \. and \d"', r"keep \. and \d"),
        ('""', ""),
    ],
)
def test_strings_with_escapes_and_non_ascii(text: str, expected: str) -> None:
    assert one(text) == expected


@pytest.mark.parametrize(("text", "expected"), [("true", True), ("false", False), ("null", None)])
def test_true_false_null(text: str, expected: bool | None) -> None:
    assert one(text) is expected


def test_undefined() -> None:
    assert value("{ u: undefined }") == {"u": {"$undefined": True}}


def test_min_and_max_key_and_the_dict_spelling_agree() -> None:
    assert value("{ lo: MinKey, hi: MaxKey }") == {"lo": {"$minKey": 1}, "hi": {"$maxKey": 1}}
    assert value("{ lo: { $minKey: 1 } }") == value("{ lo: MinKey }")


@pytest.mark.parametrize(
    "text",
    [
        "ObjectId('5c03296ff84a0a3a94418d78')",
        'ObjectId("5c03296ff84a0a3a94418d78")',
        "ObjectId('5C03296FF84A0A3A94418D78')",
    ],
)
def test_object_id(text: str) -> None:
    assert value(f"{{ _id: {text} }}") == {"_id": {"$oid": "5c03296ff84a0a3a94418d78"}}
    assert value(f"[ {text}, {text} ]") == [{"$oid": "5c03296ff84a0a3a94418d78"}] * 2


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("new Date(1592924486000)", "2020-06-23T15:01:26.000Z"),
        ("Date(1592924486123)", "2020-06-23T15:01:26.123Z"),
        ('ISODate("2019-11-16T10:20:30.123Z")', "2019-11-16T10:20:30.123Z"),
        ('ISODate("2019-11-16T10:20:30Z")', "2019-11-16T10:20:30.000Z"),
        ('new Date("2019-11-16T10:20:30.5Z")', "2019-11-16T10:20:30.500Z"),
        ('ISODate("2019-11-16T10:20:30.123+0100")', "2019-11-16T09:20:30.123Z"),
        ('ISODate("2019-11-16T10:20:30.123-05:30")', "2019-11-16T15:50:30.123Z"),
        ('ISODate("2019-11-16")', "2019-11-16T00:00:00.000Z"),
        ("new Date(0)", "1970-01-01T00:00:00.000Z"),
    ],
)
def test_dates_in_range_are_utc_iso_strings_with_milliseconds(text: str, expected: str) -> None:
    assert one(text) == {"$date": expected}


@pytest.mark.parametrize(
    ("text", "millis"),
    [
        ("new Date(5908578361554239489)", "5908578361554239489"),
        ("new Date(-9223372036854775808)", "-9223372036854775808"),
        ("new Date(32535215999000)", "32535215999000"),
        ('ISODate("1901-12-31T23:59:59.999Z")', "-2145916800001"),
    ],
)
def test_dates_out_of_range_are_number_longs(text: str, millis: str) -> None:
    assert one(text) == {"$date": {"$numberLong": millis}}


@pytest.mark.parametrize(
    ("text", "t", "i"),
    [
        ("Timestamp(1592924486, 119)", 1592924486, 119),
        ("Timestamp 1375698319000|2", 1375698319, 2),
        ("Timestamp 0|0", 0, 0),
        ("Timestamp({ t: 1592924486, i: 7 })", 1592924486, 7),
    ],
)
def test_timestamps(text: str, t: int, i: int) -> None:
    assert one(text) == {"$timestamp": {"t": t, "i": i}}


@pytest.mark.parametrize(
    ("text", "data", "subtype"),
    [
        ("BinData(0, 6BDF2E)", bytes.fromhex("6bdf2e"), "0"),
        ('BinData(0,"AAAA==")', b"\x00\x00\x00", "0"),
        ("BinData(5, 00FF)", b"\x00\xff", "5"),
        ("BinData(128, 0102)", b"\x01\x02", "80"),
        ("BinData(4, 0102)", b"\x01\x02", "4"),
        ("BinData(0, )", b"", "0"),
        ('Binary.createFromBase64("AQI=", 3)', b"\x01\x02", "3"),
    ],
)
def test_bindata_hex_or_base64(text: str, data: bytes, subtype: str) -> None:
    assert one(text) == {"$binary": {"base64": base64.b64encode(data).decode(), "subType": subtype}}


@pytest.mark.parametrize(
    "text",
    [
        "BinData(4, 71240B17F22A45238EB757E2AD2E8A0B)",
        f'BinData(4, "{base64.b64encode(bytes.fromhex("71240b17f22a45238eb757e2ad2e8a0b")).decode()}")',
        'UUID("71240b17-f22a-4523-8eb7-57e2ad2e8a0b")',
        "UUID('71240B17-F22A-4523-8EB7-57E2AD2E8A0B')",
        'UUID("71240b17f22a45238eb757e2ad2e8a0b")',
        'HexData(4, "71240b17f22a45238eb757e2ad2e8a0b")',
    ],
)
def test_uuids(text: str) -> None:
    assert one(text) == {"$uuid": "71240b17-f22a-4523-8eb7-57e2ad2e8a0b"}


@pytest.mark.parametrize(
    ("text", "pattern", "options"),
    [
        ("/^abc/i", "^abc", "i"),
        (r"/a\/b/", r"a\/b", ""),
        ("/x/smi", "x", "ims"),
        ("/a/b/", "a/b", ""),  # the server does not escape a slash inside the pattern
        (r"/^\d+\.\d+$/", r"^\d+\.\d+$", ""),
    ],
)
def test_regex_literals(text: str, pattern: str, options: str) -> None:
    assert one(text) == {"$regularExpression": {"pattern": pattern, "options": options}}


def test_dbref_code_and_symbol() -> None:
    doc = value(
        "{ shell: DBRef(\"coll\", ObjectId('5c03296ff84a0a3a94418d78')), withdb: DBRef('c', 5, \"db\"), "
        "server: DBRef('coll',5C03296FF84A0A3A94418D78), code: Code(\"return 1\"), sym: Symbol(\"s\") }"
    )
    assert doc == {
        "shell": {"$ref": "coll", "$id": {"$oid": "5c03296ff84a0a3a94418d78"}},
        "withdb": {"$ref": "c", "$id": 5, "$db": "db"},
        "server": {"$ref": "coll", "$id": "5c03296ff84a0a3a94418d78"},  # the DBRef type: the JSON log's $id is hex
        "code": {"$code": "return 1"},
        "sym": {"$symbol": "s"},
    }


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{ a: 1, ..., b: 2 }", {"a": 1, "b": 2}),
        ("{ ... }", {}),
        ("{...}", {}),
        ("[ 1, ..., ... ]", [1]),
        ("{ a: { ... }, b: [ ... ] }", {"a": {}, "b": []}),
        ("{ a: ..., b: 1 }", {"b": 1}),
    ],
)
def test_an_elided_element_is_skipped_and_flagged(text: str, expected: Any) -> None:
    parsed = parse_shell_value(text)
    assert parsed.value == expected
    assert parsed.elided


def test_a_string_the_server_cut_is_just_a_string() -> None:
    text = '{ s: "' + "a" * 150 + '..." }'
    parsed = parse_shell_value(text, raw_strings=True)
    assert parsed.value == {"s": "a" * 150 + "..."}
    assert not parsed.elided


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{ $msg: "query not recording (too large)" }', {"$msg": "query not recording (too large)"}),
        ('{ q: { $truncated: "{ find: \\"c\\", filter: { a: 1 }...", comment: "x" } }',
         {"q": {"$truncated": '{ find: "c", filter: { a: 1 }...', "comment": "x"}}),
    ],
)  # fmt: skip
def test_too_large_and_truncated_documents_are_kept_and_flagged(text: str, expected: Any) -> None:
    parsed = parse_shell_value(text)
    assert parsed.value == expected
    assert parsed.elided


def test_an_ordinary_msg_does_not_mark_elision() -> None:
    assert not parse_shell_value('{ $msg: "hello" }').elided


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("{ a: 1, }", {"a": 1}),
        ("[ 1, 2, ]", [1, 2]),
        ("{a:1,b:[2,3],c:{}}", {"a": 1, "b": [2, 3], "c": {}}),
        ("{}", {}),
        ("[]", []),
        ("[ ]", []),
        ('{\n\t"a" : 1,\n\t"b" : {\n\t\t"c" : [\n\t\t\t1\n\t\t]\n\t}\n}', {"a": 1, "b": {"c": [1]}}),
        ("{ a : 1 }", {"a": 1}),
        ("{ my field: 1 }", {"my field": 1}),
    ],
)
def test_trailing_commas_spacing_and_printjson_layout(text: str, expected: Any) -> None:
    assert value(text) == expected


# --- what the ≤4.2 server prints (bsonelement.cpp, builder.h) ---------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [("1e+20.0", 1e20), ("-1e-07.0", -1e-07), ("1.5e-07", 1.5e-07)])
def test_double_nice_appends_dot_zero_after_an_exponent(text: str, expected: float) -> None:
    assert one(text) == expected


@pytest.mark.parametrize("text", ["1.50", "2.00", "1E+3", "-1.5E-7", "0.10"])
def test_a_decimal128_printed_bare_is_recognised_when_no_double_could_print_so(text: str) -> None:
    assert one(text) == {"$numberDecimal": text}


@pytest.mark.parametrize(("text", "expected"), [("1.0", 1.0), ("10.0", 10.0), ("-0.0", -0.0), ("1.05", 1.05)])
def test_doubles_that_look_like_decimals_stay_doubles(text: str, expected: float) -> None:
    assert one(text) == expected


def test_raw_server_strings_keep_backslashes_and_inner_quotes() -> None:
    text = r'{ a: "say "hi" now", re: "^C:\\dir\.txt$", b: "ends with quote"", c: 1 }'
    expected = {"a": 'say "hi" now', "re": r"^C:\\dir\.txt$", "b": 'ends with quote"', "c": 1}
    assert value(text, raw_strings=True) == expected


def test_shell_mode_decodes_what_raw_mode_keeps() -> None:
    text = r'{ a: "x\ty\\z" }'
    assert value(text) == {"a": "x\ty\\z"}
    assert value(text, raw_strings=True) == {"a": r"x\ty\\z"}


def test_bindata_cut_after_70_bytes_keeps_the_prefix_and_flags_elision() -> None:
    parsed = parse_shell_value("{ h: BinData(0, " + "AB" * 70 + "...) }")
    assert parsed.value == {"h": {"$binary": {"base64": base64.b64encode(b"\xab" * 70).decode(), "subType": "0"}}}
    assert parsed.elided


def test_bare_bindata_of_old_servers_flags_elision() -> None:
    parsed = parse_shell_value("{ h: BinData, n: 1 }")
    assert parsed.value == {"h": {"$binary": {"base64": "", "subType": "0"}}, "n": 1}
    assert parsed.elided


def test_raw_function_code() -> None:
    parsed = parse_shell_value("{ $where: function () { if (this.a) { return 1; } }, b: 2 }")
    assert parsed.value == {"$where": {"$code": "function () { if (this.a) { return 1; } }"}, "b": 2}
    assert not parsed.elided


def test_function_code_cut_at_70_bytes() -> None:
    code = "function () { return this.a > 1 && this.b < 2 && this.c == 3 && this.d"
    parsed = parse_shell_value("{ $where: " + code[:70] + "..., b: 2 }")
    assert parsed.value == {"$where": {"$code": code[:70]}, "b": 2}
    assert parsed.elided


def test_a_server_2_6_log_timestamp_inside_an_array() -> None:
    assert one("[ Timestamp 2000|1, ObjectId('000000000000000000000000') ]") == [
        {"$timestamp": {"t": 2, "i": 1}},
        {"$oid": "000000000000000000000000"},
    ]


def test_dates_follow_the_servers_formattable_range() -> None:
    assert one("new Date(-1)") == {"$date": "1969-12-31T23:59:59.999Z"}
    assert one("new Date(-2145916800000)") == {"$date": "1902-01-01T00:00:00.000Z"}
    assert one("new Date(-2145916800001)") == {"$date": {"$numberLong": "-2145916800001"}}
    assert one("new Date(32535215998999)") == {"$date": "3000-12-31T23:59:58.999Z"}


def test_large_arrays_of_plain_values_read_fast_give_the_same_values() -> None:
    ints = ", ".join(str(i - 500) for i in range(1000))
    oids = ", ".join(f"ObjectId('{i:024X}')" for i in range(50))
    strs = ", ".join(f'"v{i}"' for i in range(50))
    doc = value(f'{{ a: [ {ints} ], b: [ {oids} ], c: [ {strs} ], d: [ 1, "x", 2.5 ] }}')
    assert doc["a"] == list(range(-500, 500))
    assert doc["b"] == [{"$oid": f"{i:024x}"} for i in range(50)]
    assert doc["c"] == [f"v{i}" for i in range(50)]
    assert doc["d"] == [1, "x", 2.5]


# --- positions, errors, nesting ---------------------------------------------------------------------------------------


def test_end_is_just_past_the_value_and_pos_is_honoured() -> None:
    text = "command: find { find: \"c\" } planSummary: COLLSCAN"
    parsed = parse_shell_value(text, text.index("{"))
    assert parsed == ShellValue({"find": "c"}, text.index(" planSummary"), False)


def test_a_top_level_string_followed_by_text() -> None:
    assert parse_shell_value('"abc" planSummary') == ShellValue("abc", 5, False)


@pytest.mark.parametrize(
    ("text", "position", "reason"),
    [
        ("{ a: 1 b: 2 }", 7, "expected ',' or '}'"),
        ("{ a: }", 5, "expected a value"),
        ("[ 1 2 ]", 4, "expected ',' or ']'"),
        ("{ a: 1", 6, "expected ',' or '}'"),
        ("", 0, "expected a value"),
        ("  @x", 2, "expected a value"),
        ("...", 0, "an elided '...' is not a value on its own"),
        ('{ a: UUID("1234") }', 5, "a UUID needs 32 hex digits"),
        ('{ a: ISODate("yesterday") }', 14, "not an ISO-8601 date"),
        ("{ a: BinData(0, ABC) }", 16, "odd number of hex digits"),
    ],
)
def test_errors_carry_a_position_and_a_reason(text: str, position: int, reason: str) -> None:
    with pytest.raises(ShellSyntaxError) as info:
        parse_shell_value(text)
    assert info.value.position == position
    assert info.value.reason == reason


@pytest.mark.parametrize("pos", [-1, 5])
def test_a_start_outside_the_text_is_a_syntax_error(pos: int) -> None:
    with pytest.raises(ShellSyntaxError):
        parse_shell_value("{ }", pos)


def test_nested_shell_dbrefs_count_as_nesting_and_never_overflow_the_stack() -> None:
    chain = 'DBRef("c", ' * MAX_DEPTH + "1" + ")" * MAX_DEPTH
    inner = parse_shell_value(chain).value
    for _ in range(MAX_DEPTH):
        inner = inner["$id"]
    assert inner == 1
    with pytest.raises(ShellSyntaxError, match="nesting"):
        parse_shell_value('DBRef("c", ' * (MAX_DEPTH + 1) + "1" + ")" * (MAX_DEPTH + 1))

    def from_deep_in_the_stack(frames: int) -> ShellValue:
        return from_deep_in_the_stack(frames - 1) if frames else parse_shell_value(chain)

    with pytest.raises(ShellSyntaxError, match="Python stack"):
        from_deep_in_the_stack(sys.getrecursionlimit() - len(inspect.stack()) - 50)


def test_nesting_is_capped() -> None:
    assert parse_shell_value("[" * MAX_DEPTH + "]" * MAX_DEPTH).end == 2 * MAX_DEPTH
    with pytest.raises(ShellSyntaxError, match="nesting"):
        parse_shell_value("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))
    with pytest.raises(ShellSyntaxError, match="nesting"):
        parse_shell_value("{ a: " * 5000)
    with pytest.raises(ShellSyntaxError, match="nesting"):
        parse_shell_value('{ a: DBRef("c", ' * 1000)


# --- printjson dumps --------------------------------------------------------------------------------------------------


def test_iter_shell_documents_reads_consecutive_printjson_documents() -> None:
    text = (
        '{\n\t"op" : "query",\n\t"millis" : NumberLong(5)\n}\n'
        '{\n\t"op" : "update",\n\t"ts" : ISODate("2020-06-23T15:01:26Z")\n}\n'
    )
    parsed = list(iter_shell_documents(text))
    assert [p.value for p in parsed] == [
        {"op": "query", "millis": 5},
        {"op": "update", "ts": {"$date": "2020-06-23T15:01:26.000Z"}},
    ]
    assert parsed[0].end == text.index("}") + 1


def test_iter_shell_documents_stops_on_garbage_after_what_it_could_read() -> None:
    documents = iter_shell_documents('{ "a" : 1 }\nType "it" for more\n')
    assert next(documents).value == {"a": 1}
    with pytest.raises(ShellSyntaxError) as info:
        next(documents)
    assert info.value.position == 12


def test_iter_shell_documents_on_blank_text_yields_nothing() -> None:
    assert list(iter_shell_documents(" \n\t")) == []


# --- real server output -----------------------------------------------------------------------------------------------

_REAL_LINES = [
    # (file, a substring that picks the line, the text just before the document, the value, what follows)
    (
        "keyhole/mongod.log",
        "5c032974f84a0a3a9441e5a6",
        "command: find ",
        {"find": "examples", "filter": {"_id": {"$oid": "5c032974f84a0a3a9441e5a6"}}, "skip": 0, "limit": 1,
         "batchSize": 1, "singleBatch": True, "$db": "_KEYHOLE_88800"},
        " planSummary: IDHACK",
    ),
    (
        "keyhole/mongod.log",
        "remove _KEYHOLE_88800.examples command: { q: { _id: ObjectId('5c03296ff84a0a3a94418d78')",
        "command: ",
        {"q": {"_id": {"$oid": "5c03296ff84a0a3a94418d78"}}, "limit": 1},
        " planSummary: IDHACK",
    ),
    (
        "mtools/collscans.log",
        "23454.0",
        "query: ",
        {"query": {"foo": {"$in": [33.0, 143.0, 23454.0]}}, "orderby": {"bar": -1.0}},
        " ntoreturn:0",
    ),
    (
        "mtools/mongod_225.log",
        "Timestamp 1375698319000|2",
        "update: ",
        {"$set": {"syncedTo": {"$timestamp": {"t": 1375698319, "i": 2}}}},
        " nscanned:1",
    ),
    (
        "mtools/mongod_225.log",
        "new Date(5908578361554239489)",
        "query: ",
        {"ts": {"$gte": {"$date": {"$numberLong": "5908578361554239489"}}}},
        " cursorid:",
    ),
    (
        "mtools/issue-636.log",
        "command: find",
        "command: find ",
        {"find": "xyz", "filter": {"$or": [{"x": 1}, {"$or": [{"y": 1}]}]}, "sort": {"field": -1}},
        " planSummary: COLLSCAN",
    ),
    (
        "mtools/mongod_4.0.10_storagestats.log",
        'command: find { find: "startup_log"',
        "command: find ",
        {"find": "startup_log", "filter": {}, "lsid": {"id": {"$uuid": "edbf6089-da9b-4dfd-8af0-a55a0e525d27"}},
         "$db": "local"},
        " planSummary: COLLSCAN",
    ),
    (
        "mtools/sharding_360_shard.log",
        'createIndexes { createIndexes: "products"',
        "command: createIndexes ",
        {"createIndexes": "products", "indexes": [{"key": {"sku": 1.0}, "name": "sku_1"}],
         "lsid": {"id": {"$uuid": "3b74eb10-ca8e-4cf0-b1db-ceaeb37d53da"}},
         "shardVersion": [{"$timestamp": {"t": 0, "i": 0}}, {"$oid": "000000000000000000000000"}],
         "$clusterTime": {"clusterTime": {"$timestamp": {"t": 1581037434, "i": 1}},
                          "signature": {"hash": {"$binary": {"base64": "QbXvQaibgt1GXKbvNb9hV/HZhko=", "subType": "0"}},
                                        "keyId": 6790502857306013704}},
         "$client": {"application": {"name": "MongoDB Shell"},
                     "driver": {"name": "MongoDB Internal Client", "version": "4.2.1"},
                     "os": {"type": "Darwin", "name": "Mac OS X", "architecture": "x86_64", "version": "18.7.0"},
                     "mongos": {"host": "gc.local:27017", "client": "127.0.0.1:65219", "version": "3.6.0"}},
         "$configServerState": {"opTime": {"ts": {"$timestamp": {"t": 1581037434, "i": 1}}, "t": 1}},
         "$db": "test"},
        " numYields:0",
    ),
    (
        "mtools/mongod_26.log",
        "received moveChunk request",
        "request: ",
        {"moveChunk": "test.docs", "from": "shard01/enter.local:27019,enter.local:27020,enter.local:27021",
         "to": "shard02/enter.local:27022,enter.local:27023,enter.local:27024", "fromShard": "shard01",
         "toShard": "shard02", "min": {"foo": 0}, "max": {"foo": {"$maxKey": 1}}, "maxChunkSizeBytes": 67108864,
         "shardId": "test.docs-foo_0", "configdb": "enter.local:27025,enter.local:27026,enter.local:27027",
         "secondaryThrottle": False, "waitForDelete": True, "maxTimeMS": 0},
        "",  # the document ends the line
    ),
]  # fmt: skip


def _corpus_line(corpus_dir: Path, name: str, needle: str) -> str:
    for line in (corpus_dir / name).read_text(encoding="utf-8", errors="surrogateescape").splitlines():
        if needle in line:
            return line
    raise AssertionError(f"no line with {needle!r} in {name}")


@pytest.mark.corpus
@pytest.mark.parametrize(("name", "needle", "before", "expected", "after"), _REAL_LINES)
def test_real_command_documents(
    corpus_dir: Path, name: str, needle: str, before: str, expected: Any, after: str
) -> None:
    line = _corpus_line(corpus_dir, name, needle)
    start = line.index(before) + len(before)
    parsed = parse_shell_value(line, start, raw_strings=True)
    assert parsed.value == expected
    assert line[parsed.end :].startswith(after)
    if not after:
        assert parsed.end == len(line)
    assert not parsed.elided


@pytest.mark.corpus
def test_the_insert_document_elided_in_a_real_log(corpus_dir: Path) -> None:
    line = _corpus_line(corpus_dir, "mtools/mongod_4.0.10_storagestats.log", "command: insert {...}")
    parsed = parse_shell_value(line, line.index("{..."))
    assert parsed == ShellValue({}, line.index(" planSummary"), True)


_DOC_START = re.compile(r"(?:command: (?:\w+ )?|query: )(?=\{)")
# mtools spliced anonymised lines into this fixture: string values replaced by bare hashes, which no server prints.
_ANONYMISED = re.compile(r": ([0-9a-f]{32})\b")


@pytest.mark.corpus
def test_every_command_document_in_the_text_logs(corpus_dir: Path) -> None:
    parsed = anonymised = 0
    for path in sorted([*corpus_dir.glob("mtools/**/*.log"), corpus_dir / "keyhole/mongod.log"]):
        for line in path.read_text(encoding="utf-8", errors="surrogateescape").splitlines():
            start = _DOC_START.search(line)
            if start is None or line.startswith('{"t"'):
                continue
            result = parse_shell_value(line, start.end(), raw_strings=True)
            assert re.match(r" [A-Za-z]|$", line[result.end :]), line
            assert isinstance(result.value, dict)
            parsed += 1
            masked = _ANONYMISED.search(line[start.end() : result.end])
            if masked:
                anonymised += 1
                assert masked.group(1) in repr(result.value), line
    assert parsed > 2000
    assert 10 <= anonymised < 20


def test_an_anonymised_bare_word_is_a_string() -> None:
    text = "{ _id: 0bcaf8127fb736e69893550ee650920e, n: b84afcc70af7c1ddceca1004352d7569, p: 27017 }"
    assert parse_shell_value(text, raw_strings=True).value == {
        "_id": "0bcaf8127fb736e69893550ee650920e", "n": "b84afcc70af7c1ddceca1004352d7569", "p": 27017}


@pytest.mark.corpus
def test_printjson_explain_output_from_a_real_shell(corpus_dir: Path) -> None:
    text = (corpus_dir / "mongodb-sanity-check/explain-shard.json").read_text(encoding="utf-8")
    assert "NumberLong(19)" in text
    (parsed,) = iter_shell_documents(text)
    assert parsed.value == orjson.loads(re.sub(r"NumberLong\((\d+)\)", r"\1", text))


@pytest.mark.corpus
def test_shell_printed_explains_without_helpers_equal_their_json(corpus_dir: Path) -> None:
    paths = sorted(corpus_dir.glob("mongodb-demo/**/*.json"))
    assert paths
    for path in paths:
        text = path.read_text(encoding="utf-8")
        assert [p.value for p in iter_shell_documents(text)] == [orjson.loads(text)], path


# --- equivalence with the 4.4+ JSON logger ----------------------------------------------------------------------------
# Random BSON values are printed three ways: as BSONObj::toString of a ≤4.2 server, as the legacy shell's printjson,
# and as the relaxed Extended JSON v2 of the 4.4+ logger. Parsing either shell form must give orjson.loads(JSON).

DATE_MIN_MS, DATE_MAX_MS = -2_145_916_800_000, 32_535_215_999_000  # Date_t::isFormattable


@dataclass(frozen=True)
class RegexValue:
    pattern: str
    options: str


@dataclass(frozen=True)
class Undefined:
    pass


def iso_utc(ms: int) -> str:
    moment = datetime(1970, 1, 1) + timedelta(milliseconds=ms)
    return f"{moment.year:04d}-{moment:%m-%dT%H:%M:%S}.{moment.microsecond // 1000:03d}Z"


def double_nice(x: float) -> str:
    """StringBuilder::appendDoubleNice with glibc's %g."""
    if math.isnan(x):
        return "nan.0"
    if math.isinf(x):
        return "inf.0" if x > 0 else "-inf.0"
    text = "%.16g" % x
    return text if any(c in text for c in ".EN") else text + ".0"


def server_text(v: Any) -> str:
    """What BSONObj::toString printed in ≤4.2 text logs."""
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k}: {server_text(x)}" for k, x in v.items()) + " }" if v else "{}"
    if isinstance(v, list):
        return "[ " + ", ".join(server_text(x) for x in v) + " ]" if v else "[]"
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return double_nice(v)
    if isinstance(v, str):
        return f'"{v}"'  # unescaped, as the server writes it
    if isinstance(v, ObjectId):
        return f"ObjectId('{v}')"
    if isinstance(v, DatetimeMS):
        return f"new Date({int(v)})"
    if isinstance(v, Timestamp):
        return f"Timestamp({v.time}, {v.inc})"
    if isinstance(v, Binary):
        if v.subtype == 4 and len(v) == 16:
            return f'UUID("{uuid.UUID(bytes=bytes(v))}")'
        return f"BinData({v.subtype}, {bytes(v).hex().upper()})"
    if isinstance(v, RegexValue):
        return f"/{v.pattern}/{v.options}"
    if isinstance(v, Decimal128):
        return str(v)
    if isinstance(v, MinKey):
        return "MinKey"
    if isinstance(v, MaxKey):
        return "MaxKey"
    assert isinstance(v, Undefined)
    return "undefined"


def shell_text(v: Any, indent: str = "") -> str:
    """What the legacy mongo shell's printjson wrote."""
    inner = indent + "\t"
    if isinstance(v, dict):
        if not v:
            return "{ }"
        items = ",\n".join(f"{inner}{json.dumps(k, ensure_ascii=False)} : {shell_text(x, inner)}" for k, x in v.items())
        return "{\n" + items + "\n" + indent + "}"
    if isinstance(v, list):
        return "[\n" + ",\n".join(inner + shell_text(x, inner) for x in v) + "\n" + indent + "]" if v else "[ ]"
    if isinstance(v, bool) or v is None:
        return json.dumps(v)
    if isinstance(v, int):
        return str(v) if -(2**31) <= v < 2**31 else f'NumberLong("{v}")'
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        return str(int(v)) if v.is_integer() and abs(v) < 1e21 else repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, ObjectId):
        return f'ObjectId("{v}")'
    if isinstance(v, DatetimeMS):
        ms = int(v)
        if -62_135_596_800_000 <= ms < 253_402_300_800_000:  # years 1..9999
            return f'ISODate("{iso_utc(ms)}")'
        return f"new Date({ms})"
    if isinstance(v, Timestamp):
        return f"Timestamp({v.time}, {v.inc})"
    if isinstance(v, Binary):
        if v.subtype == 4 and len(v) == 16:
            return f'UUID("{uuid.UUID(bytes=bytes(v))}")'
        return f'BinData({v.subtype},"{base64.b64encode(bytes(v)).decode()}")'
    if isinstance(v, RegexValue):
        return f"/{v.pattern}/{v.options}"
    if isinstance(v, Decimal128):
        return f'NumberDecimal("{v}")'
    if isinstance(v, MinKey):
        return '{ "$minKey" : 1 }'
    if isinstance(v, MaxKey):
        return '{ "$maxKey" : 1 }'
    assert isinstance(v, Undefined)
    return "undefined"


def json_log_text(v: Any) -> str:
    """What the 4.4+ logger writes: jsonString(ExtendedRelaxedV2_0_0) (generator_extended_relaxed_2_0_0.h)."""
    if isinstance(v, dict):
        return "{" + ",".join(f"{json.dumps(k)}:{json_log_text(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ",".join(json_log_text(x) for x in v) + "]"
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return '{"$numberDouble":"NaN"}'
        if math.isinf(v):
            return '{"$numberDouble":"Infinity"}' if v > 0 else '{"$numberDouble":"-Infinity"}'
        text = repr(v)  # fmt's "{}" is the shortest round trip too, and drops a trailing ".0"
        return text[:-2] if text.endswith(".0") else text
    if isinstance(v, ObjectId):
        return f'{{"$oid":"{v}"}}'
    if isinstance(v, DatetimeMS):
        ms = int(v)
        if DATE_MIN_MS <= ms < DATE_MAX_MS:
            return f'{{"$date":"{iso_utc(ms)}"}}'
        return f'{{"$date":{{"$numberLong":"{ms}"}}}}'
    if isinstance(v, Timestamp):
        return f'{{"$timestamp":{{"t":{v.time},"i":{v.inc}}}}}'
    if isinstance(v, Binary):
        if v.subtype == 4 and len(v) == 16:
            return f'{{"$uuid":"{uuid.UUID(bytes=bytes(v))}"}}'
        return f'{{"$binary":{{"base64":"{base64.b64encode(bytes(v)).decode()}","subType":"{v.subtype:x}"}}}}'
    if isinstance(v, RegexValue):
        return f'{{"$regularExpression":{{"pattern":{json.dumps(v.pattern)},"options":"{v.options}"}}}}'
    if isinstance(v, Decimal128):
        return f'{{"$numberDecimal":"{v}"}}'
    if isinstance(v, MinKey):
        return '{"$minKey":1}'
    if isinstance(v, MaxKey):
        return '{"$maxKey":1}'
    assert isinstance(v, Undefined)
    return '{"$undefined":true}'


# What a ≤4.2 server prints so that no reader could recover it (reported limits): keys with ':' ',' '{' '}' or outer
# spaces, a '"' inside a string followed by a separator, a '/' inside a pattern followed by flags and a separator.
_SERVER_KEY = re.compile(r"[^\s\"',:{}\[\]][^\s,:{}]*(?:[ \t]+[^\s,:{}]+)*", re.ASCII)
_QUOTE_THEN_SEPARATOR = re.compile(r'"\s*[,}\])]', re.ASCII)
_SLASH_THEN_SEPARATOR = re.compile(r"/[a-z]*\s*(?:[,}\])]|$)", re.ASCII)


def _recoverable_pattern(pattern: str) -> bool:
    trailing = len(pattern) - len(pattern.rstrip("\\"))
    return "\n" not in pattern and trailing % 2 == 0 and not _SLASH_THEN_SEPARATOR.search(pattern)


def _round_trips_in_16_digits(x: float) -> bool:
    return not math.isfinite(x) or float("%.16g" % x) == x


_ms = st.integers(DATE_MIN_MS - 1000, DATE_MAX_MS + 1000) | st.integers(-(2**63), 2**63 - 1)
_binary = st.builds(
    Binary,
    st.binary(max_size=80),  # the server cuts longer BinData in the text log
    st.sampled_from([0, 1, 3, 5, 6, 7, 8, 0x80, 0xFF]),  # 2 prints without its inner length, unlike JSON
) | st.builds(lambda b: Binary(b, 4), st.binary(min_size=16, max_size=16))


def bson_values(server: bool) -> st.SearchStrategy[Any]:
    text = st.text(max_size=39)  # 39 characters stay under the 160 bytes at which the server cuts a string
    keys = st.text(max_size=12)
    decimals = st.decimals(min_value=-(10**6), max_value=10**6, places=4, allow_nan=False).map(Decimal128)
    if server:
        text = text.filter(lambda s: not _QUOTE_THEN_SEPARATOR.search(s))
        keys = st.text(max_size=12).filter(lambda k: _SERVER_KEY.fullmatch(k) is not None)
        # Decimal128 prints bare: only an upper-case exponent or a trailing fractional zero tells it from a double.
        exponents = st.builds(lambda m, e: Decimal128(f"{m}E+{e}"), st.integers(-999, 999), st.integers(1, 99))
        trailing_zeros = st.builds(lambda i, d: Decimal128(f"{i}.{d}0"), st.integers(-999, 999), st.integers(0, 99))
        decimals = exponents | trailing_zeros
    scalars = st.one_of(
        st.integers(-(2**63), 2**63 - 1),
        st.floats().filter(_round_trips_in_16_digits),
        text,
        st.booleans(),
        st.none(),
        st.binary(min_size=12, max_size=12).map(ObjectId),
        _ms.map(DatetimeMS),
        st.builds(Timestamp, st.integers(0, 2**32 - 1), st.integers(0, 2**32 - 1)),
        _binary,
        st.builds(
            RegexValue,
            st.text(max_size=20).filter(_recoverable_pattern),
            st.sets(st.sampled_from("imsxlu")).map(lambda f: "".join(sorted(f))),
        ),
        decimals,
        st.sampled_from([MinKey(), MaxKey(), Undefined()]),
    )
    return st.recursive(
        scalars,
        lambda children: st.lists(children, max_size=5) | st.dictionaries(keys, children, max_size=5),
        max_leaves=25,
    )


def documents(server: bool) -> st.SearchStrategy[dict[str, Any]]:
    keys = st.text(max_size=12)
    if server:
        keys = keys.filter(lambda k: _SERVER_KEY.fullmatch(k) is not None)
    return st.dictionaries(keys, bson_values(server), max_size=6)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(documents(server=True))
@example({"a": 1.0, "b": 1e20, "c": float("nan"), "d": -0.0, "e": 5e-324})
@example({"s": 'say "hi"', "t": "tab\there", "b": "back\\slash", "e": ""})
@example({"r": RegexValue("a/b", "i"), "u": Binary(bytes(range(16)), 4), "x": Binary(b"", 0x80)})
@example({"d": [DatetimeMS(-1), DatetimeMS(DATE_MIN_MS), DatetimeMS(DATE_MAX_MS - 1), DatetimeMS(DATE_MAX_MS)]})
def test_server_text_parses_to_what_the_json_logger_writes(doc: dict[str, Any]) -> None:
    text = server_text(doc)
    parsed = parse_shell_value(text + " planSummary: COLLSCAN", raw_strings=True)
    assert parsed.value == orjson.loads(json_log_text(doc))
    assert parsed.end == len(text)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(documents(server=False), max_size=3))
@example([{"s": 'q"uote\\ \n\u0001 é 😀', "k\"ey": {"": []}}])
@example([{"big": 2**40, "neg": -(2**63), "x": 1e21, "min": MinKey(), "d": Decimal128("-0.0010")}])
@example([{"": DatetimeMS(-30610224000001)}])  # year 999: the test's ISO writer once lost the leading zero
def test_printjson_dumps_parse_to_what_the_json_logger_writes(docs: list[dict[str, Any]]) -> None:
    text = "\n".join(shell_text(doc) for doc in docs)
    assert [p.value for p in iter_shell_documents(text)] == [orjson.loads(json_log_text(doc)) for doc in docs]


# --- robustness: nothing but ShellSyntaxError, and end inside the text ------------------------------------------------


def check_total(text: str) -> None:
    for raw in (False, True):
        try:
            parsed = parse_shell_value(text, raw_strings=raw)
        except ShellSyntaxError as error:
            assert 0 <= error.position <= len(text)
        else:
            assert 0 < parsed.end <= len(text)
    try:
        for parsed in iter_shell_documents(text):
            assert 0 < parsed.end <= len(text)
    except ShellSyntaxError as error:
        assert 0 <= error.position <= len(text)


_FRAGMENTS = [
    "{", "}", "[", "]", ",", ":", " ", "\n", '"', "'", "\\", "/", "...", ".", "-", "0", "7", "1e+20.0", "inf", "nan",
    "a", "$in", "key: ", "ObjectId(", "'5c03296ff84a0a3a94418d78'", ")", "UUID(", "Timestamp(", "Timestamp 1|2",
    "BinData(", "0, ", "AB", "new Date(", "ISODate(", '"2019-11-16T10:20:30Z"', "NumberLong(", "NumberDecimal(",
    "HexData(", "DBRef(", "function () ", "Code(", "MinKey", "true", "null", "undefined", "/x/i", "é", "\ud800",
]  # fmt: skip


@given(st.text())
@example("{ a: 1" + "1" * 5000 + " }")
@example("[ " + "9" * 5000 + " ]")
@example("{ a: new Date(" + "9" * 5000 + ") }")
@example('{ a: BinData(4, "!!!!") }')
@example("{ a: BinData(999, 00) }")
@example('{ a: DBRef("c", 1 }')
@example("{ a: function () { ")
@example("{ a: function () } }")
@example('"\\ud800"')
def test_random_text(text: str) -> None:
    check_total(text)


@given(st.binary())
def test_random_bytes_decoded_with_surrogateescape(data: bytes) -> None:
    check_total(data.decode("utf-8", errors="surrogateescape"))


@settings(max_examples=1000)
@given(st.lists(st.sampled_from(_FRAGMENTS), max_size=40).map("".join))
def test_random_fragments_of_the_syntax(text: str) -> None:
    check_total(text)


_SAMPLES = [
    '{ find: "orders", filter: { status: "A", qty: { $gt: 25.5 }, tags: { $in: [ "red", "blank" ] }, name: /^ab/i }, '
    'lsid: { id: UUID("71240b17-f22a-4523-8eb7-57e2ad2e8a0b") }, '
    "$clusterTime: { clusterTime: Timestamp(1592924486, 119), "
    "signature: { hash: BinData(0, 6BDF2E0A1B2C3D4E5F60718293A4B5C6D7E8F901), keyId: 6790502857306013704 } }, "
    '$db: "shop" } planSummary: COLLSCAN',
    "{ q: { _id: ObjectId('5c03296ff84a0a3a94418d78'), ts: { $gte: new Date(1592924486000) } }, u: { $set: { a: "
    '"x", n: NumberLong(5), d: NumberDecimal("1.50"), k: MinKey, f: inf.0 } }, multi: false, upsert: false } '
    "nMatched:1",
    '{\n\t"op" : "query",\n\t"ts" : ISODate("2019-11-16T10:20:30.123Z"),\n\t"command" : {\n\t\t"$truncated" : '
    '"{ find: \\"c\\" }..."\n\t},\n\t"x" : [ 1, 2, ... ]\n}',
]


@pytest.mark.parametrize("text", _SAMPLES)
def test_documents_cut_at_every_position(text: str) -> None:
    end = parse_shell_value(text).end
    for cut in range(len(text) + 1):
        check_total(text[:cut])
        if cut < end:
            with pytest.raises(ShellSyntaxError):
                parse_shell_value(text[:cut])


@settings(max_examples=1000)
@given(
    st.sampled_from(_SAMPLES),
    st.integers(0, 10_000),
    st.sampled_from(["replace", "insert", "delete"]),
    st.sampled_from(list('{}[],:"\'\\/. \n0aE-$(|)') + ["\ud800", "é", "\x00"]),
)
def test_documents_with_one_character_changed(text: str, where: int, how: str, char: str) -> None:
    i = where % len(text)
    if how == "replace":
        text = text[:i] + char + text[i + 1 :]
    elif how == "insert":
        text = text[:i] + char + text[i:]
    else:
        text = text[:i] + text[i + 1 :]
    check_total(text)


@pytest.mark.corpus
def test_real_documents_cut_and_mutated(corpus_dir: Path) -> None:
    line = _corpus_line(corpus_dir, "mtools/sharding_360_shard.log", 'createIndexes { createIndexes: "products"')
    text = line[line.index("{") :]
    end = parse_shell_value(text, raw_strings=True).end
    for cut in range(end):
        with pytest.raises(ShellSyntaxError):
            parse_shell_value(text[:cut], raw_strings=True)
    for i in range(0, end, 3):
        for char in '{}[],:"\\ ':
            check_total(text[:i] + char + text[i + 1 :])
