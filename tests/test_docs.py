"""The README and the pages under docs/ say what works: every ``idxadvisor`` command they show parses against the
command's options, those that read only the bundled demo run, links lead to files of the repository, the README's
set-up commands are the ones CI runs, and the CI recipes install from the repository and gate as they say."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main
import yaml

from idxadvisor.cli import app, run
from tests.conftest import FIXTURES_DIR, REPO_ROOT

README = REPO_ROOT / "README.md"
DOCS = REPO_ROOT / "docs"
# The pages this split of the README wrote; the others come from other changes and are only linked.
OWNED_PAGES = ("reading-logs.md", "report.md", "rules.md", "index-sets.md", "whatif.md", "ci-gating.md",
               "compare.md", "workloads-and-scale.md", "servers-and-replay.md", "settings.md", "speed.md",
               "development.md")
OTHER_PAGES = ("advice.md", "log-context.md", "time-breakdown.md", "security.md", "watch.md", "planner-coverage.md",
               "ci-gating-notes.md")
DEMO_COMMAND = ("python3 -m venv .venv && . .venv/bin/activate && pip install -e . && idxadvisor analyze "
                "fixtures/demo/shop.log --indexes fixtures/demo/indexes.json --data fixtures/demo/data")
TEST_COMMAND = ("python3 -m venv .venv && . .venv/bin/activate && pip install -e '.[test]' && "
                "python -m pytest -n auto")
SHELL_OPERATORS = {"|", ">", ">>", "&&", ";", "||", "2>&1"}
OUTPUT_OPTIONS = {"-o", "--output", "--save-workload", "--write-baseline"}


def documents() -> list[Path]:
    return [README, *(DOCS / name for name in OWNED_PAGES)]


def code_blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.MULTILINE | re.DOTALL)


def shell_lines(block: str) -> list[str]:
    """The block's command lines, continuation lines joined."""
    return [line for line in block.replace("\\\n", " ").splitlines() if line.strip()]


def idxadvisor_arguments(line: str) -> list[str] | None:
    """The arguments of the ``idxadvisor`` command on a shell line (after a pipe or ``&&``, up to the next operator;
    comments left out), or None when the line runs none."""
    words = shlex.split(line, comments=True)
    if "idxadvisor" not in words:
        return None
    start = words.index("idxadvisor") + 1
    end = next((n for n in range(start, len(words)) if words[n] in SHELL_OPERATORS), len(words))
    return words[start:end]


def documented_commands(*, in_prose: bool) -> list[tuple[str, list[str]]]:
    """Commands of ``sh`` blocks (complete, to copy), or those quoted in the prose (often a command's name and the
    options a sentence is about)."""
    found = []
    for path in documents():
        text = path.read_text(encoding="utf-8")
        if in_prose:
            lines = re.findall(r"`(idxadvisor [^`]+)`", text)
        else:
            lines = [line for block in code_blocks(text, "sh") for line in shell_lines(block)]
        for line in lines:
            arguments = idxadvisor_arguments(line)
            if arguments:
                found.append((path.name, arguments))
    return found


COMMANDS = documented_commands(in_prose=False)
QUOTED = documented_commands(in_prose=True)


def test_the_readme_keeps_its_two_setup_commands() -> None:
    blocks = [block.strip() for block in code_blocks(README.read_text(encoding="utf-8"), "sh")]
    assert DEMO_COMMAND in blocks and TEST_COMMAND in blocks


