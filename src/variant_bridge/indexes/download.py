"""Downloading wheels, hash-checked, through a command's one :class:`Downloads`.

A download lands in a temporary file next to its destination and is renamed into place only after
its sha256 matched, so an interrupted, truncated or refused download never leaves a partial file.
Remote requests go through :class:`~variant_bridge.indexes.transport.Transport` (deadlines, caps,
http(s) only); ``file://`` URLs (find-links) are read here, never by the transport.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from variant_bridge.errors import HashMismatch, IndexReadError, InvalidMetadata
from variant_bridge.indexes.candidates import Candidate
from variant_bridge.indexes.transport import Response, Transport, reason

if TYPE_CHECKING:
    from variant_bridge.indexes.cache import Cache
    from variant_bridge.indexes.members import WheelMembers

__all__ = [
    "Downloads",
    "Response",
    "download",
    "fetch",
    "file_sha256",
    "url_to_path",
]

_CHUNK = 1 << 16


def url_to_path(url: str) -> Path:
    """The local path of a ``file://`` URL."""
    if os.name == "nt":  # drive letters and UNC hosts: urllib knows them
        from urllib.request import url2pathname

        return Path(url2pathname(urlsplit(url).path))
    return Path(unquote(urlsplit(url).path))


def file_sha256(path: Path) -> str:
    """The hex sha256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def fetch(
    url: str,
    *,
    accept: str | None = None,
    not_found_ok: bool = False,
    max_bytes: int | None = None,
    transport: Transport,
) -> Response | None:
    """Fetch a (small) document: a ``file:`` URL is read from disk, anything else through
    *transport* (:meth:`Transport.get`, the command's requests).

    :param not_found_ok: return ``None`` on HTTP 404 (or a missing local file) instead of raising.
    :param max_bytes: refuse a body larger than this (default: the transport's cap).
    :raises IndexReadError: naming the URL and the reason, e.g. ``connection refused``.
    """
    if url.startswith("file:"):
        return _read_local(url, not_found_ok=not_found_ok, max_bytes=max_bytes)
    if max_bytes is None:
        return transport.get(url, accept=accept, not_found_ok=not_found_ok)
    return transport.get(url, accept=accept, not_found_ok=not_found_ok, max_bytes=max_bytes)


def _read_local(url: str, *, not_found_ok: bool, max_bytes: int | None) -> Response | None:
    from variant_bridge.indexes.transport import MAX_DOCUMENT, TooLarge

    path = url_to_path(url)
    cap = MAX_DOCUMENT if max_bytes is None else max_bytes
    try:
        with open(path, "rb") as f:
            body = f.read(cap + 1)
    except FileNotFoundError:
        if not_found_ok:
            return None
        raise IndexReadError(f"cannot fetch {url}: no such file") from None
    except OSError as e:
        raise IndexReadError(f"cannot fetch {url}: {reason(e)}") from e
    if len(body) > cap:
        raise TooLarge(f"{path} is larger than the {cap} bytes read: refused", None)
    content_type = "text/html" if path.suffix in (".html", ".htm") else ""
    return Response(url, body, content_type)


def _copy_local(path: Path, out: Path) -> str:
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as source, open(out, "wb") as target:
            while chunk := source.read(_CHUNK):
                digest.update(chunk)
                target.write(chunk)
    except OSError as e:
        raise IndexReadError(f"cannot read {path}: {reason(e)}") from e
    return digest.hexdigest()


def _fetch_into(candidate: Candidate, out: Path, transport: Transport) -> str:
    """Write *candidate*'s bytes to *out*; return their sha256, checked against the advertised
    one. A truncated body is reported as truncated (before any hash is compared).

    :raises HashMismatch: naming the file, the expected and the actual hash.
    """
    url = candidate.url
    if url.startswith("file:"):
        actual = _copy_local(url_to_path(url), out)
    else:
        with open(out, "wb") as target:
            actual = transport.copy(url, target, size=candidate.size, name=candidate.name)
    expected = candidate.sha256.lower() if candidate.sha256 else None
    if expected is not None and actual != expected:
        raise HashMismatch(f"hash mismatch for {candidate.name} from {url}", expected, actual)
    return actual


@contextlib.contextmanager
def _partial(directory: Path, name: str) -> Iterator[Path]:
    """A temporary file in *directory*, removed unless the block renamed it away."""
    directory.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{name}.", suffix=".part", dir=directory)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def download(candidate: Candidate, dest_dir: Path, *, transport: Transport) -> Path:
    """Download (or copy) *candidate* into *dest_dir* and check its sha256 when one is known.

    The file is written to a temporary name in *dest_dir* and renamed to its wheel filename only
    once the hash matched. When *dest_dir* already holds the file with the expected hash, it is
    reused without fetching.

    :returns: the path of the downloaded wheel, ``dest_dir / candidate.name``.
    :raises HashMismatch: the content does not match the advertised sha256 (naming the file, the
        expected and the actual hash); nothing is left in *dest_dir*.
    :raises TruncatedRead: the server sent less than it announced (or the index lists).
    :raises IndexReadError: the file cannot be fetched (naming the URL and the reason).
    """
    target = dest_dir / candidate.name
    expected = candidate.sha256.lower() if candidate.sha256 else None
    if expected is not None and target.is_file() and file_sha256(target) == expected:
        return target
    with _partial(dest_dir, candidate.name) as tmp:
        _fetch_into(candidate, tmp, transport)
        os.replace(tmp, target)
    return target


class Downloads:
    """Everything one command fetches: each wheel at most once, through one transport and cache.

    Reading a wheel's ``variant.json``, its requirements and installing it all ask here, so a wheel
    downloaded (or whose members were read) for one of them is reused by the others.

    :param directory: where wheels land when there is no cache (or no hash to file them under),
        and where find-links wheels are copied to be installed.
    :param transport: the command's HTTP requests (deadlines, ``--verbose``, progress).
    :param cache: the content-addressed cache shared across commands; ``None``: none.
    """

    __slots__ = (
        "_documents",
        "_fetched",
        "_hashes",
        "_members",
        "_no_ranges",
        "cache",
        "directory",
        "notes",
        "transport",
    )

    def __init__(
        self, directory: Path, *, transport: Transport, cache: Cache | None = None
    ) -> None:
        self.directory = directory
        self.transport = transport
        self.cache = cache
        self.notes: list[str] = []
        """What the user should know about how things were fetched (printed as notes)."""
        self._fetched: dict[str, Path] = {}
        self._documents: dict[str, bytes] = {}
        self._hashes: dict[str, str] = {}
        self._members: dict[str, WheelMembers] = {}
        self._no_ranges: set[str] = set()
        """Hosts that answered a range request with the whole file: not asked again."""

    @classmethod
    @contextlib.contextmanager
    def temporary(cls, *, transport: Transport, cache: Cache | None = None) -> Iterator[Downloads]:
        """A directory removed when the ``with`` block ends (or by the next command, when this
        one is killed: :mod:`.scratch`)."""
        from variant_bridge.indexes.scratch import scratch_dir

        with scratch_dir("downloads") as scratch:
            yield cls(scratch, transport=transport, cache=cache)

    def note(self, text: str) -> None:
        """Record a note once."""
        if text not in self.notes:
            self.notes.append(text)

    def get(self, candidate: Candidate) -> Path:
        """The local copy of *candidate*, hash-checked against its advertised sha256 when it
        has one: from this command's earlier fetches, from the cache (hashed again), or
        downloaded (a find-links file is copied, hashing the bytes copied).

        :raises HashMismatch, TruncatedRead, IndexReadError: see :func:`download`.
        """
        path = self._fetched.get(candidate.url)
        if path is None:
            path, actual = self._obtain(candidate)
            self._fetched[candidate.url] = path
            self._hashes[candidate.url] = actual
        return path

    def sha256(self, candidate: Candidate) -> str:
        """The sha256 of the bytes :meth:`get` gave for *candidate* (fetching it if needed)."""
        self.get(candidate)
        return self._hashes[candidate.url]

    def _obtain(self, candidate: Candidate) -> tuple[Path, str]:
        expected = candidate.sha256.lower() if candidate.sha256 else None
        remote = not candidate.url.startswith("file:")
        if remote and expected is not None and self.cache is not None:
            cached = self.cache.wheel(expected, candidate.name)
            if cached is not None:
                if file_sha256(cached) == expected:
                    return cached, expected
                self.cache.discard_wheel(expected, candidate.name)  # damaged: fetch again
            with self.cache.adding_wheel(expected, candidate.name) as (tmp, final):
                actual = _fetch_into(candidate, tmp, self.transport)
            return final, actual
        target = self.directory / candidate.name
        with _partial(self.directory, candidate.name) as tmp:
            actual = _fetch_into(candidate, tmp, self.transport)
            os.replace(tmp, target)
        return target, actual

    def document(self, url: str, *, max_bytes: int) -> bytes:
        """A small document (a PEP 658 ``.metadata`` file), fetched once in this command
        however many readers ask for it (``select`` for several node classes).

        :raises IndexReadError: it cannot be fetched (naming the URL and the reason).
        """
        found = self._documents.get(url)
        if found is None:
            response = self.transport.get(url, max_bytes=max_bytes)
            assert response is not None  # not_found_ok is off
            found = self._documents[url] = response.body
        return found

    def fetched(self, candidate: Candidate) -> Path | None:
        """The copy of *candidate* downloaded earlier in this command, if any."""
        return self._fetched.get(candidate.url)

    def members(self, candidate: Candidate, *, download: bool = True) -> WheelMembers | None:
        """*candidate*'s ``METADATA`` and ``variant.json``, read the cheapest way, once.

        In order: a local file (find-links, or a copy this command has); the cache (by the
        advertised sha256); HTTP range requests; and, when the server cannot serve ranges and
        *download* allows it, the whole wheel (with a note, once per server).

        :returns: ``None`` only when a whole download would be needed and is not allowed.
        :raises IndexReadError: the wheel cannot be read remotely; :raises InvalidMetadata: it
            is not a readable zip.
        """
        from variant_bridge.indexes import members as m

        found = self._members.get(candidate.url)
        if found is not None:
            return found
        url = candidate.url
        local = url_to_path(url) if url.startswith("file:") else self.fetched(candidate)
        if local is not None:
            source = (
                m.MetadataSource.LOCAL if url.startswith("file:") else m.MetadataSource.DOWNLOAD
            )
            found = m.local_members(
                local, source, where=None if source is m.MetadataSource.LOCAL else url
            )
        else:
            found = self._remote_members(candidate)
            if found is None:
                if not download:
                    return None
                found = m.local_members(self.get(candidate), m.MetadataSource.DOWNLOAD, where=url)
        self._members[url] = found
        return found

    def _remote_members(self, candidate: Candidate) -> WheelMembers | None:
        import zipfile
        import zlib
        from types import MappingProxyType

        from variant_bridge.indexes.members import MetadataSource, WheelMembers, read_members
        from variant_bridge.indexes.ranges import RangesNotSupported, open_remote_zip

        sha256 = candidate.sha256.lower() if candidate.sha256 else None
        if sha256 is not None and self.cache is not None:
            cached = self.cache.members(sha256)
            if cached is not None:
                return WheelMembers(
                    candidate.url,
                    MetadataSource.CACHE,
                    MappingProxyType(cached[0]),
                    MappingProxyType(cached[1]),
                )
        host = urlsplit(candidate.url).netloc
        if host in self._no_ranges:
            return None
        try:
            with open_remote_zip(candidate.url, transport=self.transport) as archive:
                files, too_large = read_members(archive)
        except RangesNotSupported:
            self._no_ranges.add(host)
            self.note(
                f"{host} does not answer HTTP range requests: whole wheels are downloaded to "
                "read their metadata"
            )
            return None
        except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as e:
            raise InvalidMetadata(f"{candidate.url}: not a readable wheel (zip) file: {e}") from e
        if sha256 is not None and self.cache is not None:
            self.cache.add_members(sha256, files, too_large)
        return WheelMembers(
            candidate.url,
            MetadataSource.RANGES,
            MappingProxyType(files),
            MappingProxyType(too_large),
        )
