"""Inputs made to break the reader: a line longer than memory should hold (a gzip or xz bomb without newlines), a
400-digit counter, archives nested hundreds of levels deep, half a surrogate pair escaped in a document. Each ends as
a counted problem, an input error or a replaced character, the good input beside it is analysed, and nothing
raises."""

from __future__ import annotations

import gzip
import io
import json
import lzma
import tarfile
from pathlib import Path

import pytest

from idxadvisor.api import analyze
from idxadvisor.cli import run
from idxadvisor.config import Settings
from idxadvisor.ingest.sources import MAX_ARCHIVE_DEPTH, OverlongLine, expand_sources, iter_blocks, split_file
from idxadvisor.parse.block import BlockOptions
from idxadvisor.parse.run import RunOptions, Runner
from idxadvisor.shapes.digest import Digest
from tests.helpers import json_line, slow_attr

GOOD = "".join(json_line(slow_attr({"find": "orders", "filter": {"sku": n}}), ts=f"2025-01-01T10:00:0{n}.000+00:00")
               + "\n" for n in range(5)).encode()
CAP = 256 * 1024


def test_a_stream_skips_an_overlong_line_without_holding_it() -> None:
    data = GOOD + b"x" * (CAP * 4) + b"\n" + GOOD
    blocks = list(iter_blocks(io.BytesIO(data), 10_000, max_line=CAP))
    overlong = [block for block in blocks if isinstance(block, OverlongLine)]
    assert overlong == [OverlongLine(CAP * 4 + 1)]
    kept = b"".join(block for block in blocks if isinstance(block, bytes))
    assert kept == GOOD + GOOD
    assert max(len(block) for block in blocks if isinstance(block, bytes)) <= CAP + 65536


def test_a_stream_ending_inside_an_overlong_line_still_counts_it() -> None:
    blocks = list(iter_blocks(io.BytesIO(GOOD + b"y" * (CAP + 10)), 10_000, max_line=CAP))
    assert blocks[-1] == OverlongLine(CAP + 10) and b"".join(blocks[:-1]) == GOOD


def test_a_file_gets_a_range_of_its_own_for_each_overlong_line(tmp_path: Path) -> None:
    data = GOOD + b"z" * (CAP * 3) + b"\n" + GOOD + b"w" * (CAP + 1)
    path = tmp_path / "long.log"
    path.write_bytes(data)
    ranges = split_file(path, len(data), 4096, max_line=CAP)
    assert ranges[0].start == 0 and ranges[-1].end == len(data)
    assert all(before.end == after.start for before, after in zip(ranges, ranges[1:]))
    long_ranges = [(part.start, part.end) for part in ranges if part.overlong]
    first = len(GOOD)
    second = first + CAP * 3 + 1 + len(GOOD)
    assert long_ranges == [(first, first + CAP * 3 + 1), (second, len(data))]
    assert all(part.end - part.start <= 4096 + CAP for part in ranges if not part.overlong)


@pytest.mark.parametrize("compress", [gzip.compress, lzma.compress, None])
def test_a_bomb_without_newlines_is_one_problem_and_the_good_input_is_analysed(tmp_path: Path, compress) -> None:
    bomb = b"a" * (CAP * 8)
    path = tmp_path / "bomb.log"
    path.write_bytes(compress(bomb) if compress else bomb)
    good = tmp_path / "good.log"
    good.write_bytes(GOOD)
    report = analyze([str(path), str(good)], Settings(max_line_bytes=CAP))
    bombed, fine = report.inputs
    assert (bombed.lines, bombed.problems, bombed.entries) == (1, 1, 0)
    assert bombed.error == "not a MongoDB log, profiler dump or explain output (none of its 1 line is one)"
    assert "longer than the limit" in bombed.problem_examples[0].reason and bombed.problem_examples[0].line == 1
    assert (fine.entries, fine.problems) == (5, 0)


