"""The entry of one what-if explain: an aggregation goes through its pipeline prefix (:mod:`.pipeline`), any other
command straight to the :class:`~idxadvisor.whatif.explainer.Explainer`; refusals become explain's error reports.

Kept apart from :mod:`.explainer` so that the pipeline can build on the explainer without the explainer importing
the pipeline back.
"""

from __future__ import annotations

from typing import Any

from idxadvisor.indexes.model import IndexSpec
from idxadvisor.whatif.explainer import BuildError, Explainer, ServerError
from idxadvisor.whatif.pipeline import explain_aggregate
from idxadvisor.whatif.request import WhatIfQuery
from idxadvisor.whatif.source import Sample


def explain_request(sample: Sample, query: WhatIfQuery, specs: list[IndexSpec],
                    hint: IndexSpec | str | None) -> dict[str, Any]:
    """Explain one request (see :meth:`Estimator.explain`)."""
    try:
        if query.command == "aggregate":
            return explain_aggregate(sample, query, specs, hint)
        return Explainer(sample, query, specs, hint).run()
    except ServerError as exc:
        return {"error": exc.error}
    except BuildError as exc:
        return {"error": exc.error, "index": exc.spec.name}
