"""Offsets in a file's text as the 1-based line and column people and SARIF use."""

from __future__ import annotations

from idxadvisor.models.report import SourceLocation


def location_at(text: str, path: str, offset: int) -> SourceLocation:
    line = text.count("\n", 0, offset) + 1
    return SourceLocation(path=path, line=line, column=offset - (text.rfind("\n", 0, offset) + 1) + 1)
