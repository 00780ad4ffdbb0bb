"""Run the rules over a workload's shapes: findings, ranked by impact, and a reason for every shape left without.

Findings that share a root cause (a shape, a proposed index, an existing index, a shape a rule names as related) get
one group id (``rules.grouping``).

Index advice is coordinated. For each shape, the index-proposing rules that fire compete and the one with the
highest ``priority`` owns the finding; reviewing rules (IX003) may replace its proposal. Then shapes of one
collection share indexes: each finding proposes, among all the indexes proposed for its collection, the one that
serves the most of them (per-finding advice). An ``IndexChooser`` (``idxadvisor.selection``: the best set for the
collection's whole workload) may then choose each finding's index instead, or none, with the reason. An existing
index that already serves a shape suppresses the suggestion, and one that is a strict prefix of a proposal is named
as the index it replaces.

**Impact** ranks findings: for each execution, the documents examined beyond those returned (or index keys, when
more keys than documents were examined, as with an index in the wrong order), summed over executions, and
multiplied by the average document size in bytes when ``--data`` samples give it for every collection with a
finding (it then reads as bytes read for nothing; with any size unknown, every impact stays in documents). A rule
may count the wasted documents its own way (AG001: every document its runs read); the size applies to that too.
When a shape's work per execution grows steadily over the log's span (``rules.trend``), its findings count every
execution at the latest cost, which is what the shape costs now.
"""

from __future__ import annotations

import hashlib
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace
from typing import Protocol

from idxadvisor.indexes.candidates import SharedKeyIndex, replaceable, serves, serving_signature
from idxadvisor.indexes.model import IndexSpec, KeyPattern
from idxadvisor.indexes.plans import parse_plan_summary
from idxadvisor.models.report import Finding, IndexProposal, Skip
from idxadvisor.rules.base import (
    QUERY_OPS,
    Quiet,
    Rule,
    RuleContext,
    ShapeAnalysis,
    Verdict,
    analyze_shape,
    render_fields,
)
from idxadvisor.rules.grouping import assign_groups
from idxadvisor.rules.trend import DOCUMENTS, growth_of
from idxadvisor.shapes.digest import ShapeStats
from idxadvisor.shapes.timing import time_not_work
from idxadvisor.shapes.traffic import ad_hoc_reason, bulk_share
from idxadvisor.units import human_seconds

NO_QUERY = "has no query an index could serve"


@dataclass
class _Proposal:
    rule: Rule
    analysis: ShapeAnalysis
    verdict: Verdict


@dataclass
class IndexRequest:
    """A finding that asks for a new index, as an ``IndexChooser`` sees it."""

    rule: str
    analysis: ShapeAnalysis
    shared: KeyPattern  # the index per-finding advice gives it (the collection's proposal serving the most shapes)


@dataclass
class IndexChoice:
    """What a chooser decided for one request: the index of its set that serves the shape; or none, and the reason
    the shape is skipped; or none and no reason: the finding stays, without an index (its details say why)."""

    key: KeyPattern | None
    reason: str = ""  # when key is None: why the shape gets no new index (shown with --verbose)
    details: list[str] = field(default_factory=list)  # appended to the finding
    saving: float | None = None  # server seconds per hour of log the chosen index saves


class IndexChooser(Protocol):
    """Chooses the new indexes of a collection for its findings at once (``idxadvisor.selection``)."""

    def choose(self, ns: str, requests: list[IndexRequest], context: RuleContext,
               key_index: SharedKeyIndex | None = None) -> list[IndexChoice]:
        """One choice per request, in order; ``key_index`` holds the collection's proposed keys, and the shapes they
        serve, to add candidates to."""
        ...


