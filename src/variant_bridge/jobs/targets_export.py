"""``export --targets``: the wheels ``select`` chooses for each node class of a targets file,
written as one file per class or as one pixi manifest with a platform per class
(docs/clusters.md, "Export per class").

- ``environment.yml`` and ``pylock.toml``: ``DIR/<class>/environment.yml`` (or ``pylock.toml``),
  each with the class's variant wheels copied into ``DIR/<class>/variant-wheels/`` (the copies
  of two classes share a plain name: ``torch-2.9.0-py3-none-any.whl`` is the CUDA build for one
  class and the ROCm build for another, so each class has its own folder);
- ``pixi.toml``: one manifest, a named rich platform per class, the copies in
  ``variant-wheels/<class>/`` beside it (:mod:`variant_bridge.export.pixi_toml.classes`).

A class's export is the export of a selection, not of an installed environment: the conda side is
the class's Python (``python=3.12``) and its solved toolkit where the class declares one
(``cuda-version=12.6``), then the host requirements of its variant wheels; the PyPI side is the
tree ``select`` chose, every wheel pinned to its file and sha256. Every class is chosen and its
file checked before the first file is written; the files are written atomically, as ``export``
writes one.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from variant_bridge._values import value
from variant_bridge.detect.targets_file import NodeClass
from variant_bridge.environment import PythonDistribution
from variant_bridge.errors import ExportError, quote
from variant_bridge.export import (
    ExportFormat,
    ExportModel,
    Pinning,
    build_export,
    check_target,
    copied_wheels,
    write_export,
)
from variant_bridge.export.origins import WheelOrigin
from variant_bridge.export.pixi_toml.classes import check_classes, class_notes, render_classes
from variant_bridge.export.pixi_toml.render import check_declarable
from variant_bridge.export.platform import class_declaration
from variant_bridge.export.wheels_dir import DEFAULT_WHEELS_DIR, copies_announcement
from variant_bridge.indexes import Candidate, Downloads, file_sha256, url_to_path
from variant_bridge.jobs.export import (
    ExportOutput,
    ExportRequest,
    ExportResult,
    for_output,
    index_options,
    write_model,
)
from variant_bridge.jobs.select import PackageChoice, PackageRequest
from variant_bridge.jobs.targets import (
    ClassChoices,
    NodeClasses,
    NodeContext,
    each_class,
    select_classes,
)

__all__ = [
    "CHANNELS",
    "FILES",
    "MANIFEST",
    "ClassExport",
    "ClassesExport",
    "ClassesOutput",
    "class_model",
    "describe",
    "export_classes",
]

FILES: dict[ExportFormat, str] = {"environment-yml": "environment.yml", "pylock": "pylock.toml"}
"""The file each class gets in its folder, per format."""
MANIFEST = "pixi.toml"
CHANNELS = ("conda-forge",)
"""The channel a class's conda side (its Python, its toolkit) comes from."""


@value
class ClassesOutput:
    """Where ``export --targets`` writes: *path* is a folder with a subfolder per class
    (``environment-yml``, ``pylock``), or the manifest (``pixi-toml``: a ``*.toml`` file, or a
    folder that gets ``pixi.toml``)."""

    format: ExportFormat
    path: Path
    force: bool = False
    pin_filenames: bool = False

    def file(self, name: str) -> Path:
        """The file of class *name* (``DIR/<class>/environment.yml``), or the manifest."""
        if self.format == "pixi-toml":
            return self.manifest
        return self.path / name / FILES[self.format]

    @property
    def manifest(self) -> Path:
        return self.path if self.path.suffix == ".toml" else self.path / MANIFEST

    def of_class(self, name: str) -> ExportOutput:
        """The output of one class's file, as ``export`` writes one."""
        return ExportOutput(self.format, self.file(name), force=self.force,
                            pin_filenames=self.pin_filenames)  # fmt: skip


@value
class ClassExport:
    """One class: what ``select`` chose and the export written from it."""

    choices: ClassChoices
    model: ExportModel
    written: Path

    @property
    def node(self) -> NodeClass:
        return self.choices.node

    @property
    def name(self) -> str:
        return self.choices.name


@value
class ClassesExport:
    """What :func:`export_classes` wrote."""

    targets_file: str
    format: ExportFormat
    classes: tuple[ClassExport, ...]
    written: tuple[Path, ...]
    notes: tuple[str, ...]


