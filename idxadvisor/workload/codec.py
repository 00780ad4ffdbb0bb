"""Shape statistics to JSON values and back, field by field, so that a loaded digest merges like a parsed one.

Every dataclass a ``ShapeStats`` holds is written by walking its ``dataclasses.fields``: a field without a codec of its
own must hold a JSON scalar (a number, a string, a bool or None) and is written as it is, so a counter added to
``ShapeStats`` later is saved without a change here, and a structured field added without a codec fails loudly when
the first workload is saved rather than being dropped. ``NOT_SAVED`` lists the fields left out on purpose.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

from idxadvisor.models.events import Event
from idxadvisor.shapes.digest import (
    Burst,
    BurstLog,
    CappedSet,
    LiteralValues,
    PlanCost,
    PlanOrder,
    PlanRun,
    RunLog,
    ShapeStats,
    TimeBucket,
    Timeline,
)
from idxadvisor.shapes.literals import FieldLiterals
from idxadvisor.shapes.literals import decode as decode_literals
from idxadvisor.shapes.literals import encode as encode_literals
from idxadvisor.shapes.shape import Branches, ElemMatch, Filter, Node, QueryShape, finish
from idxadvisor.shapes.sketch import DurationHistogram
from idxadvisor.shapes.timing import SKETCHED as TIMING_SKETCHED
from idxadvisor.shapes.timing import UNITS as TIMING_UNITS
from idxadvisor.shapes.timing import TimeBreakdown
from idxadvisor.workload.redact import redact_command

_SCALARS = (int, float, str, bool, type(None))

#: Fields deliberately not saved, with the reason.
NOT_SAVED: dict[tuple[type, str], str] = {
    (ShapeStats, "_point_lookup"): "a cache of what the shape itself says (point_lookup_field), worked out again",
    (FieldLiterals, "distinct"): "checksums of literal values: a workload file keeps no value, only their number",
}


@dataclass(frozen=True)
class _Codec:
    key: str
    encode: Callable[[Any], Any]
    decode: Callable[[Any], Any]


def _encode_fields(value: Any, codecs: dict[str, _Codec]) -> dict[str, Any]:
    encoded: dict[str, Any] = {}
    for item in fields(value):
        if (type(value), item.name) in NOT_SAVED:
            continue
        current = getattr(value, item.name)
        codec = codecs.get(item.name)
        if codec is not None:
            encoded[codec.key] = codec.encode(current)
        elif isinstance(current, _SCALARS):
            encoded[item.name] = current
        else:
            raise TypeError(f"{type(value).__name__}.{item.name} holds a {type(current).__name__}, which has no "
                            "workload codec: add one in idxadvisor/workload/codec.py")
    return encoded


class Damage(ValueError):
    """What is wrong in a workload file, and where: ``shapes[3].duration.counts: a count is negative``."""

    def __init__(self, reason: str, where: tuple[str, ...] = ()) -> None:
        super().__init__(reason)
        self.reason = reason
        self.where = where

    def __str__(self) -> str:
        return f"{_joined(self.where)}: {self.reason}" if self.where else self.reason


def _joined(where: tuple[str, ...]) -> str:
    return "".join(part if part.startswith("[") or not index else f".{part}" for index, part in enumerate(where))


def damage_at(where: str, exc: Exception) -> Damage:
    """``exc``, met while decoding ``where``, as the ``Damage`` that names the field it is in (the outermost first)."""
    if isinstance(exc, Damage):
        return Damage(exc.reason, (where, *exc.where))
    if isinstance(exc, KeyError):
        return Damage(f"the field {exc.args[0]!r} is missing", (where,))
    if isinstance(exc, (TypeError, AttributeError)):
        return Damage(f"a value of the wrong type ({exc})", (where,))
    reason = str(exc) or type(exc).__name__
    return Damage(reason.removeprefix(f"{where} "), (where,))  # "count must be …" at count: "must be …"


DECODE_ERRORS = (KeyError, TypeError, ValueError, AttributeError, OverflowError)


def _decode_fields(target: Any, document: dict[str, Any], codecs: dict[str, _Codec], skip: tuple[str, ...] = ()) -> Any:
    if not isinstance(document, dict):
        raise Damage(f"must be an object, not {_json_type(document)}")
    for item in fields(target):
        if item.name in skip or (type(target), item.name) in NOT_SAVED:
            continue
        codec = codecs.get(item.name)
        key = codec.key if codec is not None else item.name
        if key not in document:
            continue  # a file written before this field existed: it keeps its default
        value = document[key]
        try:
            if codec is not None:
                value = codec.decode(value)
            else:
                check_scalar(value, str(item.type), key, signed=item.name in SIGNED)
        except DECODE_ERRORS as exc:
            raise damage_at(key, exc) from None
        setattr(target, item.name, value)
    return target


def _json_type(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "text", bool: "true or false", type(None): "null"}.get(
        type(value), "a number")


_COUNTER_LIMIT = 2**63  # a server's counters are 64-bit: anything larger is damage, and would overflow a division
MAX_TEXT = 1 << 20  # a saved name, shape text or plan summary: a server logs nothing near a MiB in one
#: Number fields that may be negative: times in milliseconds since the epoch (before 1970 is a date all the same).
#: Every other number in a workload file counts or measures something, and is refused below 0.
SIGNED = frozenset({"first_ms", "last_ms", "start_ms", "end_ms"})


def check_scalar(value: Any, annotation: str, key: str, signed: bool = False) -> None:
    """A saved scalar of the kind its field's annotation names, so that a hand-edited or damaged file is refused as
    it is read rather than met half-way through the analysis: a whole number where the field is an ``int`` (a
    count logged as a double, 10.0, is one), any number for a ``float``, true or false for a ``bool``, text for a
    ``str``, null only where the field may be None. Numbers are finite, below 2**63, and not negative unless
    ``signed``; text is at most ``MAX_TEXT`` characters."""
    kinds = {kind.strip() for kind in annotation.split("|")}
    if value is None:
        fits = "None" in kinds
    elif isinstance(value, bool):
        fits = "bool" in kinds
    elif isinstance(value, (int, float)):
        if kinds & {"int", "float"} and not -_COUNTER_LIMIT < value < _COUNTER_LIMIT:
            raise ValueError(f"{key} is out of range")
        if kinds & {"int", "float"} and value < 0 and not signed:
            raise ValueError(f"{key} is negative ({value:g})")
        fits = "float" in kinds or ("int" in kinds and (isinstance(value, int) or value.is_integer()))
    else:
        fits = isinstance(value, str) and "str" in kinds
        if fits and len(value) > MAX_TEXT:
            raise ValueError(f"{key} is longer than {MAX_TEXT:,} characters")
    if not fits:
        expected = [name for kind, name in _KIND_NAMES if kind in kinds]
        raise ValueError(f"{key} must be {' or '.join(expected) or 'a number, a string or null'}")


def count(value: Any, key: str = "a count") -> int:
    """A saved count: a whole number from 0 to 2**63 (not text, not true, not -5)."""
    check_scalar(value, "int", key)
    return int(value)


def counts(document: Any, key: str) -> dict[str, int]:
    """A saved ``{name: count}`` object (plans, apps, skipped events)."""
    if not isinstance(document, dict):
        raise Damage(f"must be an object, not {_json_type(document)}")
    return {str(name): count(value, f"{key}[{name!r}]") for name, value in document.items()}


_KIND_NAMES = (("int", "a whole number"), ("float", "a number"), ("bool", "true or false"), ("str", "text"),
               ("None", "null"))


def strings(values: list[Any]) -> set[str]:
    if not isinstance(values, list) or not all(isinstance(value, str) for value in values):
        raise ValueError("a set of names holds something other than text")
    if any(len(value) > MAX_TEXT for value in values):
        raise ValueError(f"a name is longer than {MAX_TEXT:,} characters")
    return set(values)


def _pairs(counts: dict[int, int]) -> list[list[int]]:
    return [[bucket, count] for bucket, count in sorted(counts.items())]


_MAX_BIN = 100_000  # histogram and coarse bins of any duration a server can log stay in the thousands


def _unpairs(pairs: list[list[int]]) -> dict[int, int]:
    decoded = {count(bucket, "a bin"): count(number, "a bin's count") for bucket, number in pairs}
    if any(bucket >= _MAX_BIN for bucket in decoded):
        raise ValueError("a histogram bin is out of range")
    return decoded


def _time(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _untime(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value is not None else None


# -- the classes a ShapeStats holds ---------------------------------------------------------------------------------

_HISTOGRAM = {"counts": _Codec("counts", _pairs, _unpairs)}
_BUCKET = {"bins": _Codec("bins", lambda bins: None, _unpairs)}  # written from bin_counts(): see _encode_buckets
_CAPPED = {"members": _Codec("members", sorted, strings)}


def encode_histogram(histogram: DurationHistogram) -> dict[str, Any]:
    return _encode_fields(histogram, _HISTOGRAM)


def decode_histogram(document: dict[str, Any]) -> DurationHistogram:
    return _decode_fields(DurationHistogram(), document, _HISTOGRAM)


def encode_capped(values: CappedSet) -> dict[str, Any]:
    values.kept()  # trimmed to the cap first, so that a digest is saved the same whatever its merge history
    return _encode_fields(values, _CAPPED)


def decode_capped(document: dict[str, Any]) -> CappedSet:
    return _decode_fields(CappedSet(), document, _CAPPED)


def _encode_buckets(buckets: dict[int, TimeBucket]) -> list[dict[str, Any]]:
    return [{"start": start, **_encode_fields(bucket, _BUCKET), "bins": _pairs(bucket.bin_counts())}
            for start, bucket in sorted(buckets.items())]


#: The minutes (since the epoch) a report can print: years 1 to 9999.
_MINUTES = range(-1_035_593_280, 4_223_371_680)


def _minute(value: Any) -> int:
    minute = int(value)
    if minute not in _MINUTES:
        raise ValueError(f"timeline minute {minute} is out of range")
    return minute


def _decode_buckets(documents: list[dict[str, Any]]) -> dict[int, TimeBucket]:
    buckets = {_minute(document["start"]): _decode_fields(TimeBucket(), document, _BUCKET) for document in documents}
    for bucket in buckets.values():
        bucket.compact()
    return buckets


_TIMELINE = {"buckets": _Codec("buckets", _encode_buckets, _decode_buckets)}


def _decode_run(start: Any, duration: Any) -> tuple[float, float]:
    start_ms, duration_ms = float(start), float(duration)
    if not (_MINUTES.start * 60_000 <= start_ms < _MINUTES.stop * 60_000 and 0 <= duration_ms < _COUNTER_LIMIT):
        raise ValueError("an aggregation run's start or duration is out of range")
    return start_ms, duration_ms


_RUNS = {"runs": _Codec("runs", lambda runs: [list(run) for run in sorted(runs)],
                        lambda runs: [_decode_run(start, duration) for start, duration in runs])}


def encode_timeline(timeline: Timeline) -> dict[str, Any]:
    return _encode_fields(timeline, _TIMELINE)


def decode_timeline(document: dict[str, Any]) -> Timeline:
    return _decode_fields(Timeline(), document, _TIMELINE)


def encode_runs(runs: RunLog) -> dict[str, Any]:
    runs.latest()  # trimmed to the latest runs first, so that a digest is saved the same whatever its merge history
    return _encode_fields(runs, _RUNS)


def decode_runs(document: dict[str, Any]) -> RunLog:
    return _decode_fields(RunLog(), document, _RUNS)


def encode_literal_values(values: LiteralValues) -> dict[str, Any]:
    values.distinct()  # trimmed first, so that a digest is saved the same whatever its merge history
    return {"counts": [[key, count] for key, count in sorted(values.counts.items())], "runs": values.runs,
            "cutoff": values.cutoff}


def decode_literal_values(document: Any) -> LiteralValues:
    if not isinstance(document, dict):
        raise ValueError("literal_values must be an object")
    pairs, runs, cutoff = document.get("counts", []), document.get("runs", 0), document.get("cutoff")
    check_scalar(runs, "int", "literal_values.runs")
    check_scalar(cutoff, "int | None", "literal_values.cutoff")
    if not isinstance(pairs, list) or not all(isinstance(pair, list) and len(pair) == 2 for pair in pairs):
        raise ValueError("literal_values.counts must be [fingerprint, runs] pairs")
    counts = {int(key): int(count) for key, count in pairs}
    if any(not 0 <= key < 2**32 or not 0 < count < _COUNTER_LIMIT for key, count in counts.items()) \
            or runs < sum(counts.values()) or (cutoff is not None and not 0 <= cutoff < 2**32):
        raise ValueError("literal_values holds a fingerprint or count out of range")
    return LiteralValues(counts, int(runs), None if cutoff is None else int(cutoff))


def _encode_plan_costs(costs: dict[str, PlanCost]) -> dict[str, Any]:
    return {plan: _encode_fields(cost, {}) for plan, cost in sorted(costs.items())}


def _decode_plan_costs(documents: dict[str, Any]) -> dict[str, PlanCost]:
    costs = {str(plan): _decode_fields(PlanCost(), document, {}) for plan, document in documents.items()}
    if any(cost.count < 1 for cost in costs.values()):
        raise ValueError("a plan's cost counts no execution")
    return costs


def _encode_plan_runs(runs: list[PlanRun]) -> list[dict[str, Any]]:
    return [_encode_fields(run, {}) for run in runs]


def _decode_plan_runs(documents: list[dict[str, Any]]) -> list[PlanRun]:
    return [_decode_fields(PlanRun(0.0, "", 0.0, ""), document, {}) for document in documents]


_PLAN_ORDER = {"runs": _Codec("runs", _encode_plan_runs, _decode_plan_runs)}


def _encode_burst(burst: Burst | None) -> dict[str, Any] | None:
    return _encode_fields(burst, {}) if burst is not None else None


def _decode_burst(document: dict[str, Any] | None) -> Burst | None:
    return _decode_fields(Burst(0.0, 0.0), document, {}) if document is not None else None


_BURSTS = {
    "open": _Codec("open", lambda open_: {connection: [_encode_burst(burst) for burst in bursts]
                                          for connection, bursts in sorted(open_.items())},
                   lambda open_: {str(connection): [_decode_burst(burst) for burst in bursts]
                                  for connection, bursts in open_.items()}),
    "worst": _Codec("worst", _encode_burst, _decode_burst),
    "sizes": _Codec("sizes", _pairs, _unpairs),
}


# -- shapes ----------------------------------------------------------------------------------------------------------


def _encode_node(node: Node) -> Any:
    if isinstance(node, str):
        return node
    if isinstance(node, ElemMatch):
        inner = node.inner
        encoded_inner = ({"classes": list(inner)} if inner and isinstance(inner[0], str)
                         else {"filter": encode_filter(inner)})  # type: ignore[arg-type]
        return {"elemMatch": encoded_inner, "also": list(node.also)}
    if isinstance(node, Branches):
        return {"branches": [encode_filter(branch) for branch in node.filters]}
    return list(node)  # several operator classes on one field


def _decode_node(value: Any) -> Node:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return tuple(str(item) for item in value)
    if "elemMatch" in value:
        inner = value["elemMatch"]
        decoded = tuple(inner["classes"]) if "classes" in inner else decode_filter(inner["filter"])
        return ElemMatch(decoded, tuple(value.get("also", ())))
    return Branches(tuple(decode_filter(branch) for branch in value["branches"]))


def encode_filter(shaped: Filter) -> list[list[Any]]:
    return [[key, _encode_node(node)] for key, node in shaped]


def decode_filter(value: list[list[Any]]) -> Filter:
    return tuple((str(key), _decode_node(node)) for key, node in value)


def encode_shape(shape: QueryShape) -> dict[str, Any]:
    return {"ns": shape.ns, "op": shape.op, "filter": encode_filter(shape.filter),
            "sort": [list(pair) for pair in shape.sort], "projection": [list(pair) for pair in shape.projection],
            "options": list(shape.options), "stages": list(shape.stages), "unknown": shape.unknown,
            "text": shape.text, "fingerprint": shape.fingerprint}


def decode_shape(document: dict[str, Any]) -> QueryShape:
    """The shape, its text and fingerprint worked out again (so they match what this version gives for a log)."""
    for key in ("ns", "op"):
        check_scalar(document[key], "str", key)
    return finish((document["ns"], document["op"], decode_filter(document["filter"]),
                   tuple((str(name), direction) for name, direction in document["sort"]),
                   tuple((str(name), str(kind)) for name, kind in document["projection"]),
                   tuple(document["options"]), tuple(document["stages"]), document["unknown"]))


# -- the representative execution ------------------------------------------------------------------------------------


def encode_representative(event: Event | None) -> dict[str, Any] | None:
    """The latest complete execution, with every literal value taken out of its command."""
    if event is None:
        return None
    command = event.originating_command if event.op == "getMore" else event.command
    return {"ts": _time(event.ts), "ns": event.ns, "op": event.op,
            "command": redact_command(command) if command is not None else None}


def decode_representative(document: dict[str, Any] | None) -> Event | None:
    if document is None:
        return None
    key = "originating_command" if document["op"] == "getMore" else "command"
    return Event(document["ns"], document["op"], ts=_untime(document["ts"]), **{key: document["command"]})


def encode_breakdown(breakdown: TimeBreakdown | None) -> dict[str, Any] | None:
    if breakdown is None:
        return None
    return {"executions": breakdown.executions, "duration_us": breakdown.duration_us,
            "components": {name: list(numbers) for name, numbers in sorted(breakdown.components.items())},
            "histograms": {name: encode_histogram(histogram)
                           for name, histogram in sorted(breakdown.histograms.items())}}


def decode_breakdown(document: dict[str, Any] | None) -> TimeBreakdown | None:
    """A saved breakdown, every name one of ``COMPONENTS`` and every number a whole one in range (else the file is
    refused)."""
    if document is None:
        return None
    if not isinstance(document, dict):
        raise ValueError("timing must be an object")
    breakdown = TimeBreakdown()
    for key in ("executions", "duration_us"):
        value = document.get(key)
        check_scalar(value, "int", f"timing.{key}")
        if value < 0:
            raise ValueError(f"timing.{key} is negative")
        setattr(breakdown, key, int(value))
    components = document.get("components", {})
    if not isinstance(components, dict):
        raise ValueError("timing.components must be an object")
    for name, numbers in components.items():
        if name not in TIMING_UNITS:
            raise ValueError(f"timing.components names an unknown component {name!r}")
        if not isinstance(numbers, list) or len(numbers) != 3:
            raise ValueError(f"timing.components.{name} must be [sum, executions, duration]")
        for value in numbers:
            check_scalar(value, "int", f"timing.components.{name}")
            if value < 0:
                raise ValueError(f"timing.components.{name} holds a negative number")
        breakdown.components[name] = [int(value) for value in numbers]
    histograms = document.get("histograms", {})
    if not isinstance(histograms, dict):
        raise ValueError("timing.histograms must be an object")
    for name, histogram in histograms.items():
        if name not in TIMING_SKETCHED:
            raise ValueError(f"timing.histograms names an unknown time component {name!r}")
        breakdown.histograms[name] = decode_histogram(histogram)
    return breakdown


# -- shape statistics ------------------------------------------------------------------------------------------------

_STATS = {
    "shape": _Codec("shape", encode_shape, decode_shape),
    "duration": _Codec("duration", encode_histogram, decode_histogram),
    "connections": _Codec("connections", encode_capped, decode_capped),
    "server_hashes": _Codec("server_hashes", lambda hashes: {name: encode_capped(values)
                                                             for name, values in sorted(hashes.items())},
                            lambda hashes: {name: decode_capped(values) for name, values in hashes.items()}),
    "plans": _Codec("plans", dict, lambda document: counts(document, "plans")),
    "apps": _Codec("apps", dict, lambda document: counts(document, "apps")),
    "first_seen": _Codec("first_seen", _time, _untime),
    "last_seen": _Codec("last_seen", _time, _untime),
    "timeline": _Codec("timeline", encode_timeline, decode_timeline),
    "runs": _Codec("runs", encode_runs, decode_runs),
    "literal_values": _Codec("literal_values", lambda values: encode_literal_values(values),
                             lambda document: decode_literal_values(document)),
    "_latest": _Codec("representative", encode_representative, decode_representative),
    "plan_costs": _Codec("plan_costs", _encode_plan_costs, _decode_plan_costs),
    "plan_order": _Codec("plan_order", lambda order: _encode_fields(order, _PLAN_ORDER),
                         lambda document: _decode_fields(PlanOrder(), document, _PLAN_ORDER)),
    "literals": _Codec("literals", encode_literals, decode_literals),
    "timing": _Codec("timing", encode_breakdown, decode_breakdown),
    "bursts": _Codec("bursts", lambda bursts: _encode_fields(bursts, _BURSTS),
                     lambda document: _decode_fields(BurstLog(), document, _BURSTS)),
}


def encode_stats(stats: ShapeStats) -> dict[str, Any]:
    return _encode_fields(stats, _STATS)


def decode_stats(document: dict[str, Any]) -> ShapeStats:
    if not isinstance(document, dict):
        raise Damage(f"must be an object, not {_json_type(document)}")
    try:
        stats = ShapeStats(decode_shape(document["shape"]))
    except DECODE_ERRORS as exc:
        raise damage_at("shape", exc) from None
    return _decode_fields(stats, document, _STATS, skip=("shape",))
