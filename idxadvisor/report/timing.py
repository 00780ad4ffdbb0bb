"""Where a shape's time went, in the words and numbers every report format shows (one line, or bar segments).

The server's ``workingMillis`` (8.0+) counts reading from disk and planning as work; the waits (queues, locks, flow
control, oplog slots, write concern) are outside it. So a line reads ``queued for execution 98% · working 1%`` or
``working 98% (reading from disk 90%)``, and a bar's segments never count one millisecond twice.
"""

from __future__ import annotations

from idxadvisor.models.report import TimeBreakdownReport, TimeComponentReport
from idxadvisor.units import human_bytes, human_count

MIN_SHOWN_SHARE = 0.05  # a component under this part of the time is left out of the line
WAIT_NAMES = ("queued_ms", "ingress_queued_ms", "lock_wait_ms", "flow_control_ms", "oplog_slot_ms",
              "write_concern_ms")
INSIDE_WORK = ("disk_read_ms", "planning_ms")


def _shares(breakdown: TimeBreakdownReport, names: tuple[str, ...]) -> list[TimeComponentReport]:
    found = [component for component in breakdown.components
             if component.name in names and component.share is not None and component.share >= MIN_SHOWN_SHARE]
    return sorted(found, key=lambda component: -(component.share or 0.0))


def _working(breakdown: TimeBreakdownReport) -> float | None:
    return next((component.share for component in breakdown.components if component.name == "working_ms"), None)


def bar_segments(breakdown: TimeBreakdownReport) -> list[tuple[str, str, float]]:
    """(name, label, share) segments of one execution's time, adding up to at most 1: the waits, what the work
    went to (reading from disk, planning), the rest of the work when the server logged it, and what is unknown."""
    segments = [(component.name, component.label, component.share or 0.0)
                for component in _shares(breakdown, WAIT_NAMES + INSIDE_WORK)]
    used = sum(share for _, _, share in segments)
    if used > 1:
        segments = [(name, label, share / used) for name, label, share in segments]
        used = 1.0
    working = _working(breakdown)
    if working is not None:
        inside = sum(share for name, _, share in segments if name in INSIDE_WORK)
        rest = min(max(0.0, working - inside), 1 - used)
        if rest >= 0.005:
            segments.append(("working_ms", "other work" if inside else "working", rest))
            used += rest
    if 1 - used >= 0.005:
        segments.append(("unknown", "not broken down" if working is None else "other", 1 - used))
    return segments


def breakdown_line(breakdown: TimeBreakdownReport | None) -> str:
    """``queued for execution 98% · working 1%``; empty when nothing is worth a word (only work, or nothing
    logged)."""
    if breakdown is None:
        return ""
    parts = [f"{component.label} {component.share:.0%}" for component in _shares(breakdown, WAIT_NAMES)]
    inside = [f"{component.label} {component.share:.0%}" for component in _shares(breakdown, INSIDE_WORK)]
    working = _working(breakdown)
    if working is not None and (parts or inside):  # "working 100%" alone says nothing
        parts.append(f"working {working:.0%}" + (f" ({', '.join(inside)})" if inside else ""))
    else:
        parts += inside
    for component in breakdown.components:
        if component.name == "write_conflicts" and component.mean >= 1:
            parts.append(f"{human_count(component.mean)} write conflicts/execution")
        elif component.name == "bytes_read" and component.mean >= 1 << 20:
            parts.append(f"{human_bytes(component.mean)} read from disk/execution")
    return " · ".join(parts)
