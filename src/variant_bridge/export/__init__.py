"""Write a mixed conda + PyPI environment back as ``environment.yml`` or a pixi manifest.

Three steps, each usable alone:

1. :func:`prepare_export` reads the environment (:func:`~variant_bridge.detect.detect_environment`),
   its ``conda-meta/history`` or lock channels, and where each variant wheel came from, and builds
   an :class:`ExportModel` (pure data);
2. :func:`render` prints the model as ``environment-yml`` or ``pixi-toml`` text, and
   :func:`update_manifest_text` applies it to an existing pixi.toml / pyproject.toml text;
3. :func:`write_export` / :func:`update_manifest` write files atomically (never a half-written
   file; never an existing file without ``force``; never over a device or a FIFO).

:func:`copy_wheels` (``--wheels-dir``) copies the pinned variant wheels under their non-variant
filenames, so that pip and uv without wheel-variant support can install the export;
:func:`copied_wheels` does it for the length of a ``with`` block and removes the copies it made
when the block fails (the export is written last, after every check).

>>> model = prepare_export(prefix="/opt/envs/gpu", find_links=["wheels/"])  # doctest: +SKIP
>>> print(render(model, "environment-yml"))  # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from variant_bridge.errors import DetectionError, ExportError, InvalidTarget
from variant_bridge.export.model import (
    ExportModel,
    IndexOptions,
    PipRequirement,
    build_export,
    requested_from_records,
)
from variant_bridge.export.wheels_dir import copied_wheels, copy_wheels

if TYPE_CHECKING:
    from variant_bridge.export._atomic import NotRegularFileError

__all__ = [
    "FORMATS",
    "ExportFormat",
    "ExportModel",
    "IndexOptions",
    "PipRequirement",
    "UpdateResult",
    "build_export",
    "check_target",
    "copied_wheels",
    "copy_wheels",
    "lock_channels",
    "prepare_export",
    "read_manifest",
    "render",
    "update_manifest",
    "update_manifest_text",
    "write_export",
]

ExportFormat = Literal["environment-yml", "pixi-toml"]
FORMATS: tuple[ExportFormat, ...] = ("environment-yml", "pixi-toml")


def __dir__() -> list[str]:
    return __all__


def lock_channels(lockfile: str | os.PathLike[str], environment: str | None) -> tuple[str, ...]:
    """The channel URLs of a pixi.lock environment, highest priority first.

    :raises DetectionError: the lock file cannot be read.
    """
    import rattler

    try:
        lock = rattler.LockFile.from_path(Path(lockfile))
        env = lock.environment(environment or "default")
        channels = env.channels() if env is not None else []
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # pyo3 panics derive from BaseException
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise DetectionError(f"{lockfile}: not a readable lock file: {first}") from e
    return tuple(str(c) for c in channels)


def _default_name(prefix: Path | None, lockfile: Path | None, environment: str | None) -> str:
    """The prefix's directory name, or the lock's project (and environment) name, made a name
    conda accepts (``/opt/my env`` -> ``my-env``)."""
    from variant_bridge.export.validate import safe_name

    if prefix is not None:
        return safe_name(prefix.resolve().name or "base")
    assert lockfile is not None
    project = lockfile.resolve().parent.name or "workspace"
    return safe_name(project if environment in (None, "default") else f"{project}-{environment}")


def prepare_export(
    *,
    prefix: str | os.PathLike[str] | None = None,
    lockfile: str | os.PathLike[str] | None = None,
    environment: str | None = None,
    platform: str | None = None,
    targets: Iterable[str] = (),
    env: Mapping[str, str] | None = None,
    name: str | None = None,
    from_history: bool = False,
    builds: bool = True,
    host_requirements: bool = True,
    allow_unpinned: bool = False,
    find_links: Sequence[str] = (),
    index_url: str | None = None,
    extra_index_urls: Sequence[str] = (),
    producer: str = "variant-bridge export",
    cache_dir: Path | None = None,
) -> ExportModel:
    """Read an environment and build its export model.

    :param prefix: a conda prefix; ``None`` with no *lockfile* means ``$CONDA_PREFIX``.
    :param from_history: export only requested specs (``conda-meta/history``, else the
        ``requested_specs`` rattler/pixi record per package); needs a prefix.
    :param find_links: directories / pages to find the variant wheels' files in.
    :raises InvalidTarget: conflicting options, or nothing to export.
    :raises DetectionError: the prefix, a record, ``history`` or the lock file cannot be read.
    :raises ExportError: a variant wheel cannot be pinned (unless *allow_unpinned*).
    """
    from variant_bridge.detect import detect_environment
    from variant_bridge.export.history import read_history
    from variant_bridge.export.origins import complete_locked, establish_origins
    from variant_bridge.export.validate import check_find_links, check_name, check_url

    # The file's own inputs first: a bad one fails before the environment is read.
    if name is not None:
        check_name(name)
    if index_url is not None:
        check_url(index_url, option="--index-url")
    for url in extra_index_urls:
        check_url(url, option="--extra-index-url")
    for location in find_links:
        check_find_links(location)
    variables = os.environ if env is None else env
    # Detection reads $CONDA_PREFIX itself when no prefix is given, so that its errors name the
    # variable (not a --prefix the user never passed); the history and the name need it here too.
    active = prefix
    if prefix is None and lockfile is None:
        active = variables.get("CONDA_PREFIX") or None
        if active is None:
            raise InvalidTarget(
                "nothing to export: pass --prefix or --lockfile (or activate an environment)"
            )
    if from_history and lockfile is not None:
        raise InvalidTarget(
            "--from-history needs a prefix: a pixi.lock records no requested specs "
            "(the pixi.toml that produced it has them)"
        )
    snapshot = detect_environment(
        prefix=prefix,
        lockfile=lockfile,
        environment=environment,
        platform=platform,
        targets=tuple(targets),
        env=variables,
    )
    requested: tuple[str, ...] | None = None
    channel_order: tuple[str, ...] = ()
    notes: list[str] = list(snapshot.notes)
    if active is not None:
        history = read_history(active)
        if history is not None:
            channel_order = history.channels()
        if from_history:
            requested = history.requested_specs() if history is not None else ()
            if not requested:
                requested = requested_from_records(snapshot.conda_packages)
                if requested:
                    notes.append(
                        "conda-meta/history records no requests; used the requested specs "
                        "rattler/pixi stored in conda-meta"
                    )
    else:
        assert lockfile is not None
        channel_order = lock_channels(lockfile, environment)
        snapshot = complete_locked(snapshot, Path(lockfile).parent)
    origins = establish_origins(
        snapshot,
        find_links=tuple(find_links),
        index_urls=(*([index_url] if index_url else []), *extra_index_urls),
        cache_dir=cache_dir,
    )
    return build_export(
        snapshot,
        name=name
        if name is not None
        else _default_name(
            Path(active) if active is not None else None,
            Path(lockfile) if lockfile is not None else None,
            environment,
        ),
        origins=origins,
        requested_specs=requested,
        channel_order=channel_order,
        builds=builds,
        host_requirements=host_requirements,
        allow_unpinned=allow_unpinned,
        # Local find-links made absolute: the file is read from elsewhere (pip runs in the
        # environment.yml's directory, pixi resolves paths against the manifest's).
        index_options=IndexOptions(
            index_url, tuple(extra_index_urls), tuple(_absolute(f) for f in find_links)
        ),
        producer=producer,
        extra_notes=notes,
    )


def _absolute(location: str) -> str:
    """A local find-links directory as an absolute path; URLs unchanged."""
    if "://" in location or location.startswith("file:"):
        return location
    return os.path.abspath(location)


def render(model: ExportModel, format: ExportFormat) -> str:
    """The text of a new file in *format*."""
    if format == "environment-yml":
        from variant_bridge.export import environment_yml

        return environment_yml.render(model)
    if format == "pixi-toml":
        from variant_bridge.export import pixi_toml

        return pixi_toml.render(model)
    raise ExportError(f"unknown export format {format!r}: expected one of {', '.join(FORMATS)}")


def check_target(path: str | os.PathLike[str], *, force: bool = False) -> None:
    """Fail early, before anything is read, when *path* cannot be written: it exists and is not
    a regular file (after symbolic links), it exists and *force* is false, or its directory does
    not exist.

    :raises ExportError: naming *path*.
    """
    from variant_bridge.export._atomic import NotRegularFileError, regular_target

    try:
        target = regular_target(path)
    except NotRegularFileError as e:
        raise ExportError(_not_regular(path, e)) from e
    if not force and target.exists():
        raise ExportError(f"{os.fspath(path)!r} exists; pass --force to overwrite it")
    if not target.parent.is_dir():
        raise ExportError(
            f"cannot write {os.fspath(path)!r}: {str(target.parent)!r} "
            f"{'is not a directory' if target.parent.exists() else 'does not exist'} "
            "(nothing was changed)"
        )


def _not_regular(path: str | os.PathLike[str], error: NotRegularFileError) -> str:
    return (
        f"cannot write {os.fspath(path)!r}: it is {error.kind}, not a regular file "
        "(nothing was changed)"
    )


def write_export(path: str | os.PathLike[str], text: str, *, force: bool = False) -> None:
    """Write *text* to *path* atomically; an existing file only with *force*.

    :raises ExportError: *path* exists and *force* is false, *path* is not a regular file
        (``/dev/full``, a FIFO), or it cannot be written (the old file, if any, is left
        untouched).
    """
    from variant_bridge.export._atomic import NotRegularFileError, write_atomic

    try:
        write_atomic(path, text, overwrite=force)
    except NotRegularFileError as e:
        raise ExportError(_not_regular(path, e)) from e
    except FileExistsError as e:
        raise ExportError(f"{os.fspath(path)!r} exists; pass --force to overwrite it") from e
    except OSError as e:
        raise ExportError(
            f"cannot write {os.fspath(path)!r}: {e.strerror or e} (nothing was changed)"
        ) from e


def update_manifest_text(text: str, model: ExportModel, *, path: str) -> str:
    """*text* of the pixi.toml or pyproject.toml at *path* with the export applied."""
    from variant_bridge.export import pixi_toml

    return pixi_toml.update(text, model, kind=pixi_toml.manifest_kind(path), path=path)


@dataclass(frozen=True, slots=True)
class UpdateResult:
    """What :func:`update_manifest` did: whether the file changed, and notes for the user."""

    changed: bool
    notes: tuple[str, ...] = ()


def read_manifest(path: str | os.PathLike[str]) -> str:
    """The text of the pixi.toml / pyproject.toml that ``--update`` will edit, read and parsed
    before anything else is done, so that a missing or broken manifest fails first.

    :raises ExportError: the file is missing, not a regular file, unreadable or not TOML.
    """
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    from variant_bridge.export._atomic import NotRegularFileError, regular_target

    target = Path(path)
    try:
        regular_target(target)  # reading a FIFO would block for ever
    except NotRegularFileError as e:
        raise ExportError(_not_regular(path, e)) from e
    try:
        text = target.read_text(encoding="utf-8")
    except FileNotFoundError as e:
        raise ExportError(
            f"{str(target)!r} does not exist; --update edits an existing pixi.toml or "
            "pyproject.toml (use -o to write a new one)"
        ) from e
    except (OSError, UnicodeDecodeError) as e:
        raise ExportError(f"cannot read {str(target)!r}: {e}") from e
    try:
        tomlkit.parse(text)
    except TOMLKitError as e:
        raise ExportError(f"cannot update {str(target)!r}: not valid TOML ({e})") from e
    return text


def update_manifest(
    path: str | os.PathLike[str], model: ExportModel, *, text: str | None = None
) -> UpdateResult:
    """Apply the export to an existing pixi.toml / pyproject.toml in place, atomically.

    :param text: the file's text as :func:`read_manifest` returned it; ``None`` reads it now.
    :raises ExportError: the file is missing, not a regular file, unreadable, not TOML, or
        cannot be written.
    """
    from variant_bridge.export import pixi_toml

    target = Path(path)
    if text is None:
        text = read_manifest(target)
    result = pixi_toml.apply(
        text, model, kind=pixi_toml.manifest_kind(str(target)), path=str(target)
    )
    if result.text == text:
        return UpdateResult(False, result.notes)
    write_export(target, result.text, force=True)
    return UpdateResult(True, result.notes)
