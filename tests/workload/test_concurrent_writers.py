"""Concurrent ``--save-workload`` runs on one file take turns (an advisory lock): no run's inputs are lost; and a
workload file that cannot be written never costs the report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from idxadvisor.cli import run
from idxadvisor.workload import load_workload
from tests.helpers import json_line, slow_attr

ROOT = Path(__file__).resolve().parents[2]


def small_log(path: Path, collection: str) -> Path:
    lines = [json_line(slow_attr({"find": collection, "filter": {"n": n}, "$db": "shop"}, ns=f"shop.{collection}"))
             for n in range(20)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_four_concurrent_incremental_runs_lose_nothing(tmp_path: Path) -> None:
    workload = tmp_path / "w.json"
    assert run(["analyze", str(small_log(tmp_path / "base.log", "base")), "--save-workload", str(workload),
                "--format", "json", "-o", str(tmp_path / "base.json"), "--fail-on", "never"]) == 0
    logs = [small_log(tmp_path / f"log{n}.log", f"c{n}") for n in range(4)]
    children = [subprocess.Popen([sys.executable, "-m", "idxadvisor", "analyze", str(log), "--save-workload",
                                  str(workload), "--format", "json", "-o", str(tmp_path / f"r{n}.json"), "--fail-on", "never"],
                                 cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stderr=subprocess.PIPE,
                                 text=True)
                for n, log in enumerate(logs)]
    results = [(child.wait(timeout=120), child.stderr.read() if child.stderr else "") for child in children]
    assert results == [(0, "")] * 4
    saved = load_workload(workload, qualify_paths=False)
    assert sorted(Path(item.path).name for item in saved.inputs) == ["base.log", *(log.name for log in logs)]
    assert {stats.shape.ns for stats in saved.digest.shapes.values()} == {"shop.base", *(f"shop.c{n}" for n in range(4))}


def test_a_workload_file_that_cannot_be_written_still_gets_the_report_out(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = small_log(tmp_path / "a.log", "a")
    target = tmp_path / "report.json"
    workload = tmp_path / "missing-folder" / "w.json"
    code = run(["analyze", str(log), "--save-workload", str(workload), "--format", "json", "-o", str(target)])
    err = capsys.readouterr().err
    assert code == 2 and json.loads(target.read_text())["summary"]["operations"] == 20
    assert err.startswith(f"idxadvisor: error: --save-workload: cannot write {workload}: ") and err.count("\n") == 1
