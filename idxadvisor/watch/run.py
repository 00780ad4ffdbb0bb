"""The watch loop: follow the input, feed the session, refresh the display every interval, read keys, and end on
Ctrl-C, SIGTERM, ``q``, the end of stdin or ``--once-idle`` with the full report of everything read.

The loop waits on the input (stdin) and the keyboard with ``select`` for at most a tenth of a second at a time, so
that a rotation, a key or a signal is seen within that long; a file is polled the same way (as ``tail -F`` does).
"""

from __future__ import annotations

import os
import select
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from idxadvisor.api import advise, digest_options
from idxadvisor.config import Settings
from idxadvisor.errors import InputError, UsageError
from idxadvisor.models.report import Report
from idxadvisor.shapes.digest import Digest
from idxadvisor.units import mask_secrets
from idxadvisor.watch.follow import FileFollower, InputEnd, Lines, Overlong, StreamFollower
from idxadvisor.watch.session import WatchSession
from idxadvisor.watch.snapshot import SORT_NAMES, SORTS, Advisor, Snapshot, take_snapshot

POLL_SECONDS = 0.1


@dataclass(frozen=True)
class WatchOptions:
    interval: float = 2.0  # seconds between refreshes
    window: float = 300.0  # seconds of the recent view
    once_idle: float | None = None  # end after this many seconds without a new line
    from_start: bool = False  # read what the file holds already, not only what is written from now on
    rows: int = 10  # shapes in each table and NDJSON list
    sort: str = "total"

    def check(self) -> None:
        if not self.interval > 0:
            raise UsageError("--interval: must be more than 0 seconds")
        if not self.window >= self.interval:
            raise UsageError("--window: must be at least one --interval")
        if self.once_idle is not None and not self.once_idle > 0:
            raise UsageError("--once-idle: must be more than 0 seconds")
        if self.rows < 1:
            raise UsageError("--rows: must be at least 1")
        if self.sort not in SORT_NAMES:
            raise UsageError(f"--sort: '{self.sort}' is not one of {', '.join(SORT_NAMES)}")


class Display(Protocol):
    """Where refreshes go: the live view on a terminal, or NDJSON lines."""

    key_fd: int | None  # the keyboard to read keys from (None: no keys)

    def start(self) -> None: ...
    def show(self, snapshot: Snapshot) -> None: ...
    def keys(self) -> str: ...
    def stop(self) -> None: ...


@dataclass
class _Controls:
    sort: str
    paused: bool = False
    quit: bool = False
    changed: bool = False  # the view must be drawn again now

    def press(self, keys: str) -> None:
        for key in keys.lower():
            if key in SORTS:
                self.sort, self.changed = SORTS[key][0], True
            elif key == " ":
                self.paused, self.changed = not self.paused, True
            elif key == "q":
                self.quit = True


class _Stop:
    requested = False


@contextmanager
def _stop_on_signals(stop: _Stop) -> Iterator[None]:
    """SIGINT and SIGTERM end the watch with its report; a second one gives the report up (the usual Ctrl-C)."""

    def handler(signum: int, frame: object) -> None:
        if stop.requested:
            raise KeyboardInterrupt
        stop.requested = True

    signals = (signal.SIGINT, signal.SIGTERM)
    try:
        previous = {number: signal.signal(number, handler) for number in signals}
    except ValueError:  # not the main thread (an embedding program): it stops the watch its own way
        yield
        return
    try:
        yield
    finally:
        for number, action in previous.items():
            signal.signal(number, action)


def check_workload_target(path: Path | None, settings: Settings) -> None:
    """--save-workload FILE: an existing FILE must be a workload recorded with the same filters (checked before
    watching, not after an hour of it)."""
    if path is None or not path.exists():
        return
    from idxadvisor.workload import check_filters, load_workload

    check_filters(load_workload(path, qualify_paths=False), digest_options(settings))


def save_watched_workload(path: Path, digest: Digest, session: WatchSession) -> None:
    """Save the digest as a workload file; an existing one gets it added (as ``analyze`` adds new inputs to it)."""
    from idxadvisor.workload import check_filters, load_workload, save_workload
    from idxadvisor.workload.merge import identity

    summaries = session.summaries
    if not path.exists():
        save_workload(path, digest, summaries)
        return
    workload = load_workload(path, qualify_paths=False)
    check_filters(workload, digest.options)
    counted = {identity(summary) for summary in workload.inputs} - {None}
    for summary in summaries:
        if identity(summary) in counted:
            raise UsageError(f"--save-workload: {path} has counted {summary.path} already (same size and first "
                             "64 KiB): adding it again would count its operations twice")
    merged = Digest(digest.options)
    merged.merge(workload.digest)
    merged.merge(digest)
    save_workload(path, merged, workload.inputs + summaries)


