"""The best index set for each collection's whole workload, instead of one index per finding
(``--index-selection workload``, the default).

For each collection whose findings ask for an index, the rules engine hands the selection those requests
(``rules.engine.IndexChooser``); the selection answers, per finding, the index of the collection's set that serves
its shape, or none and why (a skipped shape's reason, shown with ``--verbose``):

1. candidates (``candidates``): what the findings ask for, each requested shape's own key, and keys grown to serve
   several shapes (shared equality prefixes, reordered equality fields, sort directions both orders use, existing
   indexes extended);
2. the cost of a set (``costs``): per shape, keys plus documents examined per execution with the cheapest index the
   set offers, by the what-if estimator over a data sample or, without one, by the log;
3. the write cost (``writes``): the index keys each index writes per hour, times ``--write-cost-factor``; the value
   model (``value``) turns savings and writes into server seconds per hour, prices each new index at
   ``--min-saving``, and reshapes keys (free text hashed, trailing fields the log shows add nothing dropped, fields
   of few values kept from leading; see docs/advice.md);
4. the search (``search``): the set saving the most server time net of its costs, with at most ``--max-new-indexes``
   new indexes (and never more than per-finding advice asks for, nor past the server's 64 indexes): exact branch and
   bound for up to 20 candidates, distorted greedy with its (1 - 1/e) guarantee beyond; a set ordering the same
   fields twice is searched again without each of the two;
5. what to let go (``drops``): existing indexes the set makes redundant, that no operation used (IX005's and IX006's
   judgement), or whose shapes a new index now serves, each to hide first;
6. with a sample, the chosen set is explained again for every shape and the multi-planner picks each plan, as the
   server would; an index let go that a shape still needs is kept.

``WorkloadSelection.index_sets`` gives the report's ``IndexSet`` per collection once evidence has run.
"""

from __future__ import annotations

from idxadvisor.selection.choose import WorkloadSelection

__all__ = ["WorkloadSelection"]
