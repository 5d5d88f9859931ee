"""``variant-bridge convert``: variant wheels as conda packages."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from variant_bridge.cli._fetching import echo_notes, reporter
from variant_bridge.cli._options import (
    channel_options,
    fetch_options,
    priority_option,
    project_option,
)
from variant_bridge.cli._output import echo_json, heading, json_option
from variant_bridge.cli.index import release_json

if TYPE_CHECKING:
    from variant_bridge.jobs.specs import FetchSpec

__all__ = ["convert"]


@click.command("convert", short_help="Turn variant wheels into conda packages.")
@click.argument("inputs", nargs=-1, required=True, metavar="WHEELS|DIR|INDEX-URL...")
@channel_options(
    output_help="the channel directory the packages are written to (then indexed with rattler)",
)
@project_option
@priority_option
@fetch_options()
@json_option
def convert(
    *,
    inputs: tuple[str, ...],
    channel: Path,
    subdir: str | None,
    projects: tuple[str, ...],
    priority: str,
    fetch: FetchSpec,
    as_json: bool,
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
    from variant_bridge.jobs.context import Context, Sources
    from variant_bridge.jobs.convert import convert_wheels
    from variant_bridge.jobs.index import IndexRequest
    from variant_bridge.jobs.target import Target
    from variant_bridge.priority import Encoding

    sources, files = Sources.of_inputs(inputs, projects=projects)
    target = Target.of_platform(subdir)
    request = IndexRequest(channel, files, projects, encoding=Encoding(priority))
    _native.request_clean_exit()
    with Context.open(sources, target, fetch, reporter=reporter()) as ctx:
        report = convert_wheels(request, ctx)
        notes = ctx.notes
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
                "any_gpu": [{"name": n, "build": b, "label": lb} for n, b, lb in report.any_gpu],
                "releases": [release_json(r) for r in report.releases],
            }
        )
        return
    heading(f"{report.channel}: {len(report.packages)} conda packages")
    for path in report.packages:
        click.echo(f"  {path.relative_to(report.channel)}")
    for pypi, conda in report.names:
        click.echo(f"  {pypi} is named {conda} (conda-forge's name for it)")
    for name, build, label in report.any_gpu:
        click.echo(
            f"  {name} {build}: for clients that cannot see the GPU (stock conda), installed "
            f"only when asked for ({name}=*={label}*)"
        )
    for release in report.releases:
        for label, why in release.unmapped:
            click.echo(f"  never chosen: {release.project} {label}: {why}")
        for wheel, why in release.skipped:
            click.echo(f"  skipped {wheel}: {why}")
    echo_notes(notes)
