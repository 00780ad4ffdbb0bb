"""The what-if request: one ``find``, ``count``, ``distinct`` or ``aggregate`` as the estimator receives it.

:class:`WhatIfQuery` holds BSON-typed values (DESIGN.md "What-if output", grown by issue 11): ``command``,
``filter``, ``sort``, ``projection``, ``limit``, ``skip``, ``collation``, ``hint`` (an index name or a key
pattern), ``min``/``max``, ``key`` (distinct) and ``pipeline`` (aggregate). A request that is not a JSON object, or
whose known fields have the wrong type, is a usage error; a field or command the model does not know is kept in
``unknown`` and answered ``{"unsupported": reason}``, as any other request outside the model is.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bson import json_util
from bson.json_util import CANONICAL_JSON_OPTIONS

from idxadvisor.errors import UsageError
from idxadvisor.ingest.samples import MAX_NESTING, UNDEFINED, decode_extended_json, too_deep

QUERY_FIELDS = ("command", "filter", "sort", "projection", "limit", "skip", "collation", "hint", "min", "max",
                "key", "pipeline")
COMMANDS = ("find", "count", "distinct", "aggregate")


@dataclass(frozen=True)
class WhatIfQuery:
    """A query with BSON-typed values; ``limit`` < 0 means a single batch of ``-limit``."""

    command: str = "find"
    filter: Mapping[str, Any] = field(default_factory=dict)
    sort: Mapping[str, Any] | None = None
    projection: Mapping[str, Any] | None = None
    limit: int | None = None
    skip: int | None = None
    collation: Mapping[str, Any] | None = None
    hint: str | Mapping[str, Any] | None = None
    min: Mapping[str, Any] | None = None
    max: Mapping[str, Any] | None = None
    key: str | None = None
    pipeline: Sequence[Mapping[str, Any]] | None = None
    unknown: tuple[str, ...] = ()

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> WhatIfQuery:
        """From decoded (or raw) Extended JSON with the fields of :data:`QUERY_FIELDS`."""
        if not isinstance(obj, Mapping):
            raise UsageError("the query must be a JSON object")
        unknown = tuple(str(k) for k in obj if k not in QUERY_FIELDS)
        known = {k: v for k, v in obj.items() if k in QUERY_FIELDS}
        if too_deep(known, MAX_NESTING + 1):
            decoded = known  # explain answers unsupported; the round trip below would recurse too deeply
        else:
            try:
                decoded = decode_extended_json(json_util.dumps(json_safe(known), json_options=CANONICAL_JSON_OPTIONS))
            except (TypeError, ValueError) as exc:
                raise UsageError(f"the query is not valid Extended JSON: {exc}") from None
        command = decoded.get("command", "find")
        if not isinstance(command, str):
            raise UsageError("query command must be a string")
        if command not in COMMANDS:
            unknown += (f"command {command!r}",)
        flt = decoded.get("filter")
        if flt is None:
            flt = {}
        if not isinstance(flt, Mapping):
            raise UsageError("query filter must be an object")
        for name in ("sort", "projection", "collation", "min", "max"):
            value = decoded.get(name)
            if value is not None and not isinstance(value, Mapping):
                raise UsageError(f"query {name} must be an object")
        hint = decoded.get("hint")
        if hint is not None and not isinstance(hint, (str, Mapping)):
            raise UsageError("query hint must be an index name or a key pattern object")
        key = decoded.get("key")
        if command == "distinct" and not isinstance(key, str):
            raise UsageError("a distinct query needs a \"key\": the field name")
        pipeline = decoded.get("pipeline")
        if (command == "aggregate" or pipeline is not None) and (
                not isinstance(pipeline, list) or not all(isinstance(stage, Mapping) for stage in pipeline)):
            raise UsageError("an aggregate query needs a \"pipeline\": an array of stage objects")
        limit = _integer(decoded.get("limit"), "limit")
        skip = _integer(decoded.get("skip"), "skip")
        if skip is not None and skip < 0:
            raise UsageError("query skip must not be negative")
        return cls(command, flt, decoded.get("sort") or None, decoded.get("projection") or None, limit, skip,
                   decoded.get("collation") or None, hint or None, decoded.get("min") or None,
                   decoded.get("max") or None, key if isinstance(key, str) else None,
                   tuple(pipeline) if isinstance(pipeline, list) else None, unknown)

    def to_json(self) -> dict[str, Any]:
        """The request as a document (only the fields it has), for the output's ``query``."""
        out: dict[str, Any] = {"command": self.command, "filter": dict(self.filter)}
        for name in ("sort", "projection", "collation", "min", "max"):
            value = getattr(self, name)
            if value is not None:
                out[name] = dict(value)
        for name in ("limit", "skip", "key"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        if self.hint is not None:
            out["hint"] = self.hint if isinstance(self.hint, str) else dict(self.hint)
        if self.pipeline is not None:
            out["pipeline"] = [dict(stage) for stage in self.pipeline]
        return out


def _integer(value: Any, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or int(value) != value:
        raise UsageError(f"query {name} must be an integer")
    return int(value)


def json_safe(value: Any) -> Any:
    """A value ``bson.json_util`` can write: ``undefined`` (which bson has no type for) becomes the Extended JSON
    ``{"$undefined": true}`` that the sample and case readers decode back to undefined."""
    if value is UNDEFINED:
        return {"$undefined": True}
    if isinstance(value, Mapping):
        return {key: json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(item) for item in value]
    return value
