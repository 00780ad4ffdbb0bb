"""The C block scan (idxadvisor._speedups) gives exactly what the Python path gives: events, problems, statistics.

Every corpus file, every fixture log and generated blocks (hostile bytes included: NUL, invalid UTF-8, CRLF, a BOM,
very long lines, lines cut at piece ends) go through ``BlockParser`` twice, once with the compiled scan and once on
the Python path, and the two results must be equal. Skipped when the extension is not built, unless
``IDXADVISOR_REQUIRE_SPEEDUPS=1`` (CI) makes that a failure.
"""

from __future__ import annotations

import gzip
import itertools
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from idxadvisor.models.events import JSON_LOG, PROFILE, TEXT_LOG
from idxadvisor.parse import accel, block, textlog
from idxadvisor.parse.block import BlockOptions, BlockParser, BlockStats
from tests.conftest import FIXTURES_DIR
from tests.helpers import CollectingSink, compiled_speedups

_speedups = compiled_speedups("scan_json_block")

OPTIONS = BlockOptions(reference_year=2024, keep_excerpts=True, max_problem_examples=50)
PIECE = 64 * 1024
MODES = (JSON_LOG, TEXT_LOG)  # the modes with a compiled scan


def _parse(pieces: list[bytes], compiled: bool, mode: str = JSON_LOG) -> tuple[list[Any], BlockStats]:
    saved = block._scan_json_block, block._scan_text_block
    block._scan_json_block = _speedups.scan_json_block if compiled else None
    block._scan_text_block = _speedups.scan_text_block if compiled else None
    try:
        sink = CollectingSink()
        parser = BlockParser(mode, OPTIONS, sink)
        for piece in pieces:
            parser.feed(piece)
        return sink.events, parser.finish()
    finally:
        block._scan_json_block, block._scan_text_block = saved


def _comparable(stats: BlockStats) -> dict[str, Any]:
    """The stats with pairing's marks (compared by identity) and held events spelled out as values."""
    marks = ("early_statements", "tail_statements")
    values = {name: getattr(stats, name) for name in BlockStats.__dataclass_fields__ if name not in marks}
    values["held_wrappers"] = [vars(event) for event in stats.held_wrappers]
    for name in marks:
        values[name] = [(mark.key, mark.ts_ms, mark.query, mark.coarse, mark.claimed) for mark in getattr(stats, name)]
    return values


def assert_same(pieces: list[bytes], mode: str = JSON_LOG) -> None:
    # Both readings share the text-log body memo (their events then share each body's ShapeSlot, compared by
    # identity): it starts empty here, so that it does not fill up and clear between them whatever ran before.
    textlog._BODY_MEMO.clear()
    compiled_events, compiled_stats = _parse(pieces, compiled=True, mode=mode)
    python_events, python_stats = _parse(pieces, compiled=False, mode=mode)
    assert _comparable(compiled_stats) == _comparable(python_stats)
    assert [vars(event) for event in compiled_events] == [vars(event) for event in python_events]


def newline_aligned(data: bytes, size: int) -> list[bytes]:
    """``data`` in pieces of about ``size`` bytes, each ending at a newline, as the readers cut a file."""
    pieces, start = [], 0
    while start < len(data):
        end = data.find(b"\n", start + size)
        end = len(data) if end < 0 else end + 1
        pieces.append(data[start:end])
        start = end
    return pieces


def _logs(root: Path) -> Iterator[Path]:
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.suffix not in (".md", ".py", ".json", ".yaml", ".bson"):
            yield path


