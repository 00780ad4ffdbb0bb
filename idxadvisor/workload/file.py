"""The workload file: a versioned JSON digest of a workload, written by ``analyze --save-workload``.

It opens with ``{"kind": "idxadvisor-workload", "schema_version": 1, …`` so that it is recognised among logs by its
first bytes, then holds the event filters it was recorded with, one summary per input read (with the input's
identity: path, size and the SHA-256 of its first 64 KiB), the counts of events left out, and every shape with its
statistics (``codec.py``). Literal query values are never written (``redact.py``).

Loading gives back a ``Digest`` and ``InputSummary`` objects, so that merging workload files, or a workload file with
logs, is ``Digest.merge``. A file that ends in ``.gz`` is written gzip-compressed; any file may be compressed.
"""

from __future__ import annotations

import gzip
import os
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson

from idxadvisor import __version__
from idxadvisor.errors import InputError, UsageError
from idxadvisor.ingest.detect import WORKLOAD_KIND, is_workload_head
from idxadvisor.ingest.sources import READ_ERRORS, Source, read_decompressed
from idxadvisor.models.events import Problem
from idxadvisor.models.inputs import InputSummary
from idxadvisor.models.inventory import IndexSighting
from idxadvisor.shapes.digest import Digest, DigestOptions
from idxadvisor.workload.codec import (
    DECODE_ERRORS,
    Damage,
    check_scalar,
    counts,
    damage_at,
    decode_stats,
    encode_stats,
    strings,
)

SCHEMA_VERSION = 1
_HEAD = 512


@dataclass
class Workload:
    """A loaded workload file: the digest, what was read to make it, and the event filters it was recorded with."""

    path: str
    digest: Digest
    inputs: list[InputSummary]

    @property
    def filters(self) -> DigestOptions:
        return self.digest.options


def is_workload_file(source: Source) -> bool:
    """Whether a named file is a workload file (compressed or not), from its first bytes."""
    if source.path is None or source.error is not None:
        return False
    try:
        return is_workload_head(read_decompressed(source.path, _HEAD))
    except READ_ERRORS:
        return False  # not a readable compressed workload: the log reader reports what is wrong with it


def workload_document(digest: Digest, inputs: list[InputSummary]) -> dict[str, Any]:
    options = digest.options
    return {
        "kind": WORKLOAD_KIND,
        "schema_version": SCHEMA_VERSION,
        "tool": {"name": "idxadvisor", "version": __version__},
        "filters": {"min_ms": options.min_ms, "since": _iso(options.since), "until": _iso(options.until),
                    **({"apps": list(options.apps)} if options.apps else {})},
        "inputs": [_encode_input(summary) for summary in inputs],
        "skipped": dict(sorted(digest.skipped.items())),
        "shapes": [encode_stats(stats) for _, stats in sorted(digest.shapes.items())],
    }


def save_workload(path: Path, digest: Digest, inputs: list[InputSummary]) -> None:
    """Write the workload file atomically (a reader never sees half of it); ``.gz`` names are gzip-compressed."""
    data = _layout(workload_document(digest, inputs))
    if path.name.endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    try:
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.chmod(temporary, 0o666 & ~_umask())
        os.replace(temporary, path)
    except OSError as exc:
        raise UsageError(f"--save-workload: cannot write {path}: {exc.strerror or exc}") from None


LOCK_WAIT_S = 600.0  # how long a run waits for another run writing the same workload file


