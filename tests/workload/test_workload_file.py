"""Workload files: every statistic survives a save and a load, a workload analyses like its logs, no value leaks."""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import json
import re
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from idxadvisor.api import analyze, read_inputs
from idxadvisor.cli import run
from idxadvisor.config import Settings
from idxadvisor.errors import InputError, UsageError
from idxadvisor.models.events import Event
from idxadvisor.shapes.digest import CappedSet, Digest, RunLog, ShapeStats, TimeBucket, Timeline
from idxadvisor.shapes.literals import FieldLiterals, LiteralStats
from idxadvisor.shapes.shape import shape_of
from idxadvisor.shapes.sketch import DurationHistogram
from idxadvisor.shapes.timing import TimeBreakdown
from idxadvisor.workload import load_workload, redact_command, save_workload
from idxadvisor.workload.codec import NOT_SAVED
from tests.conftest import FIXTURES_DIR
from tests.helpers import json_line, slow_attr

DEMO_LOG = FIXTURES_DIR / "demo" / "shop.log"
#: Every class a ShapeStats holds, besides the shape itself (saved as its components and rebuilt).
HELD_CLASSES = (ShapeStats, DurationHistogram, CappedSet, Timeline, TimeBucket, RunLog, LiteralStats, FieldLiterals,
                TimeBreakdown)


