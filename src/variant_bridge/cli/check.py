"""``variant-bridge check``: do the conda side and the wheel side of one release agree?"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from variant_bridge.cli._options import fetch_options
from variant_bridge.cli._output import echo_json, json_option

if TYPE_CHECKING:
    from variant_bridge.jobs.specs import FetchSpec
    from variant_bridge.release import CondaSide, WheelSide
    from variant_bridge.release_check import CheckReport, Finding

__all__ = ["check"]

_LEVELS = ("error", "warn")


def _finding_json(finding: Finding) -> dict[str, Any]:
    return {
        "level": finding.level.name.lower(),
        "topic": finding.topic.value,
        "subject": finding.subject,
        "message": finding.message,
        "fix": finding.fix,
    }


def _conda_json(side: CondaSide) -> dict[str, Any]:
    return {
        "name": side.name,
        "version": side.version,
        "sources": list(side.sources),
        "builds": [
            {
                "where": b.where,
                "platform": b.platform,
                "cuda": str(b.cuda) if b.cuda else None,
                "glibc": ".".join(map(str, b.glibc)) if b.glibc else None,
                "microarch_level": b.microarch_level,
                "python": list(b.python),
                "sm_arch": list(b.archs.sm_arch) if b.archs is not None else None,
                "arch_source": b.arch_source,
                "build_number": b.build_number,
                "build_string": b.build_string,
            }
            for b in side.builds
        ],
    }


def _wheels_json(side: WheelSide) -> dict[str, Any]:
    variants = []
    for v in side.variants:
        claim = v.claim()
        variants.append(
            {
                "label": v.label,
                "properties": [str(p) for p in v.description.properties],
                "toolkit": str(claim.cuda) if claim else None,
                "toolkit_from": claim.source.value if claim else None,
                "toolkit_evidence": claim.text if claim else None,
                "files": [str(f) for f in v.files],
            }
        )
    return {
        "project": side.project,
        "version": side.version,
        "sources": list(side.sources),
        "tags_known": side.files_known,
        "variants": variants,
    }


def _summary(report: CheckReport) -> str:
    conda = report.conda.builds
    cuda = sorted(
        {str(b.cuda) for b in conda if b.cuda}, key=lambda v: tuple(map(int, v.split(".")))
    )
    cpu = " + CPU" if any(b.cuda is None for b in conda) else ""
    labels = ", ".join(v.label for v in report.wheels.variants)
    return (
        f"conda: CUDA {', '.join(cuda) or '-'}{cpu} ({len(conda)} builds); wheels: {labels or '-'}"
    )


def _echo(report: CheckReport, verbose: bool) -> None:
    from variant_bridge.release_check import Level

    click.echo(_summary(report))
    for finding in report.findings:
        if finding.level < Level.WARN and not verbose and finding.level != Level.OK:
            continue
        click.echo(f"{finding.level!s:<5} {finding.subject}: {finding.message}")
        if finding.fix:
            click.echo(f"      fix: {finding.fix}")
    counts = {level: sum(1 for f in report.findings if f.level == level) for level in Level}
    click.echo(
        f"{counts[Level.ERROR]} error(s), {counts[Level.WARN]} warning(s), {counts[Level.OK]} ok"
    )


@click.command(short_help="Check that the conda and the wheel side of a release agree.")
@click.option(
    "--conda",
    "conda",
    multiple=True,
    required=True,
    type=click.Path(path_type=Path),
    metavar="PATH",
    help=(
        "The conda side, repeatable: .ci_support/*.yaml files or their folder, a rattler-build "
        "recipe.yaml, a variants.yaml, built .conda/.tar.bz2 packages or a folder of them."
    ),
)
@click.option(
    "--wheels",
    required=True,
    metavar="DIR|FILE|URL",
    help=(
        "The wheel side: a wheels folder, a *-variants.json, a declaration (variant-repack "
        "TOML, pyproject.toml with scikit-build overrides) or a simple index URL (with --project)."
    ),
)
@click.option(
    "--variants",
    multiple=True,
    type=click.Path(path_type=Path),
    metavar="FILE",
    help="Variant files for a recipe.yaml (repeatable). Default: the variants.yaml beside it.",
)
@click.option(
    "--arch-list",
    "arch_lists",
    multiple=True,
    metavar="[CUDA=]LIST",
    help=(
        "The CUDA architectures of the conda builds of one CUDA version or major (12.9=LIST, "
        "13=LIST) or of all (LIST), in CMake (80-real;90), PyTorch (8.0;9.0+PTX) or sm_arch "
        "spelling; repeatable. Wins over what the recipe says."
    ),
)
@click.option(
    "--wheel-tag",
    "wheel_tags",
    multiple=True,
    metavar="TAG",
    help=(
        "A tag the wheels are published with (cp312-cp312-manylinux_2_28_x86_64), when only "
        "their metadata is given; repeatable."
    ),
)
@click.option("--project", metavar="NAME", help="The wheels' project (needed for an index URL).")
@click.option(
    "--conda-name", metavar="NAME", help="The conda package, when a folder holds several."
)
@click.option(
    "--version", "version", metavar="VERSION", help="The release to read from the wheels."
)
@click.option(
    "--platform", default="linux-64", show_default=True, metavar="SUBDIR",
    help="The conda platform recipes and variant files are evaluated for.",
)  # fmt: skip
@click.option(
    "--fail-on",
    type=click.Choice(_LEVELS),
    default="error",
    show_default=True,
    help="Exit 1 when a finding of this level or worse is made.",
)
@fetch_options()  # -v also prints INFO findings
@json_option
def check(
    *,
    conda: tuple[Path, ...],
    wheels: str,
    variants: tuple[Path, ...],
    arch_lists: tuple[str, ...],
    wheel_tags: tuple[str, ...],
    project: str | None,
    conda_name: str | None,
    version: str | None,
    platform: str,
    fail_on: str,
    fetch: FetchSpec,
    as_json: bool,
) -> None:
    """Compare the conda side and the wheel side of one release and print one finding per
    disagreement (OK, WARN, ERROR, with what to change). Read-only. Exit status 1 when an
    ERROR is found (or a WARN, with --fail-on warn).

    \b
    Examples:
      variant-bridge check --conda .ci_support/ --wheels dist/
      variant-bridge check --conda recipe/recipe.yaml --wheels dist/
      variant-bridge check --conda output/linux-64 --wheels torch-2.10.0-variants.json \\
          --wheel-tag cp312-cp312-manylinux_2_28_x86_64
      variant-bridge check --conda .ci_support/ --arch-list "12.9=8.0;9.0;12.0+PTX" \\
          --wheels https://example.org/simple --project mypkg
    """
    from variant_bridge.jobs.check import CheckRequest, run_check
    from variant_bridge.release_check import Level

    request = CheckRequest(
        conda=conda, wheels=wheels, variants=variants, arch_lists=arch_lists,
        wheel_tags=wheel_tags, project=project, conda_name=conda_name, version=version,
        platform=platform,
    )  # fmt: skip
    from variant_bridge.cli._fetching import echo_notes, reporter
    from variant_bridge.jobs.context import open_downloads

    with open_downloads(fetch, reporter()) as downloads:  # an index URL's files, once
        report = run_check(request, downloads)
        if not fetch.quiet:
            echo_notes(downloads.notes)
    threshold = Level.ERROR if fail_on == "error" else Level.WARN
    failed = report.worst >= threshold
    if as_json:
        echo_json(
            {
                "ok": not failed,
                "worst": report.worst.name.lower(),
                "findings": [_finding_json(f) for f in report.findings],
                "conda": _conda_json(report.conda),
                "wheels": _wheels_json(report.wheels),
            }
        )
    else:
        _echo(report, fetch.verbose)
    if failed:
        raise click.exceptions.Exit(1)
