"""Partial indexes: which documents a ``partialFilterExpression`` keeps, and which queries may use the index.

The planner may use a partial index only for a query whose filter implies the index's filter
(``QueryPlannerIXSelect::stripInvalidAssignmentsToPartialIndices``); for a rooted ``$or`` each branch is judged
on its own. :func:`implies` is ``expression::isSubsetOf`` (``src/mongo/db/matcher/expression_algo.cpp``) over the
normalized predicate trees of :mod:`idxadvisor.whatif.query`:

* structurally equivalent expressions imply each other;
* an ``$or`` on the index side is implied by a query implying one of its branches, an ``$and`` by a query
  implying every clause; a query ``$and`` implies what one of its clauses implies, a query ``$or`` what every
  branch implies;
* a comparison implies a comparison on the same path of the same canonical type: an equality implies the ranges
  that contain it, ``$lt``/``$lte`` (``$gt``/``$gte``) imply looser bounds of the same direction;
* a ``$in`` implies what each of its values implies; a value implies a ``$in`` that lists it;
* ``$exists: true`` is implied by a comparison to a non-null value, ``$in`` without null, ``$exists``, a regex,
  ``$elemMatch``, and ``$ne: null`` / ``$nin`` with null.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from idxadvisor.whatif.bsonorder import sort_key, type_rank
from idxadvisor.whatif.query import (
    ElemMatchObject,
    ElemMatchValue,
    Leaf,
    Node,
    OrNode,
    RegexSpec,
    Unsupported,
    iter_leaves,
    parse_query,
)

Expression = Node | list[Node]
_COMPARISONS = ("eq", "lt", "lte", "gt", "gte")
_PARTIAL_OPERATORS = frozenset({"eq", "lt", "lte", "gt", "gte", "in", "exists"})


def parse_partial_filter(expression: Mapping[str, Any], version: tuple[int, int]) -> list[Node]:
    """The filter as normalized predicates; operators mongod accepts in a partial filter but the model does not
    evaluate (``$type``, geo) raise :class:`Unsupported`."""
    if not isinstance(expression, Mapping):
        raise Unsupported("a partialFilterExpression must be a document")
    try:
        nodes = parse_query(expression, None, None, version).conjuncts
    except Unsupported as exc:
        raise Unsupported(f"partial filter expression: {exc}") from None
    for leaf in iter_leaves(nodes):
        if leaf.context is not None:
            raise Unsupported("partial filter expression: $elemMatch is not a partial-index operator")
        if leaf.op not in _PARTIAL_OPERATORS or (leaf.op == "exists" and not leaf.value):
            raise Unsupported(f"partial filter expression: ${leaf.op} on {leaf.path} is not a partial-index operator")
    return nodes


def implies(query: Expression, index_filter: Expression, strings: bool = True) -> bool:
    """``isSubsetOf(query, filter)``: every document the query matches is in the partial index. ``strings`` is
    False when the query's collation is not the index's: comparisons of strings (documents, arrays) then prove
    nothing (``collatorsMatch``)."""
    lhs, rhs = _unwrap(query), _unwrap(index_filter)
    if _equivalent(lhs, rhs) and (strings or not _mentions_collatable(lhs)):
        return True
    if isinstance(rhs, OrNode):
        return any(implies(lhs, branch, strings) for branch in rhs.branches)
    if isinstance(rhs, list):
        return all(implies(lhs, clause, strings) for clause in rhs)
    if isinstance(lhs, list):
        return any(implies(clause, rhs, strings) for clause in lhs)
    if isinstance(lhs, OrNode):
        return all(implies(branch, rhs, strings) for branch in lhs.branches)
    if not isinstance(rhs, Leaf):
        return False
    if rhs.op in _COMPARISONS:
        return _implies_comparison(lhs, rhs, strings)
    if rhs.op == "exists" and rhs.value:
        return _implies_exists(lhs, rhs.path)
    if rhs.op == "in":
        return _implies_in(lhs, rhs, strings)
    return False


def _mentions_collatable(expression: Expression) -> bool:
    if isinstance(expression, list):
        return any(_mentions_collatable(item) for item in expression)
    if isinstance(expression, OrNode):
        return any(_mentions_collatable(branch) for branch in expression.branches)
    if isinstance(expression, Leaf):
        return _collatable(expression.value)
    return True


def _unwrap(expression: Expression) -> Expression:
    """A one-clause ``$and`` is its clause (the parser leaves single predicates in a list)."""
    while isinstance(expression, list) and len(expression) == 1:
        expression = expression[0]
    return expression


def _kind(leaf: Leaf) -> str:
    """The server's match type: ``$gte: null`` stays a GTE even though it matches like an equality."""
    return leaf.origin if leaf.op == "eq" and leaf.origin else leaf.op


