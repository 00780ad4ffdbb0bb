"""Process-level helpers the pipeline shares."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic garbage collection inside the block (reference counting still frees what is dropped).

    For phases that build many long-lived, acyclic objects (a data sample's documents, thousands of shapes and their
    findings): the collector, triggered again and again as they pile up, walks every object built so far, which makes
    such a phase grow faster than its input. The previous state is restored on the way out.

    What the phase built is moved to the oldest generation on the way out (``freeze`` then ``unfreeze``: two list
    splices): left in the youngest, the first collection after it would walk every one of those objects at once (an
    eighth of a second after a 160 MB log). They stay collectable: only full collections look at them, as at any
    long-lived object."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.freeze()
            gc.unfreeze()
            gc.enable()
