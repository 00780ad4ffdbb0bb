"""Judge an index change against a workload: findings with their status, and the verdict.

The rules run with the proposed indexes as the collection's indexes and the change in their context (the gating
rules CI001–CI004 read it; IX002 and IX003 judge the new indexes). With ``--baseline-indexes`` they run a second
time against the baseline alone: a finding both runs have is ``existing`` and does not count, one only the proposed
set has is ``new``. One only the baseline has is ``resolved`` when the change removes its cause: it adds an index
that serves the finding's shape (or the index the finding asks for), or the index the finding flags is gone. A
finding the proposed run merely stops raising stays ``existing``. Findings recorded in ``--baseline`` are
``accepted``. Without baseline indexes every finding counts, as ``analyze`` would count it. Indexes the change
creates that the server would refuse (``RefusedIndex``) are left out of the proposed set before the rules run.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from idxadvisor.config import Settings
from idxadvisor.gate.baseline import finding_id, read_baseline, write_baseline
from idxadvisor.gate.change import read_change, refuse_parallel_arrays
from idxadvisor.indexes.candidates import roles_of, serves
from idxadvisor.indexes.change import IndexChange
from idxadvisor.indexes.sampling import SampleStatistics
from idxadvisor.models.report import SEVERITY_ORDER, Finding, GateReport, IndexChangeReport, Skip
from idxadvisor.rules import select_rules
from idxadvisor.rules.base import RuleContext
from idxadvisor.rules.engine import IndexChooser, run_rules
from idxadvisor.shapes.digest import ShapeStats


@dataclass(frozen=True)
class CheckRequest:
    """What ``check`` is asked to judge, besides the settings every command shares."""

    workloads: list[str]
    indexes: list[str]
    baseline_indexes: Path | None = None
    baseline: Path | None = None
    write_baseline: Path | None = None
    database: str | None = None


@dataclass
class CheckResult:
    findings: list[Finding]
    skips: list[Skip]
    gate: GateReport


def evaluate(shapes: list[ShapeStats], settings: Settings, request: CheckRequest,
             samples: Mapping[str, SampleStatistics], chooser: IndexChooser | None = None) -> CheckResult:
    """The findings of the proposed indexes, each with its status, and the verdict; ``chooser`` chooses the new
    indexes the findings still ask for, given the proposed ones (the workload's index set)."""
    change = read_change(request.indexes, request.baseline_indexes, request.database, shapes)
    if samples:
        refuse_parallel_arrays(change, samples)
    accepted = read_baseline(request.baseline) if request.baseline is not None else set()
    rules = select_rules(settings.select, settings.ignore, settings.rules)
    findings, skips = run_rules(shapes, RuleContext(settings, change.proposed, samples, change=change), rules,
                                chooser)
    if samples:
        findings, dropped = _with_evidence(findings, shapes, samples, change, settings)
        skips += dropped
    resolved: list[Finding] = []
    if request.baseline_indexes is not None:
        before, _ = run_rules(shapes, RuleContext(settings, change.baseline, samples,
                                                  change=IndexChange.unchanged(change.baseline)), rules)
        known = {finding_id(finding) for finding in before}
        ids = {finding_id(finding) for finding in findings}
        for finding in findings:
            finding.status = "existing" if finding_id(finding) in known else "new"
        by_fingerprint = {stats.shape.fingerprint: stats for stats in shapes}
        for finding in before:
            if finding_id(finding) in ids:
                continue
            if _cause_removed(finding, change, by_fingerprint):
                resolved.append(finding)
            else:  # the proposed run stops raising it, but nothing the change does removes what it is about
                finding.status = "existing"
                finding.details.append("the proposed indexes no longer raise it, but the change neither adds an index "
                                       "that serves all of it (bounds every predicate and gives its sort) nor removes "
                                       "the index it flags: not resolved")
                findings.append(finding)
    if request.write_baseline is not None:
        write_baseline(request.write_baseline, findings)
        accepted |= {finding_id(finding) for finding in findings}
    for finding in findings:
        if finding_id(finding) in accepted:
            finding.status = "accepted"
    findings.sort(key=lambda finding: (not finding.counts, -SEVERITY_ORDER[finding.severity], -finding.impact,
                                       finding.rule, finding.ns, finding.fingerprint))
    return CheckResult(findings, skips, _gate_report(findings, resolved, change, request, settings.fail_on))


def _cause_removed(finding: Finding, change: IndexChange, shapes: Mapping[str, ShapeStats]) -> bool:
    """Whether the change removes what a finding of the baseline is about: for a shape, it creates an index that
    serves it (or starts with the index the finding asks for); for an index, that index is no longer a visible
    index of the proposed set, or the change drops or hides another index of its collection."""
    stats = shapes.get(finding.fingerprint)
    if stats is not None:
        created = [index for index in change.created(finding.ns) if not index.hidden]
        asked = tuple(finding.index.key) if finding.index is not None else ()
        roles = roles_of(stats.shape, stats.max_in_length)
        return any((asked and index.key[:len(asked)] == asked) or serves(index.key, roles) for index in created)
    flagged = finding.index.name or finding.index.replaces if finding.index is not None else None
    if flagged is None:
        return False
    if not any(index.name == flagged and not index.hidden for index in change.proposed.get(finding.ns, [])):
        return True
    # a finding about a pair of indexes (IX005: one is a prefix of the other) goes with either of them
    return any(event.index.name != flagged for event in change.events_of(finding.ns, "dropped", "hidden"))


def _with_evidence(findings: list[Finding], shapes: list[ShapeStats], samples: Mapping[str, SampleStatistics],
                   change: IndexChange, settings: Settings) -> tuple[list[Finding], list[Skip]]:
    # imported here: the estimator (mongomock, bson) is only needed with --data
    from idxadvisor.whatif.command import parse_server_version
    from idxadvisor.whatif.evidence import EvidenceOptions, gather_change_evidence, gather_evidence

    by_fingerprint = {stats.shape.fingerprint: stats for stats in shapes}
    options = EvidenceOptions(settings.min_savings_pct, parse_server_version(settings.server_version),
                              settings.show_values)
    findings, dropped = gather_evidence(findings, by_fingerprint, samples, change.proposed, options)
    gather_change_evidence([finding for finding in findings if finding.rule == "CI002"], by_fingerprint, samples,
                           change.baseline, change.proposed, options)
    return findings, dropped


def _gate_report(findings: list[Finding], resolved: list[Finding], change: IndexChange, request: CheckRequest,
                 fail_on: str) -> GateReport:
    threshold = SEVERITY_ORDER.get(fail_on)
    counted = [finding for finding in findings if finding.counts and threshold is not None
               and SEVERITY_ORDER[finding.severity] >= threshold]
    changes = [IndexChangeReport(ns=event.ns, action=event.action, name=event.index.name, key=list(event.index.key),
                                 location=event.location) for event in change.events]
    changes += [IndexChangeReport(ns=refused.ns, action="refused",
                                  name=refused.index.name if refused.index is not None else refused.shown,
                                  key=list(refused.index.key) if refused.index is not None else [],
                                  location=refused.location) for refused in change.refused]
    if change.refused:  # in the order of the files, where the refused calls are
        changes.sort(key=lambda item: (item.location.path, item.location.line, item.location.column)
                     if item.location is not None else ("", 0, 0))
    notes = list(change.notes)
    if not change.baseline_known:
        notes.append("no --indexes: today's indexes are those the workload's plans show, and every finding "
                     "counts")
    return GateReport(passed=not counted, fail_on=fail_on, counted=len(counted), indexes=list(request.indexes),
                      baseline_indexes=str(request.baseline_indexes) if request.baseline_indexes else None,
                      baseline=str(request.baseline) if request.baseline else None, changes=changes,
                      new=sum(finding.status == "new" for finding in findings),
                      existing=sum(finding.status == "existing" for finding in findings),
                      accepted=sum(finding.status == "accepted" for finding in findings),
                      resolved=resolved, notes=notes)
