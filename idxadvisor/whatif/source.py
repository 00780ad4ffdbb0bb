"""What the explainer asks of the sample it plans over: the :class:`Sample` protocol that
:class:`~idxadvisor.whatif.estimator.Estimator` implements, and the per-path facts the guards read.

It sits below the explainer and the estimator so that the estimator can import the explainer and not the other way
round (one direction of dependency between them).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from idxadvisor.indexes.model import IndexSpec
from idxadvisor.whatif.collation import Collator
from idxadvisor.whatif.keys import IndexModel, PathColumn
from idxadvisor.whatif.query import ParsedQuery


@dataclass
class ColumnFacts:
    """Values on one path that mongomock matches differently from MongoDB (the guards refuse them)."""

    numbers01: bool = False
    booleans: bool = False
    decimals: bool = False
    nan: bool = False
    undefined: bool = False
    strings_in_arrays: bool = False
    code: bool = False


class Sample(Protocol):
    """The documents one explain plans over, their index models and mongomock's verdicts."""

    server_version: tuple[int, ...]

    @property
    def documents(self) -> list[dict[str, Any]]: ...

    @property
    def base(self) -> Sample: ...

    def view(self, collator: Collator | None, fields: Iterable[str]) -> Sample: ...

    def column(self, path: str) -> PathColumn: ...

    def facts(self, path: str) -> ColumnFacts: ...

    def model(self, spec: IndexSpec) -> IndexModel: ...

    def wildcard_holds(self, spec: IndexSpec, path: str) -> bool: ...

    def wildcard_model(self, spec: IndexSpec, path: str) -> IndexModel | None: ...

    def matches(self, parsed: ParsedQuery, raw: Mapping[str, Any]) -> list[bool] | str: ...

    def match_all(self, flt: Mapping[str, Any]) -> list[bool] | str: ...
