"""Assemble the ``Report``: input summaries, the shapes worth showing, findings and the reasons for no finding."""

from __future__ import annotations

import fnmatch
import functools
from collections import Counter
from dataclasses import dataclass
from collections.abc import Callable, Iterable
from datetime import datetime, timezone

from idxadvisor import __version__
from idxadvisor.config import Settings
from idxadvisor.indexes.inventory import Inventory
from idxadvisor.indexes.model import render_key_pattern
from idxadvisor.models.inputs import InputSummary
from idxadvisor.models.report import (
    InventoryIndexReport,
    TrafficReport,
    SEVERITY_ORDER,
    BurstReport,
    DurationReport,
    Finding,
    GateReport,
    IndexChangeReport,
    FindingGroup,
    InputReport,
    PlanCostReport,
    ProblemReport,
    Report,
    RunReport,
    SampleReport,
    ShapeReport,
    Skip,
    SuggestedIndex,
    Summary,
    TimeBreakdownReport,
    TimeComponentReport,
    TimelinePoint,
    ToolInfo,
)
from idxadvisor.report import DEFAULT_TOP_FOR_HTML, DEFAULT_TOP_FOR_PEOPLE
from idxadvisor.rules.engine import NO_QUERY
from idxadvisor.rules.grouping import describe_groups, need_title, shared_key
from idxadvisor.shapes.digest import Digest, PlanCost, ShapeStats
from idxadvisor.shapes.traffic import APPLICATION, BULK, INTERACTIVE, app_kind
from idxadvisor.shapes.timing import COMPONENTS, TimeBreakdown

def _ratio(stats: ShapeStats) -> float:
    value = stats.per_returned(stats.docs_examined)
    return value if value is not None else 0.0


SORT_KEYS: dict[str, Callable[[ShapeStats], float]] = {
    "total": lambda s: s.duration.total,
    "count": lambda s: s.count,
    "mean": lambda s: s.duration.mean,
    "p95": lambda s: s.duration.percentile(95),
    "max": lambda s: s.duration.maximum,
    "docs-examined": lambda s: s.docs_examined,
    "ratio": _ratio,
}


def shape_is_selected(stats: ShapeStats, settings: Settings) -> str | None:
    """None when the shape is in scope, else why it is not (for the summary's ``excluded`` counts)."""
    ns = stats.shape.ns
    if settings.exclude_ns and any(fnmatch.fnmatchcase(ns, pattern) for pattern in settings.exclude_ns):
        return "namespace excluded by --exclude-ns"
    named = bool(settings.ns) and any(fnmatch.fnmatchcase(ns, pattern) for pattern in settings.ns)
    if settings.ns and not named:
        return "namespace not matched by --ns"
    if stats.is_internal and not (settings.include_internal or named):
        return "internal traffic (shown with --include-internal)"
    return None


@dataclass
class Selection:
    """The shapes in scope, most important first; operations left out, by reason; shapes with no execution left."""

    shapes: list[ShapeStats]
    excluded: Counter[str]
    skips: list[Skip]


def select_shapes(digest: Digest, settings: Settings) -> Selection:
    selected: list[ShapeStats] = []
    excluded: Counter[str] = Counter()
    skips: list[Skip] = []
    for stats in digest.shapes.values():
        reason = shape_is_selected(stats, settings)
        if reason is not None:
            excluded[reason] += stats.count + stats.fast
            continue
        if stats.fast:
            excluded[f"faster than --min-ms {settings.min_ms:g}"] += stats.fast
        if stats.count:
            selected.append(stats)
        else:
            skips.append(Skip.of(stats.shape.fingerprint, stats.shape.ns, stats.shape.text,
                                 f"below --min-ms: all {stats.fast} executions took at most {stats.fast_max_ms:g} ms"))
    key = SORT_KEYS[settings.sort_by]
    selected.sort(key=lambda s: (-key(s), -s.count, s.shape.fingerprint))
    excluded.update(digest.skipped)
    return Selection(selected, excluded, skips)


@functools.lru_cache(maxsize=4096)
def _minute(epoch_minute: int) -> datetime:
    """The start of a timeline bucket: the shapes of a log share their minutes, and so their datetimes."""
    return datetime.fromtimestamp(epoch_minute * 60, tz=timezone.utc)


