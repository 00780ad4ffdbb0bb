"""The HTML report: one self-contained page that opens offline, with charts, for a DBA investigating an incident.

The page is written here, section by section (``SECTIONS``: a new section is one more function), with every string
escaped on the way in. Charts are Vega-Lite specifications (``charts.py``) drawn in the browser by the Vega bundle that
``vl-convert-python`` ships, inlined with the page's own script and style (``assets/``): no CDN, no server, and a
Content-Security-Policy that forbids the page any request. Chart data travels as JSON inside a
``<script type="application/json">`` whose ``<``, ``>`` and ``&`` are escaped, so no value can close it.

The charting library is an optional extra (``pip install 'idxadvisor[html]'``), imported only to write this format.
"""

from __future__ import annotations

import html
import importlib.util
import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any, TextIO

from idxadvisor import __version__
from idxadvisor.errors import UsageError
from idxadvisor.models.report import (
    SEVERITY_ORDER,
    Evidence,
    Finding,
    FindingGroup,
    IndexSet,
    InputReport,
    Report,
    SetShape,
    ShapeReport,
    Skip,
    SuggestedIndex,
)
from idxadvisor.report.inventory import inventory_headline, inventory_line, inventory_shown, traffic_line
from idxadvisor.report import charts
from idxadvisor.report.build import gate_line, key_text, operation_counts, samples_line, skips_for_people
from idxadvisor.report.markdown import _counted, _number, _time  # the same words and numbers in both reports
from idxadvisor.report.server import server_lines
from idxadvisor.report.sets import (
    index_parts,
    left_out_lines,
    selection_line,
    set_heading,
    set_method,
    writes_line,
)
from idxadvisor.report.timing import bar_segments, breakdown_line
from idxadvisor.units import human_bytes, human_count, human_impact, human_ms, human_seconds, printable, visible

MISSING_EXTRA = "--format html needs the charting library: pip install 'idxadvisor[html]'"
#: Shape details open when the page opens (their charts are drawn at once); the others draw when opened.
SHAPES_OPEN = 5
#: Finding groups open when the page opens.
GROUPS_OPEN = 10
#: No request of any kind: the page is one file. Vega compiles its expressions with Function (hence unsafe-eval).
CONTENT_SECURITY_POLICY = ("default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline'; "
                           "img-src data:; font-src data:; base-uri 'none'; form-action 'none'")
EVIDENCE_ROWS = (("planSummary", "plan"), ("totalKeysExamined", "keys examined"),
                 ("totalDocsExamined", "documents examined"), ("nReturned", "returned"),
                 ("executionTimeMillis", "time, ms"))


def require_charting() -> None:
    """Fail before any work when the charting library is not installed (the command line asks this first)."""
    if importlib.util.find_spec("vl_convert") is None:
        raise UsageError(MISSING_EXTRA)


@dataclass(frozen=True)
class ChartingLibrary:
    script: str
    versions: str


def charting_library() -> ChartingLibrary:
    """Vega, Vega-Lite and vega-embed as one script, wrapped so that its top-level names stay its own."""
    try:
        import vl_convert
    except ImportError:
        raise UsageError(MISSING_EXTRA) from None
    bundle = vl_convert.javascript_bundle()
    if re.search(r"</script|<!--", bundle, re.IGNORECASE):  # would end the <script> element early
        raise UsageError("the charting library's script cannot be inlined: it contains '</script' or '<!--'")
    versions = (f"Vega {vl_convert.get_vega_version()}, Vega-Lite {vl_convert.get_vegalite_versions()[-1]}, "
                f"vega-embed {vl_convert.get_vega_embed_version()}")
    return ChartingLibrary(f"(function () {{\n{bundle}\n}}).call(window);", versions)


def render(report: Report, out: TextIO, verbose: bool = False) -> None:
    library = charting_library()
    page = Page(report, verbose)
    sections = [(anchor, section(page)) for anchor, section in SECTIONS]
    summary = report.summary
    title = f"idxadvisor report: {_counted(summary.shapes, 'shape')}, {_counted(len(report.findings), 'finding')}"
    out.write(document(title, report.tool.version, page, [(anchor, body) for anchor, body in sections
                                                          if body is not None], library))


# -- the page ------------------------------------------------------------------------------------------------------


def esc(value: object) -> str:
    """Text for HTML content or a quoted attribute; bidi controls and invisible characters shown as escapes."""
    return html.escape(visible(str(value)), quote=True)


def json_for_script(value: Any) -> str:
    """JSON that cannot end the ``<script>`` holding it, nor open a comment: ``<``, ``>``, ``&`` as \\u escapes."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


@dataclass
class Section:
    title: str
    body: str


class Charts:
    """The charts placed on a page so far, and the data its script draws them from."""

    def __init__(self) -> None:
        self.charts: dict[str, charts.Chart] = {}

    def chart(self, chart: charts.Chart | None, title: str) -> str:
        """A placeholder the page's script draws ``chart`` into (at once, or when its details are opened)."""
        if chart is None:
            return ""
        chart_id = f"c{len(self.charts)}"
        self.charts[chart_id] = chart
        note = f'<p class="note">{esc(chart.note)}</p>' if chart.note else ""
        return (f'<figure class="chart chart-{chart.kind}" data-chart="{chart_id}"><figcaption>{esc(title)}'
                f'</figcaption><div class="plot"></div>{note}</figure>')

    def chart_data(self) -> dict[str, Any]:
        return {"specs": charts.SPECS, "fields": charts.FIELDS, "config": charts.CONFIG,
                "charts": {chart_id: {"kind": chart.kind, "rows": [_chart_row(row) for row in chart.rows],
                                      **({"height": chart.height} if chart.height else {})}
                           for chart_id, chart in self.charts.items()}}


