"""The report every output format renders: one object, a public JSON contract (DESIGN.md, "JSON report").

Bump ``SCHEMA_VERSION`` only for an incompatible change, and record it in the CHANGELOG; adding a field is
compatible. Literal query values appear only in ``Finding.evidence.query`` and ``ShapeReport.example``, and only when
the user asked for them (``--show-values``).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from operator import itemgetter
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = 1
Severity = Literal["info", "warning", "error"]
SEVERITY_ORDER: dict[str, int] = {"info": 0, "warning": 1, "error": 2}


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")

    def model_post_init(self, context: Any, /) -> None:
        # A model with every field given shares one set of field names with the others of its class: a report holds
        # a few models per shape, and a set of each's own (2 KB for a shape's 40 fields) was a third of its memory.
        # Pydantic only adds to that set the names of fields assigned, which it already holds; a copy gets its own.
        every = _every_field(type(self))
        if len(self.__pydantic_fields_set__) == len(every):
            _set(self, "__pydantic_fields_set__", every)


class ToolInfo(_Model):
    name: str = "idxadvisor"
    version: str


class ProblemReport(_Model):
    reason: str
    line: int | None = None
    excerpt: str | None = None


class InputReport(_Model):
    path: str
    format: str
    lines: int = 0
    entries: int = 0
    problems: int = 0
    truncated: int = 0
    operations: int = 0
    paired: int = 0
    bytes: int = 0
    versions: list[str] = Field(default_factory=list)
    first_seen: datetime | None = None
    last_seen: datetime | None = None
    error: str | None = None
    problem_examples: list[ProblemReport] = Field(default_factory=list)


class DurationReport(_Model):
    total: float
    mean: float
    p50: float
    p95: float
    p99: float
    max: float

    @classmethod
    def of(cls, total: float, mean: float, p50: float, p95: float, p99: float, maximum: float) -> DurationReport:
        """A shape's durations from a digest's numbers (floats, as validation makes them)."""
        return _built(cls, {"total": float(total), "mean": float(mean), "p50": float(p50), "p95": float(p95),
                            "p99": float(p99), "max": float(maximum)})


class TimelinePoint(_Model):
    """One bucket of a shape's timeline (``timeline_minutes`` wide). ``p95_ms`` is nearest-rank over coarse bins:
    at most 12.5 % above the true value, never above ``max_ms``."""

    start: datetime
    count: int
    total_ms: float
    max_ms: float = 0.0
    p95_ms: float = 0.0
    docs_examined: int = 0
    keys_examined: int = 0

    @classmethod
    def of(cls, start: datetime, count: int, total_ms: float, max_ms: float, p95_ms: float, docs_examined: int,
           keys_examined: int) -> TimelinePoint:
        """A point from a digest's own numbers, already of the right types (a report's timelines are tens of
        thousands of points)."""
        return _built(cls, {"start": start, "count": count, "total_ms": total_ms, "max_ms": max_ms, "p95_ms": p95_ms,
                            "docs_examined": docs_examined, "keys_examined": keys_examined})

    @classmethod
    def points(cls, rows: Iterable[tuple[datetime, int, float, float, float, int, int]]) -> list[TimelinePoint]:
        """``of`` each row (start, count, total_ms, max_ms, p95_ms, docs_examined, keys_examined), in one loop."""
        every = _every_field(cls)
        points = []
        for start, count, total_ms, max_ms, p95_ms, docs_examined, keys_examined in rows:
            point = _new_model(cls)
            _set(point, "__dict__", {"start": start, "count": count, "total_ms": total_ms, "max_ms": max_ms,
                                     "p95_ms": p95_ms, "docs_examined": docs_examined,
                                     "keys_examined": keys_examined})
            _set_fields_set(point, every)
            _set_extra(point, None)
            _set_private(point, None)
            points.append(point)
        return points


_new_model = BaseModel.__new__
_set = object.__setattr__
# the slots of every model, set through their descriptors: a third faster than by name, for tens of thousands of points
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__
_Built = TypeVar("_Built", bound=BaseModel)


def _built(model: type[_Built], values: dict[str, Any]) -> _Built:
    """A model of ``values``, every field given and already of its type: what ``model_construct`` builds, in a quarter
    of its time."""
    built = _new_model(model)
    _set(built, "__dict__", values)
    _set_fields_set(built, _every_field(model))
    _set_extra(built, None)
    _set_private(built, None)
    return built


_EVERY_FIELD: dict[type[BaseModel], set[str]] = {}


def _every_field(model: type[BaseModel]) -> set[str]:
    """The one set of field names that the models of ``model`` with every field given share."""
    every = _EVERY_FIELD.get(model)
    if every is None:
        every = _EVERY_FIELD[model] = set(model.model_fields)
    return every


class RunReport(_Model):
    """One run of an aggregation: when it started and how long it took (runs that overlap pile up)."""

    start: datetime
    duration_ms: float

    @classmethod
    def of(cls, start: datetime, duration_ms: float) -> RunReport:
        """A run from a digest's own numbers (an aggregation keeps up to 1,000)."""
        return _built(cls, {"start": start, "duration_ms": duration_ms})

    @classmethod
    def runs(cls, rows: Iterable[tuple[datetime, float]]) -> list[RunReport]:
        """``of`` each (start, duration_ms), in one loop."""
        every = _every_field(cls)
        runs = []
        for start, duration_ms in rows:
            run = _new_model(cls)
            _set(run, "__dict__", {"start": start, "duration_ms": duration_ms})
            _set_fields_set(run, every)
            _set_extra(run, None)
            _set_private(run, None)
            runs.append(run)
        return runs