def run_rules(shapes: list[ShapeStats], context: RuleContext, rules: list[Rule],
              chooser: IndexChooser | None = None) -> tuple[list[Finding], list[Skip]]:
    """The findings and the reasons for shapes without one; ``chooser`` chooses each collection's new indexes
    (per-finding advice without one)."""
    context.shapes = shapes
    orders = context.derived("equality_orders", lambda every: equality_orders(every, context))
    reviewers = [rule for rule in rules if type(rule).review is not Rule.review]
    findings: list[Finding] = []
    proposals: list[_Proposal] = []
    skips: list[Skip] = []
    related: dict[str, set[str]] = defaultdict(set)  # shape -> shapes a rule names as sharing its root cause
    by_op: dict[tuple[str, bool], list[Rule]] = {}  # the rules that apply to an operation, blocked or not, in order
    for stats in shapes:
        analysis = analyze_shape(stats, context, orders.get(stats.shape.ns))
        blocked = _blocking_reason(analysis, context)
        fired: list[tuple[Rule, Verdict]] = []
        quiet: list[str] = []
        told: list[str] = []
        applying = _applying(rules, stats.shape.op, bool(blocked), by_op) if stats.shape.known else ()
        for rule in applying:
            result = rule.check(analysis, context)
            if result is None:
                continue
            if isinstance(result, Verdict):
                related[stats.shape.fingerprint].update(result.related)
                if rule.proposes_index and result.index:
                    fired.append((rule, result))
                else:
                    findings.append(_finding(rule, analysis, result, None))
            elif isinstance(result, Quiet):
                quiet.append(f"{rule.code}: {result.reason}")
                if result.told:
                    told.append(f"{rule.code}: {result.reason}")
        if not fired:
            reason = blocked or _served_by_plan(analysis) or "; ".join(dict.fromkeys(quiet))
            skips.append(_skip(stats, reason or "no rule applies to this shape"))
            continue
        rule, verdict = max(fired, key=lambda item: item[0].priority)
        verdict.details += told
        served = analysis.served_by(analysis.existing or [])
        if served is not None and rule.stands_without_index:  # the finding is more than its index (QY001)
            verdict.details.append(f"no new index: {_served_reason(served, analysis)}")
            findings.append(_finding(rule, analysis, verdict, None))
            continue
        if served is not None:
            skips.append(_skip(stats, _served_reason(served, analysis)))
            continue
        hidden = analysis.hidden_serving(analysis.existing or [])
        if hidden is not None:
            findings.append(_unhide_finding(rule, analysis, verdict, hidden))
            continue
        for reviewer in reviewers:
            reviewed = reviewer.review(analysis, verdict, context)
            if isinstance(reviewed, Verdict):
                rule, verdict = reviewer, reviewed
            elif isinstance(reviewed, Quiet):
                verdict.details.append(f"{reviewer.code}: {reviewed.reason}")
        built = _existing_with_prefix(analysis, verdict.index) if rule.code == "IX003" else None
        if built is not None:
            skips.append(_skip(stats, f"{rule.code}: an index that can work exists already, {built.name} {built}: "
                                      "no index can hold the parallel arrays as well"))
            continue
        proposals.append(_Proposal(rule, analysis, verdict))
    shared, unchosen = _share_indexes(proposals, context, chooser)
    findings += shared
    skips += unchosen
    namespaces = {stats.shape.ns for stats in shapes} | set(context.indexes)
    if context.change is not None:
        namespaces |= context.change.namespaces()
    _fold_growth(findings, shapes)
    for ns in sorted(namespaces):
        for rule in rules:
            for verdict in rule.check_collection(ns, context):
                findings.append(_collection_finding(rule, ns, verdict, context))
    _one_impact_unit(findings, context)
    findings.sort(key=lambda finding: (-finding.impact, finding.rule, finding.ns, finding.fingerprint))
    assign_groups(findings, related)
    return findings, skips


def _applying(rules: list[Rule], op: str, blocked: bool, known: dict[tuple[str, bool], list[Rule]]) -> list[Rule]:
    """The rules that check a shape of ``op``, in order: those that propose an index only when no reason blocks it
    (``known`` holds the lists worked out already: a workload has a handful of operations)."""
    applying = known.get((op, blocked))
    if applying is None:
        applying = known[(op, blocked)] = [rule for rule in rules if op in rule.applies_to and rule.checks_shapes
                                           and not (blocked and rule.proposes_index)]
    return applying


