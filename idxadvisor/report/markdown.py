"""The Markdown report, for pull requests and issues: a summary, the top shapes as a table, then the findings."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, TextIO

from idxadvisor.models.report import Evidence, Finding, Report, SetShape, ShapeReport
from idxadvisor.report.inventory import inventory_headline, inventory_line, inventory_shown, traffic_line
from idxadvisor.report.build import (
    NO_SLOW_OPERATION,
    evidence_after_label,
    gate_line,
    groups_for_people,
    key_text,
    operation_counts,
    samples_line,
    skipped_inputs_line,
    skips_for_people,
    values_text,
)
from idxadvisor.report.readable import md_code, md_fence, md_text
from idxadvisor.report.server import evidence_line, server_lines
from idxadvisor.report.sets import (
    index_parts,
    left_out_lines,
    selection_line,
    set_method,
    set_summary,
    writes_line,
)
from idxadvisor.report.timing import breakdown_line
from idxadvisor.units import human_count, human_impact, human_ms, human_seconds, mask_secrets, printable


_cell = md_text  # prose: a message quoting a name, a table cell
_code = md_code  # a name, a shape, a command: a code span no backtick in it can close


def _counted(count: int, singular: str, plural: str | None = None) -> str:
    return f"{count:,} {singular if count == 1 else plural or singular + 's'}"


def _number(value: Any) -> str:
    """An explain counter as people read it: 376,370; anything that is not a number as it is (``?`` when absent)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


def _time(value: datetime | None) -> str:
    return value.isoformat(sep=" ", timespec="seconds") if value else "?"


def render(report: Report, out: TextIO, verbose: bool = False, limit: int | None = 20,
           verdict: tuple[int, str] | None = None) -> None:
    lines = _lines(report, verbose, limit)
    if verdict is not None:  # the last line: the exit status and why
        status, text = verdict
        lines += ["", re.sub(r"(--fail-on [a-z]+)", r"`\1`", _cell(text))]
    out.write("\n".join(lines) + "\n")


def _lines(report: Report, verbose: bool, limit: int | None) -> list[str]:
    summary = report.summary
    lines = ["## idxadvisor check" if report.gate is not None else "## idxadvisor report", ""]
    lines.append(f"{_counted(summary.inputs, 'input')}, {_counted(summary.lines, 'line')}, "
                 f"{_counted(summary.entries, 'slow-operation entry', 'slow-operation entries')}, "
                 f"{_counted(summary.operations, 'operation')}, {_counted(summary.shapes, 'shape')}; "
                 f"problems {summary.problems:,}, truncated {summary.truncated:,}.")
    if summary.first_seen or summary.last_seen:
        lines.append(f"Time span: {_time(summary.first_seen)} → {_time(summary.last_seen)}.")
    if summary.versions:
        lines.append(f"Server versions: {_cell(', '.join(summary.versions))}.")
    for reason, count in summary.excluded.items():
        lines.append(f"Left out: {_cell(reason)}: {_counted(count, 'operation')}.")
    traffic = traffic_line(report)
    if traffic is not None:
        lines.append(_cell(traffic[0].upper() + traffic[1:]) + ".")
    if report.samples:
        lines.append(f"Data: {_cell(samples_line(report.samples))}.")
    lines += [f"Not read: {_cell(line)}." for line in report.indexes_left_out]
    if report.inputs_skipped:
        line = skipped_inputs_line(report.inputs_skipped)
        lines.append(f"{_cell(line[0].upper() + line[1:])}.")
    if report.server is not None:
        lines += [f"{_cell(line[0].upper() + line[1:])}." for line in server_lines(report.server)]
    lines += ["", "| input | format | lines | entries | problems | truncated |", "|---|---|--:|--:|--:|--:|"]
    for item in report.inputs:
        path = _code(mask_secrets(item.path)) + (f" (error: {_cell(mask_secrets(item.error))})" if item.error else "")
        lines.append(f"| {path} | {_cell(item.format)} | {item.lines:,} | {item.entries:,} | {item.problems:,} "
                     f"| {item.truncated:,} |")
    if report.gate is not None:  # check: the verdict and the change take the place of the shapes (JSON has them)
        lines += _gate(report)
    else:
        lines += _shapes(report)
    lines += _suggestions_and_findings(report, verbose, limit)
    return lines


