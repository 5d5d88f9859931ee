"""``variant-bridge install``: the wheels ``select`` chooses for the whole tree, with uv or pip."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click

from variant_bridge.cli._fetching import echo_notes, reporter
from variant_bridge.cli._options import (
    allow_mix_option,
    environment_options,
    fetch_options,
    no_deps_option,
    remove_leftovers_option,
    source_options,
)
from variant_bridge.cli._output import echo_json, json_option
from variant_bridge.cli.select import _reason, _summary, _warn_duplicates, choice_json

if TYPE_CHECKING:
    from variant_bridge.indexes.trust import VerifiedFile
    from variant_bridge.install import InstallResult
    from variant_bridge.jobs.install import Leftovers, PreparedInstall, Replacement
    from variant_bridge.jobs.select import PackageChoice
    from variant_bridge.jobs.specs import EnvironmentSpec, FetchSpec, SourceSpec
    from variant_bridge.jobs.target import Target

__all__ = ["install"]


@click.command(short_help="Install the variant wheels select chooses, with uv or pip.")
@click.argument("packages", nargs=-1, required=True, metavar="PKG[==VER]...")
@source_options()
@no_deps_option
@allow_mix_option
@environment_options(python=True)
@click.option(
    "--installer",
    type=click.Choice(["uv", "pip"]),
    help="Which installer runs. Default: uv when available, else pip.",
)
@click.option(
    "--dry-run", is_flag=True, help="Choose, download and hash-check, but install nothing."
)
@remove_leftovers_option
@fetch_options(hashes=True)
@json_option
def install(
    *,
    packages: tuple[str, ...],
    sources: SourceSpec,
    no_deps: bool,
    allow_mix: bool,
    environment: EnvironmentSpec,
    fetch: FetchSpec,
    installer: str | None,
    dry_run: bool,
    remove_leftovers: bool,
    as_json: bool,
) -> None:
    """Install exactly the wheels `select` chooses for the whole dependency tree into the target
    interpreter (the prefix's python by default). Every file, dependencies included, is checked
    first: against its index's sha256 (a find-links file is hashed and pinned; a remote file
    whose index lists none is refused unless --no-require-hashes), and a variant's own
    variant.json against the index's; any failure installs nothing. The installer (uv or pip)
    resolves nothing: it gets only those files, offline, each pinned by hash, without
    dependencies. Files already installed exactly as chosen are left alone, and a dependency
    already installed that satisfies the tree is kept. Every installed variant's label is
    verified afterwards. Warns when a chosen wheel requires nvidia-* wheels whose libraries the
    conda prefix already has. An installed variant replaced by another build (another label,
    or a CPU build) is said per package before anything runs (and by --dry-run); the CUDA
    wheels the replaced builds required and nothing requires any more are listed afterwards
    with the command that removes them (--remove-leftovers removes them).

    \b
    Examples:
      variant-bridge install torch --index-url https://download.pytorch.org/whl/variant/
      variant-bridge install mypkg -f ./wheels --prefix "$CONDA_PREFIX" --installer pip
      variant-bridge install mypkg -f ./wheels --dry-run --json
    """
    from variant_bridge.jobs.context import Context
    from variant_bridge.jobs.install import (
        leftovers,
        prepare_install,
        run_install,
    )
    from variant_bridge.jobs.install import remove_leftovers as remove
    from variant_bridge.jobs.select import parse_requests

    requests = parse_requests(packages)
    with Context.open(sources, environment, fetch, reporter=reporter()) as ctx:
        # The chosen remote wheels are downloaded (hash-checked) once, into the context's
        # downloads: first to read their requirements for the tree, then to install them.
        prepared = prepare_install(
            requests,
            ctx,
            deps=not no_deps,
            installer=installer,  # type: ignore[arg-type]  # click.Choice(["uv", "pip"])
            dry_run=dry_run,
            allow_mix=allow_mix,
        )
        target, choices = ctx.target, prepared.choices
        if not as_json:
            click.echo(_summary(target))
            for choice in choices:
                click.echo(
                    f"  {choice.files.project} {choice.files.version}: {_file_or_kept(choice)}"
                )
                click.echo(f"      {_reason(choice)}")
        _warn_duplicates(choices, target)
        _echo_replacements(prepared.replacements, dry_run=dry_run)
        result = run_install(prepared, ctx, dry_run=dry_run)
        left = leftovers(prepared, result, ctx, every=remove_leftovers)
        if remove_leftovers and not dry_run:
            left = remove(prepared, left, result)
        echo_notes(ctx.notes)
    if as_json:
        echo_json(_install_json(prepared, result, target, left))
    else:
        _echo_installed(result, target, kept=sum(c.installed is not None for c in choices))
        _echo_leftovers(left, dry_run=dry_run)
        if dry_run:
            _echo_dry_run(result.verified)
    sys.stdout.flush()


def _echo_replacements(replaced: Sequence[Replacement], *, dry_run: bool) -> None:
    """Each installed variant the install replaces, before it runs: a warning when the new build
    is a CPU build (a downgrade), else a note."""
    sys.stdout.flush()
    for one in replaced:
        kind = "warning" if one.cpu else "note"
        click.echo(f"{kind}: {one.describe(dry_run=dry_run)}", err=True)


def _echo_leftovers(
    left: Leftovers, *, dry_run: bool, again: str = "install again with --remove-leftovers"
) -> None:
    """What the install left (or removed); *again*: how the same command removes them."""
    if not left.wheels:
        return
    names = ", ".join(f"{d.name} {d.version}" for d in left.wheels)
    if left.removed:
        click.echo(f"Removed what the replaced builds required and nothing requires now: {names}")
        return
    verb = "would require" if dry_run else "requires"
    click.echo(f"Left behind (the replaced builds required them, nothing {verb} them now): {names}")
    click.echo(f"  remove them with: {left.shell}  (or {again})")


def _file_or_kept(choice: PackageChoice) -> str:
    chosen = choice.chosen
    return str(chosen.filename) if chosen is not None else "kept as installed"


def _install_json(
    prepared: PreparedInstall, result: InstallResult, target: Target, left: Leftovers
) -> dict[str, Any]:
    choices = prepared.choices
    verified = {v.candidate.name: v for v in result.verified}

    def checks(choice: PackageChoice) -> dict[str, Any]:
        # sha256: of the file installed; sha256_checked: whether it was compared with a hash
        # fixed before it was fetched (false only with --no-require-hashes); both null for a
        # dependency kept as installed (no file).
        file = verified.get(choice.selected.name) if choice.selected is not None else None
        if file is None:
            return {"sha256": None, "sha256_checked": None}
        return {"sha256": file.sha256, "sha256_checked": file.checked}

    return {
        "installer": result.plan.installer,
        "python": target.python.executable,
        "dry_run": result.dry_run,
        "command": list(result.command),
        "installed": list(result.installed),
        "unchanged": list(result.unchanged),
        "packages": [{**choice_json(c), **checks(c)} for c in choices],
        # Installed variants replaced by another build (another label, or a CPU build).
        "replaces": [
            {
                "package": r.name,
                "installed": {"version": r.installed.version, "label": r.installed.variant_label},
                "chosen": {"version": r.version, "label": r.label, "cpu": r.cpu},
                "message": str(r),
            }
            for r in prepared.replacements
        ],
        # CUDA wheels the replaced builds required and nothing requires after the install.
        "leftovers": {
            "wheels": [{"name": d.name, "version": d.version} for d in left.wheels],
            "command": list(left.command),
            "removed": left.removed,
        },
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


def _echo_dry_run(verified: Sequence[VerifiedFile]) -> None:
    """Each chosen file: where it comes from, its sha256 and how it was checked."""
    for file in verified:
        candidate = file.candidate
        if not file.checked:
            said = "(unverified: the index lists none)"
        elif candidate.url.startswith("file:"):
            said = "(hashed here and pinned)"
        else:
            said = "matches the index"
        click.echo(f"  {candidate.name} from {candidate.url}")
        click.echo(f"      sha256 {file.sha256} {said}")
    click.echo("Nothing was installed (--dry-run).")
