"""The fast sample decoder (orjson and one walk) gives exactly what bson's json_util gives, wrapper by wrapper."""

from __future__ import annotations

import json
from pathlib import Path

import bson
from hypothesis import given, settings
from hypothesis import strategies as st

from idxadvisor.ingest.samples import decode_document, decode_extended_json

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