def export_classes(
    requests: Sequence[PackageRequest],
    request: ExportRequest,
    output: ClassesOutput,
    classes: NodeClasses,
    *,
    deps: bool = True,
) -> ClassesExport:
    """Choose *requests* for every class and write each class's export (see the module
    docstring).

    :raises ExportError: a file cannot be written (checked for every class first), a class has
        a package without a compatible wheel, the classes cannot be one pixi manifest
        (:func:`~variant_bridge.export.pixi_toml.classes.check_classes`); nothing is left behind.
    :raises ConflictingOptions, SelectionError, IndexReadError: see
        :func:`~variant_bridge.jobs.targets.select_classes`.
    """
    names = [one.name for one in classes]
    for path in dict.fromkeys(output.file(name) for name in names):
        _check_file(path, force=output.force)
    if output.format == "pixi-toml":  # what pixi refuses, before anything is chosen
        declared = [(one.name, class_declaration(one.target.env, one.name)) for one in classes]
        check_classes(classes.path, declared)
    results = select_classes(requests, classes, deps=deps)
    _check_chosen(classes.path, results)
    request = for_output(request, output.of_class(names[0]))
    contexts = {one.name: one for one in classes}
    models = each_class(
        classes,
        lambda one: class_model(request, _result(results, one.name), one, classes.path, output),
    )
    if output.format == "pixi-toml":
        return _write_manifest(request, output, classes, results, models)
    return _write_files(output, classes.path, results, models, contexts)


def _result(results: Sequence[ClassChoices], name: str) -> ClassChoices:
    return next(r for r in results if r.name == name)


def _check_file(path: Path, *, force: bool) -> None:
    """A class's file can be written: its folder is made when missing, but a file in its way,
    or the file itself without *force*, fails before anything is chosen."""
    for folder in (path.parent, *path.parent.parents):
        if folder.exists():
            if not folder.is_dir():
                raise ExportError(f"cannot write {str(path)!r}: {str(folder)!r} is not a folder")
            break
    if path.parent.is_dir():
        check_target(path, force=force)


def _check_chosen(where: str, results: Sequence[ClassChoices]) -> None:
    failed = [f"{c.files.project} {c.files.version} in class {r.name!r}"
              for r in results for c in r.failed]  # fmt: skip
    if failed:
        raise ExportError(
            f"{where}: no compatible wheel for {', '.join(failed)}; nothing was written "
            "(`variant-bridge select --targets` lists each file's reason)"
        )


def class_model(
    request: ExportRequest,
    result: ClassChoices,
    one: NodeContext,
    where: str,
    output: ClassesOutput,
) -> ExportModel:
    """The export of what ``select`` chose for one class: its Python and toolkit on the conda
    side, the host requirements of its variant wheels, every wheel pinned to its file; its
    platform the class's own (:func:`~variant_bridge.export.platform.class_declaration`)."""
    target = result.target
    chosen = [c for c in result.choices if c.selected is not None]
    env = replace(
        target.env,
        conda_packages=(),
        python_packages=tuple(_distribution(c) for c in chosen),
        origin=f"class {result.name} of {where}",
    )
    version = target.python.version
    name = f"{request.name}-{result.name}" if request.name else result.name
    if output.format == "pixi-toml":
        name = request.name or output.manifest.absolute().parent.name or "cluster"
    model = build_export(
        env,
        name=name,
        origins=tuple(_origin(c, one.ctx.downloads) for c in chosen),
        requested_specs=(f"python={version.major}.{version.minor}",),
        channel_order=CHANNELS,
        pinning=Pinning(
            request.pin, request.every_wheel, request.allow_unpinned, hashes=request.hashes
        ),
        host_requirements=request.host_requirements,
        index_options=index_options(one.ctx.sources),
        producer=request.producer,
        strict_host_requirements=request.strict_host_requirements,
    )
    declaration = class_declaration(env, result.name, model.host_requirements)
    return replace(model, platform_declaration=declaration)


def _distribution(choice: PackageChoice) -> PythonDistribution:
    candidate = choice.selected
    assert candidate is not None
    return PythonDistribution(
        choice.files.project,
        choice.files.version,
        variant=candidate.variant,
        requires=choice.requirements or (),
        location=candidate.url,
    )


