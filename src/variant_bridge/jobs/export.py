"""The ``export`` use case: the command's context (its target environment, read by detection;
its sources; its one ``Downloads``), the environment's history or lock channels, where its variant
wheels came from (looked up in the context's sources, in uv's order, fetched through its
downloads), the export model, and the file written (docs/share.md). The request is checked once,
here, before the environment is read; the output target is checked before that, and the wheels
are copied last, after every check ("Nothing lost"), each the file its lookup fetched, if it did.
"""

from __future__ import annotations

import contextlib
import enum
import os
from dataclasses import dataclass, replace
from pathlib import Path

from variant_bridge.detect.lockfile import pixi_environment_prefix
from variant_bridge.environment import Environment
from variant_bridge.errors import ConflictingOptions, InvalidTarget
from variant_bridge.export import (
    ExportFormat,
    ExportModel,
    IndexOptions,
    PinMode,
    Pinning,
    build_export,
    check_target,
    copied_wheels,
    format_notes,
    read_manifest,
    render,
    update_manifest,
    update_manifest_text,
    write_export,
)
from variant_bridge.export._atomic import AfterChunk
from variant_bridge.export.dependencies import requested_from_records
from variant_bridge.export.files import own_copies
from variant_bridge.export.history import lock_channels, read_history
from variant_bridge.export.origins import Places, complete_locked, establish_origins
from variant_bridge.export.pixi_toml.render import check_declarable
from variant_bridge.export.validate import check_name, is_url, safe_name
from variant_bridge.export.wheels_dir import DEFAULT_WHEELS_DIR, copies_announcement
from variant_bridge.indexes import Downloads
from variant_bridge.jobs.context import Context, Sources

__all__ = [
    "ExportOutput",
    "ExportRequest",
    "ExportResult",
    "OutputConflict",
    "for_output",
    "index_options",
    "prepare_export",
    "run_export",
    "write_model",
]


@dataclass(frozen=True, slots=True)
class ExportRequest:
    """What to export, and what the exported file says (``prepare_export``'s inputs).

    :param name: the environment / workspace name; ``None``: the prefix's or the lock project's.
    :param from_history: only the requested specs (``conda-meta/history``, else the
        ``requested_specs`` rattler/pixi store per record); needs a prefix.
    :param pin: how the packages the export owns are pinned (``--pin``); variant wheels always
        name their file, the toolkit its ``major.minor``.
    :param every_wheel: pin every PyPI package to its file, not only the variant wheels (what a
        pylock.toml needs; ``run_export`` sets it for that format).
    :param project_dir: the folder of the manifest written (a pixi workspace is named after it
        when the prefix is not a pixi project's); ``None``: the current directory.
    :param hashes: establish every wheel's file and hash, for environment.yml's pip
        hash-checking mode (``run_export`` sets it for that format).
    :param strict_host_requirements: every host requirement a requirement, also those the
        receiving client cannot check by itself (``--strict-host-requirements``).
    :param toolkit_only: of the conda side, only the CUDA toolkit pin: the manifest that made
        the environment states the rest (``pixi variant add`` records the PyPI side it
        installed, not the conda packages pixi did).
    """

    name: str | None = None
    from_history: bool = False
    pin: PinMode = "exact"
    every_wheel: bool = False
    host_requirements: bool = True
    allow_unpinned: bool = False
    producer: str = "variant-bridge export"
    project_dir: Path | None = None
    hashes: bool = False
    strict_host_requirements: bool = False
    toolkit_only: bool = False

    def __post_init__(self) -> None:
        # The file's own inputs are checked when the request is made: before anything is read.
        if self.name is not None:
            check_name(self.name)


class OutputConflict(enum.Enum):
    """Which output settings exclude each other (:class:`ExportOutput`)."""

    UPDATE_AND_OUTPUT = "update and output"
    UPDATE_NOT_PIXI = "update of another format"
    PYLOCK_PINNING_FILENAMES = "pylock with pin_filenames"
    PYLOCK_WITHOUT_COPIES = "pylock without copies"
    PIN_FILENAMES_AND_WHEELS_DIR = "pin_filenames and wheels_dir"
    PYPROJECT_AS_OUTPUT = "pyproject.toml as output"
    FEATURE_WITHOUT_UPDATE = "feature without update"


