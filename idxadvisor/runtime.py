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
    such a phase grow faster than its input. The previous state is restored on the way out."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
