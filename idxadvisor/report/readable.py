"""What the text and Markdown reports print, made safe to print: their strings come from logs, and a control
character in a namespace, a field name or a damaged line's excerpt is shown as its escape, never obeyed by the
terminal (``units.printable``).

One escaping function per output format, for every renderer and every name it prints (names are data):

- terminal: ``terminal_text`` (``units.printable``): control characters, newlines and bidi controls as escapes;
  ``readable`` applies it to a whole report.
- Markdown: ``md_code`` puts a name in a code span whose fence is longer than any run of backticks in it;
  ``md_text`` escapes prose (a message that quotes a name) so that no character in it is markup or HTML.
- HTML: ``html.escape`` (report/html.py's ``esc``); JSON and SARIF are serialised, never written as markup.
"""

from __future__ import annotations

import re
from typing import Any, TypeVar, cast

from pydantic import BaseModel

from idxadvisor.units import printable

_Value = TypeVar("_Value")
_BACKTICKS = re.compile("`+")
# Markdown's inline markup (emphasis, links, images, code, strike-through, tables) and HTML's: each escaped with a
# backslash, which CommonMark allows before any ASCII punctuation, so the text reads the same once rendered
_MARKUP = re.compile(r"([\\`*_\[\]<>|~&#!])")
# What GFM's extended autolinks and markdown-it's linkify turn into links in plain text: a scheme's colon before a
# slash (http://x, ftp://x), an at sign (a@b.com, mailto:), and a dot between a word and a letter (www.evil.com,
# evil.com/path). A backslash before the colon, the at sign or the dot splits the text where the link would be read;
# "1.2 s" and "shop.c1" keep their dots (no top-level domain starts with a digit).
_AUTOLINK = re.compile(r"(:(?=/)|@|(?<=\w)\.(?=[^\W\d_]))")

terminal_text = printable


def md_code(text: str) -> str:
    """``text`` as one Markdown code span, wherever it stands (a table cell too): the fence is one backtick longer
    than the longest run in ``text``, padded with a space when ``text`` starts or ends with one; a pipe is escaped
    (GFM splits table cells before it reads code spans) and a control character shown as its escape."""
    text = printable(text).replace("|", "\\|")
    if not text:
        return ""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * (longest + 1)
    # CommonMark strips one space from each end of a span that has text besides spaces: pad it back
    padding = " " if text.strip() and (text.startswith(("`", " ")) or text.endswith(("`", " "))) else ""
    return f"{fence}{padding}{text}{padding}{fence}"


def md_fence(text: str) -> str:
    """The fence of a Markdown code block holding ``text``: three backticks, or one more than its longest run."""
    return "`" * max(3, 1 + max((len(run) for run in _BACKTICKS.findall(text)), default=0))


def md_text(text: str) -> str:
    """Prose for Markdown, a table cell included: every character that could be markup or HTML (``<img …>``,
    ``**``, ``[x](y)``, a backtick, a pipe) or start an autolink (``www.evil.com``, ``http://x``, ``a@b.com``)
    escaped with a backslash, control characters shown as escapes."""
    return _AUTOLINK.sub(r"\\\1", _MARKUP.sub(r"\\\1", printable(text)))


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