@dataclass(frozen=True, slots=True)
class ExportOutput:
    """Where the export goes: stdout (no *path*, no *update*), a new file, or an existing
    manifest edited in place. The variant wheels are copied, under names every installer
    accepts, to *wheels_dir*, by default to ``variant-wheels/`` beside a written file; with
    *pin_filenames* (or to stdout without *wheels_dir*) the file names the variant files
    themselves. A combination that cannot be written is refused when the value is made
    (:class:`~variant_bridge.errors.ConflictingOptions`, kind :class:`OutputConflict`: the
    CLI's usage errors). With *update*, *feature* names the pixi feature whose tables get the
    entries (``None``: the top level, pixi's default feature)."""

    format: ExportFormat = "environment-yml"
    path: Path | None = None
    update: Path | None = None
    force: bool = False
    wheels_dir: Path | None = None
    pin_filenames: bool = False
    feature: str | None = None

    def __post_init__(self) -> None:
        pylock = self.format == "pylock"
        rules = (
            (self.update is not None and self.path is not None,
             OutputConflict.UPDATE_AND_OUTPUT,
             "--update edits FILE in place; it cannot be combined with -o"),
            (self.update is not None and self.format != "pixi-toml",
             OutputConflict.UPDATE_NOT_PIXI,
             "--update edits pixi manifests only (pixi.toml, pyproject.toml)"),
            (pylock and self.pin_filenames,
             OutputConflict.PYLOCK_PINNING_FILENAMES,
             ("--pin-filenames cannot be used with pylock.toml: packaging and uv refuse "
              "variant wheel filenames in a lock (it names installable copies)")),
            (pylock and self.path is None and self.wheels_dir is None,
             OutputConflict.PYLOCK_WITHOUT_COPIES,
             ("a pylock.toml names copies of the variant wheels: write it with -o FILE (the "
              "copies go beside it) or pass --wheels-dir DIR")),
            (self.pin_filenames and self.wheels_dir is not None,
             OutputConflict.PIN_FILENAMES_AND_WHEELS_DIR,
             "--pin-filenames pins the variant files; it excludes --wheels-dir"),
            (self.path is not None and self.path.name == "pyproject.toml",
             OutputConflict.PYPROJECT_AS_OUTPUT,
             "to add [tool.pixi] to a pyproject.toml, use --update pyproject.toml"),
            (self.feature is not None and self.update is None,
             OutputConflict.FEATURE_WITHOUT_UPDATE,
             "a pixi feature is a table of a manifest: it needs --update"),
        )  # fmt: skip
        for broken, kind, text in rules:
            if broken:
                raise ConflictingOptions(kind, text)

    @property
    def destination(self) -> Path | None:
        """The file written or updated (``None``: stdout)."""
        return self.update or self.path

    def copies_dir(self) -> Path | None:
        """Where the variant wheels are copied (``None``: not copied)."""
        if self.pin_filenames:
            return None
        if self.wheels_dir is not None or self.destination is None:
            return self.wheels_dir
        return self.destination.parent / DEFAULT_WHEELS_DIR


@dataclass(frozen=True, slots=True)
class ExportResult:
    """What :func:`run_export` did.

    :param model: the export (pointing at the copies with ``wheels_dir``).
    :param written: the file written or updated; ``None``: nothing written (print :attr:`text`).
    :param changed: ``False`` when an updated manifest was already up to date.
    :param notes: the model's notes and the update's.
    """

    model: ExportModel
    format: ExportFormat
    written: Path | None
    changed: bool
    notes: tuple[str, ...]

    @property
    def text(self) -> str:
        """The new file's text (what goes to stdout when nothing was written)."""
        return render(self.model, self.format)