def shape_report(stats: ShapeStats, show_values: bool) -> ShapeReport:
    duration = stats.duration
    # the points of every shape's timeline are most of a report's models: built without validation (their fields
    # are this digest's own numbers, of the right types)
    timeline = TimelinePoint.points(
        (_minute(start), bucket.count, float(bucket.total_ms), float(bucket.max_ms), float(bucket.percentile(95)),
         bucket.docs_examined, bucket.keys_examined)
        for start, bucket in sorted(stats.timeline.buckets.items()))
    runs = RunReport.runs((datetime.fromtimestamp(start / 1000, tz=timezone.utc), float(duration))
                          for start, duration in stats.runs.latest())
    example = stats.representative.command if (show_values and stats.representative) else None
    p50, p95, p99 = duration.percentiles((50, 95, 99))
    return ShapeReport.of({  # a literal: a third faster than dict() of 41 keywords, once per shape
        "fingerprint": stats.shape.fingerprint,
        "ns": stats.shape.ns,
        "op": stats.shape.op,
        "shape": stats.shape.text,
        "count": stats.count,
        "getmores": stats.getmores,
        "duration_ms": DurationReport.of(duration.total, round(duration.mean, 3), p50, p95, p99, duration.maximum),
        "duration_histogram": duration.bins(),
        "keys_examined": stats.keys_examined,
        "docs_examined": stats.docs_examined,
        "nreturned": stats.nreturned,
        "keys_examined_per_returned": _rounded(stats.per_returned(stats.keys_examined)),
        "docs_examined_per_returned": _rounded(stats.per_returned(stats.docs_examined)),
        "plans": _by_count(stats.plans),
        "blocking_sorts": stats.blocking_sorts,
        "used_disk": stats.used_disk,
        "errors": stats.errors,
        "truncated": stats.truncated,
        "internal": stats.is_internal,
        "max_in_length": stats.max_in_length,
        "apps": _by_count(stats.apps),
        "connections": len(stats.connections),
        "server_hashes": {name: sorted(values.kept()) for name, values in sorted(stats.server_hashes.items())},
        "first_seen": stats.first_seen,
        "last_seen": stats.last_seen,
        "timeline_minutes": stats.timeline.width_minutes,
        "timeline": timeline,
        "runs": runs,
        "num_yields": stats.num_yields,
        "response_bytes": stats.response_bytes,
        "response_bytes_per_returned": _rounded(stats.response_bytes / stats.nreturned)
                                       if stats.responses_measured and stats.nreturned else None,
        "replanned": stats.replanned,
        "skip_max": stats.skip_max,
        "skip_mean": _rounded(stats.skip_total / stats.skipped_executions) if stats.skipped_executions else None,
        "plan_costs": {plan: PlanCostReport.of(cost.count, round(cost.total_ms / cost.count, 3), cost.keys_examined,
                                               cost.docs_examined, cost.nreturned)
                       for plan, cost in _most_run_first(stats.plan_costs)},
        "plan_switches": stats.plan_order.switches,
        "burst": _burst_report(stats),
        "time_breakdown": time_breakdown_report(stats.timing),
        "example": example,
    })


def time_breakdown_report(breakdown: TimeBreakdown | None) -> TimeBreakdownReport | None:
    if breakdown is None:
        return None
    components = []
    logged = breakdown.components
    for name, label, unit in COMPONENTS:
        if logged.get(name) is None:  # what ``total`` says with None: a component no execution logged
            continue
        total = breakdown.total(name)
        assert total is not None
        executions = breakdown.measured(name)
        mean = total / executions if executions else None  # ``breakdown.mean``, with the total at hand
        p95 = breakdown.percentile(name, 95)
        share = breakdown.share(name)
        components.append(TimeComponentReport.of(name, label, unit, executions, round(total, 2), round(mean or 0.0, 2),
                                                 _rounded(p95), None if share is None else round(share, 4)))
    waited = breakdown.waited_share()
    return TimeBreakdownReport.of(breakdown.executions, None if waited is None else round(waited, 4), components)


def _burst_report(stats: ShapeStats) -> BurstReport | None:
    worst, sizes = stats.bursts.final()
    if worst is None or worst.size < 2:
        return None
    return BurstReport(size=worst.size, start=datetime.fromtimestamp(worst.start_ms / 1000, tz=timezone.utc),
                       end=datetime.fromtimestamp(worst.end_ms / 1000, tz=timezone.utc), connection=worst.connection,
                       app=worst.app or None, bursts=sum(sizes.values()))


