"""Predicates to ordered interval lists (OILs) and their tightness (planner-semantics.md §3).

Follows ``IndexBoundsBuilder`` (IBB): type-bracketed ranges, ``$in`` as a union of points, ``$ne``/``$nin``
as complements, null bounds by server version (8.0: ``[null, null]``; before: ``[undefined, undefined],
[null, null]``), regex prefix bounds (``analyze_regex::getRegexPrefixMatch``), whole-array equality,
``$elemMatch`` intersections, ``$exists``. Intervals are kept in ascending value order here; the scan
reverses them for descending fields and backward scans, as ``alignBounds`` does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from bson import MaxKey, MinKey, Regex

from idxadvisor.whatif.bsonorder import (
    RANK_ARRAY,
    RANK_STRING,
    UNDEFINED,
    SortKey,
    has_type_bracket,
    is_number,
    max_for_type,
    min_for_type,
    render_value,
    sort_key,
    type_rank,
)
from idxadvisor.whatif.bsontypes import (
    ARRAY,
    INT,
    NULL,
    NUMBER_TYPES,
    OBJECT,
    STRING,
    SYMBOL,
    TYPE_RANGES,
    UNDEFINED_TYPE,
    TypeSet,
)
from idxadvisor.whatif.hashing import hash64
from idxadvisor.whatif.query import ElemMatchValue, Leaf, RegexSpec, Unsupported


class Tightness(IntEnum):
    """How exactly the bounds answer a predicate; lower is looser (``BoundsTightness``)."""

    INEXACT_FETCH = 0
    INEXACT_MAYBE_COVERED = 1
    INEXACT_COVERED = 2
    EXACT_MAYBE_COVERED = 3
    EXACT = 4


def merge_tightness(new: Tightness, current: Tightness) -> Tightness:
    """``IndexBoundsBuilder::_mergeTightness``."""
    pair = {new, current}
    if pair == {Tightness.EXACT_MAYBE_COVERED, Tightness.INEXACT_COVERED}:
        return Tightness.INEXACT_MAYBE_COVERED
    return min(new, current)


@dataclass(frozen=True)
class Interval:
    start: Any
    start_inclusive: bool
    end: Any
    end_inclusive: bool

    @property
    def start_key(self) -> SortKey:
        return sort_key(self.start)

    @property
    def end_key(self) -> SortKey:
        return sort_key(self.end)

    @property
    def is_point(self) -> bool:
        return self.start_inclusive and self.end_inclusive and self.start_key == self.end_key

    @property
    def is_empty(self) -> bool:
        s, e = self.start_key, self.end_key
        return s > e or (s == e and not (self.start_inclusive and self.end_inclusive))

    @property
    def is_all_values(self) -> bool:
        return (isinstance(self.start, MinKey) and isinstance(self.end, MaxKey)
                and self.start_inclusive and self.end_inclusive)

    def reversed(self) -> Interval:
        return Interval(self.end, self.end_inclusive, self.start, self.start_inclusive)

    def render(self) -> str:
        left = "[" if self.start_inclusive else "("
        right = "]" if self.end_inclusive else ")"
        return f"{left}{render_value(self.start)}, {render_value(self.end)}{right}"

OIL = list[Interval]

ALL_VALUES = Interval(MinKey(), True, MaxKey(), True)


def point(value: Any) -> Interval:
    return Interval(value, True, value, True)


def render_oil(oil: OIL) -> list[str]:
    return [interval.render() for interval in oil]


def is_all_values_oil(oil: OIL) -> bool:
    return len(oil) == 1 and oil[0].is_all_values


def unionize(intervals: OIL) -> OIL:
    """Sort and merge overlapping or touching intervals (``IndexBoundsBuilder::unionize``)."""
    items = sorted((iv for iv in intervals if not iv.is_empty), key=lambda iv: (iv.start_key, not iv.start_inclusive))
    out: OIL = []
    for iv in items:
        if not out:
            out.append(iv)
            continue
        last = out[-1]
        last_end, start = last.end_key, iv.start_key
        touches = start < last_end or (start == last_end and (last.end_inclusive or iv.start_inclusive))
        if not touches:
            out.append(iv)
            continue
        end_key = iv.end_key
        if end_key > last_end or (end_key == last_end and iv.end_inclusive and not last.end_inclusive):
            out[-1] = Interval(last.start, last.start_inclusive, iv.end, iv.end_inclusive)
    return out


def intersect(a: OIL, b: OIL) -> OIL:
    """Intersection of two ascending OILs (``IndexBoundsBuilder::intersectize``)."""
    out: OIL = []
    i = j = 0
    while i < len(a) and j < len(b):
        x, y = a[i], b[j]
        xs, ys = x.start_key, y.start_key
        if xs > ys or (xs == ys and not x.start_inclusive):
            start, start_inc = x.start, x.start_inclusive
        else:
            start, start_inc = y.start, y.start_inclusive
        xe, ye = x.end_key, y.end_key
        if xe < ye or (xe == ye and not x.end_inclusive):
            end, end_inc = x.end, x.end_inclusive
            i += 1
        else:
            end, end_inc = y.end, y.end_inclusive
            j += 1
        candidate = Interval(start, start_inc, end, end_inc)
        if not candidate.is_empty:
            out.append(candidate)
    return out


def complement(oil: OIL) -> OIL:
    """``OrderedIntervalList::complement`` over ``[MinKey, MaxKey]``."""
    out: OIL = []
    boundary: Any = MinKey()
    inclusive = True
    for iv in oil:
        if sort_key(boundary) != iv.start_key or (inclusive and not iv.start_inclusive):
            piece = Interval(boundary, inclusive, iv.start, not iv.start_inclusive)
            if not piece.is_empty:
                out.append(piece)
        boundary, inclusive = iv.end, not iv.end_inclusive
    if not isinstance(boundary, MaxKey) or inclusive:
        piece = Interval(boundary, inclusive, MaxKey(), True)
        if not piece.is_empty:
            out.append(piece)
    return out


@dataclass(frozen=True)
class IndexContext:
    """What bounds building needs to know about the index and the server."""

    sparse: bool
    multikey: bool
    field_multikey: bool          # pathHasMultikeyComponent for the field being bounded
    compound: bool
    null_has_undefined: bool      # before 8.0, {f: null} bounds include [undefined, undefined]
    hashed: bool = False          # the field is hashed: equality and $in only, on the hashes
    collated: bool = False        # the index has a collation (its string keys are collation keys)


def null_bounds(ctx: IndexContext) -> OIL:
    if ctx.null_has_undefined:
        return [point(UNDEFINED), point(None)]
    return [point(None)]


def null_tightness(path: str, ctx: IndexContext) -> Tightness:
    """``updateTightnessForNullQuery``. Before 8.0 the bounds hold ``[undefined, undefined]``, where a multikey
    index also keys empty arrays, which ``{f: null}`` does not match: any multikey index needs the fetch then
    (cover_null_queries.js before 8.0: COUNT over FETCH + IXSCAN once an array is inserted)."""
    if ctx.sparse:
        return Tightness.INEXACT_FETCH
    if ctx.multikey and ("." in path or ctx.null_has_undefined):
        return Tightness.INEXACT_FETCH
    return Tightness.EXACT_MAYBE_COVERED


def translate_equality(path: str, value: Any, ctx: IndexContext) -> tuple[OIL, Tightness]:
    if value is None:
        return null_bounds(ctx), null_tightness(path, ctx)
    if isinstance(value, list):
        first = point(value[0]) if value else point(UNDEFINED)
        return unionize([first, point(value)]), Tightness.INEXACT_FETCH
    return [point(value)], Tightness.EXACT


def _array_comparison(op: str, value: list[Any]) -> tuple[OIL, Tightness]:
    """``buildBoundsForQueryElementForLT/GT`` with an array operand: a multikey index keys the elements, so the
    bounds reach from MinKey (or to MaxKey) and stop at the first element when its type sorts past (or before)
    arrays, both ends included whatever the operator (``inclusiveBounds``); always fetched."""
    first_rank = type_rank(value[0]) if value else None
    if op in ("lt", "lte"):
        if not value:
            end: Any = []
        else:
            end = value[0] if first_rank is not None and first_rank > RANK_ARRAY else value
        interval = Interval(MinKey(), True, end, True)
    else:
        if not value:
            start: Any = MinKey()
        else:
            start = value[0] if first_rank is not None and first_rank < RANK_ARRAY else value
        interval = Interval(start, True, MaxKey(), True)
    return ([] if interval.is_empty else [interval]), Tightness.INEXACT_FETCH


def translate_comparison(op: str, value: Any) -> tuple[OIL, Tightness]:
    if value is None:  # $gt/$lt null: type bracketing leaves nothing
        return [], Tightness.EXACT
    if isinstance(value, list):
        return _array_comparison(op, value)
    if not has_type_bracket(value):
        raise Unsupported(f"range bounds for a {type(value).__name__} operand are not modelled")
    if is_number(value):
        low, high = -math.inf, math.inf
        low_inc = high_inc = True
    else:
        low, high = min_for_type(value), max_for_type(value)
        low_inc = type_rank(low) == type_rank(value)
        high_inc = type_rank(high) == type_rank(value)
    if op == "gt":
        interval = Interval(value, False, high, high_inc)
    elif op == "gte":
        interval = Interval(value, True, high, high_inc)
    elif op == "lt":
        interval = Interval(low, low_inc, value, False)
    else:
        interval = Interval(low, low_inc, value, True)
    return ([] if interval.is_empty else [interval]), Tightness.EXACT


def regex_prefix(pattern: str, flags: str) -> tuple[str, bool]:
    """``analyze_regex::getRegexPrefixMatch``: the literal prefix and whether it is the whole regex."""
    if pattern.startswith("\\A"):
        multiline_ok, rest = True, pattern[2:]
    elif pattern.startswith("^"):
        multiline_ok, rest = False, pattern[1:]
    else:
        return "", False
    if _may_have_unescaped_pipe(rest):
        return "", False
    extended = False
    for flag in flags:
        if flag == "m":
            if not multiline_ok:
                return "", False
        elif flag == "s":
            continue
        elif flag == "x":
            extended = True
        else:
            return "", False
    prefix = ""
    result: str | None = None
    i = 0
    n = len(rest)
    while i < n:
        c = rest[i]
        i += 1
        if c in "*?":
            return prefix[:-1], False
        if c == "\\":
            c = rest[i] if i < n else "\0"
            i += 1
            if c == "Q":
                while i < n:
                    c = rest[i]
                    i += 1
                    if c == "\\" and i < n and rest[i] == "E":
                        i += 1
                        break
                    prefix += c
            elif c.isascii() and (c.isalnum() or c == "\0"):
                result = prefix
                break
            else:
                prefix += c
        elif c in "^$.[()+{":
            if not multiline_ok and c == ".":
                if i < n and rest[i] == "*" and i + 1 == n:
                    return prefix, True
            result = prefix
            break
        elif extended and c == "#":
            result = prefix
            break
        elif extended and c.isspace():
            continue
        else:
            prefix += c
    if result is None and i >= n:
        return prefix, bool(prefix)
    return (result if result is not None else ""), False


def _may_have_unescaped_pipe(text: str) -> bool:
    if text[:1] == "|":
        return True
    if len(text) > 1 and text[1] == "|" and text[0] != "\\":
        return True
    for i in range(2, len(text)):
        if text[i] == "|" and (text[i - 1] != "\\" or text[i - 2] == "\\"):
            return True
    return False


def _increment_last_byte(prefix: str) -> str:
    data = bytearray(prefix.encode("utf-8"))
    data[-1] += 1
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise Unsupported("a regex prefix whose upper bound is not valid UTF-8") from None


def translate_regex(spec: RegexSpec) -> tuple[OIL, Tightness]:
    prefix, exact = regex_prefix(spec.pattern, spec.flags)
    tightness = Tightness.EXACT if exact else Tightness.INEXACT_COVERED
    if prefix:
        if prefix.encode("utf-8")[-1] == 0xFF:
            raise Unsupported("a regex prefix ending in byte 0xFF")
        strings = Interval(prefix, True, _increment_last_byte(prefix), False)
    else:
        strings = Interval("", True, {}, False)
    return [strings, point(Regex(spec.pattern, spec.flags))], tightness


def translate_in(path: str, values: list[Any], ctx: IndexContext) -> tuple[OIL, Tightness]:
    tightness = Tightness.EXACT
    intervals: OIL = []
    has_null = any(v is None for v in values)
    whole_null_ok = has_null and not ctx.sparse and not (ctx.multikey and "." in path)
    for value in values:
        if isinstance(value, RegexSpec):
            oil, t = translate_regex(value)
        else:
            oil, t = translate_equality(path, value, ctx)
            if value is None and whole_null_ok:
                t = Tightness.EXACT_MAYBE_COVERED
        intervals.extend(oil)
        tightness = merge_tightness(t, tightness)
    return unionize(intervals), tightness


def translate_negation(path: str, op: str, value: Any, ctx: IndexContext) -> tuple[OIL, Tightness] | None:
    """``$ne``/``$nin``/``$not``: the complement of exact bounds, inexact on a multikey path; ``None`` if not indexable."""
    if op == "eq":
        if isinstance(value, list):
            return None
        oil, tightness = translate_equality(path, value, ctx)
        is_null = value is None
    elif op == "in":
        oil, tightness = translate_in(path, value, ctx)
        is_null = any(v is None for v in value)
    else:
        oil, tightness = translate_comparison(op, value)
        is_null = False
    if is_null:
        tightness = Tightness.EXACT
    if tightness != Tightness.EXACT:
        return None
    result = complement(oil)
    if ctx.field_multikey:
        return result, Tightness.INEXACT_FETCH
    return result, Tightness.EXACT


def translate_hashed(leaf: Leaf, ctx: IndexContext) -> tuple[OIL, Tightness] | None:
    """A hashed field (``nodeIsSupportedByHashedIndex``): an equality or a regex-free ``$in`` gives point intervals
    on the hashes, always fetched (hashes collide); a null equality is the hashed null point (before 8.0 also the
    hashed undefined point, ``makeNullEqualityBounds``)."""
    if leaf.op == "exists":
        raise Unsupported("$exists on a hashed field is not modelled")
    if leaf.op == "eq" and not leaf.origin:
        values = [leaf.value]
    elif leaf.op == "in" and not any(isinstance(v, RegexSpec) for v in leaf.value):
        values = list(leaf.value)
    else:
        return None
    points: OIL = []
    for value in values:
        if isinstance(value, list):
            raise Unsupported("equality to an array on a hashed field is not modelled")
        if value is None and ctx.null_has_undefined:
            points.append(point(hash64(UNDEFINED)))
        points.append(point(hash64(value)))
    return unionize(points), Tightness.INEXACT_FETCH


def translate_leaf(leaf: Leaf, ctx: IndexContext) -> tuple[OIL, Tightness] | None:
    """Bounds and tightness for one predicate on an indexed field, or ``None`` if it cannot bound a scan."""
    if ctx.hashed:
        return translate_hashed(leaf, ctx)
    op = leaf.op
    if op == "eq":
        return translate_equality(leaf.path, leaf.value, ctx)
    if op in ("gt", "gte", "lt", "lte"):
        return translate_comparison(op, leaf.value)
    if op == "in":
        return translate_in(leaf.path, leaf.value, ctx)
    if op == "regex":
        return translate_regex(leaf.value)
    if op == "exists":
        if leaf.value:
            if ctx.sparse and not ctx.compound:
                return [ALL_VALUES], Tightness.EXACT
            return [ALL_VALUES], Tightness.INEXACT_FETCH
        return null_bounds_exists_false(ctx)
    if op == "ne":
        return translate_negation(leaf.path, "eq", leaf.value, ctx)
    if op == "type":
        return translate_type(leaf.value, ctx)
    if op == "nin":
        return translate_negation(leaf.path, "in", leaf.value, ctx)
    if op == "not":
        inner, value = leaf.negated
        return translate_negation(leaf.path, inner, value, ctx)
    return None


def translate_type(types: TypeSet, ctx: IndexContext) -> tuple[OIL, Tightness]:
    """``$type`` (``TYPE_OPERATOR``): every value and a fetch for ``array``, else the type brackets, unionised."""
    if ARRAY in types.codes:
        return [ALL_VALUES], Tightness.INEXACT_FETCH
    codes = set(types.codes) | ({INT} if types.all_numbers else set())
    intervals: OIL = []
    for code in codes:
        if code not in TYPE_RANGES:
            raise Unsupported(f"index bounds for $type {TypeSet(frozenset({code})).render()} are not modelled")
        low, high, high_excluded = TYPE_RANGES[code]
        intervals.append(Interval(low, True, high, not high_excluded))
    return unionize(intervals), _type_tightness(types, ctx)


def _type_tightness(types: TypeSet, ctx: IndexContext) -> Tightness:
    """``computeTightnessForTypeSet``: a fetch for collated strings or objects and for null/undefined (the index
    cannot tell them from missing and ``[]``); a filter on the keys when only some numeric types (or only one of
    string and symbol, which share a bracket) are named; exact otherwise."""
    codes = types.codes
    if ctx.collated and codes & {STRING, OBJECT}:
        return Tightness.INEXACT_FETCH
    if codes & {NULL, UNDEFINED_TYPE}:
        return Tightness.INEXACT_FETCH
    numbers = codes & NUMBER_TYPES
    if numbers and not (types.all_numbers or numbers == NUMBER_TYPES):
        return Tightness.INEXACT_COVERED
    if (STRING in codes) != (SYMBOL in codes):
        return Tightness.INEXACT_COVERED
    return Tightness.EXACT


def null_bounds_exists_false(ctx: IndexContext) -> tuple[OIL, Tightness]:
    return [point(None)], Tightness.INEXACT_FETCH


def translate_elem_match_value(node: ElemMatchValue, ctx: IndexContext) -> tuple[OIL, Tightness] | None:
    oil: OIL | None = None
    for child in node.children:
        result = translate_leaf(child, ctx)
        if result is None:
            return None
        oil = result[0] if oil is None else intersect(result[0], oil)
    return (oil or []), Tightness.INEXACT_FETCH


def negates_null(leaf: Leaf) -> bool:
    """A negation whose excluded set contains null: ``$ne: null``, ``$nin: [null, ...]``, ``$not: {$eq|$gte|$lte:
    null}``, ``$not: {$in: [null, ...]}`` (``isQueryNegatingEqualToNull`` and the ``$nin`` rule of
    ``QueryPlannerIXSelect::_compatible``)."""
    if leaf.op == "ne":
        return leaf.value is None
    if leaf.op == "nin":
        return any(v is None for v in leaf.value)
    if leaf.op == "not":
        inner, value = leaf.negated
        if inner == "eq":  # $gte/$lte null are parsed as equality to null
            return value is None
        if inner == "in":
            return any(v is None for v in value)
    return False


def sparse_can_answer(leaf: Leaf, inside_value_elem_match: bool) -> bool:
    """``nodeIsSupportedBySparseIndex``: a sparse index lacks documents without the field, so it cannot answer an
    equality to null (outside ``$elemMatch``, where null means a literal null) nor a negation, except
    ``$ne: null``, which no document without the field matches."""
    if leaf.op == "ne":
        return leaf.value is None
    if leaf.op == "not":
        inner, value = leaf.negated
        return inner == "eq" and not leaf.origin and value is None
    if leaf.op in ("nin", "not_regex") or (leaf.op == "exists" and not leaf.value):
        return False
    if inside_value_elem_match:
        return True
    if leaf.op == "eq" and leaf.value is None:
        return False
    return not (leaf.op == "in" and any(v is None for v in leaf.value))


_COLLATABLE_LOW: SortKey = (RANK_STRING, "")  # the least string: strings, objects and arrays start here


def oil_may_hold_collatable(oil: OIL) -> bool:
    """Whether the bounds can hold a string, document or array (``getFieldsWithStringBounds``): their keys differ
    under a collation, so an index whose collation is not the query's cannot sort or cover such a field."""
    for interval in oil:
        start, end = interval.start_key, interval.end_key
        reaches_strings = end > _COLLATABLE_LOW or (end == _COLLATABLE_LOW and interval.end_inclusive)
        starts_before_binary = start[0] <= RANK_ARRAY
        if reaches_strings and starts_before_binary and not interval.is_empty:
            return True
    return False


def compares_collatable(leaf: Leaf) -> bool:
    """``boundsGeneratingNodeContainsComparisonToType`` for strings, documents and arrays: such a predicate cannot
    use an index whose collation is not the query's."""
    operands: list[Any]
    if leaf.op in ("in", "nin"):
        operands = list(leaf.value)
    elif leaf.op == "not":
        inner, value = leaf.negated
        operands = list(value) if inner == "in" else [value]
    elif leaf.op in ("eq", "ne", "gt", "gte", "lt", "lte"):
        operands = [leaf.value]
    else:
        return False
    return any(isinstance(v, (str, dict, list)) and not isinstance(v, RegexSpec) for v in operands)