def test_line_numbers_after_a_skipped_line_stay_right(tmp_path: Path) -> None:
    path = tmp_path / "mixed.log.gz"
    path.write_bytes(gzip.compress(GOOD + b"q" * (CAP + 5) + b"\n" + b"not a log line\n" + GOOD))
    [read] = analyze([str(path)], Settings(max_line_bytes=CAP, verbose=True)).inputs
    assert (read.lines, read.entries, read.problems) == (12, 10, 2)
    assert [problem.line for problem in read.problem_examples] == [6, 7]


def test_a_400_digit_counter_is_a_problem_not_an_overflow(tmp_path: Path) -> None:
    huge = "9" * 400
    line = ('2019-03-04T10:00:00.000+0000 I COMMAND  [conn7] command shop.c command: find { find: "c", filter: '
            f'{{ a: 1 }} }} planSummary: COLLSCAN keysExamined:{huge} docsExamined:{huge} nreturned:1 5ms\n')
    path = tmp_path / "huge.log"
    path.write_text(line * 5)
    report = analyze([str(path)], Settings(min_count=1))
    [read] = report.inputs
    assert (read.entries, read.problems) == (5, 5)
    assert read.problem_examples[0].reason.startswith("counter is not a usable number (9999")
    [shape] = report.shapes
    assert (shape.count, shape.keys_examined, shape.docs_examined) == (5, 0, 0)


def test_archives_nested_too_deep_are_an_input_error_and_the_rest_is_read(tmp_path: Path) -> None:
    blob, name = GOOD, "inner.log"
    for level in range(MAX_ARCHIVE_DEPTH + 40):
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as archive:
            info = tarfile.TarInfo(name)
            info.size = len(blob)
            archive.addfile(info, io.BytesIO(blob))
        blob, name = buffer.getvalue(), f"level{level}.tar"
    nested = tmp_path / "nested.tar"
    nested.write_bytes(blob)
    shallow = tmp_path / "shallow.tar"
    with tarfile.open(shallow, mode="w") as archive:
        archive.add(nested, arcname="deep.tar")
        info = tarfile.TarInfo("good.log")
        info.size = len(GOOD)
        archive.addfile(info, io.BytesIO(GOOD))
    report = analyze([str(shallow)], Settings())
    errors = [item for item in report.inputs if item.error]
    assert len(errors) == 1 and f"more than {MAX_ARCHIVE_DEPTH} levels" in errors[0].error
    assert [item.entries for item in report.inputs if item.path.endswith("good.log")] == [5]


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_command_nested_deeper_than_pickle_goes_is_counted_without_its_example(tmp_path: Path, jobs: int) -> None:
    """orjson reads 1,000 levels; pickle (a digest sent back by a worker, a representative kept once its input ends)
    does not: the shape keeps its statistics, and only the example command of that shape is let go."""
    deep = '{"a":' * 1_000 + "1" + "}" * 1_000  # too deep for json.dumps to write
    lines = [json_line(slow_attr({"find": "orders", "filter": "FILTER"}),
                       ts="2025-01-01T09:00:00.000+00:00").replace('"FILTER"', deep)]
    path = tmp_path / "deep.log"
    path.write_bytes(("\n".join(lines) + "\n").encode() + GOOD)
    options = RunOptions(BlockOptions(2025), jobs=jobs, block_size=len(lines[0]) + 2, inline_threshold=0)
    summaries, digest = Runner(options, Digest).run(expand_sources([str(path)]))
    digest.seal()
    assert (summaries[0].entries, summaries[0].problems) == (6, 0)
    by_text = {stats.shape.text: stats for stats in digest.shapes.values()}
    assert by_text["find shop.orders {sku: eq}"].count == 5 and by_text["find shop.orders {sku: eq}"].representative
    (deep_stats,) = [stats for text, stats in by_text.items() if text != "find shop.orders {sku: eq}"]
    assert deep_stats.count == 1 and deep_stats.representative is None


