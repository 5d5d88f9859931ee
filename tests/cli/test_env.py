"""``variant-bridge env`` and ``variant-bridge run``: the variables for uv, as a user meets them.

The effect of the variables on the real uv is tested in tests/test_uv_agreement.py.
"""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import Cli, run_script

DRIVER = "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION"
SM_ARCH = "NV_VARIANT_PROVIDER_FORCE_SM_ARCH"
PREVIEW = "UV_PREVIEW_FEATURES"
GPU = {"CONDA_OVERRIDE_CUDA": "12.9", "CONDA_OVERRIDE_CUDA_ARCH": "9.0"}
PRINT_VARIABLES = f"import os; print(os.environ.get({DRIVER!r}), os.environ.get({SM_ARCH!r}))"


def variables(cli: Cli, *args: str, env: dict[str, str] | None = None) -> dict[str, str]:
    result = cli("env", "--format", "json", *args, env=env)
    assert result.exit_code == 0, result.stderr
    data: dict[str, str] = json.loads(result.stdout)
    return data


# -- env ----------------------------------------------------------------------------------------


def test_env_prints_the_declared_gpu(cli: Cli) -> None:
    assert variables(cli, "-t", "cuda=12.9", "-t", "cuda_arch=8.6") == {
        DRIVER: "12.9",
        SM_ARCH: "8.6",
        PREVIEW: "wheel-variants",
    }


def test_env_lowers_the_driver_to_the_prefix_toolkit(cli: Cli, prefix_126: Path) -> None:
    result = cli("env", "--prefix", str(prefix_126), env=GPU)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [
        f"export {DRIVER}='12.6'",
        f"export {SM_ARCH}='9.0'",
        f"export {PREVIEW}='wheel-variants'",
    ]
    notes = result.stderr.splitlines()
    assert len(notes) == 2
    assert all(line.startswith("note: ") for line in notes)
    assert "CUDA 11 and older" in notes[0]
    assert "above 12.6 but not above 12.9" in notes[1]


@pytest.mark.parametrize(
    ("args", "env", "driver"),
    [
        (["--cuda-policy", "driver"], GPU, "12.9"),  # policy option ignored
        ([], GPU, "12.6"),  # $CONDA_PREFIX (set below) not read by default
        ([], {**GPU, "CONDA_OVERRIDE_CUDA": "12.4"}, "12.4"),  # older driver than toolkit lost
    ],
)
def test_env_reads_conda_prefix_and_policy(
    cli: Cli, prefix_126: Path, args: list[str], env: dict[str, str], driver: str
) -> None:
    env = {**env, "CONDA_PREFIX": str(prefix_126)}
    assert variables(cli, *args, env=env)[DRIVER] == driver


def test_env_without_cuda_switches_uv_s_provider_off(cli: Cli) -> None:
    result = cli("env", "--format", "json", env={"CONDA_OVERRIDE_CUDA": ""})
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)[DRIVER] == "none"
    assert json.loads(result.stdout)[SM_ARCH] == "none"
    assert result.stderr == ""  # the help text and docs/uv.md explain 'none'; no noise


def test_env_keeps_the_users_preview_features(cli: Cli) -> None:
    env = {**GPU, PREVIEW: "python-upgrade"}
    assert variables(cli, env=env)[PREVIEW] == "python-upgrade,wheel-variants"


@pytest.mark.parametrize(
    ("shell", "first_line"),
    [
        ("sh", f"export {DRIVER}='12.9'"),
        ("fish", f"set -gx {DRIVER} '12.9'"),
        ("powershell", f"$env:{DRIVER} = '12.9'"),
        ("dotenv", f"{DRIVER}=12.9"),
    ],
)
def test_env_formats(cli: Cli, shell: str, first_line: str) -> None:
    result = cli("env", "--format", shell, env=GPU)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines()[0] == first_line
    assert len(result.stdout.splitlines()) == 3


