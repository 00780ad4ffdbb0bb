"""A mergeable histogram of durations for percentiles in bounded memory.

Durations below ``EXACT_LIMIT`` milliseconds are kept exactly, one bucket per whole millisecond (servers log
durations as whole milliseconds). Longer ones fall into logarithmic buckets whose width is ``RELATIVE_ERROR`` of
their value. So a percentile is

* **exact** when the true value is a whole number of milliseconds below ``EXACT_LIMIT``, and
* otherwise within ``RELATIVE_ERROR`` (0.5 %) of the true value, never below it,

using the nearest-rank definition: the p-th percentile of n values is the ⌈p·n/100⌉-th smallest. Memory is at most
``EXACT_LIMIT`` + ~3,200 buckets (durations up to 100 days), whatever the number of values, and merging two
histograms is adding their bucket counts, so partial histograms from several processes combine exactly.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

EXACT_LIMIT = 1024
RELATIVE_ERROR = 0.005
_GAMMA = 1 + RELATIVE_ERROR
_LOG_GAMMA = math.log(_GAMMA)
DISPLAY_BINS_PER_OCTAVE = 4  # DurationHistogram.bins: a latency histogram people read


def _bucket(value: float) -> int:
    """Exact buckets are 0..EXACT_LIMIT-1 (the ceiling of the value); log buckets count up from EXACT_LIMIT."""
    if value < EXACT_LIMIT:
        return max(0, math.ceil(value))
    return EXACT_LIMIT + math.ceil(math.log(value / EXACT_LIMIT) / _LOG_GAMMA)


def _bucket_value(bucket: int) -> float:
    """The upper bound of a bucket: a value reported for it is never below any value it holds."""
    if bucket < EXACT_LIMIT:
        return float(bucket)
    return EXACT_LIMIT * _GAMMA ** (bucket - EXACT_LIMIT)


@dataclass(slots=True)
class DurationHistogram:
    counts: dict[int, int] = field(default_factory=dict)
    n: int = 0
    total: float = 0.0
    maximum: float = 0.0

    def add(self, value: float) -> None:
        if type(value) is int and 0 <= value < EXACT_LIMIT:
            bucket = value  # the common case: a whole number of milliseconds
        elif value != value or value < 0:  # NaN or negative: not a duration
            return
        else:
            bucket = _bucket(value)
        self.counts[bucket] = self.counts.get(bucket, 0) + 1
        self.n += 1
        self.total += value
        if value > self.maximum:
            self.maximum = value

    def add_repeated(self, value: float, count: int) -> None:
        """``count`` durations of ``value`` (a server's aggregated metrics: its mean, its maximum)."""
        if count <= 0 or value != value or value < 0:
            return
        bucket = _bucket(value)
        self.counts[bucket] = self.counts.get(bucket, 0) + count
        self.n += count
        self.total += value * count
        self.maximum = max(self.maximum, value)

    def merge(self, other: DurationHistogram) -> None:
        counts = self.counts
        for bucket, count in other.counts.items():
            counts[bucket] = counts.get(bucket, 0) + count
        self.n += other.n
        self.total += other.total
        self.maximum = max(self.maximum, other.maximum)

    @property
    def mean(self) -> float:
        return self.total / self.n if self.n else 0.0

    def bins(self, per_octave: int = DISPLAY_BINS_PER_OCTAVE) -> list[tuple[float, int]]:
        """The histogram as (upper bound ms, count) over wider bins for drawing: ``per_octave`` bins per power of two
        above 1 ms (edges 1.25, 1.5, 1.75, 2, 2.5 … with the default 4), one bin for 1 ms and less; only non-empty
        bins, in order. A value's bin has an upper bound at or above the value."""
        merged: dict[float, int] = {}
        for bucket, count in self.counts.items():
            upper = display_upper(_bucket_value(bucket), per_octave)
            merged[upper] = merged.get(upper, 0) + count
        return sorted(merged.items())

    def percentile(self, p: float) -> float:
        """Nearest-rank percentile (0 < p ≤ 100); 0 when empty. Never above the maximum seen."""
        if not self.n:
            return 0.0
        return self._percentile_in(sorted(self.counts), p)

    def percentiles(self, ps: Iterable[float]) -> list[float]:
        """``percentile`` of each of ``ps``, in one pass over the buckets sorted once."""
        if not self.n:
            return [0.0 for _ in ps]
        n, counts = self.n, self.counts
        if len(counts) == 1:  # a shape that always took the same time, to the millisecond
            value = min(_bucket_value(next(iter(counts))), self.maximum)
            return [value if math.ceil(p / 100 * n) <= n else self.maximum for p in ps]
        wanted = sorted([(max(1, math.ceil(p / 100 * n)), place) for place, p in enumerate(ps)])
        found = [self.maximum] * len(wanted)
        position, seen = 0, 0
        for bucket in sorted(counts):
            seen += counts[bucket]
            while position < len(wanted) and seen >= wanted[position][0]:
                found[wanted[position][1]] = min(_bucket_value(bucket), self.maximum)
                position += 1
            if position == len(wanted):
                break
        return found

    def _percentile_in(self, order: list[int], p: float) -> float:
        rank = max(1, math.ceil(p / 100 * self.n))
        seen = 0
        for bucket in order:
            seen += self.counts[bucket]
            if seen >= rank:
                return min(_bucket_value(bucket), self.maximum)
        return self.maximum


def display_upper(value: float, per_octave: int) -> float:
    """The upper edge of ``value``'s display bin: 1 for 1 ms and less, else the next of ``per_octave`` equal steps
    between two powers of two (exact binary fractions, so they print short: 1.25, 1.5, 1.75, 2, 2.5 …)."""
    if value <= 1:
        return 1.0
    mantissa, exponent = math.frexp(value)  # value = mantissa * 2**exponent, 0.5 <= mantissa < 1
    step = math.ceil((mantissa * 2 - 1) * per_octave)
    return (1 + step / per_octave) * 2.0 ** (exponent - 1)


def display_lower(upper: float, per_octave: int) -> float:
    """The lower edge of the display bin whose upper edge is ``upper`` (0 for the bin of 1 ms and less)."""
    if upper <= 1:
        return 0.0
    mantissa, exponent = math.frexp(upper)
    octave = 2.0 ** (exponent - (2 if mantissa == 0.5 else 1))  # a power of two closes the octave below it
    step = round((upper / octave - 1) * per_octave)
    return octave * (1 + (step - 1) / per_octave)


#: Coarse bins for small per-minute histograms: 8 per power of two, so a bin's upper edge is at most 12.5 % above any
#: value in it. Cheap to compute (``frexp``) and sparse: a minute of one shape rarely fills more than a few.
COARSE_BINS_PER_OCTAVE = 8
COARSE_RELATIVE_ERROR = 1 / 8


def coarse_bin(value: float) -> int:
    """The coarse bin of a duration: 0 for anything under 1 ms, then 8 bins per power of two."""
    if value < 1:
        return 0
    mantissa, exponent = math.frexp(value)  # value = mantissa * 2**exponent, 0.5 <= mantissa < 1
    return exponent * COARSE_BINS_PER_OCTAVE + int((mantissa - 0.5) * 2 * COARSE_BINS_PER_OCTAVE) - 7


def coarse_upper(bin_index: int) -> float:
    """The upper edge of a coarse bin (never below a value it holds)."""
    if bin_index <= 0:
        return 1.0
    exponent, step = divmod(bin_index + 7, COARSE_BINS_PER_OCTAVE)
    return (0.5 + (step + 1) / (2 * COARSE_BINS_PER_OCTAVE)) * 2.0 ** exponent


def coarse_percentile(bins: dict[int, int], p: float, maximum: float) -> float:
    """Nearest-rank percentile of coarse bins: within 12.5 % above the true value, never above ``maximum``."""
    if len(bins) == 1:  # most buckets of a shape's timeline: a minute of similar executions
        (bin_index, count), = bins.items()
        if count > 0:
            return min(coarse_upper(bin_index), maximum)
    total = sum(bins.values())
    if not total:
        return 0.0
    rank = max(1, math.ceil(p / 100 * total))
    seen = 0
    for bin_index in sorted(bins):
        seen += bins[bin_index]
        if seen >= rank:
            return min(coarse_upper(bin_index), maximum)
    return maximum
