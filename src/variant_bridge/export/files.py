"""The files an export writes: the target checked before anything is read, the text written
atomically, a pixi manifest read, parsed and updated in place; every failure is one
:class:`ExportError` naming the file (docs/share.md, "Nothing lost").
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from variant_bridge.errors import ExportError, NotRegularFileError
from variant_bridge.export._atomic import AfterChunk, regular_target, write_atomic
from variant_bridge.export.model import ExportModel
from variant_bridge.indexes.local import MAX_LOCAL_DOCUMENT, read_text

__all__ = [
    "UpdateResult",
    "check_target",
    "own_copies",
    "read_manifest",
    "update_manifest",
    "update_manifest_text",
    "write_export",
]


@dataclass(frozen=True, slots=True)
class UpdateResult:
    """What :func:`update_manifest` did: whether the file changed, and notes for the user."""

    changed: bool
    notes: tuple[str, ...] = ()


def check_target(path: str | os.PathLike[str], *, force: bool = False) -> None:
    """Fail early, before anything is read, when *path* cannot be written: it exists and is not
    a regular file (after symbolic links), it exists and *force* is false, or its directory does
    not exist.

    :raises ExportError: naming *path*.
    """
    try:
        target = regular_target(path)
    except NotRegularFileError as e:
        raise ExportError(_not_regular(path, e)) from e
    if not force and target.exists():
        raise ExportError(f"{os.fspath(path)!r} exists; pass --force to overwrite it")
    _check_writable(path, target)
    if not target.parent.is_dir():
        raise ExportError(
            f"cannot write {os.fspath(path)!r}: {str(target.parent)!r} "
            f"{'is not a directory' if target.parent.exists() else 'does not exist'} "
            "(nothing was changed)"
        )


def write_export(
    path: str | os.PathLike[str],
    text: str,
    *,
    force: bool = False,
    after_chunk: AfterChunk | None = None,
) -> None:
    """Write *text* to *path* atomically; an existing file only with *force*.

    :param after_chunk: see :func:`~variant_bridge.export._atomic.write_atomic`.
    :raises ExportError: *path* exists and *force* is false, *path* is not a regular file
        (``/dev/full``, a FIFO), or it cannot be written (the old file, if any, is left
        untouched).
    """
    try:
        if force:
            _check_writable(path, regular_target(path))
        write_atomic(path, text, overwrite=force, after_chunk=after_chunk)
    except NotRegularFileError as e:
        raise ExportError(_not_regular(path, e)) from e
    except FileExistsError as e:
        raise ExportError(f"{os.fspath(path)!r} exists; pass --force to overwrite it") from e
    except OSError as e:
        raise ExportError(
            f"cannot write {os.fspath(path)!r}: {e.strerror or e} (nothing was changed)"
        ) from e


def read_manifest(path: str | os.PathLike[str]) -> str:
    """The text of the pixi.toml / pyproject.toml that ``--update`` will edit, read and parsed
    before anything else is done, so that a missing or broken manifest fails first.

    :raises ExportError: the file is missing, not a regular file, unreadable or not TOML.
    """
    from variant_bridge.export.pixi_toml.update import parse  # tomlkit: only for --update

    target = Path(path)
    try:
        regular_target(target)  # reading a FIFO would block for ever
    except NotRegularFileError as e:
        raise ExportError(_not_regular(path, e)) from e
    try:
        text = read_text(target, max_bytes=MAX_LOCAL_DOCUMENT)
    except NotRegularFileError as e:
        raise ExportError(_not_regular(path, e)) from e
    except FileNotFoundError as e:
        raise ExportError(
            f"{str(target)!r} does not exist; --update edits an existing pixi.toml or "
            "pyproject.toml (use -o to write a new one)"
        ) from e
    except (OSError, UnicodeDecodeError) as e:
        raise ExportError(f"cannot read {str(target)!r}: {e}") from e
    parse(text, path=str(target))
    _check_writable(path, Path(os.path.realpath(target)))
    return text


def update_manifest_text(
    text: str, model: ExportModel, *, path: str, feature: str | None = None
) -> str:
    """*text* of the pixi.toml or pyproject.toml at *path* with the export applied (to
    *feature*'s tables, see :func:`~variant_bridge.export.pixi_toml.update.apply`)."""
    from variant_bridge.export.pixi_toml.update import manifest_kind, update  # tomlkit

    return update(text, model, kind=manifest_kind(path), path=path, feature=feature)


def own_copies(text: str, *, path: str | os.PathLike[str]) -> frozenset[Path]:
    """The copies the manifest's own (marked) PyPI entries name, as absolute paths (relative
    ones from the manifest's folder): an export updating it may replace them."""
    from variant_bridge.export.pixi_toml.update import manifest_kind
    from variant_bridge.export.pixi_toml.update import own_copies as paths

    base = Path(path).absolute().parent
    named = paths(text, kind=manifest_kind(str(path)), path=str(path))
    return frozenset(Path(os.path.normpath(base / p)) for p in named)


def update_manifest(
    path: str | os.PathLike[str],
    model: ExportModel,
    *,
    text: str | None = None,
    after_chunk: AfterChunk | None = None,
    feature: str | None = None,
) -> UpdateResult:
    """Apply the export to an existing pixi.toml / pyproject.toml in place, atomically.

    :param text: the file's text as :func:`read_manifest` returned it; ``None`` reads it now.
    :param feature: the pixi feature whose tables get the entries (``None``: the top level).
    :raises ExportError: the file is missing, not a regular file, unreadable, not TOML, or
        cannot be written.
    """
    from variant_bridge.export.pixi_toml.update import apply, manifest_kind  # tomlkit

    target = Path(path)
    if text is None:
        text = read_manifest(target)
    result = apply(text, model, kind=manifest_kind(str(target)), path=str(target), feature=feature)
    if result.text == text:
        return UpdateResult(False, result.notes)
    write_export(target, result.text, force=True, after_chunk=after_chunk)
    return UpdateResult(True, result.notes)


def _check_writable(path: str | os.PathLike[str], target: Path) -> None:
    """An existing file that is read-only (no write permission bit, or none for this user) is
    refused: the atomic rename would replace it anyway, and the mode says the owner did not want
    that.

    :raises ExportError: naming *path*.
    """
    try:
        mode = target.stat().st_mode
    except FileNotFoundError:
        return
    if not mode & 0o222 or not os.access(target, os.W_OK):
        raise ExportError(
            f"cannot write {os.fspath(path)!r}: it is read-only (make it writable to let the "
            "export replace it; nothing was changed)"
        )


def _not_regular(path: str | os.PathLike[str], error: NotRegularFileError) -> str:
    return (
        f"cannot write {os.fspath(path)!r}: it is {error.kind}, not a regular file "
        "(nothing was changed)"
    )
