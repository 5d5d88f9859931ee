"""``variant-bridge select``: the dependency tree, each wheel agreeing with the environment.

Also the pieces ``install`` (:mod:`.install`) shares: the JSON of a choice and the summary of
the view.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import click

from variant_bridge.cli._fetching import echo_notes, reporter
from variant_bridge.cli._options import (
    environment_options,
    fetch_options,
    no_deps_option,
    source_options,
)
from variant_bridge.cli._output import echo_json, evidence_json, heading, json_option

if TYPE_CHECKING:
    from variant_bridge.jobs.select import (
        Duplicate,
        PackageChoice,
        RequiredBy,
        VariantToolkit,
    )
    from variant_bridge.jobs.specs import EnvironmentSpec, FetchSpec, SourceSpec
    from variant_bridge.jobs.target import Target
    from variant_bridge.translate.supported import SupportedProperties

__all__ = ["choice_json", "select"]


def _duplicate_json(duplicate: Duplicate) -> dict[str, str]:
    return {
        "requirement": duplicate.requirement,
        "pypi": duplicate.pypi,
        "conda": duplicate.conda,
        "conda_version": duplicate.conda_version,
        "required_by": duplicate.required_by,
        "message": duplicate.message,
    }


def _verdict(choice: PackageChoice) -> str:
    if choice.installed is not None:
        return "kept"
    return "selected" if choice.chosen is not None else "no compatible wheel"


def _reason(choice: PackageChoice) -> str:
    """One line: why this wheel, why it is kept, or why nothing fits."""
    if choice.installed is not None:
        return f"installed ({choice.installed}) and satisfies every requirement on it"
    chosen = choice.chosen
    return chosen.reason if chosen is not None else choice.failure()


def _required_by_json(required: RequiredBy) -> dict[str, str | None]:
    return {"package": required.package, "requirement": required.requirement}


def toolkit_json(toolkit: VariantToolkit) -> dict[str, Any]:
    """The ``--json`` shape of one variant's CUDA toolkit evidence (docs/cli.md)."""
    metadata = toolkit.metadata
    return {
        **evidence_json(toolkit.evidence),
        "summary": toolkit.summary(),
        "refused": toolkit.refused,
        "read_from": (
            {"wheel": toolkit.wheel, "source": metadata.source.value, "url": metadata.where}
            if metadata is not None
            else None
        ),
        "problems": list(toolkit.problems),
    }


def choice_json(choice: PackageChoice) -> dict[str, Any]:
    """The ``--json`` shape of one package's choice (docs/cli.md)."""
    chosen = choice.chosen
    selected: dict[str, Any] | None = None
    if chosen is not None:
        candidate = chosen.candidate
        variant = candidate.variant
        selected = {
            "filename": candidate.name,
            "label": candidate.label,
            "url": candidate.url,
            "sha256": candidate.sha256,
            "properties": [str(p) for p in variant.properties] if variant else [],
            "reason": chosen.reason,
        }
    return {
        "package": choice.files.project,
        "version": choice.files.version,
        "requested": choice.requested,
        "required_by": [_required_by_json(r) for r in choice.required_by],
        "extras": list(choice.extras),
        "verdict": _verdict(choice),
        "reason": _reason(choice),
        "selected": selected,
        "candidates": [
            {
                "filename": str(v.filename),
                "label": v.label,
                "compatible": v.compatible,
                "rank": v.rank,
                "reason": v.reason,
                # The variant's CUDA toolkit evidence; null when not read (a non-variant or null
                # wheel, or a variant the target's properties already reject).
                "toolkit": (
                    toolkit_json(choice.toolkits[v.label])
                    if v.label is not None and v.label in choice.toolkits
                    else None
                ),
            }
            for v in choice.selection.verdicts
        ],
        "problems": list(choice.problems),
        "skipped": [{"filename": s.filename, "reason": s.reason} for s in choice.files.skipped],
        "duplicates": [_duplicate_json(d) for d in choice.duplicates],
        # False when the chosen wheel's requirements could not be read without downloading
        # it (an index without PEP 658 metadata): `duplicates` is then not a clean bill.
        "requirements_checked": choice.selected is None or choice.requirements is not None,
    }


def _echo_choice(choice: PackageChoice) -> None:
    chosen = choice.chosen
    title = f"{choice.files.project} {choice.files.version}"
    heading(f"{title}: {chosen.filename if chosen else 'no compatible wheel'}")
    if not choice.requested:
        click.echo(f"  in the tree: {_why_here(choice)}")
    noted: set[str] = set()
    said: set[str] = set()
    for verdict in choice.selection.verdicts:
        mark = f"#{verdict.rank}" if verdict.rank is not None else " x"
        click.echo(f"  {mark:>3}  {verdict.filename}")
        click.echo(f"        {verdict.reason}")
        toolkit = choice.toolkits.get(verdict.label or "")
        if toolkit is not None and toolkit.label not in noted:
            noted.add(toolkit.label)  # once per label, under its best wheel
            said.update(toolkit.problems)
            for problem in toolkit.problems:
                click.echo(f"        note: {problem}")
    for problem in choice.problems:
        if problem not in said:  # the chosen wheel's, unless said under it already
            click.echo(f"  note: {problem}")
    for skipped in choice.files.skipped:
        click.echo(f"    -  {skipped.filename}")
        click.echo(f"        skipped: {skipped.reason}")
    if choice.selected is not None and choice.requirements is None:
        click.echo(
            "  note: its requirements were not checked against the prefix's CUDA libraries "
            "(the index has no PEP 658 metadata; `install` checks after downloading)"
        )


