"""``variant-bridge install``: the wheels ``select`` chooses for the whole tree, with uv or pip."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click

from variant_bridge.cli._environment import EnvironmentOptions, environment_options
from variant_bridge.cli._output import echo_json, json_option
from variant_bridge.cli.select import (
    _choose,
    _downloads,
    _reason,
    _source_options,
    _SourceOptions,
    _summary,
    _warn_duplicates,
    choice_json,
)

if TYPE_CHECKING:
    from variant_bridge.install import InstallResult
    from variant_bridge.jobs.select import PackageChoice, Target

__all__ = ["install"]


@click.command(short_help="Install the variant wheels select chooses, with uv or pip.")
@click.argument("packages", nargs=-1, required=True, metavar="PKG[==VER]...")
@_source_options
@environment_options()
@click.option(
    "--installer",
    type=click.Choice(["uv", "pip"]),
    help="Which installer runs. Default: uv when available, else pip.",
)
@click.option(
    "--dry-run", is_flag=True, help="Choose, download and hash-check, but install nothing."
)
@json_option
def install(
    *,
    packages: tuple[str, ...],
    find_links: tuple[str, ...],
    index_url: str | None,
    extra_index_urls: tuple[str, ...],
    python: str | None,
    index_strategy: str,
    no_deps: bool,
    env_options: EnvironmentOptions,
    installer: str | None,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Install exactly the wheels `select` chooses for the whole dependency tree into the target
    interpreter (the prefix's python by default), each hash-checked against its index first: a
    mismatch installs nothing. The installer (uv or pip) resolves nothing: it gets only those
    files, offline, each pinned by hash, without dependencies. Files already installed exactly
    as chosen are left alone, and a dependency already installed that satisfies the tree is
    kept. Every installed variant's label is verified afterwards. Warns when a chosen wheel
    requires nvidia-* wheels whose libraries the conda prefix already has.

    \b
    Examples:
      variant-bridge install torch --index-url https://download.pytorch.org/whl/variant/
      variant-bridge install mypkg -f ./wheels --prefix "$CONDA_PREFIX" --installer pip
      variant-bridge install mypkg -f ./wheels --dry-run --json
    """
    from variant_bridge.install import install as run_install
    from variant_bridge.jobs.install import plan

    # The chosen remote wheels are downloaded (hash-checked) once, into `downloads`: first to read
    # their requirements for the tree, then to install them.
    downloads = _downloads()
    given = _SourceOptions(find_links, index_url, extra_index_urls, python, index_strategy, no_deps)
    chosen = _choose(
        packages, env_options, given, downloads, fetch_chosen=True, read_installed=not dry_run
    )
    target, choices = chosen.target, chosen.choices
    install_plan = plan(
        choices,
        python=target.python,
        installer=installer,  # type: ignore[arg-type]
        platform=target.env.platform,
    )
    if not as_json:
        click.echo(_summary(target))
        for choice in choices:
            click.echo(f"  {choice.files.project} {choice.files.version}: {_file_or_kept(choice)}")
            click.echo(f"      {_reason(choice)}")
    _warn_duplicates(choices)
    result = run_install(install_plan, downloads=downloads, dry_run=dry_run, state=chosen.state)
    if as_json:
        echo_json(_install_json(choices, result, target))
    else:
        _echo_installed(result, target, kept=sum(c.installed is not None for c in choices))
        if dry_run:
            _echo_dry_run(choices, result.hashes)
    sys.stdout.flush()


def _file_or_kept(choice: PackageChoice) -> str:
    chosen = choice.chosen
    return str(chosen.filename) if chosen is not None else "kept as installed"


def _install_json(
    choices: Sequence[PackageChoice], result: InstallResult, target: Target
) -> dict[str, Any]:
    hashes = dict(result.hashes)
    return {
        "installer": result.plan.installer,
        "python": target.python.executable,
        "dry_run": result.dry_run,
        "command": list(result.command),
        "installed": list(result.installed),
        "unchanged": list(result.unchanged),
        "packages": [
            {
                **choice_json(c),
                "sha256_checked": hashes.get(c.selected.name) if c.selected else None,
            }
            for c in choices
        ],
    }


def _echo_installed(result: InstallResult, target: Target, *, kept: int) -> None:
    where = target.python.executable
    installer = result.plan.installer
    if result.dry_run:
        names = ", ".join(result.installed)
        click.echo(f"Would install with {installer} into {where}: {names}")
        return
    if result.installed:
        click.echo(f"Installed with {installer} into {where}: {', '.join(result.installed)}")
    if result.unchanged:
        click.echo(f"Already installed exactly as chosen: {', '.join(result.unchanged)}")
    if kept:
        click.echo(f"Kept as installed: {kept} dependenc{'y' if kept == 1 else 'ies'}")
    if not result.installed:
        click.echo(f"Nothing to install: {where} already has the whole tree.")


def _echo_dry_run(choices: Sequence[PackageChoice], hashes: Sequence[tuple[str, str]]) -> None:
    """Each chosen file: where it comes from, its checked sha256."""
    checked = dict(hashes)
    for choice in choices:
        candidate = choice.selected
        if candidate is None:
            continue  # kept as installed
        said = "matches the index" if candidate.sha256 else "(the source advertises none)"
        click.echo(f"  {candidate.name} from {candidate.url}")
        click.echo(f"      sha256 {checked[candidate.name]} {said}")
    click.echo("Nothing was installed (--dry-run).")
