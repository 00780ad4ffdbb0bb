"""The duration histogram the HTML report draws: few bins, every execution counted, each bin bounding its values."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from idxadvisor.shapes.sketch import EXACT_LIMIT, RELATIVE_ERROR, DurationHistogram, display_lower, display_upper

durations = st.one_of(st.integers(min_value=0, max_value=5_000), st.floats(min_value=0, max_value=1e9))


def test_edges_are_four_steps_per_power_of_two() -> None:
    assert [display_upper(value, 4) for value in (0, 0.4, 1, 1.1, 1.25, 1.26, 2, 2.01, 3, 9, 100, 1500)] == [
        1, 1, 1, 1.25, 1.25, 1.5, 2, 2.5, 3, 10, 112, 1536]


def test_bins_of_a_hand_counted_histogram() -> None:
    histogram = DurationHistogram()
    for value in (0, 1, 2, 3, 3, 9, 10, 11, 100, 5_000):
        histogram.add(value)
    bins = histogram.bins()
    assert bins[:6] == [(1, 2), (2, 1), (3, 2), (10, 2), (12, 1), (112, 1)]
    (upper, count), = bins[6:]  # 5,000 ms sits in a 0.5 % log bucket, then in the 4,096..5,120 display bin
    assert (upper, count) == (5120, 1)


@given(st.lists(durations, min_size=1, max_size=200))
def test_every_execution_is_in_one_bin_at_or_below_its_upper_bound(values: list[float]) -> None:
    histogram = DurationHistogram()
    for value in values:
        histogram.add(value)
    bins = histogram.bins()
    assert sum(count for _, count in bins) == histogram.n == len(values)
    uppers = [upper for upper, _ in bins]
    assert uppers == sorted(set(uppers))
    assert uppers[-1] >= max(values)
    # no more than 4 bins per power of two the durations span, plus the bin of 1 ms and less
    span = math.log2(max(max(values), 1) * (1 + RELATIVE_ERROR))
    assert len(bins) <= 4 * math.ceil(span) + 1


@given(durations)
def test_a_bin_is_at_most_a_quarter_above_what_the_histogram_keeps(value: float) -> None:
    """The fine histogram keeps a whole millisecond (its ceiling) below 1,024 ms, 0.5 % above the value beyond."""
    histogram = DurationHistogram()
    histogram.add(value)
    ((upper, count),) = histogram.bins()
    kept = math.ceil(value) if value < EXACT_LIMIT else value * (1 + RELATIVE_ERROR)
    assert count == 1 and upper >= value
    assert upper <= max(1.0, kept * 1.25)


@given(st.floats(min_value=0, max_value=1e9))
def test_a_bin_runs_from_the_edge_below_to_its_upper_bound(value: float) -> None:
    upper = display_upper(value, 4)
    lower = display_lower(upper, 4)
    assert lower < value <= upper or value == lower == 0
    assert lower == 0 or display_upper(lower, 4) == lower  # the edge below is an edge itself
    assert upper / max(lower, 0.8) <= 1.25 or lower == 0



@given(st.lists(durations, max_size=300))
def test_percentiles_are_each_percentile_of_one_sorting(values: list[float]) -> None:
    histogram = DurationHistogram()
    for value in values:
        histogram.add(value)
    wanted = (0, 25, 50, 95, 99, 100)
    assert histogram.percentiles(wanted) == [histogram.percentile(p) for p in wanted]