@pytest.mark.parametrize("shell", ["sh", "dotenv", "json"])
def test_env_drops_control_characters_and_says_so(shell: str, tmp_path: Path) -> None:
    """An ESC in the user's value would be acted on by a terminal, and click strips the ANSI
    sequence it starts from output that is not a terminal (``x\\e[,wheel-variants`` came back
    ``xheel-variants``): the value printed, in every format, is the value without control
    characters, and a note says so."""
    import subprocess

    env = {PREVIEW: "x\x1b[,\x07y", "CONDA_OVERRIDE_CUDA": "12.8"}
    result = run_script("env", "--format", shell, env=env)
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stdout
    assert "\x07" not in result.stdout
    assert f"note: {PREVIEW}: dropped 2 control characters (U+001B, U+0007)" in result.stderr
    if shell == "json":
        printed = json.loads(result.stdout)[PREVIEW]
    else:  # what a shell (or uv's --env-file) gets back
        out = tmp_path / "vars"
        out.write_text(result.stdout)
        source = f". {out}" if shell == "sh" else f"set -a; . {out}"
        printed = subprocess.run(["sh", "-c", f'{source}; printf %s "${PREVIEW}"'],
                                 capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert printed == "x[,y,wheel-variants"


@pytest.mark.parametrize(
    ("args", "env", "code", "message"),
    [
        (["--prefix", "p", "--lockfile", "l"], {}, 2, "cannot be used together"),  # both read
        (["--environment", "cuda"], {}, 2, "needs --lockfile"),  # silently ignored
        (["--format", "xml"], {}, 2, "'xml' is not one of"),  # unknown format
        (["-t", "cuda=abc"], {}, 1, "cuda"),  # bad target: traceback
        ([], {"CONDA_OVERRIDE_CUDA": "abc"}, 1, "CONDA_OVERRIDE_CUDA='abc'"),  # bad override
        (["--prefix", "/nonexistent/env"], {}, 1, "/nonexistent/env"),  # unreadable prefix
    ],
)
def test_env_errors_are_one_line(
    cli: Cli, args: list[str], env: dict[str, str], code: int, message: str
) -> None:
    result = cli("env", *args, env=env)
    assert result.exit_code == code
    assert result.stdout == ""
    assert message in result.stderr
    if code == 1:
        assert result.stderr.startswith("error: ")
        assert len(result.stderr.splitlines()) == 1


# -- run ----------------------------------------------------------------------------------------


def test_run_sets_the_variables_for_the_command(prefix_126: Path) -> None:
    result = run_script(
        "run", "--prefix", str(prefix_126), "--", sys.executable, "-c", PRINT_VARIABLES, env=GPU
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "12.6 9.0\n"


def test_run_without_double_dash_and_with_options_after_the_command() -> None:
    code = "import sys; print(sys.argv[1:])"
    result = run_script("run", "-t", "cuda=12.9", sys.executable, "-c", code, "--prefix", "-t")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "['--prefix', '-t']\n"  # passed to CMD, not parsed by run


@pytest.mark.parametrize(
    ("code", "status"),
    [
        ("raise SystemExit(0)", 0),
        ("raise SystemExit(7)", 7),  # status lost
        ("import os; os._exit(255)", 255),
    ],
)
def test_run_exits_with_the_command_status(code: str, status: int) -> None:
    result = run_script("run", "-t", "cuda=", "--", sys.executable, "-c", code)
    assert result.returncode == status


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_run_reports_a_signal_like_a_shell() -> None:
    code = "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"
    result = run_script("run", "-t", "cuda=", "--", sys.executable, "-c", code)
    assert result.returncode == 128 + signal.SIGTERM


def test_run_command_not_found(tmp_path: Path) -> None:
    result = run_script("run", "-t", "cuda=", "--", "no-such-command-vb")
    assert result.returncode == 127
    assert result.stderr == "error: command not found: 'no-such-command-vb'\n"


def test_run_names_a_missing_command_shortened() -> None:
    result = run_script("run", "-t", "cuda=", "--", "x" * 250)  # a file name's most
    assert result.returncode == 127
    assert result.stderr.startswith("error: command not found: 'xxx")
    assert result.stderr.endswith("…' (250 characters)\n")


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_run_command_not_executable(tmp_path: Path) -> None:
    script = tmp_path / "not-executable"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o644)
    result = run_script("run", "-t", "cuda=", "--", str(script))
    assert result.returncode == 126
    assert result.stderr == f"error: command not executable: {str(script)!r}\n"


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["-t", "cuda=abc", "--", sys.executable, "-c", "print('ran')"], 1, "error: "),  # ran
        ([], 2, "Missing argument"),  # no command
    ],
)
def test_run_refuses_before_running(args: list[str], code: int, message: str) -> None:
    result = run_script("run", *args)
    assert result.returncode == code
    assert result.stdout == ""
    assert message in result.stderr


@pytest.mark.parametrize("command", [["true", "a\0b"], ["tr\0ue"]])
def test_run_refuses_an_argument_holding_a_nul_byte(cli: Cli, command: list[str]) -> None:
    """No program can receive a NUL byte (the fuzz run's ``run -- uv pip install '\\x00'`` was
    an internal error): a usage error naming it, nothing run."""
    result = cli("run", "-t", "cuda=", "--", *command)
    assert result.exit_code == 2, result.stderr
    assert "an argument holds a NUL byte" in result.stderr
    assert "this is a bug" not in result.stderr


@pytest.mark.parametrize(
    "args",
    [
        ["--json", "--", "true"],  # an option run does not have, before --
        ["--prefx", "/tmp", "--", "true"],  # a misspelt option is not taken for the command
    ],
)
def test_run_rejects_unknown_options_before_the_command(cli: Cli, args: list[str]) -> None:
    result = cli("run", *args)
    assert result.exit_code == 2
    assert "No such option" in result.stderr