@contextmanager
def workload_lock(path: Path, wait_s: float = LOCK_WAIT_S) -> Iterator[None]:
    """Hold an advisory lock (``fcntl.flock``) for reading, merging and writing the workload file ``path``, so that
    concurrent ``--save-workload`` runs on one file take turns instead of each writing over the others' inputs.

    The lock is on ``.<name>.lock`` beside it, a file left in place: the workload file itself is replaced on every
    save, and a lock on the replaced file would guard nothing. A run waits up to ``wait_s`` for the one before it,
    then fails (exit 2). Where no lock file can be made (a read-only folder, a system without ``fcntl``), the run
    goes on unlocked: the save reports what is wrong with the folder."""
    try:
        import fcntl
    except ImportError:  # Windows: no advisory locks to take
        yield
        return
    try:
        handle = os.open(path.parent / f".{path.name}.lock", os.O_RDWR | os.O_CREAT, 0o666)
    except OSError:
        yield
        return
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise UsageError(f"--save-workload: {path} is being written by another idxadvisor run (waited "
                                     f"{wait_s:g} s for its lock, .{path.name}.lock): try again when it ends") from None
                time.sleep(0.05)
        yield
    finally:
        os.close(handle)  # releases the lock


def _layout(document: dict[str, Any]) -> bytes:
    """One line per top-level entry, per input and per shape: compact, and a re-recorded workload diffs by shape."""
    lines = []
    for key, value in document.items():
        name = orjson.dumps(key)
        if type(value) is list:
            items = b",\n".join(orjson.dumps(item) for item in value)
            lines.append(name + b":[\n" + items + b"]" if value else name + b":[]")
        else:
            lines.append(name + b":" + orjson.dumps(value))
    return b"{" + b",\n".join(lines) + b"}\n"


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def load_workload(path: Path, *, qualify_paths: bool = True) -> Workload:
    """Read a workload file; InputError naming the file when it cannot be read or is not a workload this version
    understands. Its inputs are named ``<workload file>:<input>`` in reports (``qualify_paths``), or as recorded (to
    merge or extend the workload)."""
    try:
        data = read_decompressed(path)
    except READ_ERRORS as exc:
        raise InputError(f"{path}: cannot read the workload file: {_reason(exc)}") from None
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise InputError(f"{path}: the workload file is not JSON ({exc.msg} at line {exc.lineno})") from None
    return parse_workload(document, str(path), qualify_paths=qualify_paths)


def parse_workload(document: Any, origin: str, *, qualify_paths: bool = True) -> Workload:
    if type(document) is not dict or document.get("kind") != WORKLOAD_KIND:
        raise InputError(f"{origin}: not a workload file (no \"kind\": \"{WORKLOAD_KIND}\")")
    version = document.get("schema_version")
    if version != SCHEMA_VERSION:
        raise InputError(f"{origin}: workload schema_version {version!r} is not supported (this version of "
                         f"idxadvisor reads {SCHEMA_VERSION}): record it again with 'analyze --save-workload'")
    try:
        digest = Digest(_field(document, "filters", _decode_filters))
        digest.skipped = Counter(_field(document, "skipped", lambda value: counts(value, "skipped")))
        for position, shape in enumerate(_field(document, "shapes", _list)):
            stats = _field(shape, f"shapes[{position}]", decode_stats, whole=True)
            known = digest.shapes.get(stats.shape.fingerprint)
            if known is None:
                digest.shapes[stats.shape.fingerprint] = stats
            else:  # two shapes of an older version that this version's canonical text makes one
                known.merge(stats)
        inputs = [_field(item, f"inputs[{position}]", lambda value: _decode_input(value, origin if qualify_paths
                                                                                   else None), whole=True)
                  for position, item in enumerate(_field(document, "inputs", _list))]
    except Damage as exc:
        raise InputError(f"{origin}: damaged workload file: {exc}") from None
    return Workload(origin, digest, inputs)


def _field(document: Any, key: str, decode: Any, whole: bool = False) -> Any:
    """``decode(document[key])`` (or of ``document`` itself when ``whole``), any error in it a ``Damage`` that names
    where it is: ``shapes[3].count``."""
    try:
        return decode(document if whole else document[key])
    except DECODE_ERRORS as exc:
        raise damage_at(key, exc) from None


