"""The query as the planner sees it: a normalized predicate tree, the sort and the projection.

Follows the canonicalisation the planner relies on (planner-semantics.md §3 and §5): a top-level ``$and``
is flattened, ``{f: {$gte: 1, $lte: 2}}`` becomes one predicate per operator, an ``$or`` of equalities on
one path becomes an ``$in``, ``$gte/$lte: null`` are equalities to null, ``$exists: false`` and ``$not``
are negations. Anything outside the modelled language raises :class:`Unsupported` with a reason.

The same tree is turned back into a filter for mongomock's matcher (:func:`matcher_filter`), with one
operator per clause: mongomock evaluates all operators of one dotted path against each array element
together, MongoDB evaluates them independently.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bson import Code, Decimal128, MaxKey, MinKey, Regex

from idxadvisor.whatif.bsonorder import UNDEFINED, UnsupportedValue, sort_key
from idxadvisor.whatif.bsontypes import TypeSetError, parse_type_set


class Unsupported(Exception):
    """The query or data is outside what the model reproduces; the message says why."""


NEGATABLE = frozenset({"eq", "gt", "gte", "lt", "lte", "in"})
_UNSUPPORTED_OPERATORS = {
    "$where": "$where (server-side JavaScript)",
    "$expr": "$expr (aggregation expressions)",
    "$text": "$text (text search)",
    "$jsonSchema": "$jsonSchema",
    "$nor": "$nor",
    "$near": "geo operators",
    "$nearSphere": "geo operators",
    "$geoWithin": "geo operators",
    "$geoIntersects": "geo operators",
    "$within": "geo operators",
    "$size": "$size (mongomock matches scalars with $size: 1)",
    "$all": "$all",
    "$mod": "$mod (not implemented by mongomock)",
    "$bitsAllSet": "bitwise operators",
    "$bitsAllClear": "bitwise operators",
    "$bitsAnySet": "bitwise operators",
    "$bitsAnyClear": "bitwise operators",
    "$sampleRate": "$sampleRate",
}


@dataclass(frozen=True)
class RegexSpec:
    """A regular expression as MongoDB stores it (PCRE text and flag letters) and its Python translation."""

    pattern: str
    flags: str
    compiled: re.Pattern[str]

@dataclass(eq=False)
class ElemMatchContext:
    """One ``$elemMatch``: predicates under the same one may intersect/compound on a multikey path (§3)."""

    path: str
    is_value: bool


@dataclass(eq=False)
class Leaf:
    """One predicate on one path: ``op`` is eq, gt, gte, lt, lte, in, ne, nin, exists, regex, type (a
    :class:`~idxadvisor.whatif.bsontypes.TypeSet`) or not."""

    path: str
    op: str
    value: Any
    context: ElemMatchContext | None = None
    origin: str = ""   # the operator as written when it differs from ``op`` ($gte/$lte: null are equalities)

    @property
    def negated(self) -> tuple[str, Any]:
        """For ``op == "not"``: the operator and operand being negated."""
        return self.value


@dataclass(eq=False)
class ElemMatchValue:
    """``{path: {$elemMatch: {$gte: 1, $lt: 5}}}``: the children constrain one array element."""

    path: str
    children: list[Leaf]
    context: ElemMatchContext


@dataclass(eq=False)
class ElemMatchObject:
    """``{path: {$elemMatch: {x: .., y: ..}}}``: leaves carry full paths (``path.x``)."""

    path: str
    children: list[Leaf]
    context: ElemMatchContext
    raw: Mapping[str, Any]


@dataclass(eq=False)
class OrNode:
    branches: list[list[Node]]


Node = Leaf | ElemMatchValue | ElemMatchObject | OrNode


@dataclass
class Projection:
    """An inclusion or exclusion projection of plain 0/1 values."""

    inclusion: bool
    fields: tuple[str, ...]
    id_included: bool

    @property
    def required_fields(self) -> tuple[str, ...]:
        fields = tuple(f for f in self.fields if f != "_id")
        return (("_id",) if self.id_included else ()) + fields

    @property
    def is_simple(self) -> bool:
        """``projection_ast::Projection::isSimple``: top-level fields only."""
        return all("." not in f for f in self.fields)


@dataclass
class ParsedQuery:
    conjuncts: list[Node]
    sort: tuple[tuple[str, int], ...]
    projection: Projection | None
    paths: set[str] = field(default_factory=set)

    @property
    def is_empty(self) -> bool:
        return not self.conjuncts


# --- regular expressions ---

_QE = re.compile(r"\\Q(.*?)(?:\\E|$)", re.DOTALL)
_PCRE_ONLY = re.compile(r"\\[pPhHvVRKGXCNoxu]|\(\?R|\(\?\d|\(\?&|\(\?P>|\(\*")
_CLASS_ESCAPES = re.compile(r"\\[dDwWsSbB]")


def compile_regex(pattern: str, flags: str) -> RegexSpec:
    """Translate a PCRE pattern to Python's ``re`` where the two agree, else raise :class:`Unsupported`."""
    unknown = set(flags) - set("imsxu")
    if unknown:
        raise Unsupported(f"regex flags {''.join(sorted(unknown))!r} are not modelled")
    translated = _QE.sub(lambda m: re.escape(m.group(1)), pattern)
    if _PCRE_ONLY.search(translated):
        raise Unsupported(f"regex /{pattern}/ uses PCRE syntax Python's re does not share")
    translated = translated.replace("\\z", "\\Z") if "\\Z" not in translated else translated
    if "\\Z" in pattern:
        raise Unsupported(f"regex /{pattern}/ uses \\Z, whose PCRE meaning differs")
    py_flags = 0
    for letter, bit in (("i", re.IGNORECASE), ("m", re.MULTILINE), ("s", re.DOTALL), ("x", re.VERBOSE)):
        if letter in flags:
            py_flags |= bit
    if _CLASS_ESCAPES.search(translated):
        if "i" in flags:
            raise Unsupported(f"regex /{pattern}/i mixes character classes and case folding")
        py_flags |= re.ASCII
    try:
        compiled = re.compile(translated, py_flags)
    except re.error as exc:
        raise Unsupported(f"regex /{pattern}/ does not compile in Python: {exc}") from None
    return RegexSpec(pattern, "".join(sorted(flags)), compiled)