def _in_full(choice: PackageChoice) -> bool:
    """Requested packages, variant packages and failures get every file's verdict."""
    return choice.requested or choice.failed or bool(choice.files.variant_candidates)


def _why_here(choice: PackageChoice) -> str:
    return "; ".join(str(r) for r in choice.required_by if r.package is not None)


def _echo_tree(choices: Sequence[PackageChoice]) -> None:
    """Each requested or variant package in full, then the rest of the tree one line each."""
    rest: list[PackageChoice] = []
    for choice in choices:
        if not _in_full(choice):
            rest.append(choice)
            continue
        click.echo()
        _echo_choice(choice)
    if rest:
        click.echo()
        heading(f"Also in the tree ({len(rest)} without variants)")
        for choice in rest:
            chosen = choice.chosen
            what = chosen.filename if chosen is not None else "kept as installed"
            click.echo(f"  {choice.files.project} {choice.files.version}: {what}")
            click.echo(f"      in the tree: {_why_here(choice)}")


def _summary(target: Target) -> str:
    """Every fact the choice used, each with where it came from (semantics.md §11)."""
    env = target.env
    toolkit = env.toolkit
    facts = [f"{vp.name}={vp.version}" + (f"={vp.build}" if vp.build != "0" else "")
             + f" ({vp.source})" for vp in env.virtual_packages]  # fmt: skip
    if env.cuda is None:
        facts.append("no __cuda")
    facts.append(f"{toolkit} ({toolkit.source})" if toolkit else "no cuda-version")
    if env.rocm is not None:
        facts.append(f"{env.rocm} ({env.rocm.source})")
    facts.append(f"CUDA policy {target.supported.policy}")
    return (
        f"Environment: {env.origin} ({env.platform}, {env.platform_source}); "
        f"{', '.join(facts)}\nTarget: {target.python}"
    )


def _warn_duplicates(
    choices: Sequence[PackageChoice], supported: SupportedProperties | None = None
) -> None:
    """Duplicated CUDA libraries, and (given *supported*) a GPU no build has code for."""
    sys.stdout.flush()  # keep the report and the warnings in order when both go to one pipe
    for choice in choices:
        for duplicate in choice.duplicates:
            click.echo(f"warning: {duplicate.message}", err=True)
        fallback = _gpu_fallback(choice, supported) if supported is not None else None
        if fallback is not None:
            click.echo(f"warning: {fallback}", err=True)


def _gpu_fallback(choice: PackageChoice, supported: SupportedProperties) -> str | None:
    from variant_bridge.translate.gpus import gpu_fallback

    chosen = choice.chosen
    if chosen is None:
        return None
    variants = [v.variant.description for v in choice.selection.verdicts if v.variant]
    return gpu_fallback(
        f"{choice.files.project} {choice.files.version}",
        chosen.variant.description if chosen.variant is not None else None,
        variants,
        supported,
    )


@click.command(short_help="Choose the variant wheel that agrees with the environment.")
@click.argument("packages", nargs=-1, required=True, metavar="PKG[==VER]...")
@source_options()
@no_deps_option
@environment_options(python=True)
@fetch_options()
@json_option
def select(
    *,
    packages: tuple[str, ...],
    sources: SourceSpec,
    no_deps: bool,
    environment: EnvironmentSpec,
    fetch: FetchSpec,
    as_json: bool,
) -> None:
    """Choose, for each package, the wheel consistent with the environment's conda view
    (__cuda, __cuda_arch, __archspec, __glibc and the solved cuda-version), and say why for
    every file: PEP 825 ranking over the bridged supported properties, then the null variant,
    then the non-variant wheel. Exit status 1 when a package has no compatible wheel.

    \b
    Examples:
      variant-bridge select torch --index-url https://download.pytorch.org/whl/variant/
      variant-bridge select mypkg==1.0 -f ./wheels --prefix "$CONDA_PREFIX" --json
      variant-bridge select mypkg -f ./wheels -t cuda=12.8 -t cuda_arch=9.0 --python 3.12
    """
    from variant_bridge.jobs.context import Context
    from variant_bridge.jobs.select import parse_requests
    from variant_bridge.jobs.select import select as choose

    requests = parse_requests(packages)
    with Context.open(sources, environment, fetch, reporter=reporter()) as ctx:
        # The chosen wheels' requirements are read (downloading a wheel only when the index
        # offers neither PEP 658 metadata nor ranges), so select resolves the tree install
        # installs.
        choices = choose(requests, ctx, fetch_chosen=True, deps=not no_deps)
        if as_json:
            echo_json([choice_json(c) for c in choices])
        else:
            click.echo(_summary(ctx.target))
            _echo_tree(choices)
        _warn_duplicates(choices, ctx.target.supported)
        echo_notes(ctx.notes)
    failed = [c for c in choices if c.failed]
    if failed:
        from variant_bridge.cli import CliError

        names = ", ".join(f"{c.files.project} {c.files.version}" for c in failed)
        where = "under candidates in the JSON" if as_json else "above"
        raise CliError(f"no compatible wheel for {names} (each file's reason is listed {where})")
