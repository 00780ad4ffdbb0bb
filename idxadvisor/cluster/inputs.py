"""What a Dask run reads, planned on the client: each input's location, size, head and how it is cut into tasks.

An input is a path every worker sees (absolute paths are handed to the workers) or an fsspec URL (``s3://``,
``gs://``, ``https://`` …; a glob or a directory-like prefix names every file below it). A plain line-format input is
cut into newline-aligned byte ranges exactly as a local run cuts it (``ingest.sources.split_file``, the same block
size cap and ``--max-line-bytes``), the client reading only a few KiB around each cut. A compressed file, a tar
archive or a whole-document input (explain output, a profiler array) cannot be cut: one worker reads it whole.
Workload files are small and read here.
"""

from __future__ import annotations

import glob
import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from idxadvisor.errors import UsageError
from idxadvisor.ingest.detect import HEAD_SIZE, WHOLE_DOCUMENT, WORKLOAD, detect_format
from idxadvisor.ingest.sources import (
    READ_ERRORS,
    ByteRange,
    Source,
    compression,
    expand_sources,
    is_tar,
    read_stream_decompressed,
    split_file,
)
from idxadvisor.models.events import JSON_LOG, PROFILE, TEXT_LOG

#: Range reads around each cut: a small buffer, so that finding a line start does not fetch megabytes.
_PROBE_BLOCK = 64 * 1024


def is_url(argument: str) -> bool:
    """An fsspec URL (``s3://bucket/key``), as opposed to a path (a Windows drive letter is not a scheme)."""
    scheme, separator, _ = argument.partition("://")
    return bool(separator) and len(scheme) > 1 and scheme.replace("+", "").replace("-", "").isalnum()


@dataclass(frozen=True)
class Location:
    """Where a worker opens an input: a local path, or an fsspec URL (credentials come from the worker's
    environment, as fsspec finds them)."""

    path: str
    url: bool = False

    @contextmanager
    def open(self, **options: Any) -> Iterator[BinaryIO]:
        if not self.url:
            with open(self.path, "rb") as handle:
                yield handle
            return
        filesystem, path = self.filesystem()
        with filesystem.open(path, "rb", **options) as handle:
            yield handle

    def filesystem(self) -> tuple[Any, str]:
        """The fsspec file system of a URL (cached by fsspec per process), and the path within it."""
        import fsspec

        return fsspec.core.url_to_fs(self.path)

    def open_for_probing(self) -> Any:
        """Opened to read a few KiB here and there (a line start, a head): remote reads fetch no more than that."""
        return self.open(block_size=_PROBE_BLOCK, cache_type="none") if self.url else self.open()

    def read_range(self, start: int, end: int) -> bytes:
        if not self.url:
            with open(self.path, "rb") as handle:
                handle.seek(start)
                return handle.read(end - start)
        filesystem, path = self.filesystem()
        return filesystem.cat_file(path, start=start, end=end)


@dataclass
class PlannedInput:
    """One input and what the cluster does with it: ``ranges`` for a plain line-format input, whole otherwise."""

    label: str
    location: Location | None = None
    size: int = 0
    format: str = ""
    head_sha256: str | None = None
    ranges: list[ByteRange] = field(default_factory=list)
    tasks: list[list[ByteRange]] = field(default_factory=list)  # the ranges as the client groups them into tasks
    whole: bool = False
    workload: bool = False
    error: str | None = None
    scanned: bool = False  # found in a directory, by a pattern or below a prefix, not named: left out if not a log


def plan_inputs(arguments: list[str], block_size: int, max_line: int) -> list[PlannedInput]:
    planned: list[PlannedInput] = []
    for argument in arguments:
        if argument == "-":
            raise UsageError("-: stdin cannot be read on a Dask cluster (its workers cannot see it); name files or "
                             "URLs")
        if is_url(argument):
            for label, size in _remote_files(argument):
                item = _plan(label, Location(label, url=True), size, block_size, max_line)
                item.scanned = label != argument
                planned.append(item)
        else:
            planned += [_plan_local(source, block_size, max_line) for source in expand_sources([argument])]
    return planned


def _plan_local(source: Source, block_size: int, max_line: int) -> PlannedInput:
    if source.error is not None or source.path is None:
        return PlannedInput(source.label, error=source.error, scanned=source.scanned)
    try:
        size = source.path.stat().st_size
    except OSError as exc:
        return PlannedInput(source.label, error=f"cannot read: {(exc.strerror or str(exc)).lower()}",
                            scanned=source.scanned)
    planned = _plan(source.label, Location(str(source.path.resolve())), size, block_size, max_line)
    planned.scanned = source.scanned
    return planned


def _remote_files(url: str) -> list[tuple[str, int]]:
    """(URL, size) of every file a URL names: itself, the files matching a glob, or every file below a prefix."""
    filesystem, path = _filesystem(url)
    protocol = url.partition("://")[0]
    try:
        if glob.has_magic(path):
            found = filesystem.glob(path, detail=True)
        elif filesystem.isdir(path):
            found = filesystem.find(path, detail=True)
        else:
            found = {path: filesystem.info(path)}
    except FileNotFoundError:
        return [(url, -1)]
    files = [(name, info.get("size") or 0) for name, info in sorted(found.items()) if info.get("type") != "directory"]
    if not files:
        return [(url, -1)]
    return [(name if "://" in name else f"{protocol}://{name}", size) for name, size in files]


def _filesystem(url: str) -> tuple[Any, str]:
    try:
        import fsspec
    except ImportError:
        raise UsageError(f"{url}: URLs are read with fsspec: pip install 'idxadvisor[s3]' (or the fsspec package of "
                         "your storage)") from None
    try:
        return fsspec.core.url_to_fs(url)
    except ImportError as exc:
        raise UsageError(f"{url}: {exc} (for s3:// URLs: pip install 'idxadvisor[s3]')") from None
    except ValueError as exc:
        raise UsageError(f"{url}: {exc}") from None


def _plan(label: str, location: Location, size: int, block_size: int, max_line: int) -> PlannedInput:
    planned = PlannedInput(label, location, size)
    if size < 0:
        planned.error = "no such file or directory"
        return planned
    try:
        with location.open_for_probing() as raw:
            head = raw.read(HEAD_SIZE)
            compressed = compression(head) is not None
            if compressed:
                raw.seek(0)
                head = read_stream_decompressed(raw, HEAD_SIZE)
    except (*READ_ERRORS, ValueError) as exc:
        planned.error = f"cannot read: {_reason(exc)}"
        return planned
    planned.head_sha256 = hashlib.sha256(head[:HEAD_SIZE]).hexdigest()
    detected = detect_format(head)
    if detected == WORKLOAD:
        planned.workload = True
    elif compressed or is_tar(head) or detected == WHOLE_DOCUMENT:
        planned.whole = True  # read whole by one worker, which tells its format itself
    else:
        planned.format = detected  # as a local run reports it; parsed as a text log unless a line format
        planned.ranges = split_file(location.path, size, block_size, max_line,
                                    opener=lambda _: location.open_for_probing())
    return planned


def parse_mode(planned: PlannedInput) -> str:
    """How the blocks of a line-format input are parsed (an unknown format is read as a text log, as locally)."""
    return planned.format if planned.format in (JSON_LOG, TEXT_LOG, PROFILE) else TEXT_LOG


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower()
    return str(exc) or type(exc).__name__