def prepare_export(request: ExportRequest, ctx: Context) -> ExportModel:
    """Build the export model of the context's environment (its target, read once when the
    context was opened); variant wheels not pinned by their records are looked up in the
    context's sources.

    :raises InvalidTarget: a bad name, ``--from-history`` with a lock file, or nothing to export.
    :raises DetectionError: a record, ``history`` or the lock file cannot be read.
    :raises ExportError: a variant wheel cannot be pinned (unless *allow_unpinned*).
    """
    snapshot = ctx.target.env
    _check(request, snapshot)
    if snapshot.prefix is None and snapshot.lockfile is None:
        raise InvalidTarget(
            "nothing to export: pass --prefix or --lockfile (or activate an environment)"
        )
    requested: tuple[str, ...] | None = None
    notes = list(snapshot.notes)
    if snapshot.prefix is not None:
        channel_order, requested = _requests(snapshot, request.from_history, notes)
    else:
        assert snapshot.lockfile is not None
        channel_order = lock_channels(snapshot.lockfile, snapshot.lock_environment)
        installed = pixi_environment_prefix(snapshot.lockfile, snapshot.lock_environment)
        snapshot = complete_locked(snapshot, Path(snapshot.lockfile).parent, installed=installed)
    sources = ctx.sources
    places = Places(sources.locations, ctx.downloads, ctx.target.python.version, sources.strategy)
    origins = establish_origins(snapshot, places, every_wheel=request.every_wheel or request.hashes)
    return build_export(
        snapshot,
        name=request.name if request.name is not None else _default_name(snapshot, request),
        origins=origins,
        requested_specs=requested,
        channel_order=channel_order,
        pinning=Pinning(
            request.pin, request.every_wheel, request.allow_unpinned, hashes=request.hashes
        ),
        host_requirements=request.host_requirements,
        index_options=index_options(sources),
        producer=request.producer,
        extra_notes=notes,
        strict_host_requirements=request.strict_host_requirements,
        toolkit_only=request.toolkit_only,
    )


def index_options(sources: Sources) -> IndexOptions:
    """The sources as the file names them for pip and pixi: local find-links made absolute (the
    file is read from elsewhere: pip runs in the environment.yml's directory, pixi resolves
    paths against the manifest's)."""
    default = sources.default
    return IndexOptions(
        default.url if default is not None else None,
        tuple(i.url for i in sources.extra_indexes),
        tuple(
            f.location if is_url(f.location) else os.path.abspath(f.location)
            for f in sources.find_links
        ),
    )


def run_export(
    request: ExportRequest,
    output: ExportOutput,
    ctx: Context,
    *,
    after_chunk: AfterChunk | None = None,
) -> ExportResult:
    """The ``export`` command: check the target, read the manifest to update, build the model,
    copy the wheels, write the file.

    :param after_chunk: passed to every atomic write (progress; a test's injected failure).
    :raises ExportError: the target cannot be written, the manifest cannot be read or edited, a
        wheel cannot be copied, a pixi platform cannot be declared; nothing is left behind.
    """
    # Fail before copying a wheel: the output target is checked (and again, atomically, when
    # written), the manifest to update is read and parsed.
    if output.path is not None:
        check_target(output.path, force=output.force)
    manifest = read_manifest(output.update) if output.update is not None else None
    model = prepare_export(for_output(request, output), ctx)
    return write_model(model, output, ctx.downloads, manifest=manifest, after_chunk=after_chunk)


