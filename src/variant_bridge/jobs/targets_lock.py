"""``solve --targets``: one conda solve per node class of a targets file; with ``--write-lock``
one pixi.lock holding a named platform per class, and the pixi.toml beside it declaring the same
platforms (docs/clusters.md, "Lock per class"). A class that declares its toolkit
(``cuda_version: "12.6"``) has it as a spec of its solve.

Each class's platform in the lock is named after the class, its conda subdir the class's, its
virtual packages what the class's pixi platform entry declares
(:func:`~variant_bridge.export.platform.class_declaration`): pixi matches a lock's platforms to
the manifest's by subdir and declared virtual packages, so the two say the same. The variant
wheels are locked as plain-named copies in ``variant-wheels/<class>/`` beside the lock (one
class's ``torch-2.9.0-py3-none-any.whl`` is the CUDA build, another's the ROCm build).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from variant_bridge._values import value
from variant_bridge.detect.targets_file import NodeClass
from variant_bridge.environment import Source
from variant_bridge.errors import ConflictingOptions, ExportError, SolveError
from variant_bridge.export import write_export
from variant_bridge.export.dependencies import major_minor
from variant_bridge.export.model import PlatformDeclaration
from variant_bridge.export.pixi_toml.classes import check_classes, class_notes, render_classes
from variant_bridge.export.platform import class_declaration
from variant_bridge.jobs.lock_manifest import MANIFEST, lock_model
from variant_bridge.jobs.solve import (
    SolveRequest,
    SolveResult,
    lock_sources,
    locked_wheels,
    solve,
    spec_names,
)
from variant_bridge.jobs.specs import Misuse
from variant_bridge.jobs.target import Target
from variant_bridge.jobs.targets import NodeClasses, NodeContext, each_class

__all__ = ["ClassSolve", "ClassesSolve", "declared_virtual_packages", "solve_classes"]

_PRODUCED = "# Produced by variant-bridge"
_CLASSES = "from the node classes of"


@value
class ClassSolve:
    """One class's solution."""

    node: NodeClass
    target: Target
    result: SolveResult

    @property
    def name(self) -> str:
        return self.node.name


@value
class ClassesSolve:
    """Every class's solution, and the lock and manifest written."""

    targets_file: str
    classes: tuple[ClassSolve, ...]
    lockfile: Path | None = None
    manifest: Path | None = None
    notes: tuple[str, ...] = ()


def declared_virtual_packages(declaration: PlatformDeclaration) -> tuple[str, ...]:
    """The virtual packages a platform entry declares, as a lock's platform lists them."""
    found = []
    if declaration.cuda is not None:
        found.append(f"__cuda={declaration.cuda}")
    if declaration.cuda_arch is not None:
        found.append(f"__cuda_arch={declaration.cuda_arch}")
    if declaration.archspec is not None:
        found.append(f"__archspec=1={declaration.archspec}")
    if declaration.glibc is not None:
        found.append(f"__glibc={declaration.glibc}")
    found += [f"{name}={version}" for name, version in declaration.raw]
    return tuple(found)


def solve_classes(request: SolveRequest, classes: NodeClasses) -> ClassesSolve:
    """Solve *request* for every class; with ``request.write_lock``, write the lock of every
    class and its pixi.toml. The lock's folder, the manifest there (only one an earlier
    ``solve --targets`` wrote is replaced) and the classes' names are checked before anything
    is solved.

    :raises ConflictingOptions: ``into`` (several classes cannot be installed into one prefix).
    :raises SolveError: see :func:`~variant_bridge.jobs.solve.solve`, naming the class; the lock
        or its manifest cannot be written.
    """
    if request.into is not None:
        raise ConflictingOptions(
            Misuse.TARGETS_AND_ENVIRONMENT,
            "--into installs one environment; --targets solves one per class: lock them all "
            "with --write-lock instead",
        )
    lock = request.write_lock
    declarations = [(one.name, class_declaration(one.target.env, one.name)) for one in classes]
    if lock is not None:
        _check_lock(lock, classes.path, declarations)
    each = replace(request, into=None, write_lock=None)
    solved = each_class(
        classes,
        lambda one: ClassSolve(one.node, one.target, solve(_for_class(each, one.target), one.ctx)),
    )
    if lock is None:
        return ClassesSolve(classes.path, solved)
    return _write(lock, request, classes, solved, dict(declarations))


