"""Local files that something else may have put there: regular files only, read up to a cap.

The one place every command reads a local input through (a conda-meta record, a dist-info's
files, a pixi manifest or lock, a targets file, a channel's ``repodata.json``, a wheel given by
path, a maintainer's YAML or TOML). A FIFO would block a read (or the open) forever, ``/dev/zero``
never ends, a directory is no document: the file is opened without blocking, checked to be a
regular file with :func:`os.fstat` on the open descriptor (no race with a rename), and read up to
a cap. Each refusal is :class:`~variant_bridge.errors.NotRegularFileError`, one line naming the
path and what it is (``…/x.yaml: a FIFO, not a regular file``); a file over its cap is an
``OSError`` with ``EFBIG``, refused from its size before anything is read. Files another reader
opens (rattler, py-rattler-build) are checked first with :func:`check_regular`, zip archives
opened with :func:`open_zip`.
"""

from __future__ import annotations

import errno
import os
import stat
import zipfile
from pathlib import Path

from variant_bridge.errors import NotRegularFileError

__all__ = [
    "MAX_HEADER",
    "MAX_LOCAL_DOCUMENT",
    "check_regular",
    "file_kind",
    "open_zip",
    "read_header",
    "read_regular",
    "read_text",
    "size_text",
]

MAX_LOCAL_DOCUMENT = 256 * 1024 * 1024
"""The largest local document read (a conda-meta record of a big package is a few MB; a real
pixi.lock of thousands of packages ~20 MB)."""
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


def size_text(limit: int) -> str:
    """A cap in words: ``64 MiB``, ``16 GiB``."""
    return f"{limit // (1 << 30)} GiB" if limit >= 1 << 30 else f"{limit >> 20} MiB"


def _too_large(path: str | os.PathLike[str], limit: int) -> OSError:
    return OSError(errno.EFBIG, f"larger than {size_text(limit)}", os.fspath(path))


def check_regular(path: str | os.PathLike[str], *, max_bytes: int | None = None) -> os.stat_result:
    """Refuse *path* unless it is a regular file (after links) of at most *max_bytes*: for files
    another reader opens by name. Returns its status.

    :raises NotRegularFileError: a FIFO, a device, a directory... (naming it).
    :raises OSError: missing (``ENOENT``), unreadable, or larger than *max_bytes* (``EFBIG``).
    """
    info = os.stat(path)
    kind = file_kind(info.st_mode)
    if kind is not None:
        raise NotRegularFileError(os.fspath(path), kind)
    if max_bytes is not None and info.st_size > max_bytes:
        raise _too_large(path, max_bytes)
    return info


def _open_regular(path: str | os.PathLike[str]) -> tuple[int, os.stat_result]:
    """A descriptor of *path* opened without blocking, checked to be a regular file."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        kind = file_kind(info.st_mode)
        if kind is not None:
            raise NotRegularFileError(os.fspath(path), kind)
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def open_zip(path: str | os.PathLike[str]) -> zipfile.ZipFile:
    """The zip archive (a wheel) at *path*, refused first unless a regular file: a FIFO named
    ``x.whl`` would block the zip reader's open forever.

    :raises NotRegularFileError, OSError: as :func:`check_regular`; :raises zipfile.BadZipFile:
        not a zip.
    """
    check_regular(path)
    return zipfile.ZipFile(path)


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
                raise OSError(errno.EFBIG, f"header block longer than {max_bytes} bytes", str(path))
        return data
    finally:
        os.close(fd)


def read_regular(path: str | os.PathLike[str], *, max_bytes: int = MAX_LOCAL_DOCUMENT) -> bytes:
    """The bytes of the regular file *path*.

    :raises NotRegularFileError: *path* is a FIFO, a device, a directory... (naming it).
    :raises OSError: it cannot be opened or read, or it is larger than *max_bytes*
        (``EFBIG``).
    """
    fd, info = _open_regular(path)
    try:
        if info.st_size > max_bytes:
            raise _too_large(path, max_bytes)
        chunks: list[bytes] = []
        size = 0
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            size += len(chunk)
            if size > max_bytes:  # a file that grows while read
                raise _too_large(path, max_bytes)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_text(path: str | os.PathLike[str], *, max_bytes: int = MAX_LOCAL_DOCUMENT) -> str:
    """The UTF-8 text of the regular file *path*.

    :raises NotRegularFileError, OSError: as :func:`read_regular`.
    :raises UnicodeDecodeError: it is not UTF-8 text.
    """
    return read_regular(path, max_bytes=max_bytes).decode("utf-8")
