"""The --indexes file: listIndexes output per namespace, key order kept, every problem one clear error."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from idxadvisor.cli import run
from idxadvisor.errors import InputError
from idxadvisor.indexes.catalog import load_index_arguments, load_index_file, parse_index_catalog
from idxadvisor.report.readable import md_text
from tests.conftest import FIXTURES_DIR


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


MDBKIT_EXPORT = {  # the layout of mdbkit 0.8's index export (tests/fixtures/real/indexes/*.json in its repository)
    "db": "", "generatedAt": "2026-10-02T18:37:14.049Z", "source": {"me": "127.0.0.1:28510", "isMongos": False},
    "databases": ["shop"],
    "collections": {"shop.orders": [{"v": 2, "key": {"_id": 1}, "name": "_id_"},
                                    {"v": 2, "key": {"status": 1, "createdAt": -1}, "name": "status_1_createdAt_-1"},
                                    {"v": 2, "key": {"total": 1}, "name": "total_1", "hidden": True}]},
    "usage": {"shop.orders": [
        {"name": "status_1_createdAt_-1", "host": "a:27017", "shard": None, "ops": 30,
         "since": {"$date": "2026-10-02T18:36:41.101Z"}},
        {"name": "status_1_createdAt_-1", "host": "b:27017", "shard": None, "ops": 12,
         "since": {"$date": "2026-10-02T18:36:40.000Z"}}]},
    "shardKeys": {},
}

GET_INDEXES_44 = """[
  { v: 2, key: { _id: 1 }, name: '_id_' },
  { v: 2, key: { status: 1, createdAt: -1 }, name: 'status_1_createdAt_-1', partialFilterExpression: { total: { '$gt': 50 } } },
  { v: 2, key: { email: 1 }, name: 'email_1', unique: true }
]
"""

GET_INDEXES_42 = """[
\t{
\t\t"v" : 2,
\t\t"key" : {
\t\t\t"_id" : 1
\t\t},
\t\t"name" : "_id_",
\t\t"ns" : "shop.orders"
\t},
\t{
\t\t"v" : 2,
\t\t"key" : {
\t\t\t"region" : 1,
\t\t\t"createdAt" : NumberLong(-1)
\t\t},
\t\t"name" : "region_1_createdAt_-1",
\t\t"ns" : "shop.orders"
\t}
]
"""


def test_an_mdbkit_export_is_read_with_its_usage(tmp_path: Path) -> None:
    catalog = load_index_file(write(tmp_path, json.dumps(MDBKIT_EXPORT)))
    specs = catalog["shop.orders"]
    assert [spec.key for spec in specs[1:]] == [(("status", 1), ("createdAt", -1)), (("total", 1),)]
    assert specs[2].hidden
    assert specs[1].accesses == {"ops": 42, "since": {"$date": "2026-10-02T18:36:41.101Z"}}  # summed over members
    assert specs[0].accesses is None


def test_an_mdbkit_export_of_one_database_names_its_collections_bare(tmp_path: Path) -> None:
    export = {**MDBKIT_EXPORT, "db": "shop", "collections": {"orders": MDBKIT_EXPORT["collections"]["shop.orders"],
                                                             "shop.events": [{"key": {"_id": 1}, "name": "_id_"}]},
              "usage": {"orders": MDBKIT_EXPORT["usage"]["shop.orders"]}}
    catalog = load_index_file(write(tmp_path, json.dumps(export)))
    assert sorted(catalog) == ["shop.events", "shop.orders"]  # a key that is a namespace of the database stays one
    assert [spec.name for spec in catalog["shop.orders"]] == ["_id_", "status_1_createdAt_-1", "total_1"]
    assert catalog["shop.orders"][1].accesses == {"ops": 42, "since": {"$date": "2026-10-02T18:36:41.101Z"}}


@pytest.mark.parametrize("usage", [1.5, True, "status_1", {"name": "status_1", "ops": 3}])
def test_mdbkit_usage_of_another_shape_is_no_usage(tmp_path: Path, usage: object) -> None:
    export = {**MDBKIT_EXPORT, "usage": {"shop.orders": usage}}
    catalog = load_index_file(write(tmp_path, json.dumps(export)))
    assert all(spec.accesses is None for spec in catalog["shop.orders"])


def test_an_index_named_with_something_else_than_text_gets_no_usage_and_no_crash(tmp_path: Path) -> None:
    collections = copy.deepcopy(MDBKIT_EXPORT["collections"])
    collections["shop.orders"][1]["name"] = {"$numberLong": "5"}  # was: unhashable, an internal error
    catalog = load_index_file(write(tmp_path, json.dumps({**MDBKIT_EXPORT, "collections": collections})))
    assert catalog["shop.orders"][1].key == (("status", 1), ("createdAt", -1))
    assert catalog["shop.orders"][1].accesses is None


def test_mongosh_get_indexes_output_needs_its_namespace(tmp_path: Path) -> None:
    path = write(tmp_path, GET_INDEXES_44)
    with pytest.raises(InputError, match=r"do not say their collection .* --indexes <db>.<collection>=FILE"):
        load_index_file(path)
    catalog = load_index_arguments([f"shop.orders={path}"])
    specs = catalog["shop.orders"]
    assert [spec.name for spec in specs] == ["_id_", "status_1_createdAt_-1", "email_1"]
    assert specs[1].partial_filter == {"total": {"$gt": 50}} and specs[2].unique


def test_legacy_shell_get_indexes_output_names_its_namespace(tmp_path: Path) -> None:
    catalog = load_index_arguments([str(write(tmp_path, GET_INDEXES_42))])
    assert [spec.key for spec in catalog["shop.orders"]] == [(("_id", 1),), (("region", 1), ("createdAt", -1))]


def test_several_index_files_merge(tmp_path: Path) -> None:
    first = tmp_path / "a.json"
    first.write_text(json.dumps({"shop.orders": [{"key": {"a": 1}, "name": "a_1"}]}))
    second = tmp_path / "users.js"
    second.write_text("[ { v: 2, key: { email: 1 }, name: 'email_1' } ]")
    catalog = load_index_arguments([str(first), f"shop.users={second}"])
    assert sorted(catalog) == ["shop.orders", "shop.users"]


def test_a_namespace_for_a_file_that_has_them_is_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, json.dumps({"shop.orders": [{"key": {"a": 1}}]}))
    with pytest.raises(InputError, match="maps namespaces to indexes already"):
        load_index_arguments([f"shop.orders={path}"])


def test_text_that_is_neither_json_nor_shell_output_is_one_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="is not JSON .* nor mongo-shell getIndexes"):
        load_index_file(write(tmp_path, "status_1: {status: 1}\n"))


UNREADABLE = [{"v": 2, "key": {"$**": "columnstore"}, "name": "columnstore"},
              {"v": 2, "key": {"a": 0}, "name": "zero"}, "a_1"]


@pytest.mark.parametrize("layout", ["mapping", "mdbkit", "shell", "bare list"])
def test_given_a_list_unreadable_indexes_are_left_out_with_their_reasons(tmp_path: Path, layout: str) -> None:
    indexes = [{"v": 2, "key": {"status": 1}, "name": "status_1"}, *UNREADABLE]
    text = {"mapping": json.dumps({"shop.orders": indexes}),
            "mdbkit": json.dumps({"db": "shop", "collections": {"shop.orders": indexes}}),
            "shell": json.dumps(indexes).replace('"v"', "v").replace('"key"', "key"),
            "bare list": json.dumps(indexes)}[layout]
    path = write(tmp_path, text)
    left_out: list[str] = []
    catalog = load_index_arguments([f"shop.orders={path}" if layout in ("shell", "bare list") else str(path)],
                                   left_out)
    assert [spec.name for spec in catalog["shop.orders"]] == ["_id_", "status_1"]
    assert left_out == [f"--indexes {path}: shop.orders: index columnstore: unknown index direction 'columnstore' "
                        "(left out)",
                        f"--indexes {path}: shop.orders: index zero: index direction 0 is not valid (left out)",
                        f"--indexes {path}: shop.orders: index 3 is not an object (left out)"]
    with pytest.raises(InputError, match="index columnstore"):  # without the list, the first one is an error
        load_index_arguments([f"shop.orders={path}" if layout in ("shell", "bare list") else str(path)])


def test_a_file_that_cannot_be_read_as_a_whole_is_still_an_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="expected a list of indexes"):
        load_index_arguments([str(write(tmp_path, json.dumps({"shop.orders": {"key": {"a": 1}}})))], [])


def test_an_unreadable_index_changes_nothing_but_the_reports_note_of_it(tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    good = FIXTURES_DIR / "demo" / "indexes.json"
    document = json.loads(good.read_text())
    document["shop.orders"].append(UNREADABLE[0])
    bad = write(tmp_path, json.dumps(document))
    reports = {}
    for name, path in (("good", good), ("bad", bad)):
        output = tmp_path / f"{name}.json"
        code = run(["analyze", str(FIXTURES_DIR / "demo" / "shop.log"), "--indexes", str(path), "--format", "json",
                    "--fail-on", "never", "--jobs", "1", "--output", str(output)])
        assert code == 0
        reports[name] = json.loads(output.read_text())
    expected = (f"--indexes {bad}: shop.orders: index columnstore: unknown index direction 'columnstore' "
                "(left out)")
    assert capsys.readouterr().err == f"idxadvisor: warning: {expected}\n"
    assert reports["bad"].pop("indexes_left_out") == [expected]
    assert reports["good"].pop("indexes_left_out") == []
    assert reports["bad"]["findings"] and reports["bad"]["inputs"] == reports["good"]["inputs"]
    assert reports["bad"]["findings"] == reports["good"]["findings"]
    assert reports["bad"]["suggested_indexes"] == reports["good"]["suggested_indexes"]
    assert reports["bad"]["index_sets"] == reports["good"]["index_sets"]
    rendered = {}
    for format in ("text", "markdown", "sarif"):
        output = tmp_path / f"bad.{format}"
        run(["analyze", str(FIXTURES_DIR / "demo" / "shop.log"), "--indexes", str(bad), "--format", format,
             "--fail-on", "never", "--jobs", "1", "--output", str(output)])
        rendered[format] = output.read_text()
    assert f"not read: {expected}" in " ".join(rendered["text"].split())
    assert f"Not read: {md_text(expected)}." in rendered["markdown"].splitlines()  # prose: Markdown escaped
    assert json.loads(rendered["sarif"])["runs"][0]["properties"]["indexesLeftOut"] == [expected]
