"""Files read as text, and offsets in them as the 1-based line and column people and SARIF use."""

from __future__ import annotations

from pathlib import Path

from idxadvisor.errors import InputError
from idxadvisor.models.report import SourceLocation


def read_text(path: Path, what: str) -> str:
    """A UTF-8 file (a byte order mark allowed); InputError naming it when it cannot be read."""
    try:
        return path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise InputError(f"{path}: cannot read the {what}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: the {what} is not UTF-8 ({exc.reason} at byte {exc.start})") from None


def location_at(text: str, path: str, offset: int) -> SourceLocation:
    line = text.count("\n", 0, offset) + 1
    return SourceLocation(path=path, line=line, column=offset - (text.rfind("\n", 0, offset) + 1) + 1)
