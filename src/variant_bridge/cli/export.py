"""``variant-bridge export``: a mixed conda + PyPI environment as environment.yml or pixi.toml."""

from __future__ import annotations

import contextlib
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import click

from variant_bridge.cli._output import echo_json, json_option

if TYPE_CHECKING:
    from variant_bridge.export import ExportFormat, ExportModel

__all__ = ["export"]

_FORMATS = ("environment-yml", "pixi-toml")


def _format_for(path: Path | None) -> str | None:
    if path is None:
        return None
    name = path.name.lower()
    if name in ("pixi.toml", "pyproject.toml") or name.endswith(".toml"):
        return "pixi-toml"
    if name.endswith((".yml", ".yaml")):
        return "environment-yml"
    return None


_FLAGS = {
    "targets": "--target",
    "format_": "--format",
    "extra_index_urls": "--extra-index-url",
    "output": "-o",
}


def _command_line(params: dict[str, Any]) -> str:
    """A canonical, deterministic rendering of the options given (for the file header)."""
    words = ["variant-bridge", "export"]
    for key, value in params.items():
        if key in ("as_json", "force") or value in (None, False, ()):
            continue
        flag = _FLAGS.get(key, "--" + key.replace("_", "-"))
        if value is True:
            words.append(flag)
        elif isinstance(value, tuple):
            for item in value:
                words += [flag, str(item)]
        else:
            words += [flag, str(value)]
    return shlex.join(words)


