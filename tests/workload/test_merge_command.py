"""``idxadvisor merge`` and the incremental mode of ``--save-workload``: nothing is counted twice, and what cannot be
counted honestly is refused in one line."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from idxadvisor.api import read_inputs
from idxadvisor.cli import run
from idxadvisor.config import Settings
from idxadvisor.workload import load_workload
from tests.conftest import FIXTURES_DIR

DEMO_LOG = FIXTURES_DIR / "demo" / "shop.log"


@pytest.fixture(scope="module")
def halves(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("halves")
    lines = DEMO_LOG.read_text(encoding="utf-8").splitlines(keepends=True)
    first, second = root / "day1.log", root / "day2.log"
    first.write_text("".join(lines[:1500]), encoding="utf-8")
    second.write_text("".join(lines[1500:]), encoding="utf-8")
    return first, second


def analyze(capsys: pytest.CaptureFixture[str], *arguments: str, code: int = 0) -> tuple[dict, str]:
    assert run(["analyze", *arguments, "--format", "json", "--fail-on", "never", "--jobs", "1"]) == code
    captured = capsys.readouterr()
    return json.loads(captured.out), captured.err


def without_inputs(report: dict) -> dict:
    return {key: value for key, value in report.items() if key not in ("inputs", "workload")}


ORDERED = ("PL001", "QY002")  # rules that read the order of executions: plan changes and bursts of lookups


def assert_same_but_where_the_log_was_cut(report: dict, whole: dict) -> None:
    """A log read again from where a workload counted it continues an input the workload sealed: a plan change or a
    burst of lookups that straddles the cut counts as two. Everything else is exactly the whole log's."""
    def without_order(document: dict) -> dict:
        kept = without_inputs(document)
        kept["shapes"] = [{key: value for key, value in shape.items() if key not in ("plan_switches", "burst")}
                          for shape in kept["shapes"]]
        kept["findings"] = [{key: value for key, value in finding.items()
                             if finding["rule"] not in ORDERED or key not in ("message", "impact", "details")}
                            for finding in kept["findings"]]
        kept["groups"] = [{key: value for key, value in group.items() if key != "impact"} for group in kept["groups"]]
        return kept

    assert without_order(report) == without_order(whole)
    for cut, entire in zip(report["shapes"], whole["shapes"]):
        assert abs(cut["plan_switches"] - entire["plan_switches"]) <= 1
        if entire["burst"] is not None:
            assert abs(cut["burst"]["bursts"] - entire["burst"]["bursts"]) <= 1


def test_merge_gives_the_digest_of_all_the_inputs(capsys: pytest.CaptureFixture[str], halves: tuple[Path, Path],
                                                  tmp_path: Path) -> None:
    saved = [tmp_path / "day1.json", tmp_path / "day2.json.gz"]
    for log, workload in zip(halves, saved):
        analyze(capsys, str(log), "--save-workload", str(workload))
    merged = tmp_path / "month.json"
    together, _ = analyze(capsys, *map(str, halves))
    assert run(["merge", *map(str, saved), "-o", str(merged)]) == 0
    whole, _ = read_inputs([str(log) for log in halves], Settings(jobs=1))
    assert capsys.readouterr().err == (f"idxadvisor: merged 2 workload files (2 inputs, {whole.operations:,} "
                                       f"operations, {len(whole.shapes)} shapes) into {merged}\n")
    assert [summary.path for summary in load_workload(merged).inputs] == [f"{merged}:{log}" for log in halves]
    assert without_inputs(analyze(capsys, str(merged))[0]) == without_inputs(together)


def test_merge_refuses_different_filters_and_inputs_counted_twice(capsys: pytest.CaptureFixture[str],
                                                                   halves: tuple[Path, Path], tmp_path: Path) -> None:
    plain, slow, again = tmp_path / "plain.json", tmp_path / "slow.json", tmp_path / "again.json"
    analyze(capsys, str(halves[0]), "--save-workload", str(plain))
    analyze(capsys, str(halves[1]), "--save-workload", str(slow), "--min-ms", "100")
    analyze(capsys, str(halves[0]), str(halves[1]), "--save-workload", str(again))
    assert run(["merge", str(plain), str(slow), "-o", str(tmp_path / "out.json")]) == 2
    assert capsys.readouterr().err == (f"idxadvisor: error: {slow} was recorded with --min-ms 100 and {plain} with "
                                       "--min-ms 0: digests of different operations cannot be added up; record them "
                                       "again with the same --min-ms, --since and --until\n")
    assert run(["merge", str(plain), str(again), "-o", str(tmp_path / "out.json")]) == 2
    assert capsys.readouterr().err == (f"idxadvisor: error: {again} and {plain} both counted {halves[0]} (same size "
                                       "and first 64 KiB): merging them would count its operations twice\n")
    assert not (tmp_path / "out.json").exists()


def test_an_existing_workload_file_is_extended_with_what_it_has_not_counted(
        capsys: pytest.CaptureFixture[str], halves: tuple[Path, Path], tmp_path: Path) -> None:
    workload = tmp_path / "fleet.json"
    first, _ = analyze(capsys, str(halves[0]), "--save-workload", str(workload))
    assert first["workload"] is None
    report, err = analyze(capsys, str(halves[0]), str(halves[1]), "--save-workload", str(workload))
    assert err == f"idxadvisor: warning: {halves[0]}: counted in {workload} already: skipped\n"
    assert report["workload"] == {"path": str(workload), "added": [str(halves[1])],
                                  "skipped": [f"{halves[0]}: counted in {workload} already: skipped"], "error": None}
    assert [item["path"] for item in report["inputs"]] == [f"{workload}:{halves[0]}", str(halves[1])]
    together, _ = analyze(capsys, *map(str, halves))
    assert without_inputs(report) == without_inputs(together)


