"""The rule framework: one class per rule, pure functions of a shape's statistics and its context.

A rule has a permanent ``code`` (two letters and three digits), a kebab-case ``name``, a default ``severity`` and a
docstring that is its user documentation, with the sections ``## What it does``, ``## Why is this bad?``,
``## Example`` and ``## Fix`` (and optionally ``## Options`` and ``## References``). Its first line is the summary.

``check`` returns a ``Verdict`` (the rule fires), a ``Quiet`` (it does not, and why: shown with ``--verbose``), or
None (the shape is not its kind). Rules never print, never do I/O, and never touch a server.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, TypeVar

from idxadvisor.config import Settings
from idxadvisor.indexes.candidates import Roles, candidate_key, roles_of, serves
from idxadvisor.indexes.change import IndexChange
from idxadvisor.indexes.model import IndexSpec, KeyPattern
from idxadvisor.indexes.plans import PlanSummary, parse_plan_summary
from idxadvisor.indexes.sampling import SampleStatistics
from idxadvisor.models.report import SourceLocation
from idxadvisor.shapes.digest import ShapeStats
from idxadvisor.shapes.shape import Branches, ElemMatch, Filter, QueryShape

REQUIRED_SECTIONS = ("## What it does", "## Why is this bad?", "## Example", "## Fix")
CODE_PATTERN = re.compile(r"^[A-Z]{2}\d{3}$")
NAME_PATTERN = re.compile(r"^[a-z]+(?:-[a-z]+)*$")
QUERY_OPS = frozenset({"find", "count", "distinct", "aggregate", "update", "delete", "findAndModify"})


@dataclass
class Verdict:
    """A rule fired. ``index`` is the key it proposes, if any; the engine may share one index between shapes."""

    message: str
    severity: str | None = None  # None: the rule's default
    details: list[str] = field(default_factory=list)
    index: KeyPattern | None = None
    existing_index: IndexSpec | None = None  # a finding about an index that exists already
    impact: float | None = None  # wasted documents, when the rule counts them its own way (None: the standard formula)
    location: SourceLocation | None = None  # check: the index file entry or script call it is about
    related: list[str] = field(default_factory=list)  # fingerprints of other shapes with the same root cause
    command: str | None = None  # the command that fixes a finding about an existing index (default: drop it)
    subject: str | None = None  # what a finding about no shape and no existing index is about (its fingerprint)


@dataclass
class Quiet:
    """A rule looked and stayed silent: why (shown with --verbose, asserted by tests). ``told`` puts the reason in the
    details of the shape's index finding too, where it explains that finding (AG001: the counts are ad hoc)."""

    reason: str
    told: bool = False