def _chart_row(row: list[Any]) -> list[Any]:
    """A chart's row with its text (a namespace, a shape, a plan from the log) escaped like a terminal's: Vega draws
    it as SVG text and tooltips, where a bidi control would reorder a name and a control character has no place."""
    return [printable(value) if isinstance(value, str) else value for value in row]


class Page(Charts):
    """What the sections share: the report, the charts placed so far, and where each shape's details are."""

    def __init__(self, report: Report, verbose: bool) -> None:
        super().__init__()
        self.report = report
        self.verbose = verbose
        self.anchors = {shape.fingerprint: shape_anchor(shape.fingerprint) for shape in report.shapes}
        self.shapes = {shape.fingerprint: shape for shape in report.shapes}
        self.groups = finding_groups(report)
        self.findings_of: dict[str, list[int]] = {}
        for index, finding in enumerate(report.findings):
            self.findings_of.setdefault(finding.fingerprint, []).append(index)

    def shape_link(self, fingerprint: str, text: str | None = None) -> str:
        label = esc(text if text is not None else fingerprint)
        anchor = self.anchors.get(fingerprint)
        return f'<a href="#{esc(anchor)}">{label}</a>' if anchor else label


def shape_anchor(fingerprint: str) -> str:
    return "shape-" + re.sub(r"[^A-Za-z0-9_-]", "_", fingerprint)


def finding_groups(report: Report) -> list[FindingGroup]:
    """The report's groups of findings by root cause; without them, one group per shape, in the findings' order."""
    if report.groups:
        return report.groups
    shapes = {shape.fingerprint: shape for shape in report.shapes}
    grouped: dict[str, list[int]] = {}
    for index, finding in enumerate(report.findings):
        grouped.setdefault(finding.fingerprint, []).append(index)
    groups = []
    for fingerprint, indices in grouped.items():
        members = [report.findings[index] for index in indices]
        shape = shapes.get(fingerprint)
        groups.append(FindingGroup(
            id=fingerprint, title=shape.shape if shape else f"{members[0].ns} {fingerprint}", ns=members[0].ns,
            fingerprint=fingerprint, severity=max((f.severity for f in members), key=SEVERITY_ORDER.__getitem__),
            impact=max(f.impact for f in members), impact_unit=members[0].impact_unit, findings=indices))
    return groups


def document(title: str, version: str, page: Charts, sections: list[tuple[str, Section]],
             library: ChartingLibrary) -> str:
    """The whole page: its sections, the charting library inlined, the charts' data and the page's script."""
    nav = "".join(f'<a href="#{anchor}">{esc(section.title)}</a>' for anchor, section in sections)
    body = "\n".join(f'<section id="{anchor}"><h2>{esc(section.title)}</h2>\n{section.body}\n</section>'
                     for anchor, section in sections)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="{esc(CONTENT_SECURITY_POLICY)}">