def test_ci_runs_the_readmes_test_command() -> None:
    """.ci/run is the README's test command, step by step (pip quiet, and upgraded first)."""
    steps = [step.strip() for step in TEST_COMMAND.split("&&")]
    script = [line.replace(" --quiet", "").strip()
              for line in (REPO_ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    positions = [script.index(step) for step in steps]
    assert positions == sorted(positions)


def test_the_readme_is_short_and_links_every_page() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 170
    linked = set(re.findall(r"\]\((docs/[^)#]+)\)", text))
    assert {f"docs/{name}" for name in (*OWNED_PAGES, *OTHER_PAGES)} <= linked
    more = text.partition("## More")[2]
    for name in (*OWNED_PAGES, *OTHER_PAGES):  # each with a line saying what it holds
        assert re.search(rf"^- \[docs/{re.escape(name)}\]\(docs/{re.escape(name)}\): \S", more, re.MULTILINE), name


def slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@pytest.mark.parametrize("path", documents(), ids=lambda path: path.name)
def test_links_stay_in_the_repository_and_lead_to_files(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    prose = re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)
    for target in re.findall(r"\]\(([^)\s]+)\)", prose):
        assert not re.match(r"[a-z]+:", target), f"{path.name}: {target} leaves the repository"
        file_part, _, anchor = target.partition("#")
        resolved = (path.parent / file_part).resolve() if file_part else path
        if resolved.parent == DOCS and resolved.name in OTHER_PAGES:
            continue  # written by another change
        assert resolved.exists(), f"{path.name}: {target} leads nowhere"
        if anchor and resolved.suffix == ".md":
            headings = re.findall(r"^#+ (.+)$", resolved.read_text(encoding="utf-8"), flags=re.MULTILINE)
            assert anchor in {slug(heading) for heading in headings}, f"{path.name}: no heading for {target}"


def test_the_docs_show_every_command() -> None:
    shown = {arguments[0] for _, arguments in COMMANDS}
    assert {"analyze", "check", "compare", "whatif", "replay", "merge", "indexes", "export-script"} <= shown


@pytest.mark.parametrize(("page", "arguments"), COMMANDS, ids=[f"{page}:{' '.join(arguments)[:60]}"
                                                                 for page, arguments in COMMANDS])
def test_every_documented_command_parses(page: str, arguments: list[str]) -> None:
    group = typer.main.get_command(app)
    assert arguments[0] in group.commands, f"{page}: idxadvisor {arguments[0]} is no command"  # type: ignore[attr-defined]
    command = group.commands[arguments[0]]  # type: ignore[attr-defined]
    command.make_context(arguments[0], arguments[1:])  # an unknown option or a bad value raises


@pytest.mark.parametrize(("page", "arguments"), QUOTED, ids=[f"{page}:{' '.join(arguments)[:60]}"
                                                               for page, arguments in QUOTED])
def test_every_command_quoted_in_the_prose_exists_with_its_options(page: str, arguments: list[str]) -> None:
    group = typer.main.get_command(app)
    command = group.commands.get(arguments[0])  # type: ignore[attr-defined]
    if command is None and arguments[0] == "watch":
        pytest.skip("idxadvisor watch comes with another change")
    assert command is not None, f"{page}: idxadvisor {arguments[0]} is no command"
    options = {name for param in command.params for name in (*param.opts, *param.secondary_opts)}
    for word in arguments[1:]:
        if word.startswith("-") and word != "-":
            assert word.split("=")[0] in options, f"{page}: idxadvisor {arguments[0]} has no {word}"


def runs_on_the_demo(arguments: list[str]) -> bool:
    text = " ".join(arguments)
    return "fixtures/demo" in text and not any(word in text for word in ("$", "--uri", "s3://", "--dask-scheduler"))


DEMO_RUNS = [(page, arguments) for page, arguments in COMMANDS if runs_on_the_demo(arguments)]


@pytest.mark.parametrize(("page", "arguments"), DEMO_RUNS, ids=[f"{page}:{' '.join(arguments)[:60]}"
                                                                  for page, arguments in DEMO_RUNS])
def test_documented_commands_on_the_demo_run(page: str, arguments: list[str], tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(REPO_ROOT)  # the documented paths are relative to the repository
    argv = list(arguments)
    for n, word in enumerate(argv[:-1]):
        if word in OUTPUT_OPTIONS:  # written under the test's directory, not into the repository
            argv[n + 1] = str(tmp_path / Path(argv[n + 1]).name)
    code = run(argv)
    err = capsys.readouterr().err
    assert code in (0, 1), f"{page}: idxadvisor {' '.join(arguments)} exited {code}: {err}"
    assert "error:" not in err, err


# -- the CI recipes --------------------------------------------------------------------------------------------------

def recipes() -> dict[str, dict]:
    blocks = [yaml.safe_load(block) for block in code_blocks((DOCS / "ci-gating.md").read_text(encoding="utf-8"),
                                                              "yaml")]
    github = next(block for block in blocks if "jobs" in block)
    gitlab = next(block for block in blocks if "idxadvisor" in block and "script" in block["idxadvisor"])
    return {"github": github, "gitlab": gitlab}


def test_the_recipes_install_from_the_repository_never_from_an_index() -> None:
    text = (DOCS / "ci-gating.md").read_text(encoding="utf-8") + README.read_text(encoding="utf-8")
    installs = re.findall(r"pip install ([^\n`]+)", text)
    assert len(installs) > 3
    for install in installs:
        words = [word for word in shlex.split(install.split("&&")[0], comments=True) if not word.startswith("-")]
        assert words and all(word.startswith((".", "/", "idxadvisor @ git+", "idxadvisor @ $")) for word in words), \
            install


def _git(cwd: Path, *arguments: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "init.defaultBranch=main",
                    *arguments], cwd=cwd, check=True, capture_output=True, timeout=60)


def _copy_of_this_repository(target: Path) -> Path:
    ignored = shutil.ignore_patterns(".git", ".venv", "__pycache__", "*.egg-info", "build", ".pytest_cache",
                                     ".hypothesis", "*.pyc")
    shutil.copytree(REPO_ROOT, target, ignore=ignored)
    return target


def _application_repository(root: Path) -> Path:
    """A repository like the recipes': db/indexes.json (today's) and db/workload.json on main, then a branch that
    adds the demo migration."""
    app_dir = root / "app"
    (app_dir / "db").mkdir(parents=True)
    shutil.copy(FIXTURES_DIR / "demo" / "indexes.json", app_dir / "db" / "indexes.json")
    assert run(["analyze", str(FIXTURES_DIR / "demo" / "shop.log"), "--save-workload",
                str(app_dir / "db" / "workload.json"), "--fail-on", "never", "--format", "json",
                "--output", os.devnull, "--jobs", "1"]) == 0
    _git(app_dir, "init", "-q")
    _git(app_dir, "add", ".")
    _git(app_dir, "commit", "-qm", "base")
    _git(app_dir, "remote", "add", "origin", str(app_dir))
    _git(app_dir, "fetch", "-q", "origin")
    _git(app_dir, "checkout", "-qb", "change")
    shutil.copytree(FIXTURES_DIR / "demo" / "migrations", app_dir / "db" / "migrations")
    _git(app_dir, "add", ".")
    _git(app_dir, "commit", "-qm", "the change")
    return app_dir


def _environment(root: Path) -> dict[str, str]:
    """A fresh virtual environment whose dependencies come from this one (so nothing but the build backend is
    downloaded), first on PATH."""
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True,
                   timeout=120)
    site_packages = next((venv / "lib").glob("python3*/site-packages"))
    (site_packages / "zz-dependencies.pth").write_text(
        "\n".join(path for path in sys.path if path.endswith("site-packages")) + "\n", encoding="utf-8")
    pip = venv / "bin" / "pip"  # this environment's pip, installing into the new one
    pip.write_text('#!/bin/sh\nexec "$(dirname "$0")/python" -m pip "$@"\n', encoding="utf-8")
    pip.chmod(0o755)
    environment = {name: value for name, value in os.environ.items() if name not in ("PYTHONPATH", "VIRTUAL_ENV")}
    environment["PATH"] = f"{venv / 'bin'}{os.pathsep}{environment.get('PATH', '')}"
    return environment


def _step(command: str, cwd: Path, environment: dict[str, str]) -> subprocess.CompletedProcess[str]:
    completed = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", command], cwd=cwd, env=environment,
                               capture_output=True, text=True, timeout=300)
    if completed.returncode and command.startswith("pip install") and re.search(
            r"Could not find a version that satisfies|Failed to establish a new connection|Network is unreachable",
            completed.stdout + completed.stderr):
        pytest.skip("no package index reachable for the build backend (setuptools)")
    return completed


