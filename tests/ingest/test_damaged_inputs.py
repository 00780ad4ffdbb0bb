"""Damaged inputs: cut compressed streams and archives, cut JSON arrays, arrays written a document per line, byte
order marks. What comes before the damage is read, the damage is one error (or problem) line, nothing raises."""

from __future__ import annotations

import gzip
import io
import json
import tarfile
from pathlib import Path

import pytest

from idxadvisor.ingest.detect import WHOLE_DOCUMENT, detect_format
from idxadvisor.ingest.sources import PeekableStream, Source, open_source
from idxadvisor.parse.block import BlockOptions
from idxadvisor.parse.run import RunOptions, Runner
from tests.helpers import REFERENCE_YEAR, CollectingSink

TEXT_LINE = ('2020-06-23T10:21:26.019+0000 I  COMMAND  [conn7] command shop.orders command: find {{ find: "orders", '
             'filter: {{ n: {n} }} }} planSummary: COLLSCAN keysExamined:0 docsExamined:10 nreturned:1 12ms\n')
TEXT = "".join(TEXT_LINE.format(n=n) for n in range(400)).encode()  # 400 entries, about 70 kB
PROFILE_DOCUMENTS = [{"op": "query", "ns": "shop.orders", "command": {"find": "orders", "filter": {"a": n}},
                      "millis": 150, "ts": {"$date": "2024-01-01T00:00:00Z"}} for n in range(3)]


def run(paths: list[Path], **options) -> tuple[list, CollectingSink]:
    settings = RunOptions(BlockOptions(REFERENCE_YEAR), **({"jobs": 1} | options))
    return Runner(settings, CollectingSink).run([Source(str(path), path) for path in paths])