class PlanCostReport(_Model):
    """What the executions with one plan summary cost, to compare the plans of a shape."""

    count: int
    mean_ms: float
    keys_examined: int
    docs_examined: int
    nreturned: int

    @classmethod
    def of(cls, count: int, mean_ms: float, keys_examined: int, docs_examined: int, nreturned: int) -> PlanCostReport:
        """A plan's cost from a digest's numbers, validated only if one is not of its field's type already (a counter
        a server gave as a double)."""
        values: dict[str, Any] = {"count": count, "mean_ms": mean_ms, "keys_examined": keys_examined,
                                  "docs_examined": docs_examined, "nreturned": nreturned}
        return _built_if(cls, values, type(mean_ms) is float and {type(count), type(keys_examined),
                                                                    type(docs_examined), type(nreturned)} == _INT)


def _built_if(model: type[_Built], values: dict[str, Any], plain: bool) -> _Built:
    """``values`` as a model: built without validation when ``plain`` (every field given, each value of its field's
    type already, as the caller checked: validation would change nothing), validated otherwise."""
    return _built(model, values) if plain else model(**values)


_INT = {int}
_FLOAT_OR_NONE_TYPES = (float, type(None))
_UNITS = ("ms", "count", "bytes")
_STR = {str}
_STR_OR_NONE = ({str}, {type(None)}, {str, type(None)})


class BurstReport(_Model):
    """The worst burst of a point lookup: lookups of the shape from one connection (or client address) back to back."""

    size: int
    start: datetime
    end: datetime
    connection: str
    app: str | None = None
    bursts: int  # bursts of two lookups or more in the log


class TimeComponentReport(_Model):
    """One component of where a shape's time went (``shapes.timing.COMPONENTS``), over the executions that logged
    it: a component no execution logged is absent, never 0."""

    name: str  # working_ms, queued_ms, ... write_conflicts, bytes_read
    label: str
    unit: Literal["ms", "count", "bytes"]
    executions: int  # executions that logged it
    total: float
    mean: float  # per execution that logged it
    p95: float | None = None  # times only
    share: float | None = None  # times only: its part of those executions' duration

    @classmethod
    def of(cls, name: str, label: str, unit: str, executions: int, total: float, mean: float, p95: float | None,
           share: float | None) -> TimeComponentReport:
        """A component from a breakdown's numbers: validated only if one is not of its field's type already (a count
        summed as a float, a total that is an int)."""
        values = {"name": name, "label": label, "unit": unit, "executions": executions, "total": total, "mean": mean,
                  "p95": p95, "share": share}
        plain = (type(executions) is int and type(total) is float and type(mean) is float
                 and type(p95) in _FLOAT_OR_NONE_TYPES and type(share) in _FLOAT_OR_NONE_TYPES and unit in _UNITS
                 and type(name) is str and type(label) is str)
        return _built_if(cls, values, plain)


