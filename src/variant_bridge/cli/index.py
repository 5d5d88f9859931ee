"""``variant-bridge index``: variant wheels as ``v3.whl`` records in a conda channel."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from variant_bridge.cli._fetching import reporter
from variant_bridge.cli._options import (
    channel_options,
    fetch_options,
    priority_option,
    project_option,
)
from variant_bridge.cli._output import echo_json, echo_notes, heading, json_option

if TYPE_CHECKING:
    from variant_bridge.jobs.index import IndexReport
    from variant_bridge.jobs.specs import FetchSpec
    from variant_bridge.solve.records import ReleaseRecords

__all__ = ["index", "release_json", "report_json"]


def release_json(release: ReleaseRecords) -> dict[str, Any]:
    return {
        "project": release.project,
        "version": release.version,
        "records": [
            {
                "key": r.key,
                "wheel": r.filename,
                "label": r.label,
                "cell": str(r.cell) if r.cell is not None else None,
                **dict(r.record),
            }
            for r in release.records
        ],
        "skipped": [{"wheel": w, "reason": why} for w, why in release.skipped],
        "unmapped": [{"label": label, "reason": why} for label, why in release.unmapped],
        "conflicts": [
            {"first": c.first, "second": c.second, "where": c.where, "message": str(c)}
            for c in release.conflicts
        ],
        "left_to_installer": [
            {"wheel": w, "requirement": req} for w, req in release.left_to_installer
        ],
        "not_dependencies": [
            {"wheel": w, "requirement": req, "reason": why}
            for w, req, why in release.not_dependencies
        ],
    }


READ_BY = ("py-rattler (variant-bridge solve)", "pixi")
"""The clients that read ``v3.whl`` records today (conda does not: ``convert`` is for it)."""


def report_json(report: IndexReport, fetched: tuple[str, ...] = ()) -> dict[str, Any]:
    """The ``--json`` shape of ``index`` (docs/cli.md); *fetched*: what fetching noted."""
    return {
        "read_by": list(READ_BY),
        "channel": str(report.channel),
        "subdir": report.subdir,
        "priority": report.encoding.value,
        "records": report.record_count,
        "releases": [release_json(r) for r in report.releases],
        "notes": [*report.notes, *fetched],
    }


def _echo(report: IndexReport, fetched: tuple[str, ...]) -> None:
    heading(f"{report.channel} ({report.subdir}, priority {report.encoding.value})")
    for release in report.releases:
        labels = sorted({r.label or "(plain)" for r in release.records})
        click.echo(
            f"  {release.project} {release.version}: {len(release.records)} records "
            f"({', '.join(labels)})"
        )
        for label, why in release.unmapped:
            click.echo(f"    never chosen: {label}: {why}")
        for wheel, why in release.skipped:
            click.echo(f"    skipped {wheel}: {why}")
        for conflict in release.conflicts:
            click.echo(f"    conflict: {conflict}")
        if release.left_to_installer:
            left = len(release.left_to_installer)
            click.echo(f"    {left} requirement(s) left to the installer")
    click.echo(
        "  read by: py-rattler (variant-bridge solve, pixi); conda reads no v3.whl record: use "
        "`variant-bridge convert` to give conda packages"
    )
    echo_notes([*report.notes, *fetched])


@click.command(
    "index",
    short_help="Write v3.whl repodata that makes variant wheels visible to conda solvers.",
)
@click.argument("inputs", nargs=-1, required=True, metavar="WHEELS|DIR|INDEX-URL...")
@channel_options(
    output_help="the channel directory written (created; its conda packages are indexed too)",
)
@project_option
@priority_option
@click.option(
    "--form",
    type=click.Choice(("rattler", "conda")),
    default="rattler",
    show_default=True,
    help="__archspec requirements as one CEP 29 regex (what rattler matches) or one record "
    "per exact microarchitecture, for a v3.whl reader that cannot match a regex. Neither "
    "makes conda read the records: conda reads no v3.whl record (use convert).",
)
@fetch_options()
@json_option
def index(
    *,
    inputs: tuple[str, ...],
    channel: Path,
    subdir: str | None,
    projects: tuple[str, ...],
    priority: str,
    form: str,
    fetch: FetchSpec,
    as_json: bool,
) -> None:
    """Write conda repodata (v3.whl records) for variant wheels, so rattler-based solvers see them.

    Which clients read v3.whl records today: py-rattler 0.28 (the `solve` command) and what is
    built on it (pixi, with local channels). conda 26 does not (it reads `packages` and
    `packages.conda`; v3.whl only in its sharded-repodata code), nor does conda's pip step: for
    conda, turn the wheels into conda packages with `variant-bridge convert`.

    INPUTS are wheel files, find-links directories (every project in them) or simple index
    URLs (http(s):// or file://, with --project). Local wheels are copied into CHANNEL/wheels/;
    conda packages already in CHANNEL are indexed with rattler and the wheel records merged
    beside them.

    \b
    Examples:
      variant-bridge index ./wheels -o ./channel
      variant-bridge index https://example.org/simple/ --project torch -o ./channel
    """
    from variant_bridge.cli import _native
    from variant_bridge.jobs.context import Context, Sources
    from variant_bridge.jobs.index import IndexRequest, index_wheels
    from variant_bridge.jobs.target import Target
    from variant_bridge.priority import Encoding

    sources, files = Sources.of_inputs(inputs, projects=projects)
    target = Target.of_platform(subdir)
    request = IndexRequest(
        channel, files, projects, Encoding(priority), "conda" if form == "conda" else "rattler"
    )
    _native.request_clean_exit()
    with Context.open(sources, target, fetch, reporter=reporter()) as ctx:
        report = index_wheels(request, ctx)
        notes = ctx.notes
    if as_json:
        echo_json(report_json(report, notes))
    else:
        _echo(report, notes)