def _regex_from_value(value: Any, options: Any = None) -> RegexSpec:
    if isinstance(value, Regex):
        flags = value.flags if isinstance(value.flags, str) else _flag_letters(value.flags)
        return compile_regex(value.pattern, flags + (options or ""))
    if isinstance(value, re.Pattern):
        return compile_regex(value.pattern, _flag_letters(value.flags) + (options or ""))
    if isinstance(value, str):
        if options is not None and not isinstance(options, str):
            raise Unsupported("$options must be a string")
        return compile_regex(value, options or "")
    raise Unsupported("$regex needs a string or a regular expression")


def _flag_letters(bits: int) -> str:
    letters = ""
    for letter, bit in (("i", re.IGNORECASE), ("m", re.MULTILINE), ("s", re.DOTALL), ("x", re.VERBOSE)):
        if bits & bit:
            letters += letter
    return letters


# --- filter parsing ---


def parse_query(filter_doc: Mapping[str, Any], sort: Mapping[str, Any] | None,
                projection: Mapping[str, Any] | None, version: tuple[int, int] = (8, 0)) -> ParsedQuery:
    conjuncts = _parse_conjunction(filter_doc, prefix="", context=None)
    conjuncts = _normalize_conjunction(conjuncts, tuple(version))
    parsed = ParsedQuery(conjuncts, _parse_sort(sort), _parse_projection(projection))
    parsed.paths = collect_paths(parsed.conjuncts)
    return parsed


