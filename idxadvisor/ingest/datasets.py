"""Which collection each ``--data [NS=]FILE`` sample belongs to.

``NS=FILE`` says it. Otherwise the file's name does: ``<db>.<coll>.json`` or ``<coll>.json`` (any extension, and
``.gz`` on top); and when the workload has a single collection, an unnamed file belongs to it. A directory holds one
file per collection, named that way, and may hold ``collstats.json`` (``idxadvisor export-script`` writes it): each
collection's document count, size and average document size, so that a sample scales to its whole collection, and
its write operations since the server started counting, which the index selection turns into write rates.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from idxadvisor.errors import UsageError
from idxadvisor.models.values import as_datetime, as_int

_COMPRESSED = (".gz", ".bz2", ".xz")
COLLECTION_STATS_FILE = "collstats.json"


def _stem(path: Path) -> str:
    name = path.name
    for suffix in _COMPRESSED:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name.rsplit(".", 1)[0] if "." in name else name


def _namespace_for(path: Path, namespaces: set[str]) -> str | None:
    stem = _stem(path)
    if stem in namespaces:
        return stem
    by_collection = [ns for ns in namespaces if ns.partition(".")[2] == stem]
    if len(by_collection) == 1:
        return by_collection[0]
    if len(by_collection) > 1:
        raise UsageError(f"--data {path}: '{stem}' is a collection in several databases "
                         f"({', '.join(sorted(by_collection))}); write NS=FILE")
    if "." in stem and stem.split(".", 1)[0]:
        return stem  # <db>.<coll> not in the workload: kept, it simply matches no shape
    return None


def resolve_data_arguments(arguments: Iterable[str], namespaces: Iterable[str]) -> dict[str, Path]:
    """Namespace → sample file for every ``--data`` argument, given the namespaces the workload touches."""
    known = set(namespaces)
    resolved: dict[str, Path] = {}
    for argument in arguments:
        ns, separator, file_part = argument.partition("=")
        if separator and "." in ns and not Path(argument).exists():
            resolved[ns] = _existing(Path(file_part), argument)
            continue
        path = _existing(Path(argument), argument)
        files = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith(".")
                       and p.name != COLLECTION_STATS_FILE) if path.is_dir() else [path]
        for file in files:
            target = _namespace_for(file, known)
            if target is None and len(known) == 1 and not path.is_dir():
                target = next(iter(known))
            if target is None:
                raise UsageError(f"--data {file}: cannot tell which collection it samples; name it "
                                 "<db>.<collection>.json or write NS=FILE")
            resolved[target] = file
    return resolved


def _existing(path: Path, argument: str) -> Path:
    if not path.exists():
        raise UsageError(f"--data {argument}: no such file or directory")
    return path


def collection_stats(arguments: Iterable[str]) -> dict[str, dict[str, Any]]:
    """Namespace → ``{"count", "size", "avgObjSize"}`` from the ``collstats.json`` of every ``--data`` directory."""
    found: dict[str, dict[str, Any]] = {}
    for argument in arguments:
        stats_file = Path(argument) / COLLECTION_STATS_FILE
        if not stats_file.is_file():
            continue
        try:
            document = json.loads(stats_file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise UsageError(f"--data {stats_file}: cannot read the collection statistics: {exc}") from None
        if isinstance(document, dict):
            found.update({ns: stats for ns, stats in document.items() if isinstance(stats, dict)})
    return found


def write_counts(stats: Mapping[str, Any]) -> dict[str, Any]:
    """The collection's write operations since the server started counting, and the server's clock then, from
    ``$collStats`` (``writes``, ``localTime``: as the server returns them, or as relaxed Extended JSON in the
    export script's ``collstats.json``), for the index selection's write rates."""
    writes = as_int(stats.get("writes"))
    return {"write_operations": writes if writes is not None and writes >= 0 else None,
            "counted_at": as_datetime(stats.get("localTime"))}