<meta name="generator" content="idxadvisor {esc(__version__)}; charts: {esc(library.versions)}">
<title>{esc(title)}</title>
<style>
{_asset("report.css")}
</style>
</head>
<body>
<header class="top"><div class="brand">idxadvisor <span>{esc(version)}</span></div>
<nav>{nav}</nav></header>
<main>
{body}
</main>
<footer>Written by idxadvisor {esc(version)}; charts drawn with {esc(library.versions)}.</footer>
<script type="application/json" id="idxadvisor-charts">{json_for_script(page.chart_data())}</script>
<script>
{library.script}
</script>
<script>
{_asset("report.js")}
</script>
</body>
</html>
"""


def _asset(name: str) -> str:
    return resources.files("idxadvisor.report").joinpath("assets", name).read_text(encoding="utf-8")


# -- sections ------------------------------------------------------------------------------------------------------


def _severity(severity: str) -> str:
    return f'<span class="sev sev-{esc(severity)}">{esc(severity)}</span>'


def _copy_button(text: str, label: str = "Copy") -> str:
    return f'<button type="button" class="copy" data-copy="{esc(text)}">{esc(label)}</button>'


def _command(command: str) -> str:
    return f'<div class="command"><pre><code>{esc(command)}</code></pre>{_copy_button(command)}</div>'


def _facts(rows: Iterable[tuple[str, str]]) -> str:
    """A definition list; values are HTML already (escaped by the caller)."""
    return '<dl class="facts">' + "".join(f"<dt>{esc(name)}</dt><dd>{value}</dd>" for name, value in rows) + "</dl>"


def summary_section(page: Page) -> Section:
    """The terminal report's header: inputs, span, versions, problems, what was left out, the data samples."""
    report, summary = page.report, page.report.summary
    lead = (f"{_counted(summary.inputs, 'input')}, {_counted(summary.lines, 'line')}, "
            f"{_counted(summary.entries, 'slow-operation entry', 'slow-operation entries')}, "
            f"{_counted(summary.operations, 'operation')}, {_counted(summary.shapes, 'query shape')}")
    facts = [("Time span", esc(f"{_time(summary.first_seen)} → {_time(summary.last_seen)}")
              if summary.first_seen or summary.last_seen else "?"),
             ("Server versions", esc(", ".join(summary.versions)) if summary.versions else "unknown"),
             ("Problems", f'<span class="{"bad" if summary.problems else ""}">{summary.problems:,}</span>'
              + (" lines could not be read" if summary.problems else "")),
             ("Truncated", esc(_counted(summary.truncated, "entry", "entries") + " whose command the server truncated")
              if summary.truncated else "0")]
    facts += [("Left out", esc(f"{_counted(count, 'operation')}: {reason}"))
              for reason, count in summary.excluded.items()]
    if report.samples:
        facts.append(("Data", esc(samples_line(report.samples))))
    traffic = traffic_line(report)
    if traffic is not None:
        facts.append(("Traffic", esc(traffic.removeprefix("traffic: "))))
    facts += [("Not read", f'<span class="bad">{esc(line)}</span>') for line in report.indexes_left_out]
    severities = [finding.severity for finding in report.findings]
    counts = ", ".join(f"{severities.count(name)} {name}" for name in ("error", "warning", "info")
                       if name in severities)
    facts.append(("Findings", f"{len(report.findings):,}" + (f" ({esc(counts)})" if counts else "")))
    facts.append(("Suggested indexes", f"{len(report.suggested_indexes):,}"))
    body = f'<p class="lead">{esc(lead)}</p>\n{_facts(facts)}\n{_inputs_table(report.inputs)}'
    if page.verbose:
        body += _problem_examples(report.inputs)
    return Section("Summary", body)


def _inputs_table(inputs: list[InputReport]) -> str:
    rows = []
    for item in inputs:
        span = f"{_time(item.first_seen)} → {_time(item.last_seen)}" if item.first_seen or item.last_seen else ""
        error = f'<div class="bad">error: {esc(item.error)}</div>' if item.error else ""
        rows.append(f'<tr><td class="path">{esc(item.path)}{error}</td><td>{esc(item.format)}</td>'
                    f'<td class="num">{item.lines:,}</td><td class="num">{item.entries:,}</td>'
                    f'<td class="num{" bad" if item.problems else ""}">{item.problems:,}</td>'
                    f'<td class="num">{item.truncated:,}</td><td>{esc(", ".join(item.versions))}</td>'
                    f'<td>{esc(span)}</td><td class="num">{esc(human_bytes(item.bytes)) if item.bytes else ""}</td>'
                    "</tr>")
    return ('<table class="inputs"><thead><tr><th>input</th><th>format</th><th class="num">lines</th>'
            '<th class="num">entries</th><th class="num">problems</th><th class="num">truncated</th>'
            '<th>server</th><th>span</th><th class="num">size</th></tr></thead><tbody>'
            + "".join(rows) + "</tbody></table>")


def _problem_examples(inputs: list[InputReport]) -> str:
    items = []
    for item in inputs:
        for problem in item.problem_examples:
            where = f"line {problem.line}" if problem.line else "document"
            excerpt = f"<pre><code>{esc(problem.excerpt)}</code></pre>" if problem.excerpt else ""
            items.append(f"<li>{esc(item.path)}: {esc(where)}: {esc(problem.reason)}{excerpt}</li>")
    if not items:
        return ""
    return (f'<details class="problems"><summary>Problem lines ({len(items)})</summary><ul>{"".join(items)}</ul>'
            "</details>")


def suggestions_section(page: Page) -> Section | None:
    """The suggested index set: each command with a copy button, the shapes it serves, and its evidence."""
    suggestions = page.report.suggested_indexes
    if not suggestions:
        return None
    script = "\n".join(suggestion.command for suggestion in suggestions)
    cards = [_suggestion_card(page, rank, suggestion) for rank, suggestion in enumerate(suggestions, start=1)]
    body = (f'<p>{_counted(len(suggestions), "index", "indexes")} to create, by the server time they save. '
            f'{_copy_button(script, "Copy all commands")}</p>\n<ol class="cards">{"".join(cards)}</ol>')
    return Section(f"Suggested indexes ({len(suggestions)})", body)


def index_sets_section(page: Page) -> Section | None:
    """The set chosen for each collection's workload: what to create, keep and hide (with their commands), what the
    writes cost, and each shape today and with the set, with its evidence."""
    headline = selection_line(page.report)
    if headline is None:
        return None
    cards = "".join(_index_set_card(page, index_set) for index_set in page.report.index_sets)
    body = (f"<p>{esc(headline)}. Each set saves the most keys and documents examined net of what its new indexes "
            f"cost the writes (<code>--index-selection per-finding</code> gives one index per finding instead).</p>"
            f'<ol class="cards">{cards}</ol>')
    return Section(f"Index sets ({len(page.report.index_sets)})", body)