def _parse_conjunction(doc: Mapping[str, Any], prefix: str, context: ElemMatchContext | None) -> list[Node]:
    if not isinstance(doc, Mapping):
        raise Unsupported("a filter must be a document")
    nodes: list[Node] = []
    for key, value in doc.items():
        if not isinstance(key, str):
            raise Unsupported("field names must be strings")
        if key == "$comment":
            continue
        if key == "$and":
            for child in _logical_children(key, value):
                nodes.extend(_parse_conjunction(child, prefix, context))
            continue
        if key == "$or":
            if context is not None:
                raise Unsupported("$or inside $elemMatch is not modelled")
            branches = [_parse_conjunction(child, prefix, context) for child in _logical_children(key, value)]
            nodes.append(OrNode(branches))
            continue
        if key.startswith("$"):
            raise Unsupported(_UNSUPPORTED_OPERATORS.get(key, f"top-level operator {key}"))
        nodes.extend(_parse_field(prefix + key, value, context))
    return nodes


def _logical_children(key: str, value: Any) -> list[Mapping[str, Any]]:
    if not isinstance(value, (list, tuple)) or not value:
        raise Unsupported(f"{key} needs a non-empty array")
    if not all(isinstance(child, Mapping) for child in value):
        raise Unsupported(f"{key} entries must be documents")
    return list(value)


def is_positional(path: str) -> bool:
    """Whether a path has a numeric component (``a.0.b``): an array position or a field name, whichever exists."""
    return any(part.isdigit() for part in path.split("."))


def _check_path(path: str, positional_ok: bool = False) -> None:
    parts = path.split(".")
    if any(not part for part in parts):
        raise Unsupported(f"path {path!r} has an empty component")
    if not positional_ok and is_positional(path):
        raise Unsupported(f"positional path {path!r} (numeric component) in a sort or projection is not modelled")
    if any(part.startswith("$") for part in parts):
        raise Unsupported(f"path {path!r} is not a plain field path")


def _is_operator_doc(value: Any) -> bool:
    return isinstance(value, Mapping) and bool(value) and all(
        isinstance(k, str) and k.startswith("$") for k in value)


def _parse_field(path: str, value: Any, context: ElemMatchContext | None) -> list[Node]:
    _check_path(path, positional_ok=True)
    if isinstance(value, Mapping) and any(isinstance(k, str) and k.startswith("$") for k in value):
        if not _is_operator_doc(value):
            raise Unsupported(f"{path}: a document mixing operators and fields is not a valid filter")
        return _parse_operators(path, value, context)
    if isinstance(value, (Regex, re.Pattern)):
        return [Leaf(path, "regex", _regex_from_value(value), context)]
    return [Leaf(path, "eq", _check_operand(path, value), context)]


def _parse_operators(path: str, ops: Mapping[str, Any], context: ElemMatchContext | None) -> list[Node]:
    nodes: list[Node] = []
    options = ops.get("$options")
    if options is not None and "$regex" not in ops:
        raise Unsupported("$options without $regex")
    for op, operand in ops.items():
        if op == "$options":
            continue
        if op in _UNSUPPORTED_OPERATORS:
            raise Unsupported(_UNSUPPORTED_OPERATORS[op])
        if op == "$eq":
            if isinstance(operand, (Regex, re.Pattern)):
                raise Unsupported("$eq with a regular expression operand")
            nodes.append(Leaf(path, "eq", _check_operand(path, operand), context))
        elif op in ("$gt", "$gte", "$lt", "$lte"):
            nodes.append(_comparison(path, op[1:], operand, context))
        elif op == "$in":
            nodes.append(_in_leaf(path, _in_list(path, operand), context))
        elif op == "$nin":
            values = _in_list(path, operand)
            if any(isinstance(v, RegexSpec) for v in values):
                raise Unsupported("$nin with regular expressions")
            nodes.append(Leaf(path, "nin", values, context))
        elif op == "$ne":
            if isinstance(operand, (Regex, re.Pattern)):
                raise Unsupported("$ne with a regular expression operand")
            nodes.append(Leaf(path, "ne", _check_operand(path, operand), context))
        elif op == "$exists":
            nodes.append(Leaf(path, "exists", bool(operand), context))
        elif op == "$type":
            try:
                nodes.append(Leaf(path, "type", parse_type_set(operand), context))
            except TypeSetError as exc:
                raise Unsupported(f"$type: {exc}") from None
        elif op == "$regex":
            nodes.append(Leaf(path, "regex", _regex_from_value(operand, options), context))
        elif op == "$not":
            nodes.append(_parse_not(path, operand, context))
        elif op == "$elemMatch":
            nodes.append(_parse_elem_match(path, operand, context))
        else:
            raise Unsupported(f"query operator {op}")
    return nodes


