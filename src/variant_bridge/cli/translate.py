"""``variant-bridge translate``: variant properties -> conda specs, and conda specs ->
supported properties."""

from __future__ import annotations

from typing import Literal

import click

from variant_bridge.cli._output import (
    echo_environment,
    echo_json,
    environment_json,
    heading,
    json_option,
)
from variant_bridge.environment import CUDA_POLICIES, CudaPolicy
from variant_bridge.errors import InvalidProperty, clip, quote
from variant_bridge.properties import VariantProperty

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
    properties = tuple(_parse_property(item) for item in items)
    from variant_bridge.translate import to_conda_specs

    result = to_conda_specs(properties)
    if as_json:
        echo_json(
            {
                **result.as_dict(),
                "requirements": {
                    tool: [list(group) for group in result.for_tool(tool)] for tool, _ in _TOOLS
                },
            }
        )
        return
    for prop, specs in result.by_property:
        heading(str(prop))
        # The forms of one property's specs, from translating it alone (public API only).
        forms = {c.spec: c.form for c in to_conda_specs([prop]).conda_specs}
        regex = [spec for spec in specs if forms.get(spec) == "rattler"]
        enumerated = [spec for spec in specs if forms.get(spec) == "conda"]
        for spec in specs:
            if spec not in regex and spec not in enumerated:
                click.echo(f"  {spec}")
        if regex:
            click.echo("  pixi, rattler (a CEP 29 regex build):")
            for spec in regex:
                click.echo(f"    {spec}")
        if enumerated:
            click.echo("  conda, mamba (any one of these exact builds):")
            for spec in enumerated:
                click.echo(f"    {spec}")
    if len(result.by_property) > 1:
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
    if result.unmapped:
        if result.by_property:
            click.echo()
        heading("Unmapped (no conda counterpart; nothing is emitted for these)")
        for prop, reason in result.unmapped:
            click.echo(f"  {clip(str(prop))}: {reason}")  # --json has the property in full


def _parse_property(text: str) -> VariantProperty:
    try:
        return VariantProperty.parse(text)
    except InvalidProperty as e:
        # The parser quotes its input whole; one pasted blob must not flood the error line.
        raise InvalidProperty(str(e).replace(repr(text), quote(text), 1)) from e


def _from_conda(
    specs: tuple[str, ...], *, platform: str | None, cuda_policy: CudaPolicy | None, as_json: bool
) -> None:
    from variant_bridge.translate import read_conda_specs, supported_properties

    facts = read_conda_specs(specs, platform=platform)
    env = facts.environment
    supported = supported_properties(env, policy=cuda_policy)
    policy = cuda_policy or env.default_policy()
    if as_json:
        ignored = [{"spec": spec, "reason": reason} for spec, reason in facts.ignored]
        echo_json({**environment_json(env, supported, policy=policy), "ignored": ignored})
    else:
        # Never silently: a spec that changes nothing is most likely a misunderstanding.
        notes = [f"{spec}: {reason}; ignored" for spec, reason in facts.ignored]
        echo_environment(env, supported, policy=policy, title="Conda specs given", notes=notes)
