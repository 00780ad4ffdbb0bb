"""The residual-filter matcher: mongomock's, with ``$type`` and positional paths as MongoDB evaluates them.

mongomock's own ``$type`` confuses ``int`` with ``long`` and ``bool`` with numbers, refuses ``null`` and type
arrays; the model builds ``$type`` conditions as :class:`~idxadvisor.whatif.bsontypes.TypeSet` values and matches
them here. A private filterer is used so that mongomock's module-level one stays as the library ships it.

A path with a numeric component (``a.0.b``) reaches, in MongoDB, both the array element at that position and the
field of that name in each document of the array (``BSONElementIterator``); mongomock follows only one of the two.
Such a path is matched on the values MongoDB reaches (:func:`path_values`), handed to mongomock as the documents
of a synthetic array field so that its usual candidate loop (and leaf-array expansion) applies to each value.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from bson import Regex
from mongomock import filtering

from idxadvisor.whatif.bsonorder import sort_key
from idxadvisor.whatif.bsontypes import TypeSet, TypeSetError, type_code, value_matches
from idxadvisor.whatif.query import is_positional


def _type_operator(value: Any, types: Any) -> bool:
    if value is filtering.NOTHING:
        return False
    if not isinstance(types, TypeSet):
        raise NotImplementedError("$type conditions are built as type sets")
    try:
        return value_matches(value, types)
    except TypeSetError as exc:
        raise NotImplementedError(str(exc)) from None


def _array_comparison(operator: str, original: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    """``$lt``/``$gt``… against an array or a document: only values of that type compare (type bracketing), the
    value itself or an element of it, in BSON order (field order included for documents; mongomock also compares
    the elements of nested arrays)."""
    compare = {"$lt": lambda a, b: a < b, "$lte": lambda a, b: a <= b,
               "$gt": lambda a, b: a > b, "$gte": lambda a, b: a >= b}[operator]

    def apply(value: Any, operand: Any) -> bool:
        if isinstance(operand, Mapping):  # documents compare only with documents (type bracketing)
            candidates = [value, *value] if isinstance(value, list) else [value]
            target = sort_key(operand)
            return any(isinstance(c, Mapping) and compare(sort_key(c), target) for c in candidates)
        if not isinstance(operand, list):
            return original(value, operand)
        if value is filtering.NOTHING or not isinstance(value, list):
            return False
        target = sort_key(operand)
        candidates = [value, *(element for element in value if isinstance(element, list))]
        return any(compare(sort_key(candidate), target) for candidate in candidates)

    return apply


def _array_element_matches(element: list[Any], conditions: Mapping[str, Any]) -> bool:
    """A value ``$elemMatch``'s conditions on one element that is itself an array: MongoDB compares that array as
    one value (type bracketing keeps it from numbers, strings ...), mongomock would look inside it."""
    key = sort_key(element)

    def same(operand: Any) -> bool:
        return isinstance(operand, list) and sort_key(operand) == key

    for operator, operand in conditions.items():
        if operator == "$eq":
            ok = same(operand)
        elif operator == "$ne":
            ok = not same(operand)
        elif operator == "$in":
            ok = any(same(item) for item in operand)
        elif operator in ("$lt", "$lte", "$gt", "$gte"):
            ok = isinstance(operand, list) and {
                "$lt": key < sort_key(operand), "$lte": key <= sort_key(operand),
                "$gt": key > sort_key(operand), "$gte": key >= sort_key(operand)}[operator]
        elif operator == "$exists":
            ok = bool(operand)
        elif operator == "$regex":
            ok = False
        elif operator == "$type" and isinstance(operand, TypeSet):
            ok = operand.matches_type(type_code(element))
        else:
            raise NotImplementedError(f"{operator} inside $elemMatch on a nested array")
        if not ok:
            return False
    return True


def _elem_match(original: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    def apply(value: Any, query: Any) -> bool:
        value_form = isinstance(query, Mapping) and bool(query) and all(
            str(key).startswith("$") and key not in ("$and", "$or", "$nor") for key in query)
        if not value_form or not isinstance(value, list) or not any(isinstance(item, list) for item in value):
            return original(value, query)
        return any(_array_element_matches(item, query) if isinstance(item, list) else original([item], query)
                   for item in value)

    return apply


def _in_with_arrays(original: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    """``$in`` whose list holds arrays: each entry is an equality, which an array meets as a whole or through one
    element (mongomock compares only the elements)."""
    def apply(value: Any, operand: Any) -> bool:
        if not isinstance(operand, list) or not any(isinstance(item, list) for item in operand):
            return original(value, operand)
        if value is filtering.NOTHING:
            return None in operand
        candidates = [value, *value] if isinstance(value, list) else [value]
        for item in operand:
            if isinstance(item, (re.Pattern, Regex)):
                if original(value, [item]):
                    return True
            elif any(sort_key(candidate) == sort_key(item) for candidate in candidates):
                return True
        return False

    return apply


_FILTERER = filtering._Filterer()
_FILTERER._operator_map["$type"] = _type_operator
_FILTERER._operator_map["$in"] = _in_with_arrays(_FILTERER._operator_map["$in"])
_IN = _FILTERER._operator_map["$in"]
_FILTERER._operator_map["$nin"] = lambda value, operand: not _IN(value, operand)
_FILTERER._operator_map["$elemMatch"] = _elem_match(_FILTERER._operator_map["$elemMatch"])
for _name in ("$lt", "$lte", "$gt", "$gte"):
    _FILTERER._operator_map[_name] = _array_comparison(_name, _FILTERER._operator_map[_name])


_SYNTHETIC = "\x00positional"
_VALUE = "v"


def path_values(value: Any, parts: Sequence[str]) -> Iterator[Any]:
    """The values a dotted path reaches in MongoDB's matcher: through documents by field name, through arrays both
    by position (a numeric component) and into each element that is a document (never into nested arrays)."""
    if not parts:
        yield value
        return
    part, rest = parts[0], parts[1:]
    if isinstance(value, Mapping):
        if part in value:
            yield from path_values(value[part], rest)
    elif isinstance(value, list):
        if part.isdigit() and (part == "0" or not part.startswith("0")) and int(part) < len(value):
            yield from path_values(value[int(part)], rest)
        for element in value:
            if isinstance(element, Mapping):
                yield from path_values(element, parts)


def _rewrite(search_filter: Mapping[str, Any], paths: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, condition in search_filter.items():
        if key in ("$and", "$or", "$nor") and isinstance(condition, list):
            out[key] = [_rewrite(branch, paths) for branch in condition]
        elif not key.startswith("$") and is_positional(key):
            synthetic = paths.setdefault(key, f"{_SYNTHETIC}{len(paths)}")
            out[f"{synthetic}.{_VALUE}"] = condition
        else:
            out[key] = condition
    return out


def matcher(search_filter: Mapping[str, Any]) -> Callable[[Mapping[str, Any]], bool]:
    """A predicate over documents for one filter (mongomock's matching with MongoDB's ``$type``, array comparisons
    and positional paths); the filter is prepared once."""
    paths: dict[str, str] = {}
    rewritten = _rewrite(search_filter, paths)
    if not paths:
        return lambda document: bool(_FILTERER.apply(search_filter, document))
    split = [(synthetic, path.split(".")) for path, synthetic in paths.items()]

    def applies(document: Mapping[str, Any]) -> bool:
        extended = dict(document)
        for synthetic, parts in split:
            extended[synthetic] = [{_VALUE: value} for value in path_values(document, parts)]
        return bool(_FILTERER.apply(rewritten, extended))

    return applies


def filter_applies(search_filter: Mapping[str, Any], document: Mapping[str, Any]) -> bool:
    """Whether ``document`` matches ``search_filter`` (see :func:`matcher`)."""
    return matcher(search_filter)(document)
