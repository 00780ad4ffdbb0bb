"""``$type``: the BSON type of a value, the type sets a query names, and their index bounds.

A type set is what ``MatcherTypeSet`` holds: BSON type codes and the ``number`` alias (every numeric type).
Matching follows ``TypeMatchExpression``: a path matches when its value, or one element of an array there, has a
type of the set (``{$type: "array"}`` matches the array itself). Bounds follow ``IndexBoundsBuilder`` for
``TYPE_OPERATOR``: ``[MinKey, MaxKey]`` and a fetch when the set holds ``array`` (a multikey index keys elements,
not arrays); otherwise one interval per type from ``appendMinForType`` to ``appendMaxForType`` (the end excluded for
variable-width types, which end where the next type starts), unionised, with the tightness of
``computeTightnessForTypeSet``.
"""

from __future__ import annotations

import datetime
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bson import Binary, Code, Decimal128, Int64, MaxKey, MinKey, ObjectId, Regex, Timestamp
from bson.datetime_ms import DatetimeMS
from bson.dbref import DBRef

from idxadvisor.ingest.samples import UNDEFINED, Undefined
from idxadvisor.whatif.bsonorder import MAX_DATE, MIN_DATE

DOUBLE, STRING, OBJECT, ARRAY, BINDATA, UNDEFINED_TYPE, OBJECTID, BOOL, DATE, NULL = 1, 2, 3, 4, 5, 6, 7, 8, 9, 10
REGEX, DBPOINTER, JAVASCRIPT, SYMBOL, JAVASCRIPT_WITH_SCOPE, INT, TIMESTAMP, LONG, DECIMAL = (
    11, 12, 13, 14, 15, 16, 17, 18, 19)
MINKEY_TYPE, MAXKEY_TYPE = -1, 127
NUMBER_TYPES = frozenset({DOUBLE, INT, LONG, DECIMAL})

ALIASES = {
    "double": DOUBLE, "string": STRING, "object": OBJECT, "array": ARRAY, "binData": BINDATA,
    "undefined": UNDEFINED_TYPE, "objectId": OBJECTID, "bool": BOOL, "date": DATE, "null": NULL, "regex": REGEX,
    "dbPointer": DBPOINTER, "javascript": JAVASCRIPT, "symbol": SYMBOL, "javascriptWithScope": JAVASCRIPT_WITH_SCOPE,
    "int": INT, "timestamp": TIMESTAMP, "long": LONG, "decimal": DECIMAL, "minKey": MINKEY_TYPE, "maxKey": MAXKEY_TYPE,
}
_CODES = frozenset(ALIASES.values())


class TypeSetError(ValueError):
    """An operand ``$type`` refuses (the server answers BadValue)."""


@dataclass(frozen=True)
class TypeSet:
    """``MatcherTypeSet``: named BSON type codes, and whether ``number`` was named."""

    codes: frozenset[int]
    all_numbers: bool = False

    def matches_type(self, code: int) -> bool:
        return code in self.codes or (self.all_numbers and code in NUMBER_TYPES)

    def render(self) -> Any:
        names = {code: name for name, code in ALIASES.items()}
        out = sorted(names[code] for code in self.codes) + (["number"] if self.all_numbers else [])
        return out[0] if len(out) == 1 else out


def parse_type_set(operand: Any) -> TypeSet:
    """The operand of ``$type``: an alias, a numeric code, or an array of them."""
    items = list(operand) if isinstance(operand, (list, tuple)) else [operand]
    if isinstance(operand, (list, tuple)) and not items:
        raise TypeSetError("$type must match at least one type")
    codes: set[int] = set()
    all_numbers = False
    for item in items:
        if isinstance(item, str):
            if item == "number":
                all_numbers = True
            elif item in ALIASES:
                codes.add(ALIASES[item])
            else:
                raise TypeSetError(f"unknown type name alias: {item}")
        elif isinstance(item, (int, float, Int64)) and not isinstance(item, bool):
            if float(item) != int(item) or int(item) not in _CODES:
                raise TypeSetError(f"invalid numerical type code: {item}")
            codes.add(int(item))
        else:
            raise TypeSetError("type must be represented as a number or a string")
    return TypeSet(frozenset(codes), all_numbers)


def type_code(value: Any) -> int:
    """The BSON type a sample value is stored as (plain Python ints as the driver encodes them)."""
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, Int64):
        return LONG
    if isinstance(value, int):
        return INT if -(2**31) <= value < 2**31 else LONG
    if isinstance(value, float):
        return DOUBLE
    if isinstance(value, Decimal128):
        return DECIMAL
    if isinstance(value, str):
        return STRING
    if isinstance(value, (list, tuple)):
        return ARRAY
    if isinstance(value, (Mapping, DBRef)):
        return OBJECT
    if value is None:
        return NULL
    if isinstance(value, Undefined):
        return UNDEFINED_TYPE
    if isinstance(value, ObjectId):
        return OBJECTID
    if isinstance(value, (datetime.datetime, DatetimeMS)):
        return DATE
    if isinstance(value, Timestamp):
        return TIMESTAMP
    if isinstance(value, (Regex, re.Pattern)):
        return REGEX
    if isinstance(value, Code):
        return JAVASCRIPT_WITH_SCOPE if value.scope is not None else JAVASCRIPT
    if isinstance(value, (Binary, bytes)):
        return BINDATA
    if isinstance(value, MinKey):
        return MINKEY_TYPE
    if isinstance(value, MaxKey):
        return MAXKEY_TYPE
    raise TypeSetError(f"the BSON type of a {type(value).__name__} value")


def value_matches(value: Any, types: TypeSet) -> bool:
    """``TypeMatchExpression`` on one candidate value: the value itself, or an element of an array value."""
    if types.matches_type(type_code(value)):
        return True
    return isinstance(value, (list, tuple)) and any(types.matches_type(type_code(v)) for v in value)


# --- bounds (values are the endpoints ``bounds.Interval`` takes) ---

# (min, max, max excluded) per type code, as appendMinForType/appendMaxForType build them; types left out
# (binData, regex, dbPointer, code) are not modelled.
_NUMBER_RANGE = (math.nan, math.inf, False)
TYPE_RANGES: dict[int, tuple[Any, Any, bool]] = {
    DOUBLE: _NUMBER_RANGE, INT: _NUMBER_RANGE, LONG: _NUMBER_RANGE, DECIMAL: _NUMBER_RANGE,
    STRING: ("", {}, True), SYMBOL: ("", {}, True), OBJECT: ({}, [], True),
    UNDEFINED_TYPE: (UNDEFINED, UNDEFINED, False), NULL: (None, None, False),
    OBJECTID: (ObjectId("0" * 24), ObjectId("f" * 24), False), BOOL: (False, True, False),
    DATE: (MIN_DATE, MAX_DATE, False), TIMESTAMP: (Timestamp(0, 0), Timestamp(2**32 - 1, 2**32 - 1), False),
    MINKEY_TYPE: (MinKey(), MinKey(), False), MAXKEY_TYPE: (MaxKey(), MaxKey(), False),
}
