"""One vocabulary across commands: ``--indexes`` is today's indexes everywhere (check's proposed set is
``--proposed-indexes``), the old spellings still work, hidden; replay and compare take analyze's filters; whatif reads
a directory of samples and mongosh syntax."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from idxadvisor.cli import run
from tests.conftest import FIXTURES_DIR

DEMO = FIXTURES_DIR / "demo"
TODAY = str(DEMO / "indexes.json")
MIGRATIONS = str(DEMO / "migrations")


def json_run(capsys: pytest.CaptureFixture[str], *arguments: str) -> tuple[int, dict[str, Any], str]:
    code = run([*arguments, "--format", "json"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out) if captured.out else {}, captured.err


def gate_of(report: dict[str, Any]) -> tuple[Any, ...]:
    gate = report["gate"]
    return gate["passed"], gate["counted"], gate["indexes"], gate["baseline_indexes"], gate["new"], gate["existing"]


def test_check_reads_todays_indexes_from_indexes_and_the_change_from_proposed_indexes(
        capsys: pytest.CaptureFixture[str]) -> None:
    workload = ["check", "--workload", str(DEMO / "shop.log"), "--jobs", "1"]
    code, new_names, err = json_run(capsys, *workload, "--indexes", TODAY, "--proposed-indexes", MIGRATIONS)
    assert code == 1 and err == ""
    assert new_names["gate"]["baseline_indexes"] == TODAY and new_names["gate"]["indexes"] == [MIGRATIONS]
    old_code, old_names, old_err = json_run(capsys, *workload, "--baseline-indexes", TODAY, "--indexes", MIGRATIONS)
    assert (old_code, old_err) == (code, "") and gate_of(old_names) == gate_of(new_names)
    assert old_names["findings"] == new_names["findings"]


def test_check_takes_todays_indexes_from_the_settings_as_analyze_does(capsys: pytest.CaptureFixture[str],
                                                                       tmp_path: Path) -> None:
    config = tmp_path / ".idxadvisor.toml"
    config.write_text(f"indexes = [{json.dumps(TODAY)}]\n", encoding="utf-8")
    code, report, err = json_run(capsys, "check", "--workload", str(DEMO / "shop.log"), "--proposed-indexes",
                                 MIGRATIONS, "--config", str(config), "--jobs", "1")
    assert code == 1 and err == "" and report["gate"]["baseline_indexes"] == TODAY


def test_check_indexes_alone_keeps_its_old_meaning_and_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    code, report, err = json_run(capsys, "check", "--workload", str(DEMO / "shop.log"), "--indexes", MIGRATIONS,
                                 "--jobs", "1")
    assert code == 1 and report["gate"]["indexes"] == [MIGRATIONS] and report["gate"]["baseline_indexes"] is None
    assert err.startswith("idxadvisor: warning: check --indexes without --proposed-indexes reads ")
    assert "write --proposed-indexes for the change and --indexes for today's indexes" in err


def test_check_refuses_two_files_of_todays_indexes(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["check", "--workload", str(DEMO / "shop.log"), "--indexes", TODAY, "--baseline-indexes", TODAY,
                "--proposed-indexes", MIGRATIONS]) == 2
    err = capsys.readouterr().err
    assert err.startswith("idxadvisor: error: --indexes: today's indexes are one index file, not 2") and \
        err.count("\n") == 1


def test_the_old_spellings_are_hidden_from_the_help_page(capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    assert run(["check", "--help"]) == 0
    page = capsys.readouterr().out
    assert "--proposed-indexes" in page and "--indexes " in page and "--baseline-indexes" not in page


def test_replay_takes_analyzes_filters(monkeypatch: pytest.MonkeyPatch) -> None:
    import idxadvisor.cli.replay as replay_command

    received: dict[str, Any] = {}
    monkeypatch.setattr(replay_command, "run_analysis",
                        lambda paths, overrides, config: received.update(overrides) or 0)
    assert run(["replay", "x.log", "--uri", "mongodb://db1", "--min-ms", "100", "--since", "2026-11-02T09:00",
                "--until", "2026-11-02T09:20", "--ns", "shop.*", "--exclude-ns", "shop.audit", "--include-internal",
                "--select", "IX", "--ignore", "IX006", "--min-count", "5", "--app", "dash*"]) == 0
    assert received["app"] == ["dash*"]
    assert received["min_ms"] == 100 and received["ns"] == ["shop.*"] and received["exclude_ns"] == ["shop.audit"]
    assert received["since"].isoformat() == "2026-11-02T09:00:00" and received["until"].minute == 20
    assert received["select"] == ["IX"] and received["ignore"] == ["IX006"] and received["min_count"] == 5
    assert received["include_internal"] and received["replay"] and received["uri"] == "mongodb://db1"


def test_compare_slices_both_sides_by_time(capsys: pytest.CaptureFixture[str]) -> None:
    log = str(DEMO / "shop.log")
    code, whole, _ = json_run(capsys, "compare", log, log, "--jobs", "1")
    code, sliced, err = json_run(capsys, "compare", log, log, "--since", "2026-11-02T09:10Z",
                                 "--until", "2026-11-02T09:20Z", "--jobs", "1")
    assert code == 0 and err == ""
    executions = [sum(shape[side]["count"] for shape in report["shapes"] if shape.get(side))
                  for report in (whole, sliced) for side in ("before", "after")]
    assert executions[0] == executions[1] > executions[2] == executions[3] > 0


def test_compare_reads_a_workload_file_recorded_with_since(capsys: pytest.CaptureFixture[str],
                                                           tmp_path: Path) -> None:
    """A workload file is read only with the filters it was recorded with, and the error says to pass them: compare
    takes them now."""
    saved = tmp_path / "late.json"
    log = str(DEMO / "shop.log")
    assert run(["analyze", log, "--since", "2026-11-02T09:15Z", "--save-workload", str(saved), "--fail-on", "never",
                "--format", "json", "--jobs", "1"]) == 0
    capsys.readouterr()
    assert run(["compare", str(saved), log, "--jobs", "1"]) == 2
    assert "pass the ones it was recorded with" in capsys.readouterr().err
    code, report, err = json_run(capsys, "compare", str(saved), log, "--since", "2026-11-02T09:15Z", "--jobs", "1")
    assert code == 0 and err == "" and report["shapes"]


WHATIF_QUERY = ["--query", '{"filter": {"status": "delivered", "region": "islands"}, "sort": {"createdAt": -1}, '
                '"limit": 20}', "--index", '{"status": 1, "region": 1, "createdAt": -1}']


def test_whatif_reads_a_collections_sample_from_a_directory(capsys: pytest.CaptureFixture[str]) -> None:
    code, from_file, _ = json_run(capsys, "whatif", "--data", str(DEMO / "data" / "shop.orders.json"), *WHATIF_QUERY)
    assert code == 0
    code, from_directory, err = json_run(capsys, "whatif", "--data", f"shop.orders={DEMO / 'data'}", *WHATIF_QUERY)
    assert code == 0 and err == "" and from_directory == from_file


def test_whatif_asks_which_collection_of_a_directory_of_several(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["whatif", "--data", str(DEMO / "data"), *WHATIF_QUERY]) == 2
    err = capsys.readouterr().err
    assert "holds samples of several collections" in err and f"--data shop.customers={DEMO / 'data'}" in err


def test_whatif_reads_the_only_sample_of_a_directory(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "shop.orders.json").write_bytes((DEMO / "data" / "shop.orders.json").read_bytes())
    code, report, _ = json_run(capsys, "whatif", "--data", str(tmp_path), *WHATIF_QUERY)
    assert code == 0 and report["sample"]["path"] == str(tmp_path / "shop.orders.json")


def test_whatif_takes_mongosh_syntax_as_shard_key_does(capsys: pytest.CaptureFixture[str]) -> None:
    data = str(DEMO / "data" / "shop.orders.json")
    code, as_json, _ = json_run(capsys, "whatif", "--data", data, *WHATIF_QUERY)
    code, as_shell, err = json_run(
        capsys, "whatif", "--data", data, "--query",
        "{ filter: { status: 'delivered', region: \"islands\" }, sort: { createdAt: -1 }, limit: 20 }",
        "--index", "{ status: 1, region: 1, createdAt: -1 }")
    assert code == 0 and err == "" and as_shell == as_json and as_shell["totalKeysExamined"] == 20
    assert run(["whatif", "--data", data, "--query", "{ filter: { status: } }"]) == 2
    assert "(nor mongosh syntax)" in capsys.readouterr().err
