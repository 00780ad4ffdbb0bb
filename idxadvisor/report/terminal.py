"""The terminal report: a header, the top shapes, then the findings; readable at 100 columns.

Every string that comes from a log (namespaces, shapes, app names, messages) goes into a ``rich.text.Text``, never
through Rich markup: queries are full of ``[`` and ``]``.
"""

from __future__ import annotations

from datetime import datetime

import textwrap

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from idxadvisor.models.report import Finding, FindingGroup, InputReport, Report, ShapeReport
from idxadvisor.report.inventory import inventory_headline, inventory_line, inventory_shown, traffic_line
from idxadvisor.report.timing import breakdown_line
from idxadvisor.report.build import (
    NO_SLOW_OPERATION,
    change_line,
    evidence_after_label,
    gate_line,
    groups_for_people,
    operation_counts,
    samples_line,
    skipped_inputs_line,
    skips_for_people,
    values_text,
)
from idxadvisor.report.server import calibration_line, evidence_line, server_lines
from idxadvisor.report.sets import (
    index_line,
    left_out_lines,
    selection_line,
    set_heading,
    set_method,
    shape_line,
    writes_line,
)
from idxadvisor.units import counted, human_count, human_impact, human_ms, human_seconds

SEVERITY_STYLES = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def _time(value: datetime | None) -> str:
    return value.isoformat(sep=" ", timespec="seconds") if value else "?"


def _indented(text: str, indent: int, width: int, style: str = "") -> list[Text]:
    """Wrapped lines of log-derived text, each indented, with no trailing padding."""
    prefix = " " * indent
    if _fits(text, len(prefix), max(20, width)):
        lines = [prefix + text]  # what textwrap makes of it, without its pass over the words
    else:
        lines = textwrap.wrap(text, width=max(20, width), initial_indent=prefix, subsequent_indent=prefix + "  ",
                              break_long_words=True, break_on_hyphens=False)
    # a line of ASCII that fits is printed as it is: Rich would wrap it again to the same line, at a cost (a third
    # of the text report's time); a wider character takes two cells, which only Rich counts
    return [Text(line, style=style, no_wrap=True if len(line) <= width and line.isascii() else None)
            for line in lines]


def _fits(text: str, indent: int, width: int) -> bool:
    """Whether ``textwrap.wrap`` would give ``text`` as one line, unchanged but for its indent: ASCII that fits, with
    no whitespace it would replace (tabs, newlines) nor any at its end, which it would drop."""
    return (bool(text) and indent + len(text) <= width and text.isascii() and not text[-1].isspace()
            and not any(space in text for space in _REPLACED_WHITESPACE))


_REPLACED_WHITESPACE = ("\t", "\n", "\x0b", "\x0c", "\r")


def render(report: Report, console: Console, verbose: bool = False, limit: int | None = 20,
           verdict: tuple[int, str] | None = None) -> None:
    """The report; ``limit`` bounds the suggested indexes and findings listed (the JSON report holds them all);
    ``verdict``, the exit status and why, is its last line."""
    width = console.width
    console.print(_header(report))
    console.print(_inputs(report.inputs, verbose))
    if verbose:
        _print_problems(report.inputs, console)
    console.print()
    if report.gate is not None:  # check: the verdict and the change take the place of the shapes (JSON has them)
        _print_gate(report, console, width)
    else:
        _print_shapes(report, console, width)
    _print_suggestions(report, console, width, limit)
    _print_index_sets(report, console, width, limit, verbose)
    _print_inventory(report, console, width, verbose)
    _print_findings(report, console, width, limit)
    if verbose:
        _print_skipped(report, console, width)
    if verdict is not None:
        status, text = verdict
        console.print()
        console.print(Text(text, style="bold green" if status == 0 else "bold red"))


