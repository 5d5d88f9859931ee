"""``variant-bridge solve``: one conda solve over conda packages and variant wheels."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from variant_bridge.cli._fetching import reporter
from variant_bridge.cli._options import (
    allow_mix_option,
    environment_options,
    fetch_options,
    priority_option,
    source_options,
    targets_option,
)
from variant_bridge.cli._output import echo_json, echo_notes, heading, json_option
from variant_bridge.cli.index import release_json
from variant_bridge.errors import quote

if TYPE_CHECKING:
    from variant_bridge.environment import Environment
    from variant_bridge.jobs.solve import SolveResult
    from variant_bridge.jobs.specs import EnvironmentSpec, FetchSpec, SourceSpec

__all__ = ["result_json", "solve"]


def _channel_dir(text: str) -> Path:
    """A local channel: a directory or its ``file://`` URL."""
    from variant_bridge.indexes import url_to_path

    path = url_to_path(text) if text.startswith("file:") else Path(text)
    if text.startswith(("http://", "https://")) or not path.is_dir():
        raise click.BadParameter(
            f"{quote(text)}: expected a local channel directory (or its file:// URL); remote "
            "channels are not read by py-rattler's wheel-aware solve",
            param_hint="--channel",
        )
    return path.absolute()


def result_json(
    result: SolveResult, env: Environment, fetched: tuple[str, ...] = ()
) -> dict[str, Any]:
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
        "notes": [*result.notes, *fetched],
        "warnings": list(result.warnings),
    }


def _echo(result: SolveResult, env: Environment, fetched: tuple[str, ...]) -> None:
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
    echo_notes([*result.notes, *fetched])


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
    help="A local conda channel (directory or file:// URL; repeatable), before the wheels: a "
    "package a channel has comes from it (pixi's rule). A channel `index` wrote (conda packages "
    "and wheel records) works too: its wheels are installed from their URL, hash-checked.",
)
@click.option(
    "--prefer-wheels",
    "prefer_wheels",
    is_flag=True,
    help="Put the wheels before the conda channels: a wheel wins over a conda package of the "
    "same name.",
)
@source_options()
@environment_options(
    cuda_policy=False,
    reads=False,
    moved={"--prefix": "--into PREFIX", "--lockfile": "--write-lock FILE"},
)
@targets_option(
    what="solve for each class; with --write-lock, one pixi.lock (and pixi.toml) with a "
    "platform per class"
)
@priority_option
@allow_mix_option
@click.option(
    "--into",
    type=click.Path(path_type=Path, file_okay=False),
    metavar="PREFIX",
    help="Install the solution into PREFIX: conda packages with rattler, then the wheels with "
    "uv or pip into its Python.",
)
@click.option(
    "--write-lock",
    "write_lock",
    type=click.Path(path_type=Path, dir_okay=False),
    metavar="FILE",
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
    prefer_wheels: bool,
    sources: SourceSpec,
    environment: EnvironmentSpec,
    targets_file: Path | None,
    priority: str,
    allow_mix: bool,
    into: Path | None,
    write_lock: Path | None,
    installer: str | None,
    fetch: FetchSpec,
    as_json: bool,
) -> None:
    """Solve conda SPECS with variant wheels in the same solve (py-rattler).

    The wheels' variant properties become requirements on virtual packages and cuda-version,
    their priority becomes build numbers, so the solver picks the wheel `select` would pick for
    the same machine and toolkit, and the cuda-version that goes with it; packages of one GPU
    stack (torchvision -> torch) take builds of one toolkit. Wheels come from --find-links
    (every project) and the indexes (the projects SPECS name), consulted in uv's order; conda
    packages win over wheels of the same name (--prefer-wheels: the reverse). The solve starts
    from nothing: $CONDA_PREFIX is not read; --cuda X.Y asks for cuda-version X.Y.

    \b
    Examples:
      variant-bridge solve torch -f ./wheels -c ./conda-channel
      variant-bridge solve torch "cuda-version 12.6.*" -f ./wheels -c ./ch -t cuda=12.9
      variant-bridge solve torch -f ./wheels -c ./ch --into ./env --write-lock pixi.lock
      variant-bridge solve torch -f ./wheels -c ./ch --targets nodes.yaml --write-lock pixi.lock
      variant-bridge solve torch torchvision -c ./indexed-channel --cuda 12.6 -t cuda=12.9
    """
    from variant_bridge.cli import _native
    from variant_bridge.jobs.context import Context
    from variant_bridge.jobs.solve import SolveRequest
    from variant_bridge.jobs.solve import solve as run_solve
    from variant_bridge.priority import Encoding

    channel_dirs = tuple(_channel_dir(c) for c in channels)
    request = SolveRequest(
        specs, channel_dirs, Encoding(priority), into, write_lock, installer,
        prefer_wheels=prefer_wheels, allow_mix=allow_mix,
    )  # fmt: skip
    _native.request_clean_exit()
    if targets_file is not None:
        from variant_bridge.cli._classes import solve_classes_command

        solve_classes_command(request, targets_file, sources, environment, fetch,
                              as_json=as_json, result_json=result_json)  # fmt: skip
        return
    with Context.open(sources, environment, fetch, reporter=reporter()) as ctx:
        result = run_solve(request, ctx)
        env, fetched = ctx.target.env, ctx.notes
    if as_json:
        echo_json(result_json(result, env, fetched))
    else:
        _echo(result, env, fetched)
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