class TimeBreakdownReport(_Model):
    """Where a shape's time went, as the server logged it (see docs/time-breakdown.md)."""

    executions: int  # executions that logged any component
    waited_share: float | None = None  # the part of the duration spent not working, where the log says it
    components: list[TimeComponentReport] = Field(default_factory=list)

    @classmethod
    def of(cls, executions: int, waited_share: float | None,
           components: list[TimeComponentReport]) -> TimeBreakdownReport:
        """A shape's breakdown from its numbers and its components' models (``TimeComponentReport.of``)."""
        values = {"executions": executions, "waited_share": waited_share, "components": components}
        return _built_if(cls, values, type(executions) is int and type(waited_share) in _FLOAT_OR_NONE_TYPES)


class ShapeReport(_Model):
    fingerprint: str
    ns: str
    op: str
    shape: str
    count: int
    getmores: int = 0
    duration_ms: DurationReport
    duration_histogram: list[tuple[float, int]] = Field(default_factory=list)  # (upper bound ms, executions)
    keys_examined: int
    docs_examined: int
    nreturned: int
    keys_examined_per_returned: float | None = None
    docs_examined_per_returned: float | None = None
    plans: dict[str, int] = Field(default_factory=dict)
    blocking_sorts: int = 0
    used_disk: int = 0
    errors: int = 0
    truncated: int = 0
    internal: bool = False
    max_in_length: int = 0
    apps: dict[str, int] = Field(default_factory=dict)
    connections: int = 0
    server_hashes: dict[str, list[str]] = Field(default_factory=dict)
    first_seen: datetime | None = None
    last_seen: datetime | None = None
    timeline_minutes: int = 1
    timeline: list[TimelinePoint] = Field(default_factory=list)
    runs: list[RunReport] = Field(default_factory=list)  # aggregations: the latest runs (at most 1,000)
    num_yields: int = 0
    response_bytes: int = 0  # total of reslen/responseLength where logged
    response_bytes_per_returned: float | None = None
    replanned: int = 0
    skip_max: int = 0
    skip_mean: float | None = None  # over the executions that skip
    plan_costs: dict[str, PlanCostReport] = Field(default_factory=dict)  # per plan summary
    plan_switches: int = 0  # plan changes from one execution to the next, in time order
    burst: BurstReport | None = None  # point lookups: the worst burst from one connection
    time_breakdown: TimeBreakdownReport | None = None  # where the time went, when the log says
    example: dict[str, Any] | None = None

    @classmethod
    def of(cls, values: dict[str, Any]) -> ShapeReport:
        """A shape's report from ``shape_report``'s values (its models built already, its dicts and lists made of a
        digest's own names and counts), validated only where validation could change one: a number from a log or a
        server not of its field's type (a counter given as a double), a server hash that is not a string, or a
        command shown as an example. A report has one per shape."""
        return _built_if(cls, values, values["example"] is None and len(values) == len(_every_field(cls))
                         and _plain_shape_values(values))


_SHAPE_INTS = itemgetter("count", "getmores", "keys_examined", "docs_examined", "nreturned", "blocking_sorts",
                         "used_disk", "errors", "truncated", "max_in_length", "connections", "timeline_minutes",
                         "num_yields", "response_bytes", "replanned", "skip_max", "plan_switches")
_SHAPE_OPTIONAL_FLOATS = itemgetter("keys_examined_per_returned", "docs_examined_per_returned",
                                    "response_bytes_per_returned", "skip_mean")
_FLOAT_OR_NONE = ({float}, {type(None)}, {float, type(None)})
_MOMENTS = itemgetter("first_seen", "last_seen")


def _plain_shape_values(values: dict[str, Any]) -> bool:
    """Whether validating a shape report's values would leave them as they are (``ShapeReport.of``)."""
    if set(map(type, _SHAPE_INTS(values))) != _INT or set(map(type, _SHAPE_OPTIONAL_FLOATS(values))) not in \
            _FLOAT_OR_NONE:
        return False
    if not all(moment is None or type(moment) is datetime for moment in _MOMENTS(values)):
        return False
    for _, count in values["duration_histogram"]:
        if type(count) is not int:
            return False
    for hashes in values["server_hashes"].values():
        for value in hashes:
            if type(value) is not str:
                return False
    return True


class IndexProposal(_Model):
    ns: str
    key: list[tuple[str, int | str]]
    command: str
    name: str | None = None
    replaces: str | None = None
    saving_s_per_hour: float | None = None  # server seconds per hour of log the index saves (index selection)


class CalibrationRow(_Model):
    """One counter of one plan (today's, or the candidate's) as the server measured it on the scratch copy and as
    the estimator predicted it on the same sample and indexes."""

    plan: Literal["before", "after"]
    counter: str
    server: int | float | str | None = None
    estimator: int | float | str | None = None
    agree: bool


