"""Inputs of every kind: files, globs, directories, stdin, compressed streams and tar members."""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import sys
import tarfile
import threading
from pathlib import Path

import pytest

from idxadvisor.ingest.sources import expand_sources, iter_blocks, split_file
from idxadvisor.parse.block import BlockOptions
from idxadvisor.parse.run import RunOptions, Runner
from idxadvisor.shapes.digest import Digest
from tests.helpers import REFERENCE_YEAR, CollectingSink, json_line, slow_attr

LINES = [json_line(slow_attr({"find": "orders", "filter": {"n": n}}), ctx=f"conn{n}") for n in range(50)]
LOG = ("\n".join(LINES) + "\n").encode()
TEXT = ('2020-06-23T10:21:26.019+0000 I  COMMAND  [conn7] command shop.orders command: find { find: "orders", '
        'filter: { status: "A" } } planSummary: COLLSCAN keysExamined:0 docsExamined:10 nreturned:1 12ms\n').encode()


def run(arguments: list[str], **options) -> tuple[list, CollectingSink]:
    settings = RunOptions(BlockOptions(REFERENCE_YEAR), **({"jobs": 1} | options))
    return Runner(settings, CollectingSink).run(expand_sources(arguments))


def tar_of(members: dict[str, bytes], mode: str = "w") -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode=mode) as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


@pytest.mark.parametrize(("name", "content"), [
    ("plain.log", LOG),
    ("log.gz", gzip.compress(LOG)),
    ("rotated.log.1", gzip.compress(LOG)),  # compressed without the extension
    ("log.bz2", bz2.compress(LOG)),
    ("log.xz", lzma.compress(LOG)),
    ("concatenated.gz", gzip.compress(LOG[:4000]) + gzip.compress(LOG[4000:])),
])
def test_every_compression_reads_the_same_entries(tmp_path: Path, name: str, content: bytes) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    summaries, sink = run([str(path)])
    assert (summaries[0].lines, summaries[0].entries, summaries[0].error) == (50, 50, None)
    assert len(sink.events) == 50


@pytest.mark.parametrize("mode", ["w", "w:gz"])
def test_each_tar_member_is_an_input(tmp_path: Path, mode: str) -> None:
    path = tmp_path / ("logs.tgz" if mode == "w:gz" else "logs.tar")
    path.write_bytes(tar_of({"a/mongod.log": LOG, "b/mongod.log.gz": gzip.compress(LOG), "c/old.log": TEXT}, mode))
    summaries, sink = run([str(path)])
    assert [(s.path.split(":", 1)[1], s.format, s.entries) for s in summaries] == [
        ("a/mongod.log", "json-log", 50), ("b/mongod.log.gz", "json-log", 50), ("c/old.log", "text-log", 1)]
    assert all(s.path.startswith(str(path) + ":") for s in summaries)
    assert len(sink.events) == 101


def test_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(gzip.compress(LOG + TEXT))))
    summaries, sink = run(["-"])
    assert (summaries[0].path, summaries[0].entries, len(sink.events)) == ("-", 51, 51)


