"""Shared options are declared once (cli/_options.py) and mean one thing in every command."""

from __future__ import annotations

import click
import pytest

from tests.cli.conftest import Cli
from variant_bridge.cli import main

SOURCES = ("select", "install", "export", "solve")
READS = ("detect", "select", "install", "env", "run", "export")
FETCHES = ("select", "install", "export", "index", "convert", "solve", "run", "check")
GROUPS = {
    "--find-links": SOURCES,
    "--index-url": SOURCES,
    "--extra-index-url": SOURCES,
    "--index-strategy": SOURCES,
    "--prefix": READS,
    "--lockfile": READS,
    "--environment": READS,
    "--platform": (*READS, "solve"),
    "--target": (*READS, "solve"),
    "--strict": (*READS, "solve"),
    "--cuda-policy": ("detect", "select", "install", "env", "run"),
    "--python": ("select", "install"),
    "--cache-dir": FETCHES,
    "--no-cache": FETCHES,
    "--quiet": FETCHES,
    "--verbose": FETCHES,
    "--no-require-hashes": ("install", "solve"),
    "--no-deps": ("select", "install"),
    "--subdir": ("index", "convert"),
    "--project": ("index", "convert"),
    "--priority": ("index", "convert", "solve"),
    "--json": (*SOURCES, "detect", "index", "convert", "check"),
}


def command(name: str) -> click.Command:
    with click.Context(main) as ctx:
        found = main.get_command(ctx, name)
    assert found is not None
    return found


def option(name: str, flag: str) -> click.Option | None:
    for param in command(name).params:
        if isinstance(param, click.Option) and flag in param.opts and not param.hidden:
            return param
    return None


def shape(param: click.Option) -> tuple[object, ...]:
    return (
        sorted(param.opts),
        sorted(param.secondary_opts),
        param.name,
        param.multiple,
        param.is_flag,
        param.type.name,
        param.default,
        param.metavar,
        param.help,
    )


@pytest.mark.parametrize("flag", sorted(GROUPS))
def test_a_shared_option_is_the_same_option_in_every_command(flag: str) -> None:
    shapes = {}
    for name in GROUPS[flag]:
        param = option(name, flag)
        assert param is not None, f"{name} has no {flag}"
        shapes[name] = shape(param)
    first = next(iter(shapes.values()))
    assert {name: s for name, s in shapes.items() if s != first} == {}


def test_output_means_where_the_result_goes_in_every_command() -> None:
    for name, metavar in (("export", "FILE"), ("index", "CHANNEL"), ("convert", "CHANNEL")):
        param = option(name, "-o")
        assert param is not None
        assert sorted(param.opts) == ["--output", "-o"]
        assert param.metavar == metavar
        assert (param.help or "").startswith("Where the result goes: ")


# Each command's required inputs, so that only the options under test are wrong.
REQUIRED = {
    "select": ("pkg",),
    "install": ("pkg",),
    "solve": ("pkg",),
    "export": (),
    "index": ("wheels", "-o", "channel"),
    "convert": ("wheels", "-o", "channel"),
    "check": ("--conda", "recipe", "--wheels", "dist"),
}


@pytest.mark.parametrize("name", SOURCES)
def test_index_url_names_one_index_everywhere(cli: Cli, name: str) -> None:
    result = cli(name, *REQUIRED[name], "--index-url", "https://a.example/simple/",
                 "--index-url", "https://b.example/simple/")  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "pass more indexes with --extra-index-url" in result.stderr


@pytest.mark.parametrize("name", ["select", "install", "export", "index", "convert", "check"])
def test_contradicting_fetch_options_are_usage_errors_everywhere(cli: Cli, name: str) -> None:
    result = cli(name, *REQUIRED[name], "-q", "-v")
    assert result.exit_code == 2, result.output
    assert "--quiet and --verbose contradict each other" in result.stderr