def _read(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if path.suffix == ".gz" else data


def test_the_speedups_are_chosen_unless_turned_off() -> None:
    expected = os.environ.get(accel.PURE_PYTHON_VARIABLE, "") in ("", "0")
    assert (accel.speedups is not None) is expected
    assert (block._scan_json_block is not None) is expected
    assert accel.implementation() == ("C" if expected else "Python")


@pytest.mark.corpus
def test_every_corpus_file_parses_the_same(corpus_dir: Path) -> None:
    checked = 0
    for path in _logs(corpus_dir):
        data = _read(path)
        for mode in MODES:
            assert_same([data], mode)
            assert_same(newline_aligned(data, PIECE), mode)
        checked += 1
    assert checked >= 40


def test_every_fixture_log_parses_the_same() -> None:
    paths = [path for path in _logs(FIXTURES_DIR) if path.suffix in (".log", ".gz", "")]
    assert paths
    for path in paths:
        data = _read(path)
        for mode in MODES:
            assert_same([data], mode)
            assert_same(newline_aligned(data, 4096), mode)


def test_the_demo_log_finds_its_entries_on_both_paths() -> None:
    data = (FIXTURES_DIR / "demo" / "shop.log").read_bytes()
    events, stats = _parse([data], compiled=True)
    assert stats.json_entries == data.count(b'"id":51803') > 0
    assert len(events) == stats.operations > 0


def test_the_scan_reports_lines_bom_and_spans() -> None:
    line = b'{"t":{"$date":"2024-01-01T00:00:00Z"},"id":51803,"attr":{}}'
    build = b'{"t":{"$date":"2024-01-01T00:00:00Z"},"id":23403,"attr":{"buildInfo":{"version":"7.0.1"}}}'
    data = b"\xef\xbb\xbf" + line + b"\r\n" + build + b"\n" + line
    lines, bom, slow, builds = _speedups.scan_json_block(data, True)
    assert (lines, bom) == (3, 3)
    assert slow == [3, 3 + len(line) + 1, len(data) - len(line), len(data)]
    assert builds == [3 + len(line) + 2, 3 + len(line) + 2 + len(build)]
    assert _speedups.scan_json_block(data, False)[1:] == (0, None, None)  # a BOM not at a file's start
    assert _speedups.scan_json_block(b"", True) == (0, 0, None, None)
    with pytest.raises(TypeError):
        _speedups.scan_json_block(bytearray(data), True)


# -- generated blocks ---------------------------------------------------------------------------------------------

_STAMP = b'{"t":{"$date":"2024-03-01T10:00:00.000+00:00"},"s":"I",  "c":"COMMAND",  '
_SLOW = (_STAMP + b'"id":51803,   "ctx":"conn7","msg":"Slow query","attr":{"type":"command","ns":"shop.orders",'
         b'"command":{"find":"orders","filter":{"status":"A","qty":{"$gt":3}},"$db":"shop"},'
         b'"planSummary":"COLLSCAN","keysExamined":0,"docsExamined":900,"nreturned":2,"durationMillis":120}}')
_WRITE = (_STAMP.replace(b"COMMAND", b"WRITE") + b'"id":51803,   "ctx":"conn7","msg":"Slow query","attr":'
          b'{"type":"update","ns":"shop.orders","command":{"q":{"sku":"x"},"u":{"$set":{"a":1}}},'
          b'"keysExamined":1,"docsExamined":1,"nMatched":1,"durationMillis":40}}')
_BUILD = _STAMP + b'"id":23403,   "ctx":"initandlisten","msg":"Build Info","attr":{"buildInfo":{"version":"6.0.4"}}}'
_PLAIN = _STAMP + b'"id":22943,   "ctx":"listener","msg":"Connection accepted","attr":{"n":51803}}'
LINES = [
    _SLOW, _WRITE, _BUILD, _PLAIN,
    _SLOW.replace(b'"id":51803', b'"id": 51803'),  # hand-written spacing
    _SLOW.replace(b'"durationMillis":120', b'"durationMillis":-5'),  # a damaged value
    _SLOW[:-40],  # cut
    _SLOW.replace(b"orders", b"\xff\xfeord\x00ers"),  # invalid UTF-8 and a NUL
    _SLOW.replace(b'"attr":{', b'"attr":{"pad":"' + b"x" * 200_000 + b'",'),  # a very long line
    _STAMP + b'"id":51803}',  # no attr
    b'{"t":{"$date":"2024-03-01T10:00:00Z"},"id":51803,"attr":{"note":"id":51803}}',  # invalid JSON
    b'"id":51803',
    b"51803",
    b"",
    b"   ",
    b"\x00\x00\x00",
    b"2024-03-01T10:00:00.000+0000 I COMMAND  [conn1] command shop.orders command: find { find: 1 } 5ms",
    b'[{"t":{"$date":"x"}}]',
    b"\xef\xbb\xbf" + _SLOW,
    # text logs
    (b"2024-03-01T10:00:00.123+0000 I COMMAND  [conn9] command shop.orders appName: \"x\" command: find { find: "
     b'"orders", filter: { status: "A" } } planSummary: COLLSCAN keysExamined:0 docsExamined:900 nreturned:2 '
     b"reslen:300 locks:{} protocol:op_msg 120ms"),
    b"Mon Aug  5 20:21:42 [conn4] query test.foo query: { a: 1 } ntoreturn:0 nscanned:10 nreturned:1 reslen:40 9ms",
    b"Mon Aug  5 20:21:42 [initandlisten] db version v2.2.0, pdfile version 4.5",
    b"2024-03-01T10:00:00.123+0000 I CONTROL  [initandlisten] db version v4.0.10",
    b"2024-03-01T10:00:00.123+0000 I -        [conn1] something odd 17ms",  # a layout not understood
    b"2024-03-01T10:00:00.123+0000 I COMMAND  [conn1] command x.y command: find { find: 1 } 5ms\r",
    b"\xd9\xa2\xd9\xa0\xd9\xa2\xd9\xa4-03-01T10:00:00.123+0000 I COMMAND  [c] q 5ms",  # Arabic-Indic digits
    b"   \t",
    b"\tat frame 12ms",
    b"Mon Xyz  5 20:21:42 [conn4] 3ms",
    b"\xe9t\xe9 2024",
    b"mongos version 4.0.1 ms",
]

line_choice = st.sampled_from(LINES) | st.binary(max_size=80)
separators = st.sampled_from([b"\n", b"\r\n", b"\n\n", b"\r\r\n"])


@st.composite
def blocks(draw: st.DrawFn) -> bytes:
    lines = draw(st.lists(line_choice, min_size=1, max_size=12))
    pieces = []
    for line in lines:
        pieces += [line, draw(separators)]
    if draw(st.booleans()):
        pieces.pop()  # no newline at the end
    data = b"".join(pieces)
    return b"\xef\xbb\xbf" + data if draw(st.booleans()) else data


GENERATED = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


modes = st.sampled_from(MODES)


@GENERATED
@given(blocks(), modes)
@example(_SLOW + b"\n" + _BUILD + b"\n", JSON_LOG)
@example(b"\xef\xbb\xbf", JSON_LOG)
@example(b"\xef\xbb\xbf" + _SLOW, JSON_LOG)
@example(_SLOW + b"\r\n" + _SLOW + b"\n\r\n", JSON_LOG)
@example(b"\xef\xbb\xbf" + LINES[19] + b"\nodd\r\n" + LINES[21] + b"\n", TEXT_LOG)
@example(LINES[24] + b"\n" + LINES[19] + b"\n", TEXT_LOG)
@example(b"\xef\xbb\xbf\n\x0b\n", JSON_LOG)  # blank after the byte-order mark: the compiled path skipped it too late
@example(b"\xef\xbb\xbf\n\x0b\n", TEXT_LOG)
def test_generated_blocks_parse_the_same(data: bytes, mode: str) -> None:
    assert_same([data], mode)


@GENERATED
@given(blocks(), st.lists(st.integers(min_value=0, max_value=1 << 20), max_size=4), modes)
def test_blocks_cut_anywhere_parse_the_same(data: bytes, cuts: list[int], mode: str) -> None:
    """Pieces that end inside a line (a reader never cuts there, but ``feed`` must not care)."""
    points = sorted({0, len(data), *(cut % (len(data) + 1) for cut in cuts)})
    assert_same([data[start:end] for start, end in itertools.pairwise(points)] or [data], mode)


@GENERATED
@given(st.lists(st.sampled_from([LINES[index] for index in (19, 20, 21, 22, 23, 24, 26, 27, 28, 30)]),
                min_size=1, max_size=30),
       st.sampled_from([b"\n", b"\r\n"]))
def test_text_blocks_parse_the_same(lines: list[bytes], newline: bytes) -> None:
    """Text blocks the compiled scan takes on (no JSON line, no non-ASCII line start), many problems among them."""
    data = newline.join(lines) + newline
    assert _speedups.scan_text_block(data, True)[2] is not None
    assert_same([data], TEXT_LOG)
    assert_same(newline_aligned(data, 300), TEXT_LOG)


def test_the_text_scan_reports_problems_candidates_and_versions() -> None:
    slow, version = LINES[19], LINES[21]
    data = slow + b"\r\nnot a log line\n\n" + version + b"\n"
    lines, bom, odd, candidates, versions = _speedups.scan_text_block(data, True)
    odd_start = len(slow) + 2
    version_start = odd_start + len(b"not a log line\n\n")
    assert (lines, bom, odd) == (4, 0, [odd_start])
    assert candidates == [0, len(slow)]
    assert versions == [version_start, version_start + len(version)]
    assert _speedups.scan_text_block(b"x\n{}\n", False)[2:] == (None, None, None)  # JSON mixed in
    assert _speedups.scan_text_block(LINES[25], False)[2:] == (None, None, None)  # Unicode digits: not sure


@GENERATED
@given(st.lists(st.sampled_from(LINES[:5]), min_size=1, max_size=30), st.sampled_from([b"\n", b"\r\n"]))
def test_plain_blocks_parse_the_same(lines: list[bytes], newline: bytes) -> None:
    """Blocks of whole log lines only: the ones the compiled scan takes on rather than handing back."""
    data = newline.join(lines) + newline
    assert _speedups.scan_json_block(data, True)[2] is not None
    assert_same([data])
    assert_same(newline_aligned(data, 300))


@pytest.mark.parametrize(("mode", "other_scan"), [(TEXT_LOG, "_scan_json_block"), (PROFILE, "_scan_json_block"),
                                                 (JSON_LOG, "_scan_text_block"), (PROFILE, "_scan_text_block")])
def test_each_scan_runs_for_its_own_mode_only(mode: str, other_scan: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(data: bytes, strip_bom: bool) -> None:
        raise AssertionError(f"{other_scan} ran for {mode}")

    monkeypatch.setattr(block, other_scan, refuse)
    stats = BlockParser(mode, OPTIONS, CollectingSink()).parse(_SLOW + b"\n" + LINES[16] + b"\n")
    assert stats.lines == 2 and stats.entries >= 1


@pytest.mark.corpus
def test_the_corpus_report_is_the_same_on_both_paths(corpus_dir: Path, capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole pipeline (statistics, shapes, findings, suggestions) over every corpus input, in one process, with
    every compiled piece (block scans, event fields, shapes, time breakdowns, literal values) and with none."""
    from idxadvisor.cli import run
    from idxadvisor.parse import jsonlog
    from idxadvisor.shapes import digest, shape

    reports = []
    for compiled in (True, False):
        monkeypatch.setattr(block, "_scan_json_block", _speedups.scan_json_block if compiled else None)
        monkeypatch.setattr(block, "_scan_text_block", _speedups.scan_text_block if compiled else None)
        for module, name, function in ((jsonlog, "_event_fields", "event_fields"),
                                       (shape, "_shape_command_compiled", "shape_command"),
                                       (digest, "_add_timing", "add_timing"),
                                       (digest, "_observe_literals", "observe_literals")):
            monkeypatch.setattr(module, name, getattr(_speedups, function, None) if compiled else None)
        shape._FINISHED.clear()
        run(["analyze", str(corpus_dir), "--format", "json", "--jobs", "1", "--fail-on", "never", "--top", "1000"])
        reports.append(json.loads(capsys.readouterr().out))
    assert reports[0] == reports[1]
    assert sum(item["entries"] for item in reports[0]["inputs"]) > 1000


def test_the_scans_run_in_threads_at_once() -> None:
    """No state is shared between calls (the GIL is released during a scan): threads scanning different blocks at
    the same time get what one thread gets."""
    from concurrent.futures import ThreadPoolExecutor

    json_block = (_SLOW + b"\n" + _BUILD + b"\n" + _PLAIN + b"\n") * 20_000
    text_block = (LINES[19] + b"\nodd line\n" + LINES[21] + b"\n") * 20_000
    calls = [(_speedups.scan_json_block, json_block[: len(json_block) - 1000 * k]) for k in range(4)]
    calls += [(_speedups.scan_text_block, text_block[1000 * k:]) for k in range(4)]
    alone = [scan(data, True) for scan, data in calls]
    with ThreadPoolExecutor(max_workers=8) as pool:
        together = list(pool.map(lambda call: call[0](call[1], True), calls * 3))
    assert together == alone * 3
    assert alone[0][2] is not None and alone[4][2] is not None


# -- a JSON block with lines that are not whole log lines ------------------------------------------------------------


def _line_by_line(self: BlockParser, data: bytes, begin: int) -> None:
    """How such a block was read before its runs of whole lines went the way of a plain block: every line alone."""
    self._parse_lines(data[begin:].decode("utf-8", "replace").split("\n"), first_line=1)


def _sorted_out(stats: BlockStats) -> dict[str, Any]:
    """The stats, with what the runs of a block report in another order than its lines (the index lines after the
    slow-query lines of a run) in one order."""
    values = _comparable(stats)
    values["index_sightings"] = sorted(map(repr, values["index_sightings"]))
    values["problem_examples"] = sorted(values["problem_examples"], key=lambda problem: problem.line or 0)
    return values


def assert_same_as_line_by_line(pieces: list[bytes]) -> None:
    textlog._BODY_MEMO.clear()
    original = BlockParser._parse_json_mixed
    for compiled in (True, False):
        events, stats = _parse(pieces, compiled=compiled)
        BlockParser._parse_json_mixed = _line_by_line  # type: ignore[method-assign]
        try:
            reference_events, reference_stats = _parse(pieces, compiled=False)
        finally:
            BlockParser._parse_json_mixed = original  # type: ignore[method-assign]
        assert _sorted_out(stats) == _sorted_out(reference_stats)
        assert [vars(event) for event in events] == [vars(event) for event in reference_events]


@GENERATED
@given(blocks())
@example(_SLOW + b"\nnot a log line\n" + _BUILD + b"\n\n" + _SLOW + b"\r\n" + _SLOW[:40] + b"\n" + _SLOW)
def test_a_json_block_with_odd_lines_reads_as_line_by_line(data: bytes) -> None:
    """Runs of whole lines between the odd ones go the way of a plain block; the events, counts, problems and their
    line numbers are those of reading every line alone."""
    assert_same_as_line_by_line([data])


def test_real_json_logs_with_odd_lines_read_as_line_by_line(corpus_dir: Path) -> None:
    """Every corpus JSON log with a line that is not a log line every 50 lines (and one cut short): the same."""
    checked = 0
    for path in _logs(corpus_dir):
        data = _read(path)
        if not data.startswith(b'{"t":'):
            continue
        lines = data.split(b"\n")
        for index in range(len(lines) - 1, 0, -50):
            lines.insert(index, b"-- rotated --" if index % 3 else lines[index][:30])
        assert_same_as_line_by_line(newline_aligned(b"\n".join(lines), PIECE))
        checked += 1
    assert checked >= 5
