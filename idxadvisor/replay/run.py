"""Replay the top findings that propose an index, on a scratch copy, and keep the estimator's prediction beside.

Update, delete and findAndModify shapes are replayed as the equivalent find (their representative query is a find
with the statement's filter, as the estimator's is). Findings the server shows saving less than
``--min-savings-pct`` are dropped with that reason, as the estimator's are.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from idxadvisor.errors import ServerError
from idxadvisor.indexes.model import IndexSpec
from idxadvisor.indexes.sampling import SampleStatistics
from idxadvisor.models.report import Finding, ScratchReport, Skip
from idxadvisor.replay.calibration import calibration_rows
from idxadvisor.replay.evaluator import ServerEvaluator
from idxadvisor.replay.scratch import ScratchDatabase, Terminated, scratch_name
from idxadvisor.shapes.digest import ShapeStats
from idxadvisor.whatif.evidence import EvidenceOptions, gather_evidence

DEFAULT_TOP = 20


@dataclass(frozen=True)
class ReplayOptions:
    scratch_uri: str  # --scratch-uri, else the source's URI
    source_databases: frozenset[str]  # every database of the source server, and the --db names
    scratch_db: str | None = None
    top: int = DEFAULT_TOP


def replayable(findings: list[Finding], samples: Mapping[str, SampleStatistics], top: int) -> list[Finding]:
    """The top findings that propose a new index on a collection with a sample."""
    chosen = [finding for finding in findings if finding.index is not None and not finding.index.name
              and len(samples.get(finding.ns) or ())]
    return chosen[:top]


def replay_findings(findings: list[Finding], shapes: Mapping[str, ShapeStats],
                    samples: dict[str, SampleStatistics], catalog: Mapping[str, list[IndexSpec]],
                    evidence: EvidenceOptions, options: ReplayOptions) -> tuple[list[Finding], list[Skip], ScratchReport]:
    """``findings`` with server evidence on the replayed ones, the findings the server dropped, and the scratch
    database's report. The scratch database is dropped before this returns or raises. A replay stopped by Ctrl-C,
    SIGTERM or a server error returns the findings as they were (``report.stopped`` says why), so that the report is
    still written."""
    chosen = replayable(findings, samples, options.top)
    predicted = {id(finding): finding.evidence for finding in chosen}
    scratch = ScratchDatabase(options.scratch_uri, scratch_name(options.scratch_db), options.source_databases)
    with scratch:
        try:
            kept, dropped = gather_evidence(chosen, shapes, samples, catalog, evidence,
                                            ServerEvaluator(scratch, samples))
        except KeyboardInterrupt as exc:  # Ctrl-C or SIGTERM: the database is dropped, the report still written
            scratch.report.stopped = "terminated" if isinstance(exc, Terminated) else "interrupted"
            kept, dropped = chosen, []
        except ServerError as exc:
            scratch.report.stopped = str(exc)
            kept, dropped = chosen, []
    for finding in kept:
        estimate = predicted.get(id(finding))
        if (finding.evidence is not None and finding.evidence is not estimate and estimate is not None
                and estimate.evaluator == "estimator"):
            finding.evidence.estimate = estimate
            finding.evidence.calibration = calibration_rows(finding.evidence, estimate)
    gone = {id(finding) for finding in chosen} - {id(finding) for finding in kept}
    return [finding for finding in findings if id(finding) not in gone], dropped, scratch.report
