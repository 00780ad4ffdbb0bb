"""The last few minutes of a followed log: a ring of per-interval digests, and their sum kept as they come and go.

Each slot holds, per shape, only what the view shows (executions, time, the duration histogram's buckets, the work
examined and returned), copied from the digest of the lines read in that interval; the whole window is the running
sum of the slots in it. A slot that leaves the window is subtracted: counts and bucket counts are integers, so the
sum stays exact, and memory is bounded by the slots in the window and the shapes each saw.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

from idxadvisor.shapes.digest import Digest, ShapeStats
from idxadvisor.shapes.sketch import DurationHistogram


@dataclass(slots=True)
class WindowShape:
    """What one shape did in part of the window."""

    count: int = 0
    durations: int = 0  # durations in the histogram (a duration that is not a number is counted, not binned)
    total_ms: float = 0.0
    keys_examined: int = 0
    docs_examined: int = 0
    nreturned: int = 0
    measured: int = 0
    buckets: dict[int, int] = field(default_factory=dict)

    def add_stats(self, stats: ShapeStats) -> None:
        self.count += stats.count
        self.durations += stats.duration.n
        self.total_ms += stats.duration.total
        self.keys_examined += stats.keys_examined
        self.docs_examined += stats.docs_examined
        self.nreturned += stats.nreturned
        self.measured += stats.measured
        buckets = self.buckets
        for bucket, count in stats.duration.counts.items():
            buckets[bucket] = buckets.get(bucket, 0) + count

    def add(self, other: WindowShape, sign: int = 1) -> None:
        self.count += sign * other.count
        self.durations += sign * other.durations
        self.total_ms = max(0.0, self.total_ms + sign * other.total_ms)
        self.keys_examined += sign * other.keys_examined
        self.docs_examined += sign * other.docs_examined
        self.nreturned += sign * other.nreturned
        self.measured += sign * other.measured
        buckets = self.buckets
        for bucket, count in other.buckets.items():
            left = buckets.get(bucket, 0) + sign * count
            if left > 0:
                buckets[bucket] = left
            else:
                buckets.pop(bucket, None)

    def percentile(self, p: float) -> float:
        """The nearest-rank percentile of the window's durations (exact below a second, as the digest's)."""
        histogram = DurationHistogram(self.buckets, self.durations, self.total_ms, math.inf)
        return histogram.percentile(p) if self.durations else 0.0


@dataclass
class _Slot:
    end: float  # the clock when the slot closed (the current slot: math.inf)
    shapes: dict[str, WindowShape] = field(default_factory=dict)


class Window:
    """The last ``seconds`` of executions, in slots of ``interval`` seconds."""

    def __init__(self, seconds: float, interval: float, now: float) -> None:
        self.seconds = seconds
        self.interval = interval
        self.started = now
        self._slots: deque[_Slot] = deque()
        self._current = _Slot(math.inf)
        self.shapes: dict[str, WindowShape] = {}  # the sum of every slot in the window, the current one included

    def add(self, digest: Digest) -> None:
        """The shapes of lines just read (a digest of those lines alone, before it is merged into the total)."""
        current, total = self._current.shapes, self.shapes
        for fingerprint, stats in digest.shapes.items():
            if not stats.count:
                continue
            for target in (current, total):
                shape = target.get(fingerprint)
                if shape is None:
                    shape = target[fingerprint] = WindowShape()
                shape.add_stats(stats)

    def tick(self, now: float) -> None:
        """An interval ended: the current slot joins the ring, and slots older than the window leave it."""
        self._current.end = now
        self._slots.append(self._current)
        self._current = _Slot(math.inf)
        horizon = now - self.seconds
        while self._slots and self._slots[0].end <= horizon:
            for fingerprint, shape in self._slots.popleft().shapes.items():
                summed = self.shapes.get(fingerprint)
                if summed is None:
                    continue
                summed.add(shape, -1)
                if summed.count <= 0:
                    del self.shapes[fingerprint]

    def covered(self, now: float) -> float:
        """Seconds the window spans now: the window, or the time since watching began when that is shorter."""
        return max(min(self.seconds, now - self.started), 1e-3)

    @property
    def slots(self) -> int:
        return len(self._slots) + 1
