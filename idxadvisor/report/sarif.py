"""SARIF 2.1.0, for code-scanning dashboards (GitHub, GitLab) and CI annotations.

Rules come from the registry, with their documentation as ``fullDescription``. Findings are about query shapes, not
lines of source: each result's location is the file the advice is about (the ``--indexes`` file when one was given,
since that is what a pull request changes; otherwise the first input), its logical location is the namespace, and
the shape fingerprint is its partial fingerprint, so a dashboard tracks one finding across runs. A finding of
``check`` about an index file entry or a migration-script call points at its line and column, so code scanning
annotates the pull request there; its status gives the result's ``baselineState`` (``new`` or ``unchanged``), and a
finding accepted by ``--baseline`` is reported with an external suppression. SARIF keeps one result per finding;
``properties.group`` names the root cause it shares with others (``Report.groups``). The run's properties hold the
index set chosen for each collection's workload (``indexSets``: the indexes to create, keep and hide, each shape
today and with the set, the totals) and the indexes of ``--indexes`` files that could not be read
(``indexesLeftOut``).

The location's ``uri`` is a valid URI reference: a relative path percent-encoded (relative to where the command ran,
usually the repository root, also for an absolute path under it), any other absolute path a ``file://`` URI. A report read from stdin has no file to point at, so
its results have no ``locations``.
"""

from __future__ import annotations

import json
from pathlib import Path, PurePath
from typing import Any, TextIO
from urllib.parse import quote

from idxadvisor.models.report import Finding, Report
from idxadvisor.rules import ALL_RULES
from idxadvisor.units import mask_secrets

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {"error": "error", "warning": "warning", "info": "note"}


def render(report: Report, out: TextIO, artifact: str | None = None) -> None:
    json.dump(document(report, artifact), out, indent=2)
    out.write("\n")


def document(report: Report, artifact: str | None = None) -> dict[str, Any]:
    location = artifact_uri(artifact or (report.inputs[0].path if report.inputs else "-"))
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": report.tool.name,
                "version": report.tool.version,
                "rules": [_rule(rule) for rule in ALL_RULES],
            }},
            "results": [_result(finding, location) for finding in report.findings],
            **({"properties": properties} if (properties := _run_properties(report)) else {}),
        }],
    }


def _run_properties(report: Report) -> dict[str, Any]:
    """The indexes of --indexes files left out, the live server read, and the index set chosen for each collection's
    workload (results stay per finding, each with the index of the set that serves its shape)."""
    properties: dict[str, Any] = {}
    if report.indexes_left_out:
        properties["indexesLeftOut"] = report.indexes_left_out
    if report.server is not None:
        properties["server"] = report.server.model_dump(mode="json")
    if report.index_selection is not None:
        properties["indexSelection"] = report.index_selection
    if report.index_sets:
        properties["indexSets"] = [index_set.model_dump(mode="json") for index_set in report.index_sets]
    return properties


def artifact_uri(path: str) -> str | None:
    """A path as a SARIF artifact URI: ``logs/my%20log.log``, ``file:///var/log/mongod.log``; None for stdin. An
    absolute path under the working directory (the repository, in CI) is made relative to it, as code scanning
    wants, whichever way the command was given its files."""
    if path == "-":
        return None
    path = mask_secrets(path)
    if Path(path).is_absolute():
        try:
            path = str(Path(path).relative_to(Path.cwd()))
        except (ValueError, OSError):  # outside the working directory (or it is gone)
            return Path(path).as_uri()
    return quote(PurePath(path).as_posix())


def _rule(rule: Any) -> dict[str, Any]:
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary()},
        "fullDescription": {"text": rule.documentation()},
        "help": {"text": rule.documentation(), "markdown": rule.documentation()},
        "defaultConfiguration": {"level": LEVELS[rule.severity]},
        "properties": {"category": rule.category, "status": rule.status},
    }


_BASELINE_STATES = {"new": "new", "existing": "unchanged"}


def _result(finding: Finding, location: str | None) -> dict[str, Any]:
    text = finding.message
    if finding.index is not None:
        text += f" Suggested: {finding.index.command}"
    physical: dict[str, Any] = {"artifactLocation": {"uri": location}}
    if finding.location is not None:
        physical = {"artifactLocation": {"uri": artifact_uri(finding.location.path)}}
        if finding.location.line is not None:
            physical["region"] = {"startLine": finding.location.line}
            if finding.location.column is not None:
                physical["region"]["startColumn"] = finding.location.column
    result: dict[str, Any] = {
        "ruleId": finding.rule,
        "level": LEVELS[finding.severity],
        "message": {"text": text},
        "locations": [{
            "physicalLocation": physical,
            "logicalLocations": [{"name": finding.ns, "kind": "namespace"}],
        }],
        "partialFingerprints": {"idxadvisor/shape/v1": finding.fingerprint},
        "properties": {"impact": finding.impact, "details": finding.details},
    }
    if finding.group is not None:
        result["properties"]["group"] = finding.group
    if physical["artifactLocation"]["uri"] is None:
        del result["locations"]
    if finding.status in _BASELINE_STATES:
        result["baselineState"] = _BASELINE_STATES[finding.status]
    elif finding.status == "accepted":
        result["suppressions"] = [{"kind": "external", "status": "accepted",
                                   "justification": "recorded in the baseline of findings (--baseline)"}]
    if finding.index is not None:
        result["properties"]["index"] = finding.index.model_dump(mode="json")
    if finding.evidence is not None and finding.evidence.evaluator == "server":
        result["properties"]["evidence"] = finding.evidence.model_dump(mode="json")
    return result
