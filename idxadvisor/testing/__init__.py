"""Rule cases: ``rules/<CODE>.yaml``, loaded and run the same way for every rule (and for plugin authors).

A case file::

    rule: IX001
    config: {min_count: 1}          # optional settings for every case of the file
    cases:
      collscan_on_two_fields:
        operations:                 # slow-query entries to generate (or `log:` raw lines, or `fixture:` a path)
          - ns: shop.customers
            command: {find: customers, filter: {lastName: Silva, city: Porto}}
            plan: COLLSCAN
            docsExamined: 120000
            nreturned: 1
            durationMillis: 150
            repeat: 20              # 20 executions starting `every` seconds apart (default 10), each logged when
                                    # it ends; `durations: [..]` cycles through several durations, and
                                    # `ramp: {durationMillis: [300, 16000]}` grows a number run by run
            format: text-4.0        # optional: json (an 8.0 log, the default), text (4.2), text-4.0 (3.2-4.0),
                                    # or profile (system.profile documents); a line holds the counters given
        indexes: {shop.customers: [{key: {_id: 1}, name: _id_}]}   # optional: the --indexes file
        data: {shop.products: [{tags: [a, b]}]}                      # optional: --data samples
        expect:                     # the findings of this file's rule, each matched by the keys it gives
          - ns: shop.customers
            index: {key: [[city, 1], [lastName, 1]]}
        skipped:                    # optional: reasons for shapes left without a suggestion
          - shape: "find shop.customers"
            reason: "served by"
      healthy:
        operations: [...]
        expect: []                  # the rule must stay silent
      later:
        todo: "why this case is expected to fail for now"

Finding keys: ``rule`` (default the file's), ``ns``, ``severity``, ``message`` (a substring), ``details`` (a
substring of one of them, or a list of such), ``index`` (``key``, ``replaces``, ``name``, and ``command``: a
substring), ``grouped_with`` (rules whose findings share the finding's group, its root cause), and for ``check``
cases ``status`` (new, existing, accepted) and ``line`` (of the script call or index file entry).

A case with a ``check`` mapping runs ``idxadvisor check`` instead of ``analyze``: its ``indexes`` are the proposed
index file, ``check.migration`` a mongosh migration script applied to ``check.baseline_indexes`` (today's indexes;
without them, those the plans show), ``check.db`` the database of calls that do not name one. Every expected finding
must match a distinct
finding of the rule, and the rule must report no other.

A key the loader does not know (``docExamined`` for ``docsExamined``) is a ``RuleCaseError`` naming the file, the case
and the key: silently dropped, it would make a case pass without testing what it says.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import yaml

from idxadvisor.api import analyze
from idxadvisor.config import Settings
from idxadvisor.models.report import Finding, Report
from idxadvisor.testing.logwriter import json_entry, profile_document, text_entry

OPERATION_COUNTERS = ("keysExamined", "docsExamined", "nreturned", "nMatched", "nModified", "ndeleted", "ninserted",
                      "hasSortStage", "usedDisk", "appName", "queryHash", "planCacheShapeHash", "queryShapeHash",
                      "planCacheKey", "originatingCommand", "workingMillis", "cursorExhausted", "fromMultiPlanner",
                      "replanned", "numYields", "reslen", "remote")
OPERATION_KEYS = frozenset({"ns", "command", "plan", "type", "ctx", "at", "every", "repeat", "durationMillis",
                            "durations", "ramp", "format", *OPERATION_COUNTERS})
#: The formats an operation can be written in, and the file each goes to (one file per format, as servers write them).
FORMAT_FILES = {"json": "case.log", "text": "case.text.log", "text-4.0": "case.text-4.0.log",
                "profile": "case.profile.json"}
FILE_KEYS = frozenset({"rule", "config", "cases"})
CASE_KEYS = frozenset({"operations", "log", "fixture", "indexes", "data", "config", "expect", "skipped", "todo",
                       "check"})
CHECK_KEYS = frozenset({"baseline_indexes", "migration", "db"})
EXPECT_KEYS = frozenset({"rule", "ns", "severity", "message", "details", "index", "grouped_with", "status", "line"})
INDEX_KEYS = frozenset({"key", "replaces", "name", "command"})
SKIPPED_KEYS = frozenset({"shape", "reason"})
_START = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)


class RuleCaseError(ValueError):
    """A case file the loader cannot take as it is: an unknown key, a missing one, or the wrong kind of value."""


@dataclass
class RuleCase:
    rule: str
    name: str
    spec: dict[str, Any]
    config: dict[str, Any] = field(default_factory=dict)
    source: Path | None = None

    @property
    def id(self) -> str:
        return f"{self.rule}-{self.name}"

    @property
    def todo(self) -> str | None:
        return self.spec.get("todo")


def load_rule_cases(directory: Path) -> list[RuleCase]:
    """Every case of every ``<CODE>.yaml`` in ``directory``; RuleCaseError for a key the loader does not know."""
    cases = []
    for path in sorted(directory.glob("*.yaml")):
        document = yaml.safe_load(path.read_text(encoding="utf-8"))
        _check_keys(document, FILE_KEYS, f"{path}", required=("rule",))
        rule = document["rule"]
        for name, spec in (document.get("cases") or {}).items():
            _check_case(spec, f"{path}: case '{name}'")
            cases.append(RuleCase(rule, name, spec, dict(document.get("config") or {}), path))
    return cases


def _check_keys(document: Any, known: Iterable[str], where: str, required: Iterable[str] = ()) -> None:
    if not isinstance(document, dict):
        raise RuleCaseError(f"{where}: expected a mapping, not {type(document).__name__}")
    for key in document:
        if key not in known:
            close = difflib.get_close_matches(str(key), sorted(known), n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else f" (known: {', '.join(sorted(known))})"
            raise RuleCaseError(f"{where}: unknown key '{key}'{hint}")
    for key in required:
        if key not in document:
            raise RuleCaseError(f"{where}: '{key}' is missing")


def _check_list(spec: dict[str, Any], key: str, known: Iterable[str], where: str,
                required: Iterable[str] = ()) -> list[Any]:
    items = spec.get(key) or []
    if not isinstance(items, list):
        raise RuleCaseError(f"{where}: {key}: expected a list, not {type(items).__name__}")
    for number, item in enumerate(items):
        _check_keys(item, known, f"{where}: {key}[{number}]", required)
    return items


def _check_case(spec: Any, where: str) -> None:
    _check_keys(spec, CASE_KEYS, where)
    if "check" in spec:
        _check_keys(spec["check"], CHECK_KEYS, f"{where}: check")
    for number, operation in enumerate(_check_list(spec, "operations", OPERATION_KEYS, where,
                                                   required=("ns", "command"))):
        _check_operation(operation, f"{where}: operations[{number}]")
    for number, expected in enumerate(_check_list(spec, "expect", EXPECT_KEYS, where)):
        if "index" in expected:
            _check_keys(expected["index"], INDEX_KEYS, f"{where}: expect[{number}].index")
    _check_list(spec, "skipped", SKIPPED_KEYS, where, required=("shape", "reason"))


def _check_operation(operation: dict[str, Any], where: str) -> None:
    kind = operation.get("format", "json")
    if kind not in FORMAT_FILES:
        raise RuleCaseError(f"{where}: format '{kind}' is not one of {', '.join(FORMAT_FILES)}")
    ramps = operation.get("ramp", {})
    if not isinstance(ramps, dict):
        raise RuleCaseError(f"{where}: ramp: expected a mapping of counters to [first, last]")
    for key, bounds in ramps.items():
        if key not in OPERATION_COUNTERS and key != "durationMillis":
            raise RuleCaseError(f"{where}: ramp: '{key}' is not a counter an operation can give")
        if not (isinstance(bounds, list) and len(bounds) == 2
                and all(isinstance(bound, (int, float)) and not isinstance(bound, bool) for bound in bounds)):
            raise RuleCaseError(f"{where}: ramp: {key}: expected [first, last], two numbers")


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}+00:00"


def operation_entries(operations: list[dict[str, Any]]) -> dict[str, list[str]]:
    """The lines (or profiler documents) a case's ``operations`` stand for, by format, each file in time order."""
    written: dict[str, list[tuple[datetime, str]]] = {}
    for number, operation in enumerate(operations):
        kind = operation.get("format", "json")
        _check_operation(operation, f"operations[{number}]")
        for moment, context, attr in _executions(number, operation):
            written.setdefault(kind, []).append((moment, _render(kind, moment, context, attr)))
    return {kind: [line for _, line in sorted(lines, key=lambda item: item[0])] for kind, lines in written.items()}


