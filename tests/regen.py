"""Rebuild generated test fixtures: ``python -m tests.regen`` (from the repository root).

The golden reports in ``fixtures/reports/`` are the demo workload's report in each format. Never edit them by hand:
change the code, run this, and review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path

from idxadvisor.cli import run

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "fixtures" / "reports"
DEMO_ARGUMENTS = ["fixtures/demo/shop.log", "--indexes", "fixtures/demo/indexes.json", "--data", "fixtures/demo/data",
                  "--fail-on", "never", "--jobs", "1"]
FORMATS = {"text": ("demo.txt", ["--verbose"]), "json": ("demo.json", []), "markdown": ("demo.md", ["--verbose"]),
           "sarif": ("demo.sarif", [])}


def render(fmt: str, output: Path) -> int:
    name, extra = FORMATS[fmt]
    previous = Path.cwd()
    os.chdir(ROOT)  # paths in the reports are relative to the repository
    try:
        return run(["analyze", *DEMO_ARGUMENTS, *extra, "--format", fmt, "--output", str(output)])
    finally:
        os.chdir(previous)


def main() -> None:
    GOLDEN.mkdir(parents=True, exist_ok=True)
    for fmt, (name, _) in FORMATS.items():
        render(fmt, GOLDEN / name)
        print(f"wrote {GOLDEN / name}")


if __name__ == "__main__":
    main()
