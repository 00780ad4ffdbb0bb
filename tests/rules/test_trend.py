"""Growth trends: work per execution growing steadily while the traffic does not, folded into the shape's finding."""

from __future__ import annotations

import random
from pathlib import Path

from idxadvisor.api import analyze
from idxadvisor.config import Settings
from idxadvisor.rules.trend import DOCUMENTS, DURATION, growth_of, spearman
from idxadvisor.testing import operation_entries
from tests.helpers import digest_block

SCAN = {"ns": "shop.orders", "command": {"find": "orders", "filter": {"customerId": 7, "state": "open"}},
        "plan": "IXSCAN { customerId: 1 }", "nreturned": 20, "every": 30, "repeat": 60}


def stats_of(operation: dict):
    lines = operation_entries([operation])["json"]
    (stats,) = digest_block("\n".join(lines) + "\n", "json-log")[1].shapes.values()
    return stats


def test_documents_examined_growing_run_after_run_is_a_growth() -> None:
    growth = growth_of(stats_of({**SCAN, "ramp": {"docsExamined": [2_000, 40_000], "keysExamined": [2_000, 40_000]}}))
    assert growth is not None and growth.metric == DOCUMENTS
    assert 3.5 < growth.factor < 5 and growth.correlation > 0.9 and growth.current_rate > 1.5
    assert "documents examined per execution grew steadily over the log's 29m 00s" in growth.describe()


def test_a_duration_that_grows_while_the_documents_do_not_is_a_duration_growth() -> None:
    growth = growth_of(stats_of({**SCAN, "docsExamined": 5_000, "keysExamined": 5_000,
                                 "ramp": {"durationMillis": [150, 2_000]}}))
    assert growth is not None and growth.metric == DURATION


def test_noise_a_single_step_or_more_traffic_is_no_growth() -> None:
    noise = random.Random(7)
    durations = [noise.randint(100, 900) for _ in range(60)]
    assert growth_of(stats_of({**SCAN, "docsExamined": 500, "durations": durations})) is None
    busier = {**SCAN, "repeat": 1, "docsExamined": 500}
    operations = [{**busier, "at": minute * 60 + second, "durationMillis": 100 + 40 * minute}
                  for minute in range(30) for second in range(0, 60, max(1, 30 - minute))]
    lines = operation_entries(operations)["json"]
    (stats,) = digest_block("\n".join(lines) + "\n", "json-log")[1].shapes.values()
    assert growth_of(stats) is None  # the durations grow, but so does the traffic (up to 60 a minute from 2)


def test_spearman_is_one_for_any_increasing_series_and_zero_for_a_constant() -> None:
    assert spearman([1, 2, 3, 4], [1, 10, 100, 1000]) == 1.0
    assert spearman([1, 2, 3, 4], [4, 3, 2, 1]) == -1.0
    assert spearman([1, 2, 3], [5, 5, 5]) == 0.0


def test_the_growth_is_folded_into_the_finding_and_its_impact(tmp_path: Path) -> None:
    steady = {**SCAN, "docsExamined": 21_000, "keysExamined": 21_000}
    growing = {**SCAN, "ramp": {"docsExamined": [2_000, 40_000], "keysExamined": [2_000, 40_000]}}
    impacts = []
    for name, operation in (("steady", steady), ("growing", growing)):
        log = tmp_path / f"{name}.log"
        log.write_text("\n".join(operation_entries([operation])["json"]) + "\n")
        (finding,) = analyze([str(log)], Settings()).findings
        impacts.append(finding.impact)
        grew = [detail for detail in finding.details if "grew steadily" in detail]
        assert len(grew) == (name == "growing")
    steady_impact, growing_impact = impacts
    assert growing_impact > 1.5 * steady_impact  # the same documents in total, counted at today's cost
