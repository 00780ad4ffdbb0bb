"""``idxadvisor compare``: an index added between two logs of one workload shows its plan change and its saving; a
shape that got slower is a regression, and exits 1."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from idxadvisor.cli import run
from tests.helpers import json_line, slow_attr

FIND = {"find": "orders", "filter": {"status": "A", "customerId": 42}, "sort": {"createdAt": -1}, "limit": 20}
REPORT = {"aggregate": "orders",
          "pipeline": [{"$match": {"status": "A"}}, {"$group": {"_id": "$sku", "n": {"$sum": 1}}}],
          "cursor": {}}
INDEX_PLAN = "IXSCAN { status: 1, customerId: 1, createdAt: -1 }"


def write_log(path: Path, start: datetime, hours: float, find: dict, report_ms: int, runs: int = 30) -> Path:
    """One application's hour: the find (its counters given) and a reporting aggregation, ``runs`` times each."""
    step = timedelta(hours=hours) / runs
    lines = []
    for run_number in range(runs):
        moment = start + step * run_number
        lines.append(json_line(slow_attr(FIND, **find), ts=moment.isoformat(timespec="milliseconds")))
        lines.append(json_line(slow_attr(REPORT, planSummary="IXSCAN { status: 1 }", keysExamined=900,
                                         docsExamined=900, nreturned=12, durationMillis=report_ms + run_number % 3),
                               ts=(moment + timedelta(seconds=1)).isoformat(timespec="milliseconds")))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


BEFORE_FIND = {"planSummary": "COLLSCAN", "keysExamined": 0, "docsExamined": 50_000, "nreturned": 20,
               "hasSortStage": True, "durationMillis": 310}
AFTER_FIND = {"planSummary": INDEX_PLAN, "keysExamined": 20, "docsExamined": 20, "nreturned": 20, "durationMillis": 4}
DAY1 = datetime(2026, 11, 2, 9, 0, tzinfo=timezone.utc)


@pytest.fixture()
def logs(tmp_path: Path) -> dict[str, Path]:
    return {
        "before": write_log(tmp_path / "before.log", DAY1, 1, BEFORE_FIND, report_ms=50),
        "indexed": write_log(tmp_path / "after.log", DAY1 + timedelta(days=1), 2, AFTER_FIND, report_ms=52, runs=60),
        "slower": write_log(tmp_path / "slower.log", DAY1 + timedelta(days=1), 1, AFTER_FIND, report_ms=90),
    }


def compare(capsys: pytest.CaptureFixture[str], *arguments: str, code: int) -> str:
    assert run(["compare", *arguments]) == code
    captured = capsys.readouterr()
    return captured.out


def test_an_index_added_between_two_logs_shows_its_plan_change_and_saving(capsys: pytest.CaptureFixture[str],
                                                                          logs: dict[str, Path]) -> None:
    result = json.loads(compare(capsys, str(logs["before"]), str(logs["indexed"]), "--format", "json", code=0))
    assert (result["regressed"], result["improved"], result["time_basis"]) == (0, 1, "per_hour")
    # first to last entry: 29 (59) steps of two minutes and the aggregation's second
    assert (result["before"]["hours"], result["after"]["hours"]) == (round(3481 / 3600, 4), round(7081 / 3600, 4))
    find, report = result["shapes"]  # ranked by the change in time: the find's saving comes first
    assert find["op"] == "find" and find["status"] == "improved"
    assert find["plan_change"] == f"COLLSCAN → {INDEX_PLAN}" and find["sort_change"] == "gone"
    assert find["before"]["docs_examined_per_returned"] == 2500.0 and find["after"]["docs_examined_per_returned"] == 1
    assert find["before"]["per_hour"] == round(30 / result["before"]["hours"], 2)
    assert find["after"]["per_hour"] == round(60 / result["after"]["hours"], 2)
    saving_per_hour = 30 * 310 / find_hours(result, "before") - 60 * 4 / find_hours(result, "after")
    assert find["time_change_ms"] == pytest.approx(-saving_per_hour)
    assert find["mean_change_pct"] == pytest.approx((4 / 310 - 1) * 100, abs=0.1)
    assert report["status"] == "unchanged" and report["plan_change"] is None

    markdown = compare(capsys, str(logs["before"]), str(logs["indexed"]), "--format", "markdown", code=0)
    assert "**✅ no shape regressed" in markdown
    assert f"| 1 | improved | −{human(saving_per_hour)} |" in markdown and f"COLLSCAN → {INDEX_PLAN}; blocking " \
        "sort gone |" in markdown
    text = compare(capsys, str(logs["before"]), str(logs["indexed"]), code=0)
    assert f"#1 improved  saves {human(saving_per_hour)} per hour  shop.orders" in text
    assert f"plan COLLSCAN → {INDEX_PLAN} · blocking sort gone" in text
    assert "docs examined per returned 2,500.0 → 1.0" in text


def find_hours(result: dict, side: str) -> float:
    return result[side]["hours"]


def human(milliseconds: float) -> str:
    from idxadvisor.units import human_ms

    return human_ms(milliseconds)


