"""idxadvisor check: exit codes, baselines, migration scripts and index files read with positions, SARIF regions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from idxadvisor.cli import run
from idxadvisor.errors import InputError
from idxadvisor.gate.indexfile import parse_index_text
from idxadvisor.gate.scripts import script_calls
from tests.conftest import FIXTURES_DIR

DEMO = FIXTURES_DIR / "demo"
WORKLOAD = ["--workload", str(DEMO / "shop.log"), "--baseline-indexes", str(DEMO / "indexes.json")]


def check(capsys: pytest.CaptureFixture[str], *arguments: str) -> tuple[int, dict, str]:
    code = run(["check", *arguments, "--format", "json", "--jobs", "1"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out) if captured.out else {}, captured.err


def test_the_demo_migration_fails_the_gate_with_its_findings_at_their_lines(capsys: pytest.CaptureFixture[str]) -> None:
    code, report, err = check(capsys, *WORKLOAD, "--indexes", str(DEMO / "migrations"))
    assert code == 1 and err == ""
    gate = report["gate"]
    assert not gate["passed"] and gate["fail_on"] == "error" and gate["counted"] == 3
    assert [(change["action"], change["name"], change["location"]["line"]) for change in gate["changes"]] == [
        ("created", "customerId_1_createdAt_-1", 6), ("dropped", "status_1", 8),
        ("created", "createdAt_-1_productId_1", 11), ("created", "tags_sizes", 14)]
    new = {(finding["rule"], finding["location"]["line"]) for finding in report["findings"] if finding["status"] == "new"}
    assert new == {("CI001", 8), ("CI002", 8), ("CI003", 6), ("IX002", 11)}
    assert all(finding["status"] == "existing" for finding in report["findings"] if finding["rule"] in ("IX001", "AG001"))


def test_with_data_a_shape_losing_its_index_has_the_estimators_numbers_for_both_sets(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, report, err = check(capsys, *WORKLOAD, "--indexes", str(DEMO / "migrations"), "--data", str(DEMO / "data"))
    assert code == 1 and err == ""
    lost = [finding for finding in report["findings"] if finding["rule"] == "CI002"]
    assert lost and all(finding["evidence"]["evaluator"] == "estimator" for finding in lost)
    for finding in lost:  # today status_1 bounds the scan; without it, the collection is scanned
        before, after = finding["evidence"]["before"], finding["evidence"]["after"]
        assert before["planSummary"] == "IXSCAN { status: 1 }" and after["planSummary"] == "COLLSCAN"
        assert after["totalDocsExamined"] > before["totalDocsExamined"]


def test_with_data_an_index_the_server_refuses_is_an_error_at_its_call_and_resolves_nothing(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, report, err = check(capsys, *WORKLOAD, "--indexes", str(DEMO / "migrations"), "--data", str(DEMO / "data"))
    assert code == 1 and err == ""
    refused = [finding for finding in report["findings"] if finding["rule"] == "CI004"]
    assert [(finding["severity"], finding["status"], finding["location"]["path"].rsplit("/", 1)[-1],
             finding["location"]["line"], finding["location"]["column"]) for finding in refused] == [
        ("error", "new", "20261103-indexes.js", 14, 1)]
    assert "tags_sizes { tags: 1, sizes: 1 }" in refused[0]["message"]
    assert "CannotIndexParallelArrays" in refused[0]["message"]
    # the shape that needs tags and sizes is not served by an index that cannot be built: IX003 stays, unresolved
    assert [finding["rule"] for finding in report["gate"]["resolved"]] == ["IX002"]
    assert [(finding["status"], finding["ns"]) for finding in report["findings"] if finding["rule"] == "IX003"] == [
        ("existing", "shop.products")]
    assert ("refused", "tags_sizes", 14) in [(change["action"], change["name"], change["location"]["line"])
                                             for change in report["gate"]["changes"]]
    products = [finding for finding in report["findings"] if finding["ns"] == "shop.products" and finding["evidence"]]
    assert products and all("error" not in finding["evidence"]["after"] for finding in products)


def test_an_invalid_index_specification_is_a_refused_index_at_its_call(capsys: pytest.CaptureFixture[str],
                                                                        tmp_path: Path) -> None:
    path = tmp_path / "bad.js"
    path.write_text("use shop\ndb.orders.createIndex({ a: 'yes' })\n", encoding="utf-8")
    code, report, err = check(capsys, *WORKLOAD, "--indexes", str(path))
    assert code == 1 and err == ""
    [refused] = [finding for finding in report["findings"] if finding["rule"] == "CI004"]
    assert (refused["location"]["line"], refused["location"]["column"]) == (2, 1)
    assert "{ a: 'yes' }, which the server would refuse: its specification is invalid: unknown index direction" in (
        refused["message"])


def test_a_harmless_change_passes(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    script = tmp_path / "001-add.js"
    script.write_text('use shop\ndb.customers.createIndex({ city: 1, lastName: 1 })\n', encoding="utf-8")
    code, report, _ = check(capsys, *WORKLOAD, "--indexes", str(script))
    assert code == 0 and report["gate"]["passed"] and report["gate"]["new"] == 0
    assert [finding["rule"] for finding in report["gate"]["resolved"]] == ["IX001"]  # it is the index IX001 asked for


def test_a_baseline_of_findings_suppresses_what_it_records(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    arguments = ["--workload", str(DEMO / "shop.log"), "--indexes", str(DEMO / "indexes.json"), "--fail-on", "warning"]
    assert check(capsys, *arguments)[0] == 1  # no baseline indexes: every finding counts
    code, report, _ = check(capsys, *arguments, "--write-baseline", str(baseline))
    assert code == 0 and {finding["status"] for finding in report["findings"]} == {"accepted"}
    code, report, _ = check(capsys, *arguments, "--baseline", str(baseline))
    assert code == 0 and report["gate"]["accepted"] == len(report["findings"]) > 0
    recorded = json.loads(baseline.read_text(encoding="utf-8"))
    assert recorded["kind"] == "idxadvisor-baseline" and len(recorded["findings"]) == len(report["findings"])
    script = tmp_path / "drop.js"
    script.write_text('db.getSiblingDB("shop").orders.dropIndex("status_1")\n', encoding="utf-8")
    code, report, _ = check(capsys, *WORKLOAD, "--indexes", str(script), "--baseline", str(baseline))
    assert code == 1 and {f["rule"] for f in report["findings"] if f["status"] == "new"} == {"CI001", "CI002"}


@pytest.mark.parametrize(("script", "message"), [
    ("use shop\ndb.orders.createIndex(keys)\n", "drop.js:2:23: createIndex(): 'keys' is not a literal value"),
    ("use shop\n\ndb.orders.createIndex({ a: 1 + 1 })\n", "drop.js:3:30: createIndex(): cannot read the argument: expected"),
    ("db.orders.dropIndex('x')\n", "drop.js:1:1: the database of this call is not known"),
])
def test_an_unreadable_call_exits_2_naming_file_line_and_column(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                                script: str, message: str) -> None:
    path = tmp_path / "drop.js"
    path.write_text(script, encoding="utf-8")
    code, report, err = check(capsys, *WORKLOAD, "--indexes", str(path))
    assert code == 2 and report == {}
    assert err.startswith(f"idxadvisor: error: {tmp_path}/{message}") and err.count("\n") == 1


def test_a_malformed_index_file_exits_2_with_its_position(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "indexes.json"
    path.write_text('{\n  "shop.orders": [\n    {"key": {"a": 1}, "name": "a_1"},\n    {"key": {"b": 0}}\n  ]\n}\n')
    code, _, err = check(capsys, *WORKLOAD, "--indexes", str(path))
    assert code == 2 and err == f"idxadvisor: error: {path}:4:5: shop.orders: index #1: index direction 0 is not valid\n"


def test_the_index_file_reader_keeps_positions_and_key_order() -> None:
    located = parse_index_text('{"shop.orders": [\n  {"key": {"z": 1, "a": -1}, "name": "za"}\n],\n'
                               ' "shop.x": []}', "i.json")
    (_, za) = located.catalog["shop.orders"]
    assert za.key == (("z", 1), ("a", -1)) and str(located.locations["shop.orders", "za"]) == "i.json:2:3"
    assert str(located.namespace_locations["shop.x"]) == "i.json:4:2"
    for text, where in [('{"shop.orders": [}', "i.json:1:18"), ('{"orders": []}', "i.json:1:2"),
                        ('{"a.b": [], "a.b": []}', "i.json:1:13"), ("[]", "i.json:1:1")]:
        with pytest.raises(InputError, match=where):
            parse_index_text(text, "i.json")


def test_script_calls_skip_comments_strings_and_rollbacks() -> None:
    calls = script_calls(
        "// db.orders.dropIndex('in a comment')\n"
        "use shop\n"
        "const note = \"db.orders.dropIndex('in a string')\"; /* db.orders.drop() */\n"
        "let ratio = 4 / 2; let pattern = /db.orders.drop()/i;\n"
        "db.orders.createIndex({ status: 1 }, { name: 'st' })\n"
        "const crm = db.getSiblingDB('crm'); crm.getCollection('people').hideIndex({ email: 1 })\n"
        "db['reviews'].createIndexes([{ productId: 1 }, { key: { at: -1 }, name: 'at' }])\n"
        "db.runCommand({ dropIndexes: 'orders', index: ['a', 'b'] })\n"
        "module.exports = { async up(database, client) { await client.db('logs').collection('hits').drop() },\n"
        "  down: async (database) => { await database.collection('x').dropIndex('never read') } }\n", "m.js")
    assert [(call.method, call.database, call.collection, call.location.line) for call in calls] == [
        ("createIndex", "shop", "orders", 5), ("hideIndex", "crm", "people", 6), ("createIndexes", "shop", "reviews", 7),
        ("runCommand", "shop", None, 8), ("drop", "logs", "hits", 9)]
    assert calls[2].arguments[0] == [{"productId": 1}, {"key": {"at": -1}, "name": "at"}]


def test_check_needs_a_workload_and_proposed_indexes(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["check", "--indexes", str(DEMO / "indexes.json")]) == 2
    assert "--workload: name the recorded workload" in capsys.readouterr().err
    assert run(["check", "--workload", str(DEMO / "shop.log")]) == 2
    assert "--proposed-indexes: name the proposed indexes" in capsys.readouterr().err


def test_sarif_results_point_at_the_script_lines(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["check", *WORKLOAD, "--indexes", str(DEMO / "migrations"), "--format", "sarif", "--jobs", "1"]) == 1
    sarif = json.loads(capsys.readouterr().out)
    results = sarif["runs"][0]["results"]
    dropped = next(result for result in results if result["ruleId"] == "CI001")
    location = dropped["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"].endswith("fixtures/demo/migrations/20261103-indexes.js")
    assert location["region"] == {"startLine": 8, "startColumn": 1} and dropped["baselineState"] == "new"
    assert {result["baselineState"] for result in results} == {"new", "unchanged"}


def test_a_workload_file_gates_like_the_logs_it_was_made_from(capsys: pytest.CaptureFixture[str],
                                                              tmp_path: Path) -> None:
    saved = tmp_path / "workload.json"
    assert run(["analyze", str(DEMO / "shop.log"), "--save-workload", str(saved), "--format", "json"]) == 1
    capsys.readouterr()
    arguments = ["--baseline-indexes", str(DEMO / "indexes.json"), "--indexes", str(DEMO / "migrations")]
    from_logs = check(capsys, "--workload", str(DEMO / "shop.log"), *arguments)[1]
    from_workload = check(capsys, "--workload", str(saved), *arguments)[1]
    assert from_logs["findings"] and from_logs["findings"] == from_workload["findings"]
    assert from_logs["gate"] == from_workload["gate"]


def test_an_index_file_past_64_indexes_on_a_collection_has_the_excess_refused(capsys: pytest.CaptureFixture[str],
                                                                               tmp_path: Path) -> None:
    indexes = [{"key": {"_id": 1}, "name": "_id_"}] + [{"key": {f"f{n}": 1}, "name": f"f{n}_1"} for n in range(65)]
    path = tmp_path / "indexes.json"
    path.write_text(json.dumps({"shop.orders": indexes}, indent=2), encoding="utf-8")
    code, report, _ = check(capsys, *WORKLOAD, "--indexes", str(path))
    assert code == 1
    refused = [finding for finding in report["findings"] if finding["rule"] == "CI004"]
    assert sorted(finding["message"].split(",")[0] for finding in refused) == [
        "the change creates f63_1 { f63: 1 }", "the change creates f64_1 { f64: 1 }"]
    assert all("shop.orders would have 66 indexes, over the 64" in finding["message"] for finding in refused)
    assert all(finding["location"]["line"] > 1 for finding in refused)


def test_a_finding_the_proposed_set_stops_raising_without_its_cause_removed_stays_existing(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import idxadvisor.gate.run as gate_run

    # as if tags_sizes could be built: IX003's shape then looks served by it, yet no index the change adds serves it
    monkeypatch.setattr(gate_run, "refuse_parallel_arrays", lambda change, samples: None)
    code, report, _ = check(capsys, *WORKLOAD, "--indexes", str(DEMO / "migrations"), "--data", str(DEMO / "data"))
    assert [finding["rule"] for finding in report["gate"]["resolved"]] == ["IX002"]
    carried = [finding for finding in report["findings"]
               if any("not resolved" in detail for detail in finding["details"])]
    # IX002 on the customer's shape too: the set leaves it to the change's { customerId: 1, createdAt: -1 }, which gives
    # its sort but does not bound its status
    assert sorted((finding["rule"], finding["ns"]) for finding in carried) == [("IX002", "shop.orders"),
                                                                               ("IX003", "shop.products")]
    [carried] = [finding for finding in carried if finding["rule"] == "IX003"]
    assert (carried["rule"], carried["ns"], carried["status"]) == ("IX003", "shop.products", "existing")
    assert carried["message"].startswith("the index this query needs, { tags: 1, sizes: 1, inStock: 1 }")


def _set_of(report: dict, ns: str) -> dict:
    [found] = [item for item in report["index_sets"] if item["ns"] == ns]
    return found


def test_with_data_the_set_is_chosen_against_the_proposed_indexes_and_proposes_none_serving_nothing(
        capsys: pytest.CaptureFixture[str]) -> None:
    code, report, _ = check(capsys, *WORKLOAD, "--indexes", str(DEMO / "migrations"), "--data", str(DEMO / "data"))
    assert code == 1
    idle = [(item["ns"], index["name"]) for item in report["index_sets"] for index in item["indexes"]
            if index["status"] == "new" and not index["shapes"]]
    assert idle == []
    orders = {index["name"]: index for index in _set_of(report, "shop.orders")["indexes"]}
    # the migration's { customerId: 1, createdAt: -1 } serves the customer's shapes: nothing grows customerId_1 anew
    assert not [name for name, index in orders.items() if index["status"] == "new" and name.startswith("customerId")]
    assert orders["customerId_1_createdAt_-1"]["status"] == "kept"
    assert sorted(orders["customerId_1_createdAt_-1"]["shapes"]) == ["571fe3684575cb07", "e6b0a7bd45a5ebad"]
    [reason] = [skip["reason"] for skip in report["skipped"] if skip["fingerprint"] == "571fe3684575cb07"]
    assert reason.startswith("IX002: index selection: { customerId: 1, createdAt: -1 }, which the change creates, "
                             "cuts its keys plus documents examined from 2,460 to 44 per execution")


def test_by_the_log_a_shape_an_index_of_the_change_serves_starts_from_it(capsys: pytest.CaptureFixture[str]) -> None:
    _, report, _ = check(capsys, *WORKLOAD, "--indexes", str(DEMO / "migrations"))
    orders = _set_of(report, "shop.orders")
    assert all(index["shapes"] for index in orders["indexes"] if index["status"] == "new")
    shapes = {shape["fingerprint"]: shape for shape in orders["shapes"]}
    # { customerId: eq, createdAt: range } sort { createdAt: -1 }: the change's index bounds and sorts it
    assert shapes["e6b0a7bd45a5ebad"]["index"] == "customerId_1_createdAt_-1"
    assert shapes["e6b0a7bd45a5ebad"]["after"] < shapes["e6b0a7bd45a5ebad"]["before"]


def test_a_new_index_the_multi_planner_passes_over_for_every_shape_leaves_the_set(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from idxadvisor.selection import choose

    # as if the search did not know the change's indexes: it then picks a key the multi-planner never uses
    monkeypatch.setattr(choose, "apply_change", lambda *arguments: None)
    _, report, _ = check(capsys, *WORKLOAD, "--indexes", str(DEMO / "migrations"), "--data", str(DEMO / "data"))
    orders = _set_of(report, "shop.orders")
    assert all(index["shapes"] for index in orders["indexes"] if index["status"] == "new")
    assert any("serving no shape" in note and "{ customerId: 1, status: 1, createdAt: -1 }" in note
               for note in orders["notes"])
    assert not any("customerId: 1, status: 1" in index["reason"] for index in orders["indexes"]
                   if index["status"] == "hide")


def _mdbkit_export(tmp_path: Path) -> Path:
    """The demo's indexes as mdbkit 0.8.0 exports one database: bare collection names under ``db``, and usage."""
    catalog = json.loads((DEMO / "indexes.json").read_text(encoding="utf-8"))
    export = {"db": "shop", "exported": "2026-11-03T09:00:00Z",
              "collections": {ns.split(".", 1)[1]: indexes for ns, indexes in catalog.items()},
              "usage": {"orders": [{"name": "status_1", "ops": 12, "since": "2026-11-01T00:00:00Z", "host": "a"}]}}
    path = tmp_path / "indexes.json"
    path.write_text(json.dumps(export, indent=2), encoding="utf-8")
    return path