def test_the_github_actions_recipe_installs_from_a_checkout_and_gates(tmp_path: Path) -> None:
    steps = recipes()["github"]["jobs"]["idxadvisor"]["steps"]
    app_dir = _application_repository(tmp_path)
    environment = _environment(tmp_path)
    runs = []
    for step in steps:
        if step.get("uses", "").startswith("actions/checkout") and "repository" in step.get("with", {}):
            _copy_of_this_repository(app_dir / step["with"]["path"])
        elif "run" in step:
            runs.append(step["run"].replace("${{ github.base_ref }}", "main"))
    assert runs[0].startswith("pip install ./")
    for command in runs[:-1]:
        completed = _step(command, app_dir, environment)
        assert completed.returncode == 0, completed.stdout + completed.stderr
    installed = subprocess.run(["bash", "-c", "command -v idxadvisor"], env=environment, capture_output=True,
                               text=True, check=True).stdout.strip()
    assert installed == str(tmp_path / "venv" / "bin" / "idxadvisor")
    gate = _step(runs[-1], app_dir, environment)
    assert gate.returncode == 0, gate.stderr  # the index file is unchanged: nothing new, the gate passes
    sarif = (app_dir / "idxadvisor.sarif").read_text(encoding="utf-8")
    assert '"version": "2.1.0"' in sarif or '"version":"2.1.0"' in sarif


