"""Shape reports (and set shapes, skips) are built without validation when their values are of their fields' types
already: the same report validation gives, and validation still where a value is not."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from idxadvisor.models.report import Evidence, SetShape, ShapeReport, Skip
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


_EVIDENCE = Evidence(evaluator="estimator", before={"docsExamined": 10}, after={"docsExamined": 1})
_SET_SHAPE = {"fingerprint": "f1", "shape": "find {a: eq}", "executions": 3, "requested": True, "index": "a_1",
              "before": 12.5, "after": 1.0, "model": "log", "evidence": _EVIDENCE, "note": None}


@pytest.mark.parametrize("changed", [{}, {"index": None, "before": None, "after": None, "evidence": None, "note": "n"},
                                     {"executions": 3.0}, {"before": 12}, {"requested": 1}])
def test_a_set_shape_built_or_validated_is_the_one_validation_gives(changed: dict) -> None:
    values = {**_SET_SHAPE, **changed}
    built = SetShape.of(**values)
    assert built.model_dump_json() == SetShape(**values).model_dump_json()
    assert built.evidence is values["evidence"]


def test_a_set_shape_or_a_skip_with_a_value_validation_refuses_is_refused() -> None:
    with pytest.raises(ValidationError):
        SetShape.of(**{**_SET_SHAPE, "model": "guess"})
    with pytest.raises(ValidationError):
        Skip.of("f1", "db.c", "find {}", None)  # type: ignore[arg-type]


def test_a_skip_is_the_one_validation_gives() -> None:
    built = Skip.of("f1", "db.c", "find {a: eq}", "no rule applies")
    assert built.model_dump_json() == Skip(fingerprint="f1", ns="db.c", shape="find {a: eq}",
                                           reason="no rule applies").model_dump_json()
