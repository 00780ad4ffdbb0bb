"""The compiled core against the Python path, measured in one process, in one run, alternating (docs/speedups.md).

    python benchmarks/bench_speedups.py                        # a 20 MB generated JSON log, 7 rounds
    python benchmarks/bench_speedups.py --size-mb 160 --rounds 5
    python benchmarks/bench_speedups.py --log some.log         # any JSON log

Two figures, each for both paths, alternating round by round, medians printed, per line of the log and per
slow-query line: the block scan alone (count the lines, check that each is a whole JSON log line, find the
candidate lines), and the whole ``BlockParser`` (scan, decode, events, pairing; the sink drops the events). The log is
cut into 16 MiB newline-aligned blocks, as the readers cut a file.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench-data"
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))
import generate_logs  # noqa: E402

from idxadvisor.models.events import JSON_LOG  # noqa: E402
from idxadvisor.parse import block  # noqa: E402
from idxadvisor.parse.block import BlockOptions, BlockParser  # noqa: E402

BLOCK = 16 * 1024 * 1024


class _DropSink:
    def add(self, event: object) -> None:
        pass


def _blocks(data: bytes) -> list[bytes]:
    pieces, start = [], 0
    while start < len(data):
        end = data.find(b"\n", start + BLOCK)
        end = len(data) if end < 0 else end + 1
        pieces.append(data[start:end])
        start = end
    return pieces


def python_scan(data: bytes) -> int:
    """The Python path's scan: what ``feed`` and ``_parse_json_block`` do before any handler runs."""
    lines = block.count_lines(data)
    if not block._is_plain_json_block(data, lines):
        return -1
    found, find, rfind = 0, data.find, data.rfind
    position = find(block._SLOW_QUERY_NUMBER)
    while position >= 0:
        if data[position - 5:position] != block._ID_KEY and data[position - 6:position] != block._SPACED_ID_KEY:
            position = find(block._SLOW_QUERY_NUMBER, position + 5)
            continue
        start = rfind(b"\n", 0, position) + 1
        end = find(b"\n", position)
        end = len(data) if end < 0 else end
        found += len(data[start:end]) > 0
        position = find(block._SLOW_QUERY_NUMBER, end)
    position = find(block._BUILD_INFO_NEEDLE)
    while position >= 0:
        end = find(b"\n", position)
        end = len(data) if end < 0 else end
        found += 1
        position = find(block._BUILD_INFO_NEEDLE, end)
    return found


def compiled_scan(scan: Callable[[bytes, bool], tuple]) -> Callable[[bytes], int]:
    def run(data: bytes) -> int:
        _lines, _bom, slow, build = scan(data, False)
        if slow is None:
            return -1
        for index in range(0, len(slow), 2):  # the slices the caller takes
            data[slow[index]:slow[index + 1]]
        return len(slow) // 2 + len(build) // 2
    return run


def whole_parse(compiled: bool, scan: object) -> Callable[[bytes], int]:
    def run(data: bytes) -> int:
        block._scan_json_block = scan if compiled else None
        options = BlockOptions(reference_year=2026)
        return BlockParser(JSON_LOG, options, _DropSink()).parse(data).operations
    return run


def _time(function: Callable[[bytes], int], blocks: list[bytes]) -> float:
    start = time.perf_counter()
    for piece in blocks:
        function(piece)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=float, default=20)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--log", type=Path, help="a JSON log to measure instead of a generated one")
    args = parser.parse_args()
    try:
        from idxadvisor import _speedups
    except ImportError:
        sys.exit("bench_speedups: idxadvisor._speedups is not built (python setup.py build_ext --inplace)")
    path = args.log
    if path is None:
        DATA.mkdir(exist_ok=True)
        path = DATA / f"speedups-{args.size_mb:g}mb.log"
        if not path.exists():
            generate_logs.write("json", path, args.size_mb, 0.1)
    data = path.read_bytes()
    blocks = _blocks(data)
    lines = block.count_lines(data)
    slow = data.count(b'"id":51803') + data.count(b'"id": 51803')
    pairs = {
        "block scan": (python_scan, compiled_scan(_speedups.scan_json_block)),
        "whole block parse": (whole_parse(False, None), whole_parse(True, _speedups.scan_json_block)),
    }
    saved = block._scan_json_block
    print(f"{path.name}: {len(data) / 1e6:.1f} MB, {lines:,} lines, {slow:,} slow-query lines, {len(blocks)} blocks; "
          f"medians of {args.rounds} alternating rounds")
    try:
        for name, (python, compiled) in pairs.items():
            assert python(blocks[0]) == compiled(blocks[0]), f"{name}: the two paths disagree"
            times: dict[str, list[float]] = {"Python": [], "C": []}
            for _ in range(args.rounds):
                times["Python"].append(_time(python, blocks))
                times["C"].append(_time(compiled, blocks))
            medians = {key: statistics.median(value) for key, value in times.items()}
            for key, seconds in medians.items():
                print(f"  {name:18} {key:6} {seconds:7.3f} s  {seconds / lines * 1e6:6.3f} µs/line  "
                      f"{seconds / max(slow, 1) * 1e6:7.2f} µs/slow line")
            print(f"  {name:18} Python/C {medians['Python'] / medians['C']:.2f}x")
    finally:
        block._scan_json_block = saved


if __name__ == "__main__":
    main()
