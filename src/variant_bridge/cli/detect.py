"""``variant-bridge detect``: a conda/pixi environment's view of the machine, as variant
properties."""

from __future__ import annotations

from pathlib import Path

import click

from variant_bridge.cli._output import echo_environment, echo_json, environment_json, json_option
from variant_bridge.environment import CUDA_POLICIES, CudaPolicy

__all__ = ["detect"]


@click.command(short_help="Show what an environment supports, as variant properties.")
@click.option(
    "--prefix",
    type=click.Path(file_okay=False, path_type=Path),
    help="A conda prefix to read (conda-meta and site-packages). Default: $CONDA_PREFIX, if set.",
)
@click.option(
    "--lockfile",
    type=click.Path(dir_okay=False, path_type=Path),
    help="A pixi.lock to read instead of a prefix.",
)
@click.option(
    "--environment",
    "-e",
    metavar="NAME",
    help="The pixi.lock environment (with --lockfile). Default: 'default'.",
)
@click.option(
    "--platform",
    metavar="SUBDIR",
    help="The conda platform, e.g. linux-64, osx-arm64. Default: this machine's.",
)
@click.option(
    "--target",
    "-t",
    "targets",
    multiple=True,
    metavar="KEY=VALUE",
    help=(
        "Declare a fact instead of detecting it (repeatable). KEY: cuda, cuda_arch, archspec, "
        "glibc, linux, osx, win, python (e.g. cuda=12.8, cuda_arch=9.0, archspec=haswell, "
        "glibc=2.28); an empty VALUE declares the virtual package absent. Wins over "
        "CONDA_OVERRIDE_* and detection."
    ),
)
@click.option(
    "--cuda-policy",
    type=click.Choice(CUDA_POLICIES),
    help=(
        "toolkit: nvidia values must also agree with the solved cuda-version; driver: only "
        "with the driver (__cuda), as uv and the NVIDIA provider do. Default: toolkit when "
        "one is solved."
    ),
)
@json_option
def detect(
    *,
    prefix: Path | None,
    lockfile: Path | None,
    environment: str | None,
    platform: str | None,
    targets: tuple[str, ...],
    cuda_policy: CudaPolicy | None,
    as_json: bool,
) -> None:
    """Show what an environment supports: its virtual packages, its solved CUDA toolkit, and the
    wheel-variant properties they allow, most preferred first, each with where it came from.

    Reads this machine (with CONDA_OVERRIDE_* applied), a conda prefix (--prefix, default
    $CONDA_PREFIX) or a pixi.lock (--lockfile). --target declares facts for another machine.

    \b
    Examples:
      variant-bridge detect
      variant-bridge detect --prefix ~/miniforge3/envs/ml --json
      variant-bridge detect --lockfile pixi.lock -e cuda --platform linux-64
      CONDA_OVERRIDE_CUDA=12.9 variant-bridge detect --cuda-policy driver
      variant-bridge detect --platform linux-64 -t cuda=12.8 -t cuda_arch=9.0 -t archspec=haswell
    """
    if prefix is not None and lockfile is not None:
        raise click.UsageError("--prefix and --lockfile cannot be used together; pick one.")
    if environment is not None and lockfile is None:
        raise click.UsageError("--environment needs --lockfile (it names a pixi.lock environment).")

    # Heavy imports (rattler, archspec, the mapping tables) only once a command runs.
    from variant_bridge.detect import detect_environment
    from variant_bridge.translate import supported_properties

    env = detect_environment(
        prefix=prefix,
        lockfile=lockfile,
        environment=environment,
        platform=platform,
        targets=targets,
    )
    supported = supported_properties(env, policy=cuda_policy)
    policy = cuda_policy or env.default_policy()
    if as_json:
        echo_json(environment_json(env, supported, policy=policy))
    else:
        echo_environment(env, supported, policy=policy)