def _list(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise Damage("must be a list")
    return value


def _decode_filters(filters: Any) -> DigestOptions:
    if not isinstance(filters, dict):
        raise Damage("must be an object")
    min_ms = _field(filters, "min_ms", lambda value: (check_scalar(value, "float", "min_ms"), float(value))[1])
    since, until = (_field(filters, key, _parse_iso) for key in ("since", "until"))
    apps = filters.get("apps", [])
    if not isinstance(apps, list) or not all(isinstance(app, str) for app in apps):
        raise damage_at("apps", Damage("must be a list of application name patterns"))
    return DigestOptions(min_ms=min_ms, since=since, until=until, apps=tuple(apps))


def check_filters(workload: Workload, options: DigestOptions) -> None:
    """--min-ms, --since and --until filter operations, which a digest no longer has: a workload file is only read
    with the filters it was recorded with (so that it and the logs beside it count the same operations)."""
    recorded = workload.filters
    if (recorded.min_ms, recorded.since, recorded.until, recorded.apps) == \
            (options.min_ms, options.since, options.until, options.apps):
        return
    raise UsageError(f"{workload.path} was recorded with {described_filters(recorded)}, and this run asks for "
                     f"{described_filters(options)}: a workload file holds per-shape totals, not operations, so these "
                     "filters cannot be applied to it again; pass the ones it was recorded with")


def described_filters(options: DigestOptions) -> str:
    parts = [f"--min-ms {options.min_ms:g}"]
    parts += [f"--since {options.since.isoformat()}"] if options.since else []
    parts += [f"--until {options.until.isoformat()}"] if options.until else []
    parts += [f"--app {app}" for app in options.apps]
    return " ".join(parts)


# -- inputs ----------------------------------------------------------------------------------------------------------

_INPUT_SPECIAL = frozenset({"versions", "first_ts", "last_ts", "problem_examples", "index_sightings"})


def _encode_input(summary: InputSummary) -> dict[str, Any]:
    encoded: dict[str, Any] = {}
    for item in fields(summary):
        if item.name not in _INPUT_SPECIAL:
            encoded[item.name] = getattr(summary, item.name)
    encoded["versions"] = sorted(summary.versions)
    encoded["first_ts"], encoded["last_ts"] = _iso(summary.first_ts), _iso(summary.last_ts)
    # excerpts hold literal values (kept with --show-values only): never in a workload file
    encoded["problem_examples"] = [{"reason": problem.reason, "line": problem.line}
                                   for problem in summary.problem_examples]
    encoded["index_sightings"] = [sighting.to_document() for sighting in summary.index_sightings]
    return encoded


def _decode_input(document: dict[str, Any], origin: str | None) -> InputSummary:
    if not isinstance(document, dict):
        raise Damage("must be an object")
    check_scalar(document["path"], "str", "path")
    path = document["path"]
    summary = InputSummary(f"{origin}:{path}" if origin is not None else path, str(document["format"]))
    for item in fields(summary):
        if item.name in document and item.name not in _INPUT_SPECIAL and item.name != "path":
            value = document[item.name]
            check_scalar(value, str(item.type), item.name)
            setattr(summary, item.name, value)
    summary.versions = strings(document.get("versions", []))
    summary.first_ts, summary.last_ts = _parse_iso(document.get("first_ts")), _parse_iso(document.get("last_ts"))
    summary.problem_examples = [_decode_problem(problem) for problem in document.get("problem_examples", ())]
    summary.index_sightings = [IndexSighting.from_document(item) for item in document.get("index_sightings", ())]
    if summary.error and origin is not None:  # reported when the workload was recorded: not an error of this run
        summary.problem_examples.append(Problem(f"when the workload was recorded: {summary.error}"))
        summary.error = None
    return summary


def _decode_problem(document: dict[str, Any]) -> Problem:
    line = document.get("line")
    check_scalar(line, "int | None", "line")
    return Problem(str(document["reason"]), line)


def _iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def _parse_iso(value: Any) -> datetime | None:
    if value is not None and not isinstance(value, str):
        raise Damage("must be an ISO 8601 time or null")
    return datetime.fromisoformat(value) if value is not None else None


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower()
    return str(exc) or type(exc).__name__
