"""The key of a hashed index field: ``BSONElementHasher::hash64`` (``src/mongo/db/hasher.cpp``) with seed 0.

MD5 over the little-endian seed, then for the value its canonical type (an int32) and its bytes as BSON stores
them: numbers of every type squashed to one int64 (``safeNumberLongForHash``), documents and arrays element by
element (type, field name, value) up to the terminating EOO. The first 8 bytes of the digest, read as a signed
little-endian int64, are the key: ``{check: 42}`` hashes to -944302157085130861, the server's own startup check.
"""

from __future__ import annotations

import datetime
import hashlib
import math
import struct
from collections.abc import Mapping
from typing import Any

from bson import Binary, Code, Decimal128, Int64, MaxKey, MinKey, ObjectId, Regex, Timestamp
from bson.datetime_ms import DatetimeMS

from idxadvisor.whatif.bsonorder import (
    MISSING,
    RANK_ARRAY,
    RANK_BINDATA,
    RANK_BOOL,
    RANK_CODE,
    RANK_DATE,
    RANK_MAXKEY,
    RANK_MINKEY,
    RANK_NULL,
    RANK_NUMBER,
    RANK_OBJECT,
    RANK_OBJECTID,
    RANK_REGEX,
    RANK_STRING,
    RANK_UNDEFINED,
    UNDEFINED,
    datetime_millis,
    is_number,
    regex_flags_text,
)
from idxadvisor.whatif.query import Unsupported

_LONG_MAX = 2**63 - 1
_LONG_MIN = -(2**63)


def hash64(value: Any) -> Int64:
    """The hashed-index key of one value (a missing field hashes as null)."""
    digest = hashlib.md5(struct.pack("<i", 0))
    _add_value(digest, value)
    return Int64(struct.unpack("<q", digest.digest()[:8])[0])


def _add_value(digest: Any, value: Any) -> None:
    rank, payload = _typed_bytes(value)
    digest.update(struct.pack("<i", rank))
    _add_payload(digest, value, payload)


def _add_payload(digest: Any, value: Any, payload: bytes | None) -> None:
    """A value's bytes, or for a document or array each element (type, name, value) and the closing EOO."""
    if payload is not None:
        digest.update(payload)
        return
    items = value.items() if isinstance(value, Mapping) else ((str(i), v) for i, v in enumerate(value))
    for name, item in items:
        item_rank, item_payload = _typed_bytes(item)
        digest.update(struct.pack("<i", item_rank))
        digest.update(name.encode("utf-8") + b"\0")
        _add_payload(digest, item, item_payload)
    digest.update(struct.pack("<i", 0))  # the EOO element: canonical type 0, no name, no value


def _typed_bytes(value: Any) -> tuple[int, bytes | None]:
    """The canonical type and the value bytes; ``None`` bytes for documents and arrays (hashed element-wise)."""
    if value is None or value is MISSING:
        return RANK_NULL, b""
    if value is UNDEFINED:
        return RANK_UNDEFINED, b""
    if isinstance(value, bool):
        return RANK_BOOL, b"\x01" if value else b"\x00"
    if is_number(value) or isinstance(value, Int64):
        return RANK_NUMBER, struct.pack("<q", _number_for_hash(value))
    if isinstance(value, Code):
        if value.scope is not None:
            raise Unsupported("hashing JavaScript code with scope is not modelled")
        return RANK_CODE, _string_bytes(str(value))
    if isinstance(value, str):
        return RANK_STRING, _string_bytes(value)
    if isinstance(value, Mapping):
        return RANK_OBJECT, None
    if isinstance(value, (list, tuple)):
        return RANK_ARRAY, None
    if isinstance(value, ObjectId):
        return RANK_OBJECTID, value.binary
    if isinstance(value, (DatetimeMS, datetime.datetime)):
        millis = int(value) if isinstance(value, DatetimeMS) else datetime_millis(value)
        return RANK_DATE, struct.pack("<q", millis)
    if isinstance(value, Timestamp):
        # Old servers hashed timestamps with the canonical type of dates; which one today's use is not pinned down.
        raise Unsupported("hashing timestamps is not modelled")
    if isinstance(value, (Binary, bytes)):
        subtype = getattr(value, "subtype", 0)
        return RANK_BINDATA, struct.pack("<iB", len(value), subtype) + bytes(value)
    if isinstance(value, Regex):
        return RANK_REGEX, value.pattern.encode("utf-8") + b"\0" + regex_flags_text(value).encode() + b"\0"
    if isinstance(value, MinKey):
        return RANK_MINKEY, b""
    if isinstance(value, MaxKey):
        return RANK_MAXKEY, b""
    raise Unsupported(f"hashing values of type {type(value).__name__} is not modelled")


def _string_bytes(text: str) -> bytes:
    data = text.encode("utf-8")
    return struct.pack("<i", len(data) + 1) + data + b"\0"


def _number_for_hash(value: Any) -> int:
    """``BSONElement::safeNumberLongForHash``: integers as they are, doubles and decimals truncated toward zero and
    clamped to the int64 range."""
    if isinstance(value, Decimal128):
        number = value.to_decimal()
        if number.is_nan():
            raise Unsupported("hashing NaN is not modelled")
        return _clamp(int(number) if number.is_finite() else (1 if number > 0 else -1) * 2**64)
    if isinstance(value, float):
        if math.isnan(value):
            return 0  # the server's hasher test: NaN hashes as zero
        if math.isinf(value):
            return _LONG_MAX if value > 0 else _LONG_MIN
        return _clamp(int(value))
    return _clamp(int(value))


def _clamp(number: int) -> int:
    return max(_LONG_MIN, min(_LONG_MAX, number))
