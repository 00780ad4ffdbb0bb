"""The command line: the JSON inputs contract, exit codes, and errors in one line."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from idxadvisor.cli import run
from tests.helpers import json_line, slow_attr

DEMO_LOG = Path(__file__).resolve().parents[1] / "fixtures" / "demo" / "shop.log"


def analyze_json(capsys: pytest.CaptureFixture[str], *arguments: str) -> tuple[int, dict, str]:
    code = run(["analyze", *arguments, "--format", "json"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out), captured.err


def test_version(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import idxadvisor.parse.accel as accel

    assert run(["version"]) == 0
    first, core = capsys.readouterr().out.splitlines()
    assert first.startswith("idxadvisor ") and core == f"reading core: {accel.described()}"
    monkeypatch.setenv(accel.PURE_PYTHON_VARIABLE, "1")
    monkeypatch.setattr(accel, "speedups", None)  # as an import with the variable set chooses
    assert run(["version"]) == 0
    assert capsys.readouterr().out.splitlines()[1] == "reading core: Python (IDXADVISOR_PURE_PYTHON is set)"


@pytest.mark.corpus
def test_inputs_of_every_format_in_one_run(capsys: pytest.CaptureFixture[str], corpus_dir: Path) -> None:
    atlas = next(corpus_dir.glob("mongo-log-parser/*00-00*.gz"))
    inputs = [str(atlas), str(corpus_dir / "keyhole/mongod.log"), str(corpus_dir / "integrations-core/system.profile"),
              str(corpus_dir / "mongodb-demo/count/single_value_count.json"), str(corpus_dir / "mtools/mongod_26_corrupt.log")]
    code, report, err = analyze_json(capsys, *inputs, "--fail-on", "never")
    assert code == 0 and err == ""
    got = [(Path(item["path"]).name, item["format"], item["lines"], item["entries"], item["problems"],
            item["truncated"]) for item in report["inputs"]]
    assert got == [
        (atlas.name, "json-log", 4411, 43, 0, 0),
        ("mongod.log", "text-log", 2426, 2028, 0, 0),
        ("system.profile", "profile", 542, 4, 0, 0),
        ("single_value_count.json", "explain", 106, 1, 0, 0),
        ("mongod_26_corrupt.log", "text-log", 681, 33, 2, 1),  # splitChunk { $msg: "query not recording" }
    ]
    assert report["schema_version"] == 1 and report["tool"]["name"] == "idxadvisor"
    assert report["summary"]["entries"] == 43 + 2028 + 4 + 1 + 33


def test_stdin_and_a_missing_file(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    missing = tmp_path / "nope.log"
    code = run(["analyze", str(DEMO_LOG), str(missing), "--format", "json"])
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert code == 2  # an input could not be read: the exit code says so, the rest is still analysed
    assert report["inputs"][0]["entries"] == 1261 and report["inputs"][1]["error"] == "no such file or directory"
    assert captured.err == f"idxadvisor: error: {missing}: no such file or directory\n"


def test_a_corrupt_gzip_reports_what_it_read_and_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    lines = "\n".join(json_line(slow_attr({"find": "c", "filter": {"n": n}})) for n in range(3000)) + "\n"
    compressed = gzip.compress(lines.encode())
    path = tmp_path / "cut.log.gz"
    path.write_bytes(compressed[: len(compressed) * 2 // 3])
    code, report, err = analyze_json(capsys, str(path))
    assert code == 2
    entry = report["inputs"][0]
    assert 0 < entry["entries"] < 3000 and entry["error"].startswith("stopped reading")
    assert err.count("\n") == 1 and err.startswith("idxadvisor: error: ")


def test_errors_are_one_line_without_a_traceback(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["analyze", str(DEMO_LOG), "--bogus"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("idxadvisor: error: ") and err.count("\n") == 1 and "Traceback" not in err
    assert run(["analyze", str(DEMO_LOG), "--since", "yesterday"]) == 2
    assert capsys.readouterr().err == ("idxadvisor: error: --since: 'yesterday' is not an ISO 8601 time "
                                       "(for example 2025-08-18T19:00) nor an age (30m, 2h, 7d)\n")


def test_output_file_gets_the_report_and_stdout_stays_empty(capsys: pytest.CaptureFixture[str],
                                                             tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    assert run(["analyze", str(DEMO_LOG), "--format", "json", "--output", str(target)]) in (0, 1)
    assert capsys.readouterr().out == ""
    assert json.loads(target.read_text())["inputs"][0]["lines"] == 3779


def test_help_on_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    for command in ([], ["analyze"], ["version"]):
        assert run([*command, "-h"]) == 0
        assert "Usage" in capsys.readouterr().out


@pytest.mark.parametrize(("fail_on", "expected"), [("warning", 1), ("error", 1), ("info", 1), ("never", 0)])
def test_exit_codes_follow_fail_on(capsys: pytest.CaptureFixture[str], fail_on: str, expected: int) -> None:
    demo = str(DEMO_LOG.parent)
    code = run(["analyze", str(DEMO_LOG), "--data", f"{demo}/data", "--format", "json", "--fail-on", fail_on])
    report = json.loads(capsys.readouterr().out)
    assert code == expected
    assert {finding["severity"] for finding in report["findings"]} == {"warning", "error"}


def test_only_warnings_pass_fail_on_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    log = tmp_path / "one.log"
    log.write_text("\n".join(json_line(slow_attr({"find": "orders", "filter": {"sku": n}}, docsExamined=90000,
                                                  nreturned=1)) for n in range(5)) + "\n")
    assert run(["analyze", str(log), "--fail-on", "error", "--format", "json"]) == 0
    findings = json.loads(capsys.readouterr().out)["findings"]
    assert [(f["rule"], f["severity"]) for f in findings] == [("IX004", "warning")]
    assert run(["analyze", str(log), "--fail-on", "warning", "--format", "json"]) == 1


URI = "mongodb://admin:s3cret@db.example.com/shop"
MASKED = "mongodb://admin:****@db.example.com/shop"
NO_SERVER = "a server is not a file here"


@pytest.mark.parametrize("arguments", [
    [URI],
    [URI.replace("mongodb://", "mongodb+srv://")],
    [str(DEMO_LOG), "--data", URI],
    [str(DEMO_LOG), "--data", f"shop.orders={URI}"],
    [str(DEMO_LOG), "--indexes", URI],
])
def test_a_server_uri_is_refused_without_printing_its_password(capsys: pytest.CaptureFixture[str],
                                                               arguments: list[str]) -> None:
    assert run(["analyze", *arguments]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and captured.err.startswith("idxadvisor: error: ")
    assert NO_SERVER in captured.err and "admin:****@db.example.com/shop" in captured.err
    assert "s3cret" not in captured.err


def test_whatif_refuses_a_server_uri_too(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["whatif", "--data", URI, "--query", '{"command": "find", "filter": {}}']) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == (f"idxadvisor: error: --data {MASKED}: {NO_SERVER} (give a sample "
                                                   "file: Extended JSON or a mongodump .bson)\n")


def test_a_server_given_as_a_log_file_says_use_uri(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["analyze", URI]) == 2
    assert capsys.readouterr().err == f"idxadvisor: error: {MASKED}: {NO_SERVER} (use --uri {MASKED})\n"


def test_a_server_uri_in_the_config_file_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    config = tmp_path / "settings.toml"
    config.write_text(f'data = ["{URI}"]\n')
    assert run(["analyze", str(DEMO_LOG), "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert NO_SERVER in err and MASKED in err and "s3cret" not in err


@pytest.mark.parametrize("fmt", ["text", "json", "markdown", "sarif"])
def test_passwords_in_other_arguments_are_masked_in_reports_and_errors(capsys: pytest.CaptureFixture[str],
                                                                       fmt: str) -> None:
    secret = "https://reader:hunter2@logs.example.com/mongod.log"
    assert run(["analyze", str(DEMO_LOG), secret, "--format", fmt, "--fail-on", "never"]) == 2
    captured = capsys.readouterr()
    assert "hunter2" not in captured.out and "hunter2" not in captured.err
    assert "reader:****@logs.example.com" in captured.err


def test_typer_usage_errors_mask_passwords_too(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["version", URI]) == 2  # Typer: "Got unexpected extra argument (mongodb://…)"
    err = capsys.readouterr().err
    assert "s3cret" not in err and MASKED in err


def test_exit_code_uses_the_reports_worst_severity(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from idxadvisor.cli.common import exit_code_for
    from idxadvisor.models.report import Report

    report = Report.model_validate_json((Path(__file__).resolve().parents[1] / "fixtures" / "reports" / "demo.json")
                                        .read_text())
    assert report.max_severity() == "error"
    assert [exit_code_for(report, level) for level in ("info", "warning", "error", "never")] == \
        [1, 1, 1, 0]
    quiet = report.model_copy(update={"findings": [f for f in report.findings if f.severity == "info"]})
    assert exit_code_for(quiet, "warning") == 0


def test_whatif_answers_unknown_request_fields_and_errors_only_on_malformed_json(capsys: pytest.CaptureFixture[str]) -> None:
    sample = str(Path(__file__).resolve().parents[1] / "fixtures" / "demo" / "data" / "shop.orders.json")
    assert run(["whatif", "--data", sample, "--query", '{"filter": {}, "batchSize": 2}', "-f", "json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert "batchSize" in answer["unsupported"] and answer["query"]["filter"] == {}
    assert run(["whatif", "--data", sample, "--query", '{"command": "distinct", "key": "status"}', "--index",
                '{"status": 1}', "--hint", "status_1"]) == 0
    assert "plan: DISTINCT_SCAN { status: 1 }" in capsys.readouterr().out
    assert run(["whatif", "--data", sample, "--query", '{"filter": {"status": "paid"']) == 2
    assert capsys.readouterr().err.startswith("idxadvisor: error: --query is not valid (Extended) JSON")


def test_an_error_line_shows_control_characters_rather_than_sending_them(capsys: pytest.CaptureFixture[str],
                                                                        tmp_path: Path) -> None:
    missing = tmp_path / "a\x1b]0;pwned\x07.log"
    assert run(["analyze", str(missing), "--format", "json"]) == 2
    err = capsys.readouterr().err
    assert "a\\x1b]0;pwned\\x07.log" in err and "\x1b" not in err and "\x07" not in err


def test_app_keeps_the_operations_of_matching_applications(capsys: pytest.CaptureFixture[str]) -> None:
    code, report, _ = analyze_json(capsys, str(DEMO_LOG), "--app", "DASH*", "--fail-on", "never", "--jobs", "1")
    assert code == 0
    assert report["summary"]["operations"] == 1216 and sum(shape["count"] for shape in report["shapes"]) == 120
    assert report["summary"]["excluded"]["application not matched by --app"] == 1096
    assert report["traffic"] == [{"kind": "application", "operations": 120, "apps": {"dashboard": 120}}]


def test_a_ctrl_c_after_the_command_ends_quietly_with_130(monkeypatch: pytest.MonkeyPatch) -> None:
    """A SIGINT just after a finished replay printed a KeyboardInterrupt traceback from pymongo's clean-up at exit."""
    import os
    import signal
    import sys

    app = sys.modules["idxadvisor.cli.app"]  # the module (the package exports the Typer object by this name)

    exits: list[int] = []

    def os_exit(code: int) -> None:
        exits.append(code)
        raise SystemExit(code)

    def clean_up_at_exit(code: int) -> None:
        os.kill(os.getpid(), signal.SIGINT)  # arrives while the process tears down, as a late Ctrl-C does
        exits.append(-1)  # not reached: the signal ends the process first

    def interrupted(signum: int, frame: object) -> None:  # what Python does by default, without ending pytest
        raise RuntimeError("KeyboardInterrupt")

    previous = signal.signal(signal.SIGINT, interrupted)
    monkeypatch.setattr(app, "run", lambda: 0)
    monkeypatch.setattr(app, "exit_without_teardown", clean_up_at_exit)
    monkeypatch.setattr(app.os, "_exit", os_exit)
    try:
        with pytest.raises(SystemExit):
            app.main()
    finally:
        signal.signal(signal.SIGINT, previous)
    assert exits == [130]
