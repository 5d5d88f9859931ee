"""The ``export`` use case: read an environment (detection, its history or lock channels), establish
where its variant wheels came from, build the export model and write it (docs/share.md). The
request is checked once, here, before the environment is read; the output target is checked before
that, and the wheels are copied last, after every check ("Nothing lost").
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from variant_bridge.detect import detect_environment
from variant_bridge.detect.lockfile import pixi_environment_prefix
from variant_bridge.environment import Environment
from variant_bridge.errors import InvalidTarget
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
from variant_bridge.export.history import lock_channels, read_history
from variant_bridge.export.origins import complete_locked, establish_origins
from variant_bridge.export.pixi_toml.render import check_declarable
from variant_bridge.export.validate import (
    check_find_links,
    check_name,
    check_url,
    is_url,
    safe_name,
)
from variant_bridge.export.wheels_dir import DEFAULT_WHEELS_DIR, copies_announcement
from variant_bridge.indexes.transport import Transport

__all__ = [
    "EnvironmentSource",
    "ExportOutput",
    "ExportRequest",
    "ExportResult",
    "ExportSource",
    "prepare_export",
    "run_export",
]


class EnvironmentSource(Protocol):
    """Where the environment is read from, as detection takes it: a prefix (``None`` with no
    lock file: ``$CONDA_PREFIX``) or a pixi.lock environment and platform, plus declared facts.
    :class:`ExportSource` is one; so is the CLI's ``EnvironmentOptions``."""

    @property
    def prefix(self) -> str | os.PathLike[str] | None: ...
    @property
    def lockfile(self) -> str | os.PathLike[str] | None: ...
    @property
    def environment(self) -> str | None: ...
    @property
    def platform(self) -> str | None: ...
    @property
    def targets(self) -> Sequence[str]: ...


@dataclass(frozen=True, slots=True)
class ExportSource:
    """An :class:`EnvironmentSource` for library callers: ``ExportSource(prefix="/opt/env")``."""

    prefix: str | os.PathLike[str] | None = None
    lockfile: str | os.PathLike[str] | None = None
    environment: str | None = None
    platform: str | None = None
    targets: Sequence[str] = ()


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
    :param indexes: where the variant wheels can be found (``--find-links`` as given: relative
        directories are made absolute in the file).
    :param environ: the process environment detection reads (``CONDA_PREFIX``,
        ``CONDA_OVERRIDE_*``, ``NV_VARIANT_PROVIDER_FORCE_*``); ``None``: :data:`os.environ`.
    :param project_dir: the folder of the manifest written (a pixi workspace is named after it
        when the prefix is not a pixi project's); ``None``: the current directory.
    :param hashes: establish every wheel's file and hash, for environment.yml's pip
        hash-checking mode (``run_export`` sets it for that format).
    :param strict_host_requirements: every host requirement a requirement, also those the
        receiving client cannot check by itself (``--strict-host-requirements``).
    """

    source: EnvironmentSource = field(default_factory=ExportSource)
    name: str | None = None
    from_history: bool = False
    pin: PinMode = "exact"
    every_wheel: bool = False
    host_requirements: bool = True
    allow_unpinned: bool = False
    indexes: IndexOptions = field(default_factory=IndexOptions)
    producer: str = "variant-bridge export"
    cache_dir: Path | None = None
    """The download cache (``None``: none)."""
    transport: Transport | None = None
    """The command's HTTP requests (``--verbose``, progress); ``None``: a plain one."""
    environ: Mapping[str, str] | None = None
    project_dir: Path | None = None
    hashes: bool = False
    strict_host_requirements: bool = False


@dataclass(frozen=True, slots=True)
class ExportOutput:
    """Where the export goes: stdout (no *path*, no *update*), a new file, or an existing
    manifest edited in place. The variant wheels are copied, under names every installer
    accepts, to *wheels_dir*, by default to ``variant-wheels/`` beside a written file; with
    *pin_filenames* (or to stdout without *wheels_dir*) the file names the variant files
    themselves. The combination is the caller's to check (the CLI's usage errors)."""

    format: ExportFormat = "environment-yml"
    path: Path | None = None
    update: Path | None = None
    force: bool = False
    wheels_dir: Path | None = None
    pin_filenames: bool = False

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


def prepare_export(request: ExportRequest) -> ExportModel:
    """Read the environment *request* names and build its export model.

    :raises InvalidTarget: a bad name, URL or find-links location, ``--from-history`` with a
        lock file, or nothing to export.
    :raises DetectionError: the prefix, a record, ``history`` or the lock file cannot be read.
    :raises ExportError: a variant wheel cannot be pinned (unless *allow_unpinned*).
    """
    _check(request)
    source = request.source
    snapshot = detect_environment(
        prefix=source.prefix,
        lockfile=source.lockfile,
        environment=source.environment,
        platform=source.platform,
        targets=tuple(source.targets),
        env=request.environ,
    )
    if snapshot.prefix is None and source.lockfile is None:
        raise InvalidTarget(
            "nothing to export: pass --prefix or --lockfile (or activate an environment)"
        )
    requested: tuple[str, ...] | None = None
    notes = list(snapshot.notes)
    if snapshot.prefix is not None:
        channel_order, requested = _requests(snapshot, request.from_history, notes)
    else:
        assert source.lockfile is not None
        channel_order = lock_channels(source.lockfile, source.environment)
        installed = pixi_environment_prefix(source.lockfile, source.environment)
        snapshot = complete_locked(snapshot, Path(source.lockfile).parent, installed=installed)
    indexes = request.indexes
    origins = establish_origins(
        snapshot,
        find_links=indexes.find_links,
        index_urls=(*([indexes.index_url] if indexes.index_url else []), *indexes.extra_index_urls),
        cache_dir=request.cache_dir,
        every_wheel=request.every_wheel or request.hashes,
        transport=request.transport,
    )
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
        # Local find-links made absolute: the file is read from elsewhere (pip runs in the
        # environment.yml's directory, pixi resolves paths against the manifest's).
        index_options=IndexOptions(
            indexes.index_url,
            indexes.extra_index_urls,
            tuple(f if is_url(f) else os.path.abspath(f) for f in indexes.find_links),
        ),
        producer=request.producer,
        extra_notes=notes,
        strict_host_requirements=request.strict_host_requirements,
    )