@click.command(short_help="Write the environment as environment.yml or pixi.toml.")
@click.option(
    "--prefix",
    # Not file_okay=False: detection says what is wrong with a file, in one line (exit 1).
    type=click.Path(path_type=Path),
    help="The conda prefix to export. Default: $CONDA_PREFIX.",
)
@click.option(
    "--lockfile",
    type=click.Path(path_type=Path),  # likewise: a directory is detection's error
    help="Export a pixi.lock environment instead of a prefix.",
)
@click.option(
    "--environment", "-e", metavar="NAME", help="The pixi.lock environment. Default: 'default'."
)
@click.option("--platform", metavar="SUBDIR", help="The pixi.lock platform, e.g. linux-64.")
@click.option(
    "--target",
    "-t",
    "targets",
    multiple=True,
    metavar="KEY=VALUE",
    help="Declare a fact of the bridged view instead of detecting it (cuda=12.8, ...).",
)
@click.option(
    "--format",
    "format_",
    type=click.Choice(_FORMATS),
    help="Output format. Default: from the -o/--update file name, else environment-yml.",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write to FILE (atomically) instead of stdout.",
)
@click.option("--force", is_flag=True, help="Overwrite an existing -o FILE.")
@click.option(
    "--update",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Edit an existing pixi.toml or pyproject.toml ([tool.pixi]) in place, keeping the rest.",
)
@click.option("--name", metavar="NAME", help="Environment / workspace name. Default: the prefix's.")
@click.option("--no-builds", "no_builds", is_flag=True, help="Pin name=version, not the build.")
@click.option(
    "--from-history",
    is_flag=True,
    help="Only the specs the user asked for (conda-meta/history), plus the toolkit pin.",
)
@click.option(
    "--no-host-requirements",
    "no_host_requirements",
    is_flag=True,
    help="Leave out the __cuda/__cuda_arch/... requirements the variant wheels imply.",
)
@click.option(
    "--find-links",
    "-f",
    "find_links",
    multiple=True,
    metavar="DIR|URL",
    help="Where the variant wheels can be found, to pin their URL and hash (repeatable).",
)
@click.option("--index-url", metavar="URL", help="A simple index holding the variant wheels.")
@click.option(
    "--extra-index-url",
    "extra_index_urls",
    multiple=True,
    metavar="URL",
    help="More simple indexes (repeatable).",
)
@click.option(
    "--allow-unpinned",
    is_flag=True,
    help="Export a variant wheel whose file cannot be found as name==version instead of failing.",
)
@click.option(
    "--wheels-dir",
    type=click.Path(file_okay=False, path_type=Path),
    metavar="DIR",
    help=(
        "Copy the pinned variant wheels into DIR under their non-variant filenames (same bytes, "
        "same sha256) and pin those copies, so pip and uv without wheel-variant support can "
        "install the export."
    ),
)
@json_option
def export(
    *,
    prefix: Path | None,
    lockfile: Path | None,
    environment: str | None,
    platform: str | None,
    targets: tuple[str, ...],
    format_: str | None,
    output: Path | None,
    force: bool,
    update: Path | None,
    name: str | None,
    no_builds: bool,
    from_history: bool,
    no_host_requirements: bool,
    find_links: tuple[str, ...],
    index_url: str | None,
    extra_index_urls: tuple[str, ...],
    allow_unpinned: bool,
    wheels_dir: Path | None,
    as_json: bool,
) -> None:
    """Write a conda/pixi environment that also holds (variant) wheels so that others can
    recreate it without variant-bridge: every conda package pinned, the CUDA toolkit pinned,
    each variant wheel pinned to its exact file with its sha256, and the host requirements
    those wheels imply (__cuda, __cuda_arch, ...) stated in conda's terms.

    Writes to stdout unless -o FILE is given; never overwrites a file without --force, and
    writes atomically. --update edits an existing pixi.toml or pyproject.toml in place, leaving
    everything it does not own (comments, order, other tables) exactly as it was.

    Variant wheels are pinned by their variant filenames, which only installers with
    wheel-variant support accept (uv pip install --preview-features wheel-variants); with
    --wheels-dir DIR the export pins byte-identical copies under names pip and uv accept.

    \b
    Examples:
      variant-bridge export --prefix "$CONDA_PREFIX" -o environment.yml
      variant-bridge export -f ./wheels -o share/environment.yml --wheels-dir share/wheels
      variant-bridge export --from-history --find-links ./wheels > environment.yml
      variant-bridge export --lockfile pixi.lock --format pixi-toml -o shared/pixi.toml
      variant-bridge export --prefix .pixi/envs/default --update pixi.toml
      variant-bridge export --index-url https://wheels.example/simple --update pyproject.toml
    """
    from variant_bridge import __version__
    from variant_bridge.export import (
        check_target,
        copied_wheels,
        prepare_export,
        read_manifest,
        render,
        update_manifest,
        update_manifest_text,
        write_export,
    )

    if prefix is not None and lockfile is not None:
        raise click.UsageError("--prefix and --lockfile are mutually exclusive")
    if (environment is not None or platform is not None) and lockfile is None:
        raise click.UsageError("--environment and --platform need --lockfile")
    if update is not None and output is not None:
        raise click.UsageError("--update edits FILE in place; it cannot be combined with -o")
    chosen = cast(
        "ExportFormat", format_ or _format_for(update) or _format_for(output) or "environment-yml"
    )
    if update is not None and chosen != "pixi-toml":
        raise click.UsageError("--update edits pixi manifests only (pixi.toml, pyproject.toml)")
    if output is not None and output.name == "pyproject.toml":
        raise click.UsageError(
            "to add [tool.pixi] to a pyproject.toml, use --update pyproject.toml"
        )
    # Fail before reading the environment or copying a wheel: the output target is checked (and
    # again, atomically, when written), the manifest to update is read and parsed.
    if output is not None:
        check_target(output, force=force)
    manifest = read_manifest(update) if update is not None else None

    params = click.get_current_context().params
    model = prepare_export(
        prefix=prefix,
        lockfile=lockfile,
        environment=environment,
        platform=platform,
        targets=targets,
        name=name,
        from_history=from_history,
        builds=not no_builds,
        host_requirements=not no_host_requirements,
        allow_unpinned=allow_unpinned,
        find_links=find_links,
        index_url=index_url,
        extra_index_urls=extra_index_urls,
        producer=f"variant-bridge {__version__}: {_command_line(params)}",
    )

    if update is not None and wheels_dir is not None:
        assert manifest is not None
        # A dry run: a table of the wrong type fails here, before any wheel is copied.
        update_manifest_text(manifest, model, path=str(update))

    written: str | None = None
    changed = True
    copies: contextlib.AbstractContextManager[ExportModel] = contextlib.nullcontext(model)
    if wheels_dir is not None:
        destination = update or output
        # pixi paths are relative to the manifest; stdout is taken to land in the current folder.
        copies = copied_wheels(
            model,
            wheels_dir,
            relative_to=destination.absolute().parent if destination else Path.cwd(),
            overwrite=force,
        )
    # The copies are removed again if the export cannot be written.
    with copies as model:
        notes = list(model.notes)
        if update is not None:
            result = update_manifest(update, model, text=manifest)
            changed = result.changed
            notes += result.notes
            written = str(update)
        elif output is not None:
            write_export(output, render(model, chosen), force=force)
            written = str(output)

    if as_json:
        echo_json(_summary(model, chosen, written, changed, notes))
    elif written is None:
        click.echo(render(model, chosen), nl=False)
        for note in notes:
            click.echo(f"note: {note}", err=True)
    if written is not None:
        pinned = sum(1 for p in model.pip if p.is_direct)
        verb = "updated" if update is not None else "wrote"
        if update is not None and not changed:
            verb = "left unchanged (already up to date)"
        click.echo(
            f"{verb} {written}: {len(model.dependencies)} conda dependencies, "
            f"{len(model.pip)} PyPI packages ({pinned} pinned to a file)",
            err=True,
        )
        for note in notes:
            click.echo(f"note: {note}", err=True)


def _summary(
    model: ExportModel, format_: str, written: str | None, changed: bool, notes: list[str]
) -> dict[str, Any]:
    from variant_bridge.export import environment_yml, pixi_toml

    content = (
        environment_yml.to_dict(model) if format_ == "environment-yml" else pixi_toml.to_dict(model)
    )
    return {
        "format": format_,
        "output": written,
        "changed": changed,
        "content": content,
        "host_requirements": [
            {
                "spec": h.spec,
                "rattler_spec": h.rattler_spec,
                "wheels": list(h.wheels),
                "expressible": h.expressible,
            }
            for h in model.host_requirements
        ],
        "variant_wheels": [
            {
                "name": p.name,
                "version": p.version,
                "label": p.label,
                "url": p.url,
                "sha256": p.sha256,
                "copy": p.copy,
            }
            for p in model.pip
            if p.label is not None
        ],
        "notes": notes,
    }
