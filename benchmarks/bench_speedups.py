"""The compiled core against the Python path, measured in one process, in one run, alternating (docs/speedups.md).

    python benchmarks/bench_speedups.py                        # a 20 MB generated JSON log, 7 rounds
    python benchmarks/bench_speedups.py --size-mb 160 --rounds 5
    python benchmarks/bench_speedups.py --kind text            # a generated text log (4.2 layout)
    python benchmarks/bench_speedups.py --log some.log         # any JSON log (--kind text: any text log)
    python benchmarks/bench_speedups.py --size-mb 160 --end-to-end 1,2   # also `analyze --jobs 1` and `--jobs 2`

Two figures, each for both paths, alternating round by round, medians printed, per line of the log and per
slow-query line: the block scan alone (count the lines, check that each is a whole JSON log line, find the
candidate lines), and the whole ``BlockParser`` (scan, decode, events, pairing; the sink drops the events). The log is
cut into 16 MiB newline-aligned blocks, as the readers cut a file. ``--end-to-end`` also times whole ``idxadvisor
analyze`` runs (a process each, with and without ``IDXADVISOR_PURE_PYTHON=1``, alternating) and, for a JSON log, the
bare orjson loop of bench_ingest.py, and checks that both paths write the same report.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench-data"
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))
import generate_logs  # noqa: E402

from idxadvisor.models.events import JSON_LOG, TEXT_LOG  # noqa: E402
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


def python_text_scan(data: bytes) -> int:
    """The Python path's text search: ``_parse_text_block`` before any handler runs."""
    text = data.decode("utf-8", "replace")
    odd_lines = [match.start() + 1 for match in block._ODD_LINE.finditer(text)]
    if block._ODD_FIRST_LINE.match(text):
        odd_lines.insert(0, 0)
    if any(text.startswith("{", start) for start in odd_lines):
        return -1
    found = len(odd_lines)
    for candidate in block._TEXT_CANDIDATE_END.finditer(text):
        start = text.rfind("\n", 0, candidate.start()) + 1
        found += len(text[start:candidate.end()].rstrip("\r")) > 0
    return found + len(block._lines_holding(text, block._VERSION_HINTS))


def compiled_text_scan(scan: Callable[[bytes, bool], tuple]) -> Callable[[bytes], int]:
    def run(data: bytes) -> int:
        _lines, _bom, odd, candidates, versions = scan(data, False)
        if odd is None:
            return -1
        for index in range(0, len(candidates), 2):  # the lines the caller decodes
            data[candidates[index]:candidates[index + 1]].decode("utf-8", "replace")
        return len(odd) + len(candidates) // 2 + len(versions) // 2
    return run


def whole_parse(mode: str, scans: tuple[object, object] | None) -> Callable[[bytes], int]:
    def run(data: bytes) -> int:
        block._scan_json_block, block._scan_text_block = scans or (None, None)
        options = BlockOptions(reference_year=2026)
        return BlockParser(mode, options, _DropSink()).parse(data).operations
    return run


def _time(function: Callable[[bytes], int], blocks: list[bytes]) -> float:
    start = time.perf_counter()
    for piece in blocks:
        function(piece)
    return time.perf_counter() - start


def _run_seconds(command: list[str], environment: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def end_to_end(path: Path, kind: str, jobs_list: list[int], rounds: int) -> None:
    """Whole ``analyze`` runs on both paths, alternating; the bare loop for a JSON log; the same report from both."""
    base = {**os.environ, "PYTHONPATH": str(ROOT)}
    with tempfile.TemporaryDirectory() as scratch:
        reports = {key: Path(scratch) / f"{key}.json" for key in ("C", "Python")}
        environments = {"C": {**base, "IDXADVISOR_PURE_PYTHON": "0"}, "Python": {**base, "IDXADVISOR_PURE_PYTHON": "1"}}
        if kind == "json":
            bare = [_run_seconds([sys.executable, "-c", BARE_LOOP, str(path)], base) for _ in range(rounds)]
            print(f"  bare orjson loop              {statistics.median(bare):7.3f} s")
        for jobs in jobs_list:
            times: dict[str, list[float]] = {"Python": [], "C": []}
            for _ in range(rounds):
                for key in ("Python", "C"):
                    command = [sys.executable, "-m", "idxadvisor", "analyze", str(path), "--jobs", str(jobs),
                               "--format", "json", "--output", str(reports[key]), "--fail-on", "never"]
                    times[key].append(_run_seconds(command, environments[key]))
            same = reports["C"].read_bytes() == reports["Python"].read_bytes()
            medians = {key: statistics.median(value) for key, value in times.items()}
            print(f"  analyze --jobs {jobs:<3}  Python {medians['Python']:7.3f} s   C {medians['C']:7.3f} s   "
                  f"Python/C {medians['Python'] / medians['C']:.2f}x   same report: {same}")


BARE_LOOP = """
import sys, orjson
with open(sys.argv[1], 'rb') as handle:
    for line in handle:
        if b'"id":51803' in line:
            orjson.loads(line)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=float, default=20)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--kind", choices=["json", "text"], default="json")
    parser.add_argument("--log", type=Path, help="a log to measure instead of a generated one")
    parser.add_argument("--end-to-end", metavar="JOBS", help="also time `analyze --jobs N` for each N (e.g. 1,2)")
    args = parser.parse_args()
    try:
        from idxadvisor import _speedups
    except ImportError:
        sys.exit("bench_speedups: idxadvisor._speedups is not built (python setup.py build_ext --inplace)")
    path = args.log
    if path is None:
        DATA.mkdir(exist_ok=True)
        path = DATA / f"speedups-{args.kind}-{args.size_mb:g}mb.log"
        if not path.exists():
            generate_logs.write(args.kind, path, args.size_mb, 0.1)
    data = path.read_bytes()
    blocks = _blocks(data)
    lines = block.count_lines(data)
    scans = (_speedups.scan_json_block, _speedups.scan_text_block)
    if args.kind == "json":
        slow = data.count(b'"id":51803') + data.count(b'"id": 51803')
        pairs = {
            "block scan": (python_scan, compiled_scan(_speedups.scan_json_block)),
            "whole block parse": (whole_parse(JSON_LOG, None), whole_parse(JSON_LOG, scans)),
        }
    else:
        slow = sum(1 for line in data.splitlines() if line.endswith(b"ms"))
        pairs = {
            "block scan": (python_text_scan, compiled_text_scan(_speedups.scan_text_block)),
            "whole block parse": (whole_parse(TEXT_LOG, None), whole_parse(TEXT_LOG, scans)),
        }
    saved = block._scan_json_block, block._scan_text_block
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
        block._scan_json_block, block._scan_text_block = saved
    if args.end_to_end:
        end_to_end(path, args.kind, [int(jobs) for jobs in args.end_to_end.split(",")], args.rounds)


if __name__ == "__main__":
    main()
