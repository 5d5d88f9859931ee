"""Listing ``--find-links`` locations: local directories (or ``file://`` URLs) and HTML pages.

A directory lists its files flat, many projects side by side. Wheels carry no index attributes
there, so their ``Requires-Python`` is read from the ``METADATA`` inside the zip (the central
directory only, cheap even for big wheels): a find-links directory and an index serving the same
files then skip the same wheels. The finder lists lazily and reads a wheel only when its version
is considered (:func:`read_local_wheel`), so a directory of thousands of releases costs a listing.
"""

from __future__ import annotations

import os
import zipfile
import zlib
from dataclasses import replace
from pathlib import Path
from typing import IO

from packaging.utils import canonicalize_name

from variant_bridge.errors import IndexReadError
from variant_bridge.indexes._headers import Headers
from variant_bridge.indexes.candidates import IndexFile, Problem, ProblemKind
from variant_bridge.indexes.download import fetch, url_to_path
from variant_bridge.indexes.local import open_zip
from variant_bridge.indexes.members import MAX_MEMBER, MemberTooLarge
from variant_bridge.indexes.simple import parse_links_page
from variant_bridge.indexes.transport import Transport

__all__ = ["list_find_links", "location_name", "read_local_wheel", "wheel_requires_python"]

_CHUNK = 1 << 16


def location_name(location: str | os.PathLike[str]) -> str:
    """How a find-links location is named in messages: an absolute path or the URL."""
    text = os.fspath(location)
    if text.startswith(("http://", "https://")):
        return text
    if text.startswith("file:"):
        return str(url_to_path(text))
    return str(Path(text).expanduser().absolute())


def _header_block(member: IO[bytes], name: str) -> bytes:
    """The header block of a ``METADATA`` member (up to its first blank line), read in chunks
    and never past :data:`MAX_MEMBER` bytes, whatever the zip says the member's size is.

    :raises ValueError: no blank line within the cap.
    """
    block = bytearray()
    while True:
        start = max(0, len(block) - 3)  # a blank line may span two chunks
        chunk = member.read(_CHUNK)
        block += chunk
        ends = [i for i in (block.find(b"\n\n", start), block.find(b"\r\n\r\n", start)) if i >= 0]
        if ends:
            return bytes(block[: min(ends)])
        if not chunk:
            return bytes(block)  # headers only
        if len(block) > MAX_MEMBER:
            raise ValueError(
                f"{name}'s headers are larger than the {MAX_MEMBER} bytes read: refused"
            )


def wheel_requires_python(path: Path) -> str | None:
    """``Requires-Python`` from a wheel's ``*.dist-info/METADATA``; ``None`` when absent.

    Only the header block is read (a long description after it is not), and a ``METADATA``
    larger than :data:`MAX_MEMBER` is refused, as every reader of it would refuse it: the
    wheel is then not a candidate at all.

    :raises ValueError: the file is not a readable wheel zip or has no ``METADATA``.
    :raises MemberTooLarge: its ``METADATA`` is too large (with its size).
    """
    try:
        with open_zip(path) as zf:  # a FIFO: refused, not waited on
            infos = [
                i
                for i in zf.infolist()
                if i.filename.count("/") == 1 and i.filename.endswith(".dist-info/METADATA")
            ]
            if not infos:
                raise ValueError("no *.dist-info/METADATA inside")
            info = infos[0]
            if info.file_size > MAX_MEMBER:
                raise MemberTooLarge(
                    f"{info.filename} is {info.file_size} bytes, more than the {MAX_MEMBER} "
                    "read: refused",
                    info.file_size,
                )
            with zf.open(info) as member:
                block = _header_block(member, info.filename)
            headers = Headers(block.decode("utf-8", "surrogateescape"))
    except (zipfile.BadZipFile, OSError, KeyError, EOFError, zlib.error) as e:
        raise ValueError(f"not a readable wheel ({e})") from e
    value = headers.get("Requires-Python")
    text = str(value).strip() if value is not None else ""
    return text or None


def read_local_wheel(file: IndexFile) -> IndexFile:
    """*file* with the ``Requires-Python`` of its local wheel, or the problem reading it."""
    assert file.path is not None  # only local wheels are listed unread
    try:
        requires_python = wheel_requires_python(file.path)
    except MemberTooLarge as e:  # never a candidate: every reader of it would refuse it
        return replace(file, problem=Problem(ProblemKind.METADATA_REFUSED, str(e)), unread=False)
    except ValueError as e:
        return replace(file, problem=Problem(ProblemKind.UNREADABLE_WHEEL, str(e)), unread=False)
    return replace(file, requires_python=requires_python, unread=False)


def _wheel_project(filename: str) -> str:
    return canonicalize_name(filename.split("-", 1)[0])


def _list_directory(
    directory: Path, source: str, project: str | None, *, lazy: bool
) -> list[IndexFile]:
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except FileNotFoundError:
        raise IndexReadError(f"find-links directory {source!r} does not exist") from None
    except NotADirectoryError:
        raise IndexReadError(f"find-links location {source!r} is not a directory") from None
    except OSError as e:
        raise IndexReadError(f"cannot list find-links directory {source!r}: {e.strerror}") from e
    files: list[IndexFile] = []
    for entry in entries:
        if not entry.is_file() or entry.name.startswith("."):
            continue
        path = Path(entry.path).absolute()
        file = IndexFile(
            filename=entry.name,
            url=path.as_uri(),
            source=source,
            size=entry.stat().st_size,
            path=path,
            flat=True,
            unread=entry.name.endswith(".whl")
            and (project is None or _wheel_project(entry.name) == project),
        )
        files.append(file if lazy or not file.unread else read_local_wheel(file))
    return files


def list_find_links(
    location: str | os.PathLike[str],
    *,
    project: str | None = None,
    lazy: bool = False,
    transport: Transport,
) -> list[IndexFile]:
    """Every file a find-links location offers (all projects; the caller filters).

    :param location: a directory path, a ``file://`` URL of one, or an ``http(s)://`` URL of an
        HTML page of links.
    :param project: read ``Requires-Python`` only from this project's wheels (a big directory
        of other projects' wheels is then not opened); ``None``: from every wheel.
    :param lazy: read no wheel now: they are listed with ``unread`` set, for
        :func:`read_local_wheel` to read when needed.
    :param transport: the command's HTTP requests, for a page of links.
    :raises IndexReadError: the directory does not exist or the page cannot be fetched.
    """
    text = os.fspath(location)
    source = location_name(location)
    if text.startswith(("http://", "https://")):
        response = fetch(text, transport=transport)
        assert response is not None  # fetch only returns None when not_found_ok
        return parse_links_page(response, source=source)
    return _list_directory(
        Path(source), source, canonicalize_name(project) if project else None, lazy=lazy
    )