def inventory_section(page: Page) -> Section | None:
    """The indexes the log itself shows (without --indexes or --uri), and where each came from."""
    headline = inventory_headline(page.report)
    if headline is None:
        return None
    shown = inventory_shown(page.report, page.verbose)
    items = "".join(f"<li>{esc(inventory_line(index))}</li>" for index in shown)
    more = "" if page.verbose else " Those of the collections with a suggestion (<code>--verbose</code> lists all)."
    return Section("Indexes the log shows", f"<p>{esc(headline)}.{more}</p><ul>{items}</ul>")


def _index_set_card(page: Page, index_set: IndexSet) -> str:
    per = "per hour" if index_set.totals.per == "hour" else "over the log"
    rows = []
    for index in index_set.indexes:
        action, label, why = index_parts(index, per)
        command = ""
        if index.command is not None:
            command = _command(index.command) + (_command(index.drop_command) if index.drop_command else "")
        rows.append(f'<tr class="set-{esc(index.status)}"><td>{esc(action)}</td><td><code>{esc(label)}</code></td>'
                    f"<td>{esc(why)}{command}</td></tr>")
    verbose_lines = left_out_lines(index_set) if page.verbose else []
    extra = "".join(f"<li>{esc(line)}</li>" for line in [writes_line(index_set), *index_set.notes, *verbose_lines]
                    if line)
    notes = f'<ul class="notes">{extra}</ul>' if extra else ""
    shapes = "".join(_set_shape_row(page, shape) for shape in index_set.shapes)
    return (f'<li class="card"><div class="card-head"><strong>{esc(set_heading(index_set))}</strong></div>'
            f'<p class="about">{esc(set_method(index_set))}</p>'
            f"<table><thead><tr><th>action</th><th>index</th><th>why</th></tr></thead><tbody>{''.join(rows)}"
            f"</tbody></table>{notes}"
            f'<details class="set-shapes"><summary>{_counted(len(index_set.shapes), "shape")}: keys and documents '
            f'examined per execution, today and with the set</summary><table><thead><tr><th>shape</th>'
            f'<th class="num">today</th><th class="num">with the set</th>'
            f"<th>index</th><th>how</th></tr></thead><tbody>{shapes}</tbody></table></details></li>")


def _set_shape_row(page: Page, shape: SetShape) -> str:
    how = shape.model + ("; a finding asks for an index" if shape.requested else "")
    how += f"; {shape.note}" if shape.note else ""
    evidence = _evidence_block(shape.evidence, collapsed=True) if shape.evidence is not None else ""
    cost = [esc(_number(value)) if value is not None else "" for value in (shape.before, shape.after)]
    return (f'<tr><td>{page.shape_link(shape.fingerprint, shape.shape)}{evidence}</td><td class="num">{cost[0]}</td>'
            f'<td class="num">{cost[1]}</td><td><code>{esc(shape.index or "collection scan")}</code></td>'
            f"<td>{esc(how)}</td></tr>")


def _suggestion_card(page: Page, rank: int, suggestion: SuggestedIndex) -> str:
    findings = [finding for finding in page.report.findings
                if finding.index is not None and not finding.index.name and finding.index.ns == suggestion.ns
                and [tuple(pair) for pair in finding.index.key] == [tuple(pair) for pair in suggestion.key]]
    about = [esc(suggestion.ns), esc(", ".join(suggestion.rules)),
             esc(human_impact(suggestion.impact, suggestion.impact_unit))]
    if suggestion.saving_s_per_hour is not None:
        about.append(esc(f"saves {human_seconds(suggestion.saving_s_per_hour)} of server time per hour"))
    if suggestion.replaces:
        about.append(f"makes <code>{esc(suggestion.replaces)}</code> redundant")
    shapes = ", ".join(page.shape_link(fingerprint, _shape_label(page, fingerprint))
                       for fingerprint in suggestion.fingerprints)
    evidence = "".join(_evidence_block(finding.evidence, page.shape_link(finding.fingerprint))
                       for finding in findings if finding.evidence is not None)
    chart = page.chart(charts.evidence_chart(findings), "Keys and documents examined per execution")
    return (f'<li class="card sev-{esc(suggestion.severity)}"><div class="card-head"><span class="rank">#{rank}</span>'
            f'{_severity(suggestion.severity)}<span class="about">{" · ".join(about)}</span></div>'
            f"{_command(suggestion.command)}<p>For {_counted(suggestion.shape_count, 'shape')}: {shapes}</p>"
            f'<div class="evidence-row">{evidence}{chart}</div></li>')


def _shape_label(page: Page, fingerprint: str) -> str:
    shape = page.shapes.get(fingerprint)
    return shape.shape if shape else fingerprint


