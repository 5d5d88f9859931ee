"""Every HTTP request of one command: http(s) only, a total deadline, caps, truncation, a log.

:class:`Transport` is the command's one way onto the network (pages, ``*-variants.json``, PEP 658
files, range reads, wheel downloads). What it guarantees, whatever the server does:

- only ``http://`` and ``https://`` are fetched, and redirects stay on them (urllib alone follows
  a redirect to ``ftp://``, and opens ``file:`` URLs a remote page links to);
- every request has a **total deadline** (:attr:`Transport.deadline` seconds, plus the time the
  announced size needs at :attr:`Transport.min_rate`), not only a per-read timeout: a server
  dripping one byte every few seconds is cut off (a watchdog shuts the socket down at the
  deadline, headers included), and so is a host name the system resolver takes too long to
  answer for (it has no timeout of its own);
- a body shorter than its ``Content-Length`` is a :class:`~variant_bridge.errors.TruncatedRead`;
  a document larger than its cap is refused with its size, from ``Content-Length`` when the
  server announces it, before anything is read;
- every URL requested is passed to :attr:`Transport.log` (``--verbose``), long downloads report
  to :attr:`Transport.progress`, and :attr:`Transport.received` counts the bytes.

Requests go through :mod:`urllib.request` (imported when the first request is made), which
honours the usual ``*_proxy`` variables.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import IO, TYPE_CHECKING, Any, Protocol
from urllib.parse import urljoin, urlsplit

from variant_bridge._values import value
from variant_bridge._version import __version__
from variant_bridge.errors import IndexReadError, TruncatedRead

if TYPE_CHECKING:
    import http.client

__all__ = [
    "DEADLINE_S",
    "MAX_DOCUMENT",
    "MIN_RATE",
    "READ_TIMEOUT_S",
    "Body",
    "DeadlineExceeded",
    "Progress",
    "ProgressFactory",
    "Response",
    "TooLarge",
    "Transport",
    "reason",
]

READ_TIMEOUT_S = 30.0
"""Seconds one read may wait for a byte (uv's default ``UV_HTTP_TIMEOUT``)."""
DEADLINE_S = 60.0
"""Seconds a request may take in all, before the time its announced size needs is added."""
MIN_RATE = 128 * 1024
"""Bytes per second a large body must average: its deadline grows by ``size / MIN_RATE``."""
MAX_DOCUMENT = 64 * 1024 * 1024
"""The largest index page or ``*-variants.json`` read (a huge project page is a few MB)."""
PROGRESS_MIN = 1024 * 1024
"""Downloads of at least this many bytes (or of unknown size) report progress."""
_CHUNK = 1 << 16
_USER_AGENT = f"variant-bridge/{__version__}"
_SCHEMES = ("http", "https")


class DeadlineExceeded(IndexReadError):
    """A request took longer than its total deadline."""


class TooLarge(IndexReadError):
    """A document is larger than what is read of it."""

    def __init__(self, message: str, size: int | None) -> None:
        super().__init__(message)
        self.size = size


class Progress(Protocol):
    """One download's progress display (the CLI's bar on a terminal)."""

    def update(self, count: int) -> None:
        """*count* more bytes arrived."""

    def close(self) -> None:
        """The download ended (done or failed)."""


ProgressFactory = Callable[[str, "int | None"], Progress]
"""``(name, total bytes or None) -> Progress``."""


@value
class Response:
    """A fetched document: its body, content type and the URL it came from after redirects."""

    url: str
    body: bytes
    content_type: str
    charset: str | None = None
    status: int = 200


def reason(error: BaseException) -> str:
    """A short reason in words for a failed request."""
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


class _Watchdog:
    """Shuts a request's sockets down when its deadline passes, unblocking any read."""

    def __init__(self, seconds: float) -> None:
        self.start = time.monotonic()
        self.seconds = seconds
        self.fired = False
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._timer: threading.Timer | None = None
        self._arm()

    def _arm(self) -> None:
        remaining = self.start + self.seconds - time.monotonic()
        self._timer = threading.Timer(max(0.0, remaining), self._fire)
        self._timer.daemon = True
        self._timer.start()

    def _fire(self) -> None:
        with self._lock:
            self.fired = True
            sockets = list(self._sockets)
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def attach(self, sock: socket.socket) -> None:
        with self._lock:
            fired = self.fired
            if not fired:
                self._sockets.append(sock)
        if fired:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def extend(self, seconds: float) -> None:
        """Allow *seconds* in all from the start (never less than before)."""
        if seconds <= self.seconds or self.fired:
            return
        self.cancel()
        self.seconds = seconds
        self._arm()

    def cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()

    def create_connection(
        self,
        address: tuple[str, int],
        timeout: float | None,
        source_address: tuple[str, int] | None = None,
    ) -> socket.socket:
        """:func:`socket.create_connection`, its name lookup within the deadline too."""
        host, port = address
        found = _resolve(host, port, self.start + self.seconds - time.monotonic())
        if found is None:
            self._fire()
            raise TimeoutError(f"no address for {host} before the deadline")
        error: OSError | None = None
        for family, kind, proto, _, sockaddr in found:
            sock = socket.socket(family, kind, proto)
            try:
                sock.settimeout(timeout)
                if source_address is not None:
                    sock.bind(source_address)
                self.attach(sock)  # a connect still under way when the deadline passes ends
                sock.connect(sockaddr)
            except OSError as e:
                sock.close()
                error = e
                continue
            return sock
        raise error or OSError(f"no address for {host}")


def _resolve(host: str, port: int, seconds: float) -> list[Any] | None:
    """``getaddrinfo`` for a TCP connection, or ``None`` when it has not answered in *seconds*
    (the lookup then finishes in the background, on a daemon thread nobody waits for)."""
    answer: list[Any] = []
    done = threading.Event()

    def lookup() -> None:
        try:
            answer.append(socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM))
        except OSError as e:
            answer.append(e)
        finally:
            done.set()

    threading.Thread(target=lookup, name=f"resolve {host}", daemon=True).start()
    if not done.wait(max(0.0, seconds)):
        return None
    if isinstance(answer[0], OSError):
        raise answer[0]
    found: list[Any] = answer[0]
    return found


