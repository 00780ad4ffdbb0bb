"""The rule registry: every rule, sorted by code. A new rule is one module here and one line below."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from idxadvisor.errors import UsageError
from idxadvisor.rules.ag001_repeated_aggregation import RepeatedAggregation
from idxadvisor.rules.ag002_lookup_without_index import LookupWithoutIndex
from idxadvisor.rules.base import Rule
from idxadvisor.rules.ci001_index_in_use_dropped import IndexInUseDropped
from idxadvisor.rules.ci002_shape_loses_support import ShapeLosesSupport
from idxadvisor.rules.ci003_redundant_new_index import RedundantNewIndex
from idxadvisor.rules.ci004_refused_index import RefusedIndex
from idxadvisor.rules.ix001_missing_compound_index import MissingCompoundIndex
from idxadvisor.rules.ix002_esr_order import EsrOrder
from idxadvisor.rules.ix003_parallel_array_index import ParallelArrayIndex
from idxadvisor.rules.ix004_missing_index import MissingIndex
from idxadvisor.rules.ix005_redundant_index import RedundantIndex
from idxadvisor.rules.ix006_unused_index import UnusedIndex
from idxadvisor.rules.pl001_plan_flapping import PlanFlapping
from idxadvisor.rules.qy001_count_slower_than_find import CountSlowerThanFind
from idxadvisor.rules.qy002_n_plus_one import NPlusOne
from idxadvisor.rules.qy003_skip_pagination import SkipPagination
from idxadvisor.rules.qy004_unanchored_regex import UnanchoredRegex
from idxadvisor.rules.qy005_negation_only import NegationOnly
from idxadvisor.rules.qy006_large_in import LargeIn
from idxadvisor.rules.qy007_unprojected_large_response import UnprojectedLargeResponse
from idxadvisor.rules.tm001_write_conflicts import WriteConflicts
from idxadvisor.rules.tm002_replication_waits import ReplicationWaits
from idxadvisor.rules.tm003_admission_queueing import AdmissionQueueing
from idxadvisor.rules.tm004_disk_reads import DiskReads
from idxadvisor.rules.tm005_lock_waits import LockWaits
from idxadvisor.rules.tm006_flow_control import FlowControl
from idxadvisor.rules.tm007_plan_selection import PlanSelection
from idxadvisor.rules.tm008_unexplained_latency import UnexplainedLatency

ALL_RULES: tuple[type[Rule], ...] = (
    RepeatedAggregation,
    LookupWithoutIndex,
    IndexInUseDropped,
    ShapeLosesSupport,
    RedundantNewIndex,
    RefusedIndex,
    MissingCompoundIndex,
    EsrOrder,
    ParallelArrayIndex,
    MissingIndex,
    RedundantIndex,
    UnusedIndex,
    PlanFlapping,
    CountSlowerThanFind,
    NPlusOne,
    SkipPagination,
    UnanchoredRegex,
    NegationOnly,
    LargeIn,
    UnprojectedLargeResponse,
    WriteConflicts,
    ReplicationWaits,
    AdmissionQueueing,
    DiskReads,
    LockWaits,
    FlowControl,
    PlanSelection,
    UnexplainedLatency,
)


def rule_class(code_or_name: str) -> type[Rule]:
    """A rule by its code, a former code (alias) or its name; UsageError when there is none."""
    wanted = code_or_name.strip()
    for rule in ALL_RULES:
        if wanted.upper() in (rule.code, *rule.aliases) or wanted.lower() == rule.name:
            return rule
    raise UsageError(f"no rule '{code_or_name}' (see 'idxadvisor rules')")


def _matches(rule: type[Rule], selector: str) -> bool:
    selector = selector.strip()
    return rule.code.startswith(selector.upper()) or selector.lower() == rule.name or selector.upper() in rule.aliases


def select_rules(select: Iterable[str] = (), ignore: Iterable[str] = (),
                 options: Mapping[str, Mapping[str, Any]] | None = None) -> list[Rule]:
    """The rules to run: all, or those ``select`` names (codes, code prefixes or names), less those ``ignore`` names."""
    select, ignore = list(select), list(ignore)
    for selector in select + ignore:
        if not any(_matches(rule, selector) for rule in ALL_RULES):
            raise UsageError(f"--select/--ignore: '{selector}' names no rule (see 'idxadvisor rules')")
    chosen = [rule for rule in ALL_RULES
              if (not select or any(_matches(rule, s) for s in select)) and not any(_matches(rule, s) for s in ignore)]
    configured: dict[type[Rule], tuple[str, Mapping[str, Any]]] = {}
    for key, value in (options or {}).items():
        rule = rule_class(key)
        if rule in configured:
            raise UsageError(f"settings for {rule.code}: configured twice, as '{configured[rule][0]}' and '{key}'; "
                             "keep one")
        configured[rule] = (key, value)
    instances = []
    for rule in chosen:
        settings = configured.get(rule, ("", {}))[1]
        try:
            instances.append(rule(settings))
        except ValueError as exc:
            raise UsageError(f"settings for {rule.code}: {exc}") from None
    return instances
