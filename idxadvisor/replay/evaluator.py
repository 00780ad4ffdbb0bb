"""The server as an evaluator of evidence: what the estimator answers, measured by mongod on the scratch copy.

A collection's sample is copied the first time a query on it is explained, and each index is built the first time
a query is asked with it. The evidence code asks for every plan of today before any candidate, so today's plan is
measured with only today's indexes in the collection.
"""

from __future__ import annotations

from typing import Any, Literal

from idxadvisor.indexes.model import IndexSpec
from idxadvisor.indexes.sampling import SampleStatistics
from idxadvisor.replay.scratch import ScratchDatabase
from idxadvisor.server.explain import execution_counters, explain_command
from idxadvisor.whatif.estimator import WhatIfQuery


class ServerEvaluator:
    name: Literal["estimator", "server"] = "server"

    def __init__(self, scratch: ScratchDatabase, samples: dict[str, SampleStatistics]) -> None:
        self._scratch = scratch
        self._samples = samples
        self._built: dict[str, dict[IndexSpec, str | None]] = {}

    def explain(self, ns: str, query: WhatIfQuery, indexes: list[IndexSpec], hint: IndexSpec | None) -> dict[str, Any]:
        built = self._prepare(ns, indexes)
        if hint is not None and built.get(hint):
            return {"unsupported": built[hint]}  # an index the server could not build (the scratch report says so)
        return execution_counters(self._scratch.explain(ns, explain_command(ns, query, hint.key if hint else None)))

    def describe(self, ns: str, sample: SampleStatistics) -> str:
        return (f"measured by the server: explain(\"executionStats\") with hint over {len(sample):,} sampled "
                f"documents copied to {self._scratch.report.server}/{self._scratch.name}")

    def _prepare(self, ns: str, indexes: list[IndexSpec]) -> dict[IndexSpec, str | None]:
        built = self._built.get(ns)
        if built is None:
            built = self._built[ns] = {}
            self._scratch.insert(ns, self._samples[ns].documents)
        for spec in indexes:
            if spec not in built and not spec.is_id_index:
                built[spec] = self._scratch.create_index(ns, spec)
        return built
