"""The JSON report: the DESIGN.md contract, for scripts and CI pipelines."""

from __future__ import annotations

from typing import TextIO

from idxadvisor.models.report import Report


def render(report: Report, out: TextIO) -> None:
    out.write(report.model_dump_json(indent=2))
    out.write("\n")