def _evidence_block(evidence: Evidence, about: str = "", collapsed: bool = False) -> str:
    """Today's plan against the candidate's, with the explain counters' names, and the evaluator's notes; collapsed,
    under one line of keys and documents examined today and with the index."""
    source = {"estimator": "estimated over the data sample", "server": "measured on a server"}.get(
        evidence.evaluator, evidence.evaluator)
    rows = []
    for key, label in EVIDENCE_ROWS:
        if key in evidence.before or key in evidence.after:
            rows.append(f"<tr><th>{esc(label)}</th><td>{_evidence_value(evidence.before, key)}</td>"
                        f"<td>{_evidence_value(evidence.after, key)}</td></tr>")
    for side, plan in (("today", evidence.before), ("with the index", evidence.after)):
        if "unsupported" in plan:
            rows.append(f'<tr><th>{side}</th><td colspan="2">not estimated: {esc(plan["unsupported"])}</td></tr>')
    notes = "".join(f"<li>{esc(note)}</li>" for note in evidence.notes)
    calibration = _calibration_table(evidence)
    query = (f'<details><summary>query</summary><pre><code>{esc(json.dumps(evidence.query, indent=2, default=str))}'
             f"</code></pre></details>" if evidence.query is not None else "")
    table = (f'<table><thead><tr><th></th><th>today</th><th>with the index</th></tr></thead>'
             f'<tbody>{"".join(rows)}</tbody></table>{f"""<ul class="notes">{notes}</ul>""" if notes else ""}'
             f"{calibration}{query}")
    if collapsed:
        return (f'<details class="evidence"><summary>Evidence ({esc(source)}): {esc(_evidence_line(evidence))}'
                f"</summary>{table}</details>")
    heading = f"Evidence ({esc(source)})" + (f" for {about}" if about else "")
    return f'<div class="evidence"><h4>{heading}</h4>{table}</div>'


def _calibration_table(evidence: Evidence) -> str:
    """Beside a server's numbers, what the estimator predicted on the same sample and indexes, counter by counter."""
    if evidence.estimate is None:
        return ""
    rows = "".join(
        f'<tr class="{"" if row.agree else "bad"}"><td>{"today" if row.plan == "before" else "with the index"}</td>'
        f"<td><code>{esc(row.counter)}</code></td><td class=\"num\">{_evidence_value({'v': row.server}, 'v')}</td>"
        f"<td class=\"num\">{_evidence_value({'v': row.estimator}, 'v')}</td><td>{'yes' if row.agree else 'no'}</td></tr>"
        for row in evidence.calibration)
    agreeing = sum(row.agree for row in evidence.calibration)
    return (f'<table class="calibration"><caption>The estimator on the same sample and indexes: {agreeing} of '
            f"{len(evidence.calibration)} counters agree with the server</caption><thead><tr><th>plan</th>"
            '<th>counter</th><th class="num">server</th><th class="num">estimator</th><th>agree</th></tr></thead>'
            f"<tbody>{rows}</tbody></table>")


def _evidence_line(evidence: Evidence) -> str:
    """``keys 12,531 → 1,345, documents 12,531 → 0``"""
    parts = []
    for key, label in (("totalKeysExamined", "keys"), ("totalDocsExamined", "documents")):
        before, after = evidence.before.get(key), evidence.after.get(key)
        if isinstance(before, (int, float)) and isinstance(after, (int, float)):
            parts.append(f"{label} {_number(before)} → {_number(after)}")
    return ", ".join(parts) or "not estimated"


def _evidence_value(plan: dict[str, Any], key: str) -> str:
    value = plan.get(key)
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"<code>{esc(value)}</code>"
    return esc(_number(value))


def findings_section(page: Page) -> Section:
    """Findings grouped by root cause, each with its details, index command and evidence."""
    report = page.report
    if not report.findings:
        return Section("Findings", '<p class="good">No findings.</p>')
    blocks = [_group_block(page, group, open_=rank < GROUPS_OPEN) for rank, group in enumerate(page.groups)]
    body = (f"<p>{_counted(len(report.findings), 'finding')} with "
            f"{_counted(len(page.groups), 'root cause')}, the costliest first.</p>\n" + "\n".join(blocks))
    return Section(f"Findings ({len(report.findings)})", body)


def _group_block(page: Page, group: FindingGroup, open_: bool) -> str:
    findings = [(index, page.report.findings[index]) for index in group.findings
                if 0 <= index < len(page.report.findings)]
    link = f" · shape {page.shape_link(group.fingerprint)}" if group.fingerprint else ""
    summary = (f"{_severity(group.severity)} <span class=\"title\">{esc(group.title)}</span> "
               f'<span class="about">{esc(group.ns)} · {esc(human_impact(group.impact, group.impact_unit))} · '
               f"{_counted(len(findings), 'finding')}</span>")
    articles = "".join(_finding_block(page, index, finding) for index, finding in findings)
    return (f'<details class="group sev-{esc(group.severity)}"{" open" if open_ else ""}><summary>{summary}</summary>'
            f'<div class="group-body"><p class="about">{esc(group.ns)}{link}</p>{articles}</div></details>')


def _finding_block(page: Page, index: int, finding: Finding) -> str:
    details = "".join(f"<li>{esc(detail)}</li>" for detail in finding.details)
    command = _command(finding.index.command) if finding.index is not None else ""
    evidence = _evidence_block(finding.evidence, collapsed=True) if finding.evidence is not None else ""
    where = [f'<span class="status status-{esc(finding.status)}">{esc(finding.status)}</span>'] if finding.status else []
    if finding.location is not None:
        where.append(f"<code>{esc(str(finding.location))}</code>")
    place = f'<p class="about">{" · ".join(where)}</p>' if where else ""
    return (f'<article class="finding" id="finding-{index}"><h3>{_severity(finding.severity)} '
            f'<span class="rule">{esc(finding.rule)}</span> {esc(finding.name)}</h3>{place}'
            f"<p>{esc(finding.message)}</p>{f'<ul>{details}</ul>' if details else ''}{command}{evidence}</article>")


