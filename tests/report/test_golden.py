"""The demo workload's report in every format is exactly the reviewed golden file (rebuild: python -m tests.regen)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.regen import FORMATS, GOLDEN, render


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_report_matches_its_golden_file(fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    output = tmp_path / FORMATS[fmt][0]
    assert render(fmt, output) == 0
    expected = (GOLDEN / FORMATS[fmt][0]).read_text(encoding="utf-8")
    got = output.read_text(encoding="utf-8")
    assert got == expected, f"{fmt} report changed: review it, then run python -m tests.regen"


def test_the_json_golden_follows_the_contract() -> None:
    report = json.loads((GOLDEN / "demo.json").read_text(encoding="utf-8"))
    assert report["schema_version"] == 1 and set(report["tool"]) == {"name", "version"}
    assert {"path", "format", "lines", "entries", "problems", "truncated"} <= set(report["inputs"][0])
    shape = report["shapes"][0]
    assert {"fingerprint", "ns", "op", "shape", "count", "duration_ms", "keys_examined", "docs_examined", "nreturned",
            "plans", "server_hashes"} <= set(shape)
    assert set(shape["duration_ms"]) == {"total", "mean", "p50", "p95", "p99", "max"}
    finding = next(f for f in report["findings"] if f["index"])
    assert {"rule", "severity", "fingerprint", "ns", "message", "index"} <= set(finding)
    assert {"ns", "key", "command"} <= set(finding["index"])
    assert finding["index"]["command"].startswith('db.getSiblingDB("shop").')
    assert {f["rule"] for f in report["findings"]} >= {"IX001", "IX002", "IX003", "QY001", "AG001"}


def test_the_text_golden_is_readable_at_100_columns() -> None:
    lines = (GOLDEN / "demo.txt").read_text(encoding="utf-8").splitlines()
    assert max(len(line) for line in lines) <= 100
    assert not any(line != line.rstrip() for line in lines)
    assert "\x1b[" not in "".join(lines)  # no colour when the output is not a terminal
