"""``variant-bridge solve``: one conda solve over conda packages and variant wheels."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from variant_bridge.cli._environment import usage_errors
from variant_bridge.cli._fetching import FetchOptions, fetch_options
from variant_bridge.cli._output import echo_json, echo_notes, heading, json_option
from variant_bridge.cli.index import priority_option, release_json

if TYPE_CHECKING:
    from variant_bridge.environment import Environment
    from variant_bridge.jobs.solve import SolveResult

__all__ = ["result_json", "solve"]


def _channel_dir(text: str) -> Path:
    """A local channel: a directory or its ``file://`` URL."""
    from variant_bridge.indexes import url_to_path

    path = url_to_path(text) if text.startswith("file:") else Path(text)
    if text.startswith(("http://", "https://")) or not path.is_dir():
        raise click.BadParameter(
            f"{text!r}: expected a local channel directory (or its file:// URL); remote channels "
            "are not read by py-rattler's wheel-aware solve",
            param_hint="--channel",
        )
    return path.absolute()


def result_json(result: SolveResult, env: Environment) -> dict[str, Any]:
    """The ``--json`` shape of ``solve`` (docs/cli.md)."""
    return {
        "specs": list(result.specs),
        "platform": result.platform,
        "virtual_packages": [str(vp) for vp in env.virtual_packages],
        "toolkit": result.toolkit,
        "conda": [
            {"name": p.name, "version": p.version, "build": p.build, "url": p.url}
            for p in result.conda
        ],
        "wheels": [
            {
                "name": w.package.name,
                "version": w.package.version,
                "label": w.label,
                "filename": w.candidate.name,
                "url": w.candidate.url,
                "sha256": w.candidate.sha256,
                "record": w.package.build,
                "build_number": w.package.build_number,
                "depends": list(w.package.depends),
                "why": w.reason,
            }
            for w in result.wheels
        ],
        "installed": str(result.installed) if result.installed else None,
        "lockfile": str(result.lockfile) if result.lockfile else None,
        "manifest": str(result.manifest) if result.manifest else None,
        "index": [release_json(r) for r in result.releases],
        "notes": list(result.notes),
    }


def _echo(result: SolveResult, env: Environment) -> None:
    heading(f"Solution for {' '.join(result.specs)} on {result.platform}")
    click.echo("  virtual packages: " + ", ".join(str(vp) for vp in env.virtual_packages))
    for package in result.conda:
        click.echo(f"  conda  {package.name} {package.version} {package.build}")
    for wheel in result.wheels:
        click.echo(f"  wheel  {wheel.candidate.name}")
        click.echo(f"         why: {wheel.reason}")
    if result.installed:
        click.echo(f"Installed into {result.installed}")
    if result.lockfile:
        click.echo(f"Wrote {result.lockfile}")
    if result.manifest:
        click.echo(f"Wrote {result.manifest} (the manifest the lock satisfies)")
    echo_notes(list(result.notes))


def _environment(platform: str | None, targets: tuple[str, ...], strict: bool) -> Environment:
    """The virtual packages to solve for: this machine's (with CONDA_OVERRIDE_*), or declared.
    ``$CONDA_PREFIX`` is not read: the solve starts from nothing."""
    from variant_bridge.detect import detect_environment

    variables = {k: v for k, v in os.environ.items() if k != "CONDA_PREFIX"}
    with usage_errors():
        return detect_environment(platform=platform, targets=targets, env=variables, strict=strict)


@click.command(
    "solve",
    short_help="Solve conda packages and variant wheels together (py-rattler); install or lock it.",
)
@click.argument("specs", nargs=-1, required=True, metavar="SPECS...")
@click.option(
    "--channel",
    "-c",
    "channels",
    multiple=True,
    metavar="DIR",
    help="A local conda channel (directory or file:// URL), after the wheels (repeatable).",
)
@click.option(
    "--find-links",
    "-f",
    "find_links",
    multiple=True,
    metavar="DIR",
    help="Wheels to index on the fly: a directory of wheels and *-variants.json (repeatable).",
)
@click.option(
    "--index-url",
    "index_urls",
    multiple=True,
    metavar="URL",
    help="A simple index whose projects named by SPECS are indexed on the fly (repeatable).",
)
@click.option("--platform", metavar="SUBDIR", help="The conda platform. Default: this machine's.")
@click.option(
    "--target",
    "-t",
    "targets",
    multiple=True,
    metavar="KEY=VALUE",
    help="Declare a virtual package instead of detecting it (cuda=12.9, cuda_arch=9.0, "
    "archspec=haswell, glibc=2.28; repeatable). CONDA_OVERRIDE_* work too.",
)
@click.option("--strict", is_flag=True, help="Detect nothing: declared facts and pixi's defaults.")
@priority_option
@click.option(
    "--prefix",
    type=click.Path(path_type=Path, file_okay=False),
    help="Install the solution there: conda packages with rattler, then the wheels with uv or "
    "pip into the prefix's Python.",
)
@click.option(
    "--lockfile",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Write the solution as a pixi.lock (conda packages, and the wheels as pypi entries "
    "with their sha256: variant wheels as plain-named copies in variant-wheels/ beside it) and "
    "a pixi.toml beside it that the lock satisfies (or update the one there).",
)
@click.option("--installer", type=click.Choice(("uv", "pip")), help="Default: uv if found.")
@fetch_options(hashes=True)
@json_option
def solve(
    *,
    specs: tuple[str, ...],
    channels: tuple[str, ...],
    find_links: tuple[str, ...],
    index_urls: tuple[str, ...],
    platform: str | None,
    targets: tuple[str, ...],
    strict: bool,
    priority: str,
    prefix: Path | None,
    lockfile: Path | None,
    installer: str | None,
    fetch: FetchOptions,
    as_json: bool,
) -> None:
    """Solve conda SPECS with variant wheels in the same solve (py-rattler).

    The wheels' variant properties become requirements on virtual packages and cuda-version,
    their priority becomes build numbers, so the solver picks the wheel `select` would pick for
    the same machine and toolkit, and the cuda-version that goes with it.

    \b
    Examples:
      variant-bridge solve torch -f ./wheels -c ./conda-channel
      variant-bridge solve torch "cuda-version 12.6.*" -f ./wheels -c ./ch -t cuda=12.9
      variant-bridge solve torch -f ./wheels -c ./ch --prefix ./env --lockfile pixi.lock
    """
    from variant_bridge.cli import _native
    from variant_bridge.indexes import FindLinks, IndexSource, SimpleIndex
    from variant_bridge.jobs.solve import SolveRequest
    from variant_bridge.jobs.solve import solve as run_solve
    from variant_bridge.priority import Encoding

    channel_dirs = tuple(_channel_dir(c) for c in channels)
    sources: tuple[IndexSource, ...] = (
        *(FindLinks.parse(f) for f in find_links),
        *(SimpleIndex.parse(u, option="--index-url") for u in index_urls),
    )
    env = _environment(platform, targets, strict)
    request = SolveRequest(
        specs, env, channel_dirs, sources, Encoding(priority), prefix, lockfile, installer,
        require_hashes=fetch.require_hashes,
    )  # fmt: skip
    _native.request_clean_exit()
    downloads = fetch.downloads()
    result = run_solve(request, downloads)
    fetch.echo_notes(downloads)
    if as_json:
        echo_json(result_json(result, env))
    else:
        _echo(result, env)
