"""Evidence for index suggestions: each finding's query, estimated as it runs today and with the proposed index.

The query is the shape's representative: its most recent complete execution; values the server redacted (``"###"``)
are drawn from the data sample. *Today* is the indexes of ``--indexes`` (or the one the log's plan names), held to
the plan the log shows the server using when that index is among them. *After* hints the proposed index, as a
what-if for one candidate must (planner-semantics.md §11).

A sample is smaller than its collection, so both plans are estimated without the query's limit and scaled up:

* by **calibration**: the factor that makes today's plan examine, per execution, what the log shows it examining
  (possible when the log's plan is the estimated one and no limit stopped it early);
* else by the median calibration of the other findings on the same collection;
* else by the collection's size, where a collection scan in the log (or the sample file's length) shows it.

The limit is then applied: a plan that gives the sort stops after skip + limit results, a blocking sort reads every
match first. A suggestion that does not cut keys plus documents examined by ``min_savings_pct`` is dropped, with that
reason; an estimate the model cannot make says so (``unsupported``) and keeps the finding.

Whatever answers the explains is an ``Evaluator``: the estimator by default, a real server on a scratch copy in
``idxadvisor.replay``. Their numbers go through the same calibration, scaling and limit, and give ``Evidence`` with
the same ``before``/``after`` keys, so the report does not care which ran.
"""

from __future__ import annotations

import json
import random
import re
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol

from bson import json_util

from idxadvisor.indexes.candidates import ers_key, roles_of
from idxadvisor.indexes.model import IndexSpec, KeyPattern
from idxadvisor.indexes.plans import parse_plan_summary
from idxadvisor.indexes.sampling import SampleStatistics, path_values
from idxadvisor.ingest.samples import MAX_NESTING, too_deep
from idxadvisor.models.report import Evidence, Finding, Skip
from idxadvisor.models.values import decode_extended_json
from idxadvisor.shapes.digest import ShapeStats
from idxadvisor.whatif.estimator import Estimator, WhatIfQuery

REDACTED = "###"
ERS_MIN_COST = 10  # sample keys plus documents the proposed index must examine before ERS advice means anything
_KEPT = ("planSummary", "nReturned", "nCounted", "totalKeysExamined", "totalDocsExamined", "executionTimeMillis",
         "blockingSort", "covered", "unsupported", "error")
_SCALED = ("nReturned", "nCounted", "totalKeysExamined", "totalDocsExamined")


@dataclass(frozen=True)
class EvidenceOptions:
    min_savings_pct: float = 50.0
    server_version: tuple[int, int] = (8, 0)
    show_values: bool = False


class Evaluator(Protocol):
    """What answers explain("executionStats") for a finding's query: the estimator here, a real server in
    ``idxadvisor.replay``. Both give the explain names (``planSummary``, ``nReturned``, ``nCounted``,
    ``totalKeysExamined``, ``totalDocsExamined`` …), or ``{"unsupported": reason}``; the evidence built from them is
    the same, so the report does not care which ran."""

    name: Literal["estimator", "server"]

    def explain(self, ns: str, query: WhatIfQuery, indexes: list[IndexSpec], hint: IndexSpec | None) -> dict[str, Any]:
        """``query`` over the collection's sample with these indexes (``hint`` forces one, as hint() does)."""
        ...

    def describe(self, ns: str, sample: SampleStatistics) -> str:
        """The first note of the evidence: what ran, over what."""
        ...


class EstimatorEvaluator:
    """The what-if estimator over each collection's sample (one model per collection, built on first use)."""

    name: Literal["estimator", "server"] = "estimator"

    def __init__(self, samples: Mapping[str, SampleStatistics], server_version: tuple[int, int] = (8, 0)) -> None:
        self._samples = samples
        self._server_version = server_version
        self._estimators: dict[str, Estimator] = {}

    def estimator(self, ns: str) -> Estimator:
        estimator = self._estimators.get(ns)
        if estimator is None:
            estimator = self._estimators[ns] = Estimator(self._samples[ns].documents,
                                                         server_version=self._server_version)
        return estimator

    def explain(self, ns: str, query: WhatIfQuery, indexes: list[IndexSpec], hint: IndexSpec | None) -> dict[str, Any]:
        return dict(self.estimator(ns).explain(query, indexes, hint))

    def describe(self, ns: str, sample: SampleStatistics) -> str:
        return f"estimated over {len(sample):,} sampled documents"


