"""Baselines of findings: ``--write-baseline`` records today's findings, ``--baseline`` accepts them.

The way ruff and sqlfluff let a team adopt a linter on a legacy codebase: the findings a baseline holds are reported
as accepted and do not count towards the exit code; anything new does. A finding is recorded by a stable
fingerprint of its rule, namespace and shape (or index) fingerprint, never by its message, whose numbers change as
the workload does. The file keeps each finding's message beside it for the people who review it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import orjson

from idxadvisor import __version__
from idxadvisor.errors import InputError, UsageError
from idxadvisor.models.report import Finding

BASELINE_KIND = "idxadvisor-baseline"
SCHEMA_VERSION = 1


def finding_id(finding: Finding) -> str:
    """Stable across runs: the rule, the namespace and what the finding is about (its shape or index fingerprint)."""
    return hashlib.sha256(f"{finding.rule}\0{finding.ns}\0{finding.fingerprint}".encode()).hexdigest()[:16]


def write_baseline(path: Path, findings: list[Finding]) -> None:
    entries = {finding_id(finding): {"id": finding_id(finding), "rule": finding.rule, "ns": finding.ns,
                                     "fingerprint": finding.fingerprint, "message": finding.message}
               for finding in findings}
    document = {"kind": BASELINE_KIND, "schema_version": SCHEMA_VERSION,
                "tool": {"name": "idxadvisor", "version": __version__},
                "findings": sorted(entries.values(), key=lambda entry: (entry["rule"], entry["ns"], entry["id"]))}
    try:
        path.write_bytes(orjson.dumps(document, option=orjson.OPT_INDENT_2) + b"\n")
    except OSError as exc:
        raise UsageError(f"--write-baseline: cannot write {path}: {exc.strerror or exc}") from None


def read_baseline(path: Path) -> set[str]:
    """The ids of the accepted findings; InputError naming the file when it is not a baseline."""
    try:
        document: Any = orjson.loads(path.read_bytes())
    except OSError as exc:
        raise InputError(f"--baseline: cannot read {path}: {exc.strerror or exc}") from None
    except orjson.JSONDecodeError as exc:
        raise InputError(f"--baseline: {path} is not JSON ({exc.msg} at line {exc.lineno})") from None
    if type(document) is not dict or document.get("kind") != BASELINE_KIND:
        raise InputError(f"--baseline: {path} is not a baseline of findings (write one with --write-baseline)")
    if document.get("schema_version") != SCHEMA_VERSION:
        raise InputError(f"--baseline: {path}: schema_version {document.get('schema_version')!r} is not supported")
    findings = document.get("findings")
    if type(findings) is not list or not all(type(entry) is dict and type(entry.get("id")) is str
                                             for entry in findings):
        raise InputError(f"--baseline: {path}: 'findings' must be a list of objects with an 'id'")
    return {entry["id"] for entry in findings}
