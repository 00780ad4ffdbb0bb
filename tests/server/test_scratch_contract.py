"""Replay's scratch contract against a fake server that records every command: system databases and any existing
name (compared without case) are refused before anything is written; the scratch database is dropped on SIGINT and
SIGTERM even while a command is stalled (on a fresh connection), the report is still written, and a drop the server
does not confirm ends with a line naming the database and the command that drops it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.fakeserver import WRITE_COMMANDS, FakeServer
from tests.server.test_live import analyze, scratch_databases

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", ["admin", "local", "config", "ADMIN", "Config"])
def test_a_system_database_is_refused_before_the_first_command(capsys: pytest.CaptureFixture[str],
                                                               fake: FakeServer, name: str) -> None:
    code, report, err = analyze(capsys, fake, "--replay", "--scratch-db", name)
    assert code == 2 and err == (f"idxadvisor: error: --scratch-db {name} is a system database: replay writes only to "
                                 "a database of its own\n")
    assert fake.commands == [] and report == {}


def test_a_source_name_differing_only_in_case_is_refused(capsys: pytest.CaptureFixture[str],
                                                          fake: FakeServer) -> None:
    code, _, err = analyze(capsys, fake, "--replay", "--scratch-db", "SHOP")
    assert code == 2 and "--scratch-db SHOP is a source database" in err
    assert not set(fake.names()) & WRITE_COMMANDS


def test_an_existing_name_differing_only_in_case_is_refused(capsys: pytest.CaptureFixture[str],
                                                             fake: FakeServer) -> None:
    other = FakeServer(databases={"Keep": {"c": [{"_id": 1}]}})
    scratch_uri = other.start()
    try:
        code, _, err = analyze(capsys, fake, "--replay", "--scratch-uri", scratch_uri, "--scratch-db", "keep")
    finally:
        other.stop()
    assert code == 2 and "--scratch-db keep already exists (as Keep) on mongodb://localhost:" in err
    assert not (set(fake.names()) | set(other.names())) & WRITE_COMMANDS


def test_a_drop_the_server_refuses_names_the_database_and_the_command(capsys: pytest.CaptureFixture[str],
                                                                       fake: FakeServer) -> None:
    fake.refuse.add("dropDatabase")
    code, report, err = analyze(capsys, fake, "--replay")
    [scratch] = scratch_databases(fake)
    assert code == 3 and report["server"]["scratch"]["dropped"] is False  # the report is written all the same
    assert [c.name for c in fake.commands if c.name == "dropDatabase"] == ["dropDatabase", "dropDatabase"]
    server = f"mongodb://localhost:{fake.server.port}"
    assert f"idxadvisor: error: the scratch database {scratch} was not dropped (" in err
    assert f"""drop it with mongosh "{server}" --eval 'db.getSiblingDB("{scratch}").dropDatabase()'""" in err
    assert "s3cret" not in err


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_during_a_stalled_command_drops_the_scratch_database_and_writes_the_report(
        fake: FakeServer, tmp_path: Path, signum: int) -> None:
    fake.stall_on = "createIndexes"  # only the scratch database receives it
    target = tmp_path / "report.json"
    child = subprocess.Popen(
        [sys.executable, "-m", "idxadvisor", "replay", "--uri", fake.uri, "--format", "json",  # type: ignore[attr-defined]
         "-o", str(target)],
        cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True)
    try:
        assert fake.stalled.wait(60), "the replay never reached createIndexes"
        started = time.monotonic()
        child.send_signal(signum)
        _, err = child.communicate(timeout=60)
        took = time.monotonic() - started
    finally:
        fake.release.set()
        if child.poll() is None:
            child.kill()
    assert child.returncode == 130 and "Traceback" not in err, err
    [scratch] = scratch_databases(fake)
    last_write = [c for c in fake.commands if c.name in WRITE_COMMANDS][-1]
    assert (last_write.name, last_write.database) == ("dropDatabase", scratch)  # while createIndexes hangs
    assert scratch not in fake.databases and took < 20
    stopped = "interrupted" if signum == signal.SIGINT else "terminated"
    assert err == (f"idxadvisor: error: replay {stopped}: the scratch database {scratch} on "
                   f"mongodb://localhost:{fake.server.port} was dropped\nidxadvisor: error: interrupted\n")
    scratch_report = json.loads(target.read_text())["server"]["scratch"]
    assert scratch_report["dropped"] is True and scratch_report["stopped"] == stopped
