"""Inputs: what the user named (files, globs, directories, ``-``) and how to read each one.

Compression and archives are recognised by their magic bytes, not their names: gzip, bzip2 and xz streams are read
through the matching decompressor; a tar archive (plain or compressed) yields one input per regular member. A plain
file on disk is the only kind that can be split into byte ranges and read by several processes at once; everything
else (stdin, a named pipe, ``<(zcat …)``'s /dev/fd/N, a compressed file) is read as a stream of newline-aligned
blocks.
"""

from __future__ import annotations

import bz2
import glob
import gzip
import lzma
import stat
import sys
import tarfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from idxadvisor.ingest.detect import EMPTY
from idxadvisor.models.events import UNKNOWN
from idxadvisor.models.inputs import InputSummary

STDIN_LABEL = "-"
_GZIP_MAGIC = b"\x1f\x8b"
_BZIP2_MAGIC = b"BZh"
_XZ_MAGIC = b"\xfd7zXZ\x00"
_TAR_MAGIC_OFFSET = 257
_READ_SIZE = 1 << 16  # a decompressor that fails mid-read loses what it held: keep reads small
#: The default cap on one line: a line longer than this is not held in memory but skipped to its end and counted as
#: a problem (a gzip bomb of one 10 GB "line" must not exhaust memory). mongod truncates what it logs long before.
DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024
#: Archives inside archives deeper than this are not opened (each level is a stack of readers; 300 levels of tar
#: would exhaust the interpreter's stack): such a member is an input that could not be read.
MAX_ARCHIVE_DEPTH = 8


class StreamError(Exception):
    """Reading a stream failed part-way (a corrupt or truncated archive); what was read before stays valid."""


#: What a decompressor or a tar reader raises on damaged or truncated data.
READ_ERRORS = (OSError, EOFError, zlib.error, lzma.LZMAError, tarfile.TarError)


@dataclass(frozen=True, slots=True)
class Source:
    """One thing the user named, or an error saying why it names nothing."""

    label: str
    path: Path | None = None
    error: str | None = None
    start: int = 0  # a plain file is read from this byte on (the new lines of a log counted before up to there)
    scanned: bool = False  # found in a directory or by a pattern, not named: skipped quietly when it is not a log
    pipe: Path | None = None  # a named pipe or a character device (``<(zcat …)``, /dev/fd/N): read once, as a stream

    @property
    def is_stdin(self) -> bool:
        return self.label == STDIN_LABEL and self.path is None


@dataclass(slots=True)
class OpenedInput:
    """One input ready to read: a plain file (``path``), or a stream (``stream``)."""

    label: str
    path: Path | None = None
    stream: BinaryIO | None = None
    size: int | None = None  # bytes, when known before reading
    error: str | None = None  # why this input cannot be read at all (it is reported, not read)
    start: int = 0  # a plain file: the byte reading starts at (its format is still told from its first bytes)
    compressed: CountingStream | None = None  # a compressed stream's source: the compressed bytes read so far


def expand_sources(arguments: list[str]) -> list[Source]:
    """Each argument as sources: ``-`` is stdin, a directory is every file below it, a glob every match."""
    sources: list[Source] = []
    for argument in arguments:
        if argument == STDIN_LABEL:
            sources.append(Source(STDIN_LABEL))
            continue
        path = Path(argument)
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.is_file() and not _hidden(p, path))
            sources.extend(Source(str(p), p, scanned=True) for p in files)
            if not files:
                sources.append(Source(argument, error="directory holds no files"))
        elif path.is_file():
            sources.append(Source(argument, path))
        elif glob.has_magic(argument):
            matches = sorted(Path(m) for m in glob.glob(argument, recursive=True) if Path(m).is_file())
            sources.extend(Source(str(p), p, scanned=True) for p in matches)
            if not matches:
                sources.append(Source(argument, error="no file matches this pattern"))
        elif _is_pipe(path):
            sources.append(Source(argument, pipe=path))
        elif path.exists():
            sources.append(Source(argument, error="not a regular file"))
        else:
            sources.append(Source(argument, error="no such file or directory"))
    return sources