def _equivalent(a: Expression, b: Expression) -> bool:
    a, b = _unwrap(a), _unwrap(b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(any(_equivalent(x, y) for y in b) for x in a)
    if isinstance(a, OrNode) and isinstance(b, OrNode):
        return len(a.branches) == len(b.branches) and all(
            any(_equivalent(x, y) for y in b.branches) for x in a.branches)
    if isinstance(a, Leaf) and isinstance(b, Leaf):
        return (a.path == b.path and a.op == b.op and a.origin == b.origin and a.context is None
                and b.context is None and _same_operand(a.value, b.value))
    return False


def _same_operand(a: Any, b: Any) -> bool:
    if isinstance(a, RegexSpec) or isinstance(b, RegexSpec):
        return isinstance(a, RegexSpec) and isinstance(b, RegexSpec) and (a.pattern, a.flags) == (b.pattern, b.flags)
    if isinstance(a, tuple) and isinstance(b, tuple):  # $not: (operator, operand)
        return a[0] == b[0] and _same_operand(a[1], b[1])
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same_operand(x, y) for x, y in zip(a, b))
    if type(a) is bool or type(b) is bool:
        return type(a) is type(b) and a == b
    try:
        return sort_key(a) == sort_key(b)
    except Exception:  # noqa: BLE001 - values the model cannot order are never equivalent
        return False


def _implies_comparison(lhs: Expression, rhs: Leaf, strings: bool) -> bool:
    if not isinstance(lhs, Leaf) or lhs.path != rhs.path or lhs.context is not None:
        return False
    if lhs.op == "in":
        if any(isinstance(v, RegexSpec) for v in lhs.value):
            return False
        return all(_compare_implies("eq", v, rhs, strings) for v in lhs.value)
    if lhs.op in _COMPARISONS:
        if lhs.op == "eq" and isinstance(lhs.value, RegexSpec):
            return False
        return _compare_implies(_kind(lhs), lhs.value, rhs, strings)
    return False


def _collatable(value: Any) -> bool:
    return isinstance(value, (str, dict, list)) and not isinstance(value, RegexSpec)


def _compare_implies(kind: str, value: Any, rhs: Leaf, strings: bool) -> bool:
    """``_isSubsetOf(ComparisonMatchExpression, ComparisonMatchExpression)`` for one operand."""
    target = rhs.value
    if isinstance(target, RegexSpec) or (not strings and _collatable(value)):
        return False
    if type_rank(value) != type_rank(target):
        return False
    if _is_nan(value) or _is_nan(target):
        both_equality = kind in ("eq", "lte", "gte") and _kind(rhs) in ("eq", "lte", "gte")
        return both_equality and _is_nan(value) and _is_nan(target)
    left, right = sort_key(value), sort_key(target)
    cmp = (left > right) - (left < right)
    rhs_kind = _kind(rhs)
    if kind == rhs_kind and cmp == 0:
        return True
    if rhs_kind in ("lt", "lte") and kind in ("lt", "lte", "eq"):
        return cmp <= 0 if rhs_kind == "lte" else cmp < 0
    if rhs_kind in ("gt", "gte") and kind in ("gt", "gte", "eq"):
        return cmp >= 0 if rhs_kind == "gte" else cmp > 0
    return False


def _is_nan(value: Any) -> bool:
    return isinstance(value, float) and value != value


def _implies_in(lhs: Expression, rhs: Leaf, strings: bool) -> bool:
    if any(isinstance(v, RegexSpec) for v in rhs.value):
        return False
    if not isinstance(lhs, Leaf) or lhs.path != rhs.path:
        return False
    return any(_implies_comparison(lhs, Leaf(rhs.path, "eq", value), strings) for value in rhs.value)


def _implies_exists(lhs: Expression, path: str) -> bool:
    if isinstance(lhs, (ElemMatchValue, ElemMatchObject)):
        return lhs.path == path
    if not isinstance(lhs, Leaf):
        return False
    if lhs.op in ("ne", "nin", "not"):
        # NOT(EQ null) and NOT(IN [... null ...]) imply existence; the NOT's path is its child's.
        if lhs.path != path:
            return False
        if lhs.op == "ne":
            return lhs.value is None
        if lhs.op == "nin":
            return any(v is None for v in lhs.value)
        inner, value = lhs.negated
        if inner == "eq" and not lhs.origin:
            return value is None
        if inner == "in":
            return any(v is None for v in value)
        return False
    if lhs.path != path or lhs.context is not None:
        return False
    if lhs.op in _COMPARISONS:
        return lhs.value is not None
    if lhs.op == "in":
        return not any(v is None for v in lhs.value)
    if lhs.op in ("exists",):
        return bool(lhs.value)
    return lhs.op == "regex"
