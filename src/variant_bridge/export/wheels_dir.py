"""``--wheels-dir``: copy each pinned variant wheel to its non-variant filename
(:attr:`WheelFilename.base`, what ``variant-bridge install`` hands to pip), which pip and uv
without wheel-variant support accept, and point the export at the copies. A wheel whose
``Requires-Dist`` carries variant markers (torch's ``variant_label == 'cuda12.8'`` pins) is copied
with those markers decided for its variant (:mod:`variant_bridge.indexes.installable`), since pip
and uv refuse them, and the export pins the copy's sha256; any other wheel is copied byte for
byte. The header names the original files with their own sha256. Each copy is atomic and
hash-checked against the original's pin; a failure removes the copies and directories made so
far, and :func:`copied_wheels` also when the export written after them fails (docs/share.md,
"Installing without wheel-variant support", "Nothing lost").
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from urllib.parse import unquote, urlsplit

from variant_bridge.errors import (
    ExportError,
    HashMismatch,
    InvalidWheelFilename,
    NotRegularFileError,
    UnsafeArchive,
    VariantBridgeError,
)
from variant_bridge.export._atomic import AfterChunk, copy_atomic, regular_target
from variant_bridge.export.model import (
    VARIANT_FILENAMES_NOTE,
    ExportModel,
    PipRequirement,
    relative_reference,
)
from variant_bridge.filenames import WheelFilename
from variant_bridge.indexes import Candidate, Downloads, file_sha256, url_to_path
from variant_bridge.indexes.archive import UNREADABLE
from variant_bridge.indexes.installable import decided_metadata, write_with_metadata
from variant_bridge.markers import VariantValues
from variant_bridge.properties import VariantDescription, VariantProperty

__all__ = [
    "DEFAULT_WHEELS_DIR",
    "copied_wheels",
    "copies_announcement",
    "copy_wheels",
    "relative_reference",
]

DEFAULT_WHEELS_DIR = "variant-wheels"
"""The folder beside the written file that receives the installable copies by default (not
``wheels/``, a common name for the ``--find-links`` directory itself, whose non-variant builds
carry the very names the copies take)."""


def _filename(url: str) -> WheelFilename:
    name = unquote(urlsplit(url).path.rsplit("/", 1)[-1])
    try:
        return WheelFilename.parse(name)
    except InvalidWheelFilename as e:
        raise ExportError(f"cannot copy {url}: {e}") from e


def _source(requirement: PipRequirement, url: str, downloads: Downloads) -> Path:
    """A local file with the wheel's bytes: the file itself, or a hash-checked download
    through the command's downloads (the file its origin lookup fetched, if it did)."""
    if url.startswith("file:"):
        path = url_to_path(url)
        if not path.is_file():
            raise ExportError(
                f"cannot copy {requirement.name} {requirement.version} "
                f"[{requirement.label}]: {path} does not exist any more"
            )
        return path
    candidate = Candidate(_filename(url), url, url, requirement.sha256)
    try:
        return downloads.get(candidate)
    except VariantBridgeError as e:
        raise ExportError(f"cannot copy {requirement.name} {requirement.version}: {e}") from e


def _copy(
    requirement: PipRequirement,
    directory: Path,
    *,
    overwrite: bool | Collection[Path],
    after_chunk: AfterChunk | None,
    downloads: Downloads,
) -> tuple[Path, str]:
    assert requirement.url is not None
    url = requirement.url
    target = directory / _filename(url).base
    source = _source(requirement, url, downloads)
    wheel = f"{requirement.name} {requirement.version} [{requirement.label}]"
    metadata = _decided_metadata(requirement, source, wheel)
    try:
        if metadata is not None:
            sha256 = _write_decided(
                source, target, metadata, requirement.sha256, overwrite=overwrite, wheel=wheel
            )
        else:
            sha256 = requirement.sha256 or file_sha256(source)
            if not _in_place(target, sha256, overwrite=overwrite, wheel=wheel):
                sha256 = copy_atomic(
                    source, target, sha256=requirement.sha256, overwrite=True,
                    after_chunk=after_chunk,
                )  # fmt: skip
    except HashMismatch as e:
        raise ExportError(
            f"cannot copy {wheel}: {e.source} has sha256 {e.actual}, but the export pins "
            f"{e.expected} (nothing was copied)"
        ) from e
    except NotRegularFileError as e:
        raise ExportError(f"cannot copy {wheel} to {str(target)!r}: it is {e.kind}") from e
    except UnsafeArchive as e:
        raise ExportError(f"cannot copy {wheel}: {e}") from e
    except UNREADABLE as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else e
        raise ExportError(f"cannot copy {wheel} to {str(target)!r}: {reason}") from e
    return target, sha256


