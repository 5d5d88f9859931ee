"""Reading parts of a remote file with HTTP range requests: a wheel's members without the wheel.

:class:`RangeFile` is a read-only, seekable file over one URL: the first request asks for the
file's last block (``Range: bytes=-65536``), which tells its size and, for a wheel, holds the zip's
central directory and usually its ``.dist-info`` (written last); further reads fetch only the
blocks they miss. :func:`open_remote_zip` wraps it in a :class:`zipfile.ZipFile`, so a member is
read like a local one (the idea of pip's lazy wheel; the code is ours). A server that ignores
ranges (answers ``200`` with the whole file) raises :class:`RangesNotSupported` before its body is
read; every file is capped (:attr:`RangeFile.max_bytes`) so a hostile server cannot make us read
without end.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager

from variant_bridge.errors import IndexReadError, InvalidMetadata
from variant_bridge.indexes.transport import Transport

__all__ = ["BLOCK", "RangeFile", "RangesNotSupported", "open_remote_zip"]

BLOCK = 64 * 1024
"""Bytes asked for at least per request (the tail first)."""
MAX_FETCHED = 64 * 1024 * 1024
"""Bytes one :class:`RangeFile` fetches at most in all."""

_CONTENT_RANGE_RE = re.compile(r"bytes (?P<first>[0-9]+)-(?P<last>[0-9]+)/(?P<size>[0-9]+)")


class RangesNotSupported(IndexReadError):
    """The server answers range requests with the whole file (or not at all)."""


class RangeFile(io.RawIOBase):
    """A remote file read by HTTP range requests, block by block, each block fetched once.

    :param url: an ``http(s)://`` URL.
    :param block: the least a request asks for.
    :param max_bytes: the most this file fetches in all.
    :param transport: the command's requests (deadlines, log).
    :raises RangesNotSupported: the server does not answer range requests.
    :raises IndexReadError: the URL cannot be fetched.
    """

    def __init__(
        self,
        url: str,
        *,
        block: int = BLOCK,
        max_bytes: int = MAX_FETCHED,
        transport: Transport,
    ) -> None:
        super().__init__()
        self.url = url
        self.transport = transport
        self.block = block
        self.max_bytes = max_bytes
        self.requests = 0
        """Range requests made so far."""
        self.fetched = 0
        """Bytes received so far."""
        self._segments: list[tuple[int, bytes]] = []  # (start, data), disjoint, sorted
        self._position = 0
        first, data, self.size = self._get(f"bytes=-{block}")
        self._add(first, data)

    # -- fetching -------------------------------------------------------------------------

    def _get(self, spec: str) -> tuple[int, bytes, int]:
        """One range request: (first byte, body, file size)."""
        with self.transport.open(self.url, headers={"Range": spec}) as body:
            content_range = body.headers.get("Content-Range", "") or ""
            match = _CONTENT_RANGE_RE.fullmatch(content_range.strip())
            if body.status != 206 or match is None:
                # Closed unread: a server ignoring ranges would send the whole file.
                raise RangesNotSupported(
                    f"{self.url} does not answer range requests (HTTP {body.status})"
                )
            first, last = int(match["first"]), int(match["last"])
            if last < first or self.fetched + (last - first + 1) > self.max_bytes:
                raise IndexReadError(
                    f"{self.url}: reading it needs more than {self.max_bytes} bytes: refused"
                )
            data = body.read_exact(last - first + 1)
        self.requests += 1
        self.fetched += len(data)
        return first, data, int(match["size"])

    def _add(self, start: int, data: bytes) -> None:
        self._segments.append((start, data))
        self._segments.sort()
        merged: list[tuple[int, bytes]] = []
        for begin, chunk in self._segments:
            if merged and begin <= merged[-1][0] + len(merged[-1][1]):
                prev_begin, prev = merged[-1]
                overlap = prev_begin + len(prev) - begin
                merged[-1] = (prev_begin, prev + chunk[overlap:])
            else:
                merged.append((begin, chunk))
        self._segments = merged

    def _missing(self, start: int, end: int) -> tuple[int, int] | None:
        """The first gap in ``[start, end)`` not yet fetched."""
        position = start
        for begin, chunk in self._segments:
            if begin <= position < begin + len(chunk):
                position = begin + len(chunk)
            if position >= end:
                return None
        gap_end = end
        for begin, _ in self._segments:
            if position < begin < gap_end:
                gap_end = begin
        return position, gap_end

    def _ensure(self, start: int, end: int) -> None:
        while (gap := self._missing(start, end)) is not None:
            first, stop = gap
            # Read ahead a block, but never again what is already here.
            following = min((b for b, _ in self._segments if b > first), default=self.size)
            stop = min(max(stop, first + self.block), following, self.size)
            got_first, data, _ = self._get(f"bytes={first}-{stop - 1}")
            self._add(got_first, data)

    # -- the file interface ---------------------------------------------------------------

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._position, io.SEEK_END: self.size}[whence]
        self._position = max(0, base + offset)
        return self._position

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        start = self._position
        end = min(self.size, start + len(buffer))
        if start >= end:
            return 0
        self._ensure(start, end)
        for begin, chunk in self._segments:
            if begin <= start < begin + len(chunk):
                piece = chunk[start - begin : end - begin]
                buffer[: len(piece)] = piece
                self._position = start + len(piece)
                return len(piece)
        raise IndexReadError(f"{self.url}: bytes {start}-{end - 1} are missing")  # not reached


@contextmanager
def open_remote_zip(
    url: str, *, max_bytes: int = MAX_FETCHED, transport: Transport
) -> Iterator[zipfile.ZipFile]:
    """A remote zip (a wheel) read with range requests; members are read on demand.

    :raises RangesNotSupported: the server does not answer range requests.
    :raises IndexReadError: the URL cannot be read.
    :raises InvalidMetadata: it is not a zip (the file's fault, not the network's).
    """
    remote = RangeFile(url, max_bytes=max_bytes, transport=transport)
    try:
        archive = zipfile.ZipFile(io.BufferedReader(remote, buffer_size=remote.block))
    except zipfile.BadZipFile as e:
        raise InvalidMetadata(f"{url}: not a readable wheel (zip) file: {e}") from e
    with archive:
        yield archive
