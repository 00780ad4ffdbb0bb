"""Which implementation of the hot path's compiled pieces runs: the C extension ``idxadvisor._speedups`` when it was
built and not turned off, else none (callers then take their Python path, which is the reference).

Chosen once, at import. ``IDXADVISOR_PURE_PYTHON=1`` (any value but empty or ``0``) forces the Python path, to
compare the two or to rule the extension out when something looks wrong.
"""

from __future__ import annotations

import os
from types import ModuleType

PURE_PYTHON_VARIABLE = "IDXADVISOR_PURE_PYTHON"


def _load() -> ModuleType | None:
    if os.environ.get(PURE_PYTHON_VARIABLE, "") not in ("", "0"):
        return None
    try:
        from idxadvisor import _speedups
    except ImportError:  # built without a compiler, or a platform without a wheel: the Python path
        return None
    return _speedups


speedups = _load()


def implementation() -> str:
    """``"C"`` or ``"Python"``: for ``--version``-style diagnostics and the benchmarks."""
    return "C" if speedups is not None else "Python"


def described() -> str:
    """Which reading core runs, and why, as ``idxadvisor version`` says it."""
    if speedups is not None:
        return "the C extension (idxadvisor._speedups)"
    if os.environ.get(PURE_PYTHON_VARIABLE, "") not in ("", "0"):
        return f"Python ({PURE_PYTHON_VARIABLE} is set)"
    return "Python (the C extension is not built: installed without a compiler)"