def _header(report: Report) -> Text:
    summary = report.summary
    text = Text()
    text.append(f"idxadvisor {report.tool.version}", style="bold")
    text.append(f"  {summary.inputs} input{'s' if summary.inputs != 1 else ''}, ")
    entries = counted(summary.entries, "slow-operation entry", "slow-operation entries")
    text.append(f"{counted(summary.lines, 'line')}, {entries}, ")
    text.append(f"{counted(summary.operations, 'operation')}")
    text.append("\n")
    text.append(f"problems {summary.problems:,}", style="red" if summary.problems else "")
    text.append(f" · truncated {summary.truncated:,}", style="yellow" if summary.truncated else "")
    text.append(f" · {summary.shapes:,} shape{'s' if summary.shapes != 1 else ''}")
    if summary.versions:
        text.append(" · server " + ", ".join(summary.versions))
    if summary.first_seen or summary.last_seen:
        text.append(f"\n{_time(summary.first_seen)} → {_time(summary.last_seen)}")
    for reason, count in summary.excluded.items():
        text.append(f"\nleft out: {counted(count, 'operation')}: {reason}", style="dim")
    traffic = traffic_line(report)
    if traffic is not None:
        text.append(f"\n{traffic}")
    if report.samples:
        text.append(f"\ndata: {samples_line(report.samples)}", style="red" if any(s.problems for s in report.samples)
                    else "")
    for line in report.indexes_left_out:
        text.append(f"\nnot read: {line}", style="yellow")
    if report.inputs_skipped:
        text.append(f"\n{skipped_inputs_line(report.inputs_skipped)}", style="dim")
    if report.server is not None:
        for line in server_lines(report.server):
            warn = line.startswith("not read") or "NOT DROPPED" in line or "not built" in line
            text.append(f"\n{line}", style="yellow" if warn else "")
    return text


def _inputs(inputs: list[InputReport], verbose: bool) -> Table | Text:
    if len(inputs) == 1 and not verbose and not inputs[0].error:
        only = inputs[0]
        return Text(f"{only.path} ({only.format})", style="dim")
    table = Table(box=None, pad_edge=False, show_header=True, header_style="dim")
    for name, justify in (("input", "left"), ("format", "left"), ("lines", "right"), ("entries", "right"),
                          ("problems", "right"), ("truncated", "right")):
        table.add_column(name, justify=justify, overflow="fold")  # type: ignore[arg-type]
    for item in inputs:
        table.add_row(
            Text(item.path), Text(item.format), f"{item.lines:,}", f"{item.entries:,}",
            Text(f"{item.problems:,}", style="red" if item.problems else ""), f"{item.truncated:,}",
        )
        if item.error:
            table.add_row(Text(f"  error: {item.error}", style="red"), "", "", "", "", "")
    return table


def _print_problems(inputs: list[InputReport], console: Console) -> None:
    for item in inputs:
        for problem in item.problem_examples:
            where = f"line {problem.line}" if problem.line else "document"
            line = Text(f"  {item.path}: {where}: {problem.reason}", style="dim")
            if problem.excerpt:
                line.append(f"\n    {problem.excerpt}")
            console.print(line)


def _print_gate(report: Report, console: Console, width: int) -> None:
    gate = report.gate
    assert gate is not None
    console.print(Text(f"Gate: {gate_line(gate)}", style="bold green" if gate.passed else "bold red"))
    against = f" (baseline {gate.baseline_indexes})" if gate.baseline_indexes else ""
    console.print(Text(f"Index change: {', '.join(gate.indexes)}{against}", style="bold"))
    if not gate.changes:
        console.print(Text("  no index created, dropped, hidden or unhidden", style="dim"))
    for change in gate.changes:
        console.print(Group(*_indented(change_line(change), 2, width)))
    for note in gate.notes:
        console.print(Group(*_indented(f"note: {note}", 2, width, "dim")))
    for finding in gate.resolved:
        console.print(Group(*_indented(f"resolved: {finding.rule} {finding.ns}: {finding.message}", 2, width,
                                       "green")))


def _print_shapes(report: Report, console: Console, width: int) -> None:
    shapes = report.shapes
    title = Text(f"Top {len(shapes)} of {report.summary.shapes} query shapes", style="bold")
    console.print(title)
    if not shapes:
        quiet = report.summary.operations == 0 and report.server is None
        console.print(Text(f"  {NO_SLOW_OPERATION if quiet else 'no slow operations in scope'}", style="dim"))
    for rank, shape in enumerate(shapes, start=1):
        console.print(_shape_block(rank, shape, width))