def _gate(report: Report) -> list[str]:
    gate = report.gate
    assert gate is not None
    icon = "✅" if gate.passed else "❌"
    lines = ["", f"### {icon} Gate: {_cell(gate_line(gate))}", ""]
    against = f" against {_code(gate.baseline_indexes)}" if gate.baseline_indexes else ""
    lines.append(f"Index change: {', '.join(_code(path) for path in gate.indexes)}{against}.")
    if gate.changes:
        lines += ["", "| change | namespace | index | key | where |", "|---|---|---|---|---|"]
        for change in gate.changes:
            key = _code(key_text(change.key)) if change.key else ""
            where = _code(str(change.location)) if change.location is not None else ""
            lines.append(f"| {change.action} | {_code(change.ns)} | {_code(change.name)} | {key} | {where} |")
    else:
        lines += ["", "No index created, dropped, hidden or unhidden."]
    lines += [""] + [f"- note: {_cell(note)}" for note in gate.notes] if gate.notes else []
    if gate.resolved:
        lines += ["", "Resolved by the change:", ""]
        lines += [f"- `{finding.rule}` on {_code(finding.ns)}: {_cell(finding.message)}" for finding in gate.resolved]
    return lines


def _shapes(report: Report) -> list[str]:
    summary = report.summary
    lines = ["", f"### Top {len(report.shapes)} of {summary.shapes} query shapes", ""]
    if report.shapes:
        lines += ["| # | shape | count | total | p95 | max | plan | docs/returned | blocking sort | where the time went |",
                  "|--:|---|--:|--:|--:|--:|---|--:|--:|---|"]
        lines += [_shape_row(rank, shape) for rank, shape in enumerate(report.shapes, start=1)]
        examples = [(rank, shape.example) for rank, shape in enumerate(report.shapes, start=1)
                    if shape.example is not None]  # --show-values
        if examples:
            lines += ["", "Examples with their values:", ""]
            lines += [f"- {rank}: {_code(values_text(example))}" for rank, example in examples]
    else:
        quiet = summary.operations == 0 and report.server is None
        lines.append(f"{NO_SLOW_OPERATION[0].upper() + NO_SLOW_OPERATION[1:]}." if quiet else "No slow operations in "
                     "scope.")
    return lines


def _suggestions_and_findings(report: Report, verbose: bool, limit: int | None) -> list[str]:
    lines: list[str] = []
    if report.suggested_indexes:
        suggestions = report.suggested_indexes[:limit] if limit else report.suggested_indexes
        lines += ["", f"### Suggested indexes ({len(report.suggested_indexes)})", "",
                  "| # | index | shapes | rules | impact | server time saved | makes redundant |",
                  "|--:|---|--:|---|--:|--:|---|"]
        lines += [f"| {rank} | {_code(item.command)} | {item.shape_count} | {_cell(', '.join(item.rules))} | "
                  f"{human_impact(item.impact, item.impact_unit)} | "
                  f"{_saved(item.saving_s_per_hour)} | "
                  f"{_code(item.replaces) if item.replaces else ''} |"
                  for rank, item in enumerate(suggestions, start=1)]
    lines += _index_sets(report, verbose, limit)
    lines += _inventory(report, verbose)
    items = groups_for_people(report)
    shown = items[:limit] if limit else items
    grouped = f" in {len(items)} groups by root cause" if len(items) < len(report.findings) else ""
    more = f", top {len(shown)} by impact" if len(shown) < len(items) else ""
    lines += ["", f"### Findings ({len(report.findings)}{grouped}{more})", ""]
    if not report.findings:
        lines.append("No findings.")
    for group, members in shown:
        if group is None or len(members) == 1:
            lines += _finding(members[0])
            continue
        lines.append(f"- **{group.severity}** {_code(group.title)} on {_code(group.ns)}: {len(members)} findings, "
                     f"one root cause, {human_impact(group.impact, group.impact_unit)}")
        for finding in members:
            lines += ["  " + line if line else line for line in _finding(finding, ns=False)]
    if verbose and report.skipped:
        lines += ["", "### No suggestion", "", "| fingerprint | shape | reason |", "|---|---|---|"]
        listed, without_query = skips_for_people(report.skipped)
        lines += [f"| {_code(skip.fingerprint)} | {_code(skip.shape)} | {_cell(skip.reason)} |" for skip in listed]
        if without_query:
            lines += ["", f"{operation_counts(without_query)}: no query an index could serve."]
    return lines


def _inventory(report: Report, verbose: bool) -> list[str]:
    headline = inventory_headline(report)
    if headline is None:
        return []
    shown = inventory_shown(report, verbose)
    more = "" if verbose or not shown else " (of the collections with a suggestion; -v lists all)"
    return ["", f"### {headline}{more}", "", *[f"- {_cell(inventory_line(index))}" for index in shown]]


def _saved(seconds: float | None) -> str:
    return f"{human_seconds(seconds)} per hour" if seconds is not None else ""


