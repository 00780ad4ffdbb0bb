"""Realistic benchmark logs built from real servers' logs in ``../shared/corpus`` (never copied into the repository).

    python benchmarks/corpus_logs.py json OUT.log [--size-mb 160]
    python benchmarks/corpus_logs.py text OUT.log [--size-mb 17]
    python benchmarks/corpus_logs.py json bench-seed/json-day.log.gz --write-seed   # one copy, gzipped: the seed
    python benchmarks/corpus_logs.py json OUT.log --size-mb 800 --seed bench-seed/json-day.log.gz  # without corpus
    python benchmarks/corpus_logs.py text OUT.log --size-mb 200 --naive   # the real log concatenated as it is

The seed is one copy of the sources, already moved to a common start (a few MB gzipped): it travels where the corpus
does not (a benchmark machine without it, ``benchmarks/device_scaling.sh``), and a log built from it is the log built
from the corpus, copy for copy.

A generated log repeats one small workload; a real one has many distinct shapes, long and truncated commands, WRITE
statements beside their COMMAND entries, getMores, internal traffic and the ordinary messages in between. These logs
are real ones replicated in time until they reach the size asked for: every source file is moved to start at the same
moment, each copy is shifted past the end of the previous one, and its connection numbers are moved into a range of
their own, so that statement pairing and per-connection statistics see a longer log rather than one copy on top of
another.

* ``json``: the four Atlas 8.0.12 logs (``mongo-log-parser/``: about 1,900 slow queries, many shapes, truncated
  commands) and the 8.2.5 logs with WRITE and COMMAND entries side by side (``GOindiaRIDE/``).
* ``text``: the 4.0.3 log of ``keyhole/`` (2,028 slow operations, commands in shell syntax).

``--naive`` concatenates the same files unchanged instead, as ``cat`` would: every copy holds the same hours and
connections, the case where parallel workers' statistics overlap the most (bench_all.py times it too).
"""

from __future__ import annotations

import argparse
import gzip
import re
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
JSON_SOURCES = ("mongo-log-parser/*.log.gz", "GOindiaRIDE/mongod-verify.log", "GOindiaRIDE/mongod-runtime.log")
TEXT_SOURCES = ("keyhole/mongod.log",)
_JSON_TIME = re.compile(rb'^\{"t":\{"\$date":"([^"]+)"\}')
_TEXT_TIME = re.compile(rb"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d{4}) ")
_CONNECTION = re.compile(rb"conn(\d+)")
_CONNECTIONS_PER_COPY = 1_000_000


def source_files(kind: str) -> list[list[bytes]]:
    """The real files a copy is made of, as lines."""
    if not CORPUS.is_dir():
        raise SystemExit(f"{CORPUS} is absent: these benchmark logs are built from the shared corpus")
    files = []
    for pattern in JSON_SOURCES if kind == "json" else TEXT_SOURCES:
        for path in sorted(CORPUS.glob(pattern)):
            data = path.read_bytes()
            data = gzip.decompress(data) if path.suffix == ".gz" else data
            files.append([line.rstrip(b"\r") for line in data.split(b"\n") if line.strip()])
    return files


def _parse(kind: str, stamp: bytes) -> datetime:
    text = stamp.decode()
    if kind == "text":  # 2018-12-01T19:37:47.988-0500
        text = text[:-2] + ":" + text[-2:]
    return datetime.fromisoformat(text)


def _format(kind: str, moment: datetime) -> bytes:
    text = moment.isoformat(timespec="milliseconds")
    return (text[:-3] + text[-2:] if kind == "text" else text).encode()


