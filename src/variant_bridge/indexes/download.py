"""Fetching index pages and files over ``file://`` and ``http(s)://``, with sha256 checks.

Everything goes through :mod:`urllib.request` (which honours the usual ``*_proxy`` variables), so
errors come back as one line naming the URL and the reason ("connection refused", "HTTP 404 Not
Found"). Downloads land in a temporary file next to their destination and are renamed into place
only after the hash matched, so an interrupted or refused download never leaves a partial file.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import IO
from urllib.parse import unquote, urlsplit

from variant_bridge._values import value
from variant_bridge._version import __version__
from variant_bridge.errors import HashMismatch, IndexReadError
from variant_bridge.indexes.candidates import Candidate

__all__ = [
    "Downloads",
    "Response",
    "download",
    "fetch",
    "file_sha256",
    "url_to_path",
]

TIMEOUT_S = 60.0
_CHUNK = 1 << 16
_USER_AGENT = f"variant-bridge/{__version__}"


@value
class Response:
    """A fetched document: its body, content type and the URL it came from after redirects."""

    url: str
    body: bytes
    content_type: str
    charset: str | None = None
    status: int = 200


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


def _reason(error: BaseException) -> str:
    """A short reason in words for a failed fetch."""
    import socket
    import urllib.error

    if isinstance(error, urllib.error.HTTPError):
        return f"HTTP {error.code} {error.reason}".rstrip()
    if isinstance(error, urllib.error.URLError):
        if not isinstance(error.reason, BaseException):
            return str(error.reason)
        error = error.reason
    if isinstance(error, ConnectionRefusedError):
        return "connection refused"
    if isinstance(error, (TimeoutError, socket.timeout)):
        return "timed out"
    if isinstance(error, socket.gaierror):
        return f"cannot resolve host ({error.strerror})"
    if isinstance(error, OSError) and error.strerror:
        return error.strerror[:1].lower() + error.strerror[1:]
    return str(error) or type(error).__name__


def _open(url: str, *, accept: str | None, headers: Mapping[str, str] | None = None) -> IO[bytes]:
    # urllib.request costs ~10 ms to import: only paid when something is fetched.
    import urllib.error
    import urllib.request

    headers = {"User-Agent": _USER_AGENT, **(headers or {})}
    if accept:
        headers["Accept"] = accept
    request = urllib.request.Request(url, headers=headers)
    try:
        response: IO[bytes] = urllib.request.urlopen(request, timeout=TIMEOUT_S)
    except (urllib.error.URLError, OSError, ValueError) as e:
        if isinstance(e, urllib.error.HTTPError):
            e.close()  # it holds the open response (and its socket)
        raise IndexReadError(f"cannot fetch {url}: {_reason(e)}") from e
    return response


def fetch(
    url: str,
    *,
    accept: str | None = None,
    not_found_ok: bool = False,
    max_bytes: int | None = None,
) -> Response | None:
    """Fetch a (small) document.

    :param accept: the ``Accept`` header to send (content negotiation, PEP 691).
    :param not_found_ok: return ``None`` on HTTP 404 (or a missing local file) instead of raising.
    :param max_bytes: refuse a body larger than this (read no further than one byte past it).
    :raises IndexReadError: naming the URL and the reason, e.g. ``connection refused``.
    """
    import urllib.error

    try:
        response = _open(url, accept=accept)
    except IndexReadError as e:
        cause = e.__cause__
        missing = (isinstance(cause, urllib.error.HTTPError) and cause.code == 404) or (
            isinstance(cause, urllib.error.URLError) and isinstance(cause.reason, FileNotFoundError)
        )
        if not_found_ok and missing:
            return None
        raise
    with response:
        try:
            body = response.read() if max_bytes is None else response.read(max_bytes + 1)
        except OSError as e:
            raise IndexReadError(f"cannot read {url}: {_reason(e)}") from e
        if max_bytes is not None and len(body) > max_bytes:
            raise IndexReadError(f"{url} is larger than {max_bytes} bytes: refused")
        headers = getattr(response, "headers", None)
        content_type = headers.get_content_type() if headers is not None else ""
        charset = headers.get_content_charset() if headers is not None else None
        final_url = getattr(response, "url", url) or url
        status = getattr(response, "status", 200) or 200
    return Response(final_url, body, content_type, charset, status)


def _open_source(url: str) -> IO[bytes]:
    if url.startswith("file:"):
        path = url_to_path(url)
        try:
            return open(path, "rb")  # the caller closes it
        except OSError as e:
            raise IndexReadError(f"cannot read {path}: {_reason(e)}") from e
    return _open(url, accept=None)


def _copy_hashing(source: IO[bytes], target: IO[bytes]) -> str:
    digest = hashlib.sha256()
    while chunk := source.read(_CHUNK):
        digest.update(chunk)
        target.write(chunk)
    return digest.hexdigest()


def download(candidate: Candidate, dest_dir: Path) -> Path:
    """Download (or copy) *candidate* into *dest_dir* and check its sha256 when one is known.

    The file is written to a temporary name in *dest_dir* and renamed to its wheel filename only
    once the hash matched. When *dest_dir* already holds the file with the expected hash, it is
    reused without fetching.

    :returns: the path of the downloaded wheel, ``dest_dir / candidate.name``.
    :raises HashMismatch: the content does not match the advertised sha256 (naming the file, the
        expected and the actual hash); nothing is left in *dest_dir*.
    :raises IndexReadError: the file cannot be fetched (naming the URL and the reason).
    """
    dest_dir.mkdir(parents=True, exist_ok=True)
    target = dest_dir / candidate.name
    expected = candidate.sha256.lower() if candidate.sha256 else None
    if expected is not None and target.is_file() and file_sha256(target) == expected:
        return target
    url = candidate.url
    source = _open_source(url)
    with source:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{candidate.name}.", suffix=".part", dir=dest_dir)
        tmp = Path(tmp_name)
        try:
            with os.fdopen(fd, "wb") as out:
                try:
                    actual = _copy_hashing(source, out)
                except OSError as e:
                    raise IndexReadError(f"cannot download {url}: {_reason(e)}") from e
            if expected is not None and actual != expected:
                raise HashMismatch(
                    f"hash mismatch for {candidate.name} from {url}", expected, actual
                )
            os.replace(tmp, target)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
            raise
    return target


class Downloads:
    """The one directory a command downloads wheels into; each file is fetched at most once.

    Reading a wheel's ``variant.json``, its requirements and installing it all ask here, so a wheel
    downloaded for one of them is reused by the others (hash-checked when it landed).
    """

    __slots__ = ("_fetched", "directory")

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._fetched: dict[str, Path] = {}

    @classmethod
    @contextlib.contextmanager
    def temporary(cls) -> Iterator[Downloads]:
        """A directory removed when the ``with`` block ends (or by the next command, when this
        one is killed: :mod:`.scratch`)."""
        from variant_bridge.indexes.scratch import scratch_dir

        with scratch_dir("downloads") as scratch:
            yield cls(scratch)

    def get(self, candidate: Candidate) -> Path:
        """The local copy of *candidate*: :func:`download` it unless this command already has."""
        path = self._fetched.get(candidate.url)
        if path is None:
            path = self._fetched[candidate.url] = download(candidate, self.directory)
        return path

    def fetched(self, candidate: Candidate) -> Path | None:
        """The copy of *candidate* downloaded earlier in this command, if any."""
        return self._fetched.get(candidate.url)
