"""BSON comparison order, sort keys and explain's string form of values.

Models planner-semantics.md §2.6 (canonical type order, numbers compare as numbers, a descending
field reverses only that field) and the string form explain uses for interval end points (§3: doubles
with ``.0``, ``inf.0``, quoted strings, ``MinKey``/``MaxKey``, ``/re/``, ``{}``).

:func:`sort_key` maps a BSON value to a plain Python tuple whose natural ordering is BSON order, so
index keys can be sorted and compared with Python's own tuple comparison. The first element of every
sort key is the canonical type rank, so values of different types never compare their payloads.
"""

from __future__ import annotations

import datetime
import math
import re
import uuid
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from bson import Binary, Code, DBRef, Decimal128, Int64, MaxKey, MinKey, ObjectId, Regex, Timestamp
from bson.datetime_ms import DatetimeMS

from idxadvisor.ingest.samples import UNDEFINED, Undefined

SortKey = tuple[Any, ...]




class _Missing:
    """A path that does not exist in a document (indexed as null, §2.2)."""

    def __repr__(self) -> str:
        return "<missing>"


MISSING = _Missing()


class UnsupportedValue(ValueError):
    """A value of a BSON type this model does not order (DBPointer, JavaScript with scope, ...)."""


RANK_MINKEY = -1
RANK_UNDEFINED = 0
RANK_NULL = 5
RANK_NUMBER = 10
RANK_STRING = 15
RANK_OBJECT = 20
RANK_ARRAY = 25
RANK_BINDATA = 30
RANK_OBJECTID = 35
RANK_BOOL = 40
RANK_DATE = 45
RANK_TIMESTAMP = 47
RANK_REGEX = 50
RANK_CODE = 60
RANK_CODE_WITH_SCOPE = 65
RANK_MAXKEY = 127

NULL_KEY: SortKey = (RANK_NULL,)
UNDEFINED_KEY: SortKey = (RANK_UNDEFINED,)
MINKEY_KEY: SortKey = (RANK_MINKEY,)
MAXKEY_KEY: SortKey = (RANK_MAXKEY,)

_EPOCH = datetime.datetime(1970, 1, 1)
_EPOCH_AWARE = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_REGEX_FLAGS = (("i", re.IGNORECASE), ("l", re.LOCALE), ("m", re.MULTILINE), ("s", re.DOTALL),
                ("u", re.UNICODE), ("x", re.VERBOSE))


def datetime_millis(value: datetime.datetime) -> int:
    """Milliseconds since the epoch, as BSON stores a date (naive datetimes are UTC, as bson decodes them)."""
    delta = value - (_EPOCH_AWARE if value.tzinfo is not None else _EPOCH)
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def regex_flags_text(value: Regex | re.Pattern[str]) -> str:
    """The flags of a regex as the letters BSON stores, sorted."""
    if isinstance(value, Regex):
        flags = value.flags
        if isinstance(flags, str):
            return "".join(sorted(flags))
    else:
        flags = value.flags & ~re.UNICODE
    return "".join(letter for letter, bit in _REGEX_FLAGS if flags & bit and letter != "u")


def type_rank(value: Any) -> int:
    """The canonical type rank: MinKey < undefined < null < numbers < strings < objects < arrays < ..."""
    return sort_key(value)[0]


def sort_key(value: Any) -> SortKey:
    """A tuple whose Python ordering is BSON comparison order (§2.6)."""
    kind = type(value)
    handler = _HANDLERS.get(kind)
    if handler is not None:
        return handler(value)
    return _sort_key_slow(value)


def _number_key(value: Any) -> SortKey:
    return (RANK_NUMBER, 1, value)


def _float_key(value: float) -> SortKey:
    if value != value:  # NaN sorts before every other number and equals itself
        return (RANK_NUMBER, 0)
    return (RANK_NUMBER, 1, value)


def _decimal_key(value: Decimal128) -> SortKey:
    number = value.to_decimal()
    if number.is_nan():
        return (RANK_NUMBER, 0)
    return (RANK_NUMBER, 1, number)


def _dict_key(value: Mapping[str, Any]) -> SortKey:
    return (RANK_OBJECT, tuple((sub[0], name, sub) for name, sub in ((n, sort_key(v)) for n, v in value.items())))


def _list_key(value: list[Any] | tuple[Any, ...]) -> SortKey:
    return (RANK_ARRAY, tuple(sort_key(item) for item in value))


def _binary_key(value: bytes) -> SortKey:
    subtype = getattr(value, "subtype", 0)
    return (RANK_BINDATA, len(value), subtype, bytes(value))


def _regex_key(value: Regex | re.Pattern[str]) -> SortKey:
    return (RANK_REGEX, value.pattern, regex_flags_text(value))


def _code_key(value: Code) -> SortKey:
    """JavaScript code (rank 60) compares by its text; code with scope (rank 65) by its text, then its scope
    object (``compareElementValues``). ``Code`` subclasses ``str``, so it must be recognised before strings."""
    if value.scope is None:
        return (RANK_CODE, str(value))
    return (RANK_CODE_WITH_SCOPE, str(value), _dict_key(value.scope)[1])


_HANDLERS: dict[type, Any] = {
    type(None): lambda value: NULL_KEY,
    bool: lambda value: (RANK_BOOL, value),
    int: _number_key,
    Int64: _number_key,
    float: _float_key,
    str: lambda value: (RANK_STRING, value),
    dict: _dict_key,
    list: _list_key,
    ObjectId: lambda value: (RANK_OBJECTID, value.binary),
    datetime.datetime: lambda value: (RANK_DATE, datetime_millis(value)),
    Timestamp: lambda value: (RANK_TIMESTAMP, value.time, value.inc),
    Regex: _regex_key,
    MinKey: lambda value: MINKEY_KEY,
    MaxKey: lambda value: MAXKEY_KEY,
    Undefined: lambda value: UNDEFINED_KEY,
    _Missing: lambda value: NULL_KEY,
    Decimal128: _decimal_key,
    DatetimeMS: lambda value: (RANK_DATE, int(value)),
    Binary: _binary_key,
    bytes: _binary_key,
    Code: _code_key,
}


