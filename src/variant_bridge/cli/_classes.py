"""What the commands print for a targets file's node classes (``--targets``): the classes' facts,
and each package's choice per class, side by side; the ``--json`` shapes (docs/cli.md).

The per-class loop is :mod:`variant_bridge.jobs.targets`'; this module only prints.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from variant_bridge.cli._output import heading, variant_wheels_json
from variant_bridge.environment import Source

if TYPE_CHECKING:
    from variant_bridge.environment import Environment
    from variant_bridge.export import ExportFormat
    from variant_bridge.jobs.export import ExportRequest
    from variant_bridge.jobs.select import PackageChoice
    from variant_bridge.jobs.solve import SolveRequest, SolveResult
    from variant_bridge.jobs.specs import EnvironmentSpec, FetchSpec, SourceSpec
    from variant_bridge.jobs.target import Target
    from variant_bridge.jobs.targets import ClassChoices
    from variant_bridge.jobs.targets_export import ClassesExport

__all__ = [
    "class_facts",
    "classes_json",
    "echo_class_failures",
    "echo_classes",
    "echo_side_by_side",
    "export_classes_command",
    "solve_classes_command",
    "warn_classes",
]


def class_facts(env: Environment) -> list[str]:
    """What a class declares (not pixi's platform defaults): its virtual packages, toolkit, ROCm
    runtime and the features with no conda counterpart."""
    facts = [
        f"{vp.name}={vp.version}" + (f"={vp.build}" if vp.build != "0" else "")
        for vp in env.virtual_packages
        if vp.source == Source.TARGET
    ]
    if env.toolkit is not None:
        facts.append(str(env.toolkit))
    if env.rocm is not None:
        facts.append(str(env.rocm))
    facts += [
        f"{f.namespace} :: {f.feature} :: {', '.join(f.values)}" for f in env.declared_features
    ]
    return facts


def echo_classes(path: str, targets: Sequence[tuple[str, Target]]) -> None:
    """One line per class: its platform, what it declares and its target Python."""
    heading(f"Node classes of {path} (declared; nothing of this machine is used)")
    width = max(len(name) for name, _ in targets)
    for name, target in targets:
        facts = ", ".join(class_facts(target.env)) or "no GPU, nothing declared"
        click.echo(f"  {name:<{width}}  {target.env.platform}: {facts}; {target.python}")


def _versions(cells: Sequence[PackageChoice | None]) -> str:
    versions = sorted({c.files.version for c in cells if c is not None})
    return versions[0] if len(versions) == 1 else ""


def _in_full(cells: Sequence[PackageChoice | None]) -> bool:
    """A package shown with each class's reason: requested, with variants, or failed somewhere."""
    return any(
        c is not None and (c.requested or c.failed or bool(c.files.variant_candidates))
        for c in cells
    )


def _table(results: Sequence[ClassChoices]) -> dict[str, list[PackageChoice | None]]:
    """Package -> its choice in each class (``None``: not in that class's tree), in the order
    the classes' trees reach the packages."""
    rows: dict[str, list[PackageChoice | None]] = {}
    for i, result in enumerate(results):
        for choice in result.choices:
            cells = rows.setdefault(choice.files.project, [None] * len(results))
            cells[i] = choice
    return rows


def echo_side_by_side(results: Sequence[ClassChoices]) -> None:
    """Each requested or variant package with every class's file and reason; then the packages
    without variants, one line each with the classes whose trees hold them."""
    names = [r.name for r in results]
    width = max(len(n) for n in names)
    rest: list[tuple[str, list[PackageChoice | None]]] = []
    for project, cells in _table(results).items():
        if not _in_full(cells):
            rest.append((project, cells))
            continue
        click.echo()
        heading(f"{project} {_versions(cells)}".rstrip())
        for name, cell in zip(names, cells, strict=True):
            if cell is None:
                click.echo(f"  {name:<{width}}  -  (not in this class's tree)")
                continue
            chosen = cell.chosen
            click.echo(f"  {name:<{width}}  {chosen.filename if chosen else 'no compatible wheel'}")
            click.echo(f"  {'':<{width}}    {chosen.reason if chosen else cell.failure()}")
    if rest:
        click.echo()
        heading(f"Also in the trees ({len(rest)} without variants)")
        for _, cells in rest:
            files = {c.chosen.filename for c in cells if c is not None and c.chosen is not None}
            where = [n for n, c in zip(names, cells, strict=True) if c is not None]
            shown = ", ".join(str(f) for f in sorted(files, key=str))
            holders = "every class" if len(where) == len(names) else ", ".join(where)
            click.echo(f"  {shown}  ({holders})")


def warn_classes(results: Sequence[ClassChoices]) -> None:
    """A class's GPU that no build of a package has code for (the fallback PEP 825 takes)."""
    from variant_bridge.translate.gpus import gpu_fallback

    sys.stdout.flush()
    for result in results:
        for choice in result.choices:
            chosen = choice.chosen
            if chosen is None:
                continue
            fallback = gpu_fallback(
                f"{choice.files.project} {choice.files.version}",
                chosen.variant.description if chosen.variant is not None else None,
                [v.variant.description for v in choice.selection.verdicts if v.variant],
                result.target.supported,
            )
            if fallback is not None:
                click.echo(f"warning: class {result.name!r}: {fallback}", err=True)


def echo_class_failures(results: Sequence[ClassChoices], *, as_json: bool) -> None:
    """Exit 1 when a class has a package without a compatible wheel, naming each."""
    failed = [
        f"{c.files.project} {c.files.version} in class {r.name!r}"
        for r in results
        for c in r.failed
    ]
    if failed:
        from variant_bridge.cli import CliError

        where = "under candidates in the JSON" if as_json else "above"
        raise CliError(
            f"no compatible wheel for {', '.join(failed)} (each file's reason is listed {where})"
        )


def classes_json(
    path: str, results: Sequence[ClassChoices], choice_json: Callable[[PackageChoice], Any]
) -> dict[str, Any]:
    """``select --targets --json``: each class's facts and its choices (in *choice_json*'s
    shape, ``select``'s)."""
    return {
        "targets_file": path,
        "classes": [
            {
                "name": r.name,
                "platform": r.target.env.platform,
                "declared": class_facts(r.target.env),
                "virtual_packages": [str(vp) for vp in r.target.env.virtual_packages],
                "python": str(r.target.python.version),
                "choices": [choice_json(c) for c in r.choices],
            }
            for r in results
        ],
    }


def export_classes_command(
    packages: Sequence[str],
    path: Path | None,
    sources: SourceSpec,
    environment: EnvironmentSpec,
    fetch: FetchSpec,
    *,
    output: Path | None,
    format_: ExportFormat | None,
    given: Mapping[str, object],
    force: bool,
    pin_filenames: bool,
    as_json: bool,
    request: ExportRequest,
) -> None:
    """``export --targets FILE PKG...``: one file per class, or one pixi manifest."""
    from variant_bridge.cli._fetching import echo_notes, reporter
    from variant_bridge.cli._output import echo_json
    from variant_bridge.export import format_for
    from variant_bridge.jobs.select import parse_requests
    from variant_bridge.jobs.targets import open_classes
    from variant_bridge.jobs.targets_export import (
        FILES,
        ClassesOutput,
        describe,
        export_classes,
    )

    usage = click.get_current_context()
    if path is None:
        raise click.UsageError(
            "PKG arguments are chosen for each node class of --targets FILE; without --targets, "
            "export writes the environment of --prefix or --lockfile",
            usage,
        )
    if not packages:
        raise click.UsageError(
            "--targets needs the packages to choose for each class "
            "(export torch --targets nodes.yaml -o DIR)",
            usage,
        )
    for option, value in given.items():
        if value:
            raise click.UsageError(f"--targets writes new files, one per class; {option} "
                                   "cannot be used with it", usage)  # fmt: skip
    if output is None:
        raise click.UsageError(
            "--targets writes one file per class: pass -o DIR (or -o pixi.toml for one "
            "manifest with a platform per class)",
            usage,
        )
    chosen = format_ or format_for(output) or "environment-yml"
    if chosen != "pixi-toml" and output.suffix in (".yml", ".yaml", ".toml"):
        raise click.UsageError(
            f"-o {output}: with --targets, -o names the folder of the classes' files "
            f"(DIR/<class>/{FILES[chosen]})",
            usage,
        )
    requests = parse_requests(packages)
    target = ClassesOutput(chosen, output, force=force, pin_filenames=pin_filenames)
    with open_classes(path, sources, environment, fetch, reporter=reporter()) as classes:
        exported = export_classes(requests, request, target, classes)
        fetched = classes.notes
    if as_json:
        echo_json(_export_json(exported))
    for line in describe(exported):
        click.echo(line, err=True)
    if not fetch.quiet:
        echo_notes([*exported.notes, *fetched])


def _export_json(exported: ClassesExport) -> dict[str, Any]:
    """``export --targets --json``: each class's file and content, the notes."""
    from variant_bridge.export import to_dict
    from variant_bridge.export.pixi_toml.classes import classes_to_dict

    data: dict[str, Any] = {
        "targets_file": exported.targets_file,
        "format": exported.format,
        "written": [str(p) for p in exported.written],
        "classes": [
            {
                "name": c.name,
                "output": str(c.written),
                "variant_wheels": variant_wheels_json(c.model.pip),
                **(
                    {}
                    if exported.format == "pixi-toml"
                    else {"content": to_dict(c.model, exported.format)}
                ),
            }
            for c in exported.classes
        ],
        "notes": list(exported.notes),
    }
    if exported.format == "pixi-toml":
        name = exported.classes[0].model.name
        data["content"] = classes_to_dict(name, [(c.name, c.model) for c in exported.classes])
    return data


def solve_classes_command(
    request: SolveRequest,
    path: Path,
    sources: SourceSpec,
    environment: EnvironmentSpec,
    fetch: FetchSpec,
    *,
    as_json: bool,
    result_json: Callable[[SolveResult, Environment], dict[str, Any]],
) -> None:
    """``solve --targets``: each class's solution; the lock and manifest with ``--write-lock``
    (``--json``: each class in *result_json*'s shape, ``solve``'s)."""
    from variant_bridge.cli._fetching import reporter
    from variant_bridge.cli._output import echo_json, echo_notes, heading
    from variant_bridge.jobs.targets import open_classes
    from variant_bridge.jobs.targets_lock import solve_classes

    with open_classes(path, sources, environment, fetch, reporter=reporter()) as classes:
        solved = solve_classes(request, classes)
        fetched = classes.notes
    if as_json:
        echo_json(
            {
                "targets_file": solved.targets_file,
                "classes": [
                    {"name": c.name, **result_json(c.result, c.target.env)} for c in solved.classes
                ],
                "lockfile": str(solved.lockfile) if solved.lockfile else None,
                "manifest": str(solved.manifest) if solved.manifest else None,
                "notes": [*solved.notes, *fetched],
            }
        )
        return
    for i, one in enumerate(solved.classes):
        if i:
            click.echo()
        result = one.result
        heading(f"Class {one.name}: solution for {' '.join(result.specs)} on {result.platform}")
        facts = ", ".join(class_facts(one.target.env)) or "nothing declared"
        click.echo(f"  declared: {facts}")
        for package in result.conda:
            click.echo(f"  conda  {package.name} {package.version} {package.build}")
        for wheel in result.wheels:
            click.echo(f"  wheel  {wheel.candidate.name}")
            click.echo(f"         why: {wheel.reason}")
    if solved.lockfile:
        click.echo(f"\nWrote {solved.lockfile} (a platform per class: "
                   f"{', '.join(c.name for c in solved.classes)})")  # fmt: skip
    if solved.manifest:
        click.echo(f"Wrote {solved.manifest} (the manifest the lock satisfies)")
    echo_notes([*solved.notes, *(n for c in solved.classes for n in c.result.notes), *fetched])
