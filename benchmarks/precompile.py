"""Time ``idxadvisor`` as an installed copy runs: with its modules' bytecode already compiled.

pip compiles a package's modules when it installs it; an editable install (the README's set-up) leaves that to the
first import, and where ``PYTHONDONTWRITEBYTECODE`` is set (as many containers set it) no import writes the cache, so
every run a benchmark timed would compile the whole package again (0.16 s of a small log's 0.5 s on a slow 2-core
machine), and bench_startup would print it as start-up. The benchmarks that run ``idxadvisor`` as a new process call ``compile_package``
first; compiling writes the cache whatever that variable says, and costs nothing once the cache is up to date.
"""

from __future__ import annotations

import compileall
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "idxadvisor"


def compile_package() -> None:
    if not compileall.compile_dir(str(PACKAGE), quiet=1):
        raise SystemExit(f"could not compile {PACKAGE}: see the errors above")