def _comparison(path: str, op: str, operand: Any, context: ElemMatchContext | None) -> Leaf:
    if isinstance(operand, (MinKey, MaxKey)):
        raise Unsupported("comparisons with MinKey/MaxKey (mongomock cannot order them)")
    if isinstance(operand, (Regex, re.Pattern)):
        raise Unsupported(f"${op} with a regular expression operand")
    if isinstance(operand, Mapping) and any(isinstance(v, (list, tuple, Mapping)) for v in operand.values()):
        raise Unsupported(f"${op} with a document operand holding arrays or documents")
    if isinstance(operand, (list, tuple)) and any(isinstance(v, (list, tuple, Mapping)) for v in operand):
        raise Unsupported(f"${op} with an array operand holding arrays or documents")
    operand = _check_operand(path, operand)
    if operand is None:
        # Type bracketing: $gte/$lte null are equalities to null; $gt/$lt null match nothing.
        if op in ("gte", "lte"):
            return Leaf(path, "eq", None, context, origin=op)
        return Leaf(path, op, None, context)
    return Leaf(path, op, operand, context)


def _in_list(path: str, operand: Any) -> list[Any]:
    if not isinstance(operand, (list, tuple)):
        raise Unsupported("$in/$nin need an array")
    values: list[Any] = []
    for item in operand:
        if isinstance(item, (Regex, re.Pattern)):
            values.append(_regex_from_value(item))
        elif isinstance(item, Mapping) and _is_operator_doc(item):
            raise Unsupported("$in cannot contain operator documents")
        elif isinstance(item, (list, tuple)):
            values.append(_check_operand(path, list(item)))  # the matcher compares whole arrays (matching.py)
        else:
            values.append(_check_operand(path, item))
    return values


def _parse_not(path: str, operand: Any, context: ElemMatchContext | None) -> Leaf:
    if isinstance(operand, (Regex, re.Pattern)):
        return Leaf(path, "not_regex", _regex_from_value(operand), context)
    if not _is_operator_doc(operand) or len(operand) != 1:
        raise Unsupported("$not is modelled only around one comparison, $eq or $in")
    (inner_op, inner_value), = operand.items()
    inner = inner_op[1:]
    if inner == "regex":
        return Leaf(path, "not_regex", _regex_from_value(inner_value), context)
    if inner not in NEGATABLE:
        raise Unsupported(f"$not around {inner_op}")
    if inner == "in":
        values = _in_list(path, inner_value)
        if any(isinstance(v, RegexSpec) for v in values):
            raise Unsupported("$not around $in with regular expressions")
        return Leaf(path, "not", ("in", values), context)
    if isinstance(inner_value, (list, tuple, Mapping, Regex, re.Pattern, MinKey, MaxKey)):
        raise Unsupported(f"$not around {inner_op} with this operand")
    value = _check_operand(path, inner_value)
    origin = ""
    if value is None and inner in ("gte", "lte"):
        inner, origin = "eq", inner
    return Leaf(path, "not", (inner, value), context, origin=origin)


def _parse_elem_match(path: str, operand: Any, context: ElemMatchContext | None) -> Node:
    if context is not None:
        raise Unsupported("nested $elemMatch is not modelled")
    if not isinstance(operand, Mapping) or not operand:
        raise Unsupported("$elemMatch needs a non-empty document")
    keys = [k for k in operand if k != "$comment"]
    value_form = all(isinstance(k, str) and k.startswith("$") and k not in ("$and", "$or", "$nor") for k in keys)
    if value_form:
        ctx = ElemMatchContext(path, is_value=True)
        children = _parse_operators(path, operand, ctx)
        leaves = [c for c in children if isinstance(c, Leaf)]
        if len(leaves) != len(children):
            raise Unsupported("$elemMatch inside a value $elemMatch")
        for leaf in leaves:
            if leaf.op not in ("eq", "ne", "gt", "gte", "lt", "lte", "in", "exists", "regex"):
                raise Unsupported(f"${leaf.op} inside a value $elemMatch")
        return ElemMatchValue(path, leaves, ctx)
    ctx = ElemMatchContext(path, is_value=False)
    children = _parse_conjunction(operand, prefix=path + ".", context=ctx)
    leaves = []
    for child in children:
        if not isinstance(child, Leaf):
            raise Unsupported("$elemMatch containing $or or nested $elemMatch")
        leaves.append(child)
    return ElemMatchObject(path, leaves, ctx, operand)


