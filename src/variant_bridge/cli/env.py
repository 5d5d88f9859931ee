"""``variant-bridge env`` and ``variant-bridge run``: make uv's own variant selection agree.

uv (``--preview-features wheel-variants``) picks variant wheels with built-in providers that look
at the driver only. These commands compute, from the bridged view of an environment, the override
variables that make uv choose what ``variant-bridge select`` chooses (see docs/uv.md), and either
print them for a shell or run one command with them.
"""

from __future__ import annotations

import os
import subprocess

import click

from variant_bridge.cli._options import environment_options, fetch_options
from variant_bridge.errors import quote
from variant_bridge.jobs.specs import EnvironmentSpec, FetchSpec
from variant_bridge.uv_settings import SHELL_FORMATS, ShellFormat, UvSettings

__all__ = ["COMMAND_NOT_EXECUTABLE", "COMMAND_NOT_FOUND", "env", "run"]

COMMAND_NOT_FOUND = 127
"""Exit status of ``run`` when the command does not exist (as in POSIX shells)."""
COMMAND_NOT_EXECUTABLE = 126
"""Exit status of ``run`` when the command exists but cannot be executed (as in POSIX shells)."""


def _settings(environment: EnvironmentSpec) -> UvSettings:
    # Heavy imports (rattler, archspec, the mapping tables) only once a command runs.
    from variant_bridge.jobs.target import detect
    from variant_bridge.translate import supported_properties
    from variant_bridge.uv_settings import uv_settings

    detected = detect(environment)
    supported = supported_properties(detected, policy=environment.cuda_policy)
    return uv_settings(detected, supported, environ=os.environ)


def _echo_notes(settings: UvSettings) -> None:
    for note in settings.notes:
        click.echo(f"note: {note}", err=True)


@click.command(short_help="Print the variables that make uv choose as variant-bridge does.")
@environment_options()
@click.option(
    "--format",
    "shell",
    type=click.Choice(SHELL_FORMATS),
    default="sh",
    show_default=True,
    help="How to print the variables: for sh/bash/zsh, fish, PowerShell, a .env file, or JSON.",
)
def env(*, environment: EnvironmentSpec, shell: ShellFormat) -> None:
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
    from variant_bridge.uv_settings import format_variables

    settings = _settings(environment)
    click.echo(format_variables(settings.variables, shell), nl=False)
    _echo_notes(settings)


@click.command(
    short_help="Run a command (e.g. uv) with the variables `env` prints.",
    # Options stop at the first argument: what follows (CMD and its own options) is passed on.
    context_settings={"allow_interspersed_args": False},
)
@environment_options()
@fetch_options()
@click.argument(
    "command", nargs=-1, required=True, type=click.UNPROCESSED, metavar="-- CMD [ARGS]..."
)
@click.pass_context
def run(
    ctx: click.Context,
    *,
    environment: EnvironmentSpec,
    fetch: FetchSpec,
    command: tuple[str, ...],
) -> None:
    """Run CMD with the variables `variant-bridge env` prints, and exit with its status.

    CMD is looked up on PATH. If it does not exist, one error line is printed and the exit
    status is 127 (126 if it exists but cannot be executed), as a shell would. A CMD killed by
    a signal gives 128 + the signal number. For `uv pip install|compile PKG...` with its own
    --index-url/--extra-index-url/--index/--find-links, notes say before uv runs what it will
    do differently: a package's variant wheels it cannot see (no *-variants.json listing them),
    a *-variants.json or variant.json its parser refuses, and each package where its own pick
    (driver and GPU only, static priorities) differs from `select`'s, with the command that
    installs select's.

    \b
    Examples:
      variant-bridge run -- uv pip install torch --index-url https://download.pytorch.org/whl/variant
      variant-bridge run --prefix "$CONDA_PREFIX" -- uv pip install --dry-run mypkg
    """
    if any("\0" in arg for arg in command):  # Popen's ValueError; a shell cannot pass one
        raise click.BadParameter(
            "an argument holds a NUL byte, which no program can receive", param_hint="CMD"
        )
    settings = _settings(environment)
    if not fetch.quiet:
        _echo_notes(settings)
        _warn_uv_view(command, environment, fetch, settings)
    ctx.exit(_run(command, settings.applied_to(os.environ)))


def _warn_uv_view(
    command: tuple[str, ...], environment: EnvironmentSpec, fetch: FetchSpec, settings: UvSettings
) -> None:
    """Say what uv will do differently from `select` (docs/semantics.md §6.2), before it runs:
    the indexes uv's command names are read through this command's fetching (cache,
    --verbose). Advice: what cannot be read or chosen here is left to uv to report."""
    from variant_bridge.jobs.uv_view import parse_uv_command

    parsed = parse_uv_command(command)
    if parsed is None:
        return
    from variant_bridge.cli._fetching import echo_notes, reporter
    from variant_bridge.errors import VariantBridgeError
    from variant_bridge.jobs.context import Context
    from variant_bridge.jobs.uv_view import (
        invisible_variants,
        unreadable_metadata,
        uv_disagreements,
    )

    try:
        with Context.open(parsed.sources, environment, fetch, reporter=reporter()) as ctx:
            python = ctx.target.python.version
            notes = invisible_variants(parsed, downloads=ctx.downloads, python=python)
            unreadable = unreadable_metadata(parsed, downloads=ctx.downloads, python=python)
            notes += unreadable
            if not unreadable:  # uv refuses those packages: what it would pick is moot
                notes += uv_disagreements(parsed, ctx, settings, environment)
            fetched = ctx.notes
    except VariantBridgeError as e:
        notes, fetched = [f"what uv will do was not checked: {e}"], ()
    echo_notes([*notes, *fetched])


def _run(command: tuple[str, ...], environ: dict[str, str]) -> int:
    try:
        process = subprocess.Popen(command, env=environ)
    except FileNotFoundError:
        click.echo(f"error: command not found: {quote(command[0])}", err=True)
        return COMMAND_NOT_FOUND
    except PermissionError:
        click.echo(f"error: command not executable: {quote(command[0])}", err=True)
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
