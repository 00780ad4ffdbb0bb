"""No input is not a pass: what is no MongoDB log is an input error, a run that read no operation at all has
nothing to analyze (exit 2), and a directory's files that are not logs are skipped and named once."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from idxadvisor.cli import run
from tests.helpers import json_line, slow_attr

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "fixtures" / "demo"
PNG = ROOT / "docs" / "html-report.png"
QUIET_LINE = ('{"t":{"$date":"2026-11-02T09:00:02.000+00:00"},"s":"I","c":"NETWORK","id":22943,"ctx":"listener",'
              '"msg":"Connection accepted","attr":{}}\n')


def one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and captured.err.startswith("idxadvisor: error: ")
    return captured.err


def test_a_text_file_that_is_no_log_is_an_input_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    passwd = tmp_path / "passwd"
    passwd.write_text("root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n")
    assert run(["analyze", str(passwd)]) == 2
    assert one_error_line(capsys) == (f"idxadvisor: error: {passwd}: not a MongoDB log, profiler dump or explain "
                                      "output (none of its 2 lines is one): nothing to analyze\n")


def test_a_binary_file_is_an_input_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["analyze", str(PNG)]) == 2
    assert "html-report.png: not a MongoDB log" in one_error_line(capsys)


def test_a_directory_holding_only_a_readme_has_nothing_to_analyze(capsys: pytest.CaptureFixture[str],
                                                                   tmp_path: Path) -> None:
    (tmp_path / "README").write_text("Our logs go here.\n")
    assert run(["analyze", str(tmp_path)]) == 2
    err = one_error_line(capsys)
    assert "skipped 1 file that is not" in err and err.endswith("nothing to analyze\n")


def test_an_empty_stdin_has_nothing_to_analyze(capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))
    assert run(["analyze", "-"]) == 2
    assert one_error_line(capsys) == "idxadvisor: error: -: the input is empty: nothing to analyze\n"


def test_no_path_and_an_empty_pipe_is_not_a_pass() -> None:
    done = subprocess.run([sys.executable, "-m", "idxadvisor", "analyze"], input=b"", capture_output=True,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 2 and done.stdout == b""
    assert done.stderr == b"idxadvisor: error: -: the input is empty: nothing to analyze\n"


def test_check_with_an_empty_workload_fails(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    empty = tmp_path / "empty.log"
    empty.write_text("")
    assert run(["check", "--workload", str(empty), "--proposed-indexes", str(DEMO / "indexes.json")]) == 2
    assert one_error_line(capsys) == f"idxadvisor: error: {empty}: the input is empty: nothing to analyze\n"


def test_a_real_log_without_slow_operations_passes_analyze_but_not_check(capsys: pytest.CaptureFixture[str],
                                                                         tmp_path: Path) -> None:
    quiet = tmp_path / "mongod.log"
    quiet.write_text(QUIET_LINE)
    assert run(["analyze", str(quiet)]) == 0
    assert "no slow operation was read" in capsys.readouterr().out
    assert run(["check", "--workload", str(quiet), "--proposed-indexes", str(DEMO / "indexes.json")]) == 2
    assert one_error_line(capsys) == (f"idxadvisor: error: {quiet}: no slow operation was read: nothing to "
                                      "analyze\n")


def test_compare_with_no_operation_on_either_side_fails(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    quiet = tmp_path / "mongod.log"
    quiet.write_text(QUIET_LINE)
    assert run(["compare", str(quiet), str(quiet)]) == 2
    assert one_error_line(capsys).endswith("nothing to analyze\n")


def test_a_directory_scan_skips_files_that_are_not_logs_and_names_them_once(capsys: pytest.CaptureFixture[str],
                                                                            tmp_path: Path) -> None:
    (tmp_path / "mongod.log").write_text(json_line(slow_attr({"find": "orders", "filter": {"a": 1}})) + "\n")
    (tmp_path / "LICENSE").write_text("Permission is hereby granted, free of charge,\n" * 40)
    (tmp_path / "notes.log").write_text("not a log, whatever its name says\n")  # by content, not by name
    assert run(["analyze", str(tmp_path), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["summary"]["problems"] == 0 and [Path(i["path"]).name for i in report["inputs"]] == ["mongod.log"]
    assert [Path(path).name for path in report["inputs_skipped"]] == ["LICENSE", "notes.log"]
    assert run(["analyze", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.count("LICENSE") == 1 and "skipped 2 files that are not MongoDB logs" in out


def test_a_named_file_that_is_no_log_beside_a_real_one_exits_2(capsys: pytest.CaptureFixture[str],
                                                               tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("hello\n")
    assert run(["analyze", str(DEMO / "shop.log"), str(notes), "--format", "json"]) == 2
    captured = capsys.readouterr()
    assert json.loads(captured.out)["inputs"][1]["error"].startswith("not a MongoDB log")
    assert captured.err == (f"idxadvisor: error: {notes}: not a MongoDB log, profiler dump or explain output (none of "
                            "its 1 line is one)\n")


def test_an_archive_s_members_that_are_not_logs_are_skipped_like_a_directory_s(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import tarfile

    (tmp_path / "mongod.log").write_text(json_line(slow_attr({"find": "orders", "filter": {"a": 1}})) + "\n")
    (tmp_path / "README").write_text("Diagnostic bundle of db1.\n")
    bundle = tmp_path / "bundle.tar"
    with tarfile.open(bundle, "w") as archive:
        archive.add(tmp_path / "README", arcname="README")
        archive.add(tmp_path / "mongod.log", arcname="mongod.log")
    assert run(["analyze", str(bundle), "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["inputs_skipped"] == [f"{bundle}:README"] and report["summary"]["problems"] == 0
