"""``variant-bridge detect``: a conda/pixi environment's view of the machine, as variant
properties."""

from __future__ import annotations

from pathlib import Path

import click

from variant_bridge.cli._options import environment_options
from variant_bridge.cli._output import echo_environment, echo_json, environment_json, json_option
from variant_bridge.jobs.specs import EnvironmentSpec

__all__ = ["detect"]


@click.command(short_help="Show what an environment supports, as variant properties.")
@environment_options()
@click.option(
    "--targets",
    "targets_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    metavar="FILE",
    help="A targets file (YAML) naming a cluster's node classes: show each class's facts "
    "(docs/clusters.md). Not with --prefix, --lockfile, --platform or --target.",
)
@json_option
def detect(*, environment: EnvironmentSpec, targets_file: Path | None, as_json: bool) -> None:
    """Show what an environment supports: its virtual packages, its solved CUDA toolkit, and the
    wheel-variant properties they allow, most preferred first, each with where it came from.

    Reads this machine (with CONDA_OVERRIDE_* applied), a conda prefix (--prefix, default
    $CONDA_PREFIX) or a pixi.lock (--lockfile). --target declares facts for another machine.
    For a prefix or lock it also shows what `variant-bridge doctor` finds there (CUDA
    libraries installed twice, variant wheels that no longer agree, orphaned nvidia-* wheels).

    \b
    Examples:
      variant-bridge detect
      variant-bridge detect --prefix ~/miniforge3/envs/ml --json
      variant-bridge detect --lockfile pixi.lock -e cuda --platform linux-64
      CONDA_OVERRIDE_CUDA=12.9 variant-bridge detect --cuda-policy driver
      variant-bridge detect --platform linux-64 -t cuda=12.8 -t cuda_arch=9.0 -t archspec=haswell
      variant-bridge detect --targets nodes.yaml --json
    """
    # Heavy imports (rattler, archspec, the mapping tables) only once a command runs.
    from variant_bridge.jobs.target import detect as detect_environment
    from variant_bridge.translate import supported_properties

    if targets_file is not None:
        _detect_classes(targets_file, environment, as_json=as_json)
        return

    env = detect_environment(environment)
    supported = supported_properties(env, policy=environment.cuda_policy)
    health = None
    if env.python_packages:  # a prefix's or lock's PyPI side: what `doctor` finds, cheaply
        from variant_bridge.jobs.doctor import health_of

        lockfile, name = environment.lockfile, environment.environment
        health = health_of(env, supported, lockfile=lockfile, environment=name)
    if as_json:
        echo_json(environment_json(env, supported, health))
    else:
        locked = environment.lockfile is not None
        echo_environment(env, supported, locked=locked, health=health)


def _detect_classes(path: Path, environment: EnvironmentSpec, *, as_json: bool) -> None:
    """``detect --targets``: each node class's declared facts and what they support."""
    from variant_bridge.cli import CliError
    from variant_bridge.detect.targets_file import node_environments, read_targets_file
    from variant_bridge.errors import InvalidTarget
    from variant_bridge.translate import supported_properties

    given = [
        option
        for option, value in (
            ("--prefix", environment.prefix),
            ("--lockfile", environment.lockfile),
            ("--environment", environment.environment),
            ("--platform", environment.platform),
            ("--target", environment.targets),
        )
        if value
    ]
    if given:
        raise click.UsageError(
            f"--targets describes each class itself; it cannot be combined with {given[0]}",
            click.get_current_context(),
        )
    try:
        classes = node_environments(read_targets_file(path))
    except InvalidTarget as e:
        raise CliError(str(e)) from e
    reports = [
        (node, env, supported_properties(env, policy=environment.cuda_policy))
        for node, env in classes
    ]
    if as_json:
        echo_json(
            {
                "targets_file": str(path),
                "classes": [
                    {"name": node.name, **environment_json(env, supported)}
                    for node, env, supported in reports
                ],
            }
        )
        return
    for i, (node, env, supported) in enumerate(reports):
        if i:
            click.echo()
        echo_environment(env, supported, title=f"Class {node.name} ({path})")
