"""``variant-bridge export``: a mixed conda + PyPI environment as environment.yml, pixi.toml or
pylock.toml (parse the options, run :func:`variant_bridge.jobs.export.run_export`, print;
docs/share.md)."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from variant_bridge._version import __version__
from variant_bridge.cli._fetching import echo_notes, reporter
from variant_bridge.cli._options import (
    environment_options,
    fetch_options,
    output_option,
    source_options,
    targets_option,
)
from variant_bridge.cli._output import echo_json, json_option, variant_wheels_json

if TYPE_CHECKING:
    from variant_bridge.export import ExportFormat
    from variant_bridge.jobs.export import ExportResult
    from variant_bridge.jobs.specs import EnvironmentSpec, FetchSpec, SourceSpec

__all__ = ["export"]

# export.FORMATS and PIN_MODES, not imported: the CLI loads the export stack only when the
# command runs.
_FORMATS = ("environment-yml", "pixi-toml", "pylock")
_PIN_MODES = ("exact", "version", "none")

# How the file was made, not what it holds: left out of the header (a cache path is this machine's).
_NOT_RECORDED = frozenset({"as_json", "force", "cache_dir", "no_cache", "quiet", "verbose"})


def _command_line(ctx: click.Context) -> str:
    """A canonical, deterministic rendering of the options given (for the file header): in the
    order ``--help`` lists them, defaults left out."""
    words = ["variant-bridge", "export", *ctx.params.get("packages", ())]
    for param in ctx.command.params:
        value = ctx.params.get(str(param.name))
        if (
            not isinstance(param, click.Option)
            or param.name in _NOT_RECORDED
            or value in (None, False, (), param.default)
        ):
            continue
        flag = max(param.opts, key=len)  # the long spelling
        if value is True:
            words.append(flag)
        elif isinstance(value, tuple):
            for item in value:
                words += [flag, str(item)]
        else:
            words += [flag, str(value)]
    return shlex.join(words)


@click.command(short_help="Write the environment as environment.yml, pixi.toml or pylock.toml.")
@click.argument("packages", nargs=-1, metavar="[PKG[==VER]...]")
@environment_options(cuda_policy=False, python=True)
@targets_option(
    what="choose PKG... for each class and write one file per class (-o DIR) or one pixi "
    "manifest with a platform per class (-o pixi.toml)"
)
@click.option(
    "--format",
    "format_",
    type=click.Choice(_FORMATS),
    help=(
        "Output format. Default: from the -o/--update file name (pylock.toml, pylock.*.toml: "
        "pylock; other *.toml: pixi-toml), else environment-yml."
    ),
)
@output_option(
    metavar="FILE|DIR",
    what="the file written (atomically; never overwritten without --force), or with --targets "
    "the folder of the classes' files. Default: stdout",
    directory=None,
)
@click.option("--force", is_flag=True, help="Overwrite an existing -o FILE.")
@click.option(
    "--update",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Edit an existing pixi.toml or pyproject.toml ([tool.pixi]) in place, keeping the rest.",
)
@click.option("--name", metavar="NAME", help="Environment / workspace name. Default: the prefix's.")
@click.option(
    "--pin",
    type=click.Choice(_PIN_MODES),
    help=(
        "How the packages the export writes are pinned: exact (version and build, the "
        "default), version (==version) or none (the name). Variant wheels always name their "
        "file, the CUDA toolkit its major.minor; with --update, entries you wrote are never "
        "changed."
    ),
)
@click.option("--no-builds", "no_builds", is_flag=True, help="Pin name=version: --pin version.")
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
    "--strict-host-requirements",
    "strict_host_requirements",
    is_flag=True,
    help=(
        "Write every host requirement as a requirement, also those the receiving client cannot "
        "check by itself: environment.yml then needs the conda plugin that provides "
        "__cuda_arch (nvidia-virtual-packages), and a pixi export fails when no platform entry "
        "can state one. Default: those go into the header and stderr."
    ),
)
@source_options()
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
        "install the export. Default with -o/--update: variant-wheels/ beside the file."
    ),
)
@click.option(
    "--pin-filenames",
    "--no-copy",
    "pin_filenames",
    is_flag=True,
    help=(
        "Pin the variant wheels by their own variant files, URL or path with its sha256 (no "
        "copies), which only installers with wheel-variant support accept. --no-copy is the "
        "same."
    ),
)
@fetch_options()
@json_option
def export(
    *,
    packages: tuple[str, ...],
    environment: EnvironmentSpec,
    targets_file: Path | None,
    fetch: FetchSpec,
    sources: SourceSpec,
    format_: ExportFormat | None,
    output: Path | None,
    force: bool,
    update: Path | None,
    name: str | None,
    pin: str | None,
    no_builds: bool,
    from_history: bool,
    no_host_requirements: bool,
    strict_host_requirements: bool,
    allow_unpinned: bool,
    wheels_dir: Path | None,
    pin_filenames: bool,
    as_json: bool,
) -> None:
    """Write a conda/pixi environment that also holds (variant) wheels so that others can
    recreate it without variant-bridge: every conda package pinned, the CUDA toolkit pinned,
    each variant wheel pinned to its exact file with its sha256, and the host requirements
    those wheels imply (__cuda, __cuda_arch, ...) stated in conda's terms. --format pylock
    writes the PyPI part as a PEP 751 pylock.toml.

    Writes to stdout unless -o FILE is given; never overwrites a file without --force, and
    writes atomically. --update edits an existing pixi.toml or pyproject.toml in place: it
    changes only the entries it marked as its own (# variant-bridge) and leaves every line you
    wrote exactly as it was, with a note where it would want another value.

    Written to a file, the variant wheels are copied byte for byte into variant-wheels/ beside
    it under names pip 23 and uv accept, and pinned there by relative paths; --pin-filenames
    pins the variant files themselves (only installers with wheel-variant support accept them),
    --wheels-dir DIR copies elsewhere. Wheels are looked up in --find-links/--index-url in the
    order select consults them (uv's), and a wheel fetched to compare it is the file copied.

    \b
    Examples:
      variant-bridge export --prefix "$CONDA_PREFIX" -o environment.yml
      variant-bridge export -f ./wheels -o share/environment.yml --wheels-dir share/wheels
      variant-bridge export --from-history --find-links ./wheels > environment.yml
      variant-bridge export --lockfile pixi.lock --format pixi-toml -o shared/pixi.toml
      variant-bridge export --prefix .pixi/envs/default --update pixi.toml
      variant-bridge export --index-url https://wheels.example/simple --update pyproject.toml
      variant-bridge export -f ./wheels -o pylock.toml
      variant-bridge export torch --targets nodes.yaml --python 3.12 -f ./wheels -o cluster/
    """
    # Here, not at the top: every command module is imported when the CLI starts.
    from variant_bridge.export import format_for
    from variant_bridge.jobs.context import Context
    from variant_bridge.jobs.export import ExportOutput, ExportRequest, run_export

    if targets_file is not None or packages:
        from variant_bridge.cli._classes import export_classes_command

        given = {"--update": update, "--wheels-dir": wheels_dir, "--from-history": from_history}
        export_classes_command(
            packages, targets_file, sources, environment, fetch,
            output=output, format_=format_, given=given, force=force,
            pin_filenames=pin_filenames, as_json=as_json,
            request=ExportRequest(
                name=name, pin=pin or ("version" if no_builds else "exact"),  # type: ignore[arg-type]
                host_requirements=not no_host_requirements,
                strict_host_requirements=strict_host_requirements, allow_unpinned=allow_unpinned,
                producer=f"variant-bridge {__version__}: "
                + _command_line(click.get_current_context()),
            ),
        )  # fmt: skip
        return
    if environment.platform is not None and environment.lockfile is None:
        raise click.UsageError("--platform needs --lockfile (a prefix's platform is its records')")
    if no_host_requirements and strict_host_requirements:
        raise click.UsageError("--no-host-requirements contradicts --strict-host-requirements")
    if no_builds and pin not in (None, "version"):
        raise click.UsageError(f"--no-builds means --pin version; it contradicts --pin {pin}")
    pin_mode = pin or ("version" if no_builds else "exact")
    chosen = format_ or format_for(update) or format_for(output) or "environment-yml"
    # Both checked before the environment is read (contradictions: usage errors).
    destination = ExportOutput(chosen, output, update, force, wheels_dir, pin_filenames)
    request = ExportRequest(
        name=name,
        from_history=from_history,
        pin=pin_mode,  # type: ignore[arg-type]  # click.Choice(_PIN_MODES)
        host_requirements=not no_host_requirements,
        strict_host_requirements=strict_host_requirements,
        allow_unpinned=allow_unpinned,
        producer=f"variant-bridge {__version__}: " + _command_line(click.get_current_context()),
    )
    with Context.open(sources, environment, fetch, reporter=reporter()) as ctx:
        result = run_export(request, destination, ctx)
        notes = ctx.notes
    if as_json:
        echo_json(_summary(result))
    elif result.written is None:
        click.echo(result.text, nl=False)
    if result.written is not None:
        click.echo(_wrote(result, updated=update is not None), err=True)
    if (result.written is not None or not as_json) and not fetch.quiet:
        echo_notes([*result.notes, *notes])


def _wrote(result: ExportResult, *, updated: bool) -> str:
    model = result.model
    pinned = sum(1 for p in model.pip if p.is_direct)
    verb = "updated" if updated else "wrote"
    if updated and not result.changed:
        verb = "left unchanged (already up to date)"
    conda = "" if result.format == "pylock" else f"{len(model.dependencies)} conda dependencies, "
    pypi = f"{len(model.pip)} PyPI packages ({pinned} pinned to a file)"
    return f"{verb} {result.written}: {conda}{pypi}"


def _summary(result: ExportResult) -> dict[str, Any]:
    from variant_bridge.export import to_dict

    model = result.model
    return {
        "format": result.format,
        "output": None if result.written is None else str(result.written),
        "changed": result.changed,
        "content": to_dict(model, result.format),
        "host_requirements": [
            {
                "spec": h.spec,
                "rattler_spec": h.rattler_spec,
                "wheels": list(h.wheels),
                "expressible": h.expressible,
                "plugin": h.plugin,
            }
            for h in model.host_requirements
        ],
        "variant_wheels": variant_wheels_json(model.pip),
        "notes": list(result.notes),
    }