@dataclass
class ShapeAnalysis:
    """What every rule wants to know about one shape, worked out once."""

    stats: ShapeStats
    roles: Roles
    candidate: KeyPattern
    plan: PlanSummary | None
    plan_share: float
    existing: list[IndexSpec] | None  # None: no --indexes file names this namespace
    sample: SampleStatistics | None
    _field_classes: dict[str, set[str]] | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def shape(self) -> QueryShape:
        return self.stats.shape

    @property
    def ns(self) -> str:
        return self.stats.shape.ns

    @property
    def executions(self) -> int:
        """Commands run: getMores continue an execution rather than start one (their work is in its totals)."""
        return self.stats.executions

    @property
    def used_index(self) -> KeyPattern | None:
        return self.plan.indexes[0] if self.plan is not None and self.plan.indexes else None

    @property
    def docs_per_returned(self) -> float | None:
        """None when nothing was returned, or when the log does not show documents examined (2.2/2.4 text logs show
        only nscanned, ≤4.0 aggregations neither)."""
        return self.stats.per_returned(self.stats.docs_examined) if self.stats.docs_measured else None

    @property
    def keys_per_returned(self) -> float | None:
        return self.stats.per_returned(self.stats.keys_examined) if self.stats.keys_measured else None

    @property
    def examined_measured(self) -> bool:
        """The log shows what this shape examined (keys or documents) for at least some executions."""
        return bool(self.stats.docs_measured or self.stats.keys_measured)

    @property
    def wasted_per_execution(self) -> float:
        """Documents (or index keys, if more) examined beyond those returned, per execution."""
        examined = max(self.stats.docs_examined, self.stats.keys_examined)
        return max(0, examined - self.stats.nreturned) / self.executions

    @property
    def returns_nothing(self) -> bool:
        return bool(self.stats.measured) and self.stats.nreturned == 0

    def examination(self) -> str:
        """How much it reads for what it returns, in words a DBA can check against the log."""
        stats = self.stats
        if self.returns_nothing:
            per_execution = max(stats.docs_examined, stats.keys_examined) / self.executions
            return f"examines {per_execution:,.0f} documents per execution and returns nothing"
        ratio, what = self.docs_per_returned, "documents"
        if ratio is None and self.keys_per_returned is not None:  # 2.2/2.4: nscanned only
            ratio, what = self.keys_per_returned, "documents or keys (nscanned)"
        return (f"examines {ratio or 0:,.0f} {what} per document returned "
                f"({self.wasted_per_execution:,.0f} wasted per execution)")

    def fields_with(self, *classes: str) -> list[str]:
        """``fields_with`` of the shape, its filter read once for all the rules that ask."""
        if self._field_classes is None:
            self._field_classes = field_classes(self.shape.filter)
        return _fields_in(self._field_classes, classes)

    @property
    def collection_scan(self) -> bool:
        return self.plan is not None and self.plan.is_collection_scan

    def served_by(self, indexes: Iterable[IndexSpec]) -> IndexSpec | None:
        """An index the planner would use for this shape as it is: visible, without a partial filter this module cannot
        check against the query's values, with the collection's collation, and, when sparse, bounded on its first
        field (a sparse index cannot answer a query that might match documents without that field)."""
        indexes = list(indexes)
        return next((index for index in indexes if not index.hidden and self._usable(index, indexes)), None)

    def hidden_serving(self, indexes: Iterable[IndexSpec]) -> IndexSpec | None:
        """A hidden index that would serve the shape once unhidden."""
        indexes = list(indexes)
        return next((index for index in indexes if index.hidden and self._usable(index, indexes)), None)

    @staticmethod
    def plannable(index: IndexSpec, indexes: list[IndexSpec]) -> bool:
        """Whether the planner may consider the index for these queries, whatever their predicates: visible, not
        partial, and with the collection's collation (read from the _id index), which queries use unless they name
        another (shapes do not record it)."""
        return not index.hidden and ShapeAnalysis._plannable_once_visible(index, indexes)

    @staticmethod
    def _plannable_once_visible(index: IndexSpec, indexes: list[IndexSpec]) -> bool:
        """``plannable`` of the index were it not hidden."""
        collection_collation = next((other.collation for other in indexes if other.is_id_index), None)
        return index.partial_filter is None and index.collation == collection_collation

    def bounded_by(self, indexes: Iterable[IndexSpec]) -> IndexSpec | None:
        """An index the planner may use that at least bounds the scan (its first field has an equality or a range of
        the shape) or gives its sort, even if it does not serve the shape fully: without one, a collection scan."""
        indexes = list(indexes)
        roles = self.roles
        ranges = {name for name in roles.range if name not in roles.never_leading}
        for index in indexes:
            if not index.key or not self.plannable(index, indexes):
                continue
            name, direction = index.key[0]
            bounded = (name in roles.equality and (isinstance(direction, int) or direction == "hashed")) or \
                (name in ranges and isinstance(direction, int))
            sorted_by = bool(roles.sort) and name == roles.sort[0][0] and isinstance(direction, int)
            if bounded or (sorted_by and not index.sparse):
                return index
        return None

    def _usable(self, index: IndexSpec, indexes: list[IndexSpec]) -> bool:
        if not self._plannable_once_visible(index, indexes) or not serves(index.key, self.roles):
            return False
        leading = index.key[0][0]
        bounded = leading in self.roles.equality or (leading in self.roles.range
                                                     and leading not in self.roles.never_leading)
        return bounded or not index.sparse