def _perturbed(value: Any, field_type: str) -> Any:
    """A value of the same kind as ``value`` that differs from it (and from the field's default)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 7
    if isinstance(value, float):
        return value + 0.5
    if isinstance(value, str) or (value is None and "str" in field_type):
        return f"{value}-perturbed"
    if value is None and "datetime" in field_type:
        return datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
    return value


def perturb(instance: Any) -> None:
    """Give every scalar field of a dataclass, and of the dataclasses it holds, a value of its own."""
    for field in dataclasses.fields(instance):
        if (type(instance), field.name) in NOT_SAVED:
            continue
        value = getattr(instance, field.name)
        if dataclasses.is_dataclass(value) and not isinstance(value, type) and type(value) in HELD_CLASSES:
            perturb(value)
        elif isinstance(value, dict):
            for item in value.values():
                if type(item) in HELD_CLASSES:
                    perturb(item)
        else:
            changed = _perturbed(value, str(field.type))
            if changed is not value:
                setattr(instance, field.name, changed)


def assert_same(original: Any, loaded: Any, where: str) -> None:
    """Field by field through every class a ShapeStats holds; fails naming the first field that differs."""
    if type(original) in HELD_CLASSES:
        assert type(loaded) is type(original), where
        for field in dataclasses.fields(original):
            if (type(original), field.name) in NOT_SAVED:
                continue
            mine, theirs = getattr(original, field.name), getattr(loaded, field.name)
            if field.name == "_latest":
                assert (mine is None) == (theirs is None), f"{where}._latest"
                if mine is not None:
                    assert (theirs.ns, theirs.op, theirs.ts) == (mine.ns, mine.op, mine.ts), f"{where}._latest"
                continue
            if field.name == "runs" and type(original) is RunLog:
                mine, theirs = sorted(mine), sorted(theirs)
            if field.name == "members" and type(original) is CappedSet:  # a tuple while small, else a set
                mine, theirs = set(mine), set(theirs)
            assert_same(mine, theirs, f"{where}.{field.name}")
    elif isinstance(original, dict):
        assert original.keys() == loaded.keys(), where
        for key in original:
            assert_same(original[key], loaded[key], f"{where}[{key!r}]")
    else:
        assert original == loaded, f"{where}: {original!r} != {loaded!r}"


@pytest.fixture(scope="module")
def demo_digest() -> tuple[Digest, list]:
    return read_inputs([str(DEMO_LOG)], Settings(jobs=1))


def test_every_field_of_every_class_a_shape_holds_is_saved_and_restored(demo_digest: tuple, tmp_path: Path) -> None:
    digest, inputs = demo_digest
    first = next(iter(digest.shapes.values()))
    first.connections.capped = True
    first.timeline.buckets.setdefault(29_000_000, TimeBucket(bins={3: 2}))
    first.runs = RunLog([(1.0, 2.0)])  # a shape that is not an aggregation shares an empty log
    first.server_hashes.setdefault("queryHash", CappedSet()).add("ABCD1234")
    first.timing = TimeBreakdown()
    first.timing.add({"queued_ms": 200.5, "write_conflicts": 3, "bytes_read": 4096}, 250)
    perturb(first)
    path = tmp_path / "workload.json"
    save_workload(path, digest, inputs)
    loaded = load_workload(path)
    assert loaded.digest.shapes.keys() == digest.shapes.keys()
    for fingerprint, stats in digest.shapes.items():
        assert_same(stats, loaded.digest.shapes[fingerprint], fingerprint)
    assert loaded.digest.skipped == digest.skipped


def test_a_perturbed_field_that_is_not_restored_fails_the_comparison(demo_digest: tuple) -> None:
    stats = next(iter(demo_digest[0].shapes.values()))
    copy = dataclasses.replace(stats, duration=dataclasses.replace(stats.duration, n=stats.duration.n + 1))
    with pytest.raises(AssertionError, match="duration.n"):
        assert_same(stats, copy, "shape")


def test_a_structured_field_without_a_codec_fails_loudly(tmp_path: Path, demo_digest: tuple) -> None:
    digest = Digest()
    stats = next(iter(demo_digest[0].shapes.values()))
    digest.shapes["x"] = dataclasses.replace(stats, internal_reason=["not", "a", "scalar"])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="ShapeStats.internal_reason .* no workload codec"):
        save_workload(tmp_path / "w.json", digest, [])


def report_without_inputs(capsys: pytest.CaptureFixture[str], *arguments: str) -> dict:
    assert run(["analyze", *arguments, "--format", "json", "--fail-on", "never", "--jobs", "1"]) == 0
    report = json.loads(capsys.readouterr().out)
    report.pop("inputs")
    return report


def test_a_workload_file_gives_the_report_of_the_logs_it_was_made_from(capsys: pytest.CaptureFixture[str],
                                                                        tmp_path: Path) -> None:
    workload = tmp_path / "workload.json"
    indexes = str(FIXTURES_DIR / "demo" / "indexes.json")
    from_logs = report_without_inputs(capsys, str(DEMO_LOG), "--indexes", indexes, "--save-workload", str(workload))
    from_workload = report_without_inputs(capsys, str(workload), "--indexes", indexes)
    assert from_logs["findings"] and from_logs == from_workload


def test_merging_workload_files_gives_what_reading_their_logs_together_gives(capsys: pytest.CaptureFixture[str],
                                                                             tmp_path: Path) -> None:
    lines = DEMO_LOG.read_text(encoding="utf-8").splitlines(keepends=True)
    halves = [tmp_path / "first.log", tmp_path / "second.log"]
    halves[0].write_text("".join(lines[: len(lines) // 2]), encoding="utf-8")
    halves[1].write_text("".join(lines[len(lines) // 2:]), encoding="utf-8")
    saved = []
    for half in halves:
        saved.append(tmp_path / f"{half.stem}.json.gz")
        report_without_inputs(capsys, str(half), "--save-workload", str(saved[-1]))
    assert gzip.decompress(saved[0].read_bytes()).startswith(b'{"kind":"idxadvisor-workload"')
    together = report_without_inputs(capsys, *map(str, halves))
    assert report_without_inputs(capsys, *map(str, saved)) == together
    assert report_without_inputs(capsys, str(halves[0]), str(saved[1])) == together  # logs and workloads mixed


def test_inputs_keep_their_counts_and_identity(tmp_path: Path, demo_digest: tuple) -> None:
    path = tmp_path / "w.json"
    save_workload(path, *demo_digest)
    (summary,) = load_workload(path).inputs
    assert summary.path == f"{path}:{DEMO_LOG}"
    assert (summary.format, summary.lines, summary.entries, summary.operations) == ("json-log", 3779, 1261, 1216)
    assert summary.bytes == DEMO_LOG.stat().st_size
    assert summary.head_sha256 == hashlib.sha256(DEMO_LOG.read_bytes()[: 64 * 1024]).hexdigest()


SECRETS = ["s3cr3t-name", "Porto-s3cr3t", 987654321, "5f1d7c0e9b1e8a3c2d4f6a8b", "2031-02-03T04:05:06.000Z",
           "p@ss-in-update", "doc-secret", "regex-s3cr3t", "elem-s3cr3t", 424242.5, "expr-s3cr3t", "let-s3cr3t",
           "comment-s3cr3t", "arrayfilter-s3cr3t", "group-s3cr3t", "in-s3cr3t-1", "in-s3cr3t-2"]


def secret_log() -> str:
    """Slow queries whose every literal value is a marker that must not reach a workload file."""
    commands = [
        ("shop.orders", {"find": "orders", "filter": {"name": SECRETS[0], "city": {"$in": [SECRETS[15], SECRETS[16]]},
                                                       "_id": {"$oid": SECRETS[3]}, "at": {"$gte": {"$date": SECRETS[4]}},
                                                       "$or": [{"n": SECRETS[2]}, {"x": {"$regex": SECRETS[7]}}],
                                                       "items": {"$elemMatch": {"sku": SECRETS[8], "qty": {"$gt": SECRETS[9]}}},
                                                       "$expr": {"$eq": ["$a", SECRETS[10]]}},
                         "sort": {"at": -1}, "projection": {"name": 1, "x": {"$literal": SECRETS[1]}}, "limit": 5,
                         "let": {"v": SECRETS[11]}, "comment": SECRETS[12], "hint": {"name": 1}}),
        ("shop.orders", {"aggregate": "orders", "pipeline": [{"$match": {"city": SECRETS[1]}}, {"$sort": {"at": 1}},
                                                             {"$group": {"_id": "$city", "n": {"$sum": SECRETS[14]}}}],
                         "cursor": {}}),
        ("shop.orders", {"update": "orders", "updates": [{"q": {"name": SECRETS[0]}, "u": {"$set": {"pw": SECRETS[5]}},
                                                          "arrayFilters": [{"e.k": SECRETS[13]}], "multi": True}]}),
        ("shop.orders", {"findAndModify": "orders", "query": {"name": SECRETS[0]},
                         "update": {"name": SECRETS[6], "city": SECRETS[1]}, "new": True}),
        ("shop.orders", {"insert": "orders", "documents": [{"name": SECRETS[6], "n": SECRETS[2]}]}),
        ("shop.orders", {"count": "orders", "query": {"city": SECRETS[1]}}),
        ("shop.orders", {"distinct": "orders", "key": "city", "query": {"name": SECRETS[0]}}),
    ]
    start = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
    lines = []
    for number, (ns, command) in enumerate(commands):
        for run_number in range(3):
            ts = (start + timedelta(seconds=number * 60 + run_number)).isoformat(timespec="milliseconds")
            lines.append(json_line(slow_attr(command, ns=ns), ts=ts))
    return "\n".join(lines) + "\n"


def test_no_literal_value_of_the_log_survives_in_the_workload_file(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    log = tmp_path / "secrets.log"
    log.write_text(secret_log(), encoding="utf-8")
    workload = tmp_path / "w.json"
    report_without_inputs(capsys, str(log), "--save-workload", str(workload), "--show-values")
    text = workload.read_text(encoding="utf-8")
    leaked = [secret for secret in SECRETS if str(secret) in text]
    assert not leaked
    document = json.loads(text)
    commands = [shape["representative"]["command"] for shape in document["shapes"]]
    find = next(command for command in commands if "find" in command)
    assert find["sort"] == {"at": -1} and find["limit"] == 5 and find["hint"] == {"name": 1}
    assert find["filter"]["city"] == {"$in": "###"} and find["filter"]["at"] == {"$gte": "###"}
    assert find["filter"]["items"] == {"$elemMatch": {"sku": "###", "qty": {"$gt": "###"}}}
    assert find["filter"]["$expr"] == {"$eq": ["$a", "###"]} and "let" not in find and "comment" not in find
    assert next(command for command in commands if "insert" in command) == {"insert": "orders"}


def test_the_redacted_commands_keep_the_shapes_they_came_from(demo_digest: tuple, tmp_path: Path) -> None:
    from idxadvisor.shapes.shape import shape_of

    path = tmp_path / "w.json"
    save_workload(path, *demo_digest)
    for fingerprint, stats in load_workload(path).digest.shapes.items():
        event = stats._latest
        if event is not None and stats.shape.known:
            reshaped, _ = shape_of(Event(event.ns, event.op, command=event.command,
                                         originating_command=event.originating_command))
            assert reshaped.fingerprint == fingerprint, stats.shape.text


def test_filters_cannot_be_applied_again_to_a_digest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    workload = tmp_path / "w.json"
    report_without_inputs(capsys, str(DEMO_LOG), "--save-workload", str(workload), "--min-ms", "100")
    assert report_without_inputs(capsys, str(workload), "--min-ms", "100")["summary"]["operations"] == 1216
    assert run(["analyze", str(workload), "--since", "2026-11-02T09:10"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"idxadvisor: error: {workload} was recorded with --min-ms 100, and this run asks for "
                          "--min-ms 0 --since 2026-11-02T09:10:00+00:00") and err.count("\n") == 1


@pytest.mark.parametrize(("content", "message"), [
    (b'{"kind": "idxadvisor-workload", "schema_version": 99}', "schema_version 99 is not supported"),
    (b'{"kind": "idxadvisor-workload", "schema_version": 1, "shapes": [}', "is not JSON"),
    (b'{"kind": "idxadvisor-workload", "schema_version": 1, "filters": {}}', "damaged workload file"),
])
def test_a_bad_workload_file_is_an_input_error(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "w.json"
    path.write_bytes(content)
    with pytest.raises(InputError, match=message):
        load_workload(path)


@pytest.mark.parametrize(("where", "value", "message"), [
    (("count",), "12", r"shapes\[0\]\.count: must be a whole number"),
    (("count",), 1.5, r"shapes\[0\]\.count: must be a whole number"),
    (("count",), -5, r"shapes\[0\]\.count: is negative \(-5\)"),
    (("docs_examined",), -1e18, r"shapes\[0\]\.docs_examined: is negative \(-1e\+18\)"),
    (("docs_examined",), None, r"shapes\[0\]\.docs_examined: must be a whole number"),
    (("timeline", "buckets", 0, "total_ms"), "abc", r"shapes\[0\]\.timeline\.buckets\.total_ms: must be a number"),
    (("timeline", "buckets", 0, "max_ms"), [1], r"shapes\[0\]\.timeline\.buckets\.max_ms: must be a number"),
    (("connections", "capped"), 1, r"shapes\[0\]\.connections\.capped: must be true or false"),
    (("keys_examined",), 2**63, r"shapes\[0\]\.keys_examined: is out of range"),  # past any 64-bit counter
    (("duration", "n"), True, r"shapes\[0\]\.duration\.n: must be a whole number"),
    (("duration", "total"), -3.5, r"shapes\[0\]\.duration\.total: is negative"),
    (("internal_reason",), 3, r"shapes\[0\]\.internal_reason: must be text or null"),
    (("connections", "members"), ["conn1", 7], "a set of names holds something other than text"),
    (("timeline", "buckets", 0, "start"), 2**40, "timeline minute .* is out of range"),
    (("plan_costs",), {"COLLSCAN": {}}, "a plan's cost counts no execution"),
    (("plans",), {"COLLSCAN": -3}, r"shapes\[0\]\.plans: plans\['COLLSCAN'\] is negative"),
    (("plans",), ["COLLSCAN"], r"shapes\[0\]\.plans: must be an object, not a list"),
    (("apps",), {"shop": "7"}, r"shapes\[0\]\.apps: apps\['shop'\] must be a whole number"),
    (("shape", "ns"), 7, r"shapes\[0\]\.shape: ns must be text"),
    (("shape",), None, r"shapes\[0\]\.shape: a value of the wrong type"),
    (("internal_reason",), "x" * (1 << 20 | 1), r"shapes\[0\]\.internal_reason: is longer than 1,048,576"),
])
def test_a_workload_file_with_a_number_of_the_wrong_kind_is_damaged(tmp_path: Path, demo_digest: tuple,
                                                                     where: tuple, value: Any, message: str) -> None:
    """A hand-edited or damaged number is refused as the file is read, not met half-way through the analysis as an
    internal error (a string count once ended a run in a division)."""
    path = tmp_path / "w.json"
    save_workload(path, *demo_digest)
    document = json.loads(path.read_text())
    target = document["shapes"][0]
    for step in where[:-1]:
        target = target[step]
    target[where[-1]] = value
    path.write_text(json.dumps(document))
    with pytest.raises(InputError, match=f"^{re.escape(str(path))}: damaged workload file: .*{message}"):
        load_workload(path)


@pytest.mark.parametrize(("where", "value", "message"), [
    (("skipped", "fast"), -1e30, r"skipped: skipped\['fast'\] is out of range"),
    (("skipped", "fast"), -5, r"skipped: skipped\['fast'\] is negative"),
    (("skipped",), [], "skipped: must be an object, not a list"),
    (("inputs", 0, "lines"), -1, r"inputs\[0\]: lines is negative \(-1\)"),
    (("inputs", 0, "path"), 5, r"inputs\[0\]: path must be text"),
    (("filters", "min_ms"), -1, r"filters\.min_ms: is negative \(-1\)"),
    (("filters", "since"), 5, "filters.since: must be an ISO 8601 time or null"),
    (("shapes",), {"a": 1}, "shapes: must be a list"),
    (("shapes", 0), "x", r"shapes\[0\]: must be an object, not text"),
])
def test_damage_outside_the_shapes_names_the_field(tmp_path: Path, demo_digest: tuple, where: tuple, value: Any,
                                                   message: str) -> None:
    path = tmp_path / "w.json"
    save_workload(path, *demo_digest)
    document = json.loads(path.read_text())
    target = document
    for step in where[:-1]:
        target = target[step]
    target[where[-1]] = value
    path.write_text(json.dumps(document))
    with pytest.raises(InputError, match=f"^{re.escape(str(path))}: damaged workload file: {message}"):
        load_workload(path)


def _leaves(value: Any, where: tuple = ()) -> list[tuple]:
    """Every place in a JSON document (the first item of each list stands for the rest)."""
    found = [where] if where else []
    if isinstance(value, dict):
        for key, item in value.items():
            found += _leaves(item, (*where, key))
    elif isinstance(value, list) and value:
        found += _leaves(value[0], (*where, 0))
    return found


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_a_damaged_workload_file_is_an_input_error_or_a_report_never_an_internal_error(
        demo_digest: tuple, data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "w.json"
        save_workload(path, *demo_digest)
        document = json.loads(path.read_text())
        document["shapes"] = document["shapes"][:3]
        where = data.draw(st.sampled_from(_leaves(document)))
        target = document
        for step in where[:-1]:
            target = target[step]
        target[where[-1]] = data.draw(st.sampled_from(["x", None, -1, 1.5, True, [], {}, 2**63, 10**30, -2**63]))
        path.write_text(json.dumps(document))
        try:
            report = analyze([str(path)], Settings(format="json", jobs=1, fail_on="never"))
        except (InputError, UsageError) as exc:
            assert str(path) in str(exc) and "\n" not in str(exc)
        else:  # a value of the right kind after all (-1 where a number may be negative, [] for the list of inputs)
            assert report.summary.shapes == len(report.shapes) <= 3


def test_counts_saved_as_doubles_are_read_back(tmp_path: Path, demo_digest: tuple) -> None:
    path = tmp_path / "w.json"
    save_workload(path, *demo_digest)
    document = json.loads(path.read_text())
    document["shapes"][0]["skip_total"] = 10.0  # a $skip the log wrote as a double
    path.write_text(json.dumps(document))
    loaded = load_workload(path).digest.shapes.values()
    assert 10.0 in {stats.skip_total for stats in loaded} and len(loaded) == len(demo_digest[0].shapes)


def test_a_workload_on_stdin_is_refused_with_its_reason(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch, demo_digest: tuple) -> None:
    import io
    import sys

    path = tmp_path / "w.json"
    save_workload(path, *demo_digest)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(path.read_bytes())))
    assert run(["analyze", "-", "--format", "json"]) == 2
    captured = capsys.readouterr()  # nothing else was read: one line, no report
    assert captured.out == "" and captured.err.count("\n") == 1
    assert "a workload file is read only when named as a file" in captured.err
    assert captured.err.endswith(": nothing to analyze\n")


def test_saving_into_a_missing_directory_is_a_usage_error(tmp_path: Path, demo_digest: tuple) -> None:
    with pytest.raises(UsageError, match="--save-workload: cannot write"):
        save_workload(tmp_path / "nope" / "w.json", *demo_digest)


@pytest.mark.parametrize(("condition", "kept"), [
    ({"$regex": "^smith", "$options": ""}, {"$regex": "^###", "$options": ""}),  # a prefix an index seeks to
    ({"$regex": "^smith", "$options": "i"}, {"$regex": "^(?:###)", "$options": "i"}),  # anchored, case-insensitive
    ({"$regex": "son$"}, {"$regex": "###"}),  # a search inside the value
    ({"$regularExpression": {"pattern": "^ab.c", "options": "s"}},
     {"$regularExpression": {"pattern": "^###", "options": "s"}}),
    ({"$regularExpression": {"pattern": "^ab", "options": "m"}},  # ^ with m anchors every line: no prefix to seek
     {"$regularExpression": {"pattern": "^(?:###)", "options": "m"}}),
])
def test_a_regex_keeps_its_kind_and_loses_its_text(condition: dict, kept: dict) -> None:
    command = {"find": "people", "filter": {"lastName": condition}}
    redacted = redact_command(command)
    assert redacted["filter"]["lastName"] == kept
    original, _ = shape_of(Event("crm.people", "find", command=command))
    again, _ = shape_of(Event("crm.people", "find", command=redacted))
    assert again.fingerprint == original.fingerprint  # regex-prefix or regex-unanchored, as the log had it


@pytest.mark.parametrize("damage", ["negative count", "not json", "wrong kind of value"])
def test_a_damaged_workload_file_is_an_input_error_and_the_other_inputs_are_reported(
        tmp_path: Path, demo_digest: tuple, capsys: pytest.CaptureFixture[str], damage: str) -> None:
    """Like a corrupt .gz: one error line naming the file and the field, exit 2, and the logs beside it analysed."""
    workload = tmp_path / "w.json"
    save_workload(workload, *demo_digest)
    document = json.loads(workload.read_text())
    if damage == "negative count":
        document["shapes"][0]["count"] = -5
        workload.write_text(json.dumps(document))
        expected = "damaged workload file: shapes[0].count: is negative (-5)"
    elif damage == "not json":
        workload.write_text(json.dumps(document)[:-40])
        expected = "the workload file is not JSON"
    else:
        document["inputs"][0]["bytes"] = "many"
        workload.write_text(json.dumps(document))
        expected = "damaged workload file: inputs[0]: bytes must be a whole number"
    code = run(["analyze", str(workload), str(DEMO_LOG), "--format", "json", "--fail-on", "never"])
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert code == 2
    assert [(item["path"], item["error"] is None) for item in report["inputs"]] == [(str(DEMO_LOG), True),
                                                                                    (str(workload), False)]
    assert report["summary"]["operations"] == 1216 and report["shapes"]  # the log is read and reported
    assert captured.err.startswith(f"idxadvisor: error: {workload}: {expected}") and captured.err.count("\n") == 1