def _origin(choice: PackageChoice, downloads: Downloads) -> WheelOrigin:
    """The chosen file with its sha256: the index's, else the local file's, else the bytes
    fetched (hash-checked as every fetched file is)."""
    candidate: Candidate | None = choice.selected
    assert candidate is not None
    path = url_to_path(candidate.url) if candidate.url.startswith("file:") else None
    sha256 = candidate.sha256
    if sha256 is None:
        sha256 = file_sha256(path) if path is not None else downloads.sha256(candidate)
    size = candidate.size if candidate.size is not None or path is None else path.stat().st_size
    return WheelOrigin(choice.files.project, choice.files.version, candidate.label,
                       candidate.url, sha256, candidate.source, size=size)  # fmt: skip


def _write_files(
    output: ClassesOutput,
    where: str,
    results: Sequence[ClassChoices],
    models: Sequence[ExportModel],
    contexts: dict[str, NodeContext],
) -> ClassesExport:
    """Each class's file in its folder; on a failure, the folders this call made are removed."""
    made: list[Path] = []
    done: list[tuple[ClassExport, ExportResult]] = []
    try:
        for result, model in zip(results, models, strict=True):
            target = output.of_class(result.name)
            assert target.path is not None
            made += _missing(target.path.parent)
            target.path.parent.mkdir(parents=True, exist_ok=True)
            written = write_model(model, target, contexts[result.name].ctx.downloads)
            done.append((ClassExport(result, written.model, target.path), written))
    except BaseException:
        for folder in reversed(made):
            shutil.rmtree(folder, ignore_errors=True)
        raise
    notes = [f"class {c.name!r}: {n}" for c, w in done for n in w.notes]
    return ClassesExport(where, output.format, tuple(c for c, _ in done),
                         tuple(c.written for c, _ in done), tuple(notes))  # fmt: skip


def _missing(folder: Path) -> list[Path]:
    """*folder* and its ancestors that do not exist yet, outermost first."""
    missing = [f for f in (folder, *folder.parents) if not f.exists()]
    return missing[::-1][:1]  # removing the outermost removes the rest


def _write_manifest(
    request: ExportRequest,
    output: ClassesOutput,
    classes: NodeClasses,
    results: Sequence[ClassChoices],
    models: Sequence[ExportModel],
) -> ClassesExport:
    """One manifest: the classes checked as pixi checks them, each class's variant wheels copied
    to ``variant-wheels/<class>/`` beside it, then the manifest written (the copies removed
    again if it cannot be)."""
    manifest = output.manifest
    folder = manifest.absolute().parent
    named = [(r.name, replace(m, base_dir=str(folder))) for r, m in zip(results, models,
                                                                          strict=True)]  # fmt: skip
    check_classes(classes.path, [(n, m.platform_declaration) for n, m in named])
    for _, model in named:
        check_declarable(model)  # the strict mode: before any wheel is copied
    with contextlib.ExitStack() as stack:
        made = _missing(folder)
        folder.mkdir(parents=True, exist_ok=True)
        stack.callback(_remove_if_empty, made)
        copied = []
        for name, model in named:
            if output.pin_filenames:
                copied.append((name, model))
                continue
            copies = copied_wheels(
                model,
                folder / DEFAULT_WHEELS_DIR / name,
                relative_to=folder,
                overwrite=output.force,
                downloads=classes.shared.downloads,
            )
            copied.append((name, stack.enter_context(copies)))
        text = render_classes(classes.path, named[0][1].name, request.producer, copied)
        write_export(manifest, text, force=output.force)
    announced = [f"class {n!r}: {a}" for n, m in copied if (a := copies_announcement(m))]
    done = tuple(ClassExport(r, m, manifest) for r, (_, m) in zip(results, copied, strict=True))
    return ClassesExport(classes.path, output.format, done, (manifest,),
                         (*class_notes(copied), *announced))  # fmt: skip


def _remove_if_empty(folders: Sequence[Path]) -> None:
    for folder in folders:
        with contextlib.suppress(OSError):
            folder.rmdir()


def describe(exported: ClassesExport) -> list[str]:
    """One line per file written (what ``export`` says on stderr)."""
    if exported.format == "pixi-toml":
        names = ", ".join(quote(c.name) for c in exported.classes)
        return [f"wrote {exported.written[0]}: {len(exported.classes)} platforms ({names})"]
    return [f"wrote {c.written}: class {c.name!r}, {_count(c.model)}" for c in exported.classes]


def _count(model: ExportModel) -> str:
    packages, variants = len(model.pip), sum(1 for p in model.pip if p.label is not None)
    return (
        f"{packages} PyPI package{'s' if packages != 1 else ''} "
        f"({variants} variant wheel{'s' if variants != 1 else ''})"
    )