def _blocking_reason(analysis: ShapeAnalysis, context: RuleContext) -> str | None:
    """Why no index can be advised for this shape at all, whatever the rules say."""
    stats, shape, roles = analysis.stats, analysis.shape, analysis.roles
    if not shape.known:
        return f"shape unknown: {shape.unknown}"
    if shape.op not in QUERY_OPS:
        return f"{shape.op} {NO_QUERY}"
    executions = stats.count - stats.getmores
    not_work = time_not_work(stats.timing, executions, stats.docs_examined, stats.nreturned)
    if not_work is not None:
        return not_work
    if executions < context.settings.min_count:
        return f"too few executions ({executions} < --min-count {context.settings.min_count})"
    ad_hoc = ad_hoc_reason(stats.apps, executions, stats.first_seen, stats.last_seen)
    if ad_hoc is not None:
        return ad_hoc
    if stats.apps and bulk_share(stats.apps, stats.count) >= 0.9:
        return "bulk tools (mongorestore, mongodump, …) ran it: a one-off load or copy, not a query to index"
    if "_id" in roles.equality:
        return "equality on _id: the _id index serves it"
    if roles.leading_fields == 0:
        if roles.residual:
            why = "; ".join(f"{name}: {reason}" for name, reason in sorted(roles.residual.items()))
            return f"no predicate an index can use ({why})"
        if roles.has_or:
            return "an $or needs one index per branch: not advised yet"
        if roles.range:
            return "only negations, $exists or unanchored regexes, which cannot lead an index"
        return "no filter or sort for an index to serve"
    return None


def _served_by_plan(analysis: ShapeAnalysis) -> str | None:
    """When the log's own plan already uses an index that serves the shape: the reason there is nothing to add."""
    used = analysis.used_index
    if used is None or not serves(used, analysis.roles) or analysis.stats.blocking_sorts or analysis.plan_share < 0.5:
        return None
    ratio = analysis.docs_per_returned
    measured = f": {ratio:,.1f} documents examined per document returned" if ratio is not None else ""
    return f"served by the index its plan uses, {render_fields(used)}{measured}"


def _existing_with_prefix(analysis: ShapeAnalysis, key: KeyPattern | None) -> IndexSpec | None:
    """An existing index the planner may use that serves the shape as far as a reviewed proposal can (the fields it
    leaves out are filtered after the fetch whatever the index), so ``served_by`` did not see it."""
    if not key:
        return None
    kept, roles = {name for name, _ in key}, analysis.roles
    reduced = replace(roles, equality=tuple(name for name in roles.equality if name in kept),
                      sort=tuple(pair for pair in roles.sort if pair[0] in kept),
                      range=tuple(name for name in roles.range if name in kept))
    existing = analysis.existing or []
    return next((index for index in existing if analysis.plannable(index, existing) and serves(index.key, reduced)),
                None)


def _served_reason(index: IndexSpec, analysis: ShapeAnalysis) -> str:
    if index.built_at is not None:
        return built_during_log(index, analysis)
    reason = f"already served by index {index.name} {index}"
    if index.inferred:
        return reason + f" (the log shows it: {index.origin})"
    if analysis.collection_scan:
        reason += " (yet the log shows collection scans: was it built after these operations?)"
    return reason


def built_during_log(index: IndexSpec, analysis: ShapeAnalysis) -> str:
    """An index the log shows built while it was written serves the shape: what it did before is history."""
    built = index.built_at
    assert built is not None
    when = f"{built:%H:%M} ({built:%Y-%m-%d})"
    stats = analysis.stats
    if stats.last_seen is not None and stats.last_seen < built:
        return (f"built during the log: {index.name} {index} built at {when}, after this shape's last run; it serves "
                "the shape from then on")
    used = any(index.key in parse_plan_summary(plan).indexes for plan in stats.plans)
    since = "since then the shape uses it" if used else "it serves the shape from then on"
    return f"built during the log: {index.name} {index} built at {when}; {since}"