def _is_pipe(path: Path) -> bool:
    """A named pipe or a character device (what ``<(…)`` and /dev/fd/N name): a stream, like stdin."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode)


def _hidden(path: Path, root: Path) -> bool:
    return any(part.startswith(".") for part in path.relative_to(root).parts)


def open_source(source: Source) -> Iterator[OpenedInput]:
    """The inputs a source holds: itself, or each member of a tar archive. Raises OSError if it cannot be opened."""
    if source.is_stdin:
        yield from _open_stream(STDIN_LABEL, sys.stdin.buffer, size=None)
        return
    if source.pipe is not None:
        with open(source.pipe, "rb") as handle:
            yield from _open_stream(source.label, handle, size=None)
        return
    assert source.path is not None
    head = _read_head(source.path)
    if compression(head) is None and not is_tar(head):
        yield OpenedInput(source.label, path=source.path, size=source.path.stat().st_size, start=source.start)
        return
    handle = open(source.path, "rb")  # noqa: SIM115 - closed when the stream is exhausted by the caller
    try:
        yield from _open_stream(source.label, handle, size=source.path.stat().st_size, start=source.start)
    finally:
        handle.close()


def _read_head(path: Path) -> bytes:
    with open(path, "rb") as handle:
        return handle.read(512)


def compression(head: bytes) -> str | None:
    """``gzip``, ``bzip2`` or ``xz`` from a stream's first bytes; None when it is not compressed."""
    if head.startswith(_GZIP_MAGIC):
        return "gzip"
    if head.startswith(_BZIP2_MAGIC) and len(head) >= 4 and head[3:4].isdigit():
        return "bzip2"
    if head.startswith(_XZ_MAGIC):
        return "xz"
    return None


def is_tar(head: bytes) -> bool:
    """Whether a stream's first 512 bytes (decompressed) open a tar archive."""
    return head[_TAR_MAGIC_OFFSET:_TAR_MAGIC_OFFSET + 5] == b"ustar"


def _decompressed(stream: BinaryIO, kind: str | None) -> BinaryIO:
    if kind == "gzip":
        return gzip.GzipFile(fileobj=stream, mode="rb")  # type: ignore[return-value]
    if kind == "bzip2":
        return bz2.BZ2File(stream, mode="rb")  # type: ignore[return-value]
    if kind == "xz":
        return lzma.LZMAFile(stream, mode="rb")  # type: ignore[return-value]
    return stream


def open_stream(label: str, raw: BinaryIO, size: int | None) -> Iterator[OpenedInput]:
    """The inputs an open binary stream holds (a remote file, say): itself, or each member of a tar archive."""
    return _open_stream(label, raw, size)


def _open_stream(label: str, raw: BinaryIO, size: int | None, depth: int = 0, start: int = 0,
                 compressed: CountingStream | None = None) -> Iterator[OpenedInput]:
    """The input a stream holds, or each member of the tar archive it holds. Damage met before the first byte of an
    input raises OSError; damage after it is raised by the input's reads; damage between two tar members raises
    StreamError after the members before it have been read. An archive nested deeper than ``MAX_ARCHIVE_DEPTH``
    is an input with an error. A compressed input is read from its ``start``-th decompressed byte (a line start).
    ``compressed`` counts the bytes read from the outermost compressed stream (a member of a .tar.gz shares it)."""
    counting = CountingStream(raw)
    peeking = PeekableStream(counting)
    kind = compression(peeking.peek(512))
    stream = PeekableStream(_decompressed(peeking, kind)) if kind else peeking
    if kind and compressed is None:
        compressed = counting
    head = stream.peek(512)
    if not head and stream.error is not None:
        raise OSError(_describe(stream.error))
    if not is_tar(head):
        if start:
            _pass_over(stream, start)
        yield OpenedInput(label, stream=stream, size=size if kind is None else None, compressed=compressed)
        return
    if depth >= MAX_ARCHIVE_DEPTH:
        yield OpenedInput(label, error=f"an archive nested more than {MAX_ARCHIVE_DEPTH} levels deep: not opened")
        return
    stream.quiet = True  # tarfile drops what it read in a call that raises: let it see a short stream instead
    try:
        with tarfile.open(fileobj=stream, mode="r|") as archive:  # type: ignore[call-overload]
            for member in archive:
                if not member.isfile():
                    continue
                extracted: Any
                if member.sparse is None:
                    archive.fileobj.seek(member.offset_data)  # type: ignore[union-attr]
                    extracted = _MemberReader(archive.fileobj, member.size, stream)
                else:
                    extracted = archive.extractfile(member)
                if extracted is None:
                    continue
                yield from _open_stream(f"{label}:{member.name}", extracted, size=member.size, depth=depth + 1,
                                        compressed=compressed)
    except READ_ERRORS as exc:
        raise StreamError(_describe(stream.error or exc)) from None
    if stream.error is not None:  # the archive's stream broke where tarfile saw a plausible end
        raise StreamError(_describe(stream.error))


def _pass_over(stream: PeekableStream, count: int) -> None:
    """Read and drop the first ``count`` bytes (counted before), which must end a line."""
    last = b""
    while count:
        piece = stream.read(min(count, _READ_SIZE))
        if not piece:
            raise OSError("it is shorter than when it was counted: truncated or replaced")
        count -= len(piece)
        last = piece[-1:]
    if last != b"\n":
        raise OSError("the part counted before ends inside a line: its last line cannot be counted honestly")