def _check_operand(path: str, value: Any) -> Any:
    """Reject operands whose meaning differs between mongomock and MongoDB."""
    if isinstance(value, Decimal128):
        raise Unsupported("Decimal128 operands (mongomock compares them by type, MongoDB numerically)")
    if isinstance(value, float) and value != value:
        raise Unsupported("NaN operands")
    if isinstance(value, (MinKey, MaxKey)):
        raise Unsupported("MinKey/MaxKey operands")
    if value is UNDEFINED:
        raise Unsupported("undefined operands")
    if isinstance(value, Code):
        raise Unsupported("JavaScript code operands (mongomock compares them as strings)")
    if isinstance(value, Mapping):
        for item in value.values():
            _check_operand(path, item)
    if isinstance(value, (list, tuple)):
        for item in value:
            if isinstance(item, (list, tuple)):
                raise Unsupported(f"{path}: nested array operands are not modelled")
            _check_operand(path, item)
        value = list(value)
    try:
        sort_key(value)
    except UnsupportedValue as exc:
        raise Unsupported(str(exc)) from None
    return value


def _in_leaf(path: str, values: list[Any], context: ElemMatchContext | None) -> Leaf:
    """``InMatchExpression::getOptimizer``: one regex alone is a regex match, one distinct value an equality."""
    if not values:
        raise Unsupported("$in with an empty list (mongod optimizes it to $alwaysFalse)")
    regexes = [v for v in values if isinstance(v, RegexSpec)]
    distinct: dict[Any, Any] = {}
    for v in values:
        if not isinstance(v, RegexSpec):
            distinct.setdefault(sort_key(v), v)
    if len(regexes) == 1 and not distinct:
        return Leaf(path, "regex", regexes[0], context)
    if len(distinct) == 1 and not regexes:
        return Leaf(path, "eq", next(iter(distinct.values())), context)
    return Leaf(path, "in", values, context)


# --- $or normalization (ListOfMatchExpression::getOptimizer, then sortTree) ---


def _normalize_conjunction(nodes: list[Node], version: tuple[int, int]) -> list[Node]:
    """Normalize every ``$or`` of a conjunction; an ``$or`` reduced to one branch is spliced in, one that is
    trivially true disappears."""
    out: list[Node] = []
    for node in nodes:
        if not isinstance(node, OrNode):
            out.append(node)
            continue
        result = _normalize_or(node, version)
        if result is None:
            continue  # an $or with an empty (always true) branch is always true
        if isinstance(result, OrNode):
            out.append(result)
        else:
            out.extend(result)
    return out


def _normalize_or(node: OrNode, version: tuple[int, int]) -> OrNode | list[Node] | None:
    """One ``$or`` as mongod optimizes it: branches normalized first, nested ``$or`` branches absorbed, the
    equalities and regexes on one path rewritten to ``$in`` (8.0: every path with two or more of them; before
    8.0: only the path of the first one, or_to_in.js), then the branches sorted as ``sortTree`` does.
    Returns the ``$or``, the nodes of its only remaining branch, or ``None`` when it is always true."""
    kept: list[list[Node]] = []
    absorbed: list[list[Node]] = []
    for branch in node.branches:
        branch = _normalize_conjunction(branch, version)
        if not branch:
            return None
        if len(branch) == 1 and isinstance(branch[0], OrNode):
            absorbed.extend(branch[0].branches)
        else:
            kept.append(branch)
    branches = kept + absorbed
    if len(branches) > 1:
        branches = _or_to_in(branches, version)
    if len(branches) == 1:
        return branches[0]
    return OrNode(sorted(branches, key=_branch_sort_key))


