"""Start-up stays small: the command line loads the library only for the command that runs, and an analysis loads
no optional engine it does not use (the server client, the estimator, the charting library); the collector rests
while it starts, and no pydantic plugin is looked for."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys

import pytest

from idxadvisor.cli import run
from idxadvisor.runtime import end_start_up, pause_collector_for_start_up
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


#: What no analysis of a log needs, whatever its format: the optional engines (server client, estimator, Dask,
#: charts, YAML rule files), the other commands' libraries, the report formats not asked for, and pydantic's plugin
#: discovery (``importlib.metadata``: entry points, email, zipfile).
NOT_FOR_A_LOG = {"pymongo", "bson", "mongomock", "yaml", "dask", "distributed", "fsspec", "vl_convert", "rich",
                 "importlib.metadata", "email", "zipfile", "idxadvisor.server", "idxadvisor.replay",
                 "idxadvisor.whatif", "idxadvisor.gate", "idxadvisor.compare", "idxadvisor.cluster", "idxadvisor.watch",
                 "idxadvisor.report.html", "idxadvisor.report.markdown", "idxadvisor.report.sarif",
                 "idxadvisor.ingest.datasets", "idxadvisor.ingest.samples"}


def test_the_console_scripts_analysis_of_a_log_loads_only_what_it_uses() -> None:
    log = FIXTURES_DIR / "demo" / "shop.log"
    completed = _main_with("import atexit, json\natexit.register(lambda: print(json.dumps(sorted(sys.modules)), "
                           "file=sys.stderr))", "analyze", str(log), "--format", "json", "--jobs", "1")
    modules = set(json.loads(completed.stderr.strip().splitlines()[-1]))
    assert "idxadvisor.api" in modules and json.loads(completed.stdout)["findings"]  # it did run, and report
    assert not NOT_FOR_A_LOG & modules, NOT_FOR_A_LOG & modules


def test_version_alone_is_answered_before_the_command_line_is_loaded() -> None:
    from idxadvisor import __version__

    for option in ("--version", "-V"):
        completed = subprocess.run([sys.executable, "-X", "importtime", "-m", "idxadvisor", option],
                                   capture_output=True, text=True, timeout=60, check=False)
        assert completed.returncode == 0 and completed.stdout == f"idxadvisor {__version__}\n"
        imported = {line.rsplit("|", 1)[-1].strip() for line in completed.stderr.splitlines()}
        assert "idxadvisor" in imported and not {"typer", "idxadvisor.cli", "pydantic"} & imported
    reader, writer = os.pipe()
    os.close(reader)  # the reader went away (``idxadvisor --version | true``): the status other tools end with
    try:
        gone = subprocess.run([sys.executable, "-m", "idxadvisor", "--version"], stdout=writer, stderr=subprocess.PIPE,
                              text=True, timeout=60, check=False)
    finally:
        os.close(writer)
    assert gone.returncode == 141 and gone.stderr == ""


def test_pydantic_looks_for_plugins_only_when_the_user_allows_some() -> None:
    probe = ("import atexit\natexit.register(lambda: print('metadata' if 'importlib.metadata' in sys.modules "
             "else 'none', file=sys.stderr))")
    assert _main_with(probe, "rules").stderr.strip().endswith("none")
    allowed = _main_with("import os\nos.environ['PYDANTIC_DISABLE_PLUGINS'] = 'logfire'\n" + probe, "rules")
    assert allowed.returncode == 0 and allowed.stderr.strip().endswith("metadata")


def test_a_name_the_plugin_loader_stand_in_lacks_brings_in_the_real_loader() -> None:
    script = ("import os, sys\nos.environ['PYDANTIC_DISABLE_PLUGINS'] = '__all__'\n"
              "from idxadvisor.runtime import skip_pydantic_plugin_discovery\nskip_pydantic_plugin_discovery()\n"
              "from pydantic.plugin._loader import get_plugins\nassert get_plugins() == ()\n"
              "assert '__file__' not in vars(sys.modules['pydantic.plugin._loader'])\n"
              "from pydantic.plugin._loader import _plugins  # a name only the real module has\n"
              "print('__file__' in vars(sys.modules['pydantic.plugin._loader']))")
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0 and completed.stdout.strip() == "True", completed.stderr


def _main_with(prelude: str, *arguments: str) -> subprocess.CompletedProcess[str]:
    """``idxadvisor ARGUMENTS`` through the console script's ``main``, after ``prelude`` ran in the same process."""
    script = (f"import sys\n{prelude}\nsys.argv = ['idxadvisor', *sys.argv[1:]]\n"
              "from idxadvisor.__main__ import main\nmain()")
    buffered = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}
    return subprocess.run([sys.executable, "-c", script, *arguments], capture_output=True, text=True, timeout=60,
                          env=buffered)


def test_the_process_ends_without_teardown_but_with_its_output_and_exit_handlers() -> None:
    log = FIXTURES_DIR / "demo" / "shop.log"
    completed = _main_with("import atexit\natexit.register(lambda: print('exit handler ran', file=sys.stderr))",
                           "analyze", str(log), "--format", "json", "--jobs", "1")
    assert completed.stdout.endswith("}\n")  # the report's last write, still in stdout's buffer at the end
    report = json.loads(completed.stdout)
    assert report["findings"] and completed.returncode == 1  # findings at warning level: the exit code says so
    assert completed.stderr.strip().endswith("exit handler ran")


def test_a_thread_still_running_gets_a_normal_exit_that_waits_for_it(tmp_path) -> None:  # noqa: ANN001
    marker = tmp_path / "thread-finished"
    prelude = ("import threading, time, pathlib\n"
               f"threading.Thread(target=lambda: (time.sleep(0.3), pathlib.Path({str(marker)!r}).touch())).start()")
    completed = _main_with(prelude, "rules")
    assert completed.returncode == 0 and "IX001" in completed.stdout
    assert marker.exists()


def test_the_collector_is_paused_for_start_up_and_back_on_when_the_command_runs(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert gc.isenabled() and gc.get_freeze_count() == 0
    pause_collector_for_start_up()
    try:
        assert not gc.isenabled()
        assert run(["rules"]) == 0  # the command's invocation ends the start-up
        assert gc.isenabled()
        assert gc.get_freeze_count() > 1000  # what start-up built is out of the collector's way
        assert "IX001" in capsys.readouterr().out
    finally:
        end_start_up()
        gc.enable()
        gc.unfreeze()


def test_without_a_start_up_pause_running_a_command_leaves_the_collector_as_it_was(
        capsys: pytest.CaptureFixture[str]) -> None:
    gc.disable()
    try:
        assert run(["rules"]) == 0
        assert not gc.isenabled() and gc.get_freeze_count() == 0
    finally:
        gc.enable()


def test_the_console_script_leaves_the_users_choice_of_pydantic_plugins_alone() -> None:
    completed = _main_with("import os\nos.environ['PYDANTIC_DISABLE_PLUGINS'] = 'logfire'\n"
                           "import atexit\natexit.register(lambda: print(os.environ['PYDANTIC_DISABLE_PLUGINS']))",
                           "rules")
    assert completed.returncode == 0 and completed.stdout.rstrip().endswith("logfire")
    completed = _main_with("import os, atexit\natexit.register(lambda: print(os.environ['PYDANTIC_DISABLE_PLUGINS']))",
                           "rules")
    assert completed.stdout.rstrip().endswith("__all__")