class _MemberReader:
    """The data of one member of a tar archive read as a stream (``mode="r|"``): unlike ``extractfile``'s reader,
    which drops a partial read when the archive ends early, it returns every byte there is, then raises."""

    def __init__(self, archive_stream: Any, size: int, outer: PeekableStream) -> None:
        self._stream = archive_stream
        self._left = size
        self._outer = outer

    def read(self, size: int = -1) -> bytes:
        if self._left <= 0 or size == 0:
            return b""
        data = self._stream.read(self._left if size < 0 else min(size, self._left))
        if not data:
            raise self._outer.error or tarfile.ReadError("unexpected end of data")
        self._left -= len(data)
        return data


def _describe(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


class CountingStream:
    """A binary stream that counts the bytes read from it: how much of a compressed input the decompressor took."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self.count = 0

    def read(self, size: int = -1) -> bytes:
        data = self._stream.read(size)
        self.count += len(data)
        return data

    def read1(self, size: int = -1) -> bytes:
        data = getattr(self._stream, "read1", self._stream.read)(size)
        self.count += len(data)
        return data

    def readable(self) -> bool:
        return True


class PeekableStream:
    """A binary stream whose first bytes can be looked at before reading it (for format and compression sniffing).

    ``peek`` never raises for damaged data: it returns what could be read and keeps the error (``error``), which the
    first ``read`` past those bytes raises, so the reader of the stream sees the damage where it is. Reads go through
    ``read1`` where the stream has it: a buffered decompressor's ``read(n)`` that meets damage part-way drops the
    bytes it had already decompressed in that call, while ``read1`` returns them and fails on the next call.
    """

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._read1 = getattr(stream, "read1", stream.read)
        self._buffer = b""
        self.error: BaseException | None = None
        self.quiet = False  # after an error, reads end the stream instead of raising (the error stays in ``error``)

    def peek(self, size: int) -> bytes:
        while len(self._buffer) < size and self.error is None:
            try:
                more = self._read1(size - len(self._buffer))
            except READ_ERRORS as exc:
                self.error = exc
                break
            if not more:
                break
            self._buffer += more
        return self._buffer[:size]

    def read(self, size: int = -1) -> bytes:
        buffered = self._buffer
        if buffered and 0 <= size <= len(buffered):
            self._buffer = buffered[size:]
            return buffered[:size]
        self._buffer = b""
        if self.error is not None:
            if buffered or self.quiet:
                return buffered
            raise self.error
        if not buffered and not self.quiet:
            return self._stream.read() if size < 0 else self._read1(size)
        try:
            rest = self._stream.read() if size < 0 else self._read1(size - len(buffered))
        except READ_ERRORS as exc:  # keep what was peeked: the next read raises
            self.error = exc
            return buffered
        return buffered + rest

    def readable(self) -> bool:
        return True


@dataclass(frozen=True, slots=True)
class OverlongLine:
    """A line longer than the cap, skipped to its end: one line, one problem, ``length`` bytes (newline included)."""

    length: int

    @property
    def reason(self) -> str:
        return f"a line of {self.length:,} bytes is longer than the limit (--max-line-bytes): skipped"


def iter_blocks(stream: BinaryIO | PeekableStream, block_size: int,
                max_line: int = DEFAULT_MAX_LINE_BYTES) -> Iterator[bytes | OverlongLine]:
    """Newline-aligned blocks of about ``block_size`` bytes (a longer line makes a longer block), and an
    ``OverlongLine`` in place of each line longer than ``max_line``, which is skipped without being held.

    A read error ends the iteration with ``StreamError`` after the complete lines read so far have been yielded.
    """
    pieces: list[bytes] = []
    held = 0
    partial = 0  # bytes of the line being read (since the last newline)
    skipping: int | None = None  # bytes of an overlong line skipped so far
    while True:
        try:
            piece = stream.read(_READ_SIZE)
        except READ_ERRORS as exc:
            if pieces:
                yield b"".join(pieces)
            elif skipping is not None:
                yield OverlongLine(skipping)
            raise StreamError(_describe(exc)) from None
        if not piece:
            if pieces:
                yield b"".join(pieces)
            elif skipping is not None:
                yield OverlongLine(skipping)
            return
        if skipping is not None:
            newline = piece.find(b"\n")
            if newline < 0:
                skipping += len(piece)
                continue
            yield OverlongLine(skipping + newline + 1)
            skipping, piece = None, piece[newline + 1:]
            if not piece:
                continue
        last_newline = piece.rfind(b"\n")
        partial = len(piece) - last_newline - 1 if last_newline >= 0 else partial + len(piece)
        pieces.append(piece)
        held += len(piece)
        if partial > max_line:
            data = b"".join(pieces)
            cut = len(data) - partial
            if cut:
                yield data[:cut]
            pieces, held, skipping, partial = [], 0, partial, 0
        elif held >= block_size and last_newline >= 0:
            data = b"".join(pieces)
            cut = data.rfind(b"\n") + 1
            yield data[:cut]
            rest = data[cut:]
            pieces, held = ([rest], len(rest)) if rest else ([], 0)


@dataclass(frozen=True, slots=True)
class ByteRange:
    """A newline-aligned part of a plain file; ``overlong`` when it is one line longer than the cap (not read)."""

    start: int
    end: int
    overlong: bool = False


def split_file(path: Any, size: int, block_size: int, max_line: int = DEFAULT_MAX_LINE_BYTES, start: int = 0,
               opener: Callable[[Any], BinaryIO] = lambda path: open(path, "rb")) -> list[ByteRange]:
    """Newline-aligned byte ranges of a plain file from ``start`` (a line start) on, each about ``block_size`` long,
    with every line longer than ``max_line`` in a range of its own marked ``overlong``. ``opener`` opens ``path`` for
    reading with seeks (an fsspec file system's ``open`` for a remote file).

    Ranges start at line starts, so a line longer than the block size always crosses its range's nominal end; with
    blocks no longer than the cap, that crossing line is the only one that can be overlong, and it is measured only
    when the range would exceed the cap.
    """
    block_size = min(block_size, max_line)
    ranges = []
    with opener(path) as handle:
        while start < size:
            end = min(start + block_size, size)
            if end < size:
                line_end = _next_line_start(handle, end, size)
                if line_end - start > max_line:
                    line_start = _line_start_before(handle, start, end)
                    if line_end - line_start > max_line:
                        if line_start > start:
                            ranges.append(ByteRange(start, line_start))
                        ranges.append(ByteRange(line_start, line_end, overlong=True))
                        start = line_end
                        continue
                end = line_end
            ranges.append(ByteRange(start, end))
            start = end
    return ranges


def _line_start_before(handle: BinaryIO, floor: int, offset: int) -> int:
    """Where the line holding ``offset`` starts (never before ``floor``, itself a line start)."""
    position = offset
    while position > floor:
        window_start = max(floor, position - 65536)
        handle.seek(window_start)
        newline = handle.read(position - window_start).rfind(b"\n")
        if newline >= 0:
            return window_start + newline + 1
        position = window_start
    return floor


def _next_line_start(handle: BinaryIO, offset: int, size: int) -> int:
    handle.seek(offset)
    while offset < size:
        window = handle.read(65536)
        if not window:
            return size
        newline = window.find(b"\n")
        if newline >= 0:
            return offset + newline + 1
        offset += len(window)
    return size


def read_range(path: Path, start: int, end: int) -> bytes:
    with open(path, "rb") as handle:
        handle.seek(start)
        return handle.read(end - start)



def read_decompressed(path: Path, size: int = -1) -> bytes:
    """The first ``size`` bytes of a file (all with -1), decompressed when it is gzip, bzip2 or xz (not a tar)."""
    with open(path, "rb") as raw:
        return read_stream_decompressed(raw, size)


def read_stream_decompressed(raw: BinaryIO, size: int = -1) -> bytes:
    """``read_decompressed`` of a seekable binary stream (a remote file)."""
    kind = compression(raw.read(6))
    raw.seek(0)
    return _decompressed(raw, kind).read(size)


#: The error of an input named on the command line in which no line is a MongoDB log line, profiler document or
#: explain output.
NOT_A_LOG = "not a MongoDB log, profiler dump or explain output"


def is_not_a_log(summary: InputSummary) -> bool:
    """No line of it is a MongoDB log line, a profiler document or explain output (an empty input included)."""
    return (summary.error is None and summary.format in (UNKNOWN, EMPTY) and summary.entries == 0
            and summary.operations == 0)


def sort_out_non_logs(summaries: list[InputSummary], named: set[str],
                      skipped: list[str] | None) -> list[InputSummary]:
    """Files found in a directory or an archive that are not logs (a README, a LICENSE) are left out, their names
    kept in ``skipped``; an input named on the command line (``named``) that is not one is an input error."""
    kept = []
    for summary in summaries:
        if is_not_a_log(summary):
            if summary.path not in named:  # found by a directory scan or a pattern, or a member of an archive
                if skipped is not None:
                    skipped.append(summary.path)
                continue
            lines = f"none of its {summary.lines:,} line{'s' if summary.lines != 1 else ''} is one"
            summary.error = "the input is empty" if summary.format == EMPTY else f"{NOT_A_LOG} ({lines})"
        kept.append(summary)
    return kept
