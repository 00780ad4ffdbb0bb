"""Text every format shares about a live server: what was read, what was not, the scratch database, and the
estimator-versus-server calibration of replayed evidence."""

from __future__ import annotations

from typing import Any

from idxadvisor.models.report import Evidence, ServerReport


def server_lines(server: ServerReport) -> list[str]:
    """``server mongodb://db1:27017 (8.0.4), databases shop; 8 profiled operations`` and what followed from it."""
    version = f" ({server.version})" if server.version else ""
    databases = ", ".join(server.databases) or "none"
    line = f"server {server.server}{version}, databases {databases}; {server.profile_documents:,} profiled operations"
    if server.query_stats:
        line += "; $queryStats read"
    lines = [line]
    lines += [f"not read: {missing}" for missing in server.missing]
    scratch = server.scratch
    if scratch is not None:
        state = "dropped" if scratch.dropped else "NOT DROPPED: drop it by hand"
        lines.append(f"replay: scratch database {scratch.database} on {scratch.server}: {scratch.collections} "
                     f"collection{'s' if scratch.collections != 1 else ''}, {scratch.documents:,} documents, "
                     f"{scratch.indexes} indexes built; {state}")
        if scratch.stopped is not None:
            lines.append(f"replay: stopped early ({scratch.stopped}): findings not replayed keep the estimator's "
                         "evidence")
        lines += [f"replay: {problem}" for problem in scratch.problems]
    calibration = server.calibration
    if calibration is not None and calibration.findings:
        lines.append(f"estimator vs server: {calibration.agreeing} of {calibration.counters} counters agree over "
                     f"{calibration.findings} replayed finding{'s' if calibration.findings != 1 else ''}")
    return lines


def plan_cost(plan: dict[str, Any], evaluator: str = "estimator") -> str:
    """``IXSCAN { status: 1 }: keys 1,345, docs 0, returned 0``, or why there is no number."""
    if "unsupported" in plan:
        return f"not {'estimated' if evaluator == 'estimator' else 'measured'} ({plan['unsupported']})"
    if "error" in plan:  # an index that cannot be built (two array fields), say
        return f"fails: {error_sentence(plan['error'], plan.get('index'))}"
    return (f"{plan.get('planSummary', '?')}: keys {_number(plan.get('totalKeysExamined'))}, "
            f"docs {_number(plan.get('totalDocsExamined'))}, returned {_number(plan.get('nReturned'))}")


def error_sentence(error: Any, index: str | None = None) -> str:
    """A server's (or the estimator's) refusal as a sentence: ``index tags_sizes cannot be built: cannot index
    parallel arrays [sizes] [tags] (CannotIndexParallelArrays, code 171)``; never the raw document."""
    if not isinstance(error, dict):
        return str(error)
    message = str(error.get("errmsg") or error.get("message") or "the server refused the request")
    names = [str(error["codeName"])] if error.get("codeName") else []
    names += [f"code {error['code']}"] if error.get("code") is not None else []
    text = f"{message} ({', '.join(names)})" if names else message
    return f"index {index} cannot be built: {text}" if index else text


def evidence_line(evidence: Evidence, after_label: str = "with the index") -> str:
    """``estimator: today COLLSCAN: keys 0, docs 9,000, returned 3 → with the index IXSCAN …``."""
    before, after = plan_cost(evidence.before, evidence.evaluator), plan_cost(evidence.after, evidence.evaluator)
    return f"{evidence.evaluator}: today {before} → {after_label} {after}"


def calibration_line(evidence: Evidence) -> str | None:
    """``calibration: 7 of 8 counters agree; after totalKeysExamined: server 200, estimator 180``."""
    rows = evidence.calibration
    if not rows:
        return None
    differing = [f"{row.plan} {row.counter}: server {_number(row.server)}, estimator {_number(row.estimator)}"
                 for row in rows if not row.agree]
    agreeing = sum(1 for row in rows if row.agree)
    line = f"calibration on the sample: {agreeing} of {len(rows)} counters agree"
    return line + ("; " + "; ".join(differing) if differing else "")


def _number(value: object) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "?" if value is None else str(value)
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"
