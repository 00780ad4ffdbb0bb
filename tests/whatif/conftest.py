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


ISSUE11_CASES = Path(__file__).with_name("planner_cases_issue11.json")


def load_issue11_cases() -> list[dict[str, Any]]:
    """The ground-truth cases for partial, collation, hashed, wildcard, $or, distinct, aggregate, min/max and express,
    each taken from a jstest assertion or the server source its ``source`` names. Same format as cases.json, with two
    additions: a case whose documents are those of an earlier case names it in ``docsFrom`` instead of repeating them,
    and ``serverVersions`` says which server versions the case holds for (informative; ``versions`` still selects the
    modelled version)."""
    with ISSUE11_CASES.open(encoding="utf-8") as handle:
        cases = json.load(handle)
    by_id = {case["id"]: case for case in cases}
    for case in cases:
        if "docsFrom" in case:
            case["docs"] = by_id[case["docsFrom"]]["docs"]
    return cases


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
        collation=raw.get("collation"),
        min=shell_value(raw["min"]) if raw.get("min") else None,
        max=shell_value(raw["max"]) if raw.get("max") else None,
        key=raw.get("key"),
        pipeline=shell_value(raw["pipeline"]) if raw.get("pipeline") is not None else None,
    )


def case_hint(case: dict[str, Any]) -> Any:
    """A key pattern, an index name, ``{$natural: 1}`` or None; passed as the query's hint (server semantics)."""
    return case.get("hint")


def case_indexes(case: dict[str, Any]) -> list[IndexSpec]:
    options = case.get("indexOptions") or [{}] * len(case["indexes"])
    specs = []
    for pattern, extra in zip(case["indexes"], options):
        extra = dict(extra or {})
        collation = extra.get("collation")
        if isinstance(collation, dict) and collation.get("locale") == "simple":
            collation = None
        partial = extra.get("partialFilterExpression")
        specs.append(IndexSpec.from_key(pattern, name=str(extra.get("name") or ""), sparse=bool(extra.get("sparse")),
                                        unique=bool(extra.get("unique")), collation=collation,
                                        partial_filter=shell_value(partial) if partial is not None else None,
                                        wildcard_projection=extra.get("wildcardProjection")))
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


def _find_stage(node: dict[str, Any] | None, name: str) -> dict[str, Any] | None:
    if not node:
        return None
    if node["stage"] == name:
        return node
    for child in ([node["inputStage"]] if "inputStage" in node else []) + list(node.get("inputStages", ())):
        found = _find_stage(child, name)
        if found is not None:
            return found
    return None


def _returned_values(case: dict[str, Any], result: dict[str, Any], path: str) -> list[Any] | None:
    """The values of ``path`` in the returned documents, in order (documents without ``_id`` get the estimator's
    generated ids, which follow their positions)."""
    from idxadvisor.whatif.estimator import _with_ids

    if "returnedIds" not in result:
        return None
    docs = _with_ids(case_documents(case))
    by_id = {json.dumps(shell_value(d["_id"]) if not isinstance(d["_id"], dict) else str(d["_id"]), default=str): d
             for d in docs}
    out = []
    for rid in result["returnedIds"]:
        doc = by_id.get(json.dumps(shell_value(rid) if not isinstance(rid, dict) else str(rid), default=str))
        if doc is None:
            return None
        value: Any = doc
        for part in path.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        out.append(value)
    return out


def _check_special(case: dict[str, Any], result: dict[str, Any], name: str, wanted: Any) -> tuple[bool, Any] | None:
    """Expectations of the issue-11 cases: error codes, rejected plans, returned values, SORT_MERGE inputs."""
    if name == "errorCode":
        got = (result.get("error") or {}).get("code")
        return got == wanted, got
    if name == "rejectedPlans":
        got = max(0, len(result.get("candidates") or []) - 1)
        return got == wanted, got
    if name == "returnedValues":
        got = {path: _returned_values(case, result, path) for path in wanted}
        return got == shell_value(wanted), got
    merge = _find_stage(result.get("plan"), "SORT_MERGE")
    if name == "fetchesPerBranch":
        inputs = (merge or {}).get("inputStages", [])
        got = bool(inputs) and all(s["stage"] == "FETCH" and s["inputStage"]["stage"] == "IXSCAN" for s in inputs)
        return got == wanted, got
    if name == "sortMergeCovered":
        got = merge is not None and not any(stage in ("FETCH", "COLLSCAN") for stage in plan_stage_names(merge))
        return got == wanted, got
    return None


def check_expectations(case: dict[str, Any], result: dict[str, Any], version: tuple[int, int]) -> list[str]:
    """Every ``expect`` field the result gets wrong (an empty list means exact)."""
    problems: list[str] = []
    names = plan_stage_names(result.get("plan"))
    for name, wanted in case["expect"].items():
        got: Any
        special = _check_special(case, result, name, wanted)
        if special is not None:
            ok, got = special
        elif name == "stagesContain":
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
            ok = got == shell_value(wanted) if name in ("winningIndex",) else got == wanted
        if not ok:
            problems.append(f"{name}: expected {wanted!r}, got {got!r}")
    for name, values in (case.get("disputed") or {}).items():
        if name in result and result[name] != values["model"]:
            problems.append(f"{name} (disputed): the model says {values['model']!r}, got {result[name]!r}")
    return problems


CONFORMANCE_SCORE: dict[str, Any] = {}


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """The score of each case file, per category (exact / unsupported / wrong), and why cases are unsupported."""
    for label, score in CONFORMANCE_SCORE.items():
        terminalreporter.write_sep("-", f"what-if conformance ({label})")
        terminalreporter.write_line(
            "exact {exact} / unsupported {unsupported} / wrong {wrong} of {total}".format(**score))
        for category, tally in sorted(score["categories"].items()):
            terminalreporter.write_line(f"  {category:<16} exact {tally['exact']:>3} / unsupported "
                                        f"{tally['unsupported']:>3} / wrong {tally['wrong']:>3}")
        for case_id, reason in score["unsupported_ids"]:
            terminalreporter.write_line(f"  unsupported {case_id}: {reason}")