#: The shape table's columns: (heading, its explanation, sorted as a number or as text).
SHAPE_COLUMNS = (("#", "rank", "number"), ("op", "operation", "text"), ("namespace", "", "text"),
                 ("shape", "", "text"), ("count", "executions", "number"), ("total", "total duration", "number"),
                 ("p50", "", "number"), ("p95", "", "number"), ("p99", "", "number"), ("max", "", "number"),
                 ("docs/ret", "documents examined per document returned", "number"),
                 ("keys/ret", "index keys examined per document returned", "number"),
                 ("plans", "plan summaries, the most used first", "text"), ("findings", "", "number"))


def shapes_section(page: Page) -> Section:
    """The top shapes as a table that sorts by any column and filters on any text."""
    report = page.report
    if not report.shapes:
        return Section("Query shapes", '<p>No slow operations in scope.</p>')
    rows = [_shape_row(page, rank, shape) for rank, shape in enumerate(report.shapes, start=1)]
    shown = f"Top {len(report.shapes):,} of {report.summary.shapes:,}" if len(report.shapes) < report.summary.shapes \
        else f"All {len(report.shapes):,}"
    table = shape_table(SHAPE_COLUMNS, rows, "namespace, operation, field, plan", "with findings only")
    body = f"<p>{esc(shown)} query shapes. Click a column to sort, a shape to see its timeline and latency.</p>{table}"
    return Section(f"Query shapes ({len(report.shapes):,})", body)


def shape_table(columns: Sequence[tuple[str, str, str]], rows: list[str], filter_on: str, flagged_only: str) -> str:
    """A table of shapes that sorts by any column (heading, tooltip, "number" or "text") and filters on any text,
    with a checkbox that keeps only the rows marked ``data-flagged="1"`` (report.js drives all three)."""
    head = "".join(_column_heading(name, about, kind) for name, about, kind in columns)
    controls = ('<div class="controls"><input type="search" id="shapes-filter" '
                f'placeholder="Filter: {esc(filter_on)}…" aria-label="Filter shapes"><label><input type="checkbox" '
                f'id="shapes-flagged"> {esc(flagged_only)}</label><span id="shapes-count">{len(rows):,} '
                f"of {len(rows):,} shapes</span></div>")
    body = "\n".join(rows)
    return (f'{controls}<div class="table-wrap"><table id="shapes-table" class="sortable"><thead><tr>{head}</tr>'
            f"</thead><tbody>\n{body}\n</tbody></table></div>")


def _column_heading(name: str, about: str, kind: str) -> str:
    classes = ' class="num"' if kind == "number" else ""
    title = f' title="{esc(about)}"' if about else ""
    return f'<th data-type="{kind}"{classes}{title}><button type="button">{esc(name)}</button></th>'


def number_cell(value: float | None, text: str) -> str:
    """A table cell that sorts by ``value`` and shows ``text``."""
    return f'<td class="num" data-v="{"" if value is None else value}">{esc(text)}</td>'


def _shape_row(page: Page, rank: int, shape: ShapeReport) -> str:
    duration = shape.duration_ms
    plan = next(iter(shape.plans), "")
    plans = plan + (f" (+{len(shape.plans) - 1})" if len(shape.plans) > 1 else "")
    findings = len(page.findings_of.get(shape.fingerprint, []))
    docs, keys = shape.docs_examined_per_returned, shape.keys_examined_per_returned
    cell = number_cell
    return (f'<tr data-flagged="{int(findings > 0)}">{cell(rank, str(rank))}<td>{esc(shape.op)}</td>'
            f'<td>{esc(shape.ns)}</td>'
            f'<td class="shape">{page.shape_link(shape.fingerprint, _shape_body(shape))}</td>'
            f"{cell(shape.count, human_count(shape.count))}{cell(duration.total, human_ms(duration.total))}"
            f"{cell(duration.p50, human_ms(duration.p50))}{cell(duration.p95, human_ms(duration.p95))}"
            f"{cell(duration.p99, human_ms(duration.p99))}{cell(duration.max, human_ms(duration.max))}"
            f'{cell(docs, "" if docs is None else _ratio(docs))}{cell(keys, "" if keys is None else _ratio(keys))}'
            f'<td class="plan">{esc(plans)}</td>{cell(findings, str(findings) if findings else "")}</tr>')


def _shape_body(shape: ShapeReport) -> str:
    """The shape without its operation and namespace, which have their own columns."""
    prefix = f"{shape.op} {shape.ns} "
    return shape.shape[len(prefix):] if shape.shape.startswith(prefix) else shape.shape


def _ratio(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:,.1f}"


