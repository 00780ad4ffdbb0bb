"""Query shapes: what an operation asks for, with every literal value taken out.

A shape is the namespace, the operation, the filter's fields with their operator class, the sort with its directions,
the projection, which options are present (limit, skip, multi, hint …), and for pipelines the leading
``$match``/``$sort``/``$limit`` plus the sequence of stages (``$lookup`` with its foreign collection and field,
``$group`` with its key and accumulators). Rules are:

* filter key order never matters (fields are sorted); sort key order always does;
* ``$and``/``$or``/``$nor`` keep their structure, branches sorted and de-duplicated, so an ``$or`` that an application
  builds from a list has one shape whatever the list's length;
* ``$in`` is one class whatever its length (the digest records the largest list seen);
* ``$elemMatch`` recurses, and operators beside it on the same field stay in the shape; a redacted value (``"###"``)
  is a value like any other;
* numbers may come as canonical Extended JSON (``{"$numberInt": "1"}``): they count as the numbers they spell;
* a getMore has the shape of the command that opened its cursor;
* a filter nested deeper than ``MAX_DEPTH`` has an unknown shape (nothing real nests that deep).

The canonical text is compact and readable (``find shop.orders {createdAt: range, status: eq} sort {createdAt: -1}``),
and the fingerprint is a hash of it, so it is stable across runs, server versions and log formats.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any, Union

from idxadvisor.models.events import UNKNOWN, Event
from idxadvisor.models.values import as_float, is_extended_json_value
from idxadvisor.parse.accel import speedups
from idxadvisor.parse.classify import canonical_op, command_name

# Operator classes (DESIGN.md step 3).
EQ, IN, RANGE, NE, NIN, NOT, EXISTS = "eq", "in", "range", "ne", "nin", "not", "exists"
REGEX_PREFIX, REGEX_UNANCHORED = "regex-prefix", "regex-unanchored"
ELEM_MATCH, TYPE, SIZE, ALL, MOD = "elemMatch", "type", "size", "all", "mod"
EXPR, TEXT, GEO, WHERE, BITS, OTHER = "expr", "text", "geo", "where", "bits", "other"
UNKNOWN_VALUE = "?"

_RANGE_OPERATORS = frozenset({"$gt", "$gte", "$lt", "$lte"})
_FIELD_OPERATORS = {
    "$eq": EQ, "$in": IN, "$ne": NE, "$nin": NIN, "$not": NOT, "$exists": EXISTS, "$type": TYPE, "$size": SIZE,
    "$all": ALL, "$mod": MOD, "$geoWithin": GEO, "$geoIntersects": GEO, "$near": GEO, "$nearSphere": GEO,
    "$within": GEO, "$maxDistance": GEO, "$minDistance": GEO, "$bitsAllSet": BITS, "$bitsAllClear": BITS,
    "$bitsAnySet": BITS, "$bitsAnyClear": BITS, "$jsonSchema": OTHER,
}
_TOP_LEVEL_OPERATORS = {"$expr": EXPR, "$text": TEXT, "$where": WHERE, "$jsonSchema": OTHER, "$sampleRate": OTHER,
                        "$alwaysTrue": OTHER, "$alwaysFalse": OTHER}
_LOGICAL = ("$and", "$or", "$nor")
_IGNORED_TOP_LEVEL = frozenset({"$comment"})
_BARE_NAME = re.compile(r"^[A-Za-z_][\w.\-]*$")
_LEADING_STAGES = frozenset({"$match", "$sort", "$limit", "$skip"})
_NUMBER_MARKERS = frozenset({"$numberInt", "$numberLong", "$numberDouble", "$numberDecimal"})
MAX_DEPTH = 64  # filter levels: logical operators and $elemMatch
TOO_DEEP = "nesting too deep"

# A node of a filter shape: an operator class, several classes on one field, an $elemMatch, or logical branches.
Node = Union[str, tuple[str, ...], "ElemMatch", "Branches"]
Filter = tuple[tuple[str, Node], ...]


@dataclass(frozen=True, slots=True)
class ElemMatch:
    inner: Filter | tuple[str, ...]  # a sub-filter (object elements) or operator classes (value elements)
    also: tuple[str, ...] = ()  # the classes of other operators on the same field ({$size: 3, $elemMatch: …})


@dataclass(frozen=True, slots=True)
class Branches:
    filters: tuple[Filter, ...]


@dataclass(frozen=True, slots=True)
class QueryShape:
    ns: str
    op: str
    filter: Filter = ()
    sort: tuple[tuple[str, int], ...] = ()
    projection: tuple[tuple[str, str], ...] = ()
    options: tuple[str, ...] = ()
    stages: tuple[str, ...] = ()
    unknown: str | None = None  # why the shape cannot be known (the server truncated the command …)
    text: str = ""
    fingerprint: str = ""

    @property
    def known(self) -> bool:
        return self.unknown is None

    def has_option(self, name: str) -> bool:
        return any(option == name or option.startswith(name + ":") for option in self.options)


@dataclass(frozen=True, slots=True)
class ShapeObservation:
    """What shaping one event noticed that the shape itself leaves out."""

    in_length: int = 0  # the longest $in list
    skip: int = 0  # documents skipped before the first result (find and count skip, a pipeline's leading $skip)


def point_lookup_field(shape: QueryShape) -> str | None:
    """The field of a point lookup: a find with an equality on one field (``_id`` or a reference such as
    ``orderId``) and nothing else to sort, skip or filter by; the loop of an ORM loading related documents one by one
    sends many of them. None for any other shape."""
    if shape.op != "find" or len(shape.filter) != 1 or shape.sort or shape.has_option("skip"):
        return None
    name, node = shape.filter[0]
    return name if node == EQ and not name.startswith("$") else None


# -- filters -------------------------------------------------------------------------------------------------------


class _TooDeep(Exception):
    """A filter nests deeper than MAX_DEPTH."""


class _Shaper:
    """Shapes one command; remembers the longest ``$in`` it met. ``depth`` counts filter levels on the way down."""

    def __init__(self) -> None:
        self.in_length = 0

    def filter(self, document: Any, depth: int = 0) -> Filter:
        if type(document) is not dict:
            return () if document is None else (("$", UNKNOWN_VALUE),)
        if depth > MAX_DEPTH:
            raise _TooDeep
        nodes: dict[str, Node] = {}
        for key, value in document.items():
            if key in _IGNORED_TOP_LEVEL:
                continue
            if key in _LOGICAL:
                nodes[key] = self._branches(value, depth)
            elif key.startswith("$"):
                nodes[key] = _TOP_LEVEL_OPERATORS.get(key, OTHER)
            else:
                nodes[key] = self._field(value, depth)
        return tuple(sorted(nodes.items()))

    def _branches(self, value: Any, depth: int) -> Node:
        if type(value) is not list:
            return UNKNOWN_VALUE
        shaped = {self.filter(branch, depth + 1) for branch in value}
        return Branches(tuple(sorted(shaped, key=render_filter)))

    def _field(self, value: Any, depth: int) -> Node:
        if type(value) is dict and value and not is_extended_json_value(value):
            if next(iter(value)).startswith("$"):
                return self._operators(value, depth)
            return EQ
        if type(value) is dict and "$regularExpression" in value:
            return regex_class(value)
        return EQ

    def _operators(self, value: dict[str, Any], depth: int) -> Node:
        classes: set[str] = set()
        elem_match: ElemMatch | None = None
        for operator, operand in value.items():
            if operator in _RANGE_OPERATORS:
                classes.add(RANGE)
            elif operator == "$regex":
                classes.add(regex_class(operand, value.get("$options", "")))
            elif operator == "$options":
                continue
            elif operator == "$elemMatch":
                elem_match = ElemMatch(self._elem_match(operand, depth + 1))
            elif operator == "$in":
                classes.add(IN)
                if type(operand) is list:
                    self.in_length = max(self.in_length, len(operand))
            elif operator.startswith("$"):
                classes.add(_FIELD_OPERATORS.get(operator, OTHER))
            else:
                classes.add(EQ)
        ordered = tuple(sorted(classes))
        if elem_match is not None:
            return ElemMatch(elem_match.inner, ordered) if ordered else elem_match
        return ordered[0] if len(ordered) == 1 else ordered

    def _elem_match(self, operand: Any, depth: int) -> Filter | tuple[str, ...]:
        if type(operand) is not dict:
            return (UNKNOWN_VALUE,)
        if depth > MAX_DEPTH:
            raise _TooDeep
        if operand and all(key.startswith("$") and key not in _LOGICAL for key in operand):
            node = self._operators(operand, depth)
            if isinstance(node, ElemMatch):  # arrays of arrays: the inner $elemMatch is one class of the outer
                return (render_node(node),)
            return node if isinstance(node, tuple) else (node,)  # type: ignore[return-value]
        return self.filter(operand, depth)


def regex_class(pattern: Any, options: Any = "") -> str:
    """``regex-prefix`` when the regex gives an index scan a literal prefix to seek to (``regex_prefix``)."""
    if type(pattern) is dict and "$regularExpression" in pattern:
        inner = pattern["$regularExpression"]
        pattern, options = (inner.get("pattern"), inner.get("options", "")) if type(inner) is dict else (None, "")
    if type(pattern) is not str:
        return REGEX_UNANCHORED
    return REGEX_PREFIX if regex_prefix(pattern, options if type(options) is str else "") else REGEX_UNANCHORED


_REGEX_METACHARACTERS = frozenset(b"^$.[()+{")
_REGEX_SPACES = frozenset(b" \t\n\v\f\r")
_ALPHANUMERIC = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")


@functools.lru_cache(maxsize=4096)
def regex_prefix(pattern: str, flags: str = "") -> str:
    """The literal prefix mongod's planner seeks to for this regex, or "" when there is none.

    IndexBoundsBuilder::simpleRegex, byte for byte: the regex starts with ``^`` (``m`` flag not allowed) or ``\\A``
    (``m`` allowed); no ``|`` anywhere; no flag but ``m``, ``s`` and ``x`` (so ``i`` has no prefix); the prefix runs
    up to the first metacharacter, an escape that is a letter or digit, or (``x``) a comment; ``\\Q…\\E`` and
    escaped punctuation are literal; ``*`` or ``?`` takes back the character before it (``^a*`` has none).
    """
    raw = pattern.encode("utf-8", "surrogatepass")
    if raw.startswith(b"\\A"):
        multiline_ok, raw = True, raw[2:]
    elif raw.startswith(b"^"):
        multiline_ok, raw = False, raw[1:]
    else:
        return ""
    if b"|" in raw:
        return ""
    extended = False
    for flag in flags:
        if flag == "m":
            if not multiline_ok:
                return ""
        elif flag == "x":
            extended = True
        elif flag != "s":
            return ""
    prefix = bytearray()
    position, end = 0, len(raw)
    while position < end:
        byte = raw[position]
        position += 1
        if byte == 0:
            break
        if byte in (0x2A, 0x3F):  # * and ?: the character before is optional
            del prefix[-1:]
            break
        if byte == 0x5C:  # backslash
            byte = raw[position] if position < end else 0
            position += 1
            if byte == 0x51:  # \Q … \E
                while position < end:
                    byte = raw[position]
                    position += 1
                    if byte == 0x5C and position < end and raw[position] == 0x45:
                        position += 1
                        break
                    prefix.append(byte)
            elif byte in _ALPHANUMERIC or byte == 0:
                break
            else:
                prefix.append(byte)
        elif byte in _REGEX_METACHARACTERS or (extended and byte == 0x23):  # 0x23: # starts a comment
            break
        elif extended and byte in _REGEX_SPACES:
            continue
        else:
            prefix.append(byte)
    return prefix.decode("utf-8", "replace")


# -- rendering -----------------------------------------------------------------------------------------------------


def _name(key: str) -> str:
    return key if _BARE_NAME.match(key) or key.startswith("$") else json.dumps(key, ensure_ascii=False)


def render_node(node: Node) -> str:
    if isinstance(node, str):
        return node
    if isinstance(node, tuple):
        return "+".join(node)
    if isinstance(node, ElemMatch):
        inner = node.inner
        if inner and isinstance(inner[0], str):
            rendered = f"elemMatch({'+'.join(inner)})"  # type: ignore[arg-type]
        else:
            rendered = "elemMatch" + render_filter(inner)  # type: ignore[arg-type]
        return "+".join((rendered, *node.also))
    return "[" + ", ".join(render_filter(branch) for branch in node.filters) + "]"


def render_filter(shaped: Filter) -> str:
    return "{" + ", ".join(f"{_name(key)}: {render_node(node)}" for key, node in shaped) + "}"


def _render(shape: QueryShape) -> str:
    parts = [shape.op, shape.ns]
    if shape.unknown is not None:
        parts.append(f"<{shape.unknown}>")
        return " ".join(parts)
    if shape.filter or shape.op in _FILTERING_OPS:
        parts.append(render_filter(shape.filter))
    if shape.sort:
        parts.append("sort {" + ", ".join(f"{_name(k)}: {d}" for k, d in shape.sort) + "}")
    if shape.projection:
        parts.append("projection {" + ", ".join(f"{_name(k)}: {v}" for k, v in shape.projection) + "}")
    parts.extend(shape.options)
    if shape.stages:
        parts.append("pipeline [" + ", ".join(shape.stages) + "]")
    return " ".join(parts)


Components = tuple  # (ns, op, filter, sort, projection, options, stages, unknown): a shape before its text
_FINISHED: dict[Components, QueryShape] = {}
_FINISHED_LIMIT = 100_000


def finish(components: Components) -> QueryShape:
    """The shape with its canonical text and fingerprint (memoised: a workload repeats few shapes many times)."""
    done = _FINISHED.get(components)
    if done is not None:
        return done
    draft = QueryShape(*components)
    text = _render(draft)
    fingerprint = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    done = QueryShape(*components, text, fingerprint)  # type: ignore[misc]
    if len(_FINISHED) >= _FINISHED_LIMIT:
        _FINISHED.clear()
    _FINISHED[components] = done
    return done


# -- commands ------------------------------------------------------------------------------------------------------

_FILTERING_OPS = frozenset({"find", "count", "distinct", "aggregate", "update", "delete", "findAndModify", UNKNOWN})


def _number(value: Any) -> float | None:
    """A number, plain or canonical Extended JSON (``{"$numberInt": "1"}``); None for anything else."""
    if type(value) is int or type(value) is float:
        return value
    if type(value) is dict and len(value) == 1 and next(iter(value)) in _NUMBER_MARKERS:
        return as_float(next(iter(value.values())))
    return None


def _direction(value: Any) -> int | str:
    if isinstance(value, bool):
        return 1
    if type(value) is dict and "$meta" in value:
        return f"$meta:{value['$meta']}"
    number = _number(value)
    if number is None or number != number:
        return UNKNOWN_VALUE
    return -1 if number < 0 else 1


def shape_sort(sort: Any) -> tuple[tuple[str, int], ...]:
    if type(sort) is not dict:
        return ()
    return tuple((key, _direction(value)) for key, value in sort.items())  # type: ignore[misc]


def shape_projection(projection: Any) -> tuple[tuple[str, str], ...]:
    if type(projection) is not dict:
        return ()
    shaped = []
    for key, value in projection.items():
        number = 1 if value is True else 0 if value is False else _number(value)
        kind = "expr" if number is None else "0" if number == 0 else "1"
        shaped.append((key, kind))
    return tuple(sorted(shaped))


def _present(command: dict[str, Any], key: str) -> bool:
    """An option is there when it is set to something other than 0/false (``{"$numberInt": "0"}`` is 0 too)."""
    value = command.get(key)
    if value is None or value is False:
        return False
    number = _number(value)
    return number != 0 if number is not None else True


def _hint(command: dict[str, Any]) -> list[str]:
    hint = command.get("hint")
    if type(hint) is dict and hint:
        return ["hint:" + ",".join(f"{k}:{_direction(v)}" for k, v in hint.items())]
    if type(hint) is str and hint:
        return [f"hint:{hint}"]
    return []


def _common_options(command: dict[str, Any]) -> tuple[str, ...]:
    options = [name for name in ("limit", "skip") if _present(command, name)]
    if "hint" in command:
        options += _hint(command)
    if type(command.get("collation")) is dict:
        options.append("collation")
    return tuple(options)


_NO_OBSERVATION = ShapeObservation()


def shape_of(event: Event) -> tuple[QueryShape, ShapeObservation]:
    """The shape of one event (an unknown shape when the server truncated or the parser could not read it)."""
    op, ns, command = event.op, event.ns, event.command
    if event.truncated or event.unparsed:
        reason = "command truncated by the server" if event.truncated else "command could not be read"
        return finish((ns, op, (), (), (), (), (), reason)), _NO_OBSERVATION
    if op == "getMore":
        origin = event.originating_command
        if origin is None:
            return finish((ns, op, (), (), (), (), (), "originating command not logged")), _NO_OBSERVATION
        op, command = canonical_op(command_name(origin) or ""), origin
    compiled = _shape_command_compiled(ns, op, command) if _shape_command_compiled is not None and \
        type(command) is dict else None
    if compiled is not None:  # the C extension shaped it (it returns None for what it leaves to Python)
        components, in_length, skip = compiled
    else:
        shaper = _Shaper()
        try:
            components = _shape_command(shaper, ns, op, command if type(command) is dict else {})
        except _TooDeep:
            return finish((ns, op, (), (), (), (), (), TOO_DEEP)), _NO_OBSERVATION
        in_length = shaper.in_length
        skip = _skip_of(op, command) if type(command) is dict else 0
    observation = ShapeObservation(in_length, skip) if in_length or skip else _NO_OBSERVATION
    return finish(components), observation


# getattr: an in-place build older than this module lacks shape_command (shapes are then made in Python)
_shape_command_compiled = getattr(speedups, "shape_command", None)


def shape_of_shared(event: Event) -> tuple[QueryShape, ShapeObservation]:
    """``shape_of(event)``, worked out once for all the events that share a ``ShapeSlot`` (those of one text-log
    body: they share every input of the shape)."""
    slot = event.shape_slot
    if slot is None:
        return shape_of(event)
    shaped = slot.shaped
    if shaped is None:
        shaped = slot.shaped = shape_of(event)
    return shaped  # type: ignore[no-any-return]


def _skip_of(op: str, command: dict[str, Any]) -> int:
    """How many documents the command skips: ``skip`` of a find or count, the first ``$skip`` of a pipeline."""
    if op == "find" or op == "count":
        value = command.get("skip")
    elif op == "aggregate" and type(command.get("pipeline")) is list:
        value = next((stage["$skip"] for stage in command["pipeline"] if type(stage) is dict and "$skip" in stage),
                     None)
    else:
        return 0
    number = _number(value) if value is not None else None
    return int(number) if number is not None and 0 < number < 1e18 else 0


def _shape_command(shaper: _Shaper, ns: str, op: str, command: dict[str, Any]) -> Components:
    if op == "find":
        return (ns, op, shaper.filter(command.get("filter", {})), shape_sort(command.get("sort")),
                shape_projection(command.get("projection")), _common_options(command), (), None)
    if op == "count":
        return (ns, op, shaper.filter(command.get("query", {})), (), (), _common_options(command), (), None)
    if op == "distinct":
        key = command.get("key")
        options = (f"key:{key}" if type(key) is str else "key:?", *_hint(command))
        return (ns, op, shaper.filter(command.get("query", {})), (), (), options, (), None)
    if op == "aggregate":
        return _shape_pipeline(shaper, ns, command.get("pipeline"))
    if op == "findAndModify":
        options = ["remove" if command.get("remove") else "update"]
        options += [name for name in ("upsert", "new") if _present(command, name)]
        options += _hint(command)
        return (ns, op, shaper.filter(command.get("query", {})), shape_sort(command.get("sort")),
                shape_projection(command.get("fields")), tuple(options), (), None)
    if op == "update" or op == "delete":
        return _shape_write(shaper, ns, op, command)
    if op == UNKNOWN:  # explain output that does not say which command it explains: its filter is still known
        return (ns, op, shaper.filter(command.get("filter", {})), (), (), (), (), None)
    return (ns, op, (), (), (), (), (), None)


def _shape_write(shaper: _Shaper, ns: str, op: str, command: dict[str, Any]) -> Components:
    statement = command
    if "q" not in command:  # a command entry with no statement logged before it
        listed = command.get("updates" if op == "update" else "deletes")
        if type(listed) is not list or len(listed) != 1 or type(listed[0]) is not dict:
            return (ns, op, (), (), (), (), (), "statements not logged")
        statement = listed[0]
    options: list[str] = []
    if op == "update":
        options += [name for name in ("multi", "upsert") if _present(statement, name)]
        update = statement.get("u")
        if type(update) is list:
            options.append("pipeline-update")
        elif type(update) is dict and update and not next(iter(update)).startswith("$"):
            options.append("replacement")
    elif _number(statement.get("limit")) == 1:
        options.append("one")
    options += _hint(statement)
    if type(statement.get("collation")) is dict:
        options.append("collation")
    return (ns, op, shaper.filter(statement.get("q", {})), (), (), tuple(options), (), None)


def _shape_pipeline(shaper: _Shaper, ns: str, pipeline: Any) -> Components:
    if type(pipeline) is not list:
        return (ns, "aggregate", (), (), (), (), (), "pipeline not logged")
    matches: list[Any] = []
    sort: tuple[tuple[str, int], ...] = ()
    options: list[str] = []
    leading = True
    filtering = True  # a $match or $sort after a $limit or $skip filters or sorts only what those let through
    stages = []
    for stage in pipeline:
        name = command_name(stage) or "?"
        body = stage.get(name) if type(stage) is dict else None
        leading = leading and name in _LEADING_STAGES
        if leading and name in ("$limit", "$skip"):
            options.append(name[1:])
            filtering = False
        elif leading and filtering and name == "$match":
            matches.append(body)
        elif leading and filtering and name == "$sort" and not sort:
            sort = shape_sort(body)
        stages.append(_stage_summary(shaper, name, body))
    combined = matches[0] if len(matches) == 1 else ({"$and": matches} if matches else {})
    return (ns, "aggregate", shaper.filter(combined), sort, (), tuple(dict.fromkeys(options)), tuple(stages), None)


def _field_path(value: Any, depth: int = 0) -> str:
    if type(value) is str and value.startswith("$"):
        return value
    if type(value) is dict:
        if depth > MAX_DEPTH:
            raise _TooDeep
        return "{" + ", ".join(f"{_name(k)}: {_field_path(v, depth + 1)}" for k, v in value.items()) + "}"
    return "const"


def _stage_summary(shaper: _Shaper, name: str, body: Any) -> str:
    if name == "$group" and type(body) is dict:
        accumulators = sorted({_accumulator(value) for key, value in body.items() if key != "_id"})
        return f"$group(_id={_field_path(body.get('_id'))}; {', '.join(accumulators)})"
    if name == "$lookup" and type(body) is dict:
        parts = [f"from={body.get('from')}"]
        for key in ("localField", "foreignField"):
            if type(body.get(key)) is str:
                parts.append(f"{key}={body[key]}")
        if "pipeline" in body:
            parts.append("pipeline")
        return f"$lookup({', '.join(parts)})"
    if name == "$unwind":
        path = body.get("path") if type(body) is dict else body
        return f"$unwind({path if type(path) is str else '?'})"
    if name == "$sort":
        return "$sort{" + ", ".join(f"{_name(k)}: {d}" for k, d in shape_sort(body)) + "}"
    if name == "$match":
        return "$match"
    return name


def _accumulator(value: Any) -> str:
    if type(value) is not dict or not value:
        return "?"
    operator, operand = next(iter(value.items()))
    if operator == "$sum" and not isinstance(operand, bool) and _number(operand) is not None:
        return "count"
    if type(operand) is str and operand.startswith("$"):
        return f"{operator}({operand})"
    return operator
