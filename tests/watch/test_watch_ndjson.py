"""``idxadvisor watch`` as a real process without a terminal: NDJSON lines while it follows, the report at the end.

Every test bounds its waits (``process.DEADLINE``) and uses a short ``--interval``; the counts asserted are exact.
"""

from __future__ import annotations

import json
import signal
import subprocess
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from idxadvisor.testing.logwriter import text_entry
from tests.helpers import json_line, slow_attr
from tests.watch.process import WatchProcess, operations, shape_counts

ORDERS = "find shop.orders {status: eq}"
USERS = "find shop.users {email: eq}"


def entries(count: int, collection: str = "orders", field: str = "status", start: int = 0) -> str:
    return "".join(json_line(slow_attr({"find": collection, "filter": {field: number}}, ns=f"shop.{collection}"),
                             ctx=f"conn{number}") + "\n" for number in range(start, start + count))


def append(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as handle:
        handle.write(text)


def _time(line: dict) -> datetime:
    return datetime.fromisoformat(line["time"].replace("Z", "+00:00"))


def report_of(text: str) -> dict:
    return json.loads(text)


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "mongod.log"
    path.write_text("")
    return path


def test_lines_appended_show_a_new_shape_within_one_interval(log: Path) -> None:
    append(log, entries(3))  # there before the watch starts: not counted (it follows what is written from now on)
    interval = 0.3
    watch = WatchProcess(str(log), "--interval", str(interval))
    try:
        first = watch.next_line()
        assert operations(first) == 0 and first["window"]["shapes"] == []
        append(log, entries(4))
        seen = watch.wait_for(lambda line: operations(line) == 4)
        assert shape_counts(seen["window"]) == {ORDERS: 4} and shape_counts(seen["total"]) == {ORDERS: 4}
        appended = datetime.now(timezone.utc)
        append(log, entries(2, "users", "email"))
        # the first line written an interval after the append (by the watch's own clock: this reader may lag)
        later = watch.wait_for(lambda line: _time(line) >= appended + timedelta(seconds=interval))
        assert shape_counts(later["window"]) == {ORDERS: 4, USERS: 2}
        assert all(shape["rate_per_s"] > 0 for shape in later["window"]["shapes"])
        code, report, _ = watch.end()
    finally:
        watch.kill()
    assert code == 0
    assert "6 operations" in report and "2 shapes" in report  # the text report, the default --format
    assert report.rstrip().splitlines()[-1].startswith("exit 0: no finding at or above warning")  # analyze's verdict


def test_a_rename_rotation_loses_nothing_and_counts_nothing_twice(log: Path, tmp_path: Path) -> None:
    watch = WatchProcess(str(log), "--interval", "0.2", "--format", "json")
    try:
        watch.next_line()
        append(log, entries(5))
        watch.wait_for(lambda line: operations(line) == 5)
        rotated = tmp_path / "mongod.log.1"
        log.rename(rotated)
        append(rotated, entries(3, start=100))  # the server writes on until it reopens its log
        append(rotated, entries(1, start=200).rstrip("\n"))  # its last line, unterminated
        watch.wait_for(lambda line: operations(line) == 8)
        append(log, entries(4, "users", "email"))
        last = watch.wait_for(lambda line: operations(line) == 13)
        assert shape_counts(last["total"]) == {ORDERS: 9, USERS: 4}
        code, text, stderr = watch.end(signal.SIGINT)
    finally:
        watch.kill()
    assert code == 0, stderr
    report = report_of(text)
    assert report["summary"]["operations"] == 13
    assert [(item["path"], item["operations"]) for item in report["inputs"]] == [
        (str(log), 9), (f"{log} (after rotation 1)", 4)]
    assert {shape["shape"]: shape["count"] for shape in report["shapes"]} == {ORDERS: 9, USERS: 4}


def test_a_copytruncate_loses_nothing_and_counts_nothing_twice(log: Path, tmp_path: Path) -> None:
    watch = WatchProcess(str(log), "--interval", "0.2", "--format", "json")
    try:
        watch.next_line()
        append(log, entries(6))
        watch.wait_for(lambda line: operations(line) == 6)
        (tmp_path / "mongod.log.1").write_bytes(log.read_bytes())  # logrotate's copy, then the truncation
        with log.open("r+") as handle:
            handle.truncate(0)
        append(log, entries(2, "users", "email"))
        watch.wait_for(lambda line: operations(line) == 8)
        append(log, entries(1, "users", "email", start=50))
        watch.wait_for(lambda line: operations(line) == 9)
        code, text, stderr = watch.end(signal.SIGTERM)  # SIGTERM ends it with the report too
    finally:
        watch.kill()
    assert code == 0, stderr
    report = report_of(text)
    assert report["summary"]["operations"] == 9
    assert [item["operations"] for item in report["inputs"]] == [6, 3]
    assert {shape["shape"]: shape["count"] for shape in report["shapes"]} == {ORDERS: 6, USERS: 3}


def test_a_file_that_appears_later_is_followed_from_its_first_line(tmp_path: Path) -> None:
    later = tmp_path / "later.log"
    watch = WatchProcess(str(later), "--interval", "0.2", "--once-idle", "1.5", "--format", "json")
    try:
        waiting = watch.next_line()
        assert waiting["input"]["status"] == f"waiting for {later} to appear"
        append(later, entries(3))
        seen = watch.wait_for(lambda line: operations(line) == 3)
        assert seen["input"]["status"] is None
        code, text, _ = watch.end(None)  # --once-idle: it ends by itself
    finally:
        watch.kill()
    assert code == 0
    assert report_of(text)["summary"]["operations"] == 3


def test_stdin_is_read_as_it_arrives_and_its_end_ends_the_watch(tmp_path: Path) -> None:
    """A ≤4.2 text log on stdin; the end of the pipe ends the watch with the report, and the workload is saved."""
    start = datetime(2020, 3, 1, 12, 0, tzinfo=timezone.utc)
    attr = {"type": "command", "ns": "shop.orders", "command": {"find": "orders", "filter": {"status": "A"}},
            "planSummary": "COLLSCAN", "keysExamined": 0, "docsExamined": 5000, "nreturned": 2,
            "durationMillis": 150}
    text = "".join(text_entry(start + timedelta(seconds=number), f"conn{number}", attr) + "\n" for number in range(7))
    workload = tmp_path / "watched.json"
    watch = WatchProcess("-", "--interval", "0.2", "--format", "json", "--save-workload", str(workload),
                         stdin=subprocess.PIPE)
    assert watch.process.stdin is not None
    try:
        watch.process.stdin.write(text[:len(text) // 2].encode())  # half a line at the end: held back
        watch.process.stdin.flush()
        held = watch.wait_for(lambda line: operations(line) > 0)
        assert operations(held) == 3
        watch.process.stdin.write(text[len(text) // 2:].encode())
        watch.process.stdin.close()
        code, report_text, stderr = watch.end(None)
    finally:
        watch.kill()
    assert code == 1, stderr  # a warning finding (a collection scan examining 2,500 per returned): as analyze
    report = report_of(report_text)
    assert report["summary"]["operations"] == 7
    assert report["inputs"][0]["format"] == "text-log"
    assert report["findings"] and report["findings"][0]["rule"] == "IX004"
    saved = json.loads(workload.read_text())
    assert sum(shape["count"] for shape in saved["shapes"]) == 7


def test_a_workload_file_recorded_with_other_filters_is_refused_before_watching(log: Path, tmp_path: Path) -> None:
    workload = tmp_path / "w.json"
    watch = WatchProcess(str(log), "--interval", "0.2", "--once-idle", "0.5", "--save-workload", str(workload))
    try:
        code, _, stderr = watch.end(None)
    finally:
        watch.kill()
    assert code == 0 and workload.exists()
    watch = WatchProcess(str(log), "--min-ms", "100", "--save-workload", str(workload))
    try:
        code, _, stderr = watch.end(None)
    finally:
        watch.kill()
    assert code == 2
    assert "was recorded with --min-ms 0" in stderr


def test_a_new_finding_is_announced_once(log: Path) -> None:
    scans = "".join(json_line(slow_attr({"find": "orders", "filter": {"status": number}}, docsExamined=5000,
                                        nreturned=2, durationMillis=150), ctx=f"conn{number}") + "\n"
                    for number in range(5))
    watch = WatchProcess(str(log), "--interval", "0.2")
    try:
        watch.next_line()
        append(log, scans)
        announced = watch.wait_for(lambda line: bool(line["new_findings"]))
        assert [(item["rule"], item["ns"]) for item in announced["new_findings"]] == [("IX004", "shop.orders")]
        assert announced["new_findings"][0]["index"]["key"] == [["status", 1]]
        assert announced["suggested_indexes"][0]["command"].endswith("orders.createIndex({ status: 1 })")
        later = [watch.next_line(), watch.next_line()]
        assert [(line["new_findings"], line["findings"]) for line in later] == [([], 1), ([], 1)]
        code, _, _ = watch.end()
    finally:
        watch.kill()
    assert code == 1  # the finding is a warning: analyze's exit code


def test_the_filters_apply_to_the_view_and_the_report() -> None:
    watch = WatchProcess("-", "--interval", "0.2", "--ns", "shop.users", "--format", "json", stdin=subprocess.PIPE)
    assert watch.process.stdin is not None
    try:
        watch.process.stdin.write((entries(3) + entries(2, "users", "email")).encode())
        watch.process.stdin.close()
        code, text, stderr = watch.end(None)
        last = watch.wait_for(lambda line: line["finished"], timeout=1)
    finally:
        watch.kill()
    assert code == 0, stderr
    assert last["input"]["operations"] == 5  # read
    assert last["total"]["operations"] == 2 and shape_counts(last["total"]) == {USERS: 2}  # in scope
    assert shape_counts(last["window"]) == {USERS: 2}
    report = report_of(text)
    assert [shape["shape"] for shape in report["shapes"]] == [USERS]
    assert report["summary"]["excluded"] == {"namespace not matched by --ns": 3}


def test_app_keeps_only_the_named_applications_operations() -> None:
    """``--app`` filters a watch as it filters analyze: the digest (and so the view and the report) holds only the
    operations of the applications it names."""
    dashboard = "".join(json_line(slow_attr({"find": "orders", "filter": {"status": number}}, appName="dashboard"),
                                  ctx=f"conn{number}") + "\n" for number in range(3))
    watch = WatchProcess("-", "--interval", "0.2", "--app", "dash*", "--format", "json", stdin=subprocess.PIPE)
    assert watch.process.stdin is not None
    try:
        watch.process.stdin.write((dashboard + entries(2, "users", "email")).encode())
        watch.process.stdin.close()
        code, text, stderr = watch.end(None)
    finally:
        watch.kill()
    assert code == 0, stderr
    report = report_of(text)
    assert [(shape["shape"], shape["count"]) for shape in report["shapes"]] == [(ORDERS, 3)]
    assert report["summary"]["excluded"] == {"application not matched by --app": 2}
