"""``variant-bridge matrix``: one build matrix, the conda and the wheel files it needs."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

import click

from variant_bridge.cli._output import echo_json, json_option
from variant_bridge.errors import VariantBridgeError

if TYPE_CHECKING:
    from variant_bridge.jobs.matrix import MatrixResult

__all__ = ["matrix"]

# jobs.matrix.ARTIFACTS, not imported: the CLI loads the job only when the command runs.
_ARTIFACTS = (
    "variants-yaml",
    "recipe",
    "pyproject",
    "make-variant",
    "scikit-build",
    "variants-json",
    "matrix",
)


def _echo_report(result: MatrixResult) -> None:
    matrix, order = result.matrix, result.order
    name = " ".join(x for x in (matrix.name, matrix.version) if x) or "the matrix"
    click.echo(f"{name}: {len(matrix.builds)} builds for {matrix.platform} (from {matrix.source})")
    rocm = any(b.rocm for b in matrix.builds)
    rows = [("label", "cuda", "driver", "sm", *(("rocm",) if rocm else ()), "x86-64", "glibc",
             "build#")]  # fmt: skip
    for b in matrix.builds:
        gpus = f" ({len(b.gfx)} GPUs)" if b.gfx else ""
        amd = f"{b.rocm[0]}.{b.rocm[1]}{gpus}" if b.rocm else "-"
        rows.append(
            (
                b.label,
                str(b.cuda) if b.cuda else "-" if b.rocm else "CPU",
                str(b.driver) if b.driver else "-",
                b.archs.cmake() if b.archs else "-",
                *((amd,) if rocm else ()),
                f"v{b.x86_64_level}" if b.x86_64_level else "-",
                f"{b.glibc[0]}.{b.glibc[1]}" if b.glibc else "-",
                str(order.numbers[b.label]),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        click.echo(
            "  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        )
    ranked = f"{order.machines} machines ranked"
    click.echo(f"preference, least to most preferred ({ranked}): {', '.join(order.order)}")
    for family, labels in order.families:
        click.echo(f"  {family}, a build family of its own: {', '.join(labels)}")
    for conflict in order.conflicts:
        click.echo(
            f"CONFLICT {conflict.first} / {conflict.second}: no single build number orders them: "
            f"{conflict.first} first on {conflict.first_wins_on}; {conflict.second} first on "
            f"{conflict.second_wins_on}"
        )
    for note in result.notes:
        click.echo(f"note: {note}")


@click.command(short_help="Generate conda variants and wheel variant files from one matrix.")
@click.argument("declaration", required=False, type=click.Path(path_type=Path), metavar="[FILE]")
@click.option(
    "--from-conda",
    multiple=True,
    type=click.Path(path_type=Path),
    metavar="PATH",
    help=(
        "Derive the matrix from the conda side: a variants.yaml or conda_build_config.yaml, "
        ".ci_support/*.yaml files or their folder, a recipe.yaml, built packages; repeatable."
    ),
)
@click.option(
    "--from-wheels",
    metavar="DIR|FILE|URL",
    help="Derive the matrix from the wheel side: wheels folder, *-variants.json, declaration.",
)
@click.option(
    "--from-pinning", type=click.Path(path_type=Path), metavar="FILE",
    help=(
        "Derive the matrix from conda-forge's global pinning (conda-forge-pinning's "
        "conda_build_config.yaml): its CUDA axis and python, evaluated with CF_CUDA_ENABLED=True."
    ),
)  # fmt: skip
@click.option(
    "--migration", "migrations", multiple=True, type=click.Path(path_type=Path), metavar="FILE",
    help="With --from-pinning: a conda-forge migration to apply (cuda130.yaml); repeatable.",
)  # fmt: skip
@click.option(
    "--from-dfg", type=click.Path(path_type=Path), metavar="FILE",
    help=(
        "Derive the matrix from a RAPIDS dependency-file-generator dependencies.yaml: a files "
        "entry's cuda and arch axes, its Pythons and sysroot glibc."
    ),
)  # fmt: skip
@click.option(
    "--file-key", metavar="KEY",
    help="With --from-dfg: the files entry (default: the one whose matrix has a cuda axis).",
)  # fmt: skip
@click.option("--project", metavar="NAME", help="The project name (and the wheels' project).")
@click.option("--version", "version", metavar="VERSION", help="The release version.")
@click.option(
    "--arch-list",
    "arch_lists",
    multiple=True,
    metavar="[PLATFORM,KEY=VALUE:][CUDA=]LIST",
    help="With --from-conda/-pinning/-dfg: the CUDA architectures per CUDA version (as for check).",
)
@click.option(
    "--lower-bound",
    type=click.Choice(("toolkit", "major")),
    help=(
        "Each CUDA build's driver floor (cuda_version_lower_bound): its toolkit (12.6) or its "
        "major (12.0). Default: the matrix's lower-bound key, else toolkit."
    ),
)
@click.option(
    "--providers",
    type=click.Choice(("upstream", "bridge")),
    help=(
        "The variant providers the wheels name: upstream (nvidia-variant-provider, ...) or "
        "bridge (variant-bridge's plugins; make-variant --no-isolation validates offline). "
        "Default: the matrix's providers key, else upstream."
    ),
)
@click.option(
    "--plain-wheel",
    default="build/{label}/*.whl",
    show_default=True,
    metavar="PATTERN",
    help="Where each build's plain wheel is, for the make-variant lines ({label} is replaced).",
)
@click.option(
    "--emit",
    type=click.Choice(_ARTIFACTS),
    help="Print one generated file instead of the report.",
)
@click.option(
    "-o",
    "--output-dir",
    type=click.Path(path_type=Path),
    metavar="DIR",
    help="Write every generated file into DIR.",
)
@click.option("--force", is_flag=True, help="With -o: replace files that have other content.")
@click.option(
    "--platform", default="linux-64", show_default=True, metavar="SUBDIR",
    help="The conda platform (with --from-conda: what selectors are evaluated for).",
)  # fmt: skip
@json_option
def matrix(
    *,
    declaration: Path | None,
    from_conda: tuple[Path, ...],
    from_wheels: str | None,
    from_pinning: Path | None,
    migrations: tuple[Path, ...],
    from_dfg: Path | None,
    file_key: str | None,
    project: str | None,
    version: str | None,
    arch_lists: tuple[str, ...],
    lower_bound: str | None,
    providers: str | None,
    plain_wheel: str,
    emit: str | None,
    output_dir: Path | None,
    force: bool,
    platform: str,
    as_json: bool,
) -> None:
    """Read one build matrix (FILE: a pyproject.toml with [tool.variant-bridge.matrix], or a
    standalone matrix TOML; default ./pyproject.toml) or derive it from one side, then print
    the builds, their conda build numbers and the label orders no build number can express, or
    the files both ecosystems need: rattler-build variants.yaml and recipe requirements, the
    pyproject [variant] table, make-variant lines, scikit-build-core overrides, the expected
    *-variants.json.

    \b
    Examples:
      variant-bridge matrix
      variant-bridge matrix pyproject.toml --emit variants-yaml > recipe/variants.yaml
      variant-bridge matrix -o generated/
      variant-bridge matrix --from-conda .ci_support/ --emit matrix
      variant-bridge matrix --from-wheels dist/ --emit variants-yaml
      variant-bridge matrix --from-pinning conda_build_config.yaml \\
          --migration migrations/cuda130.yaml --arch-list "13.0=75-real;80-real;90;100;120"
      variant-bridge matrix --from-dfg dependencies.yaml --file-key all
    """
    from variant_bridge.jobs.matrix import MatrixRequest, report_json, run_matrix, write_artifacts

    if emit and as_json:
        raise click.UsageError("--emit prints a file; --json prints the report: choose one.")
    if force and output_dir is None:
        raise click.UsageError("--force only applies with -o/--output-dir.")
    if declaration is None and not (from_conda or from_wheels or from_pinning or from_dfg):
        declaration = Path("pyproject.toml")
    request = MatrixRequest(
        declaration=declaration, from_conda=from_conda, from_wheels=from_wheels,
        from_pinning=from_pinning, migrations=migrations, from_dfg=from_dfg, file_key=file_key,
        project=project,
        version=version, arch_lists=arch_lists, lower_bound=lower_bound,  # type: ignore[arg-type]
        providers=providers, platform=platform, plain_wheel=plain_wheel,  # type: ignore[arg-type]
    )  # fmt: skip
    try:
        with contextlib.ExitStack() as command:
            downloads = None
            if from_wheels:  # a folder or index of wheels: read through one transport
                from variant_bridge.cli._fetching import reporter
                from variant_bridge.jobs.context import open_downloads
                from variant_bridge.jobs.specs import FetchSpec

                downloads = command.enter_context(
                    open_downloads(FetchSpec(no_cache=True), reporter())
                )
            result = run_matrix(request, downloads)
        written = write_artifacts(result, output_dir, force=force) if output_dir else []
    except VariantBridgeError as e:
        if as_json:  # a failure is a JSON error object too (the error: line goes to stderr)
            message = " ".join(str(e).split()) or type(e).__name__
            echo_json({"ok": False, "error": {"type": type(e).__name__, "message": message}})
        raise
    if emit is not None:
        if emit not in result.artifacts:
            from variant_bridge.errors import ReleaseInputError

            raise ReleaseInputError(f"no {emit} for this matrix: {'; '.join(result.notes)}")
        click.echo(result.artifacts[emit][1], nl=False)
    elif as_json:
        data = {"ok": True, **report_json(result, request)}
        data["written"] = [str(p) for p in written]
        echo_json(data)
    else:
        _echo_report(result)
        for path in written:
            click.echo(f"wrote {path}")
