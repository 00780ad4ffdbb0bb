"""One root cause, one item: findings grouped by what causes them, ranked by impact.

A slow listing can trip IX002 (its sort), QY003 (its deep pages) and, through its count, QY001 at once; an index
several shapes need is one missing access path; IX005 and IX006 may both be about one existing index. Findings are
linked when they share a shape, a proposed index (namespace and key), an existing index, or a shape a rule names as
related (QY003 names the listing's count); each connected set is a group. Its id hashes the sorted anchors (``shape
<fingerprint>``, ``index <ns> <key>``, ``existing <ns> <name>``) of its findings: the same findings give the same id
run after run.

``assign_groups`` sets ``Finding.group`` (the engine calls it); ``describe_groups`` builds the report's
``FindingGroup`` list from the findings that remain once evidence has dropped some.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping

from idxadvisor.models.report import SEVERITY_ORDER, Finding, FindingGroup
from idxadvisor.units import counted


def _anchors(finding: Finding, related: Mapping[str, set[str]]) -> list[str]:
    index = finding.index
    if index is not None and index.name:  # a finding about an existing index
        return [f"existing {index.ns} {index.name}"]
    anchors = [f"shape {finding.fingerprint}"]
    anchors += [f"shape {fingerprint}" for fingerprint in sorted(related.get(finding.fingerprint, ()))]
    if index is not None:
        anchors.append(f"index {index.ns} {index.key}")
    return anchors


def assign_groups(findings: list[Finding], related: Mapping[str, set[str]]) -> None:
    """Set each finding's ``group``: linked findings (shared anchors) get one id, a hash of all their anchors."""
    parent: dict[str, str] = {}

    def root(anchor: str) -> str:
        while parent.setdefault(anchor, anchor) != anchor:
            parent[anchor] = parent[parent[anchor]]
            anchor = parent[anchor]
        return anchor

    anchors = [_anchors(finding, related) for finding in findings]
    for own in anchors:
        for other in own[1:]:
            parent[root(other)] = root(own[0])
    members: dict[str, set[str]] = {}
    for own in anchors:
        members.setdefault(root(own[0]), set()).update(own)
    ids: dict[str, str] = {}  # per group, its id: hashed once, not once per member (a group may hold thousands)
    for finding, own in zip(findings, anchors):
        top = root(own[0])
        group = ids.get(top)
        if group is None:
            group = ids[top] = hashlib.sha256("\n".join(sorted(members[top])).encode()).hexdigest()[:16]
        finding.group = group


def describe_groups(findings: list[Finding], shape_texts: Mapping[str, str]) -> list[FindingGroup]:
    """The groups of the findings (by ``Finding.group``; a finding without one is a group of its own), each with a
    title, its findings most important first, and its impact; the most important group first."""
    positions: dict[str, list[int]] = {}
    for position, finding in enumerate(findings):
        positions.setdefault(finding.group or f"finding {position}", []).append(position)
    groups = []
    for key, members in positions.items():
        members.sort(key=lambda position: (-findings[position].impact,
                                           -SEVERITY_ORDER[findings[position].severity], findings[position].rule,
                                           position))
        lead = findings[members[0]]
        shapes = list(dict.fromkeys(findings[position].fingerprint for position in members
                                    if not _about_existing_index(findings[position])))
        largest: dict[str, float] = {}
        for position in members:
            finding = findings[position]
            largest[finding.fingerprint] = max(largest.get(finding.fingerprint, 0.0), finding.impact)
        groups.append(FindingGroup(
            id=lead.group or key.replace(" ", "-"), title=_title(findings, members, shapes, shape_texts), ns=lead.ns,
            fingerprint=shapes[0] if len(shapes) == 1 else None,
            severity=max((findings[position].severity for position in members), key=SEVERITY_ORDER.__getitem__),
            impact=round(sum(largest.values()), 1), impact_unit=lead.impact_unit, findings=members))
    groups.sort(key=lambda group: (-group.impact, -SEVERITY_ORDER[group.severity], group.ns, group.title))
    return groups


def _about_existing_index(finding: Finding) -> bool:
    return finding.index is not None and bool(finding.index.name)


def shared_key(findings: list[Finding], members: list[int]) -> tuple | None:
    """The one index the group's shapes need, when every shape of the group has a finding proposing it (and there are
    several): the group is then about that index."""
    shapes = {findings[position].fingerprint for position in members if not _about_existing_index(findings[position])}
    proposing = [findings[position] for position in members
                 if findings[position].index is not None and not _about_existing_index(findings[position])]
    keys = {tuple(map(tuple, finding.index.key)) for finding in proposing}  # type: ignore[union-attr]
    if len(shapes) > 1 and len(keys) == 1 and {finding.fingerprint for finding in proposing} == shapes:
        return next(iter(keys))
    return None


def need_title(ns: str, shapes: int, key: tuple) -> str:
    """``shop.orders: 9 shapes that need { status: 1, region: 1 }``."""
    fields = ", ".join(f"{name}: {direction}" for name, direction in key)
    return f"{ns}: {counted(shapes, 'shape')} that need {{ {fields} }}"


def _title(findings: list[Finding], members: list[int], shapes: list[str], shape_texts: Mapping[str, str]) -> str:
    lead = findings[members[0]]
    if not shapes:  # findings about one existing index
        index = lead.index
        assert index is not None
        return f"index {index.name} on {lead.ns}"
    key = shared_key(findings, members)
    if key is not None:
        return need_title(lead.ns, len(shapes), key)
    text = shape_texts.get(shapes[0], f"{lead.ns} shape {shapes[0]}")
    others = len(shapes) - 1
    return text + (f" (and {others} related shape{'s' if others > 1 else ''})" if others else "")
