"""Migration scripts (mongosh, migrate-mongo) read for the index changes they make.

A small tokenizer reads the JavaScript: strings, template literals, regex literals and comments are skipped, so a
call written inside a comment or a string is not a call. Call sites are found on the token stream: a chain that
starts at a database (``db``, a migrate-mongo ``up(db, client)`` parameter, or a name assigned from one) and goes
through ``getSiblingDB("x")``, ``client.db("x")``, ``getCollection("c")``, ``collection("c")`` (migrate-mongo),
``["c"]`` or ``.c`` to an index method, or to ``runCommand``/``command`` with ``createIndexes``, ``dropIndexes``,
``collMod`` (hiding) or ``drop``. ``use shop`` and ``db = db.getSiblingDB("shop")`` set the database; else
``--db``. The ``down`` function of a migrate-mongo migration is the rollback and is not read.

Every argument is read with the project's shell-syntax parser (``parse.shelldoc``), never with a regex; a call whose
arguments are not literal documents (a variable, an expression) is an ``InputError`` naming file, line and column.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from idxadvisor.errors import InputError
from idxadvisor.gate.positions import location_at, read_text
from idxadvisor.models.report import SourceLocation
from idxadvisor.parse.shelldoc import ShellSyntaxError, parse_shell_value

INDEX_METHODS = frozenset({"createIndex", "ensureIndex", "createIndexes", "dropIndex", "dropIndexes", "hideIndex",
                           "unhideIndex", "drop"})
COMMAND_METHODS = frozenset({"runCommand", "command"})
SCRIPT_SUFFIXES = (".js", ".mjs", ".cjs")
_LITERAL_NAMES = frozenset({"true", "false", "null", "undefined", "NaN", "Infinity", "MinKey", "MaxKey"})
_REGEX_AFTER_WORDS = frozenset({"return", "typeof", "case", "do", "else", "in", "of", "new", "delete", "void", "throw",
                                "await", "yield"})
_IDENT = re.compile(r"[A-Za-z_$][\w$]*")
_NUMBER = re.compile(r"(?:0[xXbBoO][\da-fA-F_]+|(?:\d[\d_]*\.?[\d_]*|\.\d[\d_]*)(?:[eE][+-]?\d+)?)n?")
_SPACE = re.compile(r"\s+")
_OPEN = {"(": ")", "[": "]", "{": "}"}


@dataclass(frozen=True, slots=True)
class Token:
    kind: str  # ident, string, number, template, regex, punct
    text: str
    start: int
    end: int


@dataclass
class Source:
    """A script as tokens, with comments blanked out of ``code`` (offsets and line breaks unchanged)."""

    path: str
    text: str
    code: str
    tokens: list[Token]
    partner: dict[int, int]  # token index of a bracket -> token index of its partner

    def location(self, offset: int) -> SourceLocation:
        return location_at(self.text, self.path, offset)

    def error(self, offset: int, message: str) -> InputError:
        return InputError(f"{self.location(offset)}: {message}")


def _error(text: str, path: str, offset: int, message: str) -> InputError:
    return InputError(f"{location_at(text, path, offset)}: {message}")


# -- the tokenizer --------------------------------------------------------------------------------------------------


def tokenize(text: str, path: str) -> Source:
    tokens: list[Token] = []
    code = list(text)
    position, end = 0, len(text)
    while position < end:
        character = text[position]
        if character.isspace():
            position = _SPACE.match(text, position).end()  # type: ignore[union-attr]
        elif text.startswith("//", position) or text.startswith("/*", position):
            close = text.find("\n", position) if character == "/" and text[position + 1] == "/" else \
                text.find("*/", position + 2)
            if close < 0 and text[position + 1] == "*":
                raise _error(text, path, position, "unterminated comment")
            stop = end if close < 0 else (close if text[position + 1] == "/" else close + 2)
            for offset in range(position, stop):
                if code[offset] != "\n":
                    code[offset] = " "
            position = stop
        elif character in "\"'":
            stop = _string_end(text, position, path)
            tokens.append(Token("string", text[position:stop], position, stop))
            position = stop
        elif character == "`":
            stop = _template_end(text, position, path)
            tokens.append(Token("template", text[position:stop], position, stop))
            position = stop
        elif character == "/" and _regex_allowed(tokens):
            stop = _regex_end(text, position, path)
            tokens.append(Token("regex", text[position:stop], position, stop))
            position = stop
        elif (match := _IDENT.match(text, position)) is not None:
            tokens.append(Token("ident", match.group(), position, match.end()))
            position = match.end()
        elif character.isdigit() or (character == "." and text[position + 1: position + 2].isdigit()):
            match = _NUMBER.match(text, position)
            stop = match.end() if match is not None and match.end() > position else position + 1
            tokens.append(Token("number", text[position:stop], position, stop))
            position = stop
        else:
            width = 2 if text.startswith("=>", position) or text.startswith("==", position) else 1
            tokens.append(Token("punct", text[position:position + width], position, position + width))
            position += width
    return Source(path, text, "".join(code), tokens, _partners(tokens, text, path))


def _string_end(text: str, start: int, path: str) -> int:
    quote, position = text[start], start + 1
    while position < len(text):
        character = text[position]
        if character == "\\":
            position += 2
            continue
        if character == quote:
            return position + 1
        if character == "\n":
            break
        position += 1
    raise _error(text, path, start, "unterminated string")


def _template_end(text: str, start: int, path: str) -> int:
    position, depth = start + 1, 0
    while position < len(text):
        character = text[position]
        if character == "\\":
            position += 2
            continue
        if depth == 0 and character == "`":
            return position + 1
        if text.startswith("${", position):
            depth += 1
            position += 2
            continue
        if depth and character == "}":
            depth -= 1
        position += 1
    raise _error(text, path, start, "unterminated template literal")


def _regex_allowed(tokens: list[Token]) -> bool:
    """A ``/`` starts a regex literal where a value may start, and is a division after a value."""
    if not tokens:
        return True
    last = tokens[-1]
    if last.kind == "ident":
        return last.text in _REGEX_AFTER_WORDS
    return last.kind == "punct" and last.text not in (")", "]", "}")


def _regex_end(text: str, start: int, path: str) -> int:
    position, in_class = start + 1, False
    while position < len(text):
        character = text[position]
        if character == "\\":
            position += 2
            continue
        if character == "\n":
            break
        if character == "[":
            in_class = True
        elif character == "]":
            in_class = False
        elif character == "/" and not in_class:
            flags = re.compile(r"[a-z]*").match(text, position + 1)
            return flags.end()  # type: ignore[union-attr]
        position += 1
    raise _error(text, path, start, "unterminated regular expression")


def _partners(tokens: list[Token], text: str, path: str) -> dict[int, int]:
    partner: dict[int, int] = {}
    stack: list[int] = []
    for index, token in enumerate(tokens):
        if token.kind != "punct":
            continue
        if token.text in _OPEN:
            stack.append(index)
        elif token.text in (")", "]", "}"):
            if not stack or _OPEN[tokens[stack[-1]].text] != token.text:
                raise _error(text, path, token.start, f"unbalanced '{token.text}'")
            opening = stack.pop()
            partner[opening], partner[index] = index, opening
    if stack:
        token = tokens[stack[-1]]
        raise _error(text, path, token.start, f"'{token.text}' is never closed")
    return partner


# -- call sites -----------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Database:
    name: str | None  # None: the database --db names


@dataclass(frozen=True)
class Collection:
    database: str | None
    name: str


@dataclass(frozen=True)
class Client:
    """migrate-mongo's ``client`` (a MongoClient): ``client.db("x")`` is a database."""


