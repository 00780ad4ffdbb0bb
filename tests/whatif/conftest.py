"""Helpers for the what-if tests: reading ``shared/planner/cases.json`` the way the cases mean it.

Case documents and filters are relaxed Extended JSON where plain JSON numbers stand for the mongo shell's
doubles (planner-semantics.md §14), so they are decoded as floats; Extended JSON wrappers
(``$numberInt``, ``$timestamp``, ...) keep their own types and ``$undefined`` stays undefined.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from idxadvisor.indexes.model import IndexSpec
from idxadvisor.ingest.samples import UNDEFINED, decode_extended_json
from idxadvisor.whatif import WhatIfQuery

_EJSON_MARKERS = {
    "$oid", "$date", "$numberInt", "$numberLong", "$numberDouble", "$numberDecimal", "$binary", "$uuid",
    "$regularExpression", "$timestamp", "$minKey", "$maxKey", "$symbol", "$code", "$scope", "$dbPointer",
}

VERSION_OF = {None: (8, 0), ">=8.0": (8, 0), ">=8.1": (8, 1), "5.0-7.x": (7, 0), "classic engine": (8, 0)}


def shell_value(raw: Any) -> Any:
    """Relaxed Extended JSON with the shell's number semantics (plain numbers are doubles)."""
    if isinstance(raw, dict):
        keys = set(raw)
        if keys == {"$undefined"}:
            return UNDEFINED
        if keys and keys <= _EJSON_MARKERS:
            return decode_extended_json(json.dumps(raw))
        return {key: shell_value(value) for key, value in raw.items()}
    if isinstance(raw, list):
        return [shell_value(item) for item in raw]
    if isinstance(raw, int) and not isinstance(raw, bool):
        return float(raw)
    return raw


def load_cases(shared: Path) -> list[dict[str, Any]]:
    with (shared / "planner" / "cases.json").open(encoding="utf-8") as handle:
        return json.load(handle)


def case_documents(case: dict[str, Any]) -> list[dict[str, Any]]:
    return [shell_value(doc) for doc in case["docs"]]


def case_query(case: dict[str, Any]) -> WhatIfQuery:
    raw = case["query"]
    return WhatIfQuery(
        command=raw.get("command", "find"),
        filter=shell_value(raw.get("filter") or {}),
        sort=shell_value(raw["sort"]) if raw.get("sort") else None,
        projection=shell_value(raw["projection"]) if raw.get("projection") else None,
        limit=raw.get("limit"),
        skip=raw.get("skip"),
    )


def case_indexes(case: dict[str, Any]) -> list[IndexSpec]:
    options = case.get("indexOptions") or [{}] * len(case["indexes"])
    specs = []
    for pattern, extra in zip(case["indexes"], options):
        extra = dict(extra or {})
        collation = extra.pop("collation", None)
        specs.append(IndexSpec.from_key(pattern, sparse=bool(extra.get("sparse")),
                                        unique=bool(extra.get("unique")), collation=collation))
    return specs


def case_version(case: dict[str, Any]) -> tuple[int, int]:
    return VERSION_OF[case.get("versions")]


def plan_stage_names(node: dict[str, Any] | None) -> list[str]:
    if not node:
        return []
    names = [node["stage"]]
    if "inputStage" in node:
        names += plan_stage_names(node["inputStage"])
    for child in node.get("inputStages", ()):
        names += plan_stage_names(child)
    return names


def check_expectations(case: dict[str, Any], result: dict[str, Any], version: tuple[int, int]) -> list[str]:
    """Every ``expect`` field the result gets wrong (an empty list means exact)."""
    problems: list[str] = []
    names = plan_stage_names(result.get("plan"))
    for name, wanted in case["expect"].items():
        got: Any
        if name == "stagesContain":
            ok = all(stage in names for stage in wanted)
            got = names
        elif name == "stagesAbsent":
            ok = not any(stage in names for stage in wanted)
            got = names
        elif name == "indexBoundsOneOf":
            got = result.get("indexBounds")
            ok = got in wanted
        elif name == "indexBoundsIfIndexed":
            got = result.get("indexBounds")
            ok = got is None or got == wanted
        elif name == "countScanBounds":
            got = result.get("countScanBounds")
            ok = got == shell_value(wanted)
        elif name == "expressOrIdhack":
            got = result.get("stages", [])
            ok = wanted == any(s.startswith("EXPRESS") or s == "IDHACK" for s in got)
        elif name == "countScanStages":
            got = names.count("COUNT_SCAN")
            ok = got == wanted
        elif name == "nReturnedBefore80":
            if version >= (8, 0):
                continue
            got = result.get("nReturned")
            ok = got == wanted
        else:
            got = result.get(name, "<absent>")
            ok = got == wanted
        if not ok:
            problems.append(f"{name}: expected {wanted!r}, got {got!r}")
    for name, values in (case.get("disputed") or {}).items():
        if name in result and result[name] != values["model"]:
            problems.append(f"{name} (disputed): the model says {values['model']!r}, got {result[name]!r}")
    return problems


CONFORMANCE_SCORE: dict[str, Any] = {}


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if CONFORMANCE_SCORE:
        terminalreporter.write_sep("-", "what-if conformance (shared/planner/cases.json)")
        terminalreporter.write_line(
            "exact {exact} / unsupported {unsupported} / wrong {wrong} of {total}".format(**CONFORMANCE_SCORE))
        for case_id, reason in CONFORMANCE_SCORE.get("unsupported_ids", []):
            terminalreporter.write_line(f"  unsupported {case_id}: {reason}")
