"""``collector_paused``: no collection inside, the previous state after, and what was built inside left to full
collections only, yet still collectable."""

from __future__ import annotations

import gc
import weakref

from idxadvisor.runtime import collector_paused


class _Node:
    def __init__(self) -> None:
        self.other: _Node | None = None


def test_what_was_built_inside_goes_to_the_oldest_generation_and_stays_collectable() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        built = [[number] for number in range(20_000)]
        first, second = _Node(), _Node()
        first.other, second.other = second, first  # a cycle: only the collector can free it
        watch = weakref.ref(first)
    assert gc.isenabled()
    assert len(gc.get_objects(generation=0)) < 1_000  # not left for the next young collection to walk
    assert any(item is built[0] for item in gc.get_objects(generation=2))
    del first, second, built
    gc.collect()
    assert watch() is None


def test_a_paused_collector_stays_paused_after_a_nested_pause() -> None:
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
