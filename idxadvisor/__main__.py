"""``python -m idxadvisor`` and the ``idxadvisor`` command: the collector paused for start-up, then the command line."""

import os

from idxadvisor.runtime import pause_collector_for_start_up


def main() -> None:
    pause_collector_for_start_up()  # before Typer and pydantic are imported: see runtime.pause_collector_for_start_up
    # No pydantic plugin watches the command line's own models: looking for one scanned the entry points of every
    # installed package on each start (3 ms with a hundred; more in a crowded environment). The user's choice wins.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    from idxadvisor.cli import main as command_line

    command_line()


if __name__ == "__main__":
    main()
