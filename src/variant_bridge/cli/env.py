"""``variant-bridge env`` and ``variant-bridge run``: make uv's own variant selection agree.

uv (``--preview-features wheel-variants``) picks variant wheels with built-in providers that look
at the driver only. These commands compute, from the bridged view of an environment, the override
variables that make uv choose what ``variant-bridge select`` chooses (see docs/uv.md), and either
print them for a shell or run one command with them.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from variant_bridge.environment import CUDA_POLICIES, CudaPolicy
from variant_bridge.uv_env import SHELL_FORMATS, ShellFormat, UvSettings

__all__ = ["COMMAND_NOT_EXECUTABLE", "COMMAND_NOT_FOUND", "env", "run"]

COMMAND_NOT_FOUND = 127
"""Exit status of ``run`` when the command does not exist (as in POSIX shells)."""
COMMAND_NOT_EXECUTABLE = 126
"""Exit status of ``run`` when the command exists but cannot be executed (as in POSIX shells)."""

F = TypeVar("F", bound=Callable[..., Any])


def _environment_options(function: F) -> F:
    """The options that say which environment's view uv must agree with (as ``detect``)."""
    options = [
        click.option(
            "--prefix",
            type=click.Path(file_okay=False, path_type=Path),
            help="A conda prefix to read (conda-meta). Default: $CONDA_PREFIX, if set.",
        ),
        click.option(
            "--lockfile",
            type=click.Path(dir_okay=False, path_type=Path),
            help="A pixi.lock to read instead of a prefix.",
        ),
        click.option(
            "--environment",
            "-e",
            metavar="NAME",
            help="The pixi.lock environment (with --lockfile). Default: 'default'.",
        ),
        click.option(
            "--platform",
            metavar="SUBDIR",
            help="The conda platform, e.g. linux-64. Default: this machine's.",
        ),
        click.option(
            "--target",
            "-t",
            "targets",
            multiple=True,
            metavar="KEY=VALUE",
            help=(
                "Declare a fact instead of detecting it (repeatable): cuda=12.8, cuda_arch=9.0, "
                "archspec=haswell. Wins over CONDA_OVERRIDE_* and detection."
            ),
        ),
        click.option(
            "--cuda-policy",
            type=click.Choice(CUDA_POLICIES),
            help=(
                "toolkit: CUDA wheels must also agree with the solved cuda-version; driver: only "
                "with the driver. Default: toolkit when one is solved."
            ),
        ),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def _settings(
    *,
    prefix: Path | None,
    lockfile: Path | None,
    environment: str | None,
    platform: str | None,
    targets: tuple[str, ...],
    cuda_policy: CudaPolicy | None,
) -> UvSettings:
    if prefix is not None and lockfile is not None:
        raise click.UsageError("--prefix and --lockfile cannot be used together; pick one.")
    if environment is not None and lockfile is None:
        raise click.UsageError("--environment needs --lockfile (it names a pixi.lock environment).")

    # Heavy imports (rattler, archspec, the mapping tables) only once a command runs.
    from variant_bridge.detect import detect_environment
    from variant_bridge.translate import supported_properties
    from variant_bridge.uv_env import uv_settings

    detected = detect_environment(
        prefix=prefix,
        lockfile=lockfile,
        environment=environment,
        platform=platform,
        targets=targets,
    )
    supported = supported_properties(detected, policy=cuda_policy)
    return uv_settings(detected, supported, policy=cuda_policy, environ=os.environ)


def _echo_notes(settings: UvSettings) -> None:
    for note in settings.notes:
        click.echo(f"note: {note}", err=True)


@click.command(short_help="Print the variables that make uv choose as variant-bridge does.")
@_environment_options
@click.option(
    "--format",
    "shell",
    type=click.Choice(SHELL_FORMATS),
    default="sh",
    show_default=True,
    help="How to print the variables: for sh/bash/zsh, fish, PowerShell, a .env file, or JSON.",
)
def env(
    *,
    prefix: Path | None,
    lockfile: Path | None,
    environment: str | None,
    platform: str | None,
    targets: tuple[str, ...],
    cuda_policy: CudaPolicy | None,
    shell: ShellFormat,
) -> None:
    """Print the variables that make uv's built-in variant providers agree with an environment.

    uv (uv pip install --preview-features wheel-variants) picks CUDA wheels from the driver
    alone. The printed NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION and
    NV_VARIANT_PROVIDER_FORCE_SM_ARCH carry the bridged view instead (under the toolkit policy,
    the newest CUDA that both the driver and the solved toolkit allow; the LOWEST GPU), and
    UV_PREVIEW_FEATURES turns variant selection on. Without CUDA, the driver variable gets the
    value 'none', which makes uv skip its NVIDIA provider even on a machine with a GPU.
    What uv cannot be told is printed on stderr as 'note:' lines.

    \b
    Examples:
      eval "$(variant-bridge env)"
      variant-bridge env --prefix ~/miniforge3/envs/ml --format fish | source
      variant-bridge env --lockfile pixi.lock -e cuda --format dotenv > uv.env
      variant-bridge env -t cuda=12.9 -t cuda_arch=8.6 --format json
    """
    from variant_bridge.uv_env import format_variables

    settings = _settings(
        prefix=prefix,
        lockfile=lockfile,
        environment=environment,
        platform=platform,
        targets=targets,
        cuda_policy=cuda_policy,
    )
    click.echo(format_variables(settings.variables, shell), nl=False)
    _echo_notes(settings)


@click.command(
    short_help="Run a command (e.g. uv) with the variables `env` prints.",
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
)
@_environment_options
@click.argument(
    "command", nargs=-1, required=True, type=click.UNPROCESSED, metavar="-- CMD [ARGS]..."
)
@click.pass_context
def run(
    ctx: click.Context,
    *,
    prefix: Path | None,
    lockfile: Path | None,
    environment: str | None,
    platform: str | None,
    targets: tuple[str, ...],
    cuda_policy: CudaPolicy | None,
    command: tuple[str, ...],
) -> None:
    """Run CMD with the variables `variant-bridge env` prints, and exit with its status.

    CMD is looked up on PATH. If it does not exist, one error line is printed and the exit
    status is 127 (126 if it exists but cannot be executed), as a shell would. A CMD killed by
    a signal gives 128 + the signal number.

    \b
    Examples:
      variant-bridge run -- uv pip install torch --index-url https://download.pytorch.org/whl/variant
      variant-bridge run --prefix "$CONDA_PREFIX" -- uv pip install --dry-run mypkg
    """
    settings = _settings(
        prefix=prefix,
        lockfile=lockfile,
        environment=environment,
        platform=platform,
        targets=targets,
        cuda_policy=cuda_policy,
    )
    _echo_notes(settings)
    ctx.exit(_run(command, settings.applied_to(os.environ)))


def _run(command: tuple[str, ...], environ: dict[str, str]) -> int:
    try:
        process = subprocess.Popen(command, env=environ)
    except FileNotFoundError:
        click.echo(f"error: command not found: {command[0]!r}", err=True)
        return COMMAND_NOT_FOUND
    except PermissionError:
        click.echo(f"error: command not executable: {command[0]!r}", err=True)
        return COMMAND_NOT_EXECUTABLE
    while True:
        # Ctrl-C reaches the child too (same process group): wait for it to finish, as a shell
        # would, instead of leaving it orphaned.
        try:
            status = process.wait()
            break
        except KeyboardInterrupt:
            continue
    # Popen reports death by signal N as -N; shells report 128 + N.
    return 128 - status if status < 0 else status
