"""Atomic file writes: a reader sees the old file or the new one, never a half-written one.

The new content goes to a temporary file in the target's own directory (so the final rename never
crosses a file system), is flushed and fsynced, takes the mode of the file it replaces, and is then
renamed over the target with :func:`os.replace` (or hard-linked into place when overwriting is not
allowed, which fails atomically if the target appeared meanwhile). Any failure before the rename
removes the temporary file and leaves the old file byte-for-byte intact.

>>> import tempfile, pathlib
>>> target = pathlib.Path(tempfile.mkdtemp()) / "environment.yml"
>>> write_atomic(target, "name: demo\\n")
>>> target.read_text()
'name: demo\\n'
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
from collections.abc import Callable
from pathlib import Path

__all__ = ["CHUNK_SIZE", "write_atomic"]

CHUNK_SIZE = 64 * 1024
"""Bytes written per ``write`` call; :data:`fault_hook` runs after each one."""

fault_hook: Callable[[Path, int], None] | None = None
"""Test seam: called with ``(temporary path, bytes written so far)`` after every chunk.

A test sets it (``monkeypatch.setattr(atomic, "fault_hook", ...)``) and raises from it to simulate a
full disk or a crash mid-write; production code never sets it.
"""


def write_atomic(
    path: str | os.PathLike[str],
    content: str | bytes,
    *,
    overwrite: bool = True,
    encoding: str = "utf-8",
) -> None:
    """Write *content* to *path* atomically.

    A symbolic link at *path* is followed, so the file it points to is replaced and the link
    survives. A new file gets the usual ``0o666 & ~umask`` mode; a replaced file keeps its mode.

    :param overwrite: when false, an existing *path* is left alone and :class:`FileExistsError` is
        raised (checked atomically at the final step, not only up front).
    :raises FileExistsError: *path* exists and *overwrite* is false.
    :raises OSError: the directory is not writable, the disk is full, ...; the old file is intact.
    """
    data = content.encode(encoding) if isinstance(content, str) else bytes(content)
    target = Path(os.path.realpath(path))
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
            for start in range(0, len(data), CHUNK_SIZE):
                handle.write(data[start : start + CHUNK_SIZE])
                written += len(data[start : start + CHUNK_SIZE])
                if fault_hook is not None:
                    fault_hook(temporary, written)
            handle.flush()
            os.fsync(handle.fileno())
        if old_mode is not None:
            # os.open applied the umask; a replaced file keeps exactly the mode it had.
            os.chmod(temporary, old_mode)
        if overwrite:
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
