"""The Typer application and the command line's single error boundary.

Every expected failure is one line, ``idxadvisor: error: …``, and an exit code from ``idxadvisor.exitcodes``; a
traceback only with ``--debug``. Commands live one per module beside this one and register themselves on ``app``.
"""

from __future__ import annotations

import atexit
import os
import signal
import sys
import traceback

from typing import Annotated, Any, NoReturn, Optional

import typer
from typer.core import TyperCommand, TyperGroup

from idxadvisor.errors import IdxAdvisorError
from idxadvisor.exitcodes import ExitCode
from idxadvisor.report import wants_colour
from idxadvisor.runtime import end_start_up
from idxadvisor.units import mask_secrets, printable


class _NoPlaceholderForHelp:
    """The help flag shows no ``<bool>`` placeholder."""

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)  # type: ignore[misc]
        if option is not None:
            option.metavar = ""
        return option


class Group(_NoPlaceholderForHelp, TyperGroup):
    """The top-level command group."""


class Command(_NoPlaceholderForHelp, TyperCommand):
    """A command whose help page shows no Typer type placeholders (``<bool>``, ``<list[str]>``): an option shows its
    metavar (a flag none), an argument its metavar and nothing else."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for param in self.params:
            if param.param_type_name == "argument" and param.metavar is not None:
                param.display_type_rich = lambda ctx: None  # type: ignore[attr-defined]

    def invoke(self, ctx: Any) -> Any:
        end_start_up()  # the arguments are parsed: the command's own work starts
        return super().invoke(ctx)


def _print_version(value: bool) -> None:
    if value:
        from idxadvisor import __version__

        sys.stdout.write(f"idxadvisor {__version__}\n")
        raise typer.Exit()


def _options(
    version: Annotated[Optional[bool], typer.Option(
        "--version", "-V", metavar="", callback=_print_version, is_eager=True,
        help="Print the version and exit.")] = None,
) -> None:
    """The options that come before a command's name."""


_SETTINGS: dict[str, Any] = dict(
    name="idxadvisor",
    help="MongoDB query and index advisor: reads slow-operation logs and profiler dumps, groups query shapes, "
    "and proves index suggestions.\n\nExit codes: 0 ok, 1 findings at or above --fail-on, 2 usage, config or "
    "input error, 3 server or connection error, 130 interrupted.",
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 120},
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
    cls=Group,
    callback=_options,
)
app = typer.Typer(**_SETTINGS)


def examples(*commands: str) -> str:
    """A help page's closing lines: commands to copy (tests/test_help.py parses each against the command's options).
    Rich markup: a literal ``[`` is written ``\\[``."""
    return "Examples:\n\n" + "\n\n".join(f"  {line}" for line in commands)


def command(name: str | None = None, **options: Any) -> Any:
    """``@command()`` registers a function as a command of ``app``, with help pages in the house style."""
    return app.command(name, cls=Command, **options)


def error_line(message: str) -> None:
    """One line on stderr (red on a terminal); never Rich markup, since messages quote queries; passwords masked and
    control characters shown as escapes (``units.printable``)."""
    line = f"idxadvisor: error: {printable(mask_secrets(message))}"
    if wants_colour(sys.stderr):
        line = f"\x1b[31m{line}\x1b[0m"
    sys.stderr.write(line + "\n")


def warning_line(message: str) -> None:
    """One line on stderr about something left out (yellow on a terminal); passwords masked, control characters
    shown as escapes."""
    line = f"idxadvisor: warning: {printable(mask_secrets(message))}"
    if wants_colour(sys.stderr):
        line = f"\x1b[33m{line}\x1b[0m"
    sys.stderr.write(line + "\n")


def _traceback() -> None:
    """The current exception's traceback on stderr (``--debug``), with passwords masked like every other message."""
    sys.stderr.write(mask_secrets(traceback.format_exc()))


def run(argv: list[str] | None = None) -> int:
    """Run the command line and return its exit code (the single error boundary)."""
    arguments = sys.argv[1:] if argv is None else argv
    debug = "--debug" in arguments
    try:
        result = _command_line(arguments)(args=arguments, prog_name="idxadvisor", standalone_mode=False)
    except IdxAdvisorError as exc:
        if debug:
            _traceback()
        error_line(str(exc))
        return exc.exit_code
    except typer.Exit as exc:
        return exc.exit_code
    except typer.TyperException as exc:  # Typer's usage errors: unknown option, bad value ...
        message = exc.format_message()
        if message:  # empty when Typer already printed the help (no arguments at all)
            error_line(message)
        return ExitCode.USAGE
    except (typer.Abort, KeyboardInterrupt):
        error_line("interrupted")
        return ExitCode.INTERRUPTED
    except BrokenPipeError:
        _silence_stdout()
        return ExitCode.BROKEN_PIPE
    except SystemExit as exc:  # click ends a closed pipe with exit(1), the findings code: say what happened instead
        if isinstance(exc.__context__, BrokenPipeError):
            _silence_stdout()
            return ExitCode.BROKEN_PIPE
        raise
    except Exception as exc:  # noqa: BLE001 - the last line of defence: a bug, reported in one line
        if debug:
            _traceback()
        error_line(f"internal error: {type(exc).__name__}: {exc} (run with --debug for the traceback)")
        return ExitCode.USAGE
    if result == ExitCode.INTERRUPTED:  # Typer turns Ctrl-C inside a command into Exit(130), silently
        error_line("interrupted")
    return int(result) if isinstance(result, int) else ExitCode.OK


def _command_line(arguments: list[str]) -> Any:
    """The click group that runs these arguments. When they start with a command's name, the group holds that command
    alone: Typer turns every command it holds into a click command (its signature, help and options) before parsing,
    and the ten others took 7 ms of each start-up. Anything else (no command, --help, a misspelt name) gets them all."""
    named = arguments[0] if arguments else None
    for info in app.registered_commands:
        if (info.name or typer.main.get_command_name(getattr(info.callback, "__name__", ""))) == named:
            alone = typer.Typer(**_SETTINGS)
            alone.registered_commands = [info]
            return typer.main.get_group(alone)
    return typer.main.get_command(app)


def _silence_stdout() -> None:
    """After the reader of a pipe went away, make interpreter shutdown not complain about flushing stdout."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


def main() -> None:
    code = run()
    # The command is over and its report written: a Ctrl-C now ends the process with the report flushed, never with
    # a traceback from a library's clean-up (pymongo's, closing a client at exit).
    signal.signal(signal.SIGINT, lambda signum, frame: _exit_interrupted())
    exit_without_teardown(code)


def _exit_interrupted() -> NoReturn:
    os._exit(_flushed(ExitCode.INTERRUPTED))


def exit_without_teardown(code: int) -> NoReturn:
    """End the process with ``code`` once the output is flushed and the exit handlers have run, but without tearing
    the interpreter down: freeing every module and object one by one, memory the system reclaims at once anyway, took
    30 ms of a small log's 220 and 80 ms after a 160 MB one. With another thread still running, a normal exit (which
    waits for it)."""
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        sys.exit(code)
    code = _flushed(code)
    atexit._run_exitfuncs()  # what a normal exit runs: a pool's or a temporary directory's clean-up
    os._exit(_flushed(code))


def _flushed(code: int) -> int:
    """``code`` once stdout and stderr are flushed; an error code when the report could not be written whole."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away, as in run(): the status other tools end with then
        _silence_stdout()
        code = ExitCode.BROKEN_PIPE
    except (OSError, ValueError) as exc:
        error_line(f"cannot write the output: {exc}")
        code = code or ExitCode.USAGE
    try:
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    return code
