"""Passwords never leave the tool: every option that takes a server URI (or a file that may be one), fed URIs too
damaged to parse, echoes them masked, on stderr and in every report format. The redaction reads no URI syntax
(``units.mask_secrets``), so a missing or misspelt scheme is masked like a good one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from idxadvisor.cli import run
from idxadvisor.units import mask_secrets

DEMO_LOG = str(Path(__file__).resolve().parents[1] / "fixtures" / "demo" / "shop.log")
PASSWORD = "S3cretPW"
MALFORMED = [
    f"mongodb//admin:{PASSWORD}@host",  # the colon of the scheme forgotten
    f"mongodb:/admin:{PASSWORD}@host",  # one slash
    f"admin:{PASSWORD}@host",  # no scheme at all
    f"mongodb://admin:{PASSWORD}@host:port",  # a scheme, but pymongo cannot read the port
    f"mongodb://admin:{PASSWORD}@[::1",  # an IPv6 host left open
    f"mongodb+srv:/admin:{PASSWORD}@cluster0.example.net",
    f"mongodb://admin:{PASSWORD}@h/?tlsCertificateKeyFilePassword={PASSWORD}",  # a password in an option too
]
UNREACHABLE = "mongodb://127.0.0.1:9/?serverSelectionTimeoutMS=50"


def commands(uri: str, tmp_path: Path) -> list[list[str]]:
    report = str(tmp_path / "report")
    return [
        ["analyze", "--uri", uri],
        ["analyze", DEMO_LOG, "--replay", "--uri", UNREACHABLE, "--scratch-uri", uri],
        ["replay", "--uri", uri],
        ["replay", DEMO_LOG, "--uri", UNREACHABLE, "--scratch-uri", uri],
        ["indexes", "--uri", uri],
        ["export-script", "--uri", uri],
        ["analyze", uri, "-o", report],
        ["analyze", DEMO_LOG, "--data", f"shop.orders={uri}"],
        ["analyze", DEMO_LOG, "--indexes", uri],
        ["check", "--workload", uri, "--indexes", uri],
        ["whatif", "--data", uri, "--query", '{"command": "find", "filter": {}}'],
    ]


@pytest.mark.parametrize("uri", MALFORMED)
def test_every_option_taking_a_uri_masks_a_malformed_ones_password(uri: str, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    for arguments in commands(uri, tmp_path):
        code = run(arguments)
        captured = capsys.readouterr()
        written = "".join(path.read_text() for path in tmp_path.iterdir())
        assert PASSWORD not in captured.out + captured.err + written, arguments
        assert code in (0, 2, 3), (arguments, captured.err)  # never an internal error


@pytest.mark.parametrize("uri", [MALFORMED[0], MALFORMED[2]])
@pytest.mark.parametrize("format", ["text", "json", "markdown", "sarif", "html"])
def test_a_uri_given_as_an_input_is_masked_in_every_report_format(uri: str, format: str, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "report"
    run(["analyze", DEMO_LOG, uri, "--format", format, "-o", str(target), "--fail-on", "never"])
    captured = capsys.readouterr()
    assert target.exists() and PASSWORD not in target.read_text() + captured.err
    assert mask_secrets(uri) in captured.err


def test_a_server_label_never_holds_user_info() -> None:
    from idxadvisor.server.connection import host_label

    assert host_label(f"mongodb://admin:p/{PASSWORD}@db1,db2/shop?x=1") == "mongodb://db1,db2"
    assert host_label(f"mongodb://admin:p@{PASSWORD}@db1/shop") == "mongodb://db1"
    assert host_label(f"admin:{PASSWORD}@db1/shop") == "mongodb://db1"  # no scheme: was admin:S3cretPW@db1/shop://
    assert host_label(f"mongodb//admin:{PASSWORD}@db1") == "mongodb://db1"


def test_the_watch_ndjson_masks_the_path_it_follows(tmp_path: Path) -> None:
    """A path that looks like a URI with a password (a folder named so, or a pasted URI) is masked in the NDJSON
    lines and the live view's header (the same snapshot), as input paths are in every report."""
    from tests.watch.process import WatchProcess

    folder = tmp_path / f"admin:{PASSWORD}@db1"
    folder.mkdir()
    log = folder / "mongod.log"
    log.write_text("", encoding="utf-8")
    watch = WatchProcess(str(log), "--interval", "0.2", "--once-idle", "0.5", "--format", "json")
    first = watch.next_line()
    _, report, errors = watch.end(None)  # --once-idle: it ends by itself
    assert first["input"]["source"].endswith("admin:****@db1/mongod.log"), first["input"]
    assert PASSWORD not in json.dumps(first) + report + errors



def test_a_bad_scratch_uri_is_refused_before_the_source_server_is_read(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["replay", DEMO_LOG, "--uri", UNREACHABLE, "--scratch-uri", MALFORMED[0]]) == 2
    assert capsys.readouterr().err == ("idxadvisor: error: --scratch-uri mongodb//admin:****@host: not a MongoDB URI "
                                       "(mongodb:// or mongodb+srv://)\n")
