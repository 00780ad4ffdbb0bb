"""Live inputs and replay against an in-process fake server (mockupdb) that records every command with its
database: the source only ever receives reads, executionStats explains and every write go to the scratch database,
which is refused when it names a source and dropped on success, on error and on Ctrl-C."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import pytest

from idxadvisor.cli import run
from idxadvisor.indexes.catalog import load_index_file
from idxadvisor.server.source import ReadOnlyViolation, check_read_only
from tests.fakeserver import WRITE_COMMANDS, FakeServer

SOURCE_READS = {"buildInfo", "listDatabases", "listCollections", "listIndexes", "aggregate", "collStats", "count",
                "find", "explain", "endSessions"}


def analyze(capsys: pytest.CaptureFixture[str], fake: FakeServer, *arguments: str) -> tuple[int, dict, str]:
    code = run(["analyze", "--uri", fake.uri, "--format", "json", *arguments])  # type: ignore[attr-defined]
    captured = capsys.readouterr()
    return code, json.loads(captured.out) if captured.out else {}, captured.err


def scratch_databases(fake: FakeServer) -> set[str]:
    return {c.database for c in fake.commands if c.database.startswith("idxadvisor_scratch_")}


def assert_source_only_read(fake: FakeServer, scratch: set[str]) -> None:
    for command in fake.commands:
        if command.database in scratch:
            continue
        assert command.name in SOURCE_READS, f"{command.name} reached the source database {command.database}"
        if command.name != "endSessions" and command.name != "buildInfo":
            assert command.document["maxTimeMS"] > 0, command
        if command.name == "explain":
            assert command.document["verbosity"] == "queryPlanner"


def test_analyze_reads_the_profiler_indexes_and_a_sample(capsys: pytest.CaptureFixture[str],
                                                         fake: FakeServer) -> None:
    code, report, err = analyze(capsys, fake)
    assert code == 1 and err == ""
    assert [(item["path"], item["entries"]) for item in report["inputs"]] == \
        [(f"mongodb://localhost:{fake.server.port}/shop.system.profile", 8)]
    [finding] = report["findings"]
    assert finding["rule"] == "IX001" and finding["evidence"]["evaluator"] == "estimator"
    assert finding["evidence"]["notes"][0] == "estimated over 400 sampled documents"
    sample = report["samples"][0]
    assert (sample["ns"], sample["documents"], sample["documents_seen"]) == ("shop.orders", 400, 4000)  # $collStats
    server = report["server"]
    assert (server["version"], server["databases"], server["profile_documents"]) == ("8.0.4", ["shop"], 8)
    [index_set] = report["index_sets"]  # the server's write operations per hour: $collStats over $indexStats' since
    assert (index_set["writes"]["source"], index_set["writes"]["inserted"]) == ("server", 3600.0)
    assert server["scratch"] is None and server["missing"] == []
    assert_source_only_read(fake, set())
    assert not set(fake.names()) & WRITE_COMMANDS


def test_existing_indexes_come_from_list_indexes(capsys: pytest.CaptureFixture[str], fake: FakeServer) -> None:
    fake.indexes["shop.orders"].append({"v": 2, "key": {"status": 1, "region": 1}, "name": "status_1_region_1"})
    code, report, _ = analyze(capsys, fake, "--verbose")
    assert code == 0 and report["findings"] == []
    assert any("status_1_region_1" in skip["reason"] or "{ status: 1, region: 1 }" in skip["reason"]
               for skip in report["skipped"])


def test_replay_measures_on_a_scratch_copy_and_drops_it(capsys: pytest.CaptureFixture[str],
                                                        fake: FakeServer) -> None:
    code, report, err = analyze(capsys, fake, "--replay")
    assert code == 1 and err == ""
    [finding] = report["findings"]
    evidence = finding["evidence"]
    assert evidence["evaluator"] == "server" and evidence["estimate"]["evaluator"] == "estimator"
    assert evidence["after"]["planSummary"] == "IXSCAN { region: 1, status: 1 }"
    assert {(row["plan"], row["counter"]) for row in evidence["calibration"]} >= {
        ("before", "totalDocsExamined"), ("after", "totalKeysExamined"), ("after", "nReturned")}
    assert all(row["agree"] for row in evidence["calibration"])
    [scratch] = scratch_databases(fake)
    writes = [c for c in fake.commands if c.name in WRITE_COMMANDS]
    assert {c.database for c in writes} == {scratch}
    assert [c.name for c in writes][0] == "insert" and writes[-1].name == "dropDatabase"
    assert {c.database for c in fake.commands if c.name == "explain"} == {scratch}
    assert all(c.document["verbosity"] == "executionStats" for c in fake.commands if c.name == "explain")
    assert scratch not in fake.databases
    assert report["server"]["scratch"] == {"server": f"mongodb://localhost:{fake.server.port}", "database": scratch,
                                           "collections": 1, "documents": 400, "indexes": 2, "problems": [],
                                           "dropped": True, "stopped": None}
    assert report["server"]["calibration"]["agreeing"] == report["server"]["calibration"]["counters"] > 0
    assert_source_only_read(fake, {scratch})


def test_a_counter_the_estimator_gets_wrong_is_flagged(capsys: pytest.CaptureFixture[str], fake: FakeServer) -> None:
    def off_by_some(result: dict) -> None:
        if result.get("totalKeysExamined"):
            result["totalKeysExamined"] += 7

    fake.explain_adjust = off_by_some
    code, report, _ = analyze(capsys, fake, "--replay")
    rows = report["findings"][0]["evidence"]["calibration"]
    wrong = [(row["plan"], row["counter"], row["server"], row["estimator"]) for row in rows if not row["agree"]]
    assert wrong == [("after", "totalKeysExamined", 27, 20)]
    assert report["server"]["calibration"]["disagreements"] == [
        "IX001 shop.orders after totalKeysExamined: server 27, estimator 20"]
    run(["analyze", "--uri", fake.uri, "--replay", "--format", "markdown"])  # type: ignore[attr-defined]
    markdown = capsys.readouterr().out
    assert "| with the index | totalKeysExamined | 27 | 20 | **no** |" in markdown


@pytest.mark.parametrize("failure", ["error", "interrupt"])
def test_the_scratch_database_is_dropped_after_an_error_and_on_ctrl_c(
        capsys: pytest.CaptureFixture[str], fake: FakeServer, monkeypatch: pytest.MonkeyPatch, failure: str) -> None:
    if failure == "error":
        fake.refuse.add("explain")
    else:
        from idxadvisor.replay.scratch import ScratchDatabase

        def interrupted(self: ScratchDatabase, ns: str, command: dict) -> dict:
            raise KeyboardInterrupt

        monkeypatch.setattr(ScratchDatabase, "explain", interrupted)
    code, report, err = analyze(capsys, fake, "--replay")
    assert code == (3 if failure == "error" else 130)
    assert report["server"]["scratch"]["dropped"] is True  # the report is still written, and says so
    assert (report["server"]["scratch"]["stopped"] or "").startswith("interrupted" if failure == "interrupt"
                                                                     else "mongodb://localhost")
    assert err.count("\n") == (1 if failure == "error" else 2)
    assert ("refused explain" in err if failure == "error" else err.endswith("was dropped\nidxadvisor: error: interrupted\n"))
    [scratch] = scratch_databases(fake)
    last_write = [c for c in fake.commands if c.name in WRITE_COMMANDS][-1]
    assert (last_write.name, last_write.database) == ("dropDatabase", scratch)
    assert scratch not in fake.databases
    assert "s3cret" not in err


@pytest.mark.parametrize("name", ["shop", "archive"])
def test_a_scratch_name_that_is_a_source_is_refused_before_any_write(
        capsys: pytest.CaptureFixture[str], fake: FakeServer, name: str) -> None:
    fake.databases["archive"] = {"old": [{"_id": 1}]}  # not read (--db shop), but on the source server all the same
    code, _, err = analyze(capsys, fake, "--replay", "--scratch-db", name, "--db", "shop")
    assert code == 2 and f"--scratch-db {name} is a source database" in err and err.count("\n") == 1
    assert not set(fake.names()) & WRITE_COMMANDS
    assert "archive" in fake.databases


def test_a_scratch_name_that_exists_on_the_scratch_server_is_refused(capsys: pytest.CaptureFixture[str],
                                                                     fake: FakeServer) -> None:
    other = FakeServer(databases={"keep": {"c": [{"_id": 1}]}})
    scratch_uri = other.start()
    try:
        code, _, err = analyze(capsys, fake, "--replay", "--scratch-uri", scratch_uri, "--scratch-db", "keep")
    finally:
        other.stop()
    assert code == 2 and "--scratch-db keep already exists on mongodb://localhost:" in err
    assert not (set(fake.names()) | set(other.names())) & WRITE_COMMANDS and "keep" in other.databases


def test_an_unreachable_server_is_one_line_and_exit_3_within_seconds(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # free once closed: nothing listens there
    started = time.monotonic()
    code = run(["analyze", "--uri", f"mongodb://admin:s3cret@127.0.0.1:{port}/?serverSelectionTimeoutMS=1500",
                "--debug"])
    elapsed = time.monotonic() - started
    err = capsys.readouterr().err
    assert code == 3 and elapsed < 6
    assert err.splitlines()[-1].startswith(f"idxadvisor: error: cannot reach mongodb://127.0.0.1:{port} (hello)")
    assert "s3cret" not in err  # not in the message, nor in the --debug traceback above it


def test_optional_reads_the_server_refuses_are_reported_and_the_run_goes_on(
        capsys: pytest.CaptureFixture[str], fake: FakeServer) -> None:
    fake.refuse.update({"$indexStats", "$queryStats"})
    code, report, err = analyze(capsys, fake, "--query-stats")
    assert code == 1 and err == "" and report["findings"]
    missing = report["server"]["missing"]
    assert any(line.startswith("--query-stats:") and "refused $queryStats" in line and "Unauthorized" in line
               for line in missing)
    assert any(line.startswith("index usage:") and "$indexStats" in line for line in missing)
    run(["analyze", "--uri", fake.uri, "--query-stats"])  # type: ignore[attr-defined]
    assert "not read: --query-stats" in capsys.readouterr().out


def test_query_stats_are_a_source_of_shapes(capsys: pytest.CaptureFixture[str], fake: FakeServer) -> None:
    from tests.server.replies import QUERY_STATS

    fake.query_stats = [dict(QUERY_STATS[0], key={**QUERY_STATS[0]["key"], "queryShape": {
        **QUERY_STATS[0]["key"]["queryShape"], "cmdNs": {"db": "shop", "coll": "orders"}}})]
    code, report, _ = analyze(capsys, fake, "--query-stats")
    assert report["server"]["query_stats"] is True
    assert any(shape["count"] == 4 and shape["shape"].startswith("find shop.orders {item: eq}")
               for shape in report["shapes"])


def test_a_refused_required_read_is_one_line_and_exit_3(capsys: pytest.CaptureFixture[str],
                                                        fake: FakeServer) -> None:
    fake.refuse.add("find")
    code, _, err = analyze(capsys, fake)
    assert code == 3
    assert err == (f"idxadvisor: error: mongodb://localhost:{fake.server.port} refused find on shop.system.profile: "
                   "not authorized on shop to execute command { find: … } (Unauthorized)\n")


def test_indexes_writes_the_index_file_with_usage(capsys: pytest.CaptureFixture[str], fake: FakeServer,
                                                  tmp_path: Path) -> None:
    output = tmp_path / "indexes.json"
    assert run(["indexes", "--uri", fake.uri, "--output", str(output)]) == 0  # type: ignore[attr-defined]
    document = json.loads(output.read_text())
    assert sorted(document) == ["shop.audit", "shop.orders"]
    assert [index["name"] for index in document["shop.orders"]] == ["_id_", "createdAt_-1"]
    assert document["shop.orders"][1]["accesses"] == {"ops": 7, "since": {"$date": "2026-01-01T00:00:00Z"}}
    catalog = load_index_file(output)
    assert catalog["shop.orders"][1].accesses == {"ops": 7, "since": {"$date": "2026-01-01T00:00:00Z"}}
    assert not set(fake.names()) & WRITE_COMMANDS


def test_indexes_without_index_usage_says_so(capsys: pytest.CaptureFixture[str], fake: FakeServer) -> None:
    fake.refuse.add("$indexStats")
    assert run(["indexes", "--uri", fake.uri, "--db", "shop"]) == 0  # type: ignore[attr-defined]
    captured = capsys.readouterr()
    assert "accesses" not in captured.out and json.loads(captured.out)["shop.orders"][1]["name"] == "createdAt_-1"
    assert captured.err.startswith("idxadvisor: warning: left out: index usage:") and "s3cret" not in captured.err


def test_replay_command_end_to_end_with_a_log(capsys: pytest.CaptureFixture[str], fake: FakeServer,
                                              tmp_path: Path) -> None:
    from tests.helpers import json_line, slow_attr

    log = tmp_path / "mongod.log"
    log.write_text("\n".join(json_line(slow_attr({"find": "orders", "filter": {"total": 5}}, ns="shop.orders",
                                                 docsExamined=4000, nreturned=4)) for _ in range(5)) + "\n")
    fake.profile.clear()
    code = run(["replay", str(log), "--uri", fake.uri, "--format", "json"])  # type: ignore[attr-defined]
    report = json.loads(capsys.readouterr().out)
    assert code == 1
    assert [item["format"] for item in report["inputs"]] == ["json-log", "profile"]
    [finding] = report["findings"]
    assert finding["rule"] == "IX004" and finding["evidence"]["evaluator"] == "server"
    assert finding["evidence"]["after"]["planSummary"] == "IXSCAN { total: 1 }"
    assert report["server"]["scratch"]["dropped"] is True
    assert any("system.profile holds no operations" in line for line in report["server"]["missing"])


def test_the_read_only_check_refuses_every_write() -> None:
    for command in ({"insert": "c", "documents": []}, {"createIndexes": "c", "indexes": []}, {"dropDatabase": 1},
                    {"aggregate": "c", "pipeline": [{"$sample": {"size": 1}}, {"$out": "x"}]},
                    {"aggregate": "c", "pipeline": [{"$match": {}}]}, {"find": "orders"},
                    {"explain": {"find": "c"}, "verbosity": "executionStats"}):
        with pytest.raises(ReadOnlyViolation):
            check_read_only(command)
    check_read_only({"explain": {"find": "c"}, "verbosity": "queryPlanner"})


@pytest.mark.parametrize("fmt", ["text", "json", "markdown", "sarif"])
def test_every_format_shows_the_replay_and_no_password(capsys: pytest.CaptureFixture[str], fake: FakeServer,
                                                        fmt: str) -> None:
    assert run(["analyze", "--uri", fake.uri, "--replay", "--format", fmt]) == 1  # type: ignore[attr-defined]
    out = capsys.readouterr().out
    assert "s3cret" not in out and "reader" not in out
    if fmt == "text":
        assert "replay: scratch database idxadvisor_scratch_" in out and "dropped" in out
        assert "server: today COLLSCAN" in out and "calibration on the sample: 8 of 8 counters agree" in out
    elif fmt == "markdown":
        assert "Estimator vs server: 8 of 8 counters agree over 1 replayed finding." in out
    elif fmt == "sarif":
        run_ = json.loads(out)["runs"][0]
        assert run_["properties"]["server"]["scratch"]["dropped"] is True
        assert run_["results"][0]["properties"]["evidence"]["evaluator"] == "server"


def test_a_collection_stats_refusal_falls_back_to_collstats(capsys: pytest.CaptureFixture[str],
                                                            fake: FakeServer) -> None:
    fake.refuse.add("$collStats")
    code, report, err = analyze(capsys, fake)
    assert code == 1 and err == ""
    assert "collStats" in fake.names("shop") and report["samples"][0]["documents_seen"] == 400
