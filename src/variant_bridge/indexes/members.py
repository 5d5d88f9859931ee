"""The two small members of a wheel the bridge reads: ``METADATA`` and ``variant.json``.

Both live in the wheel's top-level ``*.dist-info`` directory, which a wheel writes last, so for a
remote wheel one HTTP range request for its tail (:mod:`.ranges`) usually brings the zip's
central directory and both members at once: choosing among seven 1 GB variant wheels then costs
kilobytes, not gigabytes. :class:`WheelMembers` is what was read, whatever the way
(:class:`MetadataSource`); the readers of each format (:mod:`.core_metadata`,
:mod:`.variant_files`) check what they need from it. Every member is size-capped
(:data:`MAX_MEMBER`): a larger one is recorded with its size, never read into memory.
"""

from __future__ import annotations

import enum
import re
import zipfile
import zlib
from collections.abc import Mapping
from dataclasses import field
from pathlib import Path
from types import MappingProxyType

from variant_bridge._values import value
from variant_bridge.errors import InvalidMetadata
from variant_bridge.indexes.local import open_zip
from variant_bridge.metadata._fields import q_list

__all__ = [
    "MAX_MEMBER",
    "METADATA",
    "VARIANT_JSON",
    "MemberTooLarge",
    "MetadataSource",
    "WheelMembers",
    "local_members",
    "read_members",
]

MAX_MEMBER = 16 * 1024 * 1024
"""The largest ``METADATA`` or ``variant.json`` read, from any source (real ones are a few KiB)."""
METADATA = "METADATA"
VARIANT_JSON = "variant.json"

# Only a top-level .dist-info directory counts; a vendored package's copy deeper down does not.
_WANTED_RE = re.compile(r"[^/]+\.dist-info/(?:METADATA|variant\.json)")


class MemberTooLarge(InvalidMetadata):
    """A ``METADATA`` or ``variant.json`` larger than :data:`MAX_MEMBER`: refused unread, and the
    wheel with it (it is never chosen nor installed)."""

    def __init__(self, message: str, size: int) -> None:
        super().__init__(message)
        self.size = size


class MetadataSource(enum.Enum):
    """Where a wheel's members were read; the value is how ``--json`` names it."""

    LOCAL = "local file"
    PEP658 = "PEP 658 metadata file"
    RANGES = "HTTP range requests"
    DOWNLOAD = "downloaded wheel"
    CACHE = "cache"


def _frozen(mapping: Mapping[str, object]) -> Mapping[str, object]:
    return MappingProxyType(dict(mapping))


@value
class WheelMembers:
    """The top-level ``*.dist-info/METADATA`` and ``variant.json`` members of one wheel.

    :param where: the wheel (a path or URL); members are named ``{where}!{member}``.
    :param files: member name -> bytes, for those read.
    :param too_large: member name -> size, for those larger than :data:`MAX_MEMBER` (not read).
    """

    where: str
    source: MetadataSource
    files: Mapping[str, bytes] = field(default_factory=dict, hash=False)
    too_large: Mapping[str, int] = field(default_factory=dict, hash=False)

    def named(self, basename: str) -> list[str]:
        """The members called *basename* (``METADATA``), read or too large, sorted."""
        return sorted(n for n in (*self.files, *self.too_large) if n.endswith(f"/{basename}"))

    def one(self, basename: str) -> tuple[str, bytes] | None:
        """The one member called *basename*: ``(name, bytes)``; ``None`` when absent.

        :raises InvalidMetadata: several of them; :raises MemberTooLarge: one over
            :data:`MAX_MEMBER` (with its size).
        """
        names = self.named(basename)
        if not names:
            return None
        if len(names) > 1:
            raise InvalidMetadata(f"{self.where}: more than one {basename}: {q_list(names)}")
        (name,) = names
        size = self.too_large.get(name)
        if size is not None:
            raise MemberTooLarge(
                f"{self.where}!{name} is {size} bytes, more than the {MAX_MEMBER} read: refused",
                size,
            )
        return name, self.files[name]


def read_members(archive: zipfile.ZipFile) -> tuple[dict[str, bytes], dict[str, int]]:
    """The wanted members of an open wheel: ``(files, too_large)``.

    :raises zipfile.BadZipFile, zlib.error, OSError, EOFError, NotImplementedError: a damaged
        archive (the caller names it).
    """
    files: dict[str, bytes] = {}
    too_large: dict[str, int] = {}
    for info in archive.infolist():
        if not _WANTED_RE.fullmatch(info.filename):
            continue
        if info.file_size > MAX_MEMBER:
            too_large[info.filename] = info.file_size
            continue
        with archive.open(info) as member:
            data = member.read(MAX_MEMBER + 1)  # the header's size may lie
        if len(data) > MAX_MEMBER:
            too_large[info.filename] = info.file_size
        else:
            files[info.filename] = data
    return files, too_large


def local_members(
    path: Path, source: MetadataSource = MetadataSource.LOCAL, *, where: str | None = None
) -> WheelMembers:
    """The members of a local wheel.

    :param where: how messages name the wheel (the URL a downloaded copy came from); default:
        the path.

    :raises InvalidMetadata: naming the wheel: not a readable zip.
    """
    try:
        with open_zip(path) as archive:  # a FIFO: refused, not waited on
            files, too_large = read_members(archive)
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as e:
        raise InvalidMetadata(f"{path}: not a readable wheel (zip) file: {e}") from e
    except OSError as e:
        raise InvalidMetadata(f"{path}: cannot read wheel: {e.strerror or e}") from e
    return WheelMembers(where or str(path), source, _frozen(files), _frozen(too_large))  # type: ignore[arg-type]
