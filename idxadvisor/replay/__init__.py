"""Replay: the findings' candidate indexes tried on a real server (DESIGN.md step 8).

A ``$sample`` of each collection is copied into a scratch database this run creates (``scratch.py``), the
collection's existing indexes and every candidate are built there, and each finding's representative query is run
with ``explain("executionStats")`` and ``hint`` for today's plan and for the candidate (``evaluator.py``). The
numbers go through the evidence code the estimator's go through (``whatif/evidence.py``), and are set beside the
estimator's prediction on the same sample and indexes (``calibration.py``). The scratch database is dropped at the
end, after an error and on Ctrl-C. These are the only writes the tool makes.
"""

from idxadvisor.replay.run import ReplayOptions, replay_findings

__all__ = ["ReplayOptions", "replay_findings"]
