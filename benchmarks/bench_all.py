"""Every speed target of issue 31 side by side, from one run on this machine.

    python benchmarks/bench_all.py                    # full sizes, medians of 3 runs (minutes on 2 cores)
    python benchmarks/bench_all.py --mdbkit /tmp/peers/bin/mdbkit --mloginfo /tmp/peers/bin/mloginfo
    python benchmarks/bench_all.py --quick            # small logs, one run each: checks that every row runs

The logs are built from the shared corpus's real logs (``corpus_logs.py``, cached in ``--data``, default
``bench-data/``): a 160 MB JSON log and 17 MB and 200 MB text logs, each moved in time and connections copy after copy,
and the same sizes concatenated naively (``corpus_logs.py --naive``: the real files repeated unchanged, as ``cat``
makes them). A real 159 MB 6.0 write-heavy log is not in the corpus: the corpus-built JSON log (8.0 Atlas logs and
8.2 logs with WRITE and COMMAND entries side by side) stands in for it.

Each row is a ratio of median wall times measured in this run (or milliseconds, or megabytes), beside its target:

* JSON: ``idxadvisor analyze --format json`` (all cores, as a user runs it) against the bare baseline, one process
  reading the file and ``orjson``-decoding every slow-query line; and ``mdbkit queries --json`` against idxadvisor;
* text: ``mloginfo --queries`` (mtools 1.7.2, on a pseudo-terminal: it refuses a stdin that is not one) against
  idxadvisor on the 17 MB log;
* workers: ``--jobs 2`` against ``--jobs 1`` on the 160 MB JSON and 200 MB text logs, built and naive;
* start-up: ``analyze`` of a 200-line log over ``python -c pass`` (median of 10);
* memory: peak proportional set size (PSS) of the whole process tree during a ``--jobs 2`` run of the largest
  logs, and ``benchmarks/bench_memory.py`` (many shapes) when it is present.

The peers live in a virtual environment of their own (``pip install mdbkit 'mtools==1.7.2' python-dateutil``); found
on ``PATH`` or given by ``--mdbkit`` and ``--mloginfo``; a row without its peer says so. The machine's load average is
printed before and after: on a shared machine, compare ratios from one run, not seconds between runs.
"""

from __future__ import annotations

import argparse
import os
import pty
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
import corpus_logs  # noqa: E402
from bench_ingest import JSON_BASELINE, TEXT_BASELINE, measure  # noqa: E402
from bench_startup import DEMO_LOG, wall_ms  # noqa: E402
from precompile import compile_package  # noqa: E402

#: (name, target) of every row, in the order printed: tests/test_benchmarks.py checks that each is printed.
ROWS = (
    ("JSON: idxadvisor / bare orjson loop", "<= 1.5x"),
    ("JSON: mdbkit queries / idxadvisor", ">= 3x"),
    ("small text log: mloginfo --queries / idxadvisor", ">= 10x"),
    ("JSON: 2 workers / 1", "<= 0.58"),
    ("JSON naive concatenation: 2 workers / 1", "<= 0.58"),
    ("text: 2 workers / 1", "<= 0.58"),
    ("text naive concatenation: 2 workers / 1", "<= 0.58"),
    ("start-up: analyze of a 200-line log, over python", "<= 150 ms"),
    ("peak PSS, JSON, 2 workers", "< 250 MB"),
    ("peak PSS, text, 2 workers", "< 250 MB"),
    ("peak PSS, many shapes (bench_memory.py)", "< 250 MB"),
)
FULL = {"json": 160, "text-small": 17, "text": 200}
QUICK = {"json": 2, "text-small": 1, "text": 2}


class TooLong(Exception):
    """A command ran past ``--timeout``: it and its workers were stopped."""


