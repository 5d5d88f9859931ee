"""Atomic file writes: a reader sees the old file or the new one, never a half-written one.

The content goes to a temporary file in the target's own directory, is fsynced, takes the mode of
the file it replaces and is renamed over the target (or hard-linked into place when overwriting is
not allowed, which fails atomically if the target appeared meanwhile); any failure before the rename
removes the temporary file. A target that is not a regular file once symbolic links are resolved
(``/dev/full``, a FIFO) is refused (docs/share.md, "Nothing lost").

>>> import tempfile, pathlib
>>> target = pathlib.Path(tempfile.mkdtemp()) / "environment.yml"
>>> write_atomic(target, "name: demo\\n")
>>> target.read_text()
'name: demo\\n'
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import secrets
import stat
from collections.abc import Callable, Iterable
from pathlib import Path

from variant_bridge.errors import HashMismatch, NotRegularFileError

__all__ = [
    "CHUNK_SIZE",
    "AfterChunk",
    "copy_atomic",
    "regular_target",
    "write_atomic",
]

CHUNK_SIZE = 64 * 1024
"""Bytes written per ``write`` call; an *after_chunk* callback runs after each one."""

AfterChunk = Callable[[Path, int], None]
"""Called with ``(temporary path, bytes written so far)`` after every chunk: progress, or a
failure injected by a test (a full disk, a crash mid-write)."""


_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def regular_target(path: str | os.PathLike[str]) -> Path:
    """*path* with symbolic links resolved, checked to be a regular file or absent.

    :raises NotRegularFileError: it exists and is something else (``/dev/full``, a FIFO, ...).
    """
    target = Path(os.path.realpath(path))
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        return target
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "a special file")
        raise NotRegularFileError(os.fspath(path), kind)
    return target


def write_atomic(
    path: str | os.PathLike[str],
    content: str | bytes,
    *,
    overwrite: bool = True,
    encoding: str = "utf-8",
    after_chunk: AfterChunk | None = None,
) -> None:
    """Write *content* to *path* atomically.

    A symbolic link at *path* is followed, so the file it points to is replaced and the link
    survives. A new file gets the usual ``0o666 & ~umask`` mode; a replaced file keeps its mode.

    :param overwrite: when false, an existing *path* is left alone and :class:`FileExistsError` is
        raised (checked atomically at the final step, not only up front).
    :raises NotRegularFileError: *path* (after symbolic links) exists and is not a regular file.
    :raises FileExistsError: *path* exists and *overwrite* is false.
    :raises OSError: the directory is not writable, the disk is full, ...; the old file is intact.
    """
    data = content.encode(encoding) if isinstance(content, str) else bytes(content)
    chunks = (data[start : start + CHUNK_SIZE] for start in range(0, len(data), CHUNK_SIZE))
    _replace(path, chunks, overwrite=overwrite, after_chunk=after_chunk)


def copy_atomic(
    source: str | os.PathLike[str],
    path: str | os.PathLike[str],
    *,
    sha256: str | None = None,
    overwrite: bool = True,
    after_chunk: AfterChunk | None = None,
) -> str:
    """Copy the file *source* to *path* atomically, byte for byte, hashing it on the way.

    :param sha256: the hex digest the bytes must have; on a mismatch nothing is written.
    :returns: the sha256 of the bytes copied.
    :raises HashMismatch: the copied bytes do not have *sha256* (*path* is left as it was).
    :raises NotRegularFileError: *source* or *path* is not a regular file.
    :raises FileExistsError: *path* exists and *overwrite* is false.
    :raises OSError: *source* cannot be read, or *path* cannot be written.
    """
    regular_target(source)  # opening a FIFO would block
    digest = hashlib.sha256()
    with open(source, "rb") as handle:

        def chunks() -> Iterable[bytes]:
            while chunk := handle.read(CHUNK_SIZE):
                digest.update(chunk)
                yield chunk

        def verify() -> None:
            if sha256 is not None and digest.hexdigest() != sha256.lower():
                raise HashMismatch(os.fspath(source), sha256.lower(), digest.hexdigest())

        _replace(path, chunks(), overwrite=overwrite, before_rename=verify, after_chunk=after_chunk)
    return digest.hexdigest()


def _replace(
    path: str | os.PathLike[str],
    chunks: Iterable[bytes],
    *,
    overwrite: bool,
    before_rename: Callable[[], None] | None = None,
    after_chunk: AfterChunk | None = None,
) -> None:
    target = regular_target(path)
    if not overwrite and target.exists():
        raise FileExistsError(errno.EEXIST, "file exists", str(path))
    try:
        old_mode: int | None = target.stat().st_mode & 0o7777
    except FileNotFoundError:
        old_mode = None
    temporary = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as handle:
            written = 0
            for chunk in chunks:
                handle.write(chunk)
                written += len(chunk)
                if after_chunk is not None:
                    after_chunk(temporary, written)
            handle.flush()
            os.fsync(handle.fileno())
        if before_rename is not None:
            before_rename()
        if old_mode is not None:
            # os.open applied the umask; a replaced file keeps exactly the mode it had.
            os.chmod(temporary, old_mode)
        if overwrite:
            # Checked again just before the rename: a FIFO created meanwhile is not replaced.
            regular_target(target)
            os.replace(temporary, target)
        else:
            # link() refuses an existing name atomically: no window in which a file that
            # appeared after the check above could be clobbered.
            _link_or_replace(temporary, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
    _fsync_directory(target.parent)


def _link_or_replace(temporary: Path, target: Path) -> None:
    try:
        os.link(temporary, target)
    except FileExistsError:
        raise
    except OSError as e:
        # File systems without hard links (some FUSE, FAT): fall back to check-then-rename.
        if e.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
            raise
        if target.exists():
            raise FileExistsError(errno.EEXIST, "file exists", str(target)) from None
        os.replace(temporary, target)
        return
    os.unlink(temporary)


def _fsync_directory(directory: Path) -> None:
    # Makes the rename itself durable; not every platform or file system can open a directory.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
