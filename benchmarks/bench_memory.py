"""Peak memory of the whole process tree of ``idxadvisor analyze`` (the main process and its workers), sampled.

    python benchmarks/bench_memory.py --log /tmp/big.log --jobs 1,2          # any log, one line per --jobs value
    python benchmarks/bench_memory.py --corpus-mb 160 --shapes 100000         # a corpus-built JSON log and 100k shapes

Every 20 ms it reads ``/proc/<pid>/smaps_rollup`` of the main process and of every descendant and sums their
proportional set sizes (PSS: a page that a forked worker shares with its parent is counted once, split among its
sharers), so the peak is what the run really held at once. It prints the peak PSS (and RSS, which counts shared
pages in every process), the wall time, the CPU time of the tree (``wait4``: the main process and the workers it
waited for) and of the main process alone (its last sample: what stays serial in it). The target is a peak PSS
under 250 MB at any input size and with 100,000 distinct shapes.

``--shapes N`` writes (once, into ``bench-data/``) a JSON log whose slow queries have N distinct shapes, a few
executions each (``generate_shapes_log``); ``--corpus-mb`` builds a log from the shared corpus
(``corpus_logs.py``). Nothing here is timed by a test.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench-data"
sys.path.insert(0, str(ROOT / "benchmarks"))
from precompile import compile_package  # noqa: E402

_PAGE = os.sysconf("SC_PAGE_SIZE")
_TICK = os.sysconf("SC_CLK_TCK")


@dataclass
class Measured:
    seconds: float
    peak_pss: int
    peak_rss: int
    tree_cpu: float  # the main process and every worker it waited for
    main_cpu: float  # the main process alone, at its last sample
    code: int


def _children() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as handle:
                parent = int(handle.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry))
    return children


def tree(pid: int) -> list[int]:
    """A process and all its descendants (Linux /proc)."""
    children = _children()
    found, stack = [], [pid]
    while stack:
        current = stack.pop()
        found.append(current)
        stack.extend(children.get(current, []))
    return found


def memory(pid: int) -> tuple[int, int]:
    """(PSS, RSS) of one process in bytes (0, 0 once it has gone)."""
    proportional = resident = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("Pss:"):
                    proportional = int(line.split()[1]) * 1024
                elif line.startswith("Rss:"):
                    resident = int(line.split()[1]) * 1024
    except (OSError, IndexError, ValueError):
        pass
    return proportional, resident


def own_cpu(pid: int) -> float | None:
    """User + system seconds of one process itself (not its children)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / _TICK


def measure(command: list[str], interval: float = 0.02, timeout: float | None = None) -> Measured:
    """Run a command to its end (killed past ``timeout`` seconds, exit code -9), sampling its tree's memory."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak_pss = peak_rss = 0
    main_cpu = 0.0
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        sizes = [memory(member) for member in tree(process.pid)]
        peak_pss = max(peak_pss, sum(pss for pss, _ in sizes))
        peak_rss = max(peak_rss, sum(rss for _, rss in sizes))
        main_cpu = own_cpu(process.pid) or main_cpu
        if timeout is not None and time.perf_counter() - started > timeout:
            for member in reversed(tree(process.pid)):
                try:
                    os.kill(member, 9)
                except OSError:
                    pass
        time.sleep(interval)
    seconds = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    stderr = process.stderr.read().decode("utf-8", "replace") if process.stderr else ""
    if process.returncode not in (0, 1):
        print(stderr, file=sys.stderr)
    return Measured(seconds, peak_pss, peak_rss, usage.ru_utime + usage.ru_stime, main_cpu, process.returncode)


def analyze_command(path: Path, jobs: int | None) -> list[str]:
    command = [sys.executable, "-m", "idxadvisor", "analyze", str(path), "--format", "json", "--output", os.devnull]
    return command + (["--jobs", str(jobs)] if jobs else [])


def generate_shapes_log(path: Path, shapes: int, executions: int = 2) -> None:
    """A 6.0+ JSON log of ``shapes`` distinct find shapes on 100 collections, ``executions`` of each spread over a
    day, each shape filtering on its own set of field names (what makes a shape distinct)."""
    start = 1_764_000_000_000  # epoch ms
    with open(path, "w", encoding="ascii") as handle:
        for execution in range(executions):
            for number in range(shapes):
                moment = start + (execution * shapes + number) * 86_400_000 // (executions * shapes)
                stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(moment // 1000)) + f".{moment % 1000:03d}+00:00"
                collection = f"c{number % 100}"
                fields = ", ".join(f'"f{number}_{k}": {execution + k}' for k in range(1 + number % 3))
                handle.write(
                    f'{{"t":{{"$date":"{stamp}"}},"s":"I","c":"COMMAND","id":51803,"ctx":"conn{number % 500}",'
                    f'"msg":"Slow query","attr":{{"type":"command","ns":"shop.{collection}","command":{{"find":'
                    f'"{collection}","filter":{{{fields}}},"$db":"shop"}},"planSummary":"COLLSCAN","keysExamined":0,'
                    f'"docsExamined":{1000 + number % 7},"nreturned":1,"numYields":0,"reslen":250,"locks":{{}},'
                    f'"protocol":"op_msg","durationMillis":{100 + number % 50}}}}}\n')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--log", type=Path, action="append", default=[], help="a log to analyze (repeatable)")
    parser.add_argument("--corpus-mb", type=float, default=0, help="also a corpus-built JSON log of this size")
    parser.add_argument("--shapes", type=int, default=0, help="also a generated log of this many distinct shapes")
    parser.add_argument("--jobs", default="1,2")
    arguments = parser.parse_args()
    compile_package()
    logs = list(arguments.log)
    DATA.mkdir(exist_ok=True)
    if arguments.corpus_mb:
        import corpus_logs

        path = DATA / f"corpus-json-{arguments.corpus_mb:g}mb.log"
        if not path.exists():
            corpus_logs.write("json", path, arguments.corpus_mb)
        logs.append(path)
    if arguments.shapes:
        path = DATA / f"shapes-{arguments.shapes}.log"
        if not path.exists():
            generate_shapes_log(path, arguments.shapes)
        logs.append(path)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cores")
    for path in logs:
        for jobs in [int(value) for value in arguments.jobs.split(",")]:
            run = measure(analyze_command(path, jobs))
            print(f"{path.name:32} {path.stat().st_size / 2**20:7.0f} MB  --jobs {jobs:<2}  {run.seconds:6.2f} s  "
                  f"peak PSS {run.peak_pss / 2**20:5.0f} MB (RSS {run.peak_rss / 2**20:5.0f} MB)  CPU tree "
                  f"{run.tree_cpu:6.2f} s, main {run.main_cpu:6.2f} s  exit {run.code}")


if __name__ == "__main__":
    main()