def operation_lines(operations: list[dict[str, Any]]) -> list[str]:
    """Server-format 8.0 slow-query lines for a case's ``operations`` (all of them in JSON, whatever their format)."""
    return operation_entries([{**operation, "format": "json"} for operation in operations])["json"] if operations \
        else []


def _executions(number: int, operation: dict[str, Any]) -> list[tuple[datetime, str, dict[str, Any]]]:
    """(end time, connection, attr) of each execution of one operation: logged when it ends."""
    start = _START + timedelta(seconds=float(operation.get("at", number * 3600)))
    every = float(operation.get("every", 10))
    repeat = int(operation.get("repeat", 1))
    durations = operation.get("durations") or [operation.get("durationMillis", 150)]
    ramps = operation.get("ramp") or {}
    executions = []
    for run in range(repeat):
        attr: dict[str, Any] = {"type": operation.get("type", "command"), "ns": operation["ns"],
                                "command": operation["command"]}
        if "plan" in operation:
            attr["planSummary"] = operation["plan"]
        attr.update({key: operation[key] for key in OPERATION_COUNTERS if key in operation})
        attr["durationMillis"] = durations[run % len(durations)]
        for key, (first, last) in ramps.items():
            attr[key] = round(first + (last - first) * run / max(repeat - 1, 1))
        moment = start + timedelta(seconds=run * every, milliseconds=attr["durationMillis"])
        executions.append((moment, operation.get("ctx", f"conn{run % 7 + 1}"), attr))
    return executions


