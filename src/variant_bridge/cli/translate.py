"""``variant-bridge translate``: variant properties -> conda specs, and conda specs ->
supported properties."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import click

from variant_bridge.cli._output import (
    echo_environment,
    echo_json,
    environment_json,
    heading,
    json_option,
)
from variant_bridge.environment import CUDA_POLICIES, CudaPolicy
from variant_bridge.errors import clip
from variant_bridge.properties import VariantProperty

if TYPE_CHECKING:
    from variant_bridge.translate import CondaSpec, Translation

__all__ = ["translate"]

_TOOLS: tuple[tuple[Literal["rattler", "conda"], str], ...] = (
    ("rattler", "pixi, rattler"),
    ("conda", "conda, mamba"),
)


@click.command(short_help="Variant properties -> conda specs, or back with --from-conda.")
@click.argument("items", nargs=-1, required=True, metavar="PROPERTY...|SPEC...")
@click.option(
    "--from-conda",
    is_flag=True,
    help=(
        "Read the arguments as conda specs (__cuda=12.8, __cuda_arch=9.0, __archspec=1=haswell, "
        "__glibc=2.28, cuda-version=12.6) and print the variant properties they support."
    ),
)
@click.option(
    "--platform",
    metavar="SUBDIR",
    help="With --from-conda: the conda platform, e.g. linux-64. Default: this machine's.",
)
@click.option(
    "--cuda-policy",
    type=click.Choice(CUDA_POLICIES),
    help="With --from-conda: as for detect. Default: toolkit when cuda-version is given.",
)
@json_option
def translate(
    *,
    items: tuple[str, ...],
    from_conda: bool,
    platform: str | None,
    cuda_policy: CudaPolicy | None,
    as_json: bool,
) -> None:
    """Print the conda specs that variant PROPERTYs need, or with --from-conda, the variant
    properties that conda SPECs support.

    A property is 'namespace :: feature :: value' (the spaces around '::' are optional; quote
    a property that has them). Properties without a mapping are listed as unmapped, with the
    reason. For
    __archspec two equivalent forms are printed: a CEP 29 regex build (pixi, rattler) and an
    enumerated list of microarchitectures (conda, mamba).

    \b
    Examples:
      variant-bridge translate "nvidia :: cuda_version_lower_bound :: 12.8"
      variant-bridge translate nvidia::sm_arch::90_real x86_64::level::v3 --json
      variant-bridge translate --from-conda __cuda=12.9 __cuda_arch=8.6 cuda-version=12.6
      variant-bridge translate --from-conda __archspec=1=haswell --platform linux-64
    """
    if not from_conda:
        for name, value in (("--platform", platform), ("--cuda-policy", cuda_policy)):
            if value is not None:
                raise click.UsageError(f"{name} only applies with --from-conda.")
        _to_conda(items, as_json=as_json)
    else:
        _from_conda(items, platform=platform, cuda_policy=cuda_policy, as_json=as_json)


def _to_conda(items: tuple[str, ...], *, as_json: bool) -> None:
    # Malformed input fails before the mapping tables load.
    properties = tuple(VariantProperty.parse(item) for item in items)
    from variant_bridge.translate import to_conda_specs

    result = to_conda_specs(properties)
    if as_json:
        requirements = {
            tool: [list(group) for group in result.for_tool(tool)] for tool, _ in _TOOLS
        }
        echo_json({**result.as_dict(), "requirements": requirements})
        return
    for prop, specs in result.by_property:
        heading(str(prop))
        _echo_specs(specs)
    if len(result.by_property) > 1:
        _echo_together(result)
    if result.unmapped:
        if result.by_property:
            click.echo()
        heading("Unmapped (no conda counterpart; nothing is emitted for these)")
        for prop, reason in result.unmapped:
            click.echo(f"  {clip(str(prop))}: {reason}")  # --json has the property in full


def _echo_specs(specs: tuple[CondaSpec, ...]) -> None:
    """One property's specs: plain ones, then the two forms of a CPU requirement."""
    for spec in specs:
        if spec.form == "any":
            click.echo(f"  {spec.spec}")
    titles = (
        ("rattler", "pixi, rattler (a CEP 29 regex build):"),
        ("conda", "conda, mamba (any one of these exact builds):"),
    )
    for form, title in titles:
        listed = [spec.spec for spec in specs if spec.form == form]
        if listed:
            click.echo(f"  {title}")
            for text in listed:
                click.echo(f"    {text}")


def _echo_together(result: Translation) -> None:
    for tool, title in _TOOLS:
        click.echo()
        heading(f"All together, for {title} (every item is needed)")
        for group in result.for_tool(tool):
            if len(group) == 1:
                click.echo(f"  {group[0]}")
            else:
                click.echo("  any one of:")
                for spec in group:
                    click.echo(f"    {spec}")


def _from_conda(
    specs: tuple[str, ...], *, platform: str | None, cuda_policy: CudaPolicy | None, as_json: bool
) -> None:
    from variant_bridge.detect.machine import host_platform
    from variant_bridge.translate import read_conda_specs, supported_properties

    facts = read_conda_specs(specs, platform=platform or host_platform())
    env = facts.environment
    supported = supported_properties(env, policy=cuda_policy)
    if as_json:
        ignored = [{"spec": spec, "reason": reason} for spec, reason in facts.ignored]
        echo_json({**environment_json(env, supported), "ignored": ignored})
    else:
        # Never silently: a spec that changes nothing is most likely a misunderstanding.
        notes = [f"{spec}: {reason}; ignored" for spec, reason in facts.ignored]
        echo_environment(env, supported, title="Conda specs given", notes=notes)
