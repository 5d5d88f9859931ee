"""``variant-bridge doctor``: what is wrong with an environment's GPU wheels, and the fix."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

import click

from variant_bridge.cli._options import environment_options
from variant_bridge.cli._output import (
    echo_findings,
    echo_json,
    health_json,
    json_option,
    toolkit_json,
)

if TYPE_CHECKING:
    from variant_bridge.health import HealthReport
    from variant_bridge.jobs.doctor import Examined
    from variant_bridge.jobs.specs import EnvironmentSpec

__all__ = ["doctor"]


def _facts(examined: Examined) -> str:
    env = examined.env
    facts = [env.platform]
    if env.python:
        facts.append(f"Python {env.python}")
    facts.append(f"{env.toolkit} ({env.toolkit.source})" if env.toolkit else "no cuda-version")
    cuda = env.cuda
    facts.append(f"__cuda={cuda.version} ({cuda.source})" if cuda else "no __cuda")
    return ", ".join(facts)


def _verdict(report: HealthReport) -> str:
    counts = {s.value: n for s, n in report.counts().items() if n}
    found = ", ".join(f"{n} {name}{'s' if n > 1 else ''}" for name, n in counts.items())
    total = len(report.findings)
    checked = f"{report.checked} PyPI distribution{'s' if report.checked != 1 else ''} checked"
    if report.healthy:
        more = f" ({found})" if total else ""
        return f"Healthy: no warning or error{more}; {checked}."
    return f"{total} finding{'s' if total > 1 else ''} ({found}); {checked}."


def _json(examined: Examined) -> dict[str, Any]:
    env, report = examined.env, examined.report
    place = report.place
    return {
        "origin": env.origin,
        "platform": env.platform,
        "python": env.python,
        "policy": examined.supported.policy,
        "toolkit": toolkit_json(env.toolkit),
        "place": (
            None
            if place is None
            else {
                "kind": place.kind.value,
                "path": place.path,
                "python": place.python,
                "environment": place.environment,
            }
        ),
        **health_json(report),
        "notes": list(env.notes),
    }


@click.command(short_help="Find what is wrong with an environment's GPU wheels, with the fix.")
@environment_options()
@click.option(
    "--python",
    "python",
    metavar="PY",
    help="Examine this interpreter's site-packages (a venv); its conda side is the prefix it "
    "lives in, --prefix or $CONDA_PREFIX, if any. Not with --lockfile.",
)
@json_option
def doctor(*, environment: EnvironmentSpec, python: str | None, as_json: bool) -> None:
    """Examine an environment's PyPI side against its conda side and the machine, and print one
    line per finding with the command that fixes it:

    \b
    - a CUDA library installed twice, a conda package and a PyPI wheel (same CUDA minor:
      info; different minors: warning, the wheel's copy may shadow conda's);
    - an installed variant wheel whose build the environment no longer supports (its toolkit,
      driver, GPU or CPU; e.g. torch cuda12.6 after `conda install cuda-version=12.4`);
    - nvidia-* wheels nothing installed requires any more.

    Reads files only, nothing from the network. Exit status 0 when healthy (info findings
    only), 1 when a finding of warning level or above is made.

    \b
    Examples:
      variant-bridge doctor
      variant-bridge doctor --prefix ~/miniforge3/envs/ml --json
      variant-bridge doctor --python .venv/bin/python
      variant-bridge doctor --lockfile pixi.lock -e cuda
    """
    from variant_bridge.jobs.doctor import examine_environment, prefix_of
    from variant_bridge.jobs.target import detect

    if python is not None:
        if environment.lockfile is not None:
            raise click.UsageError("--python and --lockfile cannot be used together; pick one.")
        if environment.prefix is None:  # a conda env's own python: read its prefix too
            environment = replace(environment, prefix=prefix_of(python))
    env = detect(environment)
    if python is None and env.prefix is None and environment.lockfile is None:
        raise click.UsageError(
            "Nothing to examine: pass --prefix, --lockfile or --python (or activate a conda "
            "environment)."
        )
    examined = examine_environment(
        env,
        policy=environment.cuda_policy,
        python=python,
        lockfile=environment.lockfile,
        environment=environment.environment,
    )
    report = examined.report
    if as_json:
        echo_json(_json(examined))
    else:
        click.echo(f"Examined: {env.origin} ({_facts(examined)})")
        echo_findings(report)
        click.echo(_verdict(report))
    if not report.healthy:
        raise click.exceptions.Exit(1)