def _in_eligible(branch: list[Node]) -> Leaf | None:
    """A branch that is one equality (not to a regex) or one regex: it may join an ``$in``."""
    if len(branch) != 1 or not isinstance(branch[0], Leaf):
        return None
    leaf = branch[0]
    if leaf.context is not None or leaf.origin:
        return None
    return leaf if leaf.op in ("eq", "regex") else None


def _or_to_in(branches: list[list[Node]], version: tuple[int, int]) -> list[list[Node]]:
    groups: dict[str, list[Leaf]] = {}
    for branch in branches:
        leaf = _in_eligible(branch)
        if leaf is not None:
            groups.setdefault(leaf.path, []).append(leaf)
    if version < (8, 0):
        # One group only: the path of the first eligible branch; the other branches stay as they are.
        first = next((leaf.path for b in branches if (leaf := _in_eligible(b)) is not None), None)
        groups = {first: groups[first]} if first is not None else {}
    groups = {path: leaves for path, leaves in groups.items() if len(leaves) > 1}
    if not groups:
        return branches
    merged = {id(leaf) for leaves in groups.values() for leaf in leaves}
    rest = [b for b in branches if not (len(b) == 1 and id(b[0]) in merged)]
    if version < (8, 0) and len(rest) > 1:
        raise Unsupported("an $or whose rewrite to $in leaves a nested $or (before 8.0) is not modelled")
    ins: list[list[Node]] = []
    for path, leaves in groups.items():
        values: list[Any] = []
        for leaf in leaves:
            values.append(leaf.value)  # equalities to arrays become $in entries the matcher compares whole
        in_leaf = Leaf(path, "in", values)
        if not rest and len(groups) == 1:
            in_leaf = _in_leaf(path, values, None)  # {$or: [{a: 1}, {a: 1}]} is {a: 1}
        ins.append([in_leaf])
    return ins + rest


# MatchExpression::MatchType order (matchExpressionComparator compares the type first)
_MATCH_TYPE = {"AND": 0, "OR": 1, "ELEM_MATCH_OBJECT": 2, "ELEM_MATCH_VALUE": 3, "EQ": 5, "LTE": 6, "LT": 7,
               "GT": 8, "GTE": 9, "REGEX": 10, "EXISTS": 12, "MATCH_IN": 13, "NOT": 19}
_LEAF_TYPE = {"eq": "EQ", "lte": "LTE", "lt": "LT", "gt": "GT", "gte": "GTE", "regex": "REGEX", "in": "MATCH_IN",
              "type": "TYPE_OPERATOR"}


def _expression_key(kind: str, path: str, children: Sequence[Any] = ()) -> tuple[Any, ...]:
    """``matchExpressionComparator``: type, then path, then the children in order, then their number."""
    return (_MATCH_TYPE[kind], path, tuple(children))


def _leaf_key(leaf: Leaf, path: str) -> tuple[Any, ...]:
    op = leaf.op
    if op == "eq" and leaf.origin:
        return _expression_key(leaf.origin.upper(), path)
    if op in _LEAF_TYPE:
        return _expression_key(_LEAF_TYPE[op], path)
    if op == "exists":
        inner = _expression_key("EXISTS", path)
        return inner if leaf.value else _expression_key("NOT", "", [inner])
    if op == "ne":
        return _expression_key("NOT", "", [_expression_key("EQ", path)])
    if op == "nin":
        return _expression_key("NOT", "", [_expression_key("MATCH_IN", path)])
    if op == "not_regex":
        return _expression_key("NOT", "", [_expression_key("REGEX", path)])
    if op == "not":
        inner_op, _ = leaf.negated
        kind = leaf.origin.upper() if leaf.origin else _LEAF_TYPE[inner_op]
        return _expression_key("NOT", "", [_expression_key(kind, path)])
    raise Unsupported(f"ordering the $or branch predicate {op!r} is not modelled")


