"""The JSON report: the DESIGN.md contract, for scripts and CI pipelines.

It is written a list item at a time: a report of 100,000 shapes is some 300 MB of JSON, and holding it as one string
beside the report's models would double what the run needs at its peak. The bytes are those of
``report.model_dump_json(indent=2)`` (a test holds them equal).
"""

from __future__ import annotations

from typing import TextIO

from pydantic import BaseModel

from idxadvisor.models.report import Report

_ITEM_INDENT = "\n    "  # a top-level list's items sit two levels deep


def render(report: Report, out: TextIO) -> None:
    separator = "{\n"
    for name in type(report).model_fields:
        out.write(f'{separator}  "{name}": ')
        separator = ",\n"
        value = getattr(report, name)
        if isinstance(value, list) and value and isinstance(value[0], BaseModel):
            _write_items(value, out)
        else:
            out.write(_field_json(report, name))
    out.write("\n}\n")


def _write_items(items: list[BaseModel], out: TextIO) -> None:
    separator = "[" + _ITEM_INDENT
    for item in items:
        out.write(separator)
        separator = "," + _ITEM_INDENT
        out.write(item.model_dump_json(indent=2).replace("\n", _ITEM_INDENT))  # JSON strings hold no raw newline
    out.write("\n  ]")


def _field_json(report: Report, name: str) -> str:
    """One top-level field's value as the whole report's JSON has it (already indented for its place)."""
    text = report.model_dump_json(indent=2, include={name})
    return text[len(f'{{\n  "{name}": '):-len("\n}")]