def copies(kind: str, files: list[list[bytes]], size_bytes: int) -> Iterator[bytes]:
    """The files' lines again and again, each copy later in time and on connections of its own."""
    pattern = _JSON_TIME if kind == "json" else _TEXT_TIME
    lines: list[bytes] = []
    stamps: list[bytes | None] = []
    offsets: list[timedelta] = []
    starts = []
    for file_lines in files:
        found = [match.group(1) if (match := pattern.match(line)) else None for line in file_lines]
        moments = [_parse(kind, stamp) for stamp in found if stamp is not None]
        starts.append((min(moments), max(moments)))
        lines += file_lines
        stamps += found
    common = starts[0][0]
    for (first, _), file_lines in zip(starts, files):
        offsets += [common - first] * len(file_lines)
    span = max(last - first for first, last in starts) + timedelta(minutes=1)
    written, copy = 0, 0
    cache: dict[tuple[bytes, timedelta], bytes] = {}
    while written < size_bytes:
        shift = span * copy
        base = copy * _CONNECTIONS_PER_COPY
        cache.clear()
        for line, stamp, offset in zip(lines, stamps, offsets):
            if stamp is not None and (copy or offset):
                moved = cache.get((stamp, offset))
                if moved is None:
                    moved = cache[(stamp, offset)] = _format(kind, _parse(kind, stamp) + offset + shift)
                line = line.replace(stamp, moved, 1)
            if copy:
                line = _CONNECTION.sub(lambda match: b"conn%d" % (int(match.group(1)) + base), line)
            written += len(line) + 1
            yield line
            if written >= size_bytes:
                return
        copy += 1


def seed_files(path: Path) -> list[list[bytes]]:
    """The lines of a seed written by ``write_seed``, as the one file a copy is made of."""
    return [[line for line in gzip.decompress(path.read_bytes()).split(b"\n") if line.strip()]]


def write_seed(kind: str, path: Path) -> None:
    """One copy of the sources (each moved to the common start, connection numbers unchanged), gzipped."""
    files = source_files(kind)
    one_copy = sum(len(line) + 1 for lines in files for line in lines)
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wb", compresslevel=9) as handle:
        handle.write(b"\n".join(copies(kind, files, one_copy)) + b"\n")


def naive_copies(files: list[list[bytes]], size_bytes: int) -> Iterator[bytes]:
    """The files' lines again and again, unchanged: what ``cat log log log > big.log`` makes (the same hours and
    connections in every copy, so a worker's statistics overlap every other's)."""
    written = 0
    while True:
        for file_lines in files:
            for line in file_lines:
                written += len(line) + 1
                yield line
                if written >= size_bytes:
                    return


def write(kind: str, path: Path, size_mb: float, seed: Path | None = None, naive: bool = False) -> None:
    """``size_mb`` of the corpus's ``kind`` logs (or of a seed's) in ``path``: moved in time and connections copy
    after copy, or with ``naive``, concatenated as they are."""
    size_bytes = int(size_mb * 1024 * 1024)
    files = seed_files(seed) if seed is not None else source_files(kind)
    lines = naive_copies(files, size_bytes) if naive else copies(kind, files, size_bytes)
    with open(path, "wb") as handle:
        buffer: list[bytes] = []
        for line in lines:
            buffer.append(line)
            if len(buffer) >= 10_000:
                handle.write(b"\n".join(buffer) + b"\n")
                buffer.clear()
        if buffer:
            handle.write(b"\n".join(buffer) + b"\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kind", choices=["json", "text"])
    parser.add_argument("output", type=Path)
    parser.add_argument("--size-mb", type=float, default=160)
    parser.add_argument("--seed", type=Path, help="build from this seed (--write-seed) instead of the corpus")
    parser.add_argument("--write-seed", action="store_true", help="write one copy of the sources, gzipped, to OUTPUT")
    parser.add_argument("--naive", action="store_true", help="concatenate the real logs unchanged (no shift in time "
                        "or connections), as 'cat' would")
    arguments = parser.parse_args()
    if arguments.write_seed:
        write_seed(arguments.kind, arguments.output)
    else:
        write(arguments.kind, arguments.output, arguments.size_mb, arguments.seed, arguments.naive)


if __name__ == "__main__":
    main()
