"""``causes.BusyIndex`` answers "which shapes ran in these minutes, and how much" as a scan of every shape's timeline
would (TM003's ticket holders, TM008's neighbours), from one index built per run."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from idxadvisor.models.events import Event
from idxadvisor.rules.causes import BusyIndex
from idxadvisor.shapes.digest import ShapeStats, Timeline
from idxadvisor.shapes.shape import shape_of


def _stats(number: int, executions: list[tuple[int, float]], width: int) -> ShapeStats:
    shape = shape_of(Event("db.c", "find", command={"find": "c", "filter": {f"f{number}": 1}}))[0]
    stats = ShapeStats(shape, timeline=Timeline(width))
    for minute, duration in executions:
        stats.timeline.add_at(minute * 60.0, duration)
    return stats


def _scanned(stats: ShapeStats, minutes: set[int]) -> tuple[int, float]:
    """The definition: every bucket holding one of the minutes counts whole."""
    width, count, total = stats.timeline.width_minutes, 0, 0.0
    for start, bucket in stats.timeline.buckets.items():
        if any(start <= minute < start + width for minute in minutes):
            count, total = count + bucket.count, total + bucket.total_ms
    return count, total


timelines = st.lists(st.tuples(st.lists(st.tuples(st.integers(0, 40), st.floats(0, 1e4)), max_size=12),
                               st.sampled_from([1, 2, 4])), min_size=1, max_size=8)


@settings(max_examples=150, deadline=None)
@given(timelines, st.sets(st.integers(0, 40), max_size=10))
def test_the_index_counts_what_a_scan_of_every_timeline_counts(shapes: list, minutes: set[int]) -> None:
    every = [_stats(number, executions, width) for number, (executions, width) in enumerate(shapes)]
    found = {id(stats): (count, total) for stats, count, total in BusyIndex(every).busy_in(minutes)}
    for stats in every:
        count, total = _scanned(stats, minutes)
        got = found.get(id(stats), (0, 0.0))
        assert got[0] == count and abs(got[1] - total) <= 1e-6 * max(1.0, total)


@settings(max_examples=150, deadline=None)
@given(timelines, st.sets(st.integers(0, 40), max_size=10), st.integers(1, 4))
def test_the_busiest_are_the_first_of_every_busy_shape_by_time_then_fingerprint(shapes: list, minutes: set[int],
                                                                               limit: int) -> None:
    every = [_stats(number, executions, width) for number, (executions, width) in enumerate(shapes)]
    index = BusyIndex(every)
    expected = sorted((item for item in index.busy_in(minutes) if item[1]),
                      key=lambda item: (-item[2], item[0].shape.fingerprint))[:limit + 1]
    assert index.busiest(minutes, limit) == expected
    assert index.busiest(set(minutes), limit) is index.busiest(minutes, limit)  # worked out once per set of minutes


def test_the_busiest_of_a_crowded_stretch_are_found_without_summing_every_shape() -> None:
    quiet = [_stats(number, [(minute, 1.0 + number / 1000) for minute in range(10)], 1) for number in range(300)]
    heavy = [_stats(300 + number, [(minute, 5_000.0 * (number + 1)) for minute in range(10)], 1) for number in range(3)]
    index = BusyIndex(quiet + heavy)
    summed: list[int] = []
    exact = index._exact

    def counted(number: int, starts: list[tuple[int, int]]) -> tuple:
        summed.append(number)
        return exact(number, starts)

    index._exact = counted  # type: ignore[method-assign]
    minutes = set(range(10))
    expected = sorted((item for item in index.busy_in(minutes) if item[1]),
                      key=lambda item: (-item[2], item[0].shape.fingerprint))[:4]
    assert index.busiest(minutes, 3) == expected
    assert [stats for stats, _, _ in expected[:3]] == heavy[::-1]
    assert len(summed) < 20  # the three heavy shapes and the first rows of the quiet ones, not all 303
