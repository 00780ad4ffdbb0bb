"""Shape reports are built without validation when their values are of their fields' types already: the same report
validation gives, and validation still where a value is not."""

from __future__ import annotations

from pathlib import Path

from idxadvisor.models.report import ShapeReport
from idxadvisor.report.build import shape_report
from tests.helpers import digest_block

DEMO_LOG = Path(__file__).resolve().parents[2] / "fixtures" / "demo" / "shop.log"


def _demo_reports() -> list[ShapeReport]:
    _, digest = digest_block(DEMO_LOG.read_bytes(), "json")
    return [shape_report(stats, False) for stats in digest.shapes.values()]


def test_a_built_shape_report_is_the_one_validation_gives() -> None:
    reports = _demo_reports()
    assert len(reports) >= 20 and any(report.runs for report in reports)
    assert any(report.plan_costs for report in reports)
    for report in reports:
        validated = ShapeReport(**dict(report))  # validation makes ints of float fields floats, and so on
        assert report.model_dump_json() == validated.model_dump_json()


def test_a_counter_given_as_a_double_is_validated_into_an_int() -> None:
    values = dict(_demo_reports()[0])
    values["docs_examined"] = 5.0
    values["skip_mean"] = 2  # a float field given an int
    report = ShapeReport.of(values)
    assert type(report.docs_examined) is int and report.docs_examined == 5
    assert type(report.skip_mean) is float and report.skip_mean == 2.0