@dataclass
class Call:
    """An index method called on a collection, or a command run on a database."""

    method: str
    database: str | None
    collection: str | None
    arguments: list[Any]
    location: SourceLocation
    offset: int


@dataclass
class _Reader:
    source: Source
    aliases: dict[str, Database | Collection | Client] = field(default_factory=lambda: {"db": Database(None)})
    calls: list[Call] = field(default_factory=list)

    @property
    def tokens(self) -> list[Token]:
        return self.source.tokens

    def text(self, index: int) -> str:
        return self.tokens[index].text if 0 <= index < len(self.tokens) else ""

    def read(self) -> list[Call]:
        skipped = _rollback_spans(self)
        index = 0
        while index < len(self.tokens):
            if any(start <= index <= stop for start, stop in skipped):
                index += 1
                continue
            index = self._statement(index)
        return self.calls

    def _statement(self, index: int) -> int:
        token = self.tokens[index]
        if token.kind != "ident" or self.text(index - 1) == ".":
            return index + 1
        if token.text == "use" and self._statement_start(index) and self.tokens[index + 1:index + 2] \
                and self.tokens[index + 1].kind in ("ident", "string") and self.text(index + 2) not in ("(", "=", "."):
            name = self.tokens[index + 1].text
            self.aliases["db"] = Database(_string_value(self.source, self.tokens[index + 1]) if
                                          self.tokens[index + 1].kind == "string" else name)
            return index + 2
        if token.text in ("const", "let", "var") and self.text(index + 2) == "=":
            return self._assignment(index + 1)
        if self.text(index + 1) == "=" and token.text not in ("const", "let", "var"):
            return self._assignment(index)
        if token.text in self.aliases:
            _, after = self._chain(index)
            return after
        return index + 1

    def _statement_start(self, index: int) -> bool:
        if index == 0:
            return True
        previous = self.tokens[index - 1]
        return previous.text in (";", "{", "}") or "\n" in self.source.text[previous.end:self.tokens[index].start]

    def _assignment(self, index: int) -> int:
        """``name = <chain>``: a name for a database or a collection."""
        name = self.tokens[index].text
        start = index + 2
        if start < len(self.tokens) and self.tokens[start].kind == "ident" and self.tokens[start].text in self.aliases:
            value, after = self._chain(start)
            if isinstance(value, (Database, Collection, Client)):
                self.aliases[name] = value
            return after
        self.aliases.pop(name, None)  # reassigned to something else
        return start

    def _chain(self, index: int) -> tuple[Any, int]:
        value: Any = self.aliases[self.tokens[index].text]
        base = self.tokens[index].start
        position = index + 1
        while position < len(self.tokens):
            if self.text(position) == "." and position + 1 < len(self.tokens) \
                    and self.tokens[position + 1].kind == "ident":
                name = self.tokens[position + 1].text
                after = position + 2
                if self.text(after) == "(":
                    close = self.source.partner[after]
                    value = self._call(value, name, after, close, base)
                    position = close + 1
                else:
                    value = self._property(value, name)
                    position = after
            elif self.text(position) == "[" and self.tokens[position + 1].kind == "string" \
                    and self.text(position + 2) == "]":
                value = self._property(value, _string_value(self.source, self.tokens[position + 1]))
                position += 3
            else:
                break
            if value is None:
                break
        return value, position

    def _property(self, value: Any, name: str) -> Any:
        if isinstance(value, Database):
            return Collection(value.name, name)
        if isinstance(value, Collection):
            return Collection(value.database, f"{value.name}.{name}")
        return None

    def _call(self, value: Any, method: str, opening: int, closing: int, base: int) -> Any:
        if isinstance(value, Client):
            return Database(self._name_argument(method, opening, closing)) if method == "db" else None
        if isinstance(value, Database):
            if method == "getSiblingDB":
                return Database(self._name_argument(method, opening, closing))
            if method in ("getCollection", "collection"):
                return Collection(value.name, self._name_argument(method, opening, closing))
            if method in COMMAND_METHODS:
                self.calls.append(Call(method, value.name, None, self._arguments(opening, closing, method),
                                       self.source.location(base), base))
            return None
        if isinstance(value, Collection) and method in INDEX_METHODS:
            self.calls.append(Call(method, value.database, value.name, self._arguments(opening, closing, method),
                                   self.source.location(base), base))
        return None

    def _name_argument(self, method: str, opening: int, closing: int) -> str:
        arguments = self._arguments(opening, closing, method)
        if len(arguments) != 1 or type(arguments[0]) is not str:
            raise self.source.error(self.tokens[opening].start, f"{method}() needs one name in quotes")
        return arguments[0]

    def _arguments(self, opening: int, closing: int, method: str) -> list[Any]:
        """Each argument read with the shell-syntax parser; variables and expressions are refused with a position."""
        spans, start, index = [], opening + 1, opening + 1
        while index < closing:
            text = self.text(index)
            if text in _OPEN:
                index = self.source.partner[index] + 1
                continue
            if text == ",":
                spans.append((start, index))
                start = index + 1
            index += 1
        if start < closing:
            spans.append((start, closing))
        return [self._argument(first, stop, method) for first, stop in spans if first < stop]

    def _argument(self, first: int, stop: int, method: str) -> Any:
        for index in range(first, stop):
            token = self.tokens[index]
            if token.kind == "template":
                raise self.source.error(token.start, f"{method}(): a template literal is not a literal value")
            if token.kind == "ident" and token.text not in _LITERAL_NAMES and token.text != "new" \
                    and self.text(index + 1) not in (":", "(", ".") and self.text(index - 1) not in ("new", "."):
                raise self.source.error(token.start, f"{method}(): '{token.text}' is not a literal value: the "
                                                     "checker reads literal documents only, not variables")
            if token.text == "." and self.text(index + 1) == "." and token.kind == "punct":
                raise self.source.error(token.start, f"{method}(): spread syntax is not a literal document")
        start, end = self.tokens[first].start, self.tokens[stop - 1].end
        try:
            parsed = parse_shell_value(self.source.code, start)
        except ShellSyntaxError as exc:
            raise self.source.error(exc.position, f"{method}(): cannot read the argument: {exc.reason}") from None
        if self.source.code[parsed.end:end].strip():
            raise self.source.error(parsed.end, f"{method}(): cannot read the argument: unexpected text after "
                                                "the value")
        return parsed.value


