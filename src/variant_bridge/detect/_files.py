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

__all__ = ["MAX_HEADER", "MAX_LOCAL_DOCUMENT", "file_kind", "read_header", "read_regular"]

MAX_LOCAL_DOCUMENT = 256 * 1024 * 1024
"""The largest local document read (a conda-meta record of a big package is a few MB)."""
MAX_HEADER = 1024 * 1024
"""The largest header block of an installed ``METADATA`` read (torch's is ~3 KB; its body, the
long description, is never read)."""
_CHUNK = 64 * 1024
# The blank line that ends an RFC 822 header block, with LF or CRLF line ends.
_HEADER_ENDS = (b"\n\n", b"\n\r\n")

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


def _open_regular(path: Path) -> tuple[int, os.stat_result]:
    """A descriptor of *path* opened without blocking, checked to be a regular file."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        kind = file_kind(info.st_mode)
        if kind is not None:
            raise NotRegularFileError(str(path), kind)
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def read_header(path: Path, *, max_bytes: int = MAX_HEADER) -> bytes:
    """The header block of the regular file *path* (an RFC 822 ``METADATA``): its bytes up to
    the first blank line, or the whole file when it has none; the rest is never read.

    :raises NotRegularFileError: *path* is a FIFO, a device, a directory...
    :raises OSError: it cannot be read, or its header block is longer than *max_bytes*
        (``EFBIG``).
    """
    fd, _ = _open_regular(path)
    try:
        data = b""
        while chunk := os.read(fd, _CHUNK):
            start = max(0, len(data) - 2)  # a blank line may straddle two chunks
            data += chunk
            ends = [i for i in (data.find(e, start) for e in _HEADER_ENDS) if i >= 0]
            if ends:
                return data[: min(ends) + 1]
            if len(data) > max_bytes:
                import errno

                raise OSError(errno.EFBIG, f"header block longer than {max_bytes} bytes", str(path))
        return data
    finally:
        os.close(fd)


def read_regular(path: Path, *, max_bytes: int = MAX_LOCAL_DOCUMENT) -> bytes:
    """The bytes of the regular file *path*.

    :raises NotRegularFileError: *path* is a FIFO, a device, a directory... (naming it).
    :raises OSError: it cannot be opened or read, or it is larger than *max_bytes*
        (``EFBIG``).
    """
    fd, info = _open_regular(path)
    try:
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