@dataclass
class RuleContext:
    """Everything outside the shape itself that rules may consult."""

    settings: Settings
    indexes: Mapping[str, list[IndexSpec]] = field(default_factory=dict)
    samples: Mapping[str, SampleStatistics] = field(default_factory=dict)
    shapes: list[ShapeStats] = field(default_factory=list)
    change: IndexChange | None = None  # check: the index change being judged (indexes is then the proposed set)
    _derived: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)
    _derived_from: list[ShapeStats] | None = field(default=None, init=False, repr=False, compare=False)

    def roles(self, stats: ShapeStats) -> Roles:
        """``roles_of`` the shape, worked out once for the rules and the index selection."""
        known = self._derived.get("roles") if self._derived_from is self.shapes else None  # asked twice a shape
        if known is None:
            known = self.derived("roles", _no_roles_yet)
        key = (stats.shape.fingerprint, stats.max_in_length)
        roles = known.get(key)
        if roles is None:
            roles = known[key] = roles_of(stats.shape, stats.max_in_length)
        return roles

    def shapes_of(self, ns: str) -> list[ShapeStats]:
        return list(self.derived("by_ns", _by_ns).get(ns, ()))

    def derived(self, name: str, compute: Callable[[list[ShapeStats]], _T]) -> _T:
        """A value worked out from all the shapes, once for the list of shapes (rules ask for it per collection,
        which made them quadratic in the number of shapes)."""
        if self._derived_from is not self.shapes:
            self._derived, self._derived_from = {}, self.shapes
        if name not in self._derived:
            self._derived[name] = compute(self.shapes)
        return self._derived[name]


_T = TypeVar("_T")


def _finite(value: float) -> bool:
    """A number a threshold can be: not NaN, not infinite, and an int no larger than a float holds (it is compared
    with and multiplied by floats)."""
    try:
        return math.isfinite(value)
    except OverflowError:
        return False


def _no_roles_yet(shapes: list[ShapeStats]) -> dict[tuple[str, int], Roles]:
    return {}


def _by_ns(shapes: list[ShapeStats]) -> dict[str, list[ShapeStats]]:
    grouped: dict[str, list[ShapeStats]] = {}
    for stats in shapes:
        grouped.setdefault(stats.shape.ns, []).append(stats)
    return grouped


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[str] = "warning"
    category: ClassVar[str] = "index"
    since: ClassVar[str] = "0.1.0"
    status: ClassVar[str] = "stable"
    aliases: ClassVar[tuple[str, ...]] = ()
    applies_to: ClassVar[frozenset[str]] = QUERY_OPS
    proposes_index: ClassVar[bool] = False
    #: Among rules that propose an index for the same shape, the highest owns the finding.
    priority: ClassVar[int] = 0
    #: The finding stands when an existing index serves the shape already (it is reported without an index).
    stands_without_index: ClassVar[bool] = False
    #: False for a rule whose findings are about a collection's indexes (``check_collection``) or that reviews other
    #: rules' proposals (``review``): its ``check`` says nothing of any shape, and the engine does not ask it.
    checks_shapes: ClassVar[bool] = True
    defaults: ClassVar[dict[str, Any]] = {}

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        """Options as a config file gives them: ``min-runs`` or ``min_runs``, each checked against its default.

        A number must be a finite number (an int where the default is an int; never a bool) and must not be negative;
        other options must have their default's type. A ValueError names the option as the user spelled it.
        """
        spelled: dict[str, str] = {}  # option name -> the user's spelling
        given: dict[str, Any] = {}
        for key, value in (options or {}).items():
            name = str(key).replace("-", "_")
            if name in spelled:
                raise ValueError(f"option '{name}' is given twice, as '{spelled[name]}' and '{key}'")
            spelled[name], given[name] = str(key), value
        unknown = sorted(spelled[name] for name in given if name not in self.defaults)
        if unknown:
            raise ValueError(f"unknown option(s) for {self.code}: {', '.join(unknown)}")
        for name, value in given.items():
            default, label = self.defaults[name], f"option '{spelled[name]}'"
            shown = str(value).lower() if isinstance(value, bool) else repr(value)
            shown = shown if len(shown) <= 40 else f"{shown[:37]}..."
            if isinstance(default, (int, float)) and not isinstance(default, bool):
                if isinstance(value, bool) or not isinstance(value, (int, float)) or not _finite(value):
                    raise ValueError(f"{label} must be a finite number, not {shown}")
                if isinstance(default, int) and not isinstance(value, int):
                    if not float(value).is_integer():
                        raise ValueError(f"{label} must be a whole number, not {shown}")
                    value = int(value)
                if value < 0:
                    raise ValueError(f"{label} must not be negative, not {shown}")
                given[name] = float(value) if isinstance(default, float) else value
            elif default is not None and not isinstance(value, type(default)):
                raise ValueError(f"{label} must be a {type(default).__name__}, not {shown}")
        self.options = {**self.defaults, **given}

    @classmethod
    def summary(cls) -> str:
        return (cls.__doc__ or "").strip().splitlines()[0]

    @classmethod
    def documentation(cls) -> str:
        lines = (cls.__doc__ or "").strip().splitlines()
        body = "\n".join(line[4:] if line.startswith("    ") else line for line in lines[1:])
        return lines[0] + "\n" + body

    def check(self, analysis: ShapeAnalysis, context: RuleContext) -> Verdict | Quiet | None:
        raise NotImplementedError

    def check_collection(self, ns: str, context: RuleContext) -> Iterable[Verdict]:
        """Findings about a collection as a whole (its existing indexes); most rules have none."""
        return ()

    def review(self, analysis: ShapeAnalysis, proposal: Verdict, context: RuleContext) -> Verdict | Quiet | None:
        """A rule that vets other rules' index proposals returns its own verdict to replace one (None: fine)."""
        return None


