"""The data-sample loader: formats, gzip, reservoir sampling, bad lines, non-samples."""

from __future__ import annotations

import datetime
import gzip
import json
from pathlib import Path

import bson
import pytest
from bson import ObjectId

from idxadvisor.errors import InputError, UsageError
from idxadvisor.ingest.samples import UNDEFINED, decode_extended_json, load_sample

DOCS = [{"_id": ObjectId("6500000000000000000000%02d" % i), "n": i, "at": datetime.datetime(2024, 1, i + 1)}
        for i in range(12)]


def _ejson_lines(docs: list[dict]) -> str:
    return "\n".join(bson.json_util.dumps(doc) for doc in docs) + "\n"


def test_json_lines_relaxed_and_canonical(tmp_path: Path) -> None:
    path = tmp_path / "orders.json"
    canonical = bson.json_util.dumps(DOCS[1], json_options=bson.json_util.CANONICAL_JSON_OPTIONS)
    path.write_text(bson.json_util.dumps(DOCS[0]) + "\n" + canonical + "\n\n")
    sample = load_sample(path)
    assert sample.documents == DOCS[:2]
    assert (sample.documents_seen, sample.sampled, sample.problems) == (2, False, 0)
    assert sample.average_document_size == pytest.approx(len(bson.encode(DOCS[0])))


def test_json_array_is_streamed(tmp_path: Path) -> None:
    path = tmp_path / "orders.json"
    path.write_text("\ufeff [\n" + ",\n".join(bson.json_util.dumps(d) for d in DOCS) + "\n]\n")
    sample = load_sample(path)
    assert sample.documents == DOCS
    big = tmp_path / "big.json"
    filler = "x" * 5000
    big.write_text(json.dumps([{"i": i, "pad": filler} for i in range(200)]))
    loaded = load_sample(big, sample_size=500)
    assert [d["i"] for d in loaded.documents] == list(range(200))


def test_bson_dump_and_gzip(tmp_path: Path) -> None:
    dump = tmp_path / "orders.bson"
    dump.write_bytes(b"".join(bson.encode(d) for d in DOCS))
    assert load_sample(dump).documents == DOCS
    zipped = tmp_path / "orders.bson.gz"
    zipped.write_bytes(gzip.compress(dump.read_bytes()))
    assert load_sample(zipped).documents == DOCS
    lines = tmp_path / "orders.json.gz"
    lines.write_bytes(gzip.compress(_ejson_lines(DOCS).encode()))
    assert load_sample(lines).documents == DOCS


def test_reservoir_size_and_determinism(tmp_path: Path) -> None:
    path = tmp_path / "many.json"
    path.write_text("\n".join(json.dumps({"i": i}) for i in range(1000)))
    first = load_sample(path, sample_size=50, seed=7)
    again = load_sample(path, sample_size=50, seed=7)
    other = load_sample(path, sample_size=50, seed=8)
    assert len(first.documents) == 50 and first.documents_seen == 1000 and first.sampled
    assert first.documents == again.documents
    assert first.documents != other.documents
    assert len({d["i"] for d in first.documents}) == 50


def test_bad_lines_are_counted_and_skipped(tmp_path: Path) -> None:
    path = tmp_path / "orders.json"
    path.write_text('{"a": 1}\n{not json\n[1, 2]\n{"d": {"$date": "garbage"}}\n{"a": 2}\n')
    sample = load_sample(path)
    assert [d["a"] for d in sample.documents] == [1, 2]
    assert sample.problems == 3


@pytest.mark.parametrize("content", [b"hello world\n", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", b"", b"[1, 2"])
def test_not_a_sample_is_an_input_error(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "thing.dat"
    path.write_bytes(content)
    with pytest.raises(InputError):
        load_sample(path)


def test_missing_file_and_bad_sample_size(tmp_path: Path) -> None:
    with pytest.raises(InputError):
        load_sample(tmp_path / "absent.json")
    path = tmp_path / "orders.json"
    path.write_text('{"a": 1}\n')
    with pytest.raises(UsageError):
        load_sample(path, sample_size=0)


def test_extended_json_decoding_keeps_operators_and_undefined() -> None:
    decoded = decode_extended_json('{"name": {"$gt": "a", "$regex": "^e"}, "u": {"$undefined": true}, '
                                   '"d": {"$date": "2024-01-01T00:00:00Z"}}')
    assert decoded["name"] == {"$gt": "a", "$regex": "^e"}
    assert decoded["u"] is UNDEFINED
    assert decoded["d"] == datetime.datetime(2024, 1, 1)
