"""The command line: a thin Typer layer over ``idxadvisor.api``, one module per command.

Only the report goes to stdout (so ``--format json | jq`` works); messages and progress go to stderr. Every expected
failure is one line, ``idxadvisor: error: …``, and an exit code from ``idxadvisor.exitcodes``; a traceback only with
``--debug``. Command modules import the library where they use it: every import is start-up time the user waits for
before the first line is read.
"""

from idxadvisor.cli.app import app, main, run
# each registers its commands on ``app``
from idxadvisor.cli import analyze, check, export_script, indexes, info, replay, whatif  # noqa: F401,E402
from idxadvisor.cli import compare, merge  # noqa: F401,E402
from idxadvisor.cli import watch  # noqa: F401,E402

__all__ = ["app", "main", "run"]