def _by_count(counts: dict[str, int]) -> dict[str, int]:
    return dict(sorted(counts.items(), key=_minus_count)) if len(counts) > 1 else dict(counts)


def _minus_count(item: tuple[str, int]) -> int:
    return -item[1]


def _most_run_first(costs: dict[str, PlanCost]) -> Iterable[tuple[str, PlanCost]]:
    """A shape's plans and their costs, the most executions first (most shapes have one plan: nothing to sort)."""
    return sorted(costs.items(), key=lambda item: -item[1].count) if len(costs) > 1 else costs.items()


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def input_report(summary: InputSummary) -> InputReport:
    return InputReport(
        path=summary.path,
        format=summary.format,
        lines=summary.lines,
        entries=summary.entries,
        problems=summary.problems,
        truncated=summary.truncated,
        operations=summary.operations,
        paired=summary.paired,
        bytes=summary.bytes,
        versions=sorted(summary.versions),
        first_seen=summary.first_ts,
        last_seen=summary.last_ts,
        error=summary.error,
        problem_examples=[ProblemReport(reason=p.reason, line=p.line, excerpt=p.excerpt)
                          for p in summary.problem_examples],
    )


def _span(summaries: Iterable[InputSummary]) -> tuple[datetime | None, datetime | None]:
    """The first and last times seen, in the servers' own offset, or in UTC when the inputs' offsets differ."""
    firsts = [s.first_ts for s in summaries if s.first_ts is not None]
    lasts = [s.last_ts for s in summaries if s.last_ts is not None]
    first, last = (min(firsts) if firsts else None), (max(lasts) if lasts else None)
    if len({moment.utcoffset() for moment in firsts + lasts}) > 1:
        first, last = (None if first is None else first.astimezone(timezone.utc),
                       None if last is None else last.astimezone(timezone.utc))
    return first, last


def skips_for_people(skipped: list[Skip]) -> tuple[list[Skip], Counter[str]]:
    """The skips worth a line each, and per operation the number of shapes with no query at all (inserts,
    createIndexes...), which people read as one line (JSON keeps every skip)."""
    listed: list[Skip] = []
    without_query: Counter[str] = Counter()
    for skip in skipped:
        if skip.reason.endswith(NO_QUERY):
            without_query[skip.shape.split(" ", 1)[0]] += 1
        else:
            listed.append(skip)
    return listed, without_query


def gate_line(gate: GateReport) -> str:
    """``FAIL: 3 findings that count are at or above error (2 new, 9 existing, 1 accepted; 1 resolved)``."""
    verdict = "PASS" if gate.passed else "FAIL"
    counted = f"{gate.counted} finding{'s' if gate.counted != 1 else ''} that count{'s' if gate.counted == 1 else ''}"
    text = f"{verdict}: {counted} at or above {gate.fail_on}" if gate.fail_on != "never" else f"{verdict}: --fail-on never"
    parts = [f"{gate.new} new", f"{gate.existing} existing"] if gate.baseline_indexes else []
    parts += [f"{gate.accepted} accepted"] if gate.baseline else []
    parts += [f"{len(gate.resolved)} resolved by the change"] if gate.resolved else []
    return text + (f" ({', '.join(parts)})" if parts else "")


def key_text(key: list[tuple[str, int | str]]) -> str:
    return render_key_pattern(tuple((name, direction) for name, direction in key))


def change_line(change: IndexChangeReport) -> str:
    """``dropped  shop.orders status_1 { status: 1 }  migrations/1.js:8:1``."""
    key = f" {key_text(change.key)}" if change.key else ""
    where = f"  {change.location}" if change.location is not None else ""
    return f"{change.action:<8} {change.ns} {change.name}{key}{where}"


def evidence_after_label(finding: Finding) -> str:
    """What the evidence's "after" plan is: the proposed indexes for a change (check), else the proposed index."""
    return "with the proposed indexes" if finding.rule.startswith("CI") else "with the index"


def samples_line(samples: list[SampleReport]) -> str:
    """``5 samples, 21,000 documents; shop.orders: 3 unreadable documents skipped``."""
    documents = sum(sample.documents for sample in samples)
    text = f"{len(samples)} sample{'s' if len(samples) != 1 else ''}, {documents:,} documents"
    for sample in samples:
        if sample.problems:
            plural = "s" if sample.problems != 1 else ""
            text += f"; {sample.ns}: {sample.problems:,} unreadable document{plural} skipped"
    return text