def write_model(
    model: ExportModel,
    output: ExportOutput,
    downloads: Downloads,
    *,
    manifest: str | None = None,
    after_chunk: AfterChunk | None = None,
) -> ExportResult:
    """Write *model* where *output* says: the platform checked, the copies of its variant wheels
    (fetched through *downloads* where remote), then the file, or the manifest updated (whose
    text *manifest* :func:`read_manifest` read). ``run_export``'s last steps; an export of
    something other than an environment (the wheels ``select`` chose for a node class) starts
    here.

    :raises ExportError: see :func:`run_export`; nothing is left behind.
    """
    destination = output.destination
    if destination is not None:
        model = replace(model, base_dir=str(destination.absolute().parent))
    if output.format == "pixi-toml":
        check_declarable(model)
    if output.update is not None and output.copies_dir() is not None:
        assert manifest is not None
        # A dry run: a table of the wrong type fails here, before any wheel is copied.
        update_manifest_text(manifest, model, path=str(output.update), feature=output.feature)
    copies: contextlib.AbstractContextManager[ExportModel] = contextlib.nullcontext(model)
    wheels_dir = output.copies_dir()
    if wheels_dir is not None:
        # A copy the manifest's own entry names is the export's: replaced when its build changed.
        overwrite: bool | frozenset[Path] = output.force
        if not overwrite and output.update is not None and manifest is not None:
            overwrite = own_copies(manifest, path=output.update)
        # Paths are relative to the written file; stdout is taken to land in the current folder.
        copies = copied_wheels(
            model,
            wheels_dir,
            relative_to=destination.absolute().parent if destination else Path.cwd(),
            overwrite=overwrite,
            after_chunk=after_chunk,
            downloads=downloads,
        )
    # The copies are removed again if the export cannot be written.
    with copies as model:
        announced = tuple(a for a in (copies_announcement(model),) if a is not None)
        if output.update is not None:
            updated = update_manifest(
                output.update, model, text=manifest, after_chunk=after_chunk, feature=output.feature
            )
            notes = (*model.notes, *updated.notes, *announced)
            return ExportResult(model, output.format, output.update, updated.changed, notes)
        if output.path is not None:
            text = render(model, output.format)
            write_export(output.path, text, force=output.force, after_chunk=after_chunk)
        notes = (*model.notes, *format_notes(model, output.format), *announced)
        return ExportResult(model, output.format, output.path, True, notes)


def for_output(request: ExportRequest, output: ExportOutput) -> ExportRequest:
    """*request* as the output needs it: a pylock.toml pins every wheel to its file; a pixi
    workspace is named after the manifest's folder."""
    if output.format == "pylock":
        request = replace(request, every_wheel=True)
    if output.format == "environment-yml":
        request = replace(request, hashes=True)
    if output.format == "pixi-toml" and request.project_dir is None:
        destination = output.destination
        folder = destination.absolute().parent if destination else Path.cwd()
        request = replace(request, project_dir=folder)
    return request


def _check(request: ExportRequest, env: Environment) -> None:
    """What the request asks of the environment (its own inputs were checked when it was made,
    the sources when the context was opened)."""
    if request.from_history and env.lockfile is not None:
        raise InvalidTarget(
            "--from-history needs a prefix: a pixi.lock records no requested specs "
            "(the pixi.toml that produced it has them)"
        )


def _requests(
    snapshot: Environment, from_history: bool, notes: list[str]
) -> tuple[tuple[str, ...], tuple[str, ...] | None]:
    """The channel order of the prefix's history, and the requested specs with *from_history*
    (the history's, else the ones rattler/pixi stored per record)."""
    assert snapshot.prefix is not None
    history = read_history(snapshot.prefix)
    channel_order = history.channels() if history is not None else ()
    if not from_history:
        return channel_order, None
    requested = history.requested_specs() if history is not None else ()
    if not requested:
        requested = requested_from_records(snapshot.conda_packages)
        if requested:
            notes.append(
                "conda-meta/history records no requests; used the requested specs "
                "rattler/pixi stored in conda-meta"
            )
    return channel_order, requested


def _default_name(snapshot: Environment, request: ExportRequest) -> str:
    """A name conda and pixi accept (``/opt/my env`` -> ``my-env``): a pixi environment's
    project (``proj/.pixi/envs/cuda`` -> ``proj-cuda``), the lock's project (and environment), a
    new pixi manifest's folder, else the prefix's directory name."""
    if snapshot.prefix is not None:
        prefix = Path(snapshot.prefix).resolve()
        if prefix.parent.name == "envs" and prefix.parent.parent.name == ".pixi":
            return _project_name(prefix.parent.parent.parent.name, prefix.name)
        if request.project_dir is not None:
            return safe_name(request.project_dir.resolve().name or "workspace")
        return safe_name(prefix.name or "base")
    lockfile = snapshot.lockfile
    assert lockfile is not None
    project = Path(lockfile).resolve().parent.name or "workspace"
    return _project_name(project, snapshot.lock_environment)


def _project_name(project: str, environment: str | None) -> str:
    return safe_name(project if environment in (None, "default") else f"{project}-{environment}")