def _opener(watchdog: _Watchdog, log: Callable[[str], None] | None) -> Any:
    """An urllib opener for http(s) only, whose sockets the watchdog can shut down."""
    import http.client
    import urllib.request

    # http.client opens its sockets through _create_connection (socket.create_connection).
    class Connection(http.client.HTTPConnection):
        def connect(self) -> None:
            self._create_connection = watchdog.create_connection
            super().connect()
            watchdog.attach(self.sock)  # for TLS, the socket that wraps the one connected

    class SecureConnection(http.client.HTTPSConnection):
        def connect(self) -> None:
            self._create_connection = watchdog.create_connection
            super().connect()
            watchdog.attach(self.sock)  # for TLS, the socket that wraps the one connected

    class Handler(urllib.request.HTTPHandler):
        def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
            return self.do_open(Connection, req)

    class SecureHandler(urllib.request.HTTPSHandler):
        def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
            return self.do_open(functools.partial(SecureConnection, context=self._context), req)  # type: ignore[attr-defined]

    def refuse(req: urllib.request.Request, fp: IO[bytes], newurl: str) -> None:
        if urlsplit(newurl).scheme.lower() not in _SCHEMES:
            fp.close()
            raise IndexReadError(
                f"cannot fetch {req.full_url}: it redirects to {newurl}; only http:// and "
                "https:// redirects are followed"
            )

    class Redirects(urllib.request.HTTPRedirectHandler):
        def http_error_302(
            self, req: urllib.request.Request, fp: IO[bytes], code: int, msg: str, headers: Any
        ) -> Any:
            # Checked before urllib's own rule (which lets ftp:// through).
            location = headers.get("location") or headers.get("uri")
            if location:
                refuse(req, fp, urljoin(req.full_url, location))
            return super().http_error_302(req, fp, code, msg, headers)

        http_error_301 = http_error_303 = http_error_307 = http_error_308 = http_error_302

        def redirect_request(  # noqa: PLR0917 - urllib's signature
            self,
            req: urllib.request.Request,
            fp: IO[bytes],
            code: int,
            msg: str,
            headers: Any,
            newurl: str,
        ) -> urllib.request.Request | None:
            refuse(req, fp, newurl)
            if log is not None:
                log(f"  redirected to {newurl}")
            return super().redirect_request(req, fp, code, msg, headers, newurl)

    opener = urllib.request.OpenerDirector()
    for handler in (
        urllib.request.ProxyHandler(),
        urllib.request.UnknownHandler(),
        Handler(),
        SecureHandler(),
        urllib.request.HTTPDefaultErrorHandler(),
        Redirects(),
        urllib.request.HTTPErrorProcessor(),
    ):
        opener.add_handler(handler)
    return opener


