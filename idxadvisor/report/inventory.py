"""The index inventory the log itself gives (without ``--indexes`` or ``--uri``), in words every format shares."""

from __future__ import annotations

from idxadvisor.indexes.model import render_key_pattern
from idxadvisor.models.report import InventoryIndexReport, Report


def traffic_line(report: Report) -> str | None:
    """``traffic: applications 1,204 (shop-api, dashboard), interactive tools 12 (MongoDB Compass)``."""
    if not report.traffic or all(item.kind == "application" for item in report.traffic):
        return None  # only applications: nothing to tell apart
    parts = []
    for item in report.traffic:
        names = ", ".join(list(item.apps)[:3]) + (", …" if len(item.apps) > 3 else "")
        parts.append(f"{item.kind}s {item.operations:,}" + (f" ({names})" if names else ""))
    return "traffic: " + " · ".join(parts)


def inventory_headline(report: Report) -> str | None:
    """``Indexes the log shows (no --indexes or --uri): 38 on 22 collections, 2 built during the log``."""
    indexes = report.index_inventory
    if not indexes:
        return None
    collections = len({index.ns for index in indexes})
    built = sum(index.built_at is not None for index in indexes)
    dropped = sum(index.dropped for index in indexes)
    text = (f"Indexes the log shows (no --indexes or --uri): {len(indexes)} on {collections} "
            f"collection{'s' if collections != 1 else ''}")
    if built:
        text += f", {built} built during the log"
    if dropped:
        text += f", {dropped} dropped"
    return text


def inventory_shown(report: Report, verbose: bool) -> list[InventoryIndexReport]:
    """Every index with --verbose; otherwise those of the collections a suggestion is about."""
    if verbose:
        return list(report.index_inventory)
    suggested = {suggestion.ns for suggestion in report.suggested_indexes}
    return [index for index in report.index_inventory if index.ns in suggested]


def inventory_line(index: InventoryIndexReport) -> str:
    """``sample_training.grades class_id_1 { class_id: 1 }: plan summaries (10 shapes), createIndexes commands``."""
    sources = []
    for source in index.sources:
        if source == "plan summaries" and index.plan_shapes:
            source += f" ({index.plan_shapes} shape{'s' if index.plan_shapes != 1 else ''})"
        sources.append(source)
    text = f"{index.ns} {index.name} {render_key_pattern(tuple(map(tuple, index.key)))}: {', '.join(sources)}"
    if index.built_at is not None:
        text += f"; built at {index.built_at:%Y-%m-%d %H:%M}"
    if index.dropped:
        text += "; dropped"
    return text
