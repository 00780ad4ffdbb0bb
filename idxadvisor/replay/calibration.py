"""The estimator against the server: each counter of each plan, on the same sample and the same indexes.

The server's explain is ground truth for the planner the estimator models, so every counter where the two differ is
flagged: a calibration table of the model against the real planner. Counters are compared on the sample (before any
scaling), where both evaluators saw exactly the same documents.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from idxadvisor.models.report import CalibrationRow, CalibrationSummary, Evidence, Finding

COUNTERS = ("planSummary", "totalKeysExamined", "totalDocsExamined", "nReturned", "nCounted")


def calibration_rows(server: Evidence, estimate: Evidence) -> list[CalibrationRow]:
    rows = []
    for plan in ("before", "after"):
        measured, predicted = _on_sample(getattr(server, plan)), _on_sample(getattr(estimate, plan))
        if "unsupported" in measured:
            continue
        for counter in COUNTERS:
            if counter not in measured and counter not in predicted:
                continue
            value, guess = measured.get(counter), predicted.get(counter)
            rows.append(CalibrationRow(plan=plan, counter=counter, server=value, estimator=guess,  # type: ignore[arg-type]
                                       agree=value == guess))
    return rows


def _on_sample(side: Mapping[str, Any]) -> dict[str, Any]:
    """A plan's counters as measured on the sample: the unscaled numbers, with the plan and why it was not run."""
    values = dict(side.get("sample") or {})
    for key in ("planSummary", "unsupported"):
        if key in side:
            values[key] = side[key]
    return values


def summarise(findings: Iterable[Finding]) -> CalibrationSummary:
    summary = CalibrationSummary()
    for finding in findings:
        evidence = finding.evidence
        if evidence is None or evidence.evaluator != "server" or not evidence.calibration:
            continue
        summary.findings += 1
        for row in evidence.calibration:
            summary.counters += 1
            if row.agree:
                summary.agreeing += 1
            else:
                summary.disagreements.append(f"{finding.rule} {finding.ns} {row.plan} {row.counter}: server "
                                             f"{row.server}, estimator {row.estimator}")
    return summary