def test_a_log_that_grew_is_read_from_where_it_was_counted(capsys: pytest.CaptureFixture[str],
                                                            halves: tuple[Path, Path], tmp_path: Path) -> None:
    log, workload = tmp_path / "mongod.log", tmp_path / "w.json"
    log.write_bytes(halves[0].read_bytes())
    analyze(capsys, str(log), "--save-workload", str(workload))
    with open(log, "ab") as handle:
        handle.write(halves[1].read_bytes())
    rotated = tmp_path / "mongod.log.2026-11-03T00-00-00"  # mongod's logRotate renames the file it wrote
    log.rename(rotated)
    report, err = analyze(capsys, str(rotated), "--save-workload", str(workload))
    assert err == "" and report["workload"]["added"] == [str(rotated)]
    (summary,) = load_workload(workload).inputs
    lines = DEMO_LOG.read_bytes().count(b"\n")
    assert (summary.path, summary.lines, summary.bytes) == (f"{workload}:{rotated}", lines, DEMO_LOG.stat().st_size)
    whole, _ = analyze(capsys, str(DEMO_LOG))
    assert_same_but_where_the_log_was_cut(report, whole)
    assert report["inputs"][0]["lines"] == whole["inputs"][0]["lines"]


def test_a_compressed_log_is_passed_over_up_to_what_was_counted(capsys: pytest.CaptureFixture[str],
                                                                 halves: tuple[Path, Path], tmp_path: Path) -> None:
    log, workload = tmp_path / "mongod.log", tmp_path / "w.json"
    log.write_bytes(halves[0].read_bytes())
    analyze(capsys, str(log), "--save-workload", str(workload))
    compressed = tmp_path / "mongod.log.1.gz"  # rotated, grown a little more, then compressed
    compressed.write_bytes(gzip.compress(halves[0].read_bytes() + halves[1].read_bytes()))
    report, _ = analyze(capsys, str(compressed), "--save-workload", str(workload))
    whole, _ = analyze(capsys, str(DEMO_LOG))
    assert_same_but_where_the_log_was_cut(report, whole)


@pytest.mark.parametrize(("counted", "later", "message"), [
    (lambda data: data, lambda data: data[:-5000], "is smaller than when {workload} counted it"),
    (lambda data: data[:-1], lambda data: data + b"\n", "grew since {workload} counted it, but that read ended inside "
                                                        "a line"),
], ids=["truncated", "counted-while-written"])
def test_what_cannot_be_counted_honestly_is_refused(capsys: pytest.CaptureFixture[str], halves: tuple[Path, Path],
                                                    tmp_path: Path, counted, later,  # noqa: ANN001
                                                    message: str) -> None:
    log, workload = tmp_path / "mongod.log", tmp_path / "w.json"
    data = halves[0].read_bytes()
    log.write_bytes(counted(data))
    analyze(capsys, str(log), "--save-workload", str(workload))
    before = workload.read_bytes()
    log.write_bytes(later(data))
    assert run(["analyze", str(log), "--save-workload", str(workload), "--format", "json"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"idxadvisor: error: {log} " + message.format(workload=workload)) and err.count("\n") == 1
    assert workload.read_bytes() == before


def test_an_existing_workload_is_only_extended_with_its_own_filters(capsys: pytest.CaptureFixture[str],
                                                                    halves: tuple[Path, Path], tmp_path: Path) -> None:
    workload = tmp_path / "w.json"
    analyze(capsys, str(halves[0]), "--save-workload", str(workload))
    assert run(["analyze", str(halves[1]), "--save-workload", str(workload), "--min-ms", "50"]) == 2
    assert "--save-workload: " + str(workload) + " was recorded with --min-ms 0, and this run asks for --min-ms 50" \
        in capsys.readouterr().err


def test_a_file_that_is_not_a_workload_is_never_overwritten(capsys: pytest.CaptureFixture[str],
                                                            halves: tuple[Path, Path], tmp_path: Path) -> None:
    precious = tmp_path / "settings.json"
    precious.write_text('{"keep": "me"}\n', encoding="utf-8")
    assert run(["analyze", str(halves[0]), "--save-workload", str(precious), "--format", "json"]) == 2
    assert capsys.readouterr().err == (f"idxadvisor: error: --save-workload: {precious}: not a workload file (no "
                                       '"kind": "idxadvisor-workload"); it is only added to when it is a workload '
                                       "file: name a new file, or delete this one to start afresh\n")
    assert precious.read_text(encoding="utf-8") == '{"keep": "me"}\n'


def test_merge_takes_workload_files_only(capsys: pytest.CaptureFixture[str], halves: tuple[Path, Path],
                                         tmp_path: Path) -> None:
    assert run(["merge", str(halves[0]), "-o", str(tmp_path / "out.json")]) == 2
    assert capsys.readouterr().err == (f"idxadvisor: error: {halves[0]}: not a workload file: merge takes the files "
                                       "'analyze --save-workload' writes (name logs to analyze, with --save-workload "
                                       "to record them)\n")
    assert run(["merge", str(tmp_path / "missing.json"), "-o", str(tmp_path / "out.json")]) == 2
    assert capsys.readouterr().err.startswith(f"idxadvisor: error: {tmp_path / 'missing.json'}: cannot read the "
                                              "workload file: no such file or directory")
    assert not (tmp_path / "out.json").exists()
