"""What a shape's literal filter values say about an index on their fields, without keeping a single value.

For every execution of a shape (so that a log gives the same numbers however it is split into blocks), the
top-level filter fields' literal values are measured: how many, how many are strings and their total and largest
length (the width of an index key on the field), and, for equality and ``$in`` values, a checksum of each distinct
value, kept up to ``DISTINCT_CAP`` (two distinct values in a hundred queries is a low-cardinality field: an index
that leads with it divides the collection in two). The checksums never leave the process: a workload file keeps
only their number (``encode`` / ``decode``; ``workload.codec.NOT_SAVED``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import isnan
from typing import Any
from zlib import crc32

import orjson

#: Distinct equality values counted per field; more reads as "many".
DISTINCT_CAP = 8
#: Values of one ``$in`` list measured (a list of thousands says no more than its first few).
IN_VALUES = 4
_EQUALITY_OPERATORS = ("$eq", "$in")
_RANGE_OPERATORS = ("$gt", "$gte", "$lt", "$lte")
#: Index key bytes of the values that are not strings, by their extended JSON wrapper.
_WIDTHS = {"$oid": 12, "$date": 8, "$numberLong": 8, "$numberInt": 4, "$numberDouble": 8, "$numberDecimal": 16,
           "$timestamp": 8, "$binary": 16, "$uuid": 16}


@dataclass(slots=True)
class FieldLiterals:
    """One filter field's literal values, as counts and lengths."""

    values: int = 0  # values measured (equality, $in elements and range bounds)
    strings: int = 0
    string_bytes: int = 0
    longest: int = 0
    equalities: int = 0  # equality and $in values measured
    # checksums of distinct equality values (never saved), 4 bytes each, big-endian and ascending: one small bytes
    # object rather than a set (216 bytes even for one value) of int objects, in every field of every shape
    distinct: bytes = b""
    distinct_count: int = 0  # distinct equality values: the checksums', or the most a workload file read back held
    many: bool = False  # more distinct equality values than DISTINCT_CAP

    def add(self, value: Any, equality: bool) -> None:
        self.values += 1
        if type(value) is str:
            length = len(value)
            self.strings += 1
            self.string_bytes += length
            if length > self.longest:
                self.longest = length
            if equality:
                self.equalities += 1
                if not self.many:
                    self._remember(crc32(value.encode()))
            return
        if equality:
            self.equalities += 1
            if not self.many:
                self._remember(crc32(repr(value).encode()))

    def _remember(self, checksum: int) -> None:
        known, packed = self.distinct, checksum.to_bytes(4, "big")
        for start in range(0, len(known), 4):
            here = known[start:start + 4]
            if here == packed:
                return
            if here > packed:
                self.distinct = known[:start] + packed + known[start:]
                break
        else:
            self.distinct = known + packed
        if len(self.distinct) // 4 > self.distinct_count:
            self._counted(len(self.distinct) // 4)

    def merge(self, other: FieldLiterals) -> None:
        self.values += other.values
        self.strings += other.strings
        self.string_bytes += other.string_bytes
        self.longest = max(self.longest, other.longest)
        self.equalities += other.equalities
        if other.many or self.many:
            self.many, self.distinct, self.distinct_count = True, b"", 0
        else:
            union = checksums(self.distinct) | checksums(other.distinct)
            self.distinct = b"".join(checksum.to_bytes(4, "big") for checksum in sorted(union))
            self._counted(max(len(union), other.distinct_count))

    def _counted(self, count: int) -> None:
        self.distinct_count = max(self.distinct_count, count)
        if self.distinct_count > DISTINCT_CAP:
            self.many, self.distinct, self.distinct_count = True, b"", 0

    @property
    def average_string_bytes(self) -> float | None:
        """The average length of the string values, None when none was a string."""
        return self.string_bytes / self.strings if self.strings else None

    @property
    def distinct_values(self) -> int | None:
        """Distinct equality values seen (None: more than ``DISTINCT_CAP``, or no equality value)."""
        if self.many or not self.equalities:
            return None
        return self.distinct_count


def checksums(distinct: bytes | set[int]) -> set[int]:
    """The checksums ``FieldLiterals.distinct`` holds (a set of them is taken as it is)."""
    if isinstance(distinct, (bytes, bytearray)):
        return {int.from_bytes(distinct[start:start + 4], "big") for start in range(0, len(distinct), 4)}
    return set(distinct)


@dataclass(slots=True)
class LiteralStats:
    """Per top-level filter field of one shape, its ``FieldLiterals``, over the executions measured."""

    executions: int = 0
    fields: dict[str, FieldLiterals] = field(default_factory=dict)

    def observe(self, op: str, command: Any) -> None:
        """Measure one execution's filter (``op`` is the canonical operation, ``command`` the logged command)."""
        self.executions += 1
        document = filter_document(op, command)
        if type(document) is dict:
            self._walk(document, 0)

    def _walk(self, document: dict[str, Any], depth: int) -> None:
        for key, value in document.items():
            if key == "$and" and type(value) is list and depth < 3:
                for branch in value:
                    if type(branch) is dict:
                        self._walk(branch, depth + 1)
                continue
            if key.startswith("$"):
                continue
            self._field(key, value)

    def _field(self, name: str, value: Any) -> None:
        kind = type(value)
        if kind is str or kind is int or kind is float or kind is bool:
            found = self.fields.get(name)
            if found is None:
                found = self.fields[name] = FieldLiterals()
            found.add(value, True)
            return
        if kind is dict and value and next(iter(value)).startswith("$") and next(iter(value)) not in _WIDTHS:
            for operator, operand in value.items():
                if operator == "$in" and type(operand) is list:
                    for item in operand[:IN_VALUES]:
                        self._literals(name).add(_scalar(item), True)
                elif operator in _EQUALITY_OPERATORS:
                    self._literals(name).add(_scalar(operand), True)
                elif operator in _RANGE_OPERATORS:
                    self._literals(name).add(_scalar(operand), False)
            return
        self._literals(name).add(_scalar(value), True)

    def _literals(self, name: str) -> FieldLiterals:
        found = self.fields.get(name)
        if found is None:
            found = self.fields[name] = FieldLiterals()
        return found

    def merge(self, other: LiteralStats) -> None:
        self.executions += other.executions
        for name, theirs in other.fields.items():
            self._literals(name).merge(theirs)


#: Items of a document or array whose text stands for it; a larger one is taken by its size (a log line may hold an
#: array of thousands, and this runs for every execution).
_SMALL = 16


def _scalar(value: Any) -> Any:
    """A value as an index key holds it: an extended JSON wrapper as its payload (not a string: no length), a small
    document or array as its text (its length stands for its width), a larger one by its number of items."""
    kind = type(value)
    if kind is dict:
        wrapper = next(iter(value), None)
        if wrapper in _WIDTHS:
            return (wrapper, repr(value[wrapper])[:64])
        return (len(value) <= _SMALL and _text(value)) or ("document", len(value))
    if kind is list:
        return (len(value) <= _SMALL and _text(value)) or ("array", len(value))
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value
    return repr(value)[:64]


def _text(value: dict[str, Any] | list[Any]) -> str | None:
    """A small document's or array's JSON text; ``None`` for one nested deeper than orjson writes (a hostile log's
    thousand levels, which ``repr`` would follow to a RecursionError)."""
    try:
        return orjson.dumps(value, default=str).decode()
    except (orjson.JSONEncodeError, TypeError):
        return None


def filter_document(op: str, command: Any) -> Any:
    """The filter of a logged command: ``filter``, ``query`` or ``q`` (one statement), or a pipeline's leading
    ``$match``."""
    if type(command) is not dict:
        return None
    if op == "find":
        return command.get("filter")
    if op in ("count", "distinct", "findAndModify"):
        return command.get("query")
    if op in ("update", "delete"):
        if "q" in command:
            return command["q"]
        listed = command.get("updates" if op == "update" else "deletes")
        return listed[0].get("q") if type(listed) is list and len(listed) == 1 and type(listed[0]) is dict else None
    if op == "aggregate":
        pipeline = command.get("pipeline")
        if type(pipeline) is list and pipeline and type(pipeline[0]) is dict:
            return pipeline[0].get("$match")
    return None


#: Documents a cursor's first batch holds by default: a first reply of that many may have more to come.
FIRST_BATCH = 101


def first_reply_cap(op: str, command: Any) -> int | None:
    """At most how many documents a find or aggregate with a limit returns in its first reply: the least of its
    limit (a find's ``limit``, a pipeline's first ``$limit``), its batch size and the default first batch; None
    without a limit (or with a batch size of 0, whose first reply holds nothing). An execution that returned fewer
    returned everything its filter matched. (Called for every execution of a shape with a limit: the usual find, an
    int limit and no batch size, takes the first branch of each test.)"""
    if type(command) is not dict:
        return None
    if op == "find":
        limit, batch = command.get("limit"), command.get("batchSize")
    elif op == "aggregate" and type(command.get("pipeline")) is list:
        limit = next((stage["$limit"] for stage in command["pipeline"] if type(stage) is dict and "$limit" in stage),
                     None)
        cursor = command.get("cursor")
        batch = cursor.get("batchSize") if type(cursor) is dict else None
    else:
        return None
    if type(limit) is int:
        cap = limit if 0 < limit <= FIRST_BATCH else min(abs(limit), FIRST_BATCH)  # negative: one batch of that many
    elif type(limit) is float and not isnan(limit):
        cap = int(min(abs(limit), FIRST_BATCH))
    else:
        return None
    if batch is not None and type(batch) in (int, float) and 0 <= batch < cap:
        cap = int(batch)
    return cap or None


def encode(stats: LiteralStats) -> dict[str, Any]:
    """The counts and lengths, and the number of distinct values (never their checksums)."""
    return {"executions": stats.executions,
            "fields": {name: [item.values, item.strings, item.string_bytes, item.longest, item.equalities,
                              item.distinct_count, int(item.many)]
                       for name, item in sorted(stats.fields.items())}}


def decode(document: dict[str, Any]) -> LiteralStats:
    """``encode``'s document read back: without the checksums, two workload files merged count the larger number of
    distinct values rather than their union."""
    stats = LiteralStats(int(document.get("executions", 0)))
    for name, row in dict(document.get("fields", {})).items():
        values, strings, string_bytes, longest, equalities, distinct, many = (int(number) for number in row)
        stats.fields[str(name)] = FieldLiterals(values, strings, string_bytes, longest, equalities, b"", distinct,
                                                bool(many))
    return stats
