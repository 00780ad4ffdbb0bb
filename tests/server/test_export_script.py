"""The export script: read-only mongosh that writes what --indexes and --data read, and what --data does with it."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from idxadvisor.cli import run
from idxadvisor.cli.common import parse_time

WRITES = re.compile(r"\b(insert\w*|update\w*|delete\w*|remove|replaceOne|createIndex\w*|drop\w*|renameCollection|"
                    r"\$out|\$merge|findAndModify|findOneAnd\w+|bulkWrite|collMod)\b")


def script(capsys: pytest.CaptureFixture[str], *arguments: str) -> str:
    assert run(["export-script", *arguments]) == 0
    return capsys.readouterr().out


def test_the_script_only_reads(capsys: pytest.CaptureFixture[str]) -> None:
    text = script(capsys, "--db", "shop", "--sample-size", "500")
    code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))
    assert WRITES.findall(code) == []
    assert "const requested = [\"shop\"];" in text and "$sample: { size: sampleSize }" in text
    assert "const sampleSize = 500;" in text and "$indexStats" in text and "getIndexes()" in text


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_script_is_valid_javascript(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "export.js"
    path.write_text(script(capsys))
    checked = subprocess.run(["node", "--check", str(path)], capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0, checked.stderr


def test_the_uri_in_the_comment_has_its_password_masked(capsys: pytest.CaptureFixture[str]) -> None:
    text = script(capsys, "--uri", "mongodb://dba:hunter2@db.example.com/?tls=true")
    assert "hunter2" not in text and 'mongosh "mongodb://dba:****@db.example.com/?tls=true"' in text


def test_data_written_by_the_script_scales_to_the_collection(capsys: pytest.CaptureFixture[str],
                                                             tmp_path: Path) -> None:
    from tests.helpers import json_line, slow_attr

    data = tmp_path / "data"
    data.mkdir()
    (data / "shop.orders.json").write_text("".join(json.dumps({"_id": n, "sku": n % 50}) + "\n" for n in range(500)))
    (data / "collstats.json").write_text(json.dumps({"shop.orders": {"count": 50000, "size": 4000000,
                                                                     "avgObjSize": 80}}))
    log = tmp_path / "mongod.log"
    log.write_text("\n".join(json_line(slow_attr({"find": "orders", "filter": {"sku": 7}, "limit": 1},
                                                 docsExamined=900, nreturned=1)) for _ in range(4)) + "\n")
    assert run(["analyze", str(log), "--data", str(data), "--format", "json", "--fail-on", "never"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert [(s["ns"], s["documents"]) for s in report["samples"]] == [("shop.orders", 500)]  # collstats is no sample
    notes = " ".join(report["findings"][0]["evidence"]["notes"])
    assert "scaled x100.0 to the 50,000 documents of the collection" in notes


@pytest.mark.parametrize(("text", "minutes"), [("30m", 30), ("2h", 120), ("7d", 7 * 24 * 60), ("1.5h", 90),
                                               ("45s", 0.75), ("1w", 7 * 24 * 60)])
def test_since_takes_an_age(text: str, minutes: float) -> None:
    from datetime import datetime, timedelta, timezone

    now = datetime(2026, 5, 1, 12, 0, tzinfo=timezone.utc)
    assert parse_time(text, "--since", now) == now - timedelta(minutes=minutes)
