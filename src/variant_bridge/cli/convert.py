"""``variant-bridge convert``: variant wheels as conda packages."""

from __future__ import annotations

from pathlib import Path

import click

from variant_bridge.cli._output import echo_json, heading, json_option
from variant_bridge.cli.index import (
    channel_options,
    priority_option,
    release_json,
    target_subdir,
)

__all__ = ["convert"]


@click.command("convert", short_help="Turn variant wheels into conda packages.")
@click.argument("inputs", nargs=-1, required=True, metavar="WHEELS|DIR...")
@channel_options(
    output_help="The channel directory the packages are written to (then indexed with rattler).",
    subdir_help="The platform the packages' requirements are for (binary wheels go there, pure "
    "ones to noarch). Default: this machine's.",
)
@priority_option
@json_option
def convert(
    *, inputs: tuple[str, ...], channel: Path, subdir: str | None, priority: str, as_json: bool
) -> None:
    """Turn variant wheels into conda packages whose depends carry the translated specs.

    Packages are linked as noarch: python (entry points in info/link.json, .data scripts,
    headers and data placed for conda); variant.json stays in the dist-info, so
    `detect --prefix` sees the variant once rattler or conda installs the package.

    \b
    Examples:
      variant-bridge convert ./wheels -o ./channel
      variant-bridge convert torch-2.9.0-*.whl -o ./channel --subdir linux-64
    """
    from variant_bridge.cli import _native
    from variant_bridge.indexes import FindLinks, IndexSource
    from variant_bridge.jobs.convert import convert_wheels
    from variant_bridge.jobs.index import IndexRequest
    from variant_bridge.priority import Encoding

    files = tuple(Path(i) for i in inputs if i.endswith(".whl"))
    dirs: tuple[IndexSource, ...] = tuple(
        FindLinks.parse(i) for i in inputs if not i.endswith(".whl")
    )
    target = target_subdir(subdir)
    request = IndexRequest(channel, target, dirs, files, encoding=Encoding(priority))
    _native.request_clean_exit()
    report = convert_wheels(request)
    # What cannot be a conda dependency is said on stderr in every mode (and in --json).
    for release in report.releases:
        for wheel, requirement, why in release.not_dependencies:
            click.echo(f"note: {wheel}: {requirement!r} is not a conda dependency: {why}", err=True)
    if as_json:
        echo_json(
            {
                "channel": str(report.channel),
                "packages": [str(p) for p in report.packages],
                "names": dict(report.names),
                "releases": [release_json(r) for r in report.releases],
            }
        )
        return
    heading(f"{report.channel}: {len(report.packages)} conda packages")
    for path in report.packages:
        click.echo(f"  {path.relative_to(report.channel)}")
    for pypi, conda in report.names:
        click.echo(f"  {pypi} is named {conda} (conda-forge's name for it)")
    for release in report.releases:
        for label, why in release.unmapped:
            click.echo(f"  never chosen: {release.project} {label}: {why}")
        for wheel, why in release.skipped:
            click.echo(f"  skipped {wheel}: {why}")