class Watch:
    """One watch of ``target`` (a path, or ``-`` for stdin)."""

    def __init__(self, target: str, settings: Settings, options: WatchOptions, display: Display, *,
                 stdin_fd: int = 0, clock: Callable[[], float] = time.monotonic) -> None:
        options.check()
        self.settings, self.options, self.display, self.clock = settings, options, display, clock
        if target == "-":
            self.follower: FileFollower | StreamFollower = StreamFollower(
                stdin_fd, "-", max_line_bytes=settings.max_line_bytes)
        else:
            self.follower = FileFollower(Path(target), from_start=options.from_start,
                                         max_line_bytes=settings.max_line_bytes)
        problem = self.follower.check_readable()
        if problem is not None:
            raise InputError(problem)
        self.started = clock()
        self.session = WatchSession(settings, options.window, options.interval, self.started)
        advise(self.session.total, [], settings)  # a bad --select or --indexes is an error now, not at the first refresh
        self.advisor = Advisor(settings, options.interval, clock)
        self.controls = _Controls(options.sort)
        self._last_input = self.started
        self._last_refresh = self.started
        self._last_shown: Snapshot | None = None

    def run(self) -> None:
        """Follow until told to stop (or the input ends, or stays idle for ``--once-idle``)."""
        stop = _Stop()
        interval = self.options.interval
        next_tick = self.started + interval
        self.display.start()
        try:
            with _stop_on_signals(stop):
                while not (stop.requested or self.controls.quit):
                    self._read()
                    now = self.clock()
                    if self.follower.finished or self._idle(now):
                        break
                    if now >= next_tick:
                        self._tick(now)
                        next_tick = max(next_tick + interval, now + interval / 2)
                    self.controls.press(self.display.keys())
                    if self.controls.changed:
                        self.controls.changed = False
                        self._show(self._snapshot(self.clock()), force=True)
                    if not self.follower.behind:
                        self._wait(max(0.0, min(POLL_SECONDS, next_tick - self.clock())))
        finally:
            self.session.feed(self.follower.close())
            self.session.end_input()
            self._finish()

    def report(self) -> Report:
        """The full report of everything read (``analyze``'s)."""
        return advise(self.session.total, self.session.summaries, self.settings)

    def save_workload(self, path: Path) -> None:
        """Save what was read as a workload file (added to ``path`` when it exists)."""
        save_watched_workload(path, self.session.total, self.session)

    def _read(self) -> None:
        pieces = self.follower.poll()
        if pieces:
            self.session.feed(pieces)
            if any(isinstance(piece, (Lines, Overlong, InputEnd)) for piece in pieces):
                self._last_input = self.clock()

    def _idle(self, now: float) -> bool:
        return self.options.once_idle is not None and now - self._last_input >= self.options.once_idle

    def _tick(self, now: float) -> None:
        self.session.window.tick(now)
        self.advisor.run_if_due(self.session)
        if self._show(self._snapshot(now)):
            self._last_refresh = self.clock()  # after the advice: what it found is new in this refresh only

    def _snapshot(self, now: float, *, finished: bool = False) -> Snapshot:
        snapshot = take_snapshot(self.session, self.advisor, now=now, started=self.started,
                                 since=self._last_refresh, sort=self.controls.sort, limit=self.options.rows,
                                 source=mask_secrets(self.session.current_label or self.follower.label),
                                 status=mask_secrets(self.follower.status))
        snapshot.paused, snapshot.finished = self.controls.paused, finished
        return snapshot

    def _show(self, snapshot: Snapshot, force: bool = False) -> bool:
        """Show the snapshot (False: paused, the view stays as it was; reading goes on)."""
        if self.controls.paused and not force and self._last_shown is not None:
            return False
        self._last_shown = snapshot
        self.display.show(snapshot)
        return True

    def _finish(self) -> None:
        try:
            now = self.clock()
            self.session.window.tick(now)
            self.controls.paused = False
            self._show(self._snapshot(now, finished=True))
        finally:
            self.display.stop()

    def _wait(self, seconds: float) -> None:
        descriptors = [fd for fd in (self.follower.waits_on, self.display.key_fd) if fd is not None]
        if not descriptors:
            time.sleep(seconds)
            return
        try:
            select.select(descriptors, [], [], seconds)
        except (OSError, ValueError):
            time.sleep(seconds)


def read_keys(fd: int) -> str:
    """The keys waiting on a terminal in cbreak mode ('' when none)."""
    try:
        if not select.select([fd], [], [], 0)[0]:
            return ""
        return os.read(fd, 64).decode("utf-8", "replace")
    except (OSError, ValueError):
        return ""
