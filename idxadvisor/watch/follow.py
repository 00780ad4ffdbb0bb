"""Follow a log as it is written: a file the way ``tail -F`` does, or a stream (stdin) as it arrives.

Only complete lines are handed on: a last line without its newline waits until the newline comes. A file survives
rotation by rename (the old descriptor is read to its end before the new file is opened, so nothing is lost), by
copytruncate (the file shrinks, or is found with other first bytes: reading starts again at 0, so nothing is counted
twice), and a file that does not exist yet (or for a moment, between a rename and the new file). Each file read (the
first one, and each one after a rotation) is an input of its own, as the files are when ``analyze`` reads them.
"""

from __future__ import annotations

import os
import select
import stat
from dataclasses import dataclass
from pathlib import Path

READ_SIZE = 1 << 20
#: Bytes handed on per poll at most: a long backlog (``--from-start`` on a big log) is read in steps, so that the view
#: is redrawn and keys are read between them.
MAX_POLL_BYTES = 8 << 20
#: First bytes of a file kept to notice a copytruncate that the file has already grown past when it is next looked at.
HEAD_CHECK = 256
_NOT_A_FILE = "{path}: not a regular file (pipe it into 'idxadvisor watch -' instead)"


@dataclass(frozen=True)
class InputStart:
    """A new input begins: the followed file (opened, or replaced by a rotation) or the stream."""

    label: str
    from_first_byte: bool  # read from its first byte (its head identifies it in a workload file)


@dataclass(frozen=True)
class Lines:
    """Complete lines of the current input, in order."""

    data: bytes


@dataclass(frozen=True)
class Overlong:
    """A line longer than ``--max-line-bytes``, skipped (counted as a problem)."""

    length: int


@dataclass(frozen=True)
class InputEnd:
    """The current input ended: ``rotated``, ``truncated`` or ``closed`` (the stream's end)."""

    reason: str


Piece = InputStart | Lines | Overlong | InputEnd


class _LineCutter:
    """Cuts bytes into complete lines, holding a partial last line until its newline arrives."""

    def __init__(self, max_line_bytes: int) -> None:
        self.max_line_bytes = max_line_bytes
        self._partial = bytearray()
        self._skipping: int | None = None  # bytes of an overlong line skipped so far

    def take(self, chunk: bytes, pieces: list[Piece]) -> None:
        if self._skipping is not None:
            newline = chunk.find(b"\n")
            if newline < 0:
                self._skipping += len(chunk)
                return
            pieces.append(Overlong(self._skipping + newline + 1))
            self._skipping = None
            chunk = chunk[newline + 1:]
        self._partial += chunk
        cut = self._partial.rfind(b"\n")
        if cut >= 0:
            pieces.append(Lines(bytes(self._partial[:cut + 1])))
            del self._partial[:cut + 1]
        if len(self._partial) > self.max_line_bytes:
            self._skipping = len(self._partial)
            self._partial.clear()

    def flush(self, pieces: list[Piece]) -> None:
        """The input ended: a last line without a newline is a line all the same (as ``analyze`` reads it)."""
        if self._skipping is not None:
            pieces.append(Overlong(self._skipping))
        elif self._partial.strip():
            pieces.append(Lines(bytes(self._partial) + b"\n"))
        self._partial.clear()
        self._skipping = None