@dataclass
class _Estimate:
    finding: Finding
    stats: ShapeStats
    sample: SampleStatistics
    query: WhatIfQuery | None
    before: dict[str, Any]
    after: dict[str, Any] = field(default_factory=dict)
    today: list[IndexSpec] = field(default_factory=list)
    factor: float | None = None  # calibrated against the log, when the log allows it
    how: str = ""


def gather_evidence(findings: list[Finding], shapes: Mapping[str, ShapeStats], samples: Mapping[str, SampleStatistics],
                    catalog: Mapping[str, list[IndexSpec]], options: EvidenceOptions,
                    evaluator: Evaluator | None = None) -> tuple[list[Finding], list[Skip]]:
    """The findings with evidence attached, and the ones dropped for too small a saving (as skips).

    Every finding's plan of today is evaluated before any candidate is, so that an evaluator that builds indexes as
    they are asked for (a server) has only today's indexes while it answers for today."""
    evaluator = evaluator or EstimatorEvaluator(samples, options.server_version)
    estimates: dict[int, _Estimate] = {}
    for position, finding in enumerate(findings):
        stats = shapes.get(finding.fingerprint)
        sample = samples.get(finding.ns)
        if finding.index is None or finding.index.name or stats is None or sample is None or not len(sample):
            continue
        estimates[position] = _estimate_today(finding, stats, sample, evaluator, catalog.get(finding.ns))
    for estimate in estimates.values():
        _estimate_candidate(estimate, evaluator)
    factors = collection_factors(((e.finding.ns, e.factor) for e in estimates.values()), shapes.values(), samples)
    kept: list[Finding] = []
    dropped: list[Skip] = []
    for position, finding in enumerate(findings):
        estimate = estimates.get(position)
        if estimate is None:
            kept.append(finding)
            continue
        finding.evidence = _evidence(estimate, factors.get(finding.ns), options, evaluator)
        saving = _saving(finding.evidence.before, finding.evidence.after)
        if saving is not None and saving < options.min_savings_pct:
            by = "the estimate" if evaluator.name == "estimator" else "the server's explain"
            dropped.append(Skip(fingerprint=finding.fingerprint, ns=finding.ns, shape=estimate.stats.shape.text,
                                reason=f"{finding.rule}: by {by}, {_key(finding)} cuts keys plus documents "
                                       f"examined by {saving:.0f}% only (--min-savings-pct {options.min_savings_pct:g})"))
            continue
        if finding.rule == "IX002" and isinstance(evaluator, EstimatorEvaluator):
            _compare_with_ers(finding, estimate.stats, estimate.sample, evaluator.estimator(finding.ns),
                              finding.evidence)
        kept.append(finding)
    return kept, dropped


def gather_change_evidence(findings: list[Finding], shapes: Mapping[str, ShapeStats],
                           samples: Mapping[str, SampleStatistics], baseline: Mapping[str, list[IndexSpec]],
                           proposed: Mapping[str, list[IndexSpec]], options: EvidenceOptions) -> None:
    """Evidence for findings about a shape losing its index (``check``, CI002): today's plan, among the baseline
    indexes and held to the plan the log shows, against the plan the planner would pick among the proposed ones."""
    estimators: dict[str, Estimator] = {}
    estimates: list[_Estimate] = []
    for finding in findings:
        stats, sample = shapes.get(finding.fingerprint), samples.get(finding.ns)
        if stats is None or sample is None or not len(sample):
            continue
        estimator = estimators.get(finding.ns)
        if estimator is None:
            estimator = estimators[finding.ns] = Estimator(sample.documents, server_version=options.server_version)
        query = representative_query(stats, sample)
        if isinstance(query, str):
            finding.evidence = Evidence(evaluator="estimator", before={"unsupported": query},
                                        after={"unsupported": query})
            continue
        today, hint = todays_indexes(stats, [index for index in baseline.get(finding.ns, []) if not index.hidden])
        after = [index for index in proposed.get(finding.ns, [])
                 if index.is_btree and not index.is_id_index and not index.hidden]
        unlimited = replace(query, limit=None, skip=None)
        estimate = _Estimate(finding, stats, sample, query, estimator.explain(unlimited, today, hint),
                             estimator.explain(unlimited, after, None))
        estimate.factor, estimate.how = calibration(stats, estimate.before, query)
        estimates.append(estimate)
    factors = collection_factors(((e.finding.ns, e.factor) for e in estimates), shapes.values(), samples)
    evaluator = EstimatorEvaluator(samples, options.server_version)  # names the evaluator and describes the sample
    for estimate in estimates:
        estimate.finding.evidence = _evidence(estimate, factors.get(estimate.finding.ns), options, evaluator)