def equality_orders(shapes: list[ShapeStats], context: RuleContext) -> dict:
    """Per collection, order equality fields by how many executions use them, then by selectivity, then by name:
    fields most queries share come first, so that one index serves several shapes."""
    popularity: dict[str, Counter[str]] = defaultdict(Counter)
    for stats in shapes:
        if stats.shape.known:
            for name in context.roles(stats).equality:
                popularity[stats.shape.ns][name] += stats.count
    orders = {}
    for ns, counts in popularity.items():
        sample = context.samples.get(ns)

        def order(name: str, counts: Counter[str] = counts, sample=sample) -> tuple:  # noqa: ANN001
            selectivity = sample.selectivity(name) if sample is not None else None
            return (-counts[name], selectivity if selectivity is not None else 1.0, name)

        orders[ns] = order
    return orders


def _share_indexes(proposals: list[_Proposal], context: RuleContext,
                   chooser: IndexChooser | None) -> tuple[list[Finding], list[Skip]]:
    by_ns: dict[str, list[_Proposal]] = defaultdict(list)
    for proposal in proposals:
        by_ns[proposal.analysis.ns].append(proposal)
    findings: list[Finding] = []
    skips: list[Skip] = []
    for ns, group in by_ns.items():
        key_index = SharedKeyIndex()
        shared = _shared_keys(group, key_index)
        if chooser is None:
            savings, floor = _per_finding_savings(group, shared, context)
            given = Counter(key for key, _ in shared if key is not None)  # one shape count per suggested index
            for proposal, (key, _) in zip(group, shared):
                saving = savings.get(key) if key is not None else None
                if saving is not None and saving < floor:
                    skips.append(_skip(proposal.analysis.stats, f"{proposal.rule.code}: below the floor: "
                                       f"{render_fields(key)} would save {human_seconds(saving)} of server time per "
                                       f"hour, under --min-saving {floor:g}"))  # type: ignore[arg-type]
                    continue
                finding = _shared_finding(proposal, key, given[key] - 1 if key is not None else 0, ns)
                if finding.index is not None and saving is not None:
                    finding.index.saving_s_per_hour = round(saving, 2)
                    finding.details.append(f"the index saves about {human_seconds(saving)} of server time per hour "
                                           "of the log (by the log: the durations of the shapes it serves, times "
                                           "the share of their work it removes)")
                findings.append(finding)
            continue
        asking = [(proposal, key) for proposal, (key, _) in zip(group, shared) if key is not None]
        findings += [_finding(proposal.rule, proposal.analysis, proposal.verdict, None)
                     for proposal, (key, _) in zip(group, shared) if key is None]
        requests = [IndexRequest(proposal.rule.code, proposal.analysis, key) for proposal, key in asking]
        for (proposal, _), choice in zip(asking, chooser.choose(ns, requests, context, key_index)):
            if choice.key is None and choice.reason:
                skips.append(_skip(proposal.analysis.stats, choice.reason))
                continue
            proposal.verdict.details += choice.details
            finding = _finding(proposal.rule, proposal.analysis, proposal.verdict, choice.key)
            if finding.index is not None:
                finding.index.saving_s_per_hour = choice.saving
            findings.append(finding)
    return findings, skips


def _per_finding_savings(group: list[_Proposal], shared: list[tuple[KeyPattern | None, int]],
                         context: RuleContext) -> tuple[dict[KeyPattern, float], float]:
    """Per-finding advice's value model (``selection.value`` for the workload's sets): per proposed key, the server
    seconds per hour its shapes' durations give times the share of their work it removes by the log (a key and a
    document per document returned); and the floor, which needs a rate (a log of a minute or more) and durations."""
    from idxadvisor.rules.ix006_unused_index import span_ms

    hours = context.derived("span_ms", span_ms) / 3_600_000
    rate = hours if hours * 60 >= 1 else None
    savings: dict[KeyPattern, float] = {}
    timed = False
    for proposal, (key, _) in zip(group, shared):
        stats = proposal.analysis.stats
        executions = max(stats.executions, 1)
        if key is None or not (stats.keys_measured or stats.docs_measured):
            continue
        today = (stats.keys_examined + stats.docs_examined) / executions
        after = 2 * stats.nreturned / executions
        share = max(0.0, 1 - after / today) if today else 0.0
        timed = timed or stats.duration.total > 0
        savings[key] = savings.get(key, 0.0) + stats.duration.total / 1000 / (rate or 1.0) * share
    floor = context.settings.min_saving if timed and rate is not None else 0.0
    return (savings if timed else {}), floor