class Body:
    """An open response: read it in chunks, each read within the request's deadline."""

    def __init__(
        self, transport: Transport, url: str, response: http.client.HTTPResponse, dog: _Watchdog
    ) -> None:
        self._transport = transport
        self._response = response
        self._watchdog = dog
        self.requested = url
        self.url: str = response.geturl() or url
        self.status: int = response.status
        self.headers = response.headers
        length = response.headers.get("Content-Length")
        self.length: int | None = int(length) if length and length.isdigit() else None
        """The announced ``Content-Length``; ``None`` when not announced."""
        self.received = 0

    def _expired(self) -> DeadlineExceeded:
        seconds = self._watchdog.seconds
        return DeadlineExceeded(
            f"cannot fetch {self.requested}: no complete answer within {seconds:.0f} s "
            f"({self.received} bytes received; the server is stalled or too slow)"
        )

    def read(self, size: int = _CHUNK) -> bytes:
        """Up to *size* bytes; ``b""`` at the end of a complete body.

        :raises TruncatedRead: the body ended before its ``Content-Length``.
        :raises DeadlineExceeded: the request's deadline passed.
        """
        import http.client

        try:
            data = self._response.read1(size)
        except http.client.IncompleteRead as e:
            if self._watchdog.fired:
                raise self._expired() from e
            raise TruncatedRead(self._truncated(self.received + len(e.partial))) from e
        except (OSError, ValueError, http.client.HTTPException) as e:
            if self._watchdog.fired:
                raise self._expired() from e
            raise IndexReadError(f"cannot read {self.requested}: {reason(e)}") from e
        if self._watchdog.fired:
            raise self._expired()
        self.received += len(data)
        self._transport.received += len(data)
        if not data and self.length is not None and self.received < self.length:
            raise TruncatedRead(self._truncated(self.received))
        return data

    def _truncated(self, received: int) -> str:
        return (
            f"{self.requested}: truncated: the server sent {received} of the {self.length} "
            "bytes it announced"
        )

    def read_all(self, max_bytes: int) -> bytes:
        """The whole body, refused when larger than *max_bytes* (read no further than that).

        :raises TooLarge: naming the size when announced.
        """
        if self.length is not None and self.length > max_bytes:
            raise TooLarge(
                f"{self.requested} is {self.length} bytes, more than the {max_bytes} read: refused",
                self.length,
            )
        chunks: list[bytes] = []
        size = 0
        while chunk := self.read():
            size += len(chunk)
            if size > max_bytes:
                raise TooLarge(
                    f"{self.requested} is larger than the {max_bytes} bytes read: refused", None
                )
            chunks.append(chunk)
        return b"".join(chunks)

    def read_exact(self, count: int) -> bytes:
        """Exactly *count* bytes (a range's body).

        :raises TruncatedRead: the body ended sooner.
        """
        chunks: list[bytes] = []
        size = 0
        while size < count:
            chunk = self.read(min(_CHUNK, count - size))
            if not chunk:
                raise TruncatedRead(
                    f"{self.requested}: truncated: the server sent {size} of the {count} bytes "
                    "of the range it announced"
                )
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)