def run_export(
    request: ExportRequest, output: ExportOutput, *, after_chunk: AfterChunk | None = None
) -> ExportResult:
    """The ``export`` command: check the target, read the manifest to update, build the model,
    copy the wheels, write the file.

    :param after_chunk: passed to every atomic write (progress; a test's injected failure).
    :raises ExportError: the target cannot be written, the manifest cannot be read or edited, a
        wheel cannot be copied, a pixi platform cannot be declared; nothing is left behind.
    """
    # Fail before reading the environment or copying a wheel: the output target is checked (and
    # again, atomically, when written), the manifest to update is read and parsed.
    if output.format == "pylock" and output.copies_dir() is None:
        raise InvalidTarget(
            "a pylock.toml cannot name variant wheel files (packaging and uv refuse their "
            "names): write it to a file (-o pylock.toml) so the wheels are copied beside it, "
            "or pass --wheels-dir DIR"
        )
    if output.path is not None:
        check_target(output.path, force=output.force)
    manifest = read_manifest(output.update) if output.update is not None else None
    model = prepare_export(_for_output(request, output))
    destination = output.destination
    if destination is not None:
        model = replace(model, base_dir=str(destination.absolute().parent))
    if output.format == "pixi-toml":
        check_declarable(model)
    if output.update is not None and output.copies_dir() is not None:
        assert manifest is not None
        # A dry run: a table of the wrong type fails here, before any wheel is copied.
        update_manifest_text(manifest, model, path=str(output.update))
    copies: contextlib.AbstractContextManager[ExportModel] = contextlib.nullcontext(model)
    wheels_dir = output.copies_dir()
    if wheels_dir is not None:
        # Paths are relative to the written file; stdout is taken to land in the current folder.
        copies = copied_wheels(
            model,
            wheels_dir,
            relative_to=destination.absolute().parent if destination else Path.cwd(),
            overwrite=output.force,
            after_chunk=after_chunk,
            transport=request.transport,
        )
    # The copies are removed again if the export cannot be written.
    with copies as model:
        announced = tuple(a for a in (copies_announcement(model),) if a is not None)
        if output.update is not None:
            updated = update_manifest(output.update, model, text=manifest, after_chunk=after_chunk)
            notes = (*model.notes, *updated.notes, *announced)
            return ExportResult(model, output.format, output.update, updated.changed, notes)
        if output.path is not None:
            text = render(model, output.format)
            write_export(output.path, text, force=output.force, after_chunk=after_chunk)
        notes = (*model.notes, *format_notes(model, output.format), *announced)
        return ExportResult(model, output.format, output.path, True, notes)


def _for_output(request: ExportRequest, output: ExportOutput) -> ExportRequest:
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


def _check(request: ExportRequest) -> None:
    """The file's own inputs first: a bad one fails before the environment is read."""
    if request.name is not None:
        check_name(request.name)
    if request.indexes.index_url is not None:
        check_url(request.indexes.index_url, option="--index-url")
    for url in request.indexes.extra_index_urls:
        check_url(url, option="--extra-index-url")
    for location in request.indexes.find_links:
        check_find_links(location)
    if request.from_history and request.source.lockfile is not None:
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
    lockfile = request.source.lockfile
    assert lockfile is not None
    project = Path(lockfile).resolve().parent.name or "workspace"
    return _project_name(project, request.source.environment)


def _project_name(project: str, environment: str | None) -> str:
    return safe_name(project if environment in (None, "default") else f"{project}-{environment}")
