"""A wheel's core metadata (``METADATA``) without downloading the wheel when it can be helped.

In order: the local file (a find-links wheel, or a copy this command already downloaded); the
PEP 658 ``.metadata`` file, only when the index advertises it (hash-checked when it gives one);
the wheel's own ``METADATA`` from the cache or read with HTTP range requests
(:meth:`Downloads.members <variant_bridge.indexes.Downloads.members>`), also when an advertised
``.metadata`` file cannot be fetched; and, only when the caller allows it, the whole wheel
through :class:`~variant_bridge.indexes.Downloads`. Whatever is read is size-capped
(:data:`MAX_CORE_METADATA`). :class:`CoreMetadataReader` reads each wheel at most once per
command and counts what it did.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from variant_bridge._values import value
from variant_bridge.errors import IndexReadError, InvalidMetadata
from variant_bridge.indexes._headers import Headers
from variant_bridge.indexes.candidates import Candidate
from variant_bridge.indexes.download import Downloads, url_to_path
from variant_bridge.indexes.members import (
    MAX_MEMBER,
    METADATA,
    MetadataSource,
    WheelMembers,
    local_members,
)

__all__ = [
    "MAX_CORE_METADATA",
    "CoreMetadata",
    "CoreMetadataReader",
    "MetadataSource",
    "read_wheel_metadata",
]

MAX_CORE_METADATA = MAX_MEMBER
"""The largest ``METADATA`` read, from any source (a real one is a few KiB)."""


@value
class CoreMetadata:
    """The fields of a wheel's ``METADATA`` the bridge reads."""

    name: str
    version: str
    requires_dist: tuple[str, ...]
    requires_python: str | None
    source: MetadataSource
    where: str
    """The URL or path it was read from."""

    @classmethod
    def parse(cls, text: str, source: MetadataSource, where: str) -> CoreMetadata:
        headers = Headers(text)
        requires_python = headers.get("Requires-Python")
        return cls(
            str(headers.get("Name") or "").strip(),
            str(headers.get("Version") or "").strip(),
            tuple(str(v).strip() for v in headers.get_all("Requires-Dist") or ()),
            str(requires_python).strip() if requires_python else None,
            source,
            where,
        )


def metadata_of(members: WheelMembers) -> CoreMetadata:
    """The core metadata among a wheel's members.

    :raises InvalidMetadata: no (or several) ``*.dist-info/METADATA``, or one too big (with its
        size: it was not read).
    """
    found = members.one(METADATA)
    if found is None:
        raise InvalidMetadata(f"{members.where}: no *.dist-info/METADATA")
    _, data = found
    return CoreMetadata.parse(data.decode("utf-8", "replace"), members.source, members.where)


def read_wheel_metadata(path: Path, source: MetadataSource = MetadataSource.LOCAL) -> CoreMetadata:
    """The core metadata of a local wheel.

    :raises InvalidMetadata: naming the wheel: not a zip, no (or several) ``METADATA``, too big.
    """
    metadata = metadata_of(local_members(path, source))
    return CoreMetadata(
        metadata.name,
        metadata.version,
        metadata.requires_dist,
        metadata.requires_python,
        source,
        str(path),
    )


class CoreMetadataReader:
    """Reads wheels' core metadata for one command: each wheel at most once, counted.

    :param downloads: the command's downloads (a wheel already there is read locally; with
        *download_wheels*, a wheel is downloaded there when nothing cheaper works).
    :param download_wheels: allow downloading a whole wheel as the last resort.
    """

    __slots__ = ("_cache", "download_wheels", "downloads", "stats")

    def __init__(self, downloads: Downloads, *, download_wheels: bool = False) -> None:
        self.downloads = downloads
        self.download_wheels = download_wheels
        self._cache: dict[str, CoreMetadata | None] = {}
        self.stats: Counter[MetadataSource] = Counter()
        """How many wheels were read from each source."""

    def prefetch(self, candidates: Iterable[Candidate]) -> None:
        """Ask at once (on the transport's bounded pool) for the PEP 658 files of *candidates*
        that will be read next: :meth:`read` then finds each one fetched, or waits for it. One
        round trip for a release's variants instead of one per variant."""
        wanted = [
            c
            for c in candidates
            if c.core_metadata
            and not c.url.startswith("file:")
            and c.url not in self._cache
            and self.downloads.fetched(c) is None
        ]
        if len(wanted) < 2:
            return  # nothing to overlap
        transport = self.downloads.transport
        for candidate in wanted:
            url = candidate.url + ".metadata"
            transport.submit(lambda u=url: transport.prefetch(u, max_bytes=MAX_CORE_METADATA))  # type: ignore[misc]

    def read(self, candidate: Candidate, *, download: bool | None = None) -> CoreMetadata | None:
        """The core metadata of *candidate*; ``None`` when it cannot be had without downloading
        the wheel and that is not allowed (a server without PEP 658 files or range requests).

        :param download: allow downloading the whole wheel this time (default: the reader's
            *download_wheels*).
        :raises IndexReadError: a source cannot be read (naming the URL and the reason).
        :raises InvalidMetadata: the metadata is damaged, too big, or does not match its hash.
        """
        allowed = self.download_wheels if download is None else download
        found = self._cache.get(candidate.url)
        if found is not None or (candidate.url in self._cache and not allowed):
            return found
        found = self._read(candidate, allowed)
        self._cache[candidate.url] = found
        if found is not None:
            self.stats[found.source] += 1
        return found

    def _read(self, candidate: Candidate, download: bool) -> CoreMetadata | None:
        url = candidate.url
        local = url_to_path(url) if url.startswith("file:") else self.downloads.fetched(candidate)
        if local is not None:
            return read_wheel_metadata(local)
        failed: IndexReadError | None = None
        if candidate.core_metadata:  # never fetched unless the index advertises it
            try:
                return self._pep658(candidate)
            except IndexReadError as e:  # an advertised file that cannot be had: the wheel may
                failed = e
        try:
            members = self.downloads.members(candidate, download=download)
        except IndexReadError:
            if failed is not None:
                raise failed from None
            raise
        if members is None:
            if failed is not None:
                raise failed
            return None
        return metadata_of(members)

    def _pep658(self, candidate: Candidate) -> CoreMetadata:
        url = candidate.url + ".metadata"
        body = self.downloads.document(url, max_bytes=MAX_CORE_METADATA)
        expected = candidate.core_metadata_sha256
        if expected is not None:
            actual = hashlib.sha256(body).hexdigest()
            if actual != expected:
                raise InvalidMetadata(
                    f"{url}: sha256 {actual} does not match the {expected} the index advertised"
                )
        return CoreMetadata.parse(body.decode("utf-8", "replace"), MetadataSource.PEP658, url)