def _render(kind: str, moment: datetime, context: str, attr: dict[str, Any]) -> str:
    if kind == "profile":
        return json.dumps(profile_document(moment, attr), separators=(",", ":"))
    if kind.startswith("text"):
        return text_entry(moment, context, attr, version="4.0" if kind == "text-4.0" else "4.2")
    component = "WRITE" if attr["type"] != "command" else "COMMAND"
    return json_entry(moment, component, 51803, context, "Slow query", attr)


def case_inputs(case: RuleCase, workdir: Path, repository: Path) -> tuple[list[str], dict[str, Any]]:
    """The input paths and the settings overrides a case stands for (files written into ``workdir``)."""
    spec = case.spec
    inputs = []
    if "fixture" in spec:
        inputs.append(str(repository / spec["fixture"]))
    files: dict[str, list[str]] = {}
    if "log" in spec:
        files["json"] = [line for line in spec["log"].splitlines() if line.strip()]
    if "operations" in spec:
        for kind, lines in operation_entries(spec["operations"]).items():
            files.setdefault(kind, []).extend(lines)
    for kind, lines in files.items():
        log = workdir / FORMAT_FILES[kind]
        log.write_text("\n".join(lines) + "\n", encoding="utf-8")
        inputs.append(str(log))
    overrides: dict[str, Any] = {"format": "json", **case.config, **spec.get("config", {})}
    if "indexes" in spec:
        path = workdir / "indexes.json"
        path.write_text(json.dumps(spec["indexes"], indent=2), encoding="utf-8")
        overrides["indexes"] = path
    if "data" in spec:
        data_files = []
        for ns, documents in spec["data"].items():
            path = workdir / f"{ns}.json"
            path.write_text("\n".join(json.dumps(document) for document in documents) + "\n", encoding="utf-8")
            data_files.append(f"{ns}={path}")
        overrides["data"] = data_files
    return inputs, overrides


