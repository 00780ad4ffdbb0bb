"""The JSON report is written a list item at a time, and its bytes are those of the whole report dumped at once; the
report's models with every field given share one set of field names (a report holds a few per shape)."""

from __future__ import annotations

import io
from datetime import datetime, timezone

from idxadvisor.models.report import DurationReport, Report, ShapeReport, Skip, Summary, TimelinePoint, ToolInfo
from idxadvisor.report import json as json_report
from tests.regen import GOLDEN


def streamed(report: Report) -> str:
    out = io.StringIO()
    json_report.render(report, out)
    return out.getvalue()


def test_the_demo_report_streams_to_the_bytes_of_one_dump() -> None:
    golden = (GOLDEN / "demo.json").read_text(encoding="utf-8")
    report = Report.model_validate_json(golden)
    assert report.shapes and report.findings and report.index_sets and report.groups  # lists streamed item by item
    assert streamed(report) == report.model_dump_json(indent=2) + "\n" == golden


def test_empty_lists_none_and_escaped_text_stream_as_one_dump_has_them() -> None:
    shape = ShapeReport(fingerprint="f", ns="db.ç", op="find", shape='find db.ç {"a\nb": eq}', count=1,
                        duration_ms=DurationReport(total=1, mean=1, p50=1, p95=1, p99=1, max=1),
                        keys_examined=0, docs_examined=0, nreturned=0,
                        timeline=[TimelinePoint.of(datetime(2025, 1, 1, tzinfo=timezone.utc), 1, 1.0, 1.0, 1.0, 0, 0)])
    report = Report(tool=ToolInfo(version="0"), summary=Summary(inputs=0, lines=0, entries=0, problems=0, truncated=0,
                                                                operations=0, shapes=1, shapes_shown=1),
                    inputs=[], shapes=[shape], skipped=[Skip(fingerprint="f", ns="db.ç", shape="s", reason="r\t\"q\"")])
    text = streamed(report)
    assert text == report.model_dump_json(indent=2) + "\n"
    assert '"inputs": [],' in text and '"server": null,' in text


def test_models_with_every_field_given_share_one_set_of_names_and_copies_get_their_own() -> None:
    first, second = (Skip(fingerprint=name, ns="db.c", shape="s", reason="r") for name in "ab")
    assert first.__pydantic_fields_set__ is second.__pydantic_fields_set__ == {"fingerprint", "ns", "shape", "reason"}
    first.reason = "changed"
    assert second.model_fields_set == {"fingerprint", "ns", "shape", "reason"} and second.reason == "r"
    copy = first.model_copy(update={"reason": "copied"})
    assert copy.__pydantic_fields_set__ is not first.__pydantic_fields_set__
    partial = DurationReport.model_validate({"total": 1, "mean": 1, "p50": 1, "p95": 1, "p99": 1, "max": 1})
    assert partial.__pydantic_fields_set__ is DurationReport(total=2, mean=2, p50=2, p95=2, p99=2,
                                                             max=2).__pydantic_fields_set__
    some = ShapeReport(fingerprint="f", ns="db.c", op="find", shape="s", count=1, keys_examined=0, docs_examined=0,
                       nreturned=0, duration_ms=partial)
    assert "getmores" not in some.model_fields_set  # a model with defaults left keeps its own set
    assert set(some.model_dump(exclude_unset=True)) == {"fingerprint", "ns", "op", "shape", "count", "keys_examined",
                                                        "docs_examined", "nreturned", "duration_ms"}
