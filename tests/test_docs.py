"""The docs keep up with the code: every command and option is in docs/cli.md, and the README's
two commands are the ones CI runs."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from variant_bridge.cli import main

ROOT = Path(__file__).resolve().parent.parent
CLI_MD = (ROOT / "docs" / "cli.md").read_text()
README = (ROOT / "README.md").read_text()
CI_RUN = (ROOT / ".ci" / "run").read_text()

_CTX = click.Context(main)
COMMANDS = main.list_commands(_CTX)


def command_of(name: str) -> click.Command:
    command = main.get_command(_CTX, name)
    assert command is not None, name
    return command


FENCE_RE = re.compile(r"^```[a-z]*\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def options(command: click.Command) -> list[str]:
    return sorted(
        name
        for param in command.params
        if isinstance(param, click.Option)
        for name in (*param.opts, *param.secondary_opts)
    )


def test_every_command_of_the_readme_tour_exists() -> None:
    toured = set(re.findall(r"`variant-bridge (\w+)", README))
    assert toured <= set(COMMANDS), toured - set(COMMANDS)


@pytest.mark.parametrize("name", COMMANDS)
def test_command_has_help_with_examples(name: str) -> None:
    command = command_of(name)
    assert command.help
    # A \b paragraph keeps click from re-flowing the example lines into one.
    assert re.search(r"\x08\n\s*Examples:\n", command.help), "examples need a \\b paragraph"
    assert command.short_help


@pytest.mark.parametrize("name", COMMANDS)
def test_command_has_a_section_in_cli_md(name: str) -> None:
    assert re.search(rf"^## `variant-bridge {name}`", CLI_MD, re.MULTILINE), name


@pytest.mark.parametrize(
    ("name", "option"),
    [(name, option) for name in COMMANDS for option in options(command_of(name))],
)
def test_every_option_is_documented(name: str, option: str) -> None:
    section = CLI_MD.split(f"## `variant-bridge {name}`", 1)[1].split("\n## ", 1)[0]
    assert f"`{option}" in section, f"{option} of {name} is missing from docs/cli.md"


def test_global_options_are_documented() -> None:
    for option in ("--help", "-h", "--version", "-V", "VARIANT_BRIDGE_DEBUG"):
        assert option in CLI_MD


def test_exit_codes_are_documented() -> None:
    assert re.search(r"^## Exit codes", CLI_MD, re.MULTILINE)
    for code in ("`0`", "`1`", "`2`"):
        assert code in CLI_MD


def readme_commands() -> list[str]:
    return [block.strip() for block in FENCE_RE.findall(README)]


def test_readme_has_exactly_two_commands() -> None:
    commands = readme_commands()
    assert len(commands) == 2, commands
    assert all("\n" not in command for command in commands), "each command is one line"


def test_readme_first_command_sets_up_and_runs_detect() -> None:
    setup_and_run = readme_commands()[0]
    assert setup_and_run.startswith("python3 -m venv .venv && ")
    assert setup_and_run.endswith("variant-bridge detect")


def test_readme_test_command_is_what_ci_runs() -> None:
    test_command = readme_commands()[1]
    assert test_command in CI_RUN.splitlines()
    assert test_command.endswith("-m pytest -q")


def test_ci_also_lints_and_type_checks() -> None:
    lines = CI_RUN.splitlines()
    for tool in ("ruff check", "ruff format --check", "mypy"):
        assert any(line.startswith(f".venv/bin/{tool}") for line in lines), tool


def test_readme_links_to_docs_that_exist() -> None:
    links = re.findall(r"\]\((docs/[^)#]+)", README)
    assert "docs/cli.md" in links
    for link in links:
        assert (ROOT / link).is_file(), link


def test_option_tables_are_the_commands_options() -> None:
    # Every table lists exactly its command's options (and the shared groups' tables exactly
    # cli/_options.py's), spelled and ordered as --help shows them.
    from tests.cli_tables import generate

    assert generate(CLI_MD) == CLI_MD, "refresh with: .venv/bin/python -m tests.cli_tables"