def collection_factors(calibrations: Iterable[tuple[str, float | None]], shapes: Iterable[ShapeStats],
                       samples: Mapping[str, SampleStatistics]) -> dict[str, tuple[float, str]]:
    """Per collection, how many times it exceeds its sample: the median of its shapes' calibrations against the
    log (``(namespace, factor)`` pairs, None where the log could not tell), else the size a collection scan in the
    log (or the sample file's length) shows."""
    calibrated: dict[str, list[float]] = {}
    for ns, factor in calibrations:
        if factor is not None:
            calibrated.setdefault(ns, []).append(factor)
    factors: dict[str, tuple[float, str]] = {}
    for ns, values in calibrated.items():
        factor = statistics.median(values)
        factors[ns] = (factor, f"scaled x{factor:,.1f}, as the other queries on this collection calibrate against "
                               "the log")
    for ns, size in collection_sizes(shapes).items():
        sample = samples.get(ns)
        if ns not in factors and sample is not None and size > len(sample):
            factors[ns] = (size / len(sample), f"scaled x{size / len(sample):,.1f} to the collection's {size:,} "
                                               "documents (a collection scan in the log)")
    for ns, sample in samples.items():
        if ns not in factors and sample.documents_seen > len(sample):
            factor = sample.documents_seen / len(sample)
            factors[ns] = (factor, f"scaled x{factor:,.1f} to the {sample.documents_seen:,} documents of {sample.origin}")
    return factors


def _key(finding: Finding) -> str:
    assert finding.index is not None
    return "{ " + ", ".join(f"{name}: {direction}" for name, direction in finding.index.key) + " }"


def _estimate_today(finding: Finding, stats: ShapeStats, sample: SampleStatistics, evaluator: Evaluator,
                    existing: list[IndexSpec] | None) -> _Estimate:
    query = representative_query(stats, sample)
    if isinstance(query, str):
        unsupported = {"unsupported": query}
        return _Estimate(finding, stats, sample, None, unsupported, unsupported)
    today, hint = todays_indexes(stats, existing)
    unlimited = replace(query, limit=None, skip=None)
    estimate = _Estimate(finding, stats, sample, query, evaluator.explain(finding.ns, unlimited, today, hint),
                         today=today)
    estimate.factor, estimate.how = calibration(stats, estimate.before, query)
    return estimate


def _estimate_candidate(estimate: _Estimate, evaluator: Evaluator) -> None:
    if estimate.query is None:
        return
    assert estimate.finding.index is not None
    candidate = IndexSpec(key=tuple((name, direction) for name, direction in estimate.finding.index.key))
    unlimited = replace(estimate.query, limit=None, skip=None)
    estimate.after = evaluator.explain(estimate.finding.ns, unlimited, [*estimate.today, candidate], candidate)


def _evidence(estimate: _Estimate, collection: tuple[float, str] | None, options: EvidenceOptions,
              evaluator: Evaluator) -> Evidence:
    if estimate.query is None:
        return Evidence(evaluator=evaluator.name, before=estimate.before, after=estimate.after)
    scaling = (estimate.factor, estimate.how) if estimate.factor is not None else (collection or (1.0, ""))
    return build_evidence(estimate.stats, estimate.query, estimate.before, estimate.after, scaling, options,
                          evaluator.name, evaluator.describe(estimate.finding.ns, estimate.sample))


def build_evidence(stats: ShapeStats, query: WhatIfQuery, before: Mapping[str, Any], after: Mapping[str, Any],
                   scaling: tuple[float, str], options: EvidenceOptions, evaluator: Literal["estimator", "server"],
                   described: str) -> Evidence:
    """The evidence of two explains of ``query`` without its limit (today's plan, and a candidate's), scaled to the
    collection (``scaling``: the factor and how it was found) and cut to the query's limit; ``described`` is the
    first note (what ran, over what)."""
    factor, how = scaling
    notes = [described] + ([how] if how else [])
    window = window_of(query)
    if window:
        numbers = "the estimate" if evaluator == "estimator" else "the server's numbers"
        notes.append(f"the limit of {abs(query.limit)} applied to {numbers}: a plan that gives the sort stops "  # type: ignore[arg-type]
                     "after the results it needs, a blocking sort reads every match first")
    scaled_before = scale_explain(before, factor, window, query.limit, query.skip)
    if "totalKeysExamined" in scaled_before:
        scaled_before["logged"] = _logged(stats)
    return Evidence(evaluator=evaluator, query=_query_document(query) if options.show_values else None,
                    before=scaled_before, after=scale_explain(after, factor, window, query.limit, query.skip),
                    notes=notes)