def scatter_section(page: Page) -> Section | None:
    """Documents examined against returned over all shapes: the shapes far above the diagonal read for nothing."""
    chart = charts.scatter_chart(page.report.shapes, page.anchors)
    if chart is None:
        return None
    body = ("<p>One point per shape, sized by executions (log scales). A shape well above the dashed line, where "
            "one document is examined per document returned, reads many documents for each one it returns: an index "
            "it lacks, or one that does not match. Click a point for the shape.</p>"
            + page.chart(chart, "Documents examined against returned, per execution"))
    return Section("Examined against returned", body)


def shape_details_section(page: Page) -> Section | None:
    """Per shape: its statistics, timeline, latency histogram, aggregation runs, findings or the reason for none."""
    if not page.report.shapes:
        return None
    reasons: dict[str, list[str]] = {}
    for skip in page.report.skipped:
        reasons.setdefault(skip.fingerprint, []).append(skip.reason)
    blocks = [_shape_block(page, rank, shape, reasons.get(shape.fingerprint, []))
              for rank, shape in enumerate(page.report.shapes, start=1)]
    opened = (f"The first {SHAPES_OPEN} are open; open any other to draw its charts." if len(blocks) > SHAPES_OPEN
              else "")
    body = f"<p>Each shape's statistics and charts. {opened}</p>\n" + "\n".join(blocks)
    return Section("Shape details", body)


def _shape_block(page: Page, rank: int, shape: ShapeReport, reasons: list[str]) -> str:
    duration = shape.duration_ms
    summary = (f'<span class="rank">#{rank}</span> <span class="title">{esc(shape.op)} {esc(shape.ns)}</span> '
               f'<span class="about">{esc(_counted(shape.count, "execution"))} · total {esc(human_ms(duration.total))}'
               f" · p95 {esc(human_ms(duration.p95))} · max {esc(human_ms(duration.max))}</span>")
    timeline = charts.timeline_chart(shape)
    minutes = shape.timeline_minutes
    figures = [page.chart(timeline, f"Executions and p95 per {'minute' if minutes == 1 else f'{minutes} minutes'}"),
               page.chart(charts.latency_chart(shape), f"Latency: p50 {human_ms(duration.p50)}, p95 "
                                                       f"{human_ms(duration.p95)}, p99 {human_ms(duration.p99)}")]
    runs = charts.runs_chart(shape)
    if runs is not None:
        figures.append(page.chart(runs, f"Runs: {_counted(len(runs.rows), 'run')}, up to "
                                        f"{charts.most_at_once(runs)} at once"))
    findings = page.findings_of.get(shape.fingerprint, [])
    verdict = ("<p>Findings: " + ", ".join(
        f'<a href="#finding-{index}">{esc(page.report.findings[index].rule)} '
        f"{esc(page.report.findings[index].name)}</a>" for index in findings) + "</p>") if findings else ""
    verdict += "".join(f'<p class="reason">No suggestion: {esc(reason)}</p>' for reason in reasons)
    example = (f"<details><summary>example command</summary><pre><code>"
               f"{esc(json.dumps(shape.example, indent=2, default=str))}</code></pre></details>"
               if shape.example is not None else "")
    return (f'<details class="shape" id="{esc(page.anchors[shape.fingerprint])}"'
            f'{" open" if rank <= SHAPES_OPEN else ""}><summary>{summary}</summary><div class="shape-body">'
            f'<pre class="shape-text"><code>{esc(shape.shape)}</code></pre>{verdict}{time_bar(shape)}'
            f'<div class="figures">{"".join(figures)}</div>{_shape_facts(shape)}{example}</div></details>')


def time_bar(shape: ShapeReport) -> str:
    """Where one execution's time went, as a stacked bar with its legend (empty when the log does not say)."""
    breakdown = shape.time_breakdown
    if breakdown is None:
        return ""
    line = breakdown_line(breakdown)
    segments = bar_segments(breakdown)
    if not segments or not line:  # only work: the bar would say nothing
        return ""
    described = ", ".join(f"{label} {share:.0%}" for _, label, share in segments)
    spans = "".join(f'<span class="seg seg-{esc(name)}" style="width:{share * 100:.1f}%" '
                    f'title="{esc(label)} {share:.0%}"></span>' for name, label, share in segments)
    legend = "".join(f'<li><span class="swatch seg-{esc(name)}"></span>{esc(label)} {share:.0%}</li>'
                     for name, label, share in segments)
    return (f'<figure class="time-breakdown"><figcaption>Where the time went ({breakdown.executions:,} executions '
            f'that logged it)</figcaption><div class="time-bar" role="img" aria-label="{esc(described)}">{spans}'
            f'</div><ul class="time-legend">{legend}</ul>'
            f'<p class="time-line">{esc(line)}</p></figure>')