def _in_place(target: Path, sha256: str, *, overwrite: bool | Collection[Path], wheel: str) -> bool:
    """Whether *target* already holds the bytes with *sha256* (nothing to copy).

    :raises ExportError: it holds other bytes and may not be replaced (no ``--force``).
    """
    if not target.is_file():
        return False
    existing = file_sha256(target)
    if existing == sha256:
        return True
    if not (overwrite is True or (overwrite and target in overwrite)):
        raise ExportError(
            f"{str(target)!r} exists with other content (sha256 {existing}); pass "
            f"--force to replace it with {wheel}"
        )
    return False


def _values(requirement: PipRequirement) -> VariantValues:
    """The variant variables of a pinned variant wheel: its label and properties."""
    try:
        properties = [VariantProperty.parse(p) for p in requirement.properties]
        return VariantValues.of(VariantDescription.of(properties, requirement.label))
    except VariantBridgeError:  # properties the wheel declares unsorted or twice: the label
        return VariantValues(label=requirement.label or "")


def _decided_metadata(requirement: PipRequirement, source: Path, wheel: str) -> bytes | None:
    try:
        return decided_metadata(source, _values(requirement))
    except VariantBridgeError as e:
        raise ExportError(f"cannot copy {wheel}: {e}") from e
    except (*UNREADABLE, UnicodeDecodeError) as e:
        raise ExportError(f"cannot copy {wheel}: {source} is not a readable wheel ({e})") from e


def _write_decided(
    source: Path,
    target: Path,
    metadata: bytes,
    pinned: str | None,
    *,
    overwrite: bool | Collection[Path],
    wheel: str,
) -> str:
    """The copy of a wheel with variant markers: the original checked against its pin, the copy
    written beside *target* and renamed into place (unless the same bytes are there already);
    returns the copy's sha256.

    :raises HashMismatch: *source* does not have the *pinned* sha256 (nothing written).
    """
    regular_target(target)
    actual = file_sha256(source)
    if pinned is not None and actual != pinned.lower():
        raise HashMismatch(str(source), pinned.lower(), actual)
    partial = target.with_name(f".{target.name}.{secrets.token_hex(4)}.part")
    try:
        write_with_metadata(source, partial, metadata)
        sha256 = file_sha256(partial)
        if not _in_place(target, sha256, overwrite=overwrite, wheel=wheel):
            os.replace(partial, target)
        return sha256
    finally:
        partial.unlink(missing_ok=True)


def copy_wheels(
    model: ExportModel,
    directory: str | os.PathLike[str],
    *,
    relative_to: str | os.PathLike[str],
    overwrite: bool | Collection[Path] = False,
    after_chunk: AfterChunk | None = None,
    downloads: Downloads,
) -> ExportModel:
    """Copy every pinned variant wheel of *model* into *directory* under its non-variant
    filename, and return the model with its pip lines / pixi paths pointing at the copies.

    :param relative_to: the directory of the exported file (pixi paths are relative to it).
    :param overwrite: replace a file of the same name with other bytes (``--force``); or only
        these files (absolute paths): the copies a manifest's own entries name, which an
        update replaces when the build it pins changed.
    :param downloads: what fetches a remote wheel: the command's (its deadlines, caps, log and
        cache, and the files it fetched already).
    :raises ExportError: a wheel file is gone, its bytes do not have the pinned sha256, or a copy
        cannot be written; the copies and directories made before are removed again.
    """
    with copied_wheels(
        model,
        directory,
        relative_to=relative_to,
        overwrite=overwrite,
        after_chunk=after_chunk,
        downloads=downloads,
    ) as copied:
        return copied