def window_of(query: WhatIfQuery) -> int | None:
    """The results a limited query reads up to (skip + limit), or None without a limit."""
    return (query.skip or 0) + abs(query.limit) if query.limit else None


def executions(stats: ShapeStats) -> int:
    """How many times the shape ran: its count includes the getMores that continued those runs (their keys and
    documents examined belong to the same executions)."""
    return stats.executions


def _logged(stats: ShapeStats) -> dict[str, float]:
    """What the log measured, per execution: the ground truth the estimate of today's plan should come close to."""
    count = executions(stats)
    return {"totalKeysExamined": round(stats.keys_examined / count, 1),
            "totalDocsExamined": round(stats.docs_examined / count, 1), "nReturned": round(stats.nreturned / count, 1)}


def calibration(stats: ShapeStats, before: Mapping[str, Any], query: WhatIfQuery) -> tuple[float | None, str]:
    """How many times the collection exceeds the sample for this query, from the log: today's plan, estimated over
    the sample, against what the log shows it examining. None when the log cannot tell (another plan, or a plan a
    limit stopped early, which says nothing about how many documents match)."""
    examined = before.get("totalKeysExamined", 0) + before.get("totalDocsExamined", 0)
    logged_plan = parse_plan_summary(stats.main_plan) if stats.main_plan else None
    estimated_plan = parse_plan_summary(before["planSummary"]) if "planSummary" in before else None
    reads_everything = not query.limit or bool(stats.blocking_sorts) or bool(before.get("blockingSort"))
    same_plan = (logged_plan is not None and estimated_plan is not None
                 and logged_plan.indexes == estimated_plan.indexes
                 and logged_plan.is_collection_scan == estimated_plan.is_collection_scan)
    if not (stats.measured and examined > 0 and same_plan and reads_everything):
        return None, ""
    logged = (stats.keys_examined + stats.docs_examined) / executions(stats)
    factor = max(1.0, logged / examined)
    return factor, (f"scaled x{factor:,.1f} so that today's plan examines what the log shows "
                    f"({logged:,.0f} keys and documents per execution)")


def scale_explain(result: Mapping[str, Any], factor: float, window: int | None, limit: int | None,
                  skip: int | None = None) -> dict[str, Any]:
    """An explain of the unlimited query over the sample, scaled to the collection (``factor``), then cut to the
    query's ``skip`` + ``limit`` (``window``); the unscaled numbers stay under ``sample``."""
    summary = {key: result[key] for key in _KEPT if key in result}
    if "totalKeysExamined" not in summary:
        return summary
    summary["sample"] = {key: result[key] for key in _SCALED if key in result}
    for key in _SCALED:
        if isinstance(summary.get(key), (int, float)):
            summary[key] = summary[key] * factor
    if window and "nCounted" not in summary:
        matches = summary["nReturned"]
        if not summary.get("blockingSort") and matches > window:
            share = window / matches
            summary["totalKeysExamined"] *= share
            summary["totalDocsExamined"] *= share
        summary["nReturned"] = min(max(0, matches - (skip or 0)), abs(limit or matches))
    for key in _SCALED:
        if isinstance(summary.get(key), float):
            summary[key] = round(summary[key])
    return summary


def _saving(before: Mapping[str, Any], after: Mapping[str, Any]) -> float | None:
    """The share of keys plus documents examined that the candidate saves, by the estimate."""
    if "totalKeysExamined" not in before or "totalKeysExamined" not in after:
        return None
    cost_before = before["totalKeysExamined"] + before["totalDocsExamined"]
    cost_after = after["totalKeysExamined"] + after["totalDocsExamined"]
    if cost_before <= 0:
        return None
    return (cost_before - cost_after) * 100 / cost_before