def _shape_facts(shape: ShapeReport) -> str:
    duration = shape.duration_ms
    facts = [("fingerprint", f"<code>{esc(shape.fingerprint)}</code>"),
             ("executions", esc(f"{shape.count:,}" + (f" (+{shape.getmores:,} getMores)" if shape.getmores else ""))),
             ("duration", esc(f"total {human_ms(duration.total)}, mean {human_ms(duration.mean)}, p50 "
                              f"{human_ms(duration.p50)}, p95 {human_ms(duration.p95)}, p99 {human_ms(duration.p99)}, "
                              f"max {human_ms(duration.max)}")),
             ("examined", esc(f"{shape.keys_examined:,} keys, {shape.docs_examined:,} documents; "
                              f"{shape.nreturned:,} returned")),
             ("plans", "<br>".join(f"<code>{esc(plan)}</code> × {count:,}" for plan, count in shape.plans.items())
              or "none logged")]
    extras = [("blocking sorts", shape.blocking_sorts), ("used disk", shape.used_disk), ("errors", shape.errors),
              ("truncated", shape.truncated), ("replanned", shape.replanned), ("yields", shape.num_yields)]
    facts += [(name, f"{value:,}") for name, value in extras if value]
    if shape.response_bytes:
        facts.append(("response", esc(human_bytes(shape.response_bytes))))
    if shape.skip_max:
        facts.append(("skip", esc(f"up to {shape.skip_max:,}")))
    if shape.apps:
        facts.append(("apps", esc(", ".join(f"{app} ({count:,})" for app, count in shape.apps.items()))))
    facts.append(("connections", f"{shape.connections:,}"))
    for name, values in shape.server_hashes.items():
        facts.append((name, esc(", ".join(values))))
    facts.append(("seen", esc(f"{_time(shape.first_seen)} → {_time(shape.last_seen)}")))
    return _facts(facts)


def gate_section(page: Page) -> Section | None:
    """``idxadvisor check``: the verdict, the index change it judged (with where each change is written), and the
    findings the change resolves."""
    gate = page.report.gate
    if gate is None:
        return None
    verdict = f'<p class="lead {"good" if gate.passed else "bad"}">{esc(gate_line(gate))}</p>'
    facts = [("Proposed indexes", esc(", ".join(gate.indexes)))]
    if gate.baseline_indexes:
        facts.append(("Today's indexes", esc(gate.baseline_indexes)))
    if gate.baseline:
        facts.append(("Accepted findings", esc(gate.baseline)))
    changes = "".join(
        f"<tr><td>{esc(change.action)}</td><td>{esc(change.ns)}</td><td><code>{esc(change.name)}</code></td>"
        f"<td><code>{esc(key_text(change.key) if change.key else '')}</code></td>"
        f"<td>{f'<code>{esc(str(change.location))}</code>' if change.location is not None else ''}</td></tr>"
        for change in gate.changes)
    table = ('<table class="changes"><thead><tr><th>change</th><th>namespace</th><th>index</th><th>key</th>'
             f"<th>where</th></tr></thead><tbody>{changes}</tbody></table>" if changes else "<p>No index changes.</p>")
    resolved = "".join(f"<li>{esc(finding.rule)} {esc(finding.ns)}: {esc(finding.message)}</li>"
                       for finding in gate.resolved)
    notes = "".join(f"<li>{esc(note)}</li>" for note in gate.notes)
    body = (f"{verdict}{_facts(facts)}{table}"
            + (f"<h3>Resolved by the change</h3><ul>{resolved}</ul>" if resolved else "")
            + (f'<ul class="notes">{notes}</ul>' if notes else ""))
    return Section("Index change", body)


def server_section(page: Page) -> Section | None:
    """The live server read (``--uri``): what it gave and would not give, the scratch database of a replay, and how
    often the estimator agreed with the server."""
    server = page.report.server
    if server is None:
        return None
    lines = server_lines(server)
    items = "".join(f'<li class="{"bad" if "NOT DROPPED" in line or line.startswith("not read") else ""}">'
                    f"{esc(line)}</li>" for line in lines)
    calibration = server.calibration
    disagreements = "".join(f"<li>{esc(item)}</li>" for item in calibration.disagreements) if calibration else ""
    body = f'<ul class="server">{items}</ul>' + (
        f"<h3>Where the estimator and the server disagree</h3><ul>{disagreements}</ul>" if disagreements else "")
    return Section("Server", body)


def skipped_section(page: Page) -> Section | None:
    """With --verbose, like the other formats: the shapes with no suggestion and why (also in each shape's details)."""
    if not page.verbose or not page.report.skipped:
        return None
    listed, without_query = skips_for_people(page.report.skipped)
    rows = "".join(_skip_row(page, skip) for skip in listed)
    body = (f'<table class="skips"><thead><tr><th>shape</th><th>reason</th></tr></thead><tbody>{rows}</tbody></table>'
            + (f"<p>{esc(operation_counts(without_query))}: no query an index could serve.</p>"
               if without_query else ""))
    return Section("No suggestion", body)


def _skip_row(page: Page, skip: Skip) -> str:
    return f"<tr><td>{page.shape_link(skip.fingerprint, skip.shape)}</td><td>{esc(skip.reason)}</td></tr>"


#: The page, in order: (anchor, function of the page returning a section or None).
SECTIONS: tuple[tuple[str, Callable[[Page], Section | None]], ...] = (
    ("summary", summary_section),
    ("gate", gate_section),
    ("server", server_section),
    ("indexes", suggestions_section),
    ("sets", index_sets_section),
    ("inventory", inventory_section),
    ("findings", findings_section),
    ("shapes", shapes_section),
    ("scatter", scatter_section),
    ("details", shape_details_section),
    ("skipped", skipped_section),
)
