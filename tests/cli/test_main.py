"""The command group: help, version, and the one place where errors become exit codes."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import click
import pytest

from tests.cli.conftest import SCRIPT, Cli, run_script
from variant_bridge import __version__
from variant_bridge.cli import main
from variant_bridge.errors import DetectionError, InvalidTarget, MappingTableError

FAIL = "fail-for-test"

# What a failing command raises -> (exit code, the exact stderr line). One case per line.
FAILURES = [
    ("invalid-target", 1, "error: invalid target 'cuda=abc'\n"),  # library error: one line
    ("multi-line", 1, "error: first problem; second problem\n"),  # never spread over lines
    (
        "mapping-table",
        1,
        "error: nvidia.yaml: rules[0]: bad; names.yaml: x: bad\n",
    ),  # problems kept
    ("empty-message", 1, "error: DetectionError\n"),  # no blank "error: "
    ("missing-file", 1, "error: No such file or directory: 'pixi.lock'\n"),  # OSError, no traceback
    (
        "bug",
        1,
        (
            "error: unexpected RuntimeError: boom (this is a bug in variant-bridge; "
            "set VARIANT_BRIDGE_DEBUG=1 for the traceback)\n"
        ),
    ),  # unexpected: still one line
    ("usage", 2, None),  # click usage errors keep exit 2
    (
        "flood",
        1,
        f"error: {'x' * 2000}… (6000 characters in all)\n",
    ),  # a message listing thousands of reasons: cut at errors.LINE_LIMIT, saying so
    (
        "bug-flood",
        1,
        (
            f"error: unexpected RuntimeError: {'y' * 300}… (5000 characters) (this is a bug in "
            "variant-bridge; set VARIANT_BRIDGE_DEBUG=1 for the traceback)\n"
        ),
    ),  # an unexpected error's own text is shortened: the line still says it is a bug
]


def _raise(kind: str) -> None:
    errors: dict[str, BaseException] = {
        "invalid-target": InvalidTarget("invalid target 'cuda=abc'"),
        "multi-line": DetectionError("first problem\n  second problem\n"),
        "mapping-table": MappingTableError(["nvidia.yaml: rules[0]: bad", "names.yaml: x: bad"]),
        "empty-message": DetectionError(),
        "missing-file": FileNotFoundError(2, "No such file or directory", "pixi.lock"),
        "bug": RuntimeError("boom"),
        "usage": click.UsageError("--a and --b cannot be used together"),
        "flood": DetectionError("x" * 6000),
        "bug-flood": RuntimeError("y" * 5000),
    }
    raise errors[kind]


@pytest.fixture
def failing_command() -> Iterator[str]:
    """A throw-away subcommand on the real group, so the group's error mapping is what runs."""

    @click.command(FAIL)
    @click.argument("kind")
    def fail(kind: str) -> None:
        click.echo("partial result")
        _raise(kind)

    main.add_command(fail)
    yield FAIL
    del main.commands[FAIL]


def test_help_lists_the_commands(cli: Cli) -> None:
    result = cli("--help")
    assert result.exit_code == 0
    assert result.stdout.startswith("Usage: variant-bridge [OPTIONS] COMMAND [ARGS]...")
    assert "  detect " in result.stdout
    assert "  translate " in result.stdout
    assert "Examples:\n    variant-bridge detect\n" in result.stdout  # \b kept the lines


@pytest.mark.parametrize("args", [["-h"], ["detect", "-h"], ["translate", "-h"]])
def test_dash_h_is_help(cli: Cli, args: list[str]) -> None:
    result = cli(*args)
    assert result.exit_code == 0
    assert result.stdout == cli(*args[:-1], "--help").stdout


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_version(cli: Cli, flag: str) -> None:
    result = cli(flag)
    assert result.exit_code == 0
    assert result.stdout == f"variant-bridge, version {__version__}\n"


def test_no_command_shows_usage(cli: Cli) -> None:
    result = cli()
    assert result.exit_code == 2
    assert "Commands:" in result.stderr + result.stdout


def test_unknown_command_is_a_usage_error(cli: Cli) -> None:
    result = cli("detecct")
    assert result.exit_code == 2
    assert "No such command 'detecct'" in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize(("kind", "code", "stderr"), FAILURES)
def test_errors_become_one_line_and_an_exit_code(
    cli: Cli, failing_command: str, kind: str, code: int, stderr: str | None
) -> None:
    result = cli(failing_command, kind)
    assert result.exit_code == code
    assert "Traceback" not in result.output
    assert result.stdout == "partial result\n"  # results and diagnostics stay apart
    if stderr is not None:
        assert result.stderr == stderr
    else:
        assert result.stderr.endswith("Error: --a and --b cannot be used together\n")


@pytest.mark.parametrize("kind", ["bug", "invalid-target"])
def test_debug_variable_lets_the_exception_through(
    cli: Cli, failing_command: str, kind: str
) -> None:
    result = cli(failing_command, kind, env={"VARIANT_BRIDGE_DEBUG": "1"})
    assert result.exit_code == 1
    assert not isinstance(result.exception, SystemExit)
    assert type(result.exception).__name__ in {"RuntimeError", "InvalidTarget"}


def test_debug_zero_means_off(cli: Cli, failing_command: str) -> None:
    result = cli(failing_command, "bug", env={"VARIANT_BRIDGE_DEBUG": "0"})
    assert isinstance(result.exception, SystemExit)
    assert result.stderr.startswith("error: unexpected RuntimeError: boom")


def test_console_script_is_installed_and_runs() -> None:
    assert SCRIPT.is_file(), f"{SCRIPT} missing: is the project installed in this venv?"
    proc = run_script("--version")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"variant-bridge, version {__version__}\n"


def test_console_script_error_is_one_line_without_traceback() -> None:
    proc = run_script("translate", "nvidia :: cuda_version_lower_bound")
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1
    assert proc.stderr.startswith(
        "error: invalid variant property 'nvidia :: cuda_version_lower_bound'"
    )


def test_console_script_usage_error_exits_2() -> None:
    proc = run_script("detect", "--prefix", "/tmp", "--lockfile", "pixi.lock")
    assert proc.returncode == 2
    assert proc.stderr.endswith(
        "Error: --prefix and --lockfile cannot be used together; pick one.\n"
    )
    assert proc.stderr.startswith("Usage: variant-bridge detect [OPTIONS]")


def test_python_dash_m_has_the_same_prog_name() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "variant_bridge", "translate", "--bogus"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("Usage: variant-bridge translate [OPTIONS]")
    assert proc.stderr.endswith("Error: No such option '--bogus'.\n")
