"""Paths and sizes taken from archives, checked once, here, before anything of them is written.

A wheel's member names, its ``RECORD`` entries, its entry points (``console_scripts`` names
become files in ``bin/``), its ``.data/scripts`` files, and a conda package's ``paths.json``
entries, tar members and link targets all end up as paths under some root (``site-packages``,
a prefix). Each is accepted only when it stays there: relative, no ``..``, no empty or ``.``
component, no backslash, drive letter or control character, and a link's target inside the root
too. A zip is also held to caps on its member count, total uncompressed size, per-member
compression ratio and entry points, so that a bomb is refused from its directory, by its
figures, before a byte of it is inflated (docs/security.md, "Archives").

``convert`` reads wheels through :class:`WheelArchive`; ``solve --prefix`` checks the conda
packages it installs with :func:`member_path` and :func:`link_target`.
"""

from __future__ import annotations

import csv
import io
import re
import stat
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from variant_bridge._values import value
from variant_bridge.errors import UnsafeArchive, clip, quote
from variant_bridge.indexes.local import open_zip

__all__ = [
    "LIMITS",
    "UNREADABLE",
    "ArchiveLimits",
    "EntryPoint",
    "WheelArchive",
    "check_wheel_archive",
    "entry_point_name",
    "link_target",
    "member_path",
]

UNREADABLE = (OSError, zipfile.BadZipFile, zlib.error, EOFError)
"""What reading a damaged zip raises: a bad directory, a member whose deflate stream is corrupt
(``zlib.error``, which is none of the others), a file cut short."""

_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f]")
_DRIVE_RE = re.compile(r"[A-Za-z]:")
_SCRIPT_GROUPS = ("console_scripts", "gui_scripts")
_LINK_TARGET_MAX = 4096
_TEXT_MAX = 16 * 1024 * 1024  # RECORD and entry_points.txt, like METADATA (indexes/members.py)


@value
class ArchiveLimits:
    """The caps a zip is held to (docs/security.md lists them).

    :param members: entries in the zip's directory.
    :param total: their uncompressed sizes together, in bytes.
    :param ratio: uncompressed / compressed size of one member larger than *ratio_floor*.
    :param entry_points: entries of ``entry_points.txt``, all groups together.
    """

    members: int = 200_000
    total: int = 32 * 1024**3
    ratio: int = 200
    ratio_floor: int = 1024 * 1024
    entry_points: int = 10_000


LIMITS = ArchiveLimits()
"""The caps in force: above every published wheel (torch's CUDA wheels: about 15,000 members,
3 GiB uncompressed, ratios under 20)."""


def _refuse(archive: str, what: str) -> UnsafeArchive:
    return UnsafeArchive(f"{clip(archive)}: {what}: refused")


def member_path(name: str, *, archive: str) -> str:
    """*name* (a member, a ``RECORD`` or ``paths.json`` entry) when it stays under its root,
    without a trailing ``/``.

    :raises UnsafeArchive: it is empty, absolute, has a drive letter, a backslash, a control
        character, or an empty, ``.`` or ``..`` component (naming *archive* and the path).
    """
    path = name[:-1] if name.endswith("/") else name
    why = None
    if not path:
        why = "an empty path"
    elif _CONTROL_RE.search(path):
        why = "a control character"
    elif "\\" in path:
        why = "a backslash"
    elif path.startswith("/"):
        why = "an absolute path"
    elif _DRIVE_RE.match(path):
        why = "a drive letter"
    elif ".." in path.split("/"):
        why = "a '..' component"
    elif any(part in ("", ".") for part in path.split("/")):
        why = "an empty or '.' component"
    if why is not None:
        raise _refuse(archive, f"member {quote(name)} has {why} (it would land outside its root)")
    return path


def link_target(path: str, target: str, *, archive: str) -> None:
    """Check that a link at *path* (already a :func:`member_path`) pointing to *target* stays
    under the root: a relative target whose ``..`` never climbs above it.

    :raises UnsafeArchive: an absolute or escaping target (naming both).
    """
    depth = len(path.split("/")) - 1  # the link's own directory
    escapes = not target or target.startswith("/") or "\\" in target
    escapes = escapes or bool(_CONTROL_RE.search(target) or _DRIVE_RE.match(target))
    for part in target.split("/"):
        if escapes:
            break
        if part == "..":
            depth -= 1
            escapes = depth < 0
        elif part not in ("", "."):
            depth += 1
    if escapes:
        raise _refuse(
            archive, f"link {quote(path)} points to {quote(target)}, outside the package's root"
        )


def entry_point_name(name: str, *, archive: str) -> str:
    """A ``console_scripts``/``gui_scripts`` name, which becomes a file name in ``bin/``.

    :raises UnsafeArchive: empty, ``.``/``..``, or holding a separator or control character.
    """
    if name in ("", ".", "..") or "/" in name or "\\" in name or _CONTROL_RE.search(name):
        raise _refuse(archive, f"entry point {quote(name)} is not a file name")
    return name


@value
class EntryPoint:
    """One line of ``entry_points.txt``: ``[group]`` then ``name = value``."""

    group: str
    name: str
    value: str

    @property
    def is_script(self) -> bool:
        return self.group in _SCRIPT_GROUPS


