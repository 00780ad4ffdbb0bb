"""The errors the command line turns into one line on stderr and an exit code.

Anything else that escapes is a bug: the CLI shows it as one line too, and the traceback only with ``--debug``.
"""

from idxadvisor.exitcodes import ExitCode


class IdxAdvisorError(Exception):
    """Base class: an expected failure with a message meant for the user."""

    exit_code: ExitCode = ExitCode.USAGE


class UsageError(IdxAdvisorError):
    """Bad command-line arguments or settings."""


class InputError(IdxAdvisorError):
    """An input that cannot be opened or read at all (a bad line inside an input is a counted problem instead)."""


class ServerError(IdxAdvisorError):
    """A MongoDB server could not be reached or refused a command."""

    exit_code = ExitCode.SERVER
