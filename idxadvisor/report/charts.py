"""The charts of the HTML report: a Vega-Lite specification per kind of chart, and the rows each chart draws.

A chart is a kind (a key of ``SPECS``) and its rows, lists of values in the order of ``FIELDS[kind]``. The page holds
each specification once and each chart's rows once; its script joins the two when the chart is drawn. Every mark has
a name, which the SVG keeps in a class (``timeline-executions`` draws ``<g class="mark-rect role-mark
timeline_executions_marks">``), so that one can tell what a chart drew and count it (the browser tests do).

Times are epoch milliseconds drawn on UTC scales; text that comes from logs (namespaces, shapes, plans) only ever
reaches the chart as data, which Vega writes as SVG text and its tooltip escapes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from idxadvisor.models.report import Finding, ShapeReport
from idxadvisor.shapes.sketch import DISPLAY_BINS_PER_OCTAVE, display_lower
from idxadvisor.units import human_ms

#: A shape's timeline is drawn with at most this many bars; longer ones are drawn with wider buckets.
MAX_TIMELINE_BARS = 240
#: Heights of a lane of aggregation runs, and of a bar of evidence.
RUN_LANE_PIXELS, EVIDENCE_BAR_PIXELS = 7, 14
#: The two sides of the evidence chart.
TODAY, WITH_INDEX = "today", "with the index"

_TIME = "utcFormat(datum.{field}, '%Y-%m-%d %H:%M:%S') + ' UTC'"
_AXIS_TIME = {"type": "temporal", "scale": {"type": "utc"}, "title": "UTC", "axis": {
    "labelOverlap": "greedy", "labelSeparation": 6,
    "labelExpr": "utchours(datum.value) == 0 && utcminutes(datum.value) == 0 ? utcFormat(datum.value, '%b %d') "
                 ": utcFormat(datum.value, '%H:%M')"}}
_DECADES = {"values": [0] + [10 ** power for power in range(10)],  # symlog axes: a tick a decade, 1 10 100 1k …
            "labelExpr": "datum.value >= 1e9 ? (datum.value / 1e9) + 'B' : datum.value >= 1e6 ? (datum.value / 1e6) "
                         "+ 'M' : datum.value >= 1e3 ? (datum.value / 1e3) + 'k' : datum.value"}
_COLOURS = {"bars": "#6a9fcb", "line": "#c8553d", "today": "#c8553d", "after": "#3f8f5f", "rule": "#555555"}
#: The statuses of compare, in the order a legend lists them, and their colours.
CHANGE_STATUSES = ("regressed", "improved", "appeared", "vanished", "unchanged")
_CHANGE_COLOURS = ("#c8553d", "#3f8f5f", "#6a9fcb", "#9a9a9a", "#c9c9c9")
#: Bars of the change chart: the shapes whose time changed the most.
MAX_CHANGE_BARS = 40
CHANGE_BAR_PIXELS = 16

CONFIG: dict[str, Any] = {
    "font": "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif",
    "view": {"stroke": None},
    "axis": {"labelFontSize": 11, "titleFontSize": 11, "titleFontWeight": "normal", "gridColor": "#e8e8e8"},
    "legend": {"labelFontSize": 11, "titleFontSize": 11, "titleFontWeight": "normal", "orient": "bottom"},
    "background": None,
}

FIELDS: dict[str, list[str]] = {
    "timeline": ["start", "end", "executions", "p95_ms", "max_ms"],
    "latency": ["lower", "upper", "executions", "range", "percentile"],
    "runs": ["start", "end", "lane", "duration"],
    "scatter": ["returned", "examined", "count", "op", "ns", "shape", "ratio", "anchor"],
    "evidence": ["row", "side", "value", "plan"],
    "change": ["label", "change", "status", "ns", "shape", "before", "after"],
}

SPECS: dict[str, dict[str, Any]] = {
    "timeline": {
        "width": "container", "height": 150,
        "transform": [{"calculate": _TIME.format(field="start"), "as": "time"}],
        "encoding": {"x": {"field": "start", **_AXIS_TIME}},
        "layer": [
            {"name": "timeline-executions", "mark": {"type": "rect", "color": _COLOURS["bars"], "tooltip": True},
             "encoding": {
                 "x2": {"field": "end"}, "y2": {"datum": 0},
                 "y": {"field": "executions", "type": "quantitative", "title": "executions",
                       "axis": {"titleColor": _COLOURS["bars"], "tickMinStep": 1}},
                 "tooltip": [{"field": "time", "title": "from"}, {"field": "executions", "format": ","},
                             {"field": "p95_ms", "title": "p95 ms", "format": ",.0f"},
                             {"field": "max_ms", "title": "max ms", "format": ",.0f"}]}},
            {"encoding": {"y": {"field": "p95_ms", "type": "quantitative", "title": "p95 ms",
                                "axis": {"titleColor": _COLOURS["line"], "orient": "right"}}},
             "layer": [
                 {"name": "timeline-p95",
                  "mark": {"type": "line", "color": _COLOURS["line"], "interpolate": "monotone"}},
                 {"name": "timeline-p95-points", "mark": {"type": "point", "filled": True, "size": 18,
                                                          "color": _COLOURS["line"]},
                  "encoding": {"tooltip": [{"field": "time", "title": "from"},
                                           {"field": "p95_ms", "title": "p95 ms", "format": ",.0f"}]}},
             ]},
        ],
        "resolve": {"scale": {"y": "independent"}},
    },
    "latency": {
        "width": "container", "height": 150,
        "encoding": {"x": {
            "field": "lower", "type": "quantitative", "scale": {"type": "log", "nice": False, "padding": 6},
            "title": "duration (log scale)",
            "axis": {"labelExpr": "datum.value >= 1000 ? format(datum.value / 1000, '~g') + ' s' "
                                  ": format(datum.value, '~g') + ' ms'"}}},
        "layer": [
            {"name": "latency-bins", "transform": [{"filter": "datum.percentile == null"}],
             "mark": {"type": "rect", "color": _COLOURS["bars"], "stroke": "#ffffff", "strokeWidth": 0.5},
             "encoding": {"x2": {"field": "upper"}, "y2": {"datum": 0},
                          "y": {"field": "executions", "type": "quantitative", "title": "executions",
                                "axis": {"tickMinStep": 1}},
                          "tooltip": [{"field": "range", "title": "duration"},
                                      {"field": "executions", "format": ","}]}},
            {"name": "latency-percentiles", "transform": [{"filter": "datum.percentile != null"}],
             "mark": {"type": "rule", "color": _COLOURS["line"], "strokeDash": [4, 3]},
             "encoding": {"tooltip": [{"field": "percentile"}]}},
        ],
    },
    "runs": {
        "width": "container",
        "transform": [{"calculate": _TIME.format(field="start"), "as": "time"}],
        "mark": {"type": "bar", "color": _COLOURS["bars"], "cornerRadius": 1, "tooltip": True},
        "name": "runs",
        "encoding": {
            "x": {"field": "start", **_AXIS_TIME},
            "x2": {"field": "end"},
            "y": {"field": "lane", "type": "ordinal", "sort": "descending", "title": "runs in progress",
                  "axis": {"labels": False, "ticks": False}},
            "tooltip": [{"field": "time", "title": "started"}, {"field": "duration", "title": "took"}],
        },
    },
    "scatter": {
        "width": "container", "height": 320,
        "layer": [
            {"name": "scatter-diagonal",
             "transform": [{"aggregate": [{"op": "max", "field": "returned", "as": "most"}]},
                           {"calculate": "0", "as": "none"}],
             "mark": {"type": "rule", "color": _COLOURS["rule"], "strokeDash": [4, 4], "opacity": 0.6},
             "encoding": {"x": {"field": "none", "type": "quantitative", "scale": {"type": "symlog"}},
                          "y": {"field": "none", "type": "quantitative", "scale": {"type": "symlog"}},
                          "x2": {"field": "most"}, "y2": {"field": "most"}}},
            {"name": "scatter-shapes",
             "mark": {"type": "point", "filled": True, "opacity": 0.65, "cursor": "pointer"},
             "encoding": {
                 "x": {"field": "returned", "type": "quantitative", "scale": {"type": "symlog"},
                       "axis": _DECADES, "title": "documents returned per execution"},
                 "y": {"field": "examined", "type": "quantitative", "scale": {"type": "symlog"},
                       "axis": _DECADES, "title": "documents examined per execution"},
                 "size": {"field": "count", "type": "quantitative", "title": "executions",
                          "scale": {"type": "sqrt", "range": [16, 400]}},
                 "color": {"field": "op", "type": "nominal", "title": "operation"},
                 "tooltip": [{"field": "ns", "title": "namespace"}, {"field": "shape"},
                             {"field": "count", "title": "executions", "format": ","},
                             {"field": "examined", "title": "examined per execution", "format": ",.1f"},
                             {"field": "returned", "title": "returned per execution", "format": ",.1f"},
                             {"field": "ratio", "title": "examined per returned"}]}},
        ],
    },
    "evidence": {
        "width": "container",
        "mark": {"type": "bar", "tooltip": True},
        "name": "evidence-bars",
        "encoding": {
            "y": {"field": "row", "type": "nominal", "title": None, "sort": None},
            "yOffset": {"field": "side", "sort": [TODAY, WITH_INDEX]},
            "x": {"field": "value", "type": "quantitative", "title": "per execution"},
            "color": {"field": "side", "title": None, "sort": [TODAY, WITH_INDEX],
                      "scale": {"domain": [TODAY, WITH_INDEX], "range": [_COLOURS["today"], _COLOURS["after"]]}},
            "tooltip": [{"field": "side", "title": "plan"}, {"field": "plan", "title": "plan summary"},
                        {"field": "row", "title": "counter"}, {"field": "value", "format": ","}],
        },
    },
    "change": {
        "width": "container",
        "mark": {"type": "bar", "tooltip": True},
        "name": "change-bars",
        "encoding": {
            "y": {"field": "label", "type": "nominal", "title": None, "sort": None, "axis": {"labelLimit": 360}},
            "x": {"field": "change", "type": "quantitative", "title": "milliseconds, after − before"},
            "color": {"field": "status", "title": None, "sort": list(CHANGE_STATUSES),
                      "scale": {"domain": list(CHANGE_STATUSES), "range": list(_CHANGE_COLOURS)}},
            "tooltip": [{"field": "status"}, {"field": "ns", "title": "namespace"}, {"field": "shape"},
                        {"field": "before", "title": "before"}, {"field": "after", "title": "after"}],
        },
    },
}


@dataclass
class Chart:
    """One chart: its kind and its rows."""

    kind: str
    rows: list[list[Any]]
    note: str = ""  # said under the chart: how the data was drawn when not as it is in the report
    height: int | None = None  # in pixels, where it depends on the data (discrete axes)


def _ms(moment: datetime) -> int:
    return round(moment.timestamp() * 1000)


def _finite(value: float | None) -> float | None:
    """A value JSON can carry: None for NaN and infinities."""
    if value is None or not math.isfinite(value):
        return None
    return value


def timeline_chart(shape: ShapeReport) -> Chart | None:
    """Executions per bucket as bars, and the bucket's p95 as a line. Past ``MAX_TIMELINE_BARS`` buckets, neighbours
    are drawn together: executions add up, and the line shows the highest p95 of the buckets drawn together."""
    points = shape.timeline
    if not points:
        return None
    width_ms = shape.timeline_minutes * 60_000
    first = _ms(points[0].start)
    span = (_ms(points[-1].start) - first) // width_ms + 1
    factor = max(1, math.ceil(span / MAX_TIMELINE_BARS))
    merged: dict[int, list[float]] = {}
    for point in points:
        slot = (_ms(point.start) - first) // width_ms // factor
        row = merged.setdefault(slot, [0, 0.0, 0.0])
        row[0] += point.count
        row[1] = max(row[1], point.p95_ms)
        row[2] = max(row[2], point.max_ms)
    step = width_ms * factor
    rows: list[list[Any]] = [[first + slot * step, first + (slot + 1) * step, int(count), _finite(p95),
                              _finite(maximum)] for slot, (count, p95, maximum) in sorted(merged.items())]
    minutes = shape.timeline_minutes * factor
    note = (f"per {minutes} minutes; the line is the highest {shape.timeline_minutes}-minute p95 of each"
            if factor > 1 else "")
    return Chart("timeline", rows, note)


def latency_chart(shape: ShapeReport) -> Chart | None:
    """The duration histogram as bars on a log scale, with the p50, p95 and p99 as rules."""
    bins = shape.duration_histogram
    if not bins:
        return None
    rows: list[list[Any]] = []
    for upper, count in bins:
        lower = display_lower(upper, DISPLAY_BINS_PER_OCTAVE) or 0.8  # a log scale has no 0: from 0.8 ms
        label = "≤ 1 ms" if upper <= 1 else f"{_short_ms(lower)}–{_short_ms(upper)}"
        rows.append([lower, upper, count, label, None])
    duration = shape.duration_ms
    percentiles = [("p50", duration.p50), ("p95", duration.p95), ("p99", duration.p99)]
    for name, value in percentiles:
        at = max(_finite(value) or 0.0, rows[0][0])  # a log scale has no 0: a 0 ms percentile sits on the first bin
        rows.append([at, None, None, None, f"{name} {human_ms(value)}"])
    return Chart("latency", rows)


def _short_ms(value: float) -> str:
    return f"{value:,.2f}".rstrip("0").rstrip(".") + " ms" if value < 1000 else human_ms(value)


def runs_chart(shape: ShapeReport) -> Chart | None:
    """An aggregation's runs as intervals, each on the lowest lane free when it starts: runs that overlap pile up."""
    if len(shape.runs) < 2:
        return None
    lanes_end: list[int] = []
    rows: list[list[Any]] = []
    for run in sorted(shape.runs, key=lambda item: item.start):
        start = _ms(run.start)
        end = start + max(round(run.duration_ms), 1)
        lane = next((index for index, busy_until in enumerate(lanes_end) if busy_until <= start), len(lanes_end))
        if lane == len(lanes_end):
            lanes_end.append(end)
        else:
            lanes_end[lane] = end
        rows.append([start, end, lane, human_ms(run.duration_ms)])
    return Chart("runs", rows, height=max(RUN_LANE_PIXELS * len(lanes_end), 40))