def _entry_points(lines: Iterator[str], *, archive: str, cap: int) -> tuple[EntryPoint, ...]:
    """Parse ``entry_points.txt`` line by line (INI: ``[group]``, ``name = value``, ``#``/``;``
    comments), refusing at the cap instead of holding every entry."""
    found: list[EntryPoint] = []
    group = ""
    for raw in lines:
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            group = line[1:-1].strip()
            continue
        name, sep, target = line.partition("=")
        if not sep or not group:
            raise _refuse(archive, f"entry_points.txt line {quote(line)} is not 'name = value'")
        if len(found) >= cap:
            raise _refuse(archive, f"more than {cap} entry points")
        point = EntryPoint(group, name.strip(), target.strip())
        if point.is_script:
            entry_point_name(point.name, archive=archive)
        found.append(point)
    return tuple(found)


def _is_link(info: zipfile.ZipInfo) -> bool:
    return stat.S_ISLNK(info.external_attr >> 16)


class WheelArchive:
    """A wheel opened and checked whole before any member is used::

        with WheelArchive(path) as wheel:
            for info in wheel.files:
                with wheel.open(info) as stream: ...

    On opening: every member name (:func:`member_path`), no duplicates, the caps of *limits*,
    one top-level ``*.dist-info``, every ``RECORD`` path, every entry point and every link
    member's target. Members are then streamed, never read whole.

    :raises UnsafeArchive: a path or a cap (naming the wheel and the figure).
    :raises zipfile.BadZipFile, OSError: not a zip, unreadable.
    """

    def __init__(self, path: str | Path, *, limits: ArchiveLimits = LIMITS) -> None:
        self.path = Path(path)
        self.limits = limits
        self.name = self.path.name
        self._zip = open_zip(self.path)  # a FIFO: refused, not waited on
        try:
            self.files, self.dist_info = self._check_members()
            self.entry_points = self._check_texts()
        except BaseException:
            self._zip.close()
            raise

    def __enter__(self) -> WheelArchive:
        return self

    def __exit__(self, *exc: object) -> None:
        self._zip.close()

    @property
    def data_dir(self) -> str:
        """``name-1.0.data``: the wheel's ``.data`` directory (it may not exist)."""
        return self.dist_info.removesuffix(".dist-info") + ".data"

    def open(self, info: zipfile.ZipInfo) -> IO[bytes]:
        """A stream of one member's bytes (at most its declared size: zipfile stops there)."""
        return self._zip.open(info)

    def read_text(self, member: str) -> str | None:
        """A small text member (``entry_points.txt``), capped; ``None`` when absent."""
        try:
            info = self._zip.getinfo(member)
        except KeyError:
            return None
        return self._text(info)

    def _text(self, info: zipfile.ZipInfo) -> str:
        if info.file_size > _TEXT_MAX:
            raise _refuse(
                self.name, f"{info.filename} is {info.file_size} bytes, more than {_TEXT_MAX}"
            )
        return self._zip.read(info).decode("utf-8", "replace")

    def _check_members(self) -> tuple[tuple[zipfile.ZipInfo, ...], str]:
        infos = self._zip.infolist()
        limits = self.limits
        if len(infos) > limits.members:
            raise _refuse(self.name, f"{len(infos)} members, more than {limits.members}")
        total = 0
        seen: set[str] = set()
        files: list[zipfile.ZipInfo] = []
        tops: set[str] = set()
        for info in infos:
            path = member_path(info.filename, archive=self.name)
            if path in seen:
                raise _refuse(self.name, f"member {quote(path)} appears twice")
            seen.add(path)
            total += info.file_size
            if total > limits.total:
                raise _refuse(
                    self.name, f"more than {limits.total} bytes uncompressed (at {quote(path)})"
                )
            size, packed = info.file_size, max(info.compress_size, 1)
            if size > limits.ratio_floor and size > limits.ratio * packed:
                raise _refuse(
                    self.name,
                    f"member {quote(path)} inflates {packed} bytes to {size} "
                    f"(ratio {size // packed}, more than {limits.ratio})",
                )
            if info.is_dir():
                continue
            if _is_link(info):
                with self._zip.open(info) as stream:
                    target = stream.read(_LINK_TARGET_MAX).decode("utf-8", "replace")
                link_target(path, target, archive=self.name)
            head = path.split("/", 1)[0]
            if head.endswith(".dist-info") and "/" in path:
                tops.add(head)
            files.append(info)
        if len(tops) != 1:
            what = "no" if not tops else f"{len(tops)}"
            raise _refuse(self.name, f"{what} top-level .dist-info directories (a wheel has one)")
        return tuple(files), tops.pop()

    def _check_texts(self) -> tuple[EntryPoint, ...]:
        record = self.read_text(f"{self.dist_info}/RECORD")
        try:
            for row in csv.reader(io.StringIO(record or "")):
                if row and row[0]:
                    member_path(row[0], archive=f"{self.name}!RECORD")
        except csv.Error as e:
            raise _refuse(self.name, f"unreadable RECORD ({e})") from e
        text = self.read_text(f"{self.dist_info}/entry_points.txt")
        if text is None:
            return ()
        return _entry_points(
            iter(text.splitlines()), archive=self.name, cap=self.limits.entry_points
        )


def check_wheel_archive(path: str | Path, *, limits: ArchiveLimits = LIMITS) -> None:
    """Open *path* as a :class:`WheelArchive` (every check) and close it again: for a caller
    that hands the wheel to an installer.

    :raises UnsafeArchive: a path or a cap; also a file that is not a readable zip.
    """
    try:
        with WheelArchive(path, limits=limits):
            pass
    except UNREADABLE as e:
        raise UnsafeArchive(f"{clip(Path(path).name)}: not a readable wheel ({e}): refused") from e
