"""What the text and Markdown reports print, made safe to print: their strings come from logs, and a control
character in a namespace, a field name or a damaged line's excerpt is shown as its escape, never obeyed by the
terminal (``units.printable``)."""

from __future__ import annotations

from typing import Any, TypeVar, cast

from pydantic import BaseModel

from idxadvisor.units import printable

_Value = TypeVar("_Value")


def readable(value: _Value) -> _Value:
    """``value`` (a report model, or anything one holds) with every string ``printable``. What holds no control
    character is returned as it is, the same objects, so a clean report costs one walk and no copy."""
    return cast(_Value, _readable(value))


def _readable(value: Any) -> Any:
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, BaseModel):
        changed = {name: new for name in type(value).model_fields
                   if (new := _readable(old := getattr(value, name))) is not old}
        return value.model_copy(update=changed) if changed else value
    if isinstance(value, (list, tuple)):
        items = [_readable(item) for item in value]
        return value if all(new is old for new, old in zip(items, value)) else type(value)(items)
    if isinstance(value, dict):
        pairs = [(_readable(key), _readable(item)) for key, item in value.items()]
        if all(new_key is key and new is old for (new_key, new), (key, old) in zip(pairs, value.items())):
            return value
        return dict(pairs)
    return value