def most_at_once(chart: Chart) -> int:
    """The most runs in progress at one time (the height of the pile)."""
    return 1 + max(row[2] for row in chart.rows)


def scatter_chart(shapes: list[ShapeReport], anchors: dict[str, str]) -> Chart | None:
    """Documents examined against returned, per execution, one point per shape (sized by executions)."""
    rows: list[list[Any]] = []
    for shape in shapes:
        if shape.count <= 0:
            continue
        ratio = shape.docs_examined_per_returned
        rows.append([round(shape.nreturned / shape.count, 2), round(shape.docs_examined / shape.count, 2), shape.count,
                     shape.op, shape.ns, shape.shape, "" if ratio is None else f"{ratio:,.1f}",
                     anchors.get(shape.fingerprint)])
    if not rows:
        return None
    return Chart("scatter", rows)


def evidence_chart(findings: list[Finding]) -> Chart | None:
    """Keys and documents examined per execution, today and with the suggested index, for each shape with evidence."""
    rows: list[list[Any]] = []
    several = len(findings) > 1
    for finding in findings:
        evidence = finding.evidence
        if evidence is None or "unsupported" in evidence.before or "unsupported" in evidence.after:
            continue
        for counter, label in (("totalKeysExamined", "keys examined"), ("totalDocsExamined", "documents examined")):
            before, after = evidence.before.get(counter), evidence.after.get(counter)
            if not isinstance(before, (int, float)) or not isinstance(after, (int, float)):
                continue
            row = f"{finding.fingerprint[:8]} {label}" if several else label
            rows.append([row, TODAY, _finite(before), str(evidence.before.get("planSummary", ""))])
            rows.append([row, WITH_INDEX, _finite(after), str(evidence.after.get("planSummary", ""))])
    if not rows:
        return None
    return Chart("evidence", rows, height=EVIDENCE_BAR_PIXELS * len(rows))
