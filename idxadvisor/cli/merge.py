"""``idxadvisor merge``: combine workload files (members of a replica set, days of a month) into one."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from idxadvisor.cli.app import command, examples
from idxadvisor.cli.common import INPUT, OUTPUT, DebugOption
from idxadvisor.exitcodes import ExitCode
from idxadvisor.units import human_count, mask_secrets, printable


@command(epilog=examples(
    'idxadvisor merge rs0-a.json rs0-b.json rs0-c.json -o rs0.json'))
def merge(
    workloads: Annotated[list[Path], typer.Argument(
        help="Workload files (analyze --save-workload), compressed or not.", metavar="WORKLOAD",
        show_default=False, rich_help_panel=INPUT)],
    output: Annotated[Path, typer.Option(
        "--output", "-o", metavar="FILE", help="Write the merged workload file to FILE (FILE.gz is compressed); it may "
        "be one of the inputs.", rich_help_panel=OUTPUT, show_default=False)],
    debug: DebugOption = False,
) -> int:
    """Merge workload files into one: the same digest as analysing all their inputs at once (refused when they were
    recorded with different --min-ms, --since or --until, or when two of them counted the same input)."""
    from idxadvisor import api

    merged = api.merge(workloads, output)
    sys.stderr.write(f"idxadvisor: merged {len(workloads)} workload files ({len(merged.inputs)} inputs, "
                     f"{human_count(merged.digest.operations)} operations, {len(merged.digest.shapes):,} shapes) "
                     f"into {printable(mask_secrets(str(output)))}\n")
    return ExitCode.OK
