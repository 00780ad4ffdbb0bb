"""Text every format shares about the index set chosen for each collection's workload (``Report.index_sets``):
a headline, each set's heading and method, one line per index (to create, keep or hide), one per shape, and what
the writes cost."""

from __future__ import annotations

from idxadvisor.models.report import IndexSet, Report, SetIndex, SetShape
from idxadvisor.report.build import key_text
from idxadvisor.units import human_count, human_seconds

WORK = "keys and documents examined"
STATUS_WORDS = {"new": "create", "kept": "keep", "hide": "hide"}
MODELS = {"estimator": "costs by the estimator over the data sample", "log": "costs by the log (no data sample)",
          "estimator and log": "costs by the estimator, and by the log where it could not estimate"}


def selection_line(report: Report) -> str | None:
    """``5 collections: 8 new indexes where per-finding advice gives 9; 5 existing indexes to hide, then drop``, or
    None without sets."""
    if report.index_selection != "workload" or not report.index_sets:
        return None
    new = sum(_status(index_set, "new") for index_set in report.index_sets)
    per_finding = sum(index_set.totals.per_finding_indexes for index_set in report.index_sets)
    hidden = sum(_status(index_set, "hide") for index_set in report.index_sets)
    line = (f"{_count(len(report.index_sets), 'collection')}: {_count(new, 'new index', 'new indexes')} where "
            f"per-finding advice gives {per_finding}")
    return line + (f"; {_count(hidden, 'existing index', 'existing indexes')} to hide, then drop" if hidden else "")


def set_heading(index_set: IndexSet) -> str:
    """``shop.orders: 3 new indexes (per-finding advice: 4), 2 to hide; saves 24M keys and documents examined per
    hour (26M → 1.6M), the new indexes write 5,251 index keys``."""
    return index_set.ns + set_summary(index_set)


def set_summary(index_set: IndexSet) -> str:
    """What ``set_heading`` says after the namespace (``: 3 new indexes …``), for a report that prints the name its
    own way (Markdown: in a code span)."""
    totals = index_set.totals
    hidden = _status(index_set, "hide")
    text = (f": {_count(_status(index_set, 'new'), 'new index', 'new indexes')} (per-finding advice: "
            f"{totals.per_finding_indexes}){f', {hidden} to hide' if hidden else ''}; saves "
            f"{human_count(totals.work_saved)} {WORK} {_per(index_set)} ({human_count(totals.work_before)} → "
            f"{human_count(totals.work_after)})")
    if totals.index_writes_added:
        text += f", the new indexes write {human_count(totals.index_writes_added)} index keys"
    if totals.seconds_before:
        text += (f"; saves {human_seconds(totals.seconds_saved)} of {human_seconds(totals.seconds_before)} of "
                 f"server time {_per(index_set)}")
    return text


def left_out_lines(index_set: IndexSet) -> list[str]:
    """``left out { plot: 1 }: plot holds free text (…)``: each candidate the selection left out, and why (shown
    with --verbose)."""
    return [f"left out {key_text(item.key)}: {item.reason}" for item in index_set.left_out]


def set_method(index_set: IndexSet) -> str:
    """``costs by the estimator over the data sample; exact search over 5 candidates``."""
    return f"{MODELS[index_set.model]}; {index_set.search_note}"


def index_line(index: SetIndex, per: str = "per hour") -> str:
    """``create { status: 1, region: 1 }: 2 shapes (QY001), saves 12 s of server time (2.7M examined) per hour,
    writes 2,626 index keys``."""
    action, label, why = index_parts(index, per)
    return f"{action} {label}: {why}"


def index_parts(index: SetIndex, per: str = "per hour") -> tuple[str, str, str]:
    """An index of a set as (action, index, why): ``("hide", "status_1 { status: 1 }", "redundant: …")``."""
    if index.status != "new":
        return STATUS_WORDS[index.status], f"{index.name} {key_text(index.key)}", index.reason
    parts = [_count(len(index.shapes), "shape") + (f" ({', '.join(index.rules)})" if index.rules else "")]
    if index.saving_s_per_hour is not None:
        examined = (f" ({human_count(index.work_saved_per_hour)} examined)" if index.work_saved_per_hour is not None
                    else "")
        parts.append(f"saves {human_seconds(index.saving_s_per_hour)} of server time{examined} {per}")
    elif index.work_saved_per_hour is not None:
        parts.append(f"saves {human_count(index.work_saved_per_hour)} {per}")
    if index.writes_per_hour:
        parts.append(f"writes {human_count(index.writes_per_hour)} index keys")
    if not index.reason.startswith("asked for by"):
        parts.append(index.reason)
    return "create", key_text(index.key), ", ".join(parts)


def shape_line(shape: SetShape) -> str:
    """``count {region: eq, status: eq}: 24,996 → 1,348 per execution with status_1_region_1 (estimator)``."""
    body = shape.shape.split(" ", 2)
    text = f"{body[0]} {body[2]}" if len(body) == 3 else shape.shape
    served = f"with {shape.index}" if shape.index else "by a collection scan"
    if shape.before is None:
        cost = "not measured"
    else:
        after = shape.after if shape.after is not None else shape.before
        cost = f"{human_count(shape.before)} → {human_count(after)} per execution"
    line = f"{text}: {cost} {served} ({shape.model}{'; a finding asks for an index' if shape.requested else ''})"
    return line + (f"; {shape.note}" if shape.note else "")


def writes_line(index_set: IndexSet) -> str | None:
    """``writes per hour (log): 1,313 documents updated; …``, or None when the log shows no write and no server
    said otherwise."""
    rates, totals = index_set.writes, index_set.totals
    counts = [(rates.inserted, "inserted"), (rates.updated, "updated"), (rates.deleted, "deleted")]
    shown = [f"{human_count(count)} documents {word}" for count, word in counts if count]
    if not shown:
        # a log whose only writes were bulk loads: say they were left out, and why
        return f"writes {_per(index_set)} (the log): none counted ({rates.note})" if rates.note else None
    line = f"writes {_per(index_set)} ({'the server' if rates.source == 'server' else 'the log'}): {', '.join(shown)}"
    if rates.note:
        line += f" ({rates.note})"
    line += (f"; new index keys cost x{totals.write_cost_factor:g} (--write-cost-factor): net saving "
             f"{human_count(totals.net_saved)}")
    if totals.index_writes_removed:
        line += f"; dropping the hidden indexes saves {human_count(totals.index_writes_removed)} index key writes"
    return line


def _per(index_set: IndexSet) -> str:
    return "per hour" if index_set.totals.per == "hour" else "over the log"


def _status(index_set: IndexSet, status: str) -> int:
    return sum(1 for index in index_set.indexes if index.status == status)


def _count(count: int, singular: str, plural: str | None = None) -> str:
    return f"{count:,} {singular if count == 1 else plural or singular + 's'}"
