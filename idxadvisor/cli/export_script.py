"""``idxadvisor export-script``: print a read-only mongosh script that writes the files --indexes and --data read."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from idxadvisor.cli.app import command, examples
from idxadvisor.cli.common import EVIDENCE, FLAG, OUTPUT, SERVER, DbOption, output_stream
from idxadvisor.exitcodes import ExitCode


@command("export-script", epilog=examples(
    'idxadvisor export-script --db shop > export.js && mongosh "$URI" --quiet --file export.js'))
def export_script(
    db: DbOption = None,
    sample_size: Annotated[int, typer.Option(
        metavar="N", help="Documents the script samples from each collection with $sample. \\[default: 10000]",
        rich_help_panel=EVIDENCE, show_default=False)] = 10_000,
    uri: Annotated[Optional[str], typer.Option(
        metavar="URI", help="Shown in the script's comment on how to run it (its password masked); nothing "
        "connects.", rich_help_panel=SERVER)] = None,
    output: Annotated[Optional[Path], typer.Option(
        "--output", "-o", metavar="FILE", help="Write the script to FILE instead of stdout.",
        rich_help_panel=OUTPUT)] = None,
    debug: Annotated[bool, typer.Option(
        "--debug", metavar=FLAG, help="Show tracebacks.", rich_help_panel=OUTPUT)] = False,
) -> int:
    """Print a read-only mongosh script writing the files --indexes and --data read, for servers no tool may reach."""
    from idxadvisor import api
    from idxadvisor.errors import UsageError

    if sample_size < 1:
        raise UsageError("--sample-size must be at least 1")
    with output_stream(output) as out:
        out.write(api.export_script(db or [], sample_size, uri))
    return ExitCode.OK
