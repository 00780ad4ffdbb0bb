"""Following a file like ``tail -F`` and feeding the lines through analyze's pipeline: nothing lost, nothing twice."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from idxadvisor import api
from idxadvisor.config import Settings
from idxadvisor.watch.follow import FileFollower, InputEnd, InputStart, Lines, Overlong, Piece, StreamFollower
from idxadvisor.watch.session import WatchSession
from tests.helpers import json_line, slow_attr

MAX_LINE = 1 << 20


def lines_of(pieces: list[Piece]) -> bytes:
    return b"".join(piece.data for piece in pieces if isinstance(piece, Lines))


def entry(number: int, collection: str = "orders") -> str:
    return json_line(slow_attr({"find": collection, "filter": {"status": number}}, ns=f"shop.{collection}"),
                     ctx=f"conn{number}") + "\n"


def test_a_partial_last_line_waits_for_its_newline(tmp_path: Path) -> None:
    log = tmp_path / "mongod.log"
    log.write_text("")
    follower = FileFollower(log, from_start=True, max_line_bytes=MAX_LINE)
    assert follower.poll() == [InputStart(str(log), from_first_byte=True)]
    with log.open("a") as handle:
        handle.write("first line\nsecond li")
    assert lines_of(follower.poll()) == b"first line\n"
    assert follower.poll() == []
    with log.open("a") as handle:
        handle.write("ne\n")
    assert lines_of(follower.poll()) == b"second line\n"


def test_following_from_the_end_starts_at_the_line_being_written(tmp_path: Path) -> None:
    log = tmp_path / "mongod.log"
    log.write_text("old line\nold line 2\nhalf a ")
    follower = FileFollower(log, from_start=False, max_line_bytes=MAX_LINE)
    pieces = follower.poll()
    assert pieces == [InputStart(str(log), from_first_byte=False)]
    with log.open("a") as handle:
        handle.write("line\nnew line\n")
    assert lines_of(follower.poll()) == b"half a line\nnew line\n"


def test_a_rename_rotation_reads_the_old_file_to_its_end_first(tmp_path: Path) -> None:
    log = tmp_path / "mongod.log"
    log.write_text("a1\na2\n")
    follower = FileFollower(log, from_start=True, max_line_bytes=MAX_LINE)
    assert lines_of(follower.poll()) == b"a1\na2\n"
    log.rename(tmp_path / "mongod.log.1")
    with (tmp_path / "mongod.log.1").open("a") as handle:  # the server writes on until it reopens its log
        handle.write("a3\na4 without newline")
    assert lines_of(follower.poll()) == b"a3\n"  # the new file is not there yet: keep reading the old one
    log.write_text("b1\n")
    pieces = follower.poll()
    assert pieces == [Lines(b"a4 without newline\n"), InputEnd("rotated"),
                      InputStart(f"{log} (after rotation 1)", from_first_byte=True), Lines(b"b1\n")]


def test_a_copytruncate_starts_again_at_the_first_byte(tmp_path: Path) -> None:
    log = tmp_path / "mongod.log"
    log.write_text("a1\na2\na3\n")
    follower = FileFollower(log, from_start=True, max_line_bytes=MAX_LINE)
    assert lines_of(follower.poll()) == b"a1\na2\na3\n"
    with log.open("r+") as handle:
        handle.truncate(0)
    with log.open("a") as handle:
        handle.write("b1\n")
    pieces = follower.poll()
    assert pieces == [InputEnd("truncated"), InputStart(f"{log} (after truncation 1)", from_first_byte=True),
                      Lines(b"b1\n")]


def test_a_truncation_the_file_has_grown_past_is_seen_by_its_first_bytes(tmp_path: Path) -> None:
    log = tmp_path / "mongod.log"
    log.write_text("a1\n")
    follower = FileFollower(log, from_start=True, max_line_bytes=MAX_LINE)
    assert lines_of(follower.poll()) == b"a1\n"
    with log.open("r+") as handle:
        handle.truncate(0)
    with log.open("a") as handle:
        handle.write("b1 is longer\nb2\n")  # past the old offset before the follower looks again
    pieces = follower.poll()
    assert InputEnd("truncated") in pieces
    assert lines_of(pieces[pieces.index(InputEnd("truncated")):]) == b"b1 is longer\nb2\n"


def test_a_file_that_does_not_exist_yet_is_waited_for(tmp_path: Path) -> None:
    log = tmp_path / "later.log"
    follower = FileFollower(log, from_start=False, max_line_bytes=MAX_LINE)
    assert follower.poll() == []
    assert follower.status == f"waiting for {log} to appear"
    log.write_text("x1\n")
    assert follower.poll() == [InputStart(str(log), from_first_byte=True), Lines(b"x1\n")]
    assert follower.status == ""


def test_an_endless_line_is_skipped_and_counted(tmp_path: Path) -> None:
    log = tmp_path / "mongod.log"
    log.write_bytes(b"ok\n" + b"x" * 3000)
    follower = FileFollower(log, from_start=True, max_line_bytes=1024)
    assert lines_of(follower.poll()) == b"ok\n"
    with log.open("ab") as handle:
        handle.write(b"yyy\nafter\n")
    assert follower.poll() == [Overlong(3004), Lines(b"after\n")]


def test_a_stream_ends_with_its_last_line(tmp_path: Path) -> None:
    read, write = os.pipe()
    follower = StreamFollower(read, "-", max_line_bytes=MAX_LINE)
    os.write(write, b"one\ntw")
    assert follower.poll() == [InputStart("-", from_first_byte=True), Lines(b"one\n")]
    os.write(write, b"o")
    os.close(write)
    assert follower.poll() == [Lines(b"two\n"), InputEnd("closed")]
    assert follower.finished
    os.close(read)


def _shape_counts(shapes: dict) -> dict[str, int]:
    return {fingerprint: stats.count for fingerprint, stats in shapes.items()}


def test_fed_in_pieces_across_rotations_the_digest_is_analyzes(tmp_path: Path, fixtures_dir: Path) -> None:
    """The demo log written in random pieces, rotated by rename half-way and by copytruncate later: the watch's
    digest and counts equal analyze's of the two files it ends up as."""
    data = (fixtures_dir / "demo" / "shop.log").read_bytes()
    lines = data.splitlines(keepends=True)
    cuts = sorted({len(lines) // 3, 2 * len(lines) // 3})
    parts = [b"".join(lines[:cuts[0]]), b"".join(lines[cuts[0]:cuts[1]]), b"".join(lines[cuts[1]:])]
    log = tmp_path / "mongod.log"
    log.write_bytes(b"")
    settings = Settings()
    session = WatchSession(settings, 300.0, 2.0, 0.0)
    follower = FileFollower(log, from_start=True, max_line_bytes=MAX_LINE)
    rng = random.Random(7)

    def write_slowly(part: bytes, target: Path) -> None:
        position = 0
        while position < len(part):
            step = rng.randint(1, 40_000)
            with target.open("ab") as handle:
                handle.write(part[position:position + step])
            position += step
            session.feed(follower.poll())

    write_slowly(parts[0], log)
    log.rename(tmp_path / "mongod.log.1")
    write_slowly(parts[1][:len(parts[1]) // 2], tmp_path / "mongod.log.1")  # written before the server reopens
    log.write_bytes(b"")
    session.feed(follower.poll())
    write_slowly(parts[1][len(parts[1]) // 2:], log)
    session.feed(follower.poll())
    (tmp_path / "copy.log").write_bytes(log.read_bytes())
    with log.open("r+b") as handle:
        handle.truncate(0)
    write_slowly(parts[2], log)
    session.feed(follower.close())
    session.end_input()

    expected_digest, expected = api.read_inputs([str(tmp_path / "mongod.log.1"), str(tmp_path / "copy.log"),
                                                 str(log)], settings)
    assert [summary.operations for summary in session.summaries] == [summary.operations for summary in expected]
    assert [summary.lines for summary in session.summaries] == [summary.lines for summary in expected]
    _, whole = api.read_inputs([str(fixtures_dir / "demo" / "shop.log")], settings)
    assert sum(summary.entries for summary in session.summaries) == whole[0].entries  # every entry, once
    assert _shape_counts(session.total.shapes) == _shape_counts(expected_digest.shapes)
    watched = api.advise(session.total, session.summaries, settings)
    analyzed = api.advise(expected_digest, expected, settings)
    assert [(finding.rule, finding.fingerprint) for finding in watched.findings] == \
        [(finding.rule, finding.fingerprint) for finding in analyzed.findings]


def test_the_window_forgets_what_is_older_than_it(tmp_path: Path) -> None:
    session = WatchSession(Settings(), 1.0, 0.5, 0.0)
    session.feed([InputStart("-", True), Lines(entry(1).encode() + entry(2, "users").encode())])
    session.window.tick(0.5)
    session.feed([Lines(entry(3).encode())])
    session.window.tick(1.0)
    assert sorted(shape.count for shape in session.window.shapes.values()) == [1, 2]
    session.window.tick(1.5)  # the first slot (ended at 0.5) is now a second old
    assert [shape.count for shape in session.window.shapes.values()] == [1]
    session.window.tick(2.0)
    assert session.window.shapes == {}
    assert sum(stats.count for stats in session.total.shapes.values()) == 3


def test_the_window_holds_at_most_its_slots_however_long_it_runs() -> None:
    session = WatchSession(Settings(), 10.0, 1.0, 0.0)
    session.feed([InputStart("-", True)])
    for second in range(1, 200):
        session.feed([Lines(entry(second, f"c{second % 50}").encode())])
        session.window.tick(float(second))
    assert session.window.slots <= 11  # ten closed slots and the current one
    assert sum(shape.count for shape in session.window.shapes.values()) == 10  # one line per second, ten seconds
    assert len(session.window.shapes) == 10 and len(session.total.shapes) == 50


def test_a_directory_or_a_pipe_is_refused_with_what_to_do_instead(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    for path in (tmp_path, fifo):
        problem = FileFollower(path, from_start=False, max_line_bytes=MAX_LINE).check_readable()
        assert problem == f"{path}: not a regular file (pipe it into 'idxadvisor watch -' instead)"
    assert FileFollower(tmp_path / "later.log", from_start=False, max_line_bytes=MAX_LINE).check_readable() is None


@pytest.mark.corpus
@pytest.mark.parametrize("name", ["mtools/collscans.log", "keyhole/mongod.log", "mtools/mongod_26.log"])
def test_real_logs_fed_a_piece_at_a_time_count_what_analyze_counts(corpus_dir: Path, name: str) -> None:
    """Text (2.6, 4.0) and JSON logs written by real servers, read through a pipe in uneven pieces."""
    path = corpus_dir / name
    data = path.read_bytes()
    settings = Settings()
    session = WatchSession(settings, 300.0, 2.0, 0.0)
    read, write = os.pipe()
    follower = StreamFollower(read, "-", max_line_bytes=MAX_LINE)
    rng = random.Random(name)
    position = 0
    while position < len(data):
        step = rng.randint(1, 9_000)
        os.write(write, data[position:position + step])
        position += step
        session.feed(follower.poll())
    os.close(write)
    session.feed(follower.poll())
    os.close(read)
    assert follower.finished
    expected_digest, (expected,) = api.read_inputs([str(path)], settings)
    (watched,) = session.summaries
    assert (watched.lines, watched.entries, watched.operations, watched.problems, watched.format) == \
        (expected.lines, expected.entries, expected.operations, expected.problems, expected.format)
    assert _shape_counts(session.total.shapes) == _shape_counts(expected_digest.shapes)
