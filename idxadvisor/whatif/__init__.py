"""What-if: mongod's classic planner modelled over a data sample (DESIGN.md step 7).

``Estimator(documents).explain(WhatIfQuery(...), indexes, hint)`` predicts explain("executionStats")
for a find, count, distinct or aggregate (with partial, sparse, hashed, collated and wildcard indexes, collations,
hints, min/max); ``run_whatif``/``render_text`` are the CLI-facing entry points.
"""

from idxadvisor.whatif.command import render_text, run_whatif
from idxadvisor.whatif.estimator import Estimator, WhatIfQuery

__all__ = ["Estimator", "WhatIfQuery", "render_text", "run_whatif"]
