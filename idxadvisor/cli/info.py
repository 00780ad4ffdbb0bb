"""``idxadvisor rules``, ``idxadvisor rule CODE`` and ``idxadvisor version``."""

from __future__ import annotations

import sys
import textwrap
from typing import Annotated

import typer

from idxadvisor import __version__
from idxadvisor.cli.app import command, examples
from idxadvisor.exitcodes import ExitCode


@command("rules", epilog=examples(
    'idxadvisor rules'))
def list_rules() -> int:
    """List every rule: code, name, default severity and summary."""
    from rich.text import Text

    from idxadvisor.report import terminal_console
    from idxadvisor.report.terminal import SEVERITY_STYLES
    from idxadvisor.rules import ALL_RULES

    console = terminal_console(sys.stdout)
    name_width = max(len(rule.name) for rule in ALL_RULES) + 2
    indent = 7 + name_width + 9
    for rule in ALL_RULES:
        summary = textwrap.wrap(rule.summary(), width=max(40, console.width - indent))
        line = Text(f"{rule.code}  ", style="bold")
        line.append(f"{rule.name:<{name_width}}")
        line.append(f"{rule.severity:<9}", style=SEVERITY_STYLES.get(rule.severity, ""))
        line.append("\n".join([summary[0], *(" " * indent + part for part in summary[1:])]))
        console.print(line)
    return ExitCode.OK


@command("rule", epilog=examples(
    'idxadvisor rule IX002'))
def show_rule(
    code: Annotated[str, typer.Argument(metavar="CODE", help="A rule code (IX001) or name (missing-compound-index).",
                                        show_default=False)],
) -> int:
    """Print a rule's documentation."""
    from idxadvisor.rules import rule_class

    rule = rule_class(code)
    print(f"{rule.code} {rule.name} (default severity: {rule.severity}, since {rule.since})\n")
    print(rule.documentation())
    return ExitCode.OK


@command(epilog=examples(
    'idxadvisor version'))
def version() -> int:
    """Print the version, and which reading core runs (the C extension or the Python path)."""
    from idxadvisor.parse.accel import described

    print(f"idxadvisor {__version__}")
    print(f"reading core: {described()}")
    return ExitCode.OK
