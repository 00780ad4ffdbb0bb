"""A real ``idxadvisor watch`` process for tests: its NDJSON lines as they come, then its report."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

REPO_ROOT = Path(__file__).resolve().parents[2]
DEADLINE = 20.0  # seconds a test waits for what must come within an interval or two (a loaded machine is slow)


class WatchProcess:
    def __init__(self, *arguments: str, stdin: int | IO[Any] = subprocess.DEVNULL, cwd: Path | None = None) -> None:
        env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "NO_COLOR": "1"}
        self.process = subprocess.Popen([sys.executable, "-m", "idxadvisor", "watch", *arguments], cwd=cwd or REPO_ROOT,
                                        stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        self.lines: queue.Queue[dict[str, Any]] = queue.Queue()
        self.rest: list[str] = []  # what follows the NDJSON lines: the report
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            line = raw.decode("utf-8")
            if line.startswith('{"type":"interval"') and not self.rest:
                self.lines.put(json.loads(line))
            else:
                self.rest.append(line)

    def next_line(self, timeout: float = DEADLINE) -> dict[str, Any]:
        return self.lines.get(timeout=timeout)

    def wait_for(self, predicate: Callable[[dict[str, Any]], bool], timeout: float = DEADLINE) -> dict[str, Any]:
        """The first NDJSON line that satisfies ``predicate`` (AssertionError when none comes in time)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError("no NDJSON line satisfied the test in time")
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                raise AssertionError("no NDJSON line in time") from None
            if predicate(line):
                return line

    def end(self, number: int | None = signal.SIGINT, timeout: float = DEADLINE) -> tuple[int, str, str]:
        """Send ``number`` (None: none, the process ends by itself) and return its exit code, report and stderr."""
        if number is not None:
            self.process.send_signal(number)
        try:
            code = self.process.wait(timeout=timeout)
        finally:
            if self.process.poll() is None:
                self.process.kill()
        self._reader.join(timeout)
        assert self.process.stderr is not None
        return code, "".join(self.rest), self.process.stderr.read().decode("utf-8")

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def operations(line: dict[str, Any]) -> int:
    return int(line["total"]["operations"])


def shape_counts(part: dict[str, Any]) -> dict[str, int]:
    return {shape["shape"]: shape["count"] for shape in part["shapes"]}