class Evidence(_Model):
    evaluator: Literal["estimator", "server"]
    query: dict[str, Any] | None = None
    before: dict[str, Any]
    after: dict[str, Any]
    notes: list[str] = Field(default_factory=list)
    estimate: Evidence | None = None  # with a server's evidence: what the estimator predicted beside it
    calibration: list[CalibrationRow] = Field(default_factory=list)


class SourceLocation(_Model):
    """Where in a file a finding points (1-based line and column): an index file entry or a migration-script call."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str
    line: int | None = None
    column: int | None = None

    def __str__(self) -> str:
        return ":".join(str(part) for part in (self.path, self.line, self.column) if part is not None)


FindingStatus = Literal["new", "existing", "accepted"]


class Finding(_Model):
    rule: str
    name: str
    severity: Severity
    fingerprint: str
    ns: str
    message: str
    impact: float = 0.0
    impact_unit: Literal["documents", "bytes"] = "documents"  # bytes when a data sample gave the document size
    details: list[str] = Field(default_factory=list)
    index: IndexProposal | None = None
    evidence: Evidence | None = None
    location: SourceLocation | None = None  # check: the index file entry or script call the finding concerns
    # check: "new" (the change brings it), "existing" (the baseline indexes have it too), "accepted" (in --baseline);
    # only findings without a status or "new" ones count towards the exit code
    status: FindingStatus | None = None

    @property
    def counts(self) -> bool:
        return self.status is None or self.status == "new"
    group: str | None = None  # the id of its FindingGroup: the findings that share its root cause


class FindingGroup(_Model):
    """Findings with one root cause (one shape, or one index several shapes need): ``findings`` index
    ``Report.findings``."""

    id: str
    title: str
    ns: str
    fingerprint: str | None = None
    severity: Severity
    impact: float = 0.0
    impact_unit: Literal["documents", "bytes"] = "documents"
    findings: list[int] = Field(default_factory=list)


class TrafficReport(_Model):
    """One kind of traffic by application name (``appName``): applications, interactive tools or bulk tools."""

    kind: Literal["application", "interactive tool", "bulk tool"]
    operations: int
    apps: dict[str, int] = Field(default_factory=dict)  # operations per application name (none: no appName)


class InventoryIndexReport(_Model):
    """An index of the inventory the log itself gives (without --indexes or --uri), and where the log showed it."""

    ns: str
    name: str
    key: list[tuple[str, int | str]]
    sources: list[str]
    built_at: datetime | None = None  # built while the log was written (the analysis judges shapes from then on)
    dropped: bool = False  # dropped during the log, and not created again
    plan_shapes: int = 0  # shapes whose plans use it


class SuggestedIndex(_Model):
    """One index to create, and every finding that proposes it (findings are per shape; indexes are shared)."""

    ns: str
    key: list[tuple[str, int | str]]
    command: str
    replaces: str | None = None
    rules: list[str]
    fingerprints: list[str]
    impact: float
    impact_unit: Literal["documents", "bytes"] = "documents"
    severity: Severity
    saving_s_per_hour: float | None = None  # server seconds per hour of log it saves (index selection)
    shapes: int | None = None  # shapes the index serves in the workload's set (None: the findings' shapes)

    @property
    def shape_count(self) -> int:
        """The one number of shapes every part of a report gives for this index."""
        return self.shapes if self.shapes is not None else len(set(self.fingerprints))


class SetIndex(_Model):
    """One index of a collection's proposed set: to create (``new``), to keep, or to hide first and drop later."""

    name: str
    key: list[tuple[str, int | str]]
    status: Literal["new", "kept", "hide"]
    command: str | None = None  # new: createIndex; hide: hideIndex (then drop_command once nothing slowed down)
    drop_command: str | None = None
    reason: str
    shapes: list[str] = Field(default_factory=list)  # fingerprints of the shapes it serves in the set
    rules: list[str] = Field(default_factory=list)  # new: the rules whose findings asked for it
    work_saved_per_hour: float | None = None  # new: keys plus documents examined it saves, per hour of the log
    saving_s_per_hour: float | None = None  # new: server seconds it saves per hour of the log (durations x work cut)
    writes_per_hour: float | None = None  # index keys written per hour (inserts, updates of its fields, deletes)


