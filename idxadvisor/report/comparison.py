"""``idxadvisor compare`` in every format: text for a terminal, Markdown for a pull request, JSON (the model as it
is), SARIF (one result per regressed shape, so code scanning flags the release that slowed a query down) and HTML
(``report/html_compare.py``)."""

from __future__ import annotations

import json
from typing import Any, TextIO

from idxadvisor.errors import UsageError
from idxadvisor.models.compare import Comparison, ShapeChange, SideSummary
from idxadvisor.report import DEFAULT_TOP_FOR_PEOPLE, terminal_console
from idxadvisor.report.readable import md_code, md_text, readable
from idxadvisor.report.sarif import SCHEMA, artifact_uri
from idxadvisor.report.compare_words import (
    arrow,
    detail_lines,
    exit_line,
    pct,
    per_returned,
    side_line,
    side_values,
    time_change,
    verdict_line,
)
from idxadvisor.units import human_ms, mask_secrets

RULE_ID = "shape-regressed"
_STYLES = {"regressed": "bold red", "improved": "green", "appeared": "cyan", "vanished": "dim", "unchanged": ""}


def render_comparison(comparison: Comparison, out: TextIO, *, format: str = "text", top: int | None = None) -> None:
    comparison = _masked(comparison)
    limit = top or DEFAULT_TOP_FOR_PEOPLE
    if format == "json":
        out.write(comparison.model_dump_json(indent=2) + "\n")
    elif format == "sarif":
        json.dump(sarif_document(comparison), out, indent=2)
        out.write("\n")
    elif format == "markdown":
        status, text = exit_line(comparison)
        verdict = text.replace("--regression-pct", "`--regression-pct`")
        out.write("\n".join(_markdown(readable(comparison), limit) + ["", _cell(verdict)]) + "\n")
    elif format == "html":
        from idxadvisor.report import html_compare

        html_compare.render(comparison, out, top=top)
    elif format == "text":
        _terminal(readable(comparison), out, limit)
    else:
        raise UsageError(f"--format {format}: compare writes text, json, markdown, sarif or html")


def _masked(comparison: Comparison) -> Comparison:
    def side(summary: SideSummary) -> SideSummary:
        return summary.model_copy(update={"inputs": [mask_secrets(path) for path in summary.inputs],
                                          "errors": [mask_secrets(error) for error in summary.errors]})

    return comparison.model_copy(update={"before": side(comparison.before), "after": side(comparison.after)})


# -- text -------------------------------------------------------------------------------------------------------------


def _terminal(comparison: Comparison, out: TextIO, limit: int) -> None:
    from rich.text import Text

    console = terminal_console(out)
    header = Text(f"idxadvisor {comparison.tool.version} compare\n", style="bold")
    header.append(side_line("before", comparison.before) + "\n" + side_line("after", comparison.after) + "\n")
    header.append(verdict_line(comparison), style="bold red" if comparison.regressed else "bold green")
    console.print(header)
    for error in comparison.before.errors + comparison.after.errors:
        console.print(Text(f"could not read {error}", style="red"))
    for rank, change in enumerate(comparison.shapes[:limit], 1):
        console.print()
        line = Text(f"#{rank} ")
        line.append(f"{change.status:<9}", style=_STYLES[change.status])
        line.append(f" {time_change(change, comparison.time_basis)}  {change.ns}", style="bold")
        console.print(line)
        console.print(Text(f"   {change.shape}", style="dim"))
        for detail in detail_lines(change):
            console.print(Text(f"   {detail}"))
    if len(comparison.shapes) > limit:
        console.print(Text(f"\n{len(comparison.shapes) - limit} more shapes (--top N shows more; JSON has all)",
                           style="dim"))
    status, text = exit_line(comparison)
    console.print()
    console.print(Text(text, style="bold green" if status == 0 else "bold red"))


# -- Markdown ---------------------------------------------------------------------------------------------------------


_cell = md_text


def _markdown(comparison: Comparison, limit: int) -> list[str]:
    lines = ["## idxadvisor compare", "", f"- {side_line('Before', comparison.before)}",
             f"- {side_line('After', comparison.after)}", "",
             f"**{'❌ ' if comparison.regressed else '✅ '}{verdict_line(comparison)}.**"]
    for error in comparison.before.errors + comparison.after.errors:
        lines.append(f"- could not read {_cell(error)}")
    if not comparison.shapes:
        return lines
    unit = " per hour" if comparison.time_basis == "per_hour" else ""
    lines += ["", f"| # | change | time{unit} | namespace | shape | mean | p95 | docs examined / returned | plan |",
              "|--:|---|--:|---|---|---|---|---|---|"]
    for rank, change in enumerate(comparison.shapes[:limit], 1):
        mean = arrow(*side_values(change, "mean_ms"), human_ms) + pct(change.mean_change_pct)
        p95 = arrow(*side_values(change, "p95_ms"), human_ms) + pct(change.p95_change_pct)
        docs = arrow(*side_values(change, "docs_examined_per_returned"), lambda value: "–" if value is None
                      else per_returned(value))
        plan = change.plan_change or "unchanged"
        if change.sort_change:
            plan += f"; blocking sort {change.sort_change}"
        if change.cause:
            plan += f"; {change.cause}"
        signed = f"{'−' if change.time_change_ms < 0 else '+'}{human_ms(abs(change.time_change_ms))}"
        lines.append(f"| {rank} | {'**regressed**' if change.status == 'regressed' else change.status} | {signed} "
                     f"| {md_code(change.ns)} | {md_code(change.shape)} | {mean} | {p95} | {docs} | {_cell(plan)} |")
    if len(comparison.shapes) > limit:
        lines += ["", f"{len(comparison.shapes) - limit} more shapes in the JSON output."]
    return lines


# -- SARIF ------------------------------------------------------------------------------------------------------------


def sarif_document(comparison: Comparison) -> dict[str, Any]:
    location = artifact_uri(comparison.after.inputs[0]) if comparison.after.inputs else None
    results = [_result(change, location) for change in comparison.shapes if change.status == "regressed"]
    return {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": comparison.tool.name,
                "version": comparison.tool.version,
                "rules": [{
                    "id": RULE_ID,
                    "name": RULE_ID,
                    "shortDescription": {"text": "A query shape got slower between two workloads."},
                    "fullDescription": {"text": "The shape ran at least --min-executions times before and after, and "
                                        "its mean or p95 duration grew by more than --regression-pct percent."},
                    "defaultConfiguration": {"level": "error"},
                }],
            }},
            "results": results,
            "properties": {"before": comparison.before.model_dump(mode="json"),
                           "after": comparison.after.model_dump(mode="json"),
                           "regression_pct": comparison.regression_pct,
                           "min_executions": comparison.min_executions},
        }],
    }


def _result(change: ShapeChange, location: str | None) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": RULE_ID,
        "level": "error",
        "message": {"text": f"{change.ns}: {change.shape} regressed: {'; '.join(change.reasons)}"
                            + (f"; plan {change.plan_change}" if change.plan_change else "")},
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": location}},
                       "logicalLocations": [{"name": change.ns, "kind": "namespace"}]}],
        "partialFingerprints": {"idxadvisor/shape/v1": change.fingerprint},
        "properties": change.model_dump(mode="json"),
    }
    if location is None:
        del result["locations"][0]["physicalLocation"]
    return result