class Transport:
    """The HTTP requests of one command (see the module docstring).

    :param read_timeout: seconds one read may wait.
    :param deadline: seconds a request may take, plus ``size / min_rate`` for its announced size.
    :param log: called with a line for every request (``GET url``) and redirect.
    :param progress: makes a progress display for downloads of at least :data:`PROGRESS_MIN`.
    """

    __slots__ = ("deadline", "log", "min_rate", "progress", "read_timeout", "received", "requests")

    def __init__(
        self,
        *,
        read_timeout: float = READ_TIMEOUT_S,
        deadline: float = DEADLINE_S,
        min_rate: float = MIN_RATE,
        log: Callable[[str], None] | None = None,
        progress: ProgressFactory | None = None,
    ) -> None:
        self.read_timeout = read_timeout
        self.deadline = deadline
        self.min_rate = min_rate
        self.log = log
        self.progress = progress
        self.requests = 0
        """Requests made so far."""
        self.received = 0
        """Body bytes received so far."""

    @contextlib.contextmanager
    def open(
        self,
        url: str,
        *,
        accept: str | None = None,
        headers: Mapping[str, str] | None = None,
        size: int | None = None,
    ) -> Iterator[Body]:
        """Send a GET for *url* and yield its open :class:`Body` (closed when the block ends).

        :param size: the size the body should have, when known beforehand (the index's): it
            extends the deadline like an announced ``Content-Length``.
        :raises IndexReadError: another scheme than http(s), a redirect off them, no connection,
            an HTTP error status (the cause is urllib's ``HTTPError``), the deadline.
        """
        import urllib.error
        import urllib.request

        if urlsplit(url).scheme.lower() not in _SCHEMES:
            raise IndexReadError(f"cannot fetch {url}: only http:// and https:// URLs are fetched")
        all_headers = {"User-Agent": _USER_AGENT, **(headers or {})}
        if accept:
            all_headers["Accept"] = accept
        self.requests += 1
        if self.log is not None:
            span = all_headers.get("Range")
            self.log(f"GET {url}" + (f" ({span})" if span else ""))
        dog = _Watchdog(self.deadline + (size or 0) / self.min_rate)
        try:
            try:
                request = urllib.request.Request(url, headers=all_headers)
                response = _opener(dog, self.log).open(request, timeout=self.read_timeout)
            except (urllib.error.URLError, OSError, ValueError) as e:
                if isinstance(e, urllib.error.HTTPError):
                    e.close()  # it holds the open response (and its socket)
                if dog.fired:
                    raise DeadlineExceeded(
                        f"cannot fetch {url}: no answer within {dog.seconds:.0f} s"
                    ) from e
                raise IndexReadError(f"cannot fetch {url}: {reason(e)}") from e
            with response:
                body = Body(self, url, response, dog)
                announced = max(body.length or 0, size or 0)
                dog.extend(self.deadline + announced / self.min_rate)
                yield body
        finally:
            dog.cancel()

    def get(
        self,
        url: str,
        *,
        accept: str | None = None,
        not_found_ok: bool = False,
        max_bytes: int = MAX_DOCUMENT,
    ) -> Response | None:
        """Fetch a (small) document whole.

        :param not_found_ok: return ``None`` on HTTP 404 instead of raising.
        :raises TooLarge: larger than *max_bytes* (from ``Content-Length`` when announced).
        :raises IndexReadError: see :meth:`open`; a truncated body.
        """
        import urllib.error

        try:
            with self.open(url, accept=accept) as body:
                data = body.read_all(max_bytes)
                content_type = body.headers.get_content_type()
                charset = body.headers.get_content_charset()
                return Response(body.url, data, content_type, charset, body.status)
        except IndexReadError as e:
            cause = e.__cause__
            if not_found_ok and isinstance(cause, urllib.error.HTTPError) and cause.code == 404:
                return None
            raise

    def copy(self, url: str, out: IO[bytes], *, size: int | None = None, name: str = "") -> str:
        """Stream *url* into *out*; return the sha256 of what was written.

        :param size: the size the index lists: a shorter body is reported as truncated (a
            ``Content-Length`` is checked anyway), and it sizes the progress display.
        :raises TruncatedRead: fewer bytes than announced or listed.
        """
        digest = hashlib.sha256()
        with self.open(url, size=size) as body:
            total = body.length if body.length is not None else size
            show = self.progress is not None and (total is None or total >= PROGRESS_MIN)
            bar = self.progress(name or url, total) if show and self.progress else None
            try:
                while chunk := body.read():
                    digest.update(chunk)
                    out.write(chunk)
                    if bar is not None:
                        bar.update(len(chunk))
            finally:
                if bar is not None:
                    bar.close()
            received = body.received
        if size is not None and received < size:
            raise TruncatedRead(
                f"{url}: truncated: received {received} of the {size} bytes the index lists"
            )
        return digest.hexdigest()
