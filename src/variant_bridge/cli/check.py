"""``variant-bridge check``: do the conda side and the wheel side of one release agree?"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from variant_bridge.cli._options import fetch_options
from variant_bridge.cli._output import echo_json, json_option
from variant_bridge.errors import VariantBridgeError

if TYPE_CHECKING:
    from variant_bridge.jobs.specs import FetchSpec
    from variant_bridge.release import CondaSide, WheelSide
    from variant_bridge.release_check import CheckReport, Finding

__all__ = ["check"]

_LEVELS = ("error", "warn")
_FORMATS = ("text", "json", "github")
# GitHub workflow commands per level; OK findings are not annotated.
_ANNOTATIONS = {"ERROR": "error", "WARN": "warning", "INFO": "notice"}


def _finding_json(finding: Finding) -> dict[str, Any]:
    return {
        "rule": finding.rule.value,
        "level": finding.level.name.lower(),
        "topic": finding.topic.value,
        "subject": finding.subject,
        "message": finding.message,
        "fix": finding.fix,
        "platforms": list(finding.platforms),
        "cuda": str(finding.cuda) if finding.cuda is not None else None,
        "label": finding.label,
        "conda_builds": list(finding.conda_builds),
        "conda_only": list(finding.conda_only),
        "wheel_only": list(finding.wheel_only),
        "toolkit_from": finding.toolkit_from,
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
                "family": dict(b.family),
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
                "toolkit_from": claim.basis.value if claim else None,
                "toolkit_evidence": claim.text if claim else None,
                "per_major": claim.per_major if claim else False,
                "files": [str(f) for f in v.files],
            }
        )
    return {
        "project": side.project,
        "version": side.version,
        "sources": list(side.sources),
        "tags_known": side.files_known,
        "unread": list(side.unread),
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


def _escape(text: str, *, prop: bool = False) -> str:
    """GitHub workflow command escaping (data; properties also escape ``:`` and ``,``)."""
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if prop else text


def _echo_github(report: CheckReport, verbose: bool) -> None:
    """One GitHub annotation per finding (``::warning file=...,title=rule::...``), then the
    summary as a plain line."""
    from variant_bridge.release_check import Level

    for finding in report.findings:
        kind = _ANNOTATIONS.get(finding.level.name)
        if kind is None or (finding.level is Level.INFO and not verbose):
            continue
        props = [f"title={_escape(f'check {finding.rule.value}', prop=True)}"]
        if finding.conda_builds:
            props.insert(0, f"file={_escape(_relative(finding.conda_builds[0]), prop=True)}")
        text = f"{finding.subject}: {finding.message}"
        if finding.fix:
            text += f" (fix: {finding.fix})"
        click.echo(f"::{kind} {','.join(props)}::{_escape(text)}")
    click.echo(_counts(report))


def _relative(path: str) -> str:
    """A conda build's file relative to the working directory (GitHub resolves it from the
    checkout), its variant suffix (`` (variant 2)``) dropped."""
    import os

    file = path.split(" (variant ", 1)[0].split(" for ", 1)[0]
    try:
        relative = os.path.relpath(file)
    except ValueError:  # another drive (Windows)
        return file
    return file if relative.startswith("..") else relative


def _counts(report: CheckReport) -> str:
    from variant_bridge.release_check import Level

    counts = {level: sum(1 for f in report.findings if f.level == level) for level in Level}
    return f"{counts[Level.ERROR]} error(s), {counts[Level.WARN]} warning(s), {counts[Level.OK]} ok"


def _echo(report: CheckReport, verbose: bool) -> None:
    from variant_bridge.release_check import Level

    click.echo(_summary(report))
    for finding in report.findings:
        if finding.level < Level.WARN and not verbose and finding.level != Level.OK:
            continue
        click.echo(f"{finding.level!s:<5} {finding.subject}: {finding.message}")
        if finding.fix:
            click.echo(f"      fix: {finding.fix}")
    click.echo(_counts(report))


def _failure(error: VariantBridgeError, output: str) -> None:
    """With ``--format json``/``github``, a failure is also a JSON error object or an error
    annotation on stdout (the ``error:`` line still goes to stderr)."""
    message = " ".join(str(error).split()) or type(error).__name__
    if output == "json":
        echo_json({"ok": False, "error": {"type": type(error).__name__, "message": message}})
    elif output == "github":
        click.echo(f"::error title=variant-bridge check::{_escape(message)}")


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
    metavar="[PLATFORM,KEY=VALUE:][CUDA=]LIST",
    help=(
        "The CUDA architectures of the conda builds of one CUDA version or major (12.9=LIST, "
        "13=LIST) or of all (LIST), optionally of one platform or variant key only "
        "(linux-aarch64:12.9=LIST, arm_variant_type=tegra:12.9=LIST), in CMake (80-real;90), "
        "PyTorch (8.0;9.0+PTX) or sm_arch spelling; repeatable; the most specific applies. "
        "Wins over what the recipe says."
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
    "--platform", "platforms", multiple=True, metavar="SUBDIR",
    help=(
        "Compare only the conda builds and wheels of this platform (repeatable); recipes and "
        "variants.yaml files are evaluated for each. Default: every platform of the .ci_support "
        "files and packages; recipes for linux-64."
    ),
)  # fmt: skip
@click.option(
    "--download", is_flag=True,
    help=(
        "Download a wheel whole to read its metadata where the index offers neither PEP 658 "
        "metadata nor range requests (default: name it and use its labels and properties)."
    ),
)  # fmt: skip
@click.option(
    "--fail-on",
    type=click.Choice(_LEVELS),
    default="error",
    show_default=True,
    help="Exit 1 when a finding of this level or worse is made.",
)
@fetch_options()  # -v also prints INFO findings
@click.option(
    "--format", "output", type=click.Choice(_FORMATS), default="text", show_default=True,
    help=(
        "text; json (one object: findings with rule ids and fields; a failure is an error "
        "object); github (workflow annotations on each conda file)."
    ),
)  # fmt: skip
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
    platforms: tuple[str, ...],
    download: bool,
    fail_on: str,
    fetch: FetchSpec,
    output: str,
    as_json: bool,
) -> None:
    """Compare the conda side and the wheel side of one release and print one finding per
    disagreement (OK, WARN, ERROR, with what to change). Read-only. Exit status 1 when an
    ERROR is found (or a WARN, with --fail-on warn). Conda builds are compared with the wheels
    of their own platform (wheel tags against target_platform).

    \b
    Examples:
      variant-bridge check --conda .ci_support/ --wheels dist/
      variant-bridge check --conda recipe/recipe.yaml --wheels dist/
      variant-bridge check --conda output/linux-64 --wheels torch-2.10.0-variants.json \\
          --wheel-tag cp312-cp312-manylinux_2_28_x86_64
      variant-bridge check --conda .ci_support/ --arch-list "12.9=8.0;9.0;12.0+PTX" \\
          --arch-list "linux-aarch64,arm_variant_type=tegra:12.9=8.7;10.1+PTX" \\
          --wheels https://example.org/simple --project mypkg --format github
    """
    from variant_bridge.jobs.check import CheckRequest, run_check
    from variant_bridge.release_check import Level

    if as_json and output not in ("text", "json"):
        raise click.UsageError("--json is --format json: choose one.")
    output = "json" if as_json else output
    request = CheckRequest(
        conda=conda, wheels=wheels, variants=variants, arch_lists=arch_lists,
        wheel_tags=wheel_tags, project=project, conda_name=conda_name, version=version,
        platforms=platforms, download=download,
    )  # fmt: skip
    from variant_bridge.cli._fetching import echo_notes, reporter
    from variant_bridge.jobs.context import open_downloads

    verbose = fetch.verbose
    try:
        with open_downloads(fetch, reporter()) as downloads:  # an index URL's files, once
            report = run_check(request, downloads)
            if not fetch.quiet:
                echo_notes(downloads.notes)
    except VariantBridgeError as e:
        _failure(e, output)
        raise
    threshold = Level.ERROR if fail_on == "error" else Level.WARN
    failed = report.worst >= threshold
    if output == "github":
        _echo_github(report, verbose)
    elif output == "json":
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