@contextmanager
def copied_wheels(
    model: ExportModel,
    directory: str | os.PathLike[str],
    *,
    relative_to: str | os.PathLike[str],
    overwrite: bool | Collection[Path] = False,
    after_chunk: AfterChunk | None = None,
    downloads: Downloads,
) -> Iterator[ExportModel]:
    """:func:`copy_wheels` for the length of a ``with`` block that writes the export: when the
    block fails, the copies (and directories) this call created are removed, so a failed export
    leaves nothing behind. Copies that were already there are kept; a file replaced with
    *overwrite* stays replaced (its old bytes are gone).

    :raises ExportError: as :func:`copy_wheels`.
    """
    copied, created = _copy_all(
        model,
        directory,
        relative_to,
        overwrite=overwrite,
        after_chunk=after_chunk,
        downloads=downloads,
    )
    try:
        yield copied
    except BaseException:
        _remove(created)
        raise


def _missing_directories(folder: Path) -> list[Path]:
    """*folder* and its ancestors that do not exist yet, outermost first."""
    missing: list[Path] = []
    for path in (folder, *folder.parents):
        if path.exists():
            break
        missing.append(path)
    return missing[::-1]


def _remove(created: list[Path]) -> None:
    """Remove what a copy created, newest first; a directory only when it is empty."""
    for path in reversed(created):
        with contextlib.suppress(OSError):
            if path.is_dir() and not path.is_symlink():
                path.rmdir()
            else:
                path.unlink()


def _copy_all(
    model: ExportModel,
    directory: str | os.PathLike[str],
    relative_to: str | os.PathLike[str],
    *,
    overwrite: bool | Collection[Path],
    after_chunk: AfterChunk | None,
    downloads: Downloads,
) -> tuple[ExportModel, list[Path]]:
    """The model pointing at the copies, and the directories and files this call created."""
    pinned = [p for p in model.pip if p.url is not None and p.label is not None]
    if not pinned:
        return model, []
    folder = Path(directory).absolute()
    created = _missing_directories(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        _remove(created)
        raise ExportError(f"cannot create the wheels directory {str(folder)!r}: {e}") from e
    base = Path(relative_to).absolute()
    copies: dict[str, tuple[Path, str]] = {}
    try:
        for requirement in pinned:
            target = folder / _filename(requirement.url or "").base
            existed = target.exists()
            copies[requirement.name] = _copy(
                requirement,
                folder,
                overwrite=overwrite,
                after_chunk=after_chunk,
                downloads=downloads,
            )
            if not existed:
                created.append(target)
    except BaseException:
        _remove(created)
        raise
    pip = [
        replace(
            requirement,
            sha256=requirement.sha256 or copies[requirement.name][1],
            copy_sha256=copies[requirement.name][1],
            copy=str(copies[requirement.name][0]),
            copy_relative=relative_reference(copies[requirement.name][0], base),
            size=copies[requirement.name][0].stat().st_size,
        )
        if requirement.name in copies
        else requirement
        for requirement in model.pip
    ]
    notes = tuple(n for n in model.notes if n != VARIANT_FILENAMES_NOTE)
    return replace(model, pip=tuple(pip), notes=notes, wheels_dir=str(folder)), created


def copies_announcement(model: ExportModel) -> str | None:
    """What the copies beside the file cost, said on stderr (not in the file): a variant wheel
    can be gigabytes (torch: 0.9-2.5 GB). ``None`` when nothing was copied."""
    copied = [p for p in model.pip if p.copy is not None]
    if not copied:
        return None
    total = sum(p.size or 0 for p in copied)
    count = f"{len(copied)} variant wheel{'s' if len(copied) != 1 else ''}"
    folder = model.local_reference(model.wheels_dir) if model.wheels_dir else model.wheels_dir
    return (
        f"copied {count} ({_size(total)}) into {folder}, under plain wheel names, so that "
        "pip and uv without wheel-variant support install them; --no-copy pins the original "
        "files (URL or path, with their sha256) instead"
    )


def _size(size: int) -> str:
    for unit, factor in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if size >= factor:
            return f"{size / factor:.1f} {unit}"
    return f"{size} bytes"
