"""Exit codes: a public contract that CI pipelines gate on (DESIGN.md, "Exit codes")."""

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0  # nothing at or above --fail-on
    FINDINGS = 1  # findings at or above --fail-on
    USAGE = 2  # usage, configuration or input error
    SERVER = 3  # server or connection error
    INTERRUPTED = 130  # Ctrl-C
    BROKEN_PIPE = 141  # the reader of the output went away (128 + SIGPIPE), as other Unix tools end then