def operation_counts(counts: Counter[str]) -> str:
    """``insert (12 shapes), createIndexes (1 shape)``."""
    return ", ".join(f"{op} ({count} shape{'s' if count > 1 else ''})" for op, count in counts.most_common())


def traffic_report(shapes: Iterable[ShapeStats]) -> list[TrafficReport]:
    """The operations of the shapes in scope by kind of application (``shapes.traffic``), most first; nothing when
    no operation names its application."""
    apps: Counter[str] = Counter()
    operations = 0
    for stats in shapes:
        if stats.apps:  # Counter.update walks even an empty mapping in Python
            apps.update(stats.apps)
        operations += stats.count
    if not apps:
        return []
    kinds: dict[str, dict[str, int]] = {APPLICATION: {}, INTERACTIVE: {}, BULK: {}}
    for app, count in apps.most_common():
        kinds[app_kind(app)][app] = count
    unnamed = operations - sum(apps.values())
    reports = [TrafficReport(kind=kind, operations=sum(counts.values()) + (unnamed if kind == APPLICATION else 0),
                             apps=counts) for kind, counts in kinds.items()]
    return sorted((report for report in reports if report.operations), key=lambda report: -report.operations)


def inventory_report(inventory: Inventory) -> list[InventoryIndexReport]:
    """The log's own index inventory, collection by collection, in the order the log showed the indexes."""
    return [InventoryIndexReport(ns=ns, name=index.name, key=list(index.key), sources=list(dict.fromkeys(index.sources)),
                                 built_at=index.built_during_log, dropped=index.dropped,
                                 plan_shapes=index.plan_shapes)
            for ns in sorted(inventory.indexes) for index in inventory.indexes[ns]]


def count_served_shapes(report: Report) -> None:
    """One number of shapes per suggested index, the same in every part of the report: with the workload's sets, the
    shapes the index serves in its collection's set (findings name only the shapes that asked for it)."""
    served = {(index_set.ns, tuple(map(tuple, index.key))): len(index.shapes)
              for index_set in report.index_sets for index in index_set.indexes if index.status == "new"}
    if not served:
        return
    for suggestion in report.suggested_indexes:
        count = served.get((suggestion.ns, tuple(map(tuple, suggestion.key))))
        if count is not None:
            suggestion.shapes = max(count, len(set(suggestion.fingerprints)))
    for group in report.groups:
        key = shared_key(report.findings, group.findings)
        count = served.get((group.ns, key)) if key is not None else None
        if count is not None and key is not None:
            shapes = {report.findings[position].fingerprint for position in group.findings}
            group.title = need_title(group.ns, max(count, len(shapes)), key)


def suggested_indexes(findings: list[Finding]) -> list[SuggestedIndex]:
    """The distinct indexes the findings propose (not those about existing indexes), by total impact."""
    grouped: dict[tuple[str, tuple], list[Finding]] = {}
    for finding in findings:
        if finding.index is not None and not finding.index.name:
            key = (finding.index.ns, tuple(tuple(pair) for pair in finding.index.key))
            grouped.setdefault(key, []).append(finding)
    suggestions = []
    for (ns, _), group in grouped.items():
        index = group[0].index
        assert index is not None
        suggestions.append(SuggestedIndex(
            ns=ns, key=index.key, command=index.command, replaces=index.replaces,
            rules=sorted({finding.rule for finding in group}), fingerprints=[finding.fingerprint for finding in group],
            impact=round(sum(finding.impact for finding in group), 1), impact_unit=group[0].impact_unit,
            severity=max((finding.severity for finding in group), key=SEVERITY_ORDER.__getitem__),
            saving_s_per_hour=max((finding.index.saving_s_per_hour for finding in group
                                   if finding.index is not None and finding.index.saving_s_per_hour is not None),
                                  default=None)))
    # the server time an index saves ranks it first (index selection), then what its findings waste
    return sorted(suggestions, key=lambda suggestion: (-(suggestion.saving_s_per_hour or 0.0), -suggestion.impact,
                                                       suggestion.ns, suggestion.command))