def tar_of(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


# -- cut compressed streams and archives ---------------------------------------------------------------------------


def test_a_small_cut_gzip_is_read_up_to_the_cut(tmp_path: Path) -> None:
    """trunc.log.gz: the EOFError escaped the first look at the stream, and the run ended as 'interrupted'."""
    compressed = gzip.compress(TEXT)
    path = tmp_path / "trunc.log.gz"
    path.write_bytes(compressed[:-200])
    (summary,), sink = run([path])
    assert summary.error is not None and summary.error.startswith("stopped reading: ")
    readable = len(gzip.decompress(compressed)) - 0  # what zcat would print is most of it
    assert summary.entries >= 300 and len(sink.events) == summary.entries
    assert summary.bytes <= readable


def test_a_gzip_cut_inside_its_header_is_an_input_error(tmp_path: Path) -> None:
    path = tmp_path / "head.log.gz"
    path.write_bytes(gzip.compress(TEXT)[:12])
    (summary,), sink = run([path])
    assert summary.error is not None and summary.error.startswith("cannot read: ") and not sink.events


def test_a_cut_tar_keeps_its_first_member_and_what_there_is_of_the_second(tmp_path: Path) -> None:
    """cut.tar: tarfile's ReadError was an internal error and the first member's results were lost."""
    archive = tar_of({"m0.log": TEXT, "m1.log": TEXT})
    path = tmp_path / "cut.tar"
    path.write_bytes(archive[: 512 + len(TEXT) + 512 + 512 + len(TEXT) // 2 + 100])  # halfway through m1.log
    first, second = run([path])[0]
    assert (first.path, first.entries, first.error) == (f"{path}:m0.log", 400, None)
    assert second.path == f"{path}:m1.log" and second.error == "stopped reading: unexpected end of data"
    assert 150 <= second.entries < 400  # every complete line before the cut


@pytest.mark.parametrize("cut_at", [0.3, 0.6, 0.95])
def test_a_cut_tar_gz_keeps_what_was_read(tmp_path: Path, cut_at: float) -> None:
    compressed = gzip.compress(tar_of({"m0.log": TEXT, "m1.log": TEXT}))
    path = tmp_path / "cut.tar.gz"
    path.write_bytes(compressed[: int(len(compressed) * cut_at)])
    summaries, sink = run([path])
    assert summaries and summaries[-1].error is not None
    assert sum(s.entries for s in summaries) == len(sink.events) > 0
    assert all(s.error is None for s in summaries[:-1])


def test_a_tar_cut_between_members_says_so_once(tmp_path: Path) -> None:
    archive = tar_of({"m0.log": TEXT, "m1.log": TEXT})
    path = tmp_path / "between.tar.gz"
    path.write_bytes(gzip.compress(archive[: 512 + len(TEXT) + 400])[:-8])  # inside the padding after m0.log
    summaries, _ = run([path])
    assert [s.entries for s in summaries if s.path.endswith("m0.log")] == [400]
    assert sum(1 for s in summaries if s.error) == 1


def test_peeking_never_raises_and_reading_raises_where_the_damage_is() -> None:
    class Failing(io.RawIOBase):
        def __init__(self) -> None:
            self.calls = 0

        def readinto(self, buffer) -> int:
            self.calls += 1
            if self.calls > 2:
                raise EOFError("cut")
            buffer[:5] = b"abcde"
            return 5

        def readable(self) -> bool:
            return True

    stream = PeekableStream(Failing())  # type: ignore[arg-type]
    assert stream.peek(100) == b"abcdeabcde" and isinstance(stream.error, EOFError)
    assert stream.read(4) == b"abcd" and stream.read(100) == b"eabcde"
    with pytest.raises(EOFError):
        stream.read(1)


# -- JSON arrays ---------------------------------------------------------------------------------------------------


def test_an_array_written_one_document_per_line_is_one_document(tmp_path: Path) -> None:
    """arr.json: read line by line, it lost every document but the last."""
    path = tmp_path / "arr.json"
    path.write_text("[\n" + ",\n".join(json.dumps(d) for d in PROFILE_DOCUMENTS) + "\n]\n")
    assert detect_format(path.read_bytes()) == WHOLE_DOCUMENT
    (summary,), sink = run([path])
    assert (summary.format, summary.entries, summary.problems, len(sink.events)) == ("profile", 3, 0, 3)


@pytest.mark.parametrize("head", [b"[", b"  \n[{", b"\xef\xbb\xbf[\n{}", b"[1, 2]\n[3]\n"])
def test_anything_opening_with_a_bracket_is_a_whole_document(head: bytes) -> None:
    assert detect_format(head) == WHOLE_DOCUMENT


def test_a_cut_array_keeps_its_complete_elements(tmp_path: Path) -> None:
    """cutarr.json: the array did not parse, and every document was lost."""
    whole = json.dumps(PROFILE_DOCUMENTS)
    path = tmp_path / "cutarr.json"
    path.write_text(whole[: whole.rindex('{"op"') + 30])
    (summary,), sink = run([path])
    assert (summary.format, summary.entries, summary.problems, len(sink.events)) == ("profile", 2, 1, 2)
    assert "cut off after 2 elements" in summary.problem_examples[0].reason


def test_an_array_with_a_damaged_element_keeps_the_ones_before_it(tmp_path: Path) -> None:
    documents = [json.dumps(d) for d in PROFILE_DOCUMENTS]
    path = tmp_path / "damaged.json"
    path.write_text("[" + documents[0] + ", {op: ??? }, " + documents[1] + "]")
    (summary,), sink = run([path])
    assert (summary.entries, summary.problems, len(sink.events)) == (1, 1, 1)


def test_a_shell_syntax_array_is_read(tmp_path: Path) -> None:
    path = tmp_path / "shell.json"
    path.write_text('[ { op: "query", ns: "shop.orders", command: { find: "orders", filter: { a: 1 } }, millis: 5, '
                    'ts: ISODate("2024-01-01T00:00:00Z") } ]')
    (summary,), sink = run([path])
    assert (summary.entries, summary.problems) == (1, 0)
    assert sink.events[0].ts is not None


def test_a_byte_order_mark_before_a_whole_document(tmp_path: Path) -> None:
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(PROFILE_DOCUMENTS).encode())
    (summary,), _ = run([path])
    assert (summary.entries, summary.problems) == (3, 0)


def test_a_cut_gzip_of_a_whole_document_keeps_what_was_read(tmp_path: Path) -> None:
    text = json.dumps(PROFILE_DOCUMENTS * 200).encode()
    compressed = gzip.compress(text)
    path = tmp_path / "profile.json.gz"
    path.write_bytes(compressed[: len(compressed) * 3 // 4])
    (summary,), sink = run([path])
    assert summary.error is not None and summary.error.startswith("stopped reading: ")
    assert summary.entries == len(sink.events) > 0 and summary.problems == 1


def test_opening_a_stream_whose_first_bytes_are_damaged_is_an_os_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.gz"
    path.write_bytes(b"\x1f\x8b\x08\x00" + b"\x00" * 6 + b"\xff" * 50)
    with pytest.raises(OSError):
        list(open_source(Source(str(path), path)))