def _index_sets(report: Report, verbose: bool, limit: int | None) -> list[str]:
    """Per collection, the set chosen for its workload: a table of the indexes to create, keep and hide, what the
    writes cost, and with --verbose each shape today and with the set."""
    headline = selection_line(report)
    if headline is None:
        return []
    sets = report.index_sets[:limit] if limit else report.index_sets
    more = f"; the {len(sets)} saving the most" if len(sets) < len(report.index_sets) else ""
    lines = ["", f"### Index sets for the workload ({_cell(headline)}{more})"]
    for index_set in sets:
        per = "per hour" if index_set.totals.per == "hour" else "over the log"
        heading = f"**{_code(index_set.ns)}{_cell(set_summary(index_set))}**"
        lines += ["", heading, "", f"{_cell(set_method(index_set))}.", "",
                  "| action | index | why |", "|---|---|---|"]
        for index in index_set.indexes:
            action, label, why = index_parts(index, per)
            command = ""
            if index.status == "hide":
                command = f": {_code(index.command or '')}, then {_code(index.drop_command or '')}"
            lines.append(f"| {action} | {_code(label)} | {_cell(why)}{command} |")
        extra = [line for line in [writes_line(index_set), *index_set.notes] if line]
        if extra:
            lines += [""] + [f"- {_cell(line)}" for line in extra]
        if verbose:
            left_out = left_out_lines(index_set)
            if left_out:
                lines += [""] + [f"- {_cell(line)}" for line in left_out]
            shapes = index_set.shapes[:limit] if limit else index_set.shapes
            lines += ["", "| shape | today | with the set | index | how |", "|---|--:|--:|---|---|"]
            lines += [_set_shape_row(shape) for shape in shapes]
    return lines


def _set_shape_row(shape: SetShape) -> str:
    how = shape.model + ("; a finding asks for an index" if shape.requested else "")
    how += f"; {shape.note}" if shape.note else ""
    return (f"| {_code(shape.shape)} | {_number(shape.before) if shape.before is not None else ''} | "
            f"{_number(shape.after) if shape.after is not None else ''} | "
            f"{_code(shape.index) if shape.index else 'collection scan'} | {_cell(how)} |")


def _shape_row(rank: int, shape: ShapeReport) -> str:
    duration = shape.duration_ms
    plan = next(iter(shape.plans), "")
    ratio = f"{shape.docs_examined_per_returned:,.1f}" if shape.docs_examined_per_returned is not None else ""
    sort = f"{shape.blocking_sorts * 100 // max(shape.count, 1)}%" if shape.blocking_sorts else ""
    if shape.used_disk:
        sort += f"{'; ' if sort else ''}spilled to disk {shape.used_disk * 100 // max(shape.count, 1)}%"
    return (f"| {rank} | {_code(shape.shape)} | {human_count(shape.count)} | {human_ms(duration.total)} | "
            f"{human_ms(duration.p95)} | {human_ms(duration.max)} | {_code(plan) if plan else ''} | {ratio} | {sort} | "
            f"{_cell(breakdown_line(shape.time_breakdown))} |")


def _finding(finding: Finding, ns: bool = True) -> list[str]:
    status = f" ({finding.status})" if finding.status is not None else ""
    on = f" on {_code(finding.ns)}" if ns else ""
    where = f" at {_code(str(finding.location))}" if finding.location is not None else ""
    lines = [f"- **{finding.severity}**{status} `{finding.rule}` {_cell(finding.name)}{on}{where}: {_cell(finding.message)}"]
    lines += [f"  - {_cell(detail)}" for detail in finding.details]
    if finding.index is not None:
        fence = md_fence(finding.index.command)
        lines += ["", f"  {fence}js", f"  {printable(finding.index.command)}", f"  {fence}"]
    if finding.evidence is not None:
        before, after = finding.evidence.before, finding.evidence.after
        keys = [_number(side.get("totalKeysExamined", "?")) for side in (before, after)]
        docs = [_number(side.get("totalDocsExamined", "?")) for side in (before, after)]
        against = f", today → {evidence_after_label(finding)}" if finding.rule.startswith("CI") else ""
        lines.append(f"  - evidence ({finding.evidence.evaluator}{against}): keys examined {keys[0]} → {keys[1]}, "
                     f"documents examined {docs[0]} → {docs[1]}")
        if finding.evidence.query is not None:  # --show-values
            lines.append(f"  - query: {_code(values_text(finding.evidence.query))}")
        lines += _calibration(finding.evidence)
    return lines


def _calibration(evidence: Evidence) -> list[str]:
    """The estimator's prediction beside the server's numbers: one row per counter of each plan."""
    if evidence.estimate is None:
        return []
    lines = [f"  - the estimator predicted: {_cell(evidence_line(evidence.estimate))}"]
    if evidence.calibration:
        lines += ["", "  | plan | counter | server | estimator | agree |", "  |---|---|--:|--:|---|"]
        lines += [f"  | {'today' if row.plan == 'before' else 'with the index'} | {row.counter} | "
                  f"{_cell(_number(row.server))} | {_cell(_number(row.estimator))} | {'yes' if row.agree else '**no**'} |"
                  for row in evidence.calibration]
    return lines