def _node_key(node: Node) -> tuple[Any, ...]:
    if isinstance(node, Leaf):
        return _leaf_key(node, node.path)
    if isinstance(node, ElemMatchValue):
        return _expression_key("ELEM_MATCH_VALUE", node.path, sorted(_leaf_key(c, "") for c in node.children))
    if isinstance(node, ElemMatchObject):
        prefix = len(node.path) + 1
        inner = sorted(_leaf_key(c, c.path[prefix:]) for c in node.children)
        sub = inner[0] if len(inner) == 1 else _expression_key("AND", "", inner)
        return _expression_key("ELEM_MATCH_OBJECT", node.path, [sub])
    return _expression_key("OR", "", [_branch_sort_key(b) for b in node.branches])


def _branch_sort_key(branch: list[Node]) -> tuple[Any, ...]:
    if len(branch) == 1:
        return _node_key(branch[0])
    return _expression_key("AND", "", sorted(_node_key(n) for n in branch))


def collect_paths(nodes: Sequence[Node]) -> set[str]:
    paths: set[str] = set()
    for node in nodes:
        if isinstance(node, Leaf):
            paths.add(node.path)
        elif isinstance(node, (ElemMatchValue, ElemMatchObject)):
            paths.add(node.path)
            paths.update(child.path for child in node.children)
        elif isinstance(node, OrNode):
            for branch in node.branches:
                paths.update(collect_paths(branch))
    return paths


def iter_leaves(nodes: Sequence[Node]) -> list[Leaf]:
    leaves: list[Leaf] = []
    for node in nodes:
        if isinstance(node, Leaf):
            leaves.append(node)
        elif isinstance(node, (ElemMatchValue, ElemMatchObject)):
            leaves.extend(node.children)
        elif isinstance(node, OrNode):
            for branch in node.branches:
                leaves.extend(iter_leaves(branch))
    return leaves


# --- sort and projection ---


def _parse_sort(sort: Mapping[str, Any] | None) -> tuple[tuple[str, int], ...]:
    if not sort:
        return ()
    if not isinstance(sort, Mapping):
        raise Unsupported("sort must be a document")
    out = []
    for name, direction in sort.items():
        if not isinstance(name, str) or name.startswith("$"):
            raise Unsupported(f"sort on {name!r} ($natural and metadata sorts are not modelled)")
        _check_path(name)
        if isinstance(direction, bool) or not isinstance(direction, (int, float)) or direction not in (1, -1):
            raise Unsupported(f"sort direction {direction!r} for {name} ($meta sorts are not modelled)")
        out.append((name, int(direction)))
    return tuple(out)


def _parse_projection(projection: Mapping[str, Any] | None) -> Projection | None:
    if not projection:
        return None
    if not isinstance(projection, Mapping):
        raise Unsupported("projection must be a document")
    included: list[str] = []
    excluded: list[str] = []
    id_value: bool | None = None
    for name, value in projection.items():
        if not isinstance(name, str) or "$" in name:
            raise Unsupported(f"projection of {name!r} (positional, $slice, $elemMatch, $meta) is not modelled")
        if isinstance(value, bool) or (isinstance(value, (int, float)) and value in (0, 1)):
            flag = bool(value)
        else:
            raise Unsupported(f"computed projection for {name!r} is not modelled")
        _check_path(name)
        if name == "_id":
            id_value = flag
            continue
        (included if flag else excluded).append(name)
    if included and excluded:
        raise Unsupported("a projection cannot mix inclusion and exclusion")
    if excluded or (not included and id_value is False):
        return Projection(inclusion=False, fields=tuple(excluded) + (("_id",) if id_value is False else ()),
                          id_included=id_value is not False)
    id_included = id_value is not False
    return Projection(inclusion=True, fields=(("_id",) if id_included else ()) + tuple(included),
                      id_included=id_included)


# --- mongomock filter ---


