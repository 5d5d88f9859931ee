"""``variant-bridge detect``: a conda/pixi environment's view of the machine, as variant
properties."""

from __future__ import annotations

import click

from variant_bridge.cli._options import environment_options
from variant_bridge.cli._output import echo_environment, echo_json, environment_json, json_option
from variant_bridge.jobs.specs import EnvironmentSpec

__all__ = ["detect"]


@click.command(short_help="Show what an environment supports, as variant properties.")
@environment_options()
@json_option
def detect(*, environment: EnvironmentSpec, as_json: bool) -> None:
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
    # Heavy imports (rattler, archspec, the mapping tables) only once a command runs.
    from variant_bridge.jobs.target import detect as detect_environment
    from variant_bridge.translate import supported_properties

    env = detect_environment(environment)
    supported = supported_properties(env, policy=environment.cuda_policy)
    if as_json:
        echo_json(environment_json(env, supported))
    else:
        echo_environment(env, supported, locked=environment.lockfile is not None)
