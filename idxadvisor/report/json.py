"""The JSON report: the DESIGN.md contract, for scripts and CI pipelines.

It is written a few hundred list items at a time: a report of 100,000 shapes is some 300 MB of JSON, and holding it
as one string beside the report's models would double what the run needs at its peak. The bytes are those of
``report.model_dump_json(indent=2)`` (a test holds them equal).
"""

from __future__ import annotations

from typing import TextIO

from pydantic import BaseModel, TypeAdapter

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
    model = type(items[0])
    if any(type(item) is not model for item in items):  # a subclass serialises its own fields: one at a time
        separator = "[" + _ITEM_INDENT
        for item in items:
            out.write(separator)
            separator = "," + _ITEM_INDENT
            out.write(item.model_dump_json(indent=2).replace("\n", _ITEM_INDENT))  # JSON strings hold no raw newline
        out.write("\n  ]")
        return
    adapter = _held_list_adapter(model)
    separator = "["
    for start in range(0, len(items), _ITEMS_AT_ONCE):
        # the items as a top-level field's list holds them, indented by the serialiser itself, less what holds them
        text = adapter.dump_json({"items": items[start:start + _ITEMS_AT_ONCE]}, indent=2).decode()
        out.write(separator)
        out.write(text[len(_HELD_OPENING):-len(_HELD_CLOSING)])
        separator = ","
    out.write("\n  ]")


#: Items serialised in one call: fewer calls than one per item, and a string of a few megabytes at most.
_ITEMS_AT_ONCE = 200
_HELD_OPENING = '{\n  "items": ['
_HELD_CLOSING = "\n  ]\n}"
_ADAPTERS: dict[type[BaseModel], TypeAdapter] = {}


def _held_list_adapter(model: type[BaseModel]) -> TypeAdapter:
    """The serialiser of ``{"items": [model, …]}`` (one per report model, made when first needed): its items sit
    as deep as those of a report's top-level list."""
    adapter = _ADAPTERS.get(model)
    if adapter is None:
        adapter = _ADAPTERS[model] = TypeAdapter(dict[str, list[model]])  # type: ignore[valid-type]
    return adapter


def _field_json(report: Report, name: str) -> str:
    """One top-level field's value as the whole report's JSON has it (already indented for its place)."""
    text = report.model_dump_json(indent=2, include={name})
    return text[len(f'{{\n  "{name}": '):-len("\n}")]
