"""``variant-bridge index``: variant wheels as ``v3.whl`` records in a conda channel."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from variant_bridge.cli._output import echo_json, echo_notes, heading, json_option

if TYPE_CHECKING:
    from variant_bridge.jobs.index import IndexReport
    from variant_bridge.solve.records import ReleaseRecords

__all__ = ["channel_options", "index", "priority_option", "report_json", "target_subdir"]

PRIORITIES = ("cells", "rank")
F = TypeVar("F", bound=Callable[..., Any])


def priority_option(function: Any) -> Any:
    return click.option(
        "--priority",
        type=click.Choice(PRIORITIES),
        default="cells",
        show_default=True,
        help="How variant priority is written: cells (one record per __cuda_arch interval, "
        "agrees with select on every GPU) or rank (one build number per label; GPU-dependent "
        "orders are reported as conflicts).",
    )(function)


def channel_options(*, output_help: str, subdir_help: str) -> Callable[[F], F]:
    """``-o/--output CHANNEL`` and ``--subdir SUBDIR``, as ``index`` and ``convert`` take them."""

    def decorate(function: F) -> F:
        function = click.option("--subdir", metavar="SUBDIR", help=subdir_help)(function)
        return click.option(
            "--output",
            "-o",
            "channel",
            required=True,
            type=click.Path(path_type=Path, file_okay=False),
            help=output_help,
        )(function)

    return decorate


def target_subdir(subdir: str | None) -> str:
    """The ``--subdir`` given, checked; else this machine's."""
    from variant_bridge.detect.machine import host_platform
    from variant_bridge.virtual_packages import check_platform

    return check_platform(subdir, where="--subdir") if subdir else host_platform()


def _split(inputs: tuple[str, ...]) -> tuple[list[str], list[Path], list[str]]:
    """Index URLs, wheel files and find-links directories, as typed."""
    urls = [i for i in inputs if i.startswith(("http://", "https://"))]
    files = [Path(i) for i in inputs if i.endswith(".whl") and i not in urls]
    dirs = [i for i in inputs if i not in urls and not i.endswith(".whl")]
    return urls, files, dirs


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


def report_json(report: IndexReport) -> dict[str, Any]:
    """The ``--json`` shape of ``index`` (docs/cli.md)."""
    return {
        "read_by": list(READ_BY),
        "channel": str(report.channel),
        "subdir": report.subdir,
        "priority": report.encoding.value,
        "records": report.record_count,
        "releases": [release_json(r) for r in report.releases],
        "notes": list(report.notes),
    }


def _echo(report: IndexReport) -> None:
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
    echo_notes(list(report.notes))


@click.command(
    "index",
    short_help="Write v3.whl repodata that makes variant wheels visible to conda solvers.",
)
@click.argument("inputs", nargs=-1, required=True, metavar="WHEELS|DIR|INDEX-URL...")
@channel_options(
    output_help="The channel directory to write (created; its conda packages are indexed too).",
    subdir_help="The conda platform the records are for. Default: this machine's.",
)
@click.option(
    "--project",
    "projects",
    multiple=True,
    metavar="NAME",
    help="Index only this project (repeatable); required for index URLs.",
)
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
@json_option
def index(
    *,
    inputs: tuple[str, ...],
    channel: Path,
    subdir: str | None,
    projects: tuple[str, ...],
    priority: str,
    form: str,
    as_json: bool,
) -> None:
    """Write conda repodata (v3.whl records) for variant wheels, so rattler-based solvers see them.

    Which clients read v3.whl records today: py-rattler 0.28 (the `solve` command) and what is
    built on it (pixi, with local channels). conda 26 does not (it reads `packages` and
    `packages.conda`; v3.whl only in its sharded-repodata code), nor does conda's pip step: for
    conda, turn the wheels into conda packages with `variant-bridge convert`.

    INPUTS are wheel files, find-links directories (every project in them) or simple index
    URLs (with --project). Local wheels are copied into CHANNEL/wheels/; conda packages already
    in CHANNEL are indexed with rattler and the wheel records merged beside them.

    \b
    Examples:
      variant-bridge index ./wheels -o ./channel
      variant-bridge index https://example.org/simple/ --project torch -o ./channel
    """
    from variant_bridge.cli import _native
    from variant_bridge.indexes import FindLinks, IndexSource, SimpleIndex
    from variant_bridge.jobs.index import IndexRequest, index_wheels
    from variant_bridge.priority import Encoding

    urls, files, dirs = _split(inputs)
    if urls and not projects:
        raise click.UsageError("Index URLs need --project NAME (an index lists every project).")
    target = target_subdir(subdir)
    sources: tuple[IndexSource, ...] = (
        *(FindLinks.parse(d) for d in dirs),
        *(SimpleIndex.parse(u) for u in urls),
    )
    request = IndexRequest(
        channel, target, sources, tuple(files), projects, Encoding(priority),
        "conda" if form == "conda" else "rattler",
    )  # fmt: skip
    _native.request_clean_exit()
    report = index_wheels(request)
    if as_json:
        echo_json(report_json(report))
    else:
        _echo(report)