def run_case(case: RuleCase, workdir: Path, repository: Path) -> Report:
    """``analyze`` the case's inputs; with a ``check`` key, ``check`` them against the change it describes (the case's
    ``indexes`` are then the proposed set, ``check.baseline_indexes`` today's, ``check.migration`` a mongosh script)."""
    inputs, overrides = case_inputs(case, workdir, repository)
    if "check" not in case.spec:
        return analyze(inputs, Settings.model_validate(overrides))
    from idxadvisor.api import check
    from idxadvisor.gate.run import CheckRequest

    spec = case.spec["check"]
    proposed: list[str] = [str(overrides.pop("indexes"))] if "indexes" in overrides else []
    baseline = None
    if "baseline_indexes" in spec:
        baseline = workdir / "baseline-indexes.json"
        baseline.write_text(json.dumps(spec["baseline_indexes"]), encoding="utf-8")
    if "migration" in spec:
        script = workdir / "migration.js"
        script.write_text(spec["migration"], encoding="utf-8")
        proposed.append(str(script))
    request = CheckRequest(workloads=inputs, indexes=proposed, baseline_indexes=baseline, database=spec.get("db"))
    return check(request, Settings.model_validate({"fail_on": "error", **overrides}))


def _matches(finding: Finding, expected: dict[str, Any], rule: str, report: Report) -> bool:
    if finding.rule != expected.get("rule", rule):
        return False
    grouped = {other.rule for other in report.findings if other.group == finding.group and other is not finding}
    if not set(expected.get("grouped_with", [])) <= grouped:
        return False
    for key in ("ns", "severity", "status"):
        if key in expected and getattr(finding, key) != expected[key]:
            return False
    if "line" in expected and (finding.location is None or finding.location.line != expected["line"]):
        return False
    if "message" in expected and expected["message"] not in finding.message:
        return False
    wanted = expected.get("details", [])
    for part in [wanted] if isinstance(wanted, str) else wanted:
        if not any(part in detail for detail in finding.details):
            return False
    if "index" in expected:
        index = finding.index
        if index is None:
            return False
        wanted = expected["index"]
        if "key" in wanted and [list(pair) for pair in index.key] != [list(pair) for pair in wanted["key"]]:
            return False
        for key in ("replaces", "name"):
            if key in wanted and getattr(index, key) != wanted[key]:
                return False
        if "command" in wanted and wanted["command"] not in index.command:
            return False
    return True


def check_case(case: RuleCase, report: Report) -> list[str]:
    """What is wrong with the report for this case (an empty list when it is right)."""
    rule = case.rule
    found = [finding for finding in report.findings if finding.rule == rule]
    problems = []
    unmatched = list(found)
    for expected in case.spec.get("expect") or []:
        match = next((finding for finding in unmatched if _matches(finding, expected, rule, report)), None)
        if match is None:
            problems.append(f"no {rule} finding matches {expected}")
        else:
            unmatched.remove(match)
    problems += [f"unexpected {rule} finding: {finding.ns}: {finding.message} {finding.index}" for finding in unmatched]
    for expected in case.spec.get("skipped") or []:
        if not any(expected["shape"] in skip.shape and expected["reason"] in skip.reason for skip in report.skipped):
            reasons = [f"{skip.shape}: {skip.reason}" for skip in report.skipped]
            problems.append(f"no skipped shape like {expected}; skipped: {reasons}")
    return problems
