"""The display without a terminal: one JSON object per refresh, a line each (NDJSON), for dashboards and scripts."""

from __future__ import annotations

from typing import TextIO

import orjson

from idxadvisor.watch.snapshot import Snapshot


class NdjsonDisplay:
    """Writes each refresh to ``out`` as one line, flushed at once (a reader of the pipe sees it when it happens)."""

    key_fd: int | None = None

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def start(self) -> None:
        """Nothing to set up."""

    def show(self, snapshot: Snapshot) -> None:
        self.out.write(orjson.dumps(snapshot.as_json()).decode() + "\n")
        self.out.flush()

    def keys(self) -> str:
        return ""

    def stop(self) -> None:
        """Nothing to take down: the report follows the last line."""