def analyze_shape(stats: ShapeStats, context: RuleContext, equality_order: Any = None) -> ShapeAnalysis:
    roles = context.roles(stats)
    plan_text = stats.main_plan
    return ShapeAnalysis(
        stats=stats,
        roles=roles,
        candidate=candidate_key(roles, equality_order),
        plan=parse_plan_summary(plan_text) if plan_text else None,
        plan_share=stats.main_plan_share,
        existing=list(context.indexes[stats.shape.ns]) if stats.shape.ns in context.indexes else None,
        sample=context.samples.get(stats.shape.ns),
    )


def render_fields(key: KeyPattern) -> str:
    return "{ " + ", ".join(f"{name}: {direction}" for name, direction in key) + " }"


def field_classes(shaped: Filter, prefix: str = "") -> dict[str, set[str]]:
    """Every field path of a filter shape with its operator classes, inside ``$and``/``$or``/``$nor`` branches and
    ``$elemMatch`` too (``{"items.sku": {"eq"}, "name": {"regex-unanchored"}}``)."""
    found: dict[str, set[str]] = {}
    for key, node in shaped:
        if isinstance(node, Branches):
            for branch in node.filters:
                for path, classes in field_classes(branch, prefix).items():
                    found.setdefault(path, set()).update(classes)
        elif key.startswith("$"):
            continue
        elif isinstance(node, ElemMatch):
            if node.inner and isinstance(node.inner[0], str):
                found.setdefault(prefix + key, set()).update(node.inner)  # type: ignore[arg-type]
            else:
                for path, classes in field_classes(node.inner, prefix + key + ".").items():  # type: ignore[arg-type]
                    found.setdefault(path, set()).update(classes)
            found.setdefault(prefix + key, set()).update(node.also)
        else:
            found.setdefault(prefix + key, set()).update((node,) if isinstance(node, str) else node)
    return found


def fields_with(shape: QueryShape, *classes: str) -> list[str]:
    """The fields of a shape's filter with any of these operator classes, sorted."""
    return _fields_in(field_classes(shape.filter), classes)


def _fields_in(classes_by_field: dict[str, set[str]], classes: tuple[str, ...]) -> list[str]:
    wanted = set(classes)
    return sorted(path for path, found in classes_by_field.items() if found & wanted)


def query_filter(op: str, command: Mapping[str, Any] | None) -> dict[str, Any]:
    """The filter of a logged command (a representative's): ``filter``, ``query``, ``q``, or a pipeline's leading
    ``$match`` stages; literal values included, so callers inspect it and never print it."""
    if not isinstance(command, Mapping):
        return {}
    if op == "aggregate":
        pipeline = command.get("pipeline")
        matches = []
        for stage in pipeline if isinstance(pipeline, list) else []:
            if not isinstance(stage, Mapping) or "$match" not in stage:
                break
            matches.append(stage["$match"])
        return {"$and": matches} if len(matches) > 1 else (matches[0] if matches and isinstance(matches[0], dict)
                                                          else {})
    for key in ("filter", "query", "q"):
        if isinstance(command.get(key), dict):
            return command[key]
    return {}