def _for_class(request: SolveRequest, target: Target) -> SolveRequest:
    """*request* for one class: the toolkit the class declares (``cuda_version: "12.6"``) is
    a spec of its solve (``cuda-version 12.6.*``) unless the specs name the toolkit already."""
    toolkit = target.env.toolkit
    if toolkit is None or toolkit.source != Source.TARGET:
        return request
    if toolkit.package in spec_names(request.specs):
        return request
    pin = f"{toolkit.package} {major_minor(toolkit.version)}.*"
    return replace(request, specs=(*request.specs, pin))


def _check_lock(
    lock: Path, where: str, declarations: Sequence[tuple[str, PlatformDeclaration]]
) -> None:
    folder = lock.absolute().parent
    if not folder.is_dir():
        raise SolveError(f"--write-lock {lock}: {folder} is not a directory")
    try:
        check_classes(where, declarations)
    except ExportError as e:
        raise SolveError(str(e)) from e
    manifest = folder / MANIFEST
    if manifest.exists() and not _written_for_classes(manifest):
        raise SolveError(
            f"{manifest} exists: solve --targets writes a manifest with a platform per class "
            "beside the lock, and replaces only one it wrote; write the lock into another folder"
        )


def _written_for_classes(manifest: Path) -> bool:
    try:
        head = manifest.read_text(encoding="utf-8", errors="replace")[:4096].splitlines()[:3]
    except OSError:
        return False
    return bool(head) and head[0].startswith(_PRODUCED) and any(_CLASSES in h for h in head)


def _write(
    lock: Path,
    request: SolveRequest,
    classes: NodeClasses,
    solved: Sequence[ClassSolve],
    declarations: dict[str, PlatformDeclaration],
) -> ClassesSolve:
    from variant_bridge.solve.lock import COPIES_DIR, LockedPlatform, write_lock_platforms

    lock_dir = lock.absolute().parent
    contexts: dict[str, NodeContext] = {one.name: one for one in classes}
    platforms = []
    for one in solved:
        wheels = locked_wheels(
            one.result, contexts[one.name].ctx, lock_dir, folder=f"{COPIES_DIR}/{one.name}"
        )
        declared = declared_virtual_packages(declarations[one.name])
        records = tuple(p.record for p in one.result.conda)
        platforms.append(
            LockedPlatform(one.name, one.target.env.platform, declared, records, tuple(wheels))
        )
    index_urls, find_links = lock_sources(classes.shared, lock_dir)
    channels = [c.as_uri() for c in request.channels]
    write_lock_platforms(
        lock, platforms, channels=channels, indexes=index_urls, find_links=find_links
    )
    manifest = lock_dir / MANIFEST
    producer = "variant-bridge solve --write-lock --targets"
    try:
        models = []
        for one in solved:
            model = lock_model(lock, index_urls, find_links, classes.shared.downloads,
                               platform=one.name, producer=producer)  # fmt: skip
            declaration = declarations[one.name]
            models.append(
                (one.name, replace(model, platform_declaration=declaration, base_dir=str(lock_dir)))
            )
        text = render_classes(classes.path, models[0][1].name, producer, models)
        write_export(manifest, text, force=manifest.exists())
    except ExportError as e:
        raise SolveError(f"wrote {lock}, but not {manifest}: {e}") from e
    return ClassesSolve(classes.path, tuple(solved), lock, manifest, tuple(class_notes(models)))
