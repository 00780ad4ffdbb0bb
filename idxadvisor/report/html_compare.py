"""``idxadvisor compare --format html``: one self-contained page, like the analysis report's.

The verdict and both sides first; then a chart of the shapes whose time changed the most, coloured by what compare
made of them; then every shape shown as a table that sorts by any column and filters on any text. The numbers and
words are the text and Markdown reports' own (``report/comparison.py``).
"""

from __future__ import annotations

from typing import Any, TextIO

from idxadvisor.models.compare import Comparison, ShapeChange
from idxadvisor.report import charts
from idxadvisor.report.compare_words import arrow, detail_lines, pct, side_line, side_values, verdict_line
from idxadvisor.report.html import Charts, Section, charting_library, document, esc, number_cell, shape_table
from idxadvisor.units import human_count, human_ms

#: Rows of the shape table when --top does not say: a page stays quick to open with a few hundred.
HTML_TOP = 500
#: Columns of the shape table: heading, what it means (a tooltip), and how it sorts.
COLUMNS = (("#", "rank by the size of the change in time", "number"), ("change", "what compare made of it", "text"),
           ("time", "after minus before: time spent per hour when both sides span time, else in total", "number"),
           ("op", "operation", "text"), ("namespace", "", "text"), ("shape", "", "text"),
           ("executions", "before → after", "text"), ("mean", "before → after (change)", "number"),
           ("p95", "before → after (change)", "number"),
           ("details", "work per document returned, plans, why", "text"))


def render(comparison: Comparison, out: TextIO, top: int | None = None) -> None:
    library = charting_library()
    page = Charts()
    limit = top or HTML_TOP
    sections = [("verdict", verdict_section(comparison)), ("change-chart", change_chart_section(page, comparison)),
                ("changes", changes_section(comparison, limit))]
    title = f"idxadvisor compare: {verdict_line(comparison)}"
    out.write(document(title, comparison.tool.version, page,
                       [(anchor, section) for anchor, section in sections if section is not None], library))


def verdict_section(comparison: Comparison) -> Section:
    verdict = f'<p class="lead {"bad" if comparison.regressed else "good"}">{esc(verdict_line(comparison))}</p>'
    sides = "".join(f"<li>{esc(side_line(name, side))}</li>"
                    for name, side in (("Before", comparison.before), ("After", comparison.after)))
    inputs = "".join(f'<tr><td>{name}</td><td class="path">{esc(path)}</td></tr>'
                     for name, side in (("before", comparison.before), ("after", comparison.after))
                     for path in side.inputs)
    errors = "".join(f'<li class="bad">could not read {esc(error)}</li>'
                     for error in comparison.before.errors + comparison.after.errors)
    return Section("Verdict", f"{verdict}<ul>{sides}{errors}</ul>"
                              f'<table class="inputs"><thead><tr><th>side</th><th>input</th></tr></thead>'
                              f"<tbody>{inputs}</tbody></table>")


def change_chart_section(page: Charts, comparison: Comparison) -> Section | None:
    chart = change_chart(comparison)
    if chart is None:
        return None
    unit = "per hour" if comparison.time_basis == "per_hour" else "in total"
    shown = len(chart.rows)
    about = (f"the {shown} shapes whose time changed the most" if shown < len(comparison.shapes)
             else f"all {shown} shapes")
    return Section("Change in time", page.chart(chart, f"Time spent after minus before, {unit}: {about}"))


def change_chart(comparison: Comparison) -> charts.Chart | None:
    """One bar per shape (the largest changes, as ranked): right of zero it costs more time, left it saves time."""
    rows: list[list[Any]] = []
    for rank, change in enumerate(comparison.shapes[:charts.MAX_CHANGE_BARS], start=1):
        if change.time_change_ms == 0:
            continue
        label = f"#{rank} {change.shape}"  # the shape names its namespace
        rows.append([label if len(label) <= 90 else label[:89] + "…", round(change.time_change_ms, 3), change.status,
                     change.ns, change.shape, _side_text(change, "before"), _side_text(change, "after")])
    if not rows:
        return None
    return charts.Chart("change", rows, height=charts.CHANGE_BAR_PIXELS * len(rows))


def _side_text(change: ShapeChange, side_name: str) -> str:
    side = getattr(change, side_name)
    if side is None:
        return "did not run"
    return f"{human_count(side.count)} executions, mean {human_ms(side.mean_ms)}, p95 {human_ms(side.p95_ms)}"


def changes_section(comparison: Comparison, limit: int) -> Section:
    if not comparison.shapes:
        return Section("Shapes", "<p>Neither side ran an operation in scope.</p>")
    shown = comparison.shapes[:limit]
    rows = [_row(rank, change) for rank, change in enumerate(shown, start=1)]
    more = (f'<p class="note">{len(comparison.shapes) - len(shown):,} more shapes in the JSON output '
            "(--top N shows more).</p>" if len(shown) < len(comparison.shapes) else "")
    table = shape_table(COLUMNS, rows, "change, namespace, operation, field, plan", "regressed only")
    body = f"<p>Ranked by the size of the change in time. Click a column to sort.</p>{table}{more}"
    return Section(f"Shapes ({len(comparison.shapes):,})", body)


def _row(rank: int, change: ShapeChange) -> str:
    signed = f"{'−' if change.time_change_ms < 0 else '+'}{human_ms(abs(change.time_change_ms))}"
    details = "".join(f"<div>{esc(line)}</div>" for line in detail_lines(change)[1:])  # the first: the columns
    flagged = "1" if change.status == "regressed" else "0"
    mean = arrow(*side_values(change, "mean_ms"), human_ms) + pct(change.mean_change_pct)
    p95 = arrow(*side_values(change, "p95_ms"), human_ms) + pct(change.p95_change_pct)
    return (f'<tr data-flagged="{flagged}" data-status="{esc(change.status)}">{number_cell(rank, str(rank))}'
            f'<td><span class="change-status change-status-{esc(change.status)}">{esc(change.status)}</span></td>'
            f"{number_cell(change.time_change_ms, signed)}<td>{esc(change.op)}</td><td>{esc(change.ns)}</td>"
            f'<td class="shape"><code>{esc(change.shape)}</code></td>'
            f"<td>{esc(arrow(*side_values(change, 'count'), human_count))}</td>"
            f"{number_cell(change.mean_change_pct, mean)}{number_cell(change.p95_change_pct, p95)}"
            f'<td class="details">{details}</td></tr>')
