"""Start-up stays small: the command line loads the library only for the command that runs, and an analysis loads
no optional engine it does not use (the server client, the estimator, the charting library)."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import FIXTURES_DIR


def loaded_after(code: str) -> set[str]:
    script = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return set(json.loads(completed.stdout.splitlines()[-1]))


def test_the_command_line_loads_no_library_before_a_command_runs() -> None:
    modules = loaded_after("import idxadvisor.cli")
    assert not {"idxadvisor.api", "idxadvisor.rules", "idxadvisor.models.report", "idxadvisor.parse.run",
                "pydantic", "rich", "bson", "pymongo"} & modules


def test_a_log_analysis_loads_no_optional_engine() -> None:
    log = FIXTURES_DIR / "demo" / "shop.log"
    modules = loaded_after("from idxadvisor.cli import run\n"
                           f"run(['analyze', {str(log)!r}, '--format', 'json', '-o', '/dev/null', '--jobs', '1'])")
    assert "idxadvisor.api" in modules  # it did run
    unused = {"pymongo", "mongomock", "vl_convert", "idxadvisor.server", "idxadvisor.replay", "idxadvisor.whatif",
              "idxadvisor.report.html", "dask", "distributed", "fsspec"}
    assert not unused & modules, unused & modules