@pytest.mark.parametrize("output_format", ["json", "text", "markdown", "sarif", "html"])
def test_half_a_surrogate_pair_escaped_in_a_document_is_replaced_not_a_report_that_cannot_be_written(
        tmp_path: Path, output_format: str) -> None:
    """orjson refuses ``\\ud800`` alone, so the document is read as mongo-shell text, whose escapes gave a string
    that no report could encode: every format ended in an internal error."""
    profiled = ('{"op": "query", "ns": "shop.ord\\ud800ers", "command": {"find": "ord\\udc00ers", "filter": '
                '{"sku\\ud83d": "x"}}, "keysExamined": 0, "docsExamined": 5000, "nreturned": 1, "millis": 50, '
                '"planSummary": "COLLSCAN", "ts": {"$date": "2025-01-01T10:00:0%dZ"}}')
    path = tmp_path / "profile.json"
    path.write_text("[" + ", ".join(profiled % second for second in range(4)) + "]")
    output = tmp_path / f"report.{output_format}"
    assert run(["analyze", str(path), "--format", output_format, "-o", str(output), "--fail-on", "never"]) == 0
    text = output.read_text(encoding="utf-8")  # strict: every character of the report is one UTF-8 can hold
    if output_format == "json":
        [shape] = json.loads(text)["shapes"]
        assert (shape["ns"], shape["count"]) == ("shop.ord\ufffders", 4)
        assert "sku\ufffd" in shape["shape"]


def test_an_unrecognised_input_is_given_up_after_a_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    """A gzip of a GiB of junk lines took minutes, each line a counted problem: past a bound with no entry, the input
    ends with an error line, and the good input beside it is reported."""
    from idxadvisor.parse import run as runner

    monkeypatch.setattr(runner, "UNRECOGNISED_LIMIT", 1 << 20)
    junk = tmp_path / "junk.gz"
    junk.write_bytes(gzip.compress(b"not a log line\n" * 2_000_000))  # 30 MB once decompressed
    good = tmp_path / "good.log"
    good.write_bytes(GOOD)
    code = run(["analyze", str(junk), str(good), "--format", "json", "--fail-on", "never", "--jobs", "1"])
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    junk_summary, good_summary = report["inputs"]
    assert code == 2 and good_summary["entries"] == 5 and good_summary["error"] is None
    assert junk_summary["error"].startswith("not read past its first 1.0 MB: no MongoDB log entry there")
    assert 0 < junk_summary["lines"] < 2_000_000 and junk_summary["problems"] == junk_summary["lines"]
    assert captured.err.startswith(f"idxadvisor: error: {junk}: not read past its first 1.0 MB")