class SetShape(_Model):
    """A shape of the collection under today's indexes and under the proposed set: keys plus documents examined per
    execution (``model`` says how they were found), and the index that serves it in the set."""

    fingerprint: str
    shape: str
    executions: int
    requested: bool  # a finding asked for an index for it
    index: str | None = None  # the index that serves it in the set (None: a collection scan)
    before: float | None = None
    after: float | None = None
    model: Literal["estimator", "log"]
    evidence: Evidence | None = None
    note: str | None = None

    @classmethod
    def of(cls, fingerprint: str, shape: str, executions: int, requested: bool, index: str | None,
           before: float | None, after: float | None, model: str, evidence: Evidence | None,
           note: str | None) -> SetShape:
        """A shape's row, validated only if a value is not of its field's type already (a set has one per shape)."""
        values: dict[str, Any] = {"fingerprint": fingerprint, "shape": shape, "executions": executions,
                                  "requested": requested, "index": index, "before": before, "after": after,
                                  "model": model, "evidence": evidence, "note": note}
        plain = (type(executions) is int and type(requested) is bool and {type(fingerprint), type(shape)} == _STR
                 and {type(index), type(note)} in _STR_OR_NONE and {type(before), type(after)} in _FLOAT_OR_NONE
                 and model in ("estimator", "log") and (evidence is None or type(evidence) is Evidence))
        return _built_if(cls, values, plain)


class SetTotals(_Model):
    """The set's effect, per hour of the log's span (over the whole log when it spans no time)."""

    per: Literal["hour", "log"] = "hour"
    span_hours: float | None = None
    work_before: float = 0.0  # keys plus documents examined by the collection's query shapes
    work_after: float = 0.0
    work_saved: float = 0.0
    index_writes_added: float = 0.0  # index keys the new indexes write
    index_writes_removed: float = 0.0  # index keys the indexes to drop write today
    write_cost_factor: float = 0.0
    net_saved: float = 0.0  # work saved less the factor times the index writes added
    per_finding_indexes: int = 0  # what per-finding advice suggests for the collection, for comparison
    per_finding_work_saved: float = 0.0
    per_finding_index_writes: float = 0.0
    seconds_before: float = 0.0  # server seconds the collection's query shapes take (per hour or per log)
    seconds_saved: float = 0.0  # server seconds the new indexes save
    min_saving: float = 0.0  # the floor each new index had to clear (--min-saving), seconds per hour


class LeftOut(_Model):
    """A candidate index the selection left out, and why (shown with --verbose)."""

    key: list[tuple[str, int | str]]
    reason: str


class WriteRates(_Model):
    """Documents a collection's writes touch per hour, and where the rates come from."""

    source: Literal["log", "server"]
    inserted: float = 0.0
    updated: float = 0.0
    deleted: float = 0.0
    note: str | None = None


class IndexSet(_Model):
    """The best index set for one collection's workload: what to create, keep and hide, how it serves each shape,
    what it saves and what it costs the writes (``--index-selection workload``)."""

    ns: str
    model: Literal["estimator", "log", "estimator and log"]  # how the cost of a set was found
    search: Literal["exact", "greedy"]
    search_note: str
    candidates: int
    budget: int
    indexes: list[SetIndex] = Field(default_factory=list)
    shapes: list[SetShape] = Field(default_factory=list)
    writes: WriteRates
    totals: SetTotals
    notes: list[str] = Field(default_factory=list)
    left_out: list[LeftOut] = Field(default_factory=list)


class Skip(_Model):
    """A shape with no suggestion, and why (shown with --verbose)."""

    fingerprint: str
    ns: str
    shape: str
    reason: str

    @classmethod
    def of(cls, fingerprint: str, ns: str, shape: str, reason: str) -> Skip:
        """A skip, validated only if a value is not a string (a report has one per shape without a finding)."""
        values = {"fingerprint": fingerprint, "ns": ns, "shape": shape, "reason": reason}
        return _built_if(cls, values, type(fingerprint) is str and type(ns) is str and type(shape) is str
                         and type(reason) is str)


class Summary(_Model):
    inputs: int
    lines: int
    entries: int
    problems: int
    truncated: int
    operations: int
    shapes: int
    shapes_shown: int
    first_seen: datetime | None = None
    last_seen: datetime | None = None
    versions: list[str] = Field(default_factory=list)
    excluded: dict[str, int] = Field(default_factory=dict)


