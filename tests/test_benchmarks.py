"""benchmarks/bench_all.py prints every target of issue 31 side by side from one run: its quick mode (small logs
built from the corpus, one run each, no peers) runs here and prints every row."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT

SCRIPT = REPO_ROOT / "benchmarks" / "bench_all.py"


def _rows() -> tuple[tuple[str, str], ...]:
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        spec = importlib.util.spec_from_file_location("bench_all", SCRIPT)
        assert spec is not None and spec.loader is not None
        module = sys.modules["bench_all"] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(SCRIPT.parent))
        sys.modules.pop("bench_all", None)
    return module.ROWS


@pytest.mark.corpus
def test_one_quick_run_prints_every_target_with_a_measure(corpus_dir: Path, tmp_path: Path) -> None:
    completed = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--data", str(tmp_path), "--mdbkit", "",
                                "--mloginfo", ""], capture_output=True, text=True, timeout=300, check=False)
    assert completed.returncode == 0, completed.stderr[-2000:]
    table = completed.stdout.split("\ntarget")[-1].splitlines()[1:]
    rows = _rows()
    assert len(table) == len(rows) >= 11
    for line, (name, aim) in zip(table, rows):
        assert line.startswith(name) and aim in line, line
    measured = {line.split("  ")[0]: line for line in table}
    assert "x (" in measured["JSON: idxadvisor / bare orjson loop"]  # a ratio of two times from this run
    assert "not run: mdbkit not found" in measured["JSON: mdbkit queries / idxadvisor"]
    assert " ms (" in measured["start-up: analyze of a 200-line log, over python"]
    assert " MB " in measured["peak PSS, JSON, 2 workers"]


def test_the_phases_of_one_run_add_up_to_its_wall_time(tmp_path: Path) -> None:
    """benchmarks/bench_phases.py: every phase with a median; the top-level phases (start-up, reading, advice) fit in
    the run's total, and the phases inside reading and advice in theirs."""
    demo = REPO_ROOT / "fixtures" / "demo" / "shop.log"
    completed = subprocess.run([sys.executable, str(REPO_ROOT / "benchmarks" / "bench_phases.py"), "--repeat", "1",
                                "--", "analyze", str(demo), "--format", "json", "--output", str(tmp_path / "r.json"),
                                "--fail-on", "never"], capture_output=True, text=True, timeout=120, check=False)
    assert completed.returncode == 0, completed.stderr[-2000:]
    seconds = {line[:30].strip(): float(line[30:].split(" s")[0]) for line in completed.stdout.splitlines()[1:]}
    assert {"start-up", "read", "advice", "inventory", "rules", "report models", "total", "main CPU"} <= set(seconds)
    assert seconds["rest (render, write)"] >= 0  # the top-level phases do not overlap: together within the total
    assert seconds["read: waiting and merging"] <= seconds["read"] + 0.002
    assert seconds["inventory"] + seconds["rules"] + seconds["report models"] <= seconds["advice"] + 0.002
    assert seconds["start-up"] > 0 and seconds["read"] > 0 and (tmp_path / "r.json").stat().st_size > 0