def test_baseline_indexes_read_an_mdbkit_export_as_analyze_does(capsys: pytest.CaptureFixture[str],
                                                                 tmp_path: Path) -> None:
    migration = ["--proposed-indexes", str(DEMO / "migrations")]
    code, plain, err = check(capsys, *WORKLOAD, *migration)
    exported = ["--workload", str(DEMO / "shop.log"), "--baseline-indexes", str(_mdbkit_export(tmp_path))]
    code_of_export, report, err_of_export = check(capsys, *exported, *migration)
    assert (code_of_export, err_of_export) == (code, err) == (1, "")
    assert [(item["action"], item["ns"], item["name"]) for item in report["gate"]["changes"]] == [
        (item["action"], item["ns"], item["name"]) for item in plain["gate"]["changes"]]
    assert sorted((item["rule"], item["status"], item["fingerprint"]) for item in report["findings"]) == sorted(
        (item["rule"], item["status"], item["fingerprint"]) for item in plain["findings"])


def test_an_mdbkit_export_as_the_proposed_set_points_at_its_entries(tmp_path: Path) -> None:
    from idxadvisor.gate.indexfile import read_index_file
    from idxadvisor.indexes.catalog import load_index_file

    path = _mdbkit_export(tmp_path)
    located = read_index_file(path)
    assert located.catalog == load_index_file(path)  # one reader: analyze's
    assert [index.accesses["ops"] for index in located.catalog["shop.orders"] if index.name == "status_1"] == [12]
    lines = path.read_text(encoding="utf-8").splitlines()
    where = located.locations["shop.orders", "status_1"]
    assert '"name": "status_1"' in "\n".join(lines[where.line - 1: where.line + 8])
    assert lines[located.namespace_locations["shop.products"].line - 1].strip().startswith('"products"')


def test_an_index_file_check_cannot_read_says_the_option_that_named_it(capsys: pytest.CaptureFixture[str],
                                                                       tmp_path: Path) -> None:
    path = tmp_path / "indexes.json"
    path.write_text('{"db": "shop", "collections": {"orders": [{"key": {"a": "up"}, "name": "a"}]}}\n',
                    encoding="utf-8")
    code, _, err = check(capsys, "--workload", str(DEMO / "shop.log"), "--baseline-indexes", str(path),
                         "--proposed-indexes", str(DEMO / "migrations"))
    assert code == 2 and err.count("\n") == 1
    assert f"{path}:1:" in err and "shop.orders: index a:" in err
