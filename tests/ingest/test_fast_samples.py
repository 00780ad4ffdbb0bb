"""The fast sample decoder (orjson and one walk) gives exactly what bson's json_util gives, wrapper by wrapper."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import bson
import pytest
from bson import ObjectId
from bson.errors import BSONError
from hypothesis import given, settings
from hypothesis import strategies as st

from idxadvisor.errors import InputError
from idxadvisor.ingest import samples
from idxadvisor.ingest.samples import decode_document, decode_extended_json, load_sample

WRAPPERS = st.one_of(
    st.integers(0, 2**96 - 1).map(lambda n: {"$oid": f"{n:024x}"}),
    st.integers(-(2**63), 2**63 - 1).map(lambda n: {"$numberLong": str(n)}),
    st.integers(-(2**31), 2**31 - 1).map(lambda n: {"$numberInt": str(n)}),
    st.floats(allow_nan=False).map(lambda x: {"$numberDouble": repr(x) if x == x else "NaN"}),
    st.sampled_from(["Infinity", "-Infinity", "NaN"]).map(lambda x: {"$numberDouble": x}),
    st.tuples(st.datetimes(), st.sampled_from(["Z", "+05:30", "-08:00", "+00:00"]), st.booleans()).map(
        lambda parts: {"$date": parts[0].strftime("%Y-%m-%dT%H:%M:%S" + (".%f" if parts[2] else ""))
                       [: 23 if parts[2] else 19] + parts[1]}),
    st.integers(-(2**40), 2**40).map(lambda ms: {"$date": {"$numberLong": str(ms)}}),
    st.just({"$minKey": 1}), st.just({"$maxKey": 1}), st.just({"$undefined": True}),
    st.just({"$regularExpression": {"pattern": "^ab", "options": "i"}}),
    st.just({"$binary": {"base64": "AQID", "subType": "00"}}),
    st.just({"$timestamp": {"t": 5, "i": 2}}),
    st.just({"$regex": "^e", "$options": "m"}),
    st.just({"$gt": "a", "$regex": "^e"}),  # the query operator, not a wrapper
    st.just({"$numberDecimal": "1.25"}),
)
PLAIN = st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**63 - 1), st.text(max_size=8),
                  st.floats(allow_nan=False, allow_infinity=False))
VALUES = st.recursive(st.one_of(PLAIN, WRAPPERS), lambda children: st.one_of(
    st.lists(children, max_size=4), st.dictionaries(st.text("abcxyz_.", min_size=1, max_size=5), children,
                                                     max_size=4)), max_leaves=25)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text("abcdef", min_size=1, max_size=4), VALUES, max_size=6))
def test_the_fast_decoder_agrees_with_json_util(document: dict) -> None:
    text = json.dumps(document)
    try:
        expected = decode_extended_json(text)
    except Exception as exc:  # noqa: BLE001 - json_util refuses it: the fast decoder must refuse it too
        try:
            decode_document(text)
        except Exception:  # noqa: BLE001
            return
        raise AssertionError(f"json_util refused {text}: {exc!r}") from None
    got = decode_document(text)
    assert repr(got) == repr(expected)  # types and values alike (NaN included, which == would not match)


def test_every_demo_sample_decodes_as_json_util_decodes_it(fixtures_dir: Path) -> None:
    for path in sorted((fixtures_dir / "demo" / "data").glob("*.json")):
        for line in path.read_text().splitlines():
            assert bson.encode(decode_document(line)) == bson.encode(decode_extended_json(line)), path


def test_documents_nested_deeper_than_bson_allows_are_refused() -> None:
    deep = '{"a": ' * 101 + "1" + "}" * 101
    try:
        decode_document(deep)
    except ValueError:
        return
    raise AssertionError("a document nested 102 levels deep was accepted")


# The loader's shortcuts (see ``_Wrappers`` and ``_Runs``): a document's walk stops once its ``$`` signs are spent,
# top-level wrappers are looked up where the previous document had them, and an array is read in runs cut at a
# separator like ``, {"_id"``. Each case below is one a shortcut could get wrong; the loader must give what decoding
# each document on its own gives (``decode_document``, unchanged: orjson and the full walk).

OID = "6726000000000000a1b2c3d4"
TRICKY = [
    {"_id": {"$oid": OID}, "a": [[[{"b": [{"$oid": OID}]}]]]},                    # a wrapper deep in arrays
    {"_id": {"$oid": OID}, "s": '{"$date": "2024-01-01T00:00:00Z"}'},             # "$ only inside a string
    {"_id": {"$oid": OID}, "s": "$", "n": {"d": {"$date": "2024-01-01T00:00:00Z"}}},  # a $ spent by a string first
    {"_id": {"$oid": OID, "x": 1}},                                               # the hint's field is no wrapper,
    {"_id": {"$oid": OID}},
    {"_id": 7, "views": {"$numberLong": "12"}},                                   # nor is an int
    {"_id": {"$oid": OID}},
    {"_id": {"$oid": "not hex"}},                                                 # a bad wrapper: a problem
    {"_id": {"$date": "2024-01-01"}, "c": [{"_id": {"$oid": OID}}, {"_id": {"$oid": OID}}]},  # nested, same first key
    {"_id": {"$oid": OID}, "when": {"$date": {"$numberLong": "1700000000000"}}},  # a wrapper inside a wrapper
    {"_id": {"$oid": OID}, "u": {"$undefined": True}, "q": {"$gt": "a", "$regex": "^e"}},
    {"z": {"$oid": OID}},
    {"_id": {"$oid": OID}},
]


def _expected(texts: list[str]) -> list[Any]:
    expected = []
    for text in texts:
        try:
            document = decode_document(text)
        except (ValueError, TypeError, OverflowError, BSONError):
            continue
        if type(document) is dict:
            expected.append(document)
    return expected


def _load(path: Path, text: str) -> list[Any]:
    path.write_text(text)
    return load_sample(path, sample_size=10_000).documents


@pytest.mark.parametrize("chunk", [32, 1 << 16])
def test_lines_convert_every_wrapper_the_shortcuts_could_skip(tmp_path: Path, chunk: int,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(samples, "_CHUNK", chunk)
    texts = [json.dumps(document) for document in TRICKY * 3]
    got = _load(tmp_path / "lines.json", "\n".join(texts) + "\n")
    assert repr(got) == repr(_expected(texts))
    assert isinstance(got[0]["a"][0][0][0]["b"][0], ObjectId) and type(got[1]["s"]) is str


@pytest.mark.parametrize("chunk", [32, 1 << 16])
@pytest.mark.parametrize("separator", [", ", ",", ",\n  "])
def test_array_runs_convert_what_each_element_alone_converts(tmp_path: Path, chunk: int, separator: str,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(samples, "_CHUNK", chunk)
    texts = [json.dumps(document) for document in TRICKY * 3]
    got = _load(tmp_path / "array.json", "[" + separator.join(texts) + "]")
    assert repr(got) == repr(_expected(texts))


def test_an_escaped_dollar_key_is_still_a_wrapper(tmp_path: Path) -> None:
    line = '{"_id": {"\\u0024oid": "%s"}, "n": 1}' % OID
    for text in (line + "\n" + line + "\n", "[" + line + ", " + line + "]"):
        assert _load(tmp_path / "escaped.json", text) == [{"_id": ObjectId(OID), "n": 1}] * 2


@pytest.mark.parametrize("array", [False, True])
def test_nesting_deeper_than_bson_allows_is_a_problem_in_both_forms(tmp_path: Path, array: bool) -> None:
    def nested(levels: int, innermost: str) -> str:  # ``levels`` objects, the innermost one ``innermost``
        return '{"_id": {"$oid": "%s"}, "d": ' % OID + '{"d": ' * (levels - 2) + innermost + "}" * (levels - 1)
    texts = [nested(100, '{"$oid": "%s"}' % OID), nested(101, '{"x": 1}'), nested(100, '{"x": 1}')]
    path = tmp_path / "deep.json"
    path.write_text("[" + ", ".join(texts) + "]" if array else "\n".join(texts))
    sample = load_sample(path)
    assert sample.problems == 1 and repr(sample.documents) == repr(_expected(texts))
    assert len(sample.documents) == 2 and isinstance(sample.documents[0]["_id"], ObjectId)


def test_an_array_keeps_integers_beyond_64_bits_and_reads_nan_as_before(tmp_path: Path) -> None:
    elements = ['{"_id": 1, "n": 2}', '{"_id": 2, "big": 123456789012345678901234}', '{"_id": 3, "x": NaN}',
                '{"_id": 4, "neg": -9223372036854775809}', '{"_id": 5, "s": "12345678901234567890123 x"}', "7"]
    path = tmp_path / "array.json"
    path.write_text("[" + ", ".join(elements) + "]")
    sample = load_sample(path)
    big = sample.documents[1]["big"]
    assert type(big) is int and big == 123456789012345678901234
    assert type(sample.documents[3]["neg"]) is int and math.isnan(sample.documents[2]["x"])
    assert [d["_id"] for d in sample.documents] == [1, 2, 3, 4, 5] and sample.problems == 1


def test_lines_end_at_any_newline_and_unicode_blanks_around_them_are_stripped(tmp_path: Path) -> None:
    path = tmp_path / "lines.json"
    path.write_bytes(b'{"a": 1}\r{"a": 2}\r\n{"a": 3}\n\n  \n{"a": 4}\xe3\x80\x80\n\xef\xbb\xbf{"a": 5}\n')
    sample = load_sample(path)
    assert [d["a"] for d in sample.documents] == [1, 2, 3, 4] and sample.problems == 1


@settings(max_examples=150, deadline=None)
@given(st.lists(st.dictionaries(st.text("abcdef", min_size=1, max_size=4), VALUES, max_size=5), max_size=12),
       st.sampled_from([", ", ",", ",\n"]), st.sampled_from([16, 1 << 16]))
def test_a_sample_loads_as_its_documents_decode_one_by_one(tmp_path_factory: pytest.TempPathFactory, rest: list[dict],
                                                            separator: str, chunk: int) -> None:
    texts = [json.dumps({"_id": {"$oid": OID}, **document}) for document in rest]
    expected = _expected(texts)
    folder = tmp_path_factory.mktemp("sample")
    old_chunk, samples._CHUNK = samples._CHUNK, chunk  # a fixture's monkeypatch would outlive the examples
    try:
        for name, text in (("lines.json", "\n".join(texts)), ("array.json", "[" + separator.join(texts) + "]")):
            if not expected:
                with pytest.raises(InputError):  # no document at all
                    _load(folder / name, text)
            else:
                assert repr(_load(folder / name, text)) == repr(expected), name
    finally:
        samples._CHUNK = old_chunk


def test_the_average_size_counts_the_documents_that_encode_one_by_one() -> None:
    documents: list[Any] = [{"_id": ObjectId(OID), "n": n, "s": "x" * n} for n in range(600)]
    documents[7] = {"big": 2**70}  # bson refuses these: left out of the average, as before
    documents[300] = "not a document"
    sizes = [len(bson.encode(d)) for d in documents if d not in ({"big": 2**70}, "not a document")]
    assert samples.average_size(documents) == sum(sizes) / len(sizes)
    assert samples.average_size(documents[8:300]) == sum(sizes[7:299]) / 292


def test_object_ids_built_without_the_constructor_are_real_ones(monkeypatch) -> None:
    from bson import ObjectId

    from idxadvisor.ingest import samples

    text = "6726000000000000a1b2c3d4"
    fast = samples._object_id(text)
    assert type(fast) is ObjectId and fast == ObjectId(text) and hash(fast) == hash(ObjectId(text))
    assert str(fast) == text and fast.binary == bytes.fromhex(text)
    monkeypatch.setattr(samples, "_set_object_id", None)  # a bson release without the private slot
    assert samples._object_id(text) == ObjectId(text)