def _compare_with_ers(finding: Finding, stats: ShapeStats, sample: SampleStatistics, estimator: Estimator,
                      evidence: Evidence) -> None:
    """Say when equality → range → sort examines much less than the proposed equality → sort → range index."""
    roles = roles_of(stats.shape, stats.max_in_length)
    assert finding.index is not None
    proposed: KeyPattern = tuple((name, direction) for name, direction in finding.index.key)
    position = {name: index for index, (name, _) in enumerate(proposed)}
    alternative = ers_key(roles, lambda name: (position.get(name, len(position)), name))
    if alternative == proposed or not roles.sort:
        return
    query = representative_query(stats, sample)
    if isinstance(query, str):
        return
    spec = IndexSpec(key=alternative)
    result = estimator.explain(replace(query, limit=None, skip=None), [spec], spec)
    after = evidence.after
    if "totalKeysExamined" not in result or "totalKeysExamined" not in after:
        return
    ers_cost = result["totalKeysExamined"] + result["totalDocsExamined"]
    sample_after = after.get("sample", after)
    esr_cost = sample_after["totalKeysExamined"] + sample_after["totalDocsExamined"]
    if not result.get("nReturned") or esr_cost < ERS_MIN_COST:
        return  # nothing in the sample matches, or too little work to tell the two orders apart
    if ers_cost * 2 <= esr_cost:
        finding.details.append(
            f"by the estimate, the range is selective here: {spec} examines {ers_cost:,} keys and documents on "
            f"the sample against {esr_cost:,}, and sorts only {result.get('nReturned', 0):,} documents in memory: "
            "equality → range → sort is the better choice")


def todays_indexes(stats: ShapeStats, existing: list[IndexSpec] | None) -> tuple[list[IndexSpec], IndexSpec | None]:
    """Today's indexes (--indexes, else the one the log's plan names) and the plan to hold them to: the index the
    log shows the server using, when it is one of them, so that the estimate of today is the server's own plan."""
    plan_text = stats.main_plan or ""
    used = parse_plan_summary(plan_text).indexes
    logged = used[0] if used and used[0] != (("_id", 1),) else None
    if existing is not None:
        today = [index for index in existing if index.is_btree and not index.is_id_index]
        return today, next((index for index in today if index.key == logged), None)
    if logged is not None:
        spec = IndexSpec(key=logged)
        return [spec], spec
    return [], None


def collection_sizes(shapes: Sequence[ShapeStats] | Any) -> dict[str, int]:
    """Documents per collection, where the log shows it: a collection scan that cannot stop early reads them all
    (not under a limit, nor for an update without multi, a delete of one document, or a findAndModify)."""
    sizes: dict[str, int] = {}
    for stats in shapes:
        if not stats.count or stats.shape.op not in ("find", "count", "update", "delete", "aggregate"):
            continue
        if _stops_early(stats):
            continue
        plans = [parse_plan_summary(text) for text in stats.plans]
        if plans and all(plan.is_collection_scan for plan in plans):
            per_execution = stats.docs_examined // executions(stats)
            sizes[stats.shape.ns] = max(sizes.get(stats.shape.ns, 0), per_execution)
    return sizes


def _stops_early(stats: ShapeStats) -> bool:
    shape = stats.shape
    if shape.has_option("limit"):
        return True
    if shape.op == "update":
        return not shape.has_option("multi")
    if shape.op == "delete":
        return shape.has_option("one")
    return shape.op == "findAndModify"


def representative_query(stats: ShapeStats, sample: SampleStatistics) -> WhatIfQuery | str:
    """The what-if query for a shape's latest complete execution, or why there is none."""
    representative = stats.representative
    if representative is None:
        return "no complete execution of this shape in the log"
    command = representative.command
    op = stats.shape.op
    rng = random.Random(stats.shape.fingerprint)
    if op == "find":
        body = {"filter": command.get("filter", {}), "sort": command.get("sort"),
                "projection": command.get("projection"), "limit": command.get("limit"), "skip": command.get("skip")}
    elif op == "count":
        body = {"command": "count", "filter": command.get("query", {}), "limit": command.get("limit"),
                "skip": command.get("skip")}
    elif op in ("update", "delete"):
        single = (op == "update" and not command.get("multi")) or (op == "delete" and command.get("limit") in (1, 1.0))
        body = {"filter": command.get("q", {}), "limit": 1 if single else None}
    elif op == "findAndModify":
        body = {"filter": command.get("query", {}), "sort": command.get("sort"), "limit": 1}
    elif op == "distinct":
        body = {"filter": command.get("query", {})}
        if isinstance(command.get("key"), str):
            body.update(command="distinct", key=command["key"])
    elif op == "aggregate":
        body = _leading_pipeline(command.get("pipeline"), stats)
        if isinstance(body, str):
            return body
    else:
        return f"{op} is not a query the estimator models"
    for option in ("collation", "hint"):  # the server planned the logged query with them
        if command.get(option) is not None:
            body[option] = command[option]
    if too_deep(body.get("filter") or {}):
        return f"the logged query is nested deeper than BSON's {MAX_NESTING} levels"
    body["filter"] = _fill_redacted(body.get("filter") or {}, sample, rng, "")
    try:
        decoded = {key: decode_extended_json(value) for key, value in body.items() if value is not None}
        return WhatIfQuery.from_json(_numbers(decoded))
    except Exception as exc:  # noqa: BLE001 - any odd logged value: no estimate, with the reason
        return f"the logged query cannot be replayed ({type(exc).__name__}: {exc})"