def test_a_shape_that_got_slower_is_a_regression_and_exits_1(capsys: pytest.CaptureFixture[str],
                                                             logs: dict[str, Path]) -> None:
    result = json.loads(compare(capsys, "--before", str(logs["before"]), "--after", str(logs["slower"]),
                                "--format", "json", code=1))
    (regressed,) = [shape for shape in result["shapes"] if shape["status"] == "regressed"]
    assert regressed["op"] == "aggregate" and regressed["mean_change_pct"] == pytest.approx(78.1, abs=0.5)
    assert regressed["reasons"] == ["mean 51 ms → 91 ms (+78%)", "p95 52 ms → 92 ms (+77%)"]
    sarif = json.loads(compare(capsys, str(logs["before"]), "--after", str(logs["slower"]), "--format", "sarif",
                               code=1))
    (finding,) = sarif["runs"][0]["results"]
    assert finding["ruleId"] == "shape-regressed" and finding["partialFingerprints"] == {
        "idxadvisor/shape/v1": regressed["fingerprint"]}
    assert finding["locations"][0]["logicalLocations"] == [{"name": "shop.orders", "kind": "namespace"}]
    # a looser threshold, or too few executions to judge, pass
    compare(capsys, str(logs["before"]), str(logs["slower"]), "--regression-pct", "100", code=0)
    result = json.loads(compare(capsys, str(logs["before"]), str(logs["slower"]), "--min-executions", "31",
                                "--format", "json", code=0))
    assert result["shapes"][1]["reasons"] == ["not judged: 30 executions before, 30 after (fewer than "
                                              "--min-executions 31 on a side)"]


def test_shapes_that_appear_or_vanish_and_workload_files_on_either_side(capsys: pytest.CaptureFixture[str],
                                                                        logs: dict[str, Path], tmp_path: Path) -> None:
    workload = tmp_path / "before.json"
    assert run(["analyze", str(logs["before"]), "--save-workload", str(workload), "--format", "json",
                "--fail-on", "never"]) == 0
    capsys.readouterr()
    other = tmp_path / "other.log"
    other.write_text(json_line(slow_attr({"find": "carts", "filter": {"userId": 1}}, ns="shop.carts"),
                               ts=(DAY1 + timedelta(days=1)).isoformat()) + "\n", encoding="utf-8")
    result = json.loads(compare(capsys, str(workload), "--after", str(other), "--after", str(logs["indexed"]),
                                "--format", "json", code=0))
    statuses = {shape["ns"] + " " + shape["op"]: shape["status"] for shape in result["shapes"]}
    assert statuses == {"shop.orders find": "improved", "shop.orders aggregate": "unchanged",
                        "shop.carts find": "appeared"}
    result = json.loads(compare(capsys, str(logs["before"]), str(other), "--format", "json", code=0))
    assert {shape["status"] for shape in result["shapes"]} == {"vanished", "appeared"}


@pytest.mark.parametrize("arguments", [["a.log"], ["a.log", "b.log", "c.log"], ["a.log", "--before", "b.log",
                                                                                  "--after", "c.log"]])
def test_which_input_is_which_side_is_never_guessed(capsys: pytest.CaptureFixture[str], arguments: list[str]) -> None:
    assert run(["compare", *arguments]) == 2
    assert capsys.readouterr().err.startswith("idxadvisor: error: ")


def test_an_input_that_cannot_be_read_exits_2(capsys: pytest.CaptureFixture[str], logs: dict[str, Path],
                                              tmp_path: Path) -> None:
    assert run(["compare", str(logs["before"]), str(tmp_path / "missing.log"), "--format", "json"]) == 2
    assert capsys.readouterr().err == f"idxadvisor: error: {tmp_path / 'missing.log'}: no such file or directory\n"


def queued_log(path: Path, start: datetime, queued_ms: int, working_ms: int) -> Path:
    lines = []
    for run_number in range(30):
        timing = {"workingMillis": working_ms,
                  "queues": {"execution": {"admissions": 1, "totalTimeQueuedMicros": queued_ms * 1000}}}
        attr = slow_attr(FIND, **{**AFTER_FIND, "durationMillis": queued_ms + working_ms}, **timing)
        lines.append(json_line(attr, ts=(start + timedelta(minutes=run_number)).isoformat(timespec="milliseconds")))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(("after_queued", "after_working", "cause"), [
    (240, 3, "slower because it waited, not because it worked more: queued for execution 3 ms → 240 ms per "
             "execution, working 3 ms → 3 ms"),
    (3, 240, None),  # it worked more: the components do not excuse it
])
def test_a_shape_slower_because_it_queued_is_said_so(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                     after_queued: int, after_working: int, cause: str | None) -> None:
    before = queued_log(tmp_path / "before.log", DAY1, 3, 3)
    after = queued_log(tmp_path / "after.log", DAY1 + timedelta(days=1), after_queued, after_working)
    result = json.loads(compare(capsys, str(before), str(after), "--format", "json", code=1))
    (regressed,) = [shape for shape in result["shapes"] if shape["status"] == "regressed"]
    assert regressed["cause"] == cause
    assert (cause in regressed["reasons"]) if cause else len(regressed["reasons"]) == 2
    text = compare(capsys, str(before), str(after), code=1)
    assert (cause is not None) == ("slower because it waited" in " ".join(text.split()))
