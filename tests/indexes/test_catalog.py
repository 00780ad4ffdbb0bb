"""The --indexes file: listIndexes output per namespace, key order kept, every problem one clear error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from idxadvisor.errors import InputError
from idxadvisor.indexes.catalog import load_index_file, parse_index_catalog


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "indexes.json"
    path.write_text(text)
    return path


def test_key_order_is_kept_and_extended_json_numbers_are_read(tmp_path: Path) -> None:
    # Keys deliberately out of alphabetical order: a dict-sorting loader would get them wrong.
    path = write(tmp_path, '{"shop.orders": [{"v": 2, "key": {"_id": 1}, "name": "_id_"},'
                           ' {"v": 2, "key": {"status": {"$numberInt": "1"}, "createdAt": -1.0}, "name": "s_c"}]}')
    catalog = load_index_file(path)
    assert [spec.key for spec in catalog["shop.orders"]] == [(("_id", 1),), (("status", 1), ("createdAt", -1))]
    assert catalog["shop.orders"][1].name == "s_c"


def test_the_id_index_is_implied_when_the_file_leaves_it_out() -> None:
    catalog = parse_index_catalog({"shop.orders": [{"key": {"status": 1}, "name": "status_1"}]})
    assert [spec.name for spec in catalog["shop.orders"]] == ["_id_", "status_1"]
    assert catalog["shop.orders"][0].is_id_index


def test_a_missing_file_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="--indexes: cannot read .*nope.json"):
        load_index_file(tmp_path / "nope.json")


def test_a_file_that_is_not_json_names_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, '{\n"shop.orders": [\n{"key": {"a": 1}\n]}')
    with pytest.raises(InputError, match=r"is not JSON \(.* at line 4\)"):
        load_index_file(path)


@pytest.mark.parametrize(("document", "message"), [
    ([{"key": {"a": 1}}], "do not say their collection"),
    (7, "expected an object mapping each namespace"),
    ({"orders": []}, "'orders' is not a namespace"),
    ({"shop.orders": {"key": {"a": 1}}}, "shop.orders: expected a list of indexes"),
    ({"shop.orders": ["a_1"]}, "shop.orders: index 0 is not an object"),
    ({"shop.orders": [{"name": "a_1"}]}, "shop.orders: index a_1: an index document needs a 'key' object"),
    ({"shop.orders": [{"key": {"a": 0}, "name": "zero"}]}, "index zero: index direction 0 is not valid"),
    ({"shop.orders": [{"key": {"a": {"$numberInt": "x"}}}]}, r"index #0: index direction \$numberInt 'x' is not"),
    ({"shop.orders": [{"key": {"a": "sideways"}}]}, "unknown index direction 'sideways'"),
    ({"shop.orders": [{"key": {}}]}, "an index needs at least one field"),
])
def test_every_malformed_catalog_is_one_input_error_naming_the_place(tmp_path: Path, document: object,
                                                                     message: str) -> None:
    with pytest.raises(InputError, match=message):
        load_index_file(write(tmp_path, json.dumps(document)))