def _shared_finding(proposal: _Proposal, key: KeyPattern | None, others: int, ns: str) -> Finding:
    if others > 0:
        proposal.verdict.details.append(f"the index serves {others + 1} shapes of {ns}, this one included")
    return _finding(proposal.rule, proposal.analysis, proposal.verdict, key)


def _shared_keys(group: list[_Proposal], index: SharedKeyIndex) -> list[tuple[KeyPattern | None, int]]:
    """Per proposal of one collection, the proposed index that serves the most of them and how many others it serves
    (a reviewed key is the only one that can work: its own). ``index``, which holds no key yet, is given the
    proposed keys and keeps their look-ups for the index selection."""
    keys = list(dict.fromkeys(p.verdict.index for p in group if p.verdict.index))
    order = {key: position for position, key in enumerate(keys)}
    index.add(keys)
    signatures = [serving_signature(proposal.analysis.roles) for proposal in group]
    alike = Counter(signatures)
    serving: dict[tuple, list[KeyPattern]] = {}
    for signature, proposal in zip(signatures, group):
        if signature not in serving:  # shapes alike share one look-up
            serving[signature] = index.serving(proposal.analysis.roles, signature)
    served: Counter[KeyPattern] = Counter()
    for signature, keys_serving in serving.items():
        for key in keys_serving:
            served[key] += alike[signature]

    # the same choice for every shape: most shapes served, then the longest key, then the candidate of the most
    # important shape (proposals come in report order); ranked once per key, not once per shape it serves
    rank = {key: (count, len(key), -order.get(key, len(order))) for key, count in served.items()}
    best_for = {signature: max(keys_serving, key=rank.__getitem__) for signature, keys_serving in serving.items()
                if keys_serving}
    result: list[tuple[KeyPattern | None, int]] = []
    for proposal, signature in zip(group, signatures):
        own = proposal.verdict.index
        if own is None or proposal.rule.code == "IX003":  # a reviewed key is the only one that can work
            result.append((own, 0))
            continue
        best = best_for.get(signature, own)
        result.append((best, served[best] - 1))
    return result


def _finding(rule: Rule, analysis: ShapeAnalysis, verdict: Verdict, key: KeyPattern | None) -> Finding:
    index = None
    if key:
        spec = IndexSpec(key=key)
        replaced = replaceable(analysis.existing or [], key)
        if replaced is not None:
            verdict.details.append(f"it makes {replaced.name} redundant: drop that index once this one is built")
        index = IndexProposal(ns=analysis.ns, key=list(key), command=spec.create_index_command(analysis.ns),
                              replaces=replaced.name if replaced is not None else None)
    return Finding(rule=rule.code, name=rule.name, severity=verdict.severity or rule.severity,  # type: ignore[arg-type]
                   fingerprint=analysis.shape.fingerprint, ns=analysis.ns, message=verdict.message,
                   impact=round(_impact(analysis, verdict.impact), 1), impact_unit=_impact_unit(analysis),
                   details=verdict.details, index=index, location=verdict.location)


def _impact(analysis: ShapeAnalysis, documents: float | None = None) -> float:
    """Wasted documents (the rule's own count, or the standard formula) times the average document size."""
    if documents is None:
        stats = analysis.stats
        documents = max(0, max(stats.docs_examined, stats.keys_examined) - stats.nreturned)
    size = analysis.sample.average_document_size if analysis.sample is not None else None
    return float(documents * (size or 1))