class SampleReport(_Model):
    """A ``--data`` sample as read: documents kept, documents in the file, and documents that could not be read."""

    ns: str
    path: str
    documents: int
    documents_seen: int
    problems: int = 0


class CalibrationSummary(_Model):
    """How often the estimator's counters matched the server's, over every replayed finding."""

    findings: int = 0
    counters: int = 0
    agreeing: int = 0
    disagreements: list[str] = Field(default_factory=list)  # "IX001 shop.orders after totalKeysExamined: 12 vs 15"


class ScratchReport(_Model):
    """The scratch database a replay wrote to, and what it held; ``dropped`` says it is gone."""

    server: str
    database: str
    collections: int = 0
    documents: int = 0
    indexes: int = 0
    problems: list[str] = Field(default_factory=list)
    dropped: bool = False
    stopped: str | None = None  # why the replay ended early: "interrupted", "terminated", or a server error


class ServerReport(_Model):
    """The live server read (``--uri``): its version, the databases read, and what it would not give."""

    server: str
    version: str | None = None
    databases: list[str] = Field(default_factory=list)
    profile_documents: int = 0
    query_stats: bool = False
    missing: list[str] = Field(default_factory=list)
    scratch: ScratchReport | None = None
    calibration: CalibrationSummary | None = None
class IndexChangeReport(_Model):
    """One change of the index set ``check`` judges: an index created, dropped, hidden or unhidden, or one the server
    would refuse to create (then left out of the proposed set; ``key`` is empty when its specification is invalid)."""

    ns: str
    action: Literal["created", "dropped", "hidden", "unhidden", "refused"]
    name: str
    key: list[tuple[str, int | str]]
    location: SourceLocation | None = None


class GateReport(_Model):
    """The verdict of ``idxadvisor check``: the change it judged, and which findings count towards the exit code."""

    passed: bool
    fail_on: str
    counted: int  # findings that count (new, or every finding without --baseline-indexes) at or above fail_on
    indexes: list[str]
    baseline_indexes: str | None = None
    baseline: str | None = None
    changes: list[IndexChangeReport] = Field(default_factory=list)
    new: int = 0
    existing: int = 0
    accepted: int = 0
    resolved: list[Finding] = Field(default_factory=list)  # findings of the baseline indexes the change makes go away
    notes: list[str] = Field(default_factory=list)


class WorkloadUpdate(_Model):
    """``analyze --save-workload FILE`` on a FILE that exists: the inputs it added, and those it had counted already;
    on any FILE whose writing failed, why."""

    path: str
    added: list[str] = Field(default_factory=list)
    skipped: list[str] = Field(default_factory=list)  # one line each: the input, and why it was not read again
    error: str | None = None  # why the file could not be written (the report is written all the same)


class Report(_Model):
    schema_version: int = SCHEMA_VERSION
    tool: ToolInfo
    summary: Summary
    inputs: list[InputReport]
    shapes: list[ShapeReport]
    findings: list[Finding] = Field(default_factory=list)
    suggested_indexes: list[SuggestedIndex] = Field(default_factory=list)
    skipped: list[Skip] = Field(default_factory=list)
    samples: list[SampleReport] = Field(default_factory=list)
    # indexes of --indexes files that could not be read, each with its reason: the run went on without them
    indexes_left_out: list[str] = Field(default_factory=list)
    # files of a directory (or a pattern) that are no MongoDB log, profiler dump or explain output: not read
    inputs_skipped: list[str] = Field(default_factory=list)
    server: ServerReport | None = None
    gate: GateReport | None = None  # idxadvisor check only
    groups: list[FindingGroup] = Field(default_factory=list)
    workload: WorkloadUpdate | None = None  # analyze --save-workload on an existing file (the incremental mode)
    index_selection: Literal["workload", "per-finding"] | None = None  # None: a report made before there was a choice
    index_sets: list[IndexSet] = Field(default_factory=list)  # per collection with findings (workload selection)
    index_inventory: list[InventoryIndexReport] = Field(default_factory=list)  # without --indexes/--uri: the log's
    traffic: list[TrafficReport] = Field(default_factory=list)  # operations by kind of application

    def max_severity(self) -> str | None:
        """The worst severity among the findings that count (``check`` leaves out existing and accepted ones)."""
        counted = [finding.severity for finding in self.findings if finding.counts]
        if not counted:
            return None
        return max(counted, key=SEVERITY_ORDER.__getitem__)
