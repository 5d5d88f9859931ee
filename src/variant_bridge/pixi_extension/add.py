"""``pixi variant add``: install the variant wheels chosen for a workspace environment and record
them in the manifest (:func:`variant_bridge.jobs.workspace.add`)."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any

import click

from variant_bridge.cli._fetching import echo_notes, reporter
from variant_bridge.cli._options import (
    environment_options,
    fetch_options,
    no_deps_option,
    remove_leftovers_option,
    source_options,
)
from variant_bridge.cli._output import echo_json, json_option

if TYPE_CHECKING:
    from variant_bridge.jobs.specs import EnvironmentSpec, FetchSpec, SourceSpec
    from variant_bridge.jobs.workspace import AddResult

__all__ = ["add"]


@click.command(short_help="Install variant wheels into the environment and record them.")
@click.argument("packages", nargs=-1, required=True, metavar="<PACKAGE>...")
@source_options()
@no_deps_option
@environment_options()
@click.option(
    "--feature",
    metavar="<FEATURE>",
    help="The feature whose tables record the wheels. Default: the top level for 'default'; "
    "else the environment's feature of its own name, or its only feature.",
)
@click.option(
    "--no-copy",
    "no_copy",
    is_flag=True,
    help="Record the variant files themselves (URL or path, with sha256) instead of copies "
    "under plain wheel names in variant-wheels/ (pixi's installer then needs wheel-variant "
    "support).",
)
@click.option(
    "--installer",
    type=click.Choice(["uv", "pip"]),
    help="Which installer runs. Default: uv when available, else pip.",
)
@remove_leftovers_option
@fetch_options(hashes=True)
@json_option
def add(
    *,
    packages: tuple[str, ...],
    sources: SourceSpec,
    no_deps: bool,
    environment: EnvironmentSpec,
    feature: str | None,
    no_copy: bool,
    installer: str | None,
    remove_leftovers: bool,
    fetch: FetchSpec,
    as_json: bool,
) -> None:
    """Choose the wheels for the whole dependency tree that agree with the environment (its
    solved cuda-version, this machine's driver and GPU, or what the manifest declares where the
    machine has none), install them into .pixi/envs/<ENVIRONMENT>, and record them in the
    manifest: each variant wheel pinned to its file (a copy in variant-wheels/ beside the
    manifest under a name pixi's installer accepts, or with --no-copy the file itself), the
    other wheels by version, the CUDA toolkit pinned, the indexes given as extra indexes and the
    driver floor declared. Entries you wrote are never changed. pixi.lock is not edited: the
    next `pixi install` re-locks from the manifest and installs the same files. The CUDA wheels
    replaced builds required and nothing requires any more are listed with the command that
    removes them (--remove-leftovers removes them, as `variant-bridge install` does).

    \b
    Examples:
      pixi variant add torch --index-url https://download.pytorch.org/whl/variant/
      pixi variant add gpulib -f ./wheels -e cuda
      pixi variant add gpulib -f ./wheels --no-copy --json
    """
    from variant_bridge.jobs.context import Context
    from variant_bridge.jobs.select import parse_requests
    from variant_bridge.jobs.workspace import add as run_add
    from variant_bridge.jobs.workspace import lock_advice
    from variant_bridge.pixi_extension._adapt import WORKSPACE_ENVIRONMENT

    env = click.get_current_context().meta[WORKSPACE_ENVIRONMENT]
    chosen_feature = env.feature(feature)  # before anything is installed
    requests = parse_requests(packages)
    words = shlex.join(["pixi", "variant", "add", *packages])
    with Context.open(sources, environment, fetch, reporter=reporter()) as ctx:
        result = run_add(
            requests,
            ctx,
            env,
            environment,
            feature=chosen_feature,
            deps=not no_deps,
            installer=installer,  # type: ignore[arg-type]  # click.Choice(["uv", "pip"])
            no_copy=no_copy,
            remove_leftovers=remove_leftovers,
            producer=words,
        )
        notes = [*result.recorded.notes, *ctx.notes]
    advice = lock_advice(result, env)
    if as_json:
        echo_json(_json(result, env, advice, notes))
    else:
        _echo(result)
        if not fetch.quiet:
            echo_notes(notes)
        click.echo(advice, err=True)


def _table(feature: str | None) -> str:
    return "[pypi-dependencies]" if feature is None else f"[feature.{feature}.pypi-dependencies]"


def _echo(result: AddResult) -> None:
    from variant_bridge.cli.export import _wrote
    from variant_bridge.cli.install import _echo_installed, _echo_leftovers, _echo_replacements
    from variant_bridge.cli.select import _reason, _summary, _warn_duplicates

    target, choices = result.target, result.prepared.choices
    click.echo(_summary(target))
    for choice in choices:
        chosen = choice.chosen
        what = str(chosen.filename) if chosen is not None else "kept as installed"
        click.echo(f"  {choice.files.project} {choice.files.version}: {what}")
        click.echo(f"      {_reason(choice)}")
    _warn_duplicates(choices, target)
    _echo_replacements(result.prepared.replacements, dry_run=False)
    _echo_installed(result.installed, target, kept=sum(c.installed is not None for c in choices))
    again = "run `pixi variant add` again with --remove-leftovers"
    _echo_leftovers(result.leftovers, dry_run=False, again=again)
    click.echo(f"Recorded in {_table(result.feature)}: " + _wrote(result.recorded, updated=True))


def _json(result: AddResult, env: Any, advice: str, notes: list[str]) -> dict[str, Any]:
    from variant_bridge.cli.export import _summary as export_json
    from variant_bridge.cli.install import _install_json

    return {
        "manifest": str(env.workspace.manifest),
        "environment": env.name,
        "prefix": str(env.prefix),
        "feature": result.feature,
        "install": _install_json(
            result.prepared, result.installed, result.target, result.leftovers
        ),
        "recorded": export_json(result.recorded),
        "lockfile": {"path": str(env.lockfile), "changed": False, "advice": advice},
        "notes": notes,
    }
