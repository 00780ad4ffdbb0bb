"""``python -m idxadvisor`` and the ``idxadvisor`` command: the collector paused for start-up, then the command line."""

import os
import sys

from idxadvisor.runtime import pause_collector_for_start_up, skip_pydantic_plugin_discovery


def main() -> None:
    if sys.argv[1:] in (["--version"], ["-V"]):  # the whole command line: no need for Typer (60 ms) to say it
        _print_version()
    pause_collector_for_start_up()  # before Typer and pydantic are imported: see runtime.pause_collector_for_start_up
    # No pydantic plugin watches the command line's own models: looking for one scanned the entry points of every
    # installed package on each start (3 ms with a hundred; more in a crowded environment). The user's choice wins.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    skip_pydantic_plugin_discovery()
    from idxadvisor.cli import main as command_line

    command_line()


def _print_version() -> None:
    """The version line, and the end of the process (nothing to tear down: see cli.app.exit_without_teardown); a
    reader gone away gets the status other tools end with then, as from every command."""
    from idxadvisor import __version__
    from idxadvisor.exitcodes import ExitCode

    try:
        sys.stdout.write(f"idxadvisor {__version__}\n")
        sys.stdout.flush()
    except BrokenPipeError:
        os._exit(ExitCode.BROKEN_PIPE)
    os._exit(ExitCode.OK)


if __name__ == "__main__":
    main()
