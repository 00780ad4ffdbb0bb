"""Every command's help page: what each option does and its default, in words, without Typer's type placeholders."""

from __future__ import annotations

import re
import shlex

import pytest
import typer.main

from idxadvisor.cli import app, run
from idxadvisor.cli.app import _command_line

PLACEHOLDER = re.compile(r"<(?:bool|str|int|float|path|list\[[^\]]*\])>")


def command_names() -> list[str]:
    group = typer.main.get_command(app)
    return sorted(group.commands)  # type: ignore[attr-defined]


@pytest.fixture(autouse=True)
def wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.setenv("NO_COLOR", "1")


def help_page(capsys: pytest.CaptureFixture[str], *command: str) -> str:
    assert run([*command, "--help"]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("command", ["", *command_names()])
def test_help_pages_have_no_type_placeholders(capsys: pytest.CaptureFixture[str], command: str) -> None:
    page = help_page(capsys, *([command] if command else []))
    assert "Usage: idxadvisor" in page
    assert not PLACEHOLDER.findall(page), PLACEHOLDER.findall(page)


@pytest.mark.parametrize("command", command_names())
def test_every_option_says_what_it_does(command: str) -> None:
    group = typer.main.get_command(app)
    for param in group.commands[command].params:  # type: ignore[attr-defined]
        assert param.help, f"{command} {param.name} has no help text"
        if param.param_type_name == "option" and not param.is_flag:
            assert param.metavar, f"{command} {param.opts[0]} has no placeholder naming its value"


def test_rich_markup_does_not_eat_bracketed_text(capsys: pytest.CaptureFixture[str]) -> None:
    page = " ".join(help_page(capsys, "analyze").split())
    assert "[tool.idxadvisor] in pyproject.toml" in page
    assert "[default: 3]" in page and "[default: warning]" in page


def test_the_top_level_page_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    page = help_page(capsys)
    for name in command_names():
        assert re.search(rf"│ {re.escape(name)}\s", page), name
    assert "Exit codes: 0 ok" in page


@pytest.mark.parametrize("command", command_names())
def test_a_command_run_alone_has_the_help_page_it_has_among_all(capsys: pytest.CaptureFixture[str],
                                                                  command: str) -> None:
    alone = _command_line([command, "--help"])
    assert sorted(alone.commands) == [command]  # only the command named is built
    assert alone([command, "--help"], prog_name="idxadvisor", standalone_mode=False) == 0
    page_alone = capsys.readouterr().out
    typer.main.get_command(app)([command, "--help"], prog_name="idxadvisor", standalone_mode=False)
    assert page_alone == capsys.readouterr().out


@pytest.mark.parametrize("arguments", [[], ["--help"], ["analyse", "x.log"], ["--debug", "analyze"]])
def test_arguments_that_name_no_command_first_get_every_command(arguments: list[str]) -> None:
    assert sorted(_command_line(arguments).commands) == command_names()


def test_a_misspelt_command_is_still_told_the_closest_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["analyse", "x.log"]) == 2
    assert "Did you mean 'analyze'?" in capsys.readouterr().err


def test_version_is_an_option_of_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    from idxadvisor import __version__

    for option in ("--version", "-V"):
        assert run([option]) == 0
        assert capsys.readouterr().out == f"idxadvisor {__version__}\n"
    assert "--version" in help_page(capsys)


SHELL_OPERATORS = {"|", ">", "&&", ";"}


def example_arguments(command: str) -> list[list[str]]:
    """The arguments of each ``idxadvisor COMMAND …`` example on the command's help page (after a pipe, before a
    redirection)."""
    group = typer.main.get_command(app)
    epilog = group.commands[command].epilog or ""  # type: ignore[attr-defined]
    found = []
    for paragraph in epilog.split("\n\n")[1:]:
        words = shlex.split(paragraph.replace("\\[", "["))
        start = words.index("idxadvisor") + 1
        end = next((n for n in range(start, len(words)) if words[n] in SHELL_OPERATORS), len(words))
        found.append(words[start:end])
    return found


@pytest.mark.parametrize("command", command_names())
def test_every_help_page_ends_with_examples_that_parse(capsys: pytest.CaptureFixture[str], command: str) -> None:
    page = help_page(capsys, command)
    assert "Examples:" in page and f"idxadvisor {command}" in page.partition("Examples:")[2]
    examples = example_arguments(command)
    assert examples and all(arguments[0] == command for arguments in examples)
    click_command = typer.main.get_command(app).commands[command]  # type: ignore[attr-defined]
    for arguments in examples:  # every option an example uses exists and takes the value it is given
        click_command.make_context(command, arguments[1:])
