"""Reading small local files that something else may have put there: regular files only.

A FIFO named ``*.json`` in ``conda-meta/`` (or a device) would block :meth:`Path.read_bytes`
forever, or read without end. The file is opened without blocking, checked to be a regular file
with :func:`os.fstat` on the open descriptor (no race with a rename), and read up to a cap.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from variant_bridge.errors import NotRegularFileError

__all__ = ["MAX_LOCAL_DOCUMENT", "file_kind", "read_regular"]

MAX_LOCAL_DOCUMENT = 256 * 1024 * 1024
"""The largest local document read (a conda-meta record of a big package is a few MB)."""

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def file_kind(mode: int) -> str | None:
    """``None`` for a regular file, else what it is in words (``"a FIFO"``)."""
    if stat.S_ISREG(mode):
        return None
    return next((kind for test, kind in _KINDS if test(mode)), "not a regular file")


def read_regular(path: Path, *, max_bytes: int = MAX_LOCAL_DOCUMENT) -> bytes:
    """The bytes of the regular file *path*.

    :raises NotRegularFileError: *path* is a FIFO, a device, a directory... (naming it).
    :raises OSError: it cannot be opened or read, or it is larger than *max_bytes*
        (``EFBIG``).
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        kind = file_kind(info.st_mode)
        if kind is not None:
            raise NotRegularFileError(str(path), kind)
        if info.st_size > max_bytes:
            import errno

            raise OSError(errno.EFBIG, f"larger than {max_bytes} bytes", str(path))
        chunks: list[bytes] = []
        size = 0
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            size += len(chunk)
            if size > max_bytes:  # a file that grows while read
                import errno

                raise OSError(errno.EFBIG, f"larger than {max_bytes} bytes", str(path))
        return b"".join(chunks)
    finally:
        os.close(fd)