SORT_KEY_HANDLERS = _HANDLERS


def _sort_key_slow(value: Any) -> SortKey:
    if isinstance(value, Code):  # before str: Code subclasses str
        return _code_key(value)
    if isinstance(value, bool):
        return (RANK_BOOL, value)
    if isinstance(value, int):
        return (RANK_NUMBER, 1, int(value))
    if isinstance(value, float):
        return _float_key(value)
    if isinstance(value, str):
        return (RANK_STRING, str(value))
    if isinstance(value, DBRef):
        return _dict_key(value.as_doc())
    if isinstance(value, Mapping):
        return _dict_key(value)
    if isinstance(value, (list, tuple)):
        return _list_key(value)
    if isinstance(value, datetime.datetime):
        return (RANK_DATE, datetime_millis(value))
    if isinstance(value, uuid.UUID):
        return (RANK_BINDATA, 16, 4, value.bytes)
    if isinstance(value, bytes):
        return _binary_key(value)
    if isinstance(value, re.Pattern):
        return _regex_key(value)
    if isinstance(value, Decimal):
        return (RANK_NUMBER, 0) if value.is_nan() else (RANK_NUMBER, 1, value)
    raise UnsupportedValue(f"values of type {type(value).__name__} are not modelled")


def compare(left: Any, right: Any) -> int:
    """-1, 0 or 1 in BSON order."""
    a, b = sort_key(left), sort_key(right)
    return (a > b) - (a < b)


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float, Decimal128)) and not isinstance(value, bool)


# --- the smallest and largest value of each type, used for type-bracketed range bounds (§3) ---

MIN_DATE = DatetimeMS(-(2**63))
MAX_DATE = DatetimeMS(2**63 - 1)


def min_for_type(value: Any) -> Any:
    """``BSONObjBuilder::appendMinForType`` for the type of ``value``."""
    rank = type_rank(value)
    return _MIN_FOR_RANK[rank]


def max_for_type(value: Any) -> Any:
    """``BSONObjBuilder::appendMaxForType``: variable-width types end at the start of the next type."""
    rank = type_rank(value)
    return _MAX_FOR_RANK[rank]


_MIN_FOR_RANK: dict[int, Any] = {
    RANK_NULL: None,
    RANK_NUMBER: -math.inf,
    RANK_STRING: "",
    RANK_OBJECT: {},
    RANK_ARRAY: [],
    RANK_OBJECTID: ObjectId("0" * 24),
    RANK_BOOL: False,
    RANK_DATE: MIN_DATE,
    RANK_TIMESTAMP: Timestamp(0, 0),
}
_MAX_FOR_RANK: dict[int, Any] = {
    RANK_NULL: None,
    RANK_NUMBER: math.inf,
    RANK_STRING: {},
    RANK_OBJECT: [],
    RANK_OBJECTID: ObjectId("f" * 24),
    RANK_BOOL: True,
    RANK_DATE: MAX_DATE,
    RANK_TIMESTAMP: Timestamp(2**32 - 1, 2**32 - 1),
}


def has_type_bracket(value: Any) -> bool:
    """Whether range bounds for this operand type are modelled."""
    rank = type_rank(value)
    return rank in _MIN_FOR_RANK and rank in _MAX_FOR_RANK and rank not in (RANK_OBJECT, RANK_ARRAY)


# --- explain's string form (BSONElement::toString without the field name) ---


def render_double(value: float) -> str:
    """``StringBuilder::appendDoubleNice``: ``%.16g`` plus ``.0`` when there is no ``.``, ``E`` or ``N``."""
    text = "%.16g" % value
    if "." not in text and "E" not in text and "N" not in text:
        text += ".0"
    return text


def render_value(value: Any) -> str:
    """A value as explain prints it inside an interval string."""
    if value is None or value is MISSING:
        return "null"
    if value is UNDEFINED:
        return "undefined"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return render_double(value)
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, Code):
        return str(value)
    if isinstance(value, str) and hasattr(value, "source"):
        # A collation key (whatif.collation): mongod prints the ICU sort-key bytes, the model names the string.
        return f'CollationKey("{value.source}")'
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, MinKey):
        return "MinKey"
    if isinstance(value, MaxKey):
        return "MaxKey"
    if isinstance(value, ObjectId):
        return f"ObjectId('{value}')"
    if isinstance(value, DatetimeMS):
        return f"new Date({int(value)})"
    if isinstance(value, datetime.datetime):
        return f"new Date({datetime_millis(value)})"
    if isinstance(value, Timestamp):
        return f"Timestamp({value.time}, {value.inc})"
    if isinstance(value, (Regex, re.Pattern)):
        return f"/{value.pattern}/{regex_flags_text(value)}"
    if isinstance(value, Decimal128):
        return f'NumberDecimal("{value}")'
    if isinstance(value, Mapping):
        if not value:
            return "{}"
        return "{ " + ", ".join(f"{name}: {render_value(item)}" for name, item in value.items()) + " }"
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]"
        return "[ " + ", ".join(render_value(item) for item in value) + " ]"
    if isinstance(value, bytes):
        return f"BinData({getattr(value, 'subtype', 0)}, {bytes(value).hex().upper()})"
    return str(value)