def matcher_filter(nodes: Sequence[Node], mergeable: Callable[[str], bool] | None = None) -> dict[str, Any]:
    """The filter mongomock should evaluate.

    mongomock evaluates all operators given for one dotted path against each array element together,
    while MongoDB evaluates them independently, so by default every operator is its own ``$and``
    clause. ``mergeable(path)`` says a path holds no array before its last component; operators on such
    paths are merged into one document (faster to evaluate, same meaning).
    """
    clauses = list(itertools.chain.from_iterable(_matcher_clauses(node) for node in nodes))
    if not clauses:
        return {}
    merged: dict[str, Any] = {}
    rest: list[dict[str, Any]] = []
    for clause in clauses:
        ((path, condition),) = clause.items()
        if path.startswith("$"):
            rest.append(clause)
            continue
        if path not in merged:
            merged[path] = condition
            continue
        combined = _merge_conditions(merged[path], condition) if mergeable and mergeable(path) else None
        if combined is None:
            rest.append(clause)
        else:
            merged[path] = combined
    if rest:
        if len(merged) + len(rest) == 1:
            return rest[0]
        merged["$and"] = rest
    return merged


def _merge_conditions(left: Any, right: Any) -> dict[str, Any] | None:
    ops = []
    for condition in (left, right):
        if isinstance(condition, Mapping) and condition and all(str(k).startswith("$") for k in condition):
            ops.append(dict(condition))
        elif isinstance(condition, re.Pattern):
            ops.append({"$regex": condition})
        elif not isinstance(condition, (list, Mapping)):
            ops.append({"$eq": condition})
        else:
            return None
    if set(ops[0]) & set(ops[1]) or "$not" in ops[0] or "$not" in ops[1]:
        return None
    return {**ops[0], **ops[1]}


class OrderedDocument(dict):  # type: ignore[type-arg]
    """A document operand that equals another document only with the same fields in the same order, as BSON
    documents compare in MongoDB (a plain dict ignores the order). As a dict subclass its ``__eq__`` is the one
    Python uses on either side of ``==`` with a plain dict, so mongomock's comparisons go through it."""

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Mapping):
            return False
        return list(self.keys()) == list(other.keys()) and all(self[k] == other[k] for k in self)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = None  # type: ignore[assignment]


def _matcher_value(value: Any) -> Any:
    if isinstance(value, RegexSpec):
        return value.compiled
    if isinstance(value, list):
        return [_matcher_value(v) for v in value]
    if isinstance(value, Mapping) and not isinstance(value, OrderedDocument):
        return OrderedDocument((k, _matcher_value(v)) for k, v in value.items())
    return value


def _leaf_condition(leaf: Leaf) -> Any:
    if leaf.op == "eq":
        return _matcher_value(leaf.value) if not isinstance(leaf.value, Mapping) or leaf.value else {"$eq": {}}
    if leaf.op == "regex":
        return leaf.value.compiled
    if leaf.op == "not_regex":
        return {"$not": leaf.value.compiled}
    if leaf.op == "not":
        inner, value = leaf.value
        return {"$not": {f"${inner}": _matcher_value(value)}}
    return {f"${leaf.op}": _matcher_value(leaf.value)}


def _matcher_clauses(node: Node) -> list[dict[str, Any]]:
    if isinstance(node, Leaf):
        return [{node.path: _leaf_condition(node)}]
    if isinstance(node, ElemMatchValue):
        ops: dict[str, Any] = {}
        for leaf in node.children:
            key = f"${leaf.op}" if leaf.op != "regex" else "$regex"
            if key in ops:
                raise Unsupported("a value $elemMatch repeating one operator")
            ops[key] = leaf.value.compiled if leaf.op == "regex" else _matcher_value(leaf.value)
        return [{node.path: {"$elemMatch": ops}}]
    if isinstance(node, ElemMatchObject):
        prefix = node.path + "."
        inner: list[dict[str, Any]] = []
        for leaf in node.children:
            inner.append({leaf.path[len(prefix):]: _leaf_condition(leaf)})
        inner_filter = inner[0] if len(inner) == 1 else {"$and": inner}
        return [{node.path: {"$elemMatch": inner_filter}}]
    if isinstance(node, OrNode):
        return [{"$or": [matcher_filter(branch) or {"_id": {"$exists": True}} for branch in node.branches]}]
    raise Unsupported(f"unexpected node {node!r}")