def build_report(
    summaries: list[InputSummary],
    selection: Selection,
    settings: Settings,
    findings: list[Finding] | None = None,
    skipped: list[Skip] | None = None,
) -> Report:
    selected, excluded = selection.shapes, selection.excluded
    limit = settings.top
    if limit is None and settings.format in ("text", "markdown"):
        limit = DEFAULT_TOP_FOR_PEOPLE
    elif limit is None and settings.format == "html":
        limit = DEFAULT_TOP_FOR_HTML
    shown = selected[:limit] if limit is not None else selected
    first, last = _span(summaries)
    versions = sorted({version for summary in summaries for version in summary.versions})
    summary = Summary(
        inputs=len(summaries),
        lines=sum(s.lines for s in summaries),
        entries=sum(s.entries for s in summaries),
        problems=sum(s.problems for s in summaries),
        truncated=sum(s.truncated for s in summaries),
        operations=sum(s.operations for s in summaries),
        shapes=len(selected),
        shapes_shown=len(shown),
        first_seen=first,
        last_seen=last,
        versions=versions,
        excluded=dict(excluded.most_common()),
    )
    return Report(
        tool=ToolInfo(version=__version__),
        summary=summary,
        inputs=[input_report(s) for s in summaries],
        shapes=[shape_report(stats, settings.show_values) for stats in shown],
        findings=findings or [],
        groups=describe_groups(findings or [], {stats.shape.fingerprint: stats.shape.text for stats in selected}),
        suggested_indexes=suggested_indexes(findings or []),
        skipped=skipped or [],
        traffic=traffic_report(selected),
    )


def groups_for_people(report: Report) -> list[tuple[FindingGroup | None, list[Finding]]]:
    """The findings as people read them: one item per group, its findings under it, the most important group first
    (a report whose groups do not cover its findings exactly, built or edited by hand, gives one item per finding)."""
    covered = sorted(position for group in report.groups for position in group.findings)
    if covered != list(range(len(report.findings))):
        return [(None, [finding]) for finding in report.findings]
    return [(group, [report.findings[position] for position in group.findings]) for group in report.groups]


def skipped_inputs_line(skipped: list[str], shown: int = 5) -> str:
    """``skipped 2 files that are not MongoDB logs: LICENSE, MANIFEST.md`` (the first few named)."""
    names = ", ".join(skipped[:shown]) + (f" and {len(skipped) - shown:,} more" if len(skipped) > shown else "")
    plural = len(skipped) != 1
    return (f"skipped {len(skipped):,} file{'s' if plural else ''} that {'are' if plural else 'is'} not "
            f"{'MongoDB logs' if plural else 'a MongoDB log'}, profiler dumps or explain output: {names}")


NO_SLOW_OPERATION = ("no slow operation was read: the inputs are MongoDB logs, but none holds a slow operation (is "
                     "slowms, or the profiling level, set as you expect?)")


def exit_verdict(report: Report, fail_on: str) -> tuple[int, str]:
    """The exit status of a run and why, as the last line of the text and Markdown reports says it: ``exit 1: 3
    findings at or above warning (--fail-on warning)``. The command line exits with this status."""
    failed = [item for item in report.inputs if item.error]
    if failed:
        count = len(failed)
        return 2, (f"exit 2: {count} input{'s' if count != 1 else ''} could not be read ({failed[0].path}: "
                   f"{failed[0].error}{', ...' if count > 1 else ''})")
    option = f"--fail-on {fail_on}"
    counting = [finding for finding in report.findings if finding.counts]
    if fail_on == "never":
        return 0, f"exit 0: {option}, whatever the findings"
    threshold = SEVERITY_ORDER[fail_on]
    counted = sum(SEVERITY_ORDER[finding.severity] >= threshold for finding in counting)
    what = "finding" if report.gate is None else "finding that counts"
    whats = "findings" if report.gate is None else "findings that count"
    if counted:
        return 1, f"exit 1: {counted:,} {what if counted == 1 else whats} at or above {fail_on} ({option})"
    below = len(counting)
    rest = f"; {below:,} below it" if below else ""
    return 0, f"exit 0: no {what} at or above {fail_on} ({option}){rest}"


def values_text(document: object, limit: int = 2000) -> str:
    """A command or query with its literal values (``--show-values`` only), compact, as the JSON report holds it;
    cut at ``limit`` characters."""
    import json

    text = json.dumps(document, ensure_ascii=False, separators=(", ", ": "), default=str)
    return text if len(text) <= limit else text[:limit] + " …"
