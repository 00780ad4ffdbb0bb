"""``idxadvisor indexes``: write a live server's index file (with $indexStats usage) for CI and offline runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from idxadvisor.cli.app import command, examples, warning_line
from idxadvisor.cli.common import FLAG, OUTPUT, SERVER, DbOption, output_stream
from idxadvisor.exitcodes import ExitCode


@command(epilog=examples(
    'idxadvisor indexes --uri "$URI" --db shop -o indexes.json'))
def indexes(
    uri: Annotated[str, typer.Option(
        metavar="URI", help="The server to read (read-only: listDatabases, listCollections, listIndexes, "
        "$indexStats).", rich_help_panel=SERVER, show_default=False)],
    db: DbOption = None,
    output: Annotated[Optional[Path], typer.Option(
        "--output", "-o", metavar="FILE", help="Write the index file to FILE instead of stdout.",
        rich_help_panel=OUTPUT)] = None,
    debug: Annotated[bool, typer.Option(
        "--debug", metavar=FLAG, help="Show tracebacks.", rich_help_panel=OUTPUT)] = False,
) -> int:
    """Write a live server's index file for --indexes, each index with its $indexStats usage."""
    from bson import json_util

    from idxadvisor import api

    document, missing = api.index_file(uri, db or [])
    with output_stream(output) as out:
        out.write(json_util.dumps(document, json_options=json_util.RELAXED_JSON_OPTIONS, indent=2) + "\n")
    for line in missing:
        warning_line(f"left out: {line}")
    return ExitCode.OK