def _fold_growth(findings: list[Finding], shapes: list[ShapeStats]) -> None:
    """A shape whose work per execution grows steadily (``trend``): its most important finding says so, and every
    finding of the shape counts its executions at today's cost (the latest third's), since that is what they cost
    now. A duration that grows while the documents examined, which the impact counts, do not is said, not counted."""
    by_shape: dict[str, list[Finding]] = defaultdict(list)
    for finding in findings:
        by_shape[finding.fingerprint].append(finding)
    for stats in shapes:
        found = by_shape.get(stats.shape.fingerprint)
        growth = growth_of(stats) if found else None
        if growth is None:
            continue
        counted = growth.metric == DOCUMENTS or not stats.docs_measured
        detail = growth.describe()
        if counted and growth.current_rate > 1:
            detail += f"; its impact counts every execution at that latest cost (x{growth.current_rate:,.1f})"
            for finding in found:  # type: ignore[union-attr]
                finding.impact = round(finding.impact * growth.current_rate, 1)
        max(found, key=lambda finding: finding.impact).details.append(detail)  # type: ignore[arg-type]


def _one_impact_unit(findings: list[Finding], context: RuleContext) -> None:
    """Bytes rank findings only when every collection with a finding has a known document size; otherwise every
    impact goes back to documents, so that the ranking compares like with like."""
    if len({finding.impact_unit for finding in findings if finding.impact}) < 2:
        return
    for finding in findings:
        if finding.impact_unit == "bytes":
            size = context.samples[finding.ns].average_document_size or 1
            finding.impact, finding.impact_unit = round(finding.impact / size, 1), "documents"


def _impact_unit(analysis: ShapeAnalysis) -> str:
    sample = analysis.sample
    return "bytes" if sample is not None and sample.average_document_size else "documents"


def _unhide_finding(rule: Rule, analysis: ShapeAnalysis, verdict: Verdict, hidden: IndexSpec) -> Finding:
    """The index this shape needs exists but is hidden: unhiding it is the fix, not building another."""
    verdict.details.append(f"the hidden index {hidden.name} {hidden} serves this shape: unhide it rather than "
                           "build another (hiding it is how its removal is tested, and these queries paid for it)")
    finding = _finding(rule, analysis, verdict, None)
    finding.index = IndexProposal(ns=analysis.ns, key=list(hidden.key), name=hidden.name,
                                  command=hidden.unhide_index_command(analysis.ns))
    return finding


def _collection_finding(rule: Rule, ns: str, verdict: Verdict, context: RuleContext) -> Finding:
    """A finding about an index (IX003: it can break writes; CI001, CI003: a change to it): the command drops it,
    unless the rule gives another (IX005, IX006 hide it first: whether anything needed it is learnt by watching), or
    proposes an index instead of it (``verdict.index``)."""
    existing = verdict.existing_index
    subject = existing.name if existing else verdict.subject or ""
    fingerprint = hashlib.sha256(f"{ns} {subject}".encode()).hexdigest()[:16]
    index = None
    if verdict.index:
        index = IndexProposal(ns=ns, key=list(verdict.index), command=IndexSpec(key=verdict.index)
                              .create_index_command(ns), replaces=existing.name if existing is not None else None)
    elif existing is not None:
        index = IndexProposal(ns=ns, key=list(existing.key), command=verdict.command or existing.drop_index_command(ns),
                              name=existing.name)
    location = verdict.location
    if location is None and context.change is not None:
        location = context.change.location_of(ns, existing)
    return Finding(rule=rule.code, name=rule.name, severity=verdict.severity or rule.severity,  # type: ignore[arg-type]
                   fingerprint=fingerprint, ns=ns, message=verdict.message, impact=0.0, details=verdict.details,
                   index=index, location=location)


def _skip(stats: ShapeStats, reason: str) -> Skip:
    return Skip.of(stats.shape.fingerprint, stats.shape.ns, stats.shape.text, reason)