def wall(command: list[str], timeout: float, on_terminal: bool = False) -> float:
    """Seconds the command takes, its output thrown away (stdin a pseudo-terminal when asked); past ``timeout`` its
    whole process group (the worker pool too) is stopped and ``TooLong`` raised."""
    primary, secondary = pty.openpty() if on_terminal else (None, None)
    started = time.perf_counter()
    process = subprocess.Popen(command, stdin=secondary if on_terminal else subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        _, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise TooLong from None
    finally:
        if primary is not None:
            os.close(primary)
            os.close(secondary)  # type: ignore[arg-type]
    elapsed = time.perf_counter() - started
    if process.returncode not in (0, 1):
        sys.stderr.write(stderr.decode("utf-8", "replace")[-2000:])
    return elapsed


@dataclass
class Result:
    measured: str
    met: str  # "yes", "no", or "-" when not measured (``measured`` says why)


def ensure(data: Path, kind: str, size_mb: float, naive: bool = False) -> Path:
    data.mkdir(parents=True, exist_ok=True)
    path = data / f"corpus-{kind}-{size_mb:g}{'-naive' if naive else ''}.log"
    if not path.exists():
        corpus_logs.write(kind, path, size_mb, naive=naive)
    return path


def analyze(path: Path, jobs: int | None = None) -> list[str]:
    command = [sys.executable, "-m", "idxadvisor", "analyze", str(path), "--format", "json", "-o", os.devnull]
    return command + (["--jobs", str(jobs)] if jobs else [])


def at_most(value: float, limit: float) -> str:
    return "yes" if value <= limit else "no"


def at_least(value: float, limit: float) -> str:
    return "yes" if value >= limit else "no"


class Bench:
    def __init__(self, arguments: argparse.Namespace) -> None:
        self.runs = arguments.runs
        self.timeout = arguments.timeout
        self.data = arguments.data
        self.mdbkit = arguments.mdbkit or None
        self.mloginfo = arguments.mloginfo or None
        self.sizes = QUICK if arguments.quick else FULL
        self.quick = arguments.quick
        self.results: dict[str, Result] = {}

    def time(self, label: str, command: list[str], on_terminal: bool = False) -> float | None:
        """The median of ``--runs`` runs; None (said) when one ran past ``--timeout``."""
        try:
            seconds = statistics.median(wall(command, self.timeout, on_terminal) for _ in range(self.runs))
        except TooLong:
            print(f"  {label:52} over {self.timeout:g} s: stopped", flush=True)
            return None
        print(f"  {label:52} {seconds:8.2f} s", flush=True)
        return seconds

    def warm_up(self, command: list[str]) -> None:
        """One run, not timed: in each of three runs on this machine, the first ``analyze`` after the baseline took a
        fifth to nearly twice as long as the same work with ``--jobs 2`` (what all cores are here) a minute later."""
        try:
            wall(command, self.timeout)
        except TooLong:
            pass

    def ratio(self, row: str, numerator: float | None, denominator: float | None, limit: float, at_least_limit: bool,
              unit: str = "") -> None:
        """A row of two times of this run, or why it has none."""
        if numerator is None or denominator is None:
            self.results[row] = Result(f"not measured: a run took over {self.timeout:g} s", "-")
            return
        value = numerator / denominator
        met = at_least(value, limit) if at_least_limit else at_most(value, limit)
        self.results[row] = Result(f"{value:.2f}{unit} ({numerator:.2f} s / {denominator:.2f} s)", met)

    def json_rows(self) -> None:
        size = self.sizes["json"]
        path = ensure(self.data, "json", size)
        print(f"JSON log built from the corpus, {path.stat().st_size / 2**20:.0f} MB ({path.name})")
        baseline = self.time("bare orjson loop", [sys.executable, "-c", JSON_BASELINE, str(path)])
        self.warm_up(analyze(path))
        ours = self.time("idxadvisor analyze (all cores)", analyze(path))
        one = self.time("idxadvisor analyze --jobs 1", analyze(path, 1))
        two = self.time("idxadvisor analyze --jobs 2", analyze(path, 2))
        self.ratio(ROWS[0][0], ours, baseline, 1.5, False, "x")
        if self.mdbkit:
            peer = self.time("mdbkit queries --json", [self.mdbkit, "queries", "--json", str(path)])
            self.ratio(ROWS[1][0], peer, ours, 3, True, "x")
        else:
            self.results[ROWS[1][0]] = Result("not run: mdbkit not found (--mdbkit PATH)", "-")
        self.ratio(ROWS[3][0], two, one, 0.58, False)
        self.peak(ROWS[8][0], analyze(path, 2))
        naive = ensure(self.data, "json", size, naive=True)
        print(f"JSON log, the corpus's logs concatenated as they are, {naive.stat().st_size / 2**20:.0f} MB")
        one = self.time("idxadvisor analyze --jobs 1", analyze(naive, 1))
        two = self.time("idxadvisor analyze --jobs 2", analyze(naive, 2))
        self.ratio(ROWS[4][0], two, one, 0.58, False)

    def peak(self, row: str, command: list[str]) -> None:
        """The peak PSS of the command's process tree, from one more run."""
        _, _, pss, _ = measure(command)
        self.results[row] = Result(f"{pss / 2**20:.0f} MB", "yes" if pss < 250 * 2**20 else "no")

    def text_rows(self) -> None:
        path = ensure(self.data, "text", self.sizes["text-small"])
        print(f"text log built from the corpus, {path.stat().st_size / 2**20:.0f} MB ({path.name})")
        self.time("bare regular-expression loop", [sys.executable, "-c", TEXT_BASELINE, str(path)])
        self.warm_up(analyze(path))
        ours = self.time("idxadvisor analyze (all cores)", analyze(path))
        if self.mloginfo:
            peer = self.time("mloginfo --queries", [self.mloginfo, "--queries", str(path)], on_terminal=True)
            self.ratio(ROWS[2][0], peer, ours, 10, True, "x")
        else:
            self.results[ROWS[2][0]] = Result("not run: mloginfo not found (--mloginfo PATH)", "-")
        for naive, row in ((False, ROWS[5][0]), (True, ROWS[6][0])):
            path = ensure(self.data, "text", self.sizes["text"], naive=naive)
            how = "the corpus's log concatenated as it is" if naive else "built from the corpus"
            print(f"text log, {how}, {path.stat().st_size / 2**20:.0f} MB ({path.name})")
            one = self.time("idxadvisor analyze --jobs 1", analyze(path, 1))
            two = self.time("idxadvisor analyze --jobs 2", analyze(path, 2))
            self.ratio(row, two, one, 0.58, False)
            if not naive:
                self.peak(ROWS[9][0], analyze(path, 2))

    def start_up_row(self) -> None:
        small = self.data / "start-up-200-lines.log"
        with DEMO_LOG.open("rb") as demo:
            small.write_bytes(b"".join(demo.readline() for _ in range(200)))
        runs = 1 if self.quick else 10
        python = wall_ms([sys.executable, "-c", "pass"], runs)
        ours = wall_ms(analyze(small), runs)
        print(f"start-up, median of {runs}: python -c pass {python:.0f} ms, analyze of a 200-line log {ours:.0f} ms")
        self.results[ROWS[7][0]] = Result(f"{ours - python:.0f} ms ({ours:.0f} ms, python {python:.0f} ms)",
                                          at_most(ours - python, 150))

    def memory_row(self) -> None:
        script = ROOT / "benchmarks" / "bench_memory.py"
        if not script.exists():
            self.results[ROWS[10][0]] = Result("not run: benchmarks/bench_memory.py is absent", "-")
            return
        shapes = 2_000 if self.quick else 100_000
        print(f"bench_memory.py, {shapes:,} distinct shapes, --jobs 1:", flush=True)
        completed = subprocess.run([sys.executable, str(script), "--shapes", str(shapes), "--jobs", "1"], check=False,
                                   capture_output=True, text=True)
        print("  " + (completed.stdout + completed.stderr).strip().replace("\n", "\n  "))
        peak = re.search(r"peak PSS +(\d+) MB", completed.stdout)
        if completed.returncode != 0 or peak is None:
            self.results[ROWS[10][0]] = Result(f"bench_memory.py failed (exit {completed.returncode})", "-")
            return
        megabytes = int(peak.group(1))
        self.results[ROWS[10][0]] = Result(f"{megabytes} MB ({shapes:,} shapes, --jobs 1)", at_most(megabytes, 249))


def load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def commit() -> str:
    found = subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty"], capture_output=True,
                           text=True, check=False)
    return found.stdout.strip() or "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=None, help="runs per median (default 3; 1 with --quick)")
    parser.add_argument("--quick", action="store_true", help="small logs, one run each: checks that every row runs")
    parser.add_argument("--data", type=Path, default=ROOT / "bench-data", help="where the built logs are cached")
    parser.add_argument("--timeout", type=float, default=300, help="seconds a run may take before it is stopped "
                        "and its row says so (default 300)")
    parser.add_argument("--mdbkit", default=shutil.which("mdbkit"))
    parser.add_argument("--mloginfo", default=shutil.which("mloginfo"))
    arguments = parser.parse_args()
    arguments.runs = arguments.runs or (1 if arguments.quick else 3)
    compile_package()  # see precompile.py: time runs, not bytecode compilation
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    sizes = QUICK if arguments.quick else FULL
    print(f"idxadvisor {commit()}, python {sys.version.split()[0]}, {os.cpu_count()} cores, median of "
          f"{arguments.runs} run(s), {started}, load average {load()}; logs: JSON {sizes['json']} MB, text "
          f"{sizes['text-small']} MB (small) and {sizes['text']} MB")
    bench = Bench(arguments)
    bench.json_rows()
    bench.text_rows()
    bench.start_up_row()
    bench.memory_row()
    print(f"\nload average at the end {load()}")
    width = max(len(name) for name, _ in ROWS)
    print(f"{'target':{width}}  {'measured':46} {'aim':10} met")
    for name, target in ROWS:
        result = bench.results.get(name, Result("not run", "-"))
        print(f"{name:{width}}  {result.measured:46} {target:10} {result.met}")


if __name__ == "__main__":
    main()