def _string_value(source: Source, token: Token) -> str:
    try:
        value = parse_shell_value(source.code, token.start).value
    except ShellSyntaxError as exc:
        raise source.error(token.start, f"cannot read the string: {exc.reason}") from None
    return str(value)


def _rollback_spans(reader: _Reader) -> list[tuple[int, int]]:
    """The bodies of migrate-mongo ``down`` functions (token index ranges), and, for ``up``, its parameters as names
    of the database and the client."""
    spans = []
    tokens = reader.tokens
    for index, token in enumerate(tokens):
        if token.kind != "ident" or token.text not in ("up", "down"):
            continue
        if reader.text(index - 1) == "." and reader.text(index - 2) != "exports":
            continue  # something.up: not a migration's function
        parameters, body = _function_after(reader, index + 1)
        if body is None:
            continue
        if token.text == "down":
            spans.append(body)
        else:
            for name, value in zip(parameters, (Database(None), Client())):
                reader.aliases[name] = value
    return spans


def _function_after(reader: _Reader, index: int) -> tuple[list[str], tuple[int, int] | None]:
    """``(a, b) {``, ``: async function (a) {``, ``= async (a) => {``, ``: a => {``: parameters and body span."""
    text = reader.text
    if text(index) in (":", "="):
        index += 1
    if text(index) == "async":
        index += 1
    if text(index) == "function":
        index += 1
        if reader.tokens[index:index + 1] and reader.tokens[index].kind == "ident" and text(index) != "(":
            index += 1
    if text(index) == "(":
        close = reader.source.partner[index]
        parameters = [token.text for token in reader.tokens[index + 1:close] if token.kind == "ident"]
        index = close + 1
    elif index < len(reader.tokens) and reader.tokens[index].kind == "ident" and text(index + 1) == "=>":
        parameters = [text(index)]
        index += 1
    else:
        return [], None
    if text(index) == "=>":
        index += 1
    if text(index) != "{":
        return parameters, None
    return parameters, (index, reader.source.partner[index])


def read_script_calls(path: Path) -> list[Call]:
    """Every index call of a script, in order; InputError with file, line and column for what cannot be read."""
    return script_calls(read_text(path, "migration script"), str(path))


def script_calls(text: str, path: str) -> list[Call]:
    return _Reader(tokenize(text, path)).read()


def script_files(argument: str) -> list[Path]:
    """A script, or every ``.js``/``.mjs``/``.cjs`` file of a directory in name order (migrate-mongo's order)."""
    path = Path(argument)
    if path.is_dir():
        return sorted(child for child in path.rglob("*") if child.is_file() and child.suffix in SCRIPT_SUFFIXES
                      and not any(part.startswith(".") for part in child.relative_to(path).parts))
    return [path]