def _numbers(body: dict[str, Any]) -> dict[str, Any]:
    for key in ("limit", "skip"):
        value = body.get(key)
        if isinstance(value, float) and value == int(value):
            body[key] = int(value)
        if key == "limit" and body.get(key) == 0:
            del body[key]
    return body


def _leading_pipeline(pipeline: Any, stats: ShapeStats) -> dict[str, Any] | str:
    if type(pipeline) is not list or not pipeline:
        return "no pipeline logged"
    body: dict[str, Any] = {"filter": {}}
    matches = []
    for stage in pipeline:
        name = next(iter(stage), None) if isinstance(stage, dict) else None
        if name == "$match":
            matches.append(stage["$match"])
        elif name == "$sort" and "sort" not in body:
            body["sort"] = stage["$sort"]
        elif name == "$limit" and "limit" not in body:
            body["limit"] = stage["$limit"]
        else:
            break
    if not matches:
        return "the pipeline does not start with $match"
    body["filter"] = matches[0] if len(matches) == 1 else {"$and": matches}
    counting = stats.shape.stages and stats.shape.stages[-1] in ("$count", "$group(_id=const; count)")
    if counting and len(stats.shape.stages) <= 4:
        return {"command": "count", "filter": body["filter"]}
    return body


def _fill_redacted(value: Any, sample: SampleStatistics, rng: random.Random, path: str) -> Any:
    """Replace the server's "###" placeholders with values of the same field drawn from the sample."""
    if isinstance(value, dict):
        filled = {}
        for key, item in value.items():
            child = path if key.startswith("$") else (f"{path}.{key}" if path else key)
            if key in ("$and", "$or", "$nor") and isinstance(item, list):
                filled[key] = [_fill_redacted(branch, sample, rng, path) for branch in item]
            elif key in ("$in", "$nin", "$all") and item == REDACTED:
                filled[key] = [_draw(sample, rng, path)]
            elif key == "$regex" and isinstance(item, str) and REDACTED in item:
                filled[key] = _regex_from_sample(item, sample, rng, path)
            else:
                filled[key] = _fill_redacted(item, sample, rng, child)
        return filled
    if isinstance(value, list):
        return [_fill_redacted(item, sample, rng, path) for item in value]
    if value == REDACTED and path:
        return _draw(sample, rng, path)
    return value


REGEX_PREFIX_CHARACTERS = 3  # what a redacted regex's placeholder becomes: this much of a sampled value


def _regex_from_sample(pattern: str, sample: SampleStatistics, rng: random.Random, path: str) -> str:
    """A regex of the kind a workload file kept (``^###``, ``^(?:###)``, ``###``), its placeholder filled with the
    first characters of a value of the field drawn from the sample, so that it matches what such a query matches."""
    drawn = _draw(sample, rng, path)
    text = drawn if isinstance(drawn, str) else ""
    return pattern.replace(REDACTED, re.escape(text[:REGEX_PREFIX_CHARACTERS]))


def _draw(sample: SampleStatistics, rng: random.Random, path: str) -> Any:
    """A value of ``path`` from a random sampled document (BSON-typed: decoding leaves it as it is)."""
    documents = sample.documents
    for _ in range(min(50, len(documents))):
        values, _ = path_values(documents[rng.randrange(len(documents))], path)
        if values:
            return values[0]
    return None


def _query_document(query: WhatIfQuery) -> dict[str, Any]:
    """The estimated query as relaxed Extended JSON (shown only with --show-values: it holds literal values)."""
    return json.loads(json_util.dumps(query.to_json(), json_options=json_util.RELAXED_JSON_OPTIONS))