class FileFollower:
    """``tail -F`` of one path. ``from_start``: read what the file holds already; otherwise start at its end (at the
    start of a last line still being written)."""

    def __init__(self, path: Path, *, from_start: bool, max_line_bytes: int) -> None:
        self.path = path
        self.label = str(path)
        self.from_start = from_start
        self._cutter = _LineCutter(max_line_bytes)
        self._fd: int | None = None
        self._identity: tuple[int, int] | None = None
        self._offset = 0
        self._head = b""
        self._inputs = 0
        self._skip_existing = not from_start  # only what the file holds when the watch starts
        self.status = ""  # what the follower waits for, for people: "waiting for PATH to appear"
        self.finished = False  # a file never finishes: it may always grow or be replaced
        self.behind = False  # the last poll stopped at MAX_POLL_BYTES: more is waiting now

    def check_readable(self) -> str | None:
        """Why the path cannot be followed now (a directory, a pipe, a file it may not read); None when it can be, or
        may appear later."""
        try:
            info = os.stat(self.path)
        except FileNotFoundError:
            return None
        except OSError as exc:
            return f"{self.path}: {(exc.strerror or str(exc)).lower()}"
        if not stat.S_ISREG(info.st_mode):
            return _NOT_A_FILE.format(path=self.path)
        if not os.access(self.path, os.R_OK):
            return f"{self.path}: permission denied"
        return None

    def poll(self) -> list[Piece]:
        pieces: list[Piece] = []
        if self._fd is None:
            opened = self._open(pieces)
            self._skip_existing = False  # a file that appears later is new: read from its first byte
            if not opened:
                return pieces
        self._check_truncated(pieces)  # before reading: what is there now may be the truncated file's new lines
        self.behind = not self._read(pieces)
        if self.behind:
            return pieces  # more is waiting: read it before looking for a rotation
        self._check_replaced(pieces)
        return pieces

    def close(self) -> list[Piece]:
        """Stop following: the current input ends (its last unterminated line counts)."""
        pieces: list[Piece] = []
        if self._fd is not None:
            self._read(pieces, limit=None)
            self._end(pieces, "closed")
        return pieces

    def _open(self, pieces: list[Piece]) -> bool:
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)  # a pipe put there must not block the watch
        except FileNotFoundError:
            self.status = f"waiting for {self.path} to appear"
            return False
        except OSError as exc:
            self.status = f"cannot open {self.path} ({(exc.strerror or str(exc)).lower()}); retrying"
            return False
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            os.close(fd)
            self.status = _NOT_A_FILE.format(path=self.path)
            return False
        self._fd, self._identity, self.status = fd, (info.st_dev, info.st_ino), ""
        start = _start_of_last_line(fd, info.st_size) if self._skip_existing else 0
        os.lseek(fd, start, os.SEEK_SET)
        self._offset = start
        self._head = os.pread(fd, HEAD_CHECK, 0)
        self._inputs += 1
        label = self.label if self._inputs == 1 else f"{self.label} (after rotation {self._inputs - 1})"
        pieces.append(InputStart(label, from_first_byte=start == 0))
        return True

    def _read(self, pieces: list[Piece], limit: int | None = MAX_POLL_BYTES) -> bool:
        """Read what the file holds past the offset; False when ``limit`` bytes were read and more may be waiting."""
        assert self._fd is not None
        done = 0
        while limit is None or done < limit:
            chunk = os.read(self._fd, READ_SIZE)
            if not chunk:
                return True
            self._offset += len(chunk)
            done += len(chunk)
            if len(self._head) < HEAD_CHECK:  # a file that was nearly empty: its first bytes, now there are more
                self._head = os.pread(self._fd, HEAD_CHECK, 0)
            self._cutter.take(chunk, pieces)
        return False

    def _check_replaced(self, pieces: list[Piece]) -> None:
        assert self._fd is not None
        try:
            info = os.stat(self.path)
        except OSError:
            return  # renamed away, the new file not there yet: the old descriptor may still be written to
        if (info.st_dev, info.st_ino) != self._identity:
            self._read(pieces, limit=None)  # whatever reached the old file before it was replaced
            self._end(pieces, "rotated")
            if self._open(pieces):
                self._read(pieces)

    def _check_truncated(self, pieces: list[Piece]) -> None:
        """copytruncate: the file is shorter than what was read, or (grown again since) starts with other bytes."""
        assert self._fd is not None
        size = os.fstat(self._fd).st_size
        if size < self._offset or (self._head and os.pread(self._fd, len(self._head), 0) != self._head):
            self._cutter.flush(pieces)
            pieces.append(InputEnd("truncated"))
            os.lseek(self._fd, 0, os.SEEK_SET)
            self._offset, self._head = 0, os.pread(self._fd, HEAD_CHECK, 0)
            self._inputs += 1
            pieces.append(InputStart(f"{self.label} (after truncation {self._inputs - 1})", from_first_byte=True))

    def _end(self, pieces: list[Piece], reason: str) -> None:
        self._cutter.flush(pieces)
        pieces.append(InputEnd(reason))
        assert self._fd is not None
        os.close(self._fd)
        self._fd = None

    @property
    def waits_on(self) -> int | None:
        """A descriptor to wait on for input (None: a file is polled)."""
        return None


def _start_of_last_line(fd: int, size: int) -> int:
    """Where following from the end starts: the end of the file, or the start of a last line still being written."""
    if size == 0:
        return 0
    tail = os.pread(fd, min(size, 64 * 1024), max(0, size - 64 * 1024))
    if tail.endswith(b"\n"):
        return size
    newline = tail.rfind(b"\n")
    return size - (len(tail) - newline - 1) if newline >= 0 else size


class StreamFollower:
    """A stream read as it arrives (stdin): one input, which ends when the stream does."""

    def __init__(self, fd: int, label: str, *, max_line_bytes: int) -> None:
        self.fd = fd
        self.label = label
        self._cutter = _LineCutter(max_line_bytes)
        self._started = False
        self.finished = False
        self.behind = False
        self.status = ""

    def check_readable(self) -> str | None:
        return None

    def poll(self) -> list[Piece]:
        pieces: list[Piece] = []
        if not self._started:
            self._started = True
            pieces.append(InputStart(self.label, from_first_byte=True))
        done = 0
        self.behind = False
        while not self.finished and _readable(self.fd):
            if done >= MAX_POLL_BYTES:
                self.behind = True
                break
            try:
                chunk = os.read(self.fd, READ_SIZE)
            except BlockingIOError:
                break
            if not chunk:
                self._cutter.flush(pieces)
                pieces.append(InputEnd("closed"))
                self.finished = True
                break
            done += len(chunk)
            self._cutter.take(chunk, pieces)
        return pieces

    def close(self) -> list[Piece]:
        if self.finished or not self._started:
            return []
        pieces: list[Piece] = []
        self._cutter.flush(pieces)
        pieces.append(InputEnd("closed"))
        self.finished = True
        return pieces

    @property
    def waits_on(self) -> int | None:
        return None if self.finished else self.fd


def _readable(fd: int) -> bool:
    try:
        return bool(select.select([fd], [], [], 0)[0])
    except (OSError, ValueError):
        return True  # not selectable (a regular file on stdin): a read tells
