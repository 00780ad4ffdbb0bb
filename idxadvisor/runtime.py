"""Process-level helpers the pipeline shares."""

from __future__ import annotations

import gc
import os
import sys
import types
from collections.abc import Iterator
from contextlib import contextmanager

_paused_for_start_up = False


def pause_collector_for_start_up() -> None:
    """No cyclic garbage collection while the command line starts (imports, building and parsing the command).

    Start-up builds only objects that live as long as the process (modules, classes, functions, pydantic schemas), yet
    the collector, triggered about 80 times by as many allocations, walked them again and again: 8 to 10 ms of a
    small log's start-up. ``end_start_up`` turns it back on."""
    global _paused_for_start_up
    if gc.isenabled():
        gc.disable()
        _paused_for_start_up = True


def end_start_up() -> None:
    """The collector back on, if ``pause_collector_for_start_up`` turned it off; what start-up built is moved out of
    its way for good (``gc.freeze``: only cyclic garbage among those objects would stay, and start-up makes none to
    speak of). Without a pause before (the library or the tests calling the command line), nothing changes."""
    global _paused_for_start_up
    if _paused_for_start_up:
        _paused_for_start_up = False
        gc.freeze()
        gc.enable()


#: The values of ``PYDANTIC_DISABLE_PLUGINS`` with which pydantic looks for no plugin at all.
PLUGINS_DISABLED = ("__all__", "1", "true")
_PLUGIN_LOADER = "pydantic.plugin._loader"


def skip_pydantic_plugin_discovery() -> None:
    """With every pydantic plugin disabled (``PYDANTIC_DISABLE_PLUGINS``, which the console script sets unless the
    user did), stand in for ``pydantic.plugin._loader``: its only function then returns no plugin without looking,
    yet importing the module imports ``importlib.metadata`` (with email, zipfile and csv: 12 to 18 ms of a small
    log's start-up) for the entry points it does not read. With plugins allowed, or the loader imported already,
    nothing changes."""
    if os.environ.get("PYDANTIC_DISABLE_PLUGINS") not in PLUGINS_DISABLED or _PLUGIN_LOADER in sys.modules:
        return
    stand_in = types.ModuleType(_PLUGIN_LOADER, "Plugins disabled: no plugin (idxadvisor.runtime stands in).")
    stand_in.get_plugins = lambda: ()  # type: ignore[attr-defined]
    stand_in.__getattr__ = _real_plugin_loader  # type: ignore[attr-defined]
    sys.modules[_PLUGIN_LOADER] = stand_in


def _real_plugin_loader(name: str) -> object:
    """A name the stand-in lacks (a later pydantic asking its loader for more): the real module takes its place."""
    import importlib

    if name.startswith("__"):  # the import system asking whether the module is a package (__path__), and such
        raise AttributeError(name)
    held = sys.modules.get(_PLUGIN_LOADER)
    if held is not None and "__file__" not in vars(held):  # the stand-in (vars: no __getattr__ back into here)
        del sys.modules[_PLUGIN_LOADER]
    return getattr(importlib.import_module(_PLUGIN_LOADER), name)


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