def test_a_compressed_stream_of_blank_lines_is_given_up_after_a_bound(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """A 4.7 MB gzip of 1 GiB of newlines took 66 s (2 min 21 s here), after a good log start: a compressed input
    that goes ENTRYLESS_STREAM_LIMIT (64 MiB) in a row without an entry, at over HOSTILE_RATIO times its compressed
    bytes, ends with an error line and a counted problem; the entries before the blank run count, and the good input
    beside it is reported."""
    from idxadvisor.parse import run as runner

    blank_run = 3 * runner.ENTRYLESS_STREAM_LIMIT  # 192 MiB of newlines
    bomb = tmp_path / "bomb.log.gz"
    with gzip.open(bomb, "wb", compresslevel=1) as handle:  # 229x: the ratio of the 4.7 MB per GiB
        handle.write(GOOD)
        chunk = b"\n" * (8 << 20)
        for _ in range(blank_run // len(chunk)):
            handle.write(chunk)
        handle.write(GOOD)
    good = tmp_path / "good.log"
    good.write_bytes(GOOD)
    code = run(["analyze", str(bomb), str(good), "--format", "json", "--fail-on", "never", "--jobs", "1"])
    captured = capsys.readouterr()
    bomb_summary, good_summary = json.loads(captured.out)["inputs"]
    assert code == 2 and good_summary["entries"] == 5 and good_summary["error"] is None
    assert bomb_summary["entries"] == 5 and bomb_summary["problems"] == 1
    assert bomb_summary["lines"] < 2 * runner.ENTRYLESS_STREAM_LIMIT  # given up well before the end
    assert "in a row with no slow-operation entry, decompressed at over 200x" in bomb_summary["error"]
    assert captured.err.startswith(f"idxadvisor: error: {bomb}: not read past its first ")


def test_a_compressed_quiet_log_without_slow_operations_is_read_to_its_end(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A quiet server logs for hours without a slow query: connection lines compress 10-50x, far below the bound's
    ratio, so the stretch is read whole and the slow queries after it count."""
    import random

    from idxadvisor.parse import run as runner

    monkeypatch.setattr(runner, "ENTRYLESS_STREAM_LIMIT", 1 << 20)
    rng = random.Random(5)
    quiet = "".join(json_line({"remote": f"10.0.{rng.randrange(256)}.{rng.randrange(256)}:{rng.randrange(65536)}",
                               "connectionId": rng.randrange(10**6), "connectionCount": rng.randrange(900)},
                              component="NETWORK", message_id=22943, msg="Connection accepted",
                              ctx="listener", ts=f"2025-01-01T10:{n // 60000 % 60:02d}:{n // 1000 % 60:02d}."
                              f"{n % 1000:03d}+00:00") + "\n" for n in range(40_000)).encode()
    path = tmp_path / "quiet.log.gz"
    path.write_bytes(gzip.compress(GOOD + quiet + GOOD, compresslevel=9))
    assert len(quiet) > 4 * runner.ENTRYLESS_STREAM_LIMIT and len(quiet) < 50 * path.stat().st_size
    summaries, _ = Runner(RunOptions(BlockOptions(2025), jobs=1, block_size=256 * 1024), Digest).run(
        expand_sources([str(path)]))
    assert (summaries[0].entries, summaries[0].problems, summaries[0].error) == (10, 0, None)


def test_a_plain_file_of_blank_lines_is_read_to_its_end(tmp_path: Path) -> None:
    """The bound is for compressed inputs, whose cost the user cannot see: a plain file's size is its cost, and it
    is read whole (the entries after a long blank run still count)."""
    from idxadvisor.parse import run as runner

    path = tmp_path / "blank.log"
    path.write_bytes(GOOD + b"\n" * (runner.ENTRYLESS_STREAM_LIMIT + (1 << 20)) + GOOD)
    summaries, _ = Runner(RunOptions(BlockOptions(2025), jobs=1), Digest).run(expand_sources([str(path)]))
    assert (summaries[0].entries, summaries[0].error) == (10, None)


def test_a_bomb_inside_a_compressed_tar_is_bounded_by_the_archive_s_compressed_bytes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A member of a .tar.gz is not compressed itself: the bound counts the archive's compressed bytes, so the blank
    member ends early with its error, and the member after it is read."""
    from idxadvisor.parse import run as runner

    monkeypatch.setattr(runner, "ENTRYLESS_STREAM_LIMIT", 1 << 20)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in (("bomb.log", GOOD + b"\n" * (32 << 20)), ("good.log", GOOD)):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    path = tmp_path / "logs.tar.gz"
    path.write_bytes(buffer.getvalue())
    summaries, _ = Runner(RunOptions(BlockOptions(2025), jobs=1, block_size=256 * 1024), Digest).run(
        expand_sources([str(path)]))
    bomb, good = summaries
    assert bomb.entries == 5 and bomb.lines < 16 << 20 and "decompressed at over 200x" in (bomb.error or "")
    assert (good.path, good.entries, good.error) == (f"{path}:good.log", 5, None)