def test_a_corrupt_gzip_stops_that_input_keeps_what_was_read_and_goes_on(tmp_path: Path) -> None:
    broken = tmp_path / "broken.log.gz"
    compressed = gzip.compress(LOG * 40, compresslevel=1)
    broken.write_bytes(compressed[: len(compressed) // 2])
    good = tmp_path / "good.log"
    good.write_bytes(LOG)
    summaries, _ = run([str(broken), str(good)], block_size=4096)
    assert summaries[0].error is not None and "stopped reading" in summaries[0].error
    assert 0 < summaries[0].entries < 2000 and summaries[0].entries == summaries[0].lines
    assert (summaries[1].entries, summaries[1].error) == (50, None)


def test_a_file_that_is_not_gzip_despite_its_name_is_read_as_plain(tmp_path: Path) -> None:
    path = tmp_path / "mislabelled.gz"
    path.write_bytes(LOG)
    assert run([str(path)])[0][0].entries == 50


def test_missing_files_and_empty_globs_are_errors_that_do_not_stop_the_others(tmp_path: Path) -> None:
    (tmp_path / "a.log").write_bytes(LOG)
    summaries, _ = run([str(tmp_path / "missing.log"), str(tmp_path / "*.nothing"), str(tmp_path / "*.log")])
    assert [(s.error, s.entries) for s in summaries] == [
        ("no such file or directory", 0), ("no file matches this pattern", 0), (None, 50)]


def test_a_directory_is_every_file_below_it_but_hidden_ones(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.log").write_bytes(LOG)
    (tmp_path / "a.log").write_bytes(TEXT)
    (tmp_path / ".hidden").write_bytes(LOG)
    assert [Path(s.label).name for s in expand_sources([str(tmp_path)])] == ["a.log", "b.log"]


def test_an_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.log"
    path.write_bytes(b"")
    summary = run([str(path)])[0][0]
    assert (summary.format, summary.lines, summary.entries, summary.problems) == ("empty", 0, 0, 0)


def test_split_file_ranges_are_newline_aligned_and_cover_the_file(tmp_path: Path) -> None:
    path = tmp_path / "x.log"
    data = LOG + b"x" * 70000 + b"\n" + LOG + b"no final newline"
    path.write_bytes(data)
    ranges = split_file(path, len(data), 1000)
    assert ranges[0].start == 0 and ranges[-1].end == len(data) and not any(part.overlong for part in ranges)
    assert all(before.end == after.start for before, after in zip(ranges, ranges[1:]))
    assert all(data[part.end - 1:part.end] == b"\n" for part in ranges[:-1])


def test_stream_blocks_are_newline_aligned_and_keep_everything() -> None:
    data = LOG + b"y" * 3_000_000 + b"\n" + LOG + b"tail without newline"
    blocks = list(iter_blocks(io.BytesIO(data), 10_000))
    assert b"".join(blocks) == data
    assert all(block.endswith(b"\n") for block in blocks[:-1])


def test_parallel_runs_give_the_same_report_as_one_process(tmp_path: Path) -> None:
    path = tmp_path / "big.log"
    lines = []
    for n in range(3000):
        lines.append(json_line(slow_attr({"find": "orders", "filter": {"k": n % 7, "s": {"$gt": n}}},
                                         durationMillis=n % 997), ctx=f"conn{n % 13}",
                               ts=f"2025-01-01T10:{n // 60 % 60:02d}:{n % 60:02d}.000+00:00"))
        lines.append(LINES[n % 50].replace("Slow query", "Something else").replace('"id":51803', '"id":51800'))
    path.write_text("\n".join(lines) + "\n")

    def digest_with(jobs: int) -> tuple:
        options = RunOptions(BlockOptions(REFERENCE_YEAR), jobs=jobs, block_size=50_000, inline_threshold=0)
        summaries, digest = Runner(options, Digest).run(expand_sources([str(path)]))
        shapes = {fp: (s.count, s.duration.total, s.duration.percentile(95), s.docs_examined, len(s.connections),
                       sorted(s.timeline.buckets.items())) for fp, s in digest.shapes.items()}
        return (summaries[0].lines, summaries[0].entries), shapes

    serial, parallel = digest_with(1), digest_with(2)
    assert serial[0] == (6000, 3000)
    assert serial == parallel


def _feed(path: str, data: bytes) -> threading.Thread:
    def write() -> None:
        with open(path, "wb") as out:
            out.write(data)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    return writer


def test_a_named_pipe_is_read_as_a_stream(tmp_path: Path) -> None:
    """Named pipes were refused ("not a regular file"), so only stdin could take a pipe."""
    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)
    writer = _feed(str(fifo), gzip.compress(LOG + TEXT))
    summaries, sink = run([str(fifo)])
    writer.join(5)
    assert (summaries[0].path, summaries[0].error, summaries[0].entries, len(sink.events)) == (str(fifo), None, 51, 51)


def test_a_dev_fd_path_is_read_as_a_stream() -> None:
    """What ``<(zcat rotated.gz)`` passes: /dev/fd/N, a pipe."""
    read_end, write_end = os.pipe()
    try:
        def write() -> None:
            with os.fdopen(write_end, "wb") as out:
                out.write(LOG)

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        summaries, sink = run([f"/dev/fd/{read_end}"])
        writer.join(5)
    finally:
        os.close(read_end)
    assert (summaries[0].error, summaries[0].entries, len(sink.events)) == (None, 50, 50)


def test_blank_lines_cost_no_per_line_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 4.7 MB gzip of 1 GiB of newlines took 66 s, a regex step per blank line: blank blocks are now only counted."""
    from idxadvisor.parse import block

    class NoScan:
        def finditer(self, text: str) -> None:
            raise AssertionError("a blank block was scanned line by line")

        def match(self, text: str) -> None:
            raise AssertionError("a blank block was scanned line by line")

    def no_lines(*args: object) -> None:
        raise AssertionError("a blank block was scanned line by line")

    monkeypatch.setattr(block, "_ODD_LINE", NoScan())
    monkeypatch.setattr(block, "_ODD_FIRST_LINE", NoScan())
    monkeypatch.setattr(block.BlockParser, "_parse_lines", no_lines)  # the C scan's fallback for a JSON log
    monkeypatch.setattr(block, "_scan_json_block", no_lines)
    monkeypatch.setattr(block, "_scan_text_block", no_lines)
    blank = b"\n" * 100_000 + b"  \r\n\t\n"
    for mode in ("text-log", "json-log", "profile"):
        parser = block.BlockParser(mode, BlockOptions(REFERENCE_YEAR), CollectingSink())
        stats = parser.parse(blank)
        assert (stats.lines, stats.entries, stats.problems) == (100_002, 0, 0)