def test_the_gitlab_recipe_installs_from_a_vcs_url_and_gates(tmp_path: Path) -> None:
    job = recipes()["gitlab"]["idxadvisor"]
    source = _copy_of_this_repository(tmp_path / "idxadvisor")
    _git(source, "init", "-q")
    _git(source, "add", ".")
    _git(source, "commit", "-qm", "this checkout")
    app_dir = _application_repository(tmp_path)
    environment = _environment(tmp_path)
    environment.update({name: str(value) for name, value in job.get("variables", {}).items()})
    assert environment["IDXADVISOR_URL"].startswith("git+https://")
    environment["IDXADVISOR_URL"] = f"git+file://localhost{source}@main"  # the recipe's URL, at this checkout
    environment["CI_MERGE_REQUEST_TARGET_BRANCH_NAME"] = "main"
    script = job["script"]
    assert script[0].startswith("pip install \"idxadvisor @ $")
    for command in script[:-1]:
        completed = _step(command, app_dir, environment)
        assert completed.returncode == 0, completed.stdout + completed.stderr
    installed = subprocess.run(["bash", "-c", "command -v idxadvisor"], env=environment, capture_output=True,
                               text=True, check=True).stdout.strip()
    assert installed == str(tmp_path / "venv" / "bin" / "idxadvisor")
    gate = _step(script[-1], app_dir, environment)
    assert gate.returncode == 1, gate.stderr  # the demo migration drops an index two shapes depend on
    report = (app_dir / "idxadvisor.md").read_text(encoding="utf-8")
    assert "CI001" in report


def test_the_documented_settings_are_read(tmp_path: Path) -> None:
    """Every `name = value` setting docs/settings.md names, and its rule options, make a settings file that loads."""
    from idxadvisor.config import load_settings

    text = (DOCS / "settings.md").read_text(encoding="utf-8")
    named = [span for span in re.findall(r"`([a-z-]+ = [^`]+)`", text)]
    assert len(named) >= 8
    config = tmp_path / "pyproject.toml"
    config.write_text("[tool.idxadvisor]\n" + "\n".join(named) + "\n" + "\n".join(code_blocks(text, "toml")),
                      encoding="utf-8")
    settings = load_settings({}, config)
    assert settings.min_ms == 100 and settings.max_new_indexes == 3
    assert settings.rules["QY002"]["min-lookups"] == 10