def _shape_block(rank: int, shape: ShapeReport, width: int) -> Group:
    duration = shape.duration_ms
    first = Text()
    first.append(f"{rank:>3}. ", style="bold")
    first.append(f"{shape.op} {shape.ns}", style="bold")
    ops = "op" if shape.count == 1 else "ops"
    first.append(f"  {human_count(shape.count)} {ops} · total {human_ms(duration.total)} · p95 "
                 f"{human_ms(duration.p95)} · max {human_ms(duration.max)}")
    body = shape.shape.split(" ", 2)[2] if shape.shape.count(" ") >= 2 else ""
    details = []
    plan = next(iter(shape.plans), None)
    if plan:
        share = shape.plans[plan] * 100 // max(shape.count, 1)
        details.append(f"plan {plan}" + (f" ({share}%)" if len(shape.plans) > 1 else ""))
    if shape.docs_examined_per_returned is not None and shape.docs_examined:
        details.append(f"docs examined/returned {_ratio(shape.docs_examined_per_returned)}")
    if shape.keys_examined_per_returned is not None and shape.keys_examined:
        details.append(f"keys/returned {_ratio(shape.keys_examined_per_returned)}")
    if shape.nreturned == 0 and (shape.docs_examined or shape.keys_examined):
        examined = max(shape.docs_examined, shape.keys_examined) / max(shape.count, 1)
        details.append(f"{examined:,.0f} examined per execution, nothing returned")
    if shape.blocking_sorts:
        details.append(f"blocking sort {shape.blocking_sorts * 100 // max(shape.count, 1)}%")
    if shape.used_disk:
        details.append(f"spilled to disk {shape.used_disk * 100 // max(shape.count, 1)}%")
    if shape.errors:
        details.append(f"{shape.errors:,} failed")
    if shape.truncated:
        details.append(f"truncated {shape.truncated}")
    if shape.internal:
        details.append("internal")
    parts = [first, *_indented(body, 5, width, "cyan"), *_indented(" · ".join(details), 5, width, "dim")]
    if shape.example is not None:  # --show-values
        parts += _indented(f"example: {values_text(shape.example)}", 5, width)
    timing = breakdown_line(shape.time_breakdown)
    if timing:
        parts += _indented(f"time: {timing}", 5, width, "dim")
    return Group(*parts)


def _ratio(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:,.1f}"


def _print_suggestions(report: Report, console: Console, width: int, limit: int | None) -> None:
    suggestions = report.suggested_indexes
    if not suggestions:
        return
    console.print()
    shown = suggestions[:limit] if limit else suggestions
    more = f" (top {len(shown)})" if len(shown) < len(suggestions) else ""
    console.print(Text(f"Suggested indexes: {len(suggestions)}{more}", style="bold"))
    for rank, suggestion in enumerate(shown, start=1):
        shapes = suggestion.shape_count
        about = (f"{shapes} shape{'s' if shapes > 1 else ''} ({', '.join(suggestion.rules)}) · "
                 f"{human_impact(suggestion.impact, suggestion.impact_unit)}")
        if suggestion.saving_s_per_hour is not None:
            about += f" · saves {human_seconds(suggestion.saving_s_per_hour)} of server time per hour"
        if suggestion.replaces:
            about += f" · makes {suggestion.replaces} redundant"
        lines = _indented(suggestion.command, 5, width, "green")
        lines[0] = Text(f"{rank:>3}. ", style="bold") + Text(lines[0].plain[5:], style="green")
        console.print(Group(*lines, *_indented(about, 5, width, "dim")))


def _print_index_sets(report: Report, console: Console, width: int, limit: int | None, verbose: bool) -> None:
    """Per collection, the set chosen for its workload: the indexes to create, keep and hide, and with --verbose
    each shape today and with the set."""
    headline = selection_line(report)
    if headline is None:
        return
    sets = report.index_sets[:limit] if limit else report.index_sets
    more = f" (the {len(sets)} saving the most; --format json lists all)" if len(sets) < len(report.index_sets) else ""
    console.print()
    console.print(Group(*_indented(f"Index sets for the workload: {headline}{more}", 0, width, "bold")))
    for index_set in sets:
        per = "per hour" if index_set.totals.per == "hour" else "over the log"
        console.print(Group(*_indented(set_heading(index_set), 2, width, "bold"),
                            *_indented(set_method(index_set), 4, width, "dim")))
        for index in index_set.indexes:
            if index.status == "kept" and index.name == "_id_" and not verbose:
                continue
            lines = _indented(index_line(index, per), 4, width, {"new": "green", "hide": "yellow"}.get(index.status,
                                                                                                      "dim"))
            if index.status == "hide":
                lines += _indented(f"{index.command}, then {index.drop_command} once nothing slowed down", 6, width,
                                   "dim")
            console.print(Group(*lines))
        for line in [writes_line(index_set), *index_set.notes]:
            if line:
                console.print(Group(*_indented(line, 4, width, "dim")))
        if verbose:
            for line in left_out_lines(index_set):
                console.print(Group(*_indented(line, 4, width, "dim")))
            shapes = index_set.shapes[:limit] if limit else index_set.shapes
            for shape in shapes:
                console.print(Group(*_indented(shape_line(shape), 4, width)))
                if shape.evidence is not None:
                    console.print(Group(*_indented(evidence_line(shape.evidence, "with the set"), 6, width, "dim")))


