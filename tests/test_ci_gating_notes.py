"""docs/ci-gating-notes.md: its commands run and say what the page shows."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from idxadvisor.cli import run

ROOT = Path(__file__).resolve().parents[1]
PAGE = (ROOT / "docs" / "ci-gating-notes.md").read_text(encoding="utf-8")


def test_the_demo_check_shows_the_refused_index_as_the_page_does(capsys: pytest.CaptureFixture[str],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    command = re.search(r"```sh\n(idxadvisor check .*?)\n```", PAGE, re.S)
    assert command is not None
    arguments = command.group(1).replace("\\\n", " ").split()[1:]
    assert run([*arguments, "--jobs", "1"]) == 1
    out = capsys.readouterr().out
    shown = re.search(r"```text\n(  refused.*?)\n```", PAGE, re.S)
    assert shown is not None
    for line in shown.group(1).splitlines():
        if line != "...":
            assert line in out
    assert out.rstrip("\n").endswith(shown.group(1).splitlines()[-1])


def test_the_mdbkit_export_of_the_page_is_read(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    export = re.search(r"```json\n(.*?)\n```", PAGE, re.S)
    assert export is not None
    path = tmp_path / "mdbkit-indexes.json"
    path.write_text(export.group(1), encoding="utf-8")
    shop = ROOT / "fixtures" / "demo" / "shop.log"
    assert run(["analyze", str(shop), "--indexes", str(path), "--jobs", "1", "-f", "json", "--fail-on", "never"]) == 0
    assert capsys.readouterr().err == ""