def _print_inventory(report: Report, console: Console, width: int, verbose: bool) -> None:
    headline = inventory_headline(report)
    if headline is None:
        return
    shown = inventory_shown(report, verbose)
    console.print()
    more = "" if verbose else " (of the collections with a suggestion; -v lists all)"
    console.print(Group(*_indented(headline + (more if shown else ""), 0, width, "bold")))
    for index in shown:
        console.print(Group(*_indented(inventory_line(index), 2, width, "dim")))


def _print_findings(report: Report, console: Console, width: int, limit: int | None) -> None:
    """One item per root cause (a group), its findings under it; a group of one finding is that finding."""
    console.print()
    findings = report.findings
    if not findings:
        console.print(Text("No findings.", style="bold green"))
        return
    items = groups_for_people(report)
    shown = items[:limit] if limit else items
    title = f"Findings: {len(findings)}"
    if len(items) < len(findings):
        title += f" in {len(items)} groups by root cause"
    if len(shown) < len(items):
        title += f" (top {len(shown)} by impact; --format json lists all)"
    console.print(Text(title, style="bold"))
    blocks: list[Group] = []  # printed at once: each print costs Rich a pass of its own
    for group, members in shown:
        if group is None or len(members) == 1:
            blocks.append(_finding_block(members[0], width))
            continue
        blocks.append(_group_head(group, width))
        blocks += [_finding_block(finding, width, indent=2, ns=False) for finding in members]
    console.print(Group(*blocks))


def _group_head(group: FindingGroup, width: int) -> Group:
    head = Text()
    head.append(f"{group.severity.upper():<7} ", style=SEVERITY_STYLES.get(group.severity, ""))
    head.append(f"{group.ns}", style="bold")
    head.append(f"  {counted(len(group.findings), 'finding')}, one root cause · "
                f"{human_impact(group.impact, group.impact_unit)}")
    return Group(head, *_indented(group.title, 8, width, "cyan"))


def _finding_block(finding: Finding, width: int, indent: int = 0, ns: bool = True) -> Group:
    head = Text(" " * indent)
    head.append(f"{finding.severity.upper():<7} ", style=SEVERITY_STYLES.get(finding.severity, ""))
    head.append(f"{finding.rule} {finding.name}", style="bold")
    if ns:
        head.append(f"  {finding.ns}")
    if finding.status is not None:
        head.append(f"  [{finding.status}]", style="bold" if finding.counts else "dim")
    body = 8 + indent
    parts = [head]
    if finding.location is not None:
        parts += _indented(f"at {finding.location}", body, width, "dim")
    parts += _indented(finding.message, body, width)
    for detail in finding.details:
        parts += _indented(f"- {detail}", body, width, "dim")
    if finding.index is not None:
        parts += _indented(finding.index.command, body, width, "green")
    evidence = finding.evidence
    if evidence is not None:
        parts += _indented(evidence_line(evidence, evidence_after_label(finding)), body, width, "dim")
        if evidence.query is not None:  # --show-values
            parts += _indented(f"query: {values_text(evidence.query)}", body, width)
        if evidence.estimate is not None:
            parts += _indented(evidence_line(evidence.estimate), body, width, "dim")
        calibration = calibration_line(evidence)
        if calibration:
            agree = all(row.agree for row in evidence.calibration)
            parts += _indented(calibration, body, width, "dim" if agree else "yellow")
    return Group(*parts)


def _print_skipped(report: Report, console: Console, width: int) -> None:
    if not report.skipped:
        return
    console.print()
    console.print(Text("No suggestion for these shapes:", style="bold"))
    listed, without_query = skips_for_people(report.skipped)
    for skip in listed:
        console.print(Group(*_indented(f"{skip.fingerprint}  {skip.shape}", 2, width),
                            *_indented(skip.reason, 6, width, "dim")))
    if without_query:
        console.print(Group(*_indented(f"{operation_counts(without_query)}: no query an index could serve", 2,
                                       width, "dim")))
