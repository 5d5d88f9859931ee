"""Every HTTP request of one command: http(s) only, kept-alive connections, retries, a total
deadline, caps, truncation, a log.

:class:`Transport` is the command's one way onto the network (pages, ``*-variants.json``, PEP 658
files, range reads, wheel downloads). What it guarantees, whatever the server does:

- only ``http://`` and ``https://`` are fetched, and redirects stay on them (a redirect loop or
  more than :data:`MAX_REDIRECTS` redirects is an error);
- connections are **kept alive**, one or more per host (as many as requests run at once), and
  reused by the following requests: a tree of 25 projects costs a few TCP/TLS handshakes, not 50;
- a GET that fails on a connection error or a transient status (:data:`RETRY_STATUSES`) is
  **retried** :data:`RETRIES` times with exponential backoff (:data:`BACKOFF_S`, doubled each
  time, or the server's ``Retry-After`` when sooner than the deadline), as pip and uv do, never
  past the request's deadline; each retry is logged (``--verbose``);
- every request has a **total deadline** that only what was *received* can extend: the first
  :attr:`Transport.deadline` seconds (60 by default), plus one second per :attr:`Transport.min_rate`
  bytes of body received, never more than :data:`MAX_DEADLINE_S` in all. Retries, the name
  lookup (the system resolver has no timeout of its own), connecting, TLS and headers count. A
  server announcing 100 GiB and dripping a byte every few seconds is cut off after the first
  minute, whatever it announced; an honest download is never cut off while it averages more
  than ``min_rate`` (32 KiB/s);
- a body shorter than its ``Content-Length`` is a :class:`~variant_bridge.errors.TruncatedRead`;
  a document larger than its cap is refused with its size, from ``Content-Length`` when the
  server announces it, before anything is read; a compressed body (``Content-Encoding``), which
  is never asked for, is refused;
- every URL requested is passed to :attr:`Transport.log` (``--verbose``), long downloads report
  to :attr:`Transport.progress`, and :attr:`Transport.received` counts the bytes.

Documents may be fetched ahead, on a small pool of threads (:meth:`Transport.prefetch`): a later
:meth:`Transport.get` of the same URL takes the answer (or waits for it) instead of asking again.
The ``*_proxy`` variables are honoured (``https`` through a ``CONNECT`` tunnel).
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Mapping
from typing import IO, TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from variant_bridge._version import __version__
from variant_bridge.errors import IndexReadError, TruncatedRead
from variant_bridge.indexes._connections import Clock, Connections, Expired, Origin
from variant_bridge.indexes._responses import (
    Body,
    DeadlineExceeded,
    HTTPStatusError,
    Progress,
    ProgressFactory,
    Response,
    TooLarge,
    length,
    reason,
)

if TYPE_CHECKING:
    import http.client
    from concurrent.futures import Future, ThreadPoolExecutor

__all__ = [
    "BACKOFF_S",
    "DEADLINE_S",
    "MAX_DEADLINE_S",
    "MAX_DOCUMENT",
    "MAX_REDIRECTS",
    "MIN_RATE",
    "READ_TIMEOUT_S",
    "RETRIES",
    "RETRY_STATUSES",
    "WORKERS",
    "Body",
    "DeadlineExceeded",
    "HTTPStatusError",
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
"""Seconds a request may take before received bytes add time (``$VARIANT_BRIDGE_HTTP_TIMEOUT``)."""
MIN_RATE = 32 * 1024
"""Bytes per second a body must average: each one received adds ``1 / MIN_RATE`` s."""
MAX_DEADLINE_S = 3 * 3600.0
"""The most one request may take, however fast bytes arrive (a 2.5 GB wheel at 240 KB/s)."""
MAX_DOCUMENT = 64 * 1024 * 1024
"""The largest index page or ``*-variants.json`` read (a huge project page is a few MB)."""
PROGRESS_MIN = 1024 * 1024
"""Downloads of at least this many bytes (or of unknown size) report progress."""
RETRIES = 3
"""Retries of a GET after a connection error or a transient status (pip's and uv's default)."""
BACKOFF_S = 0.25
"""Seconds before the first retry; doubled before each next one."""
RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
"""Statuses that say "try again": a timeout, too many requests, server errors and gateways."""
MAX_REDIRECTS = 10
"""Redirects followed for one request (urllib's limit)."""
WORKERS = 8
"""Requests one command runs at once (prefetching): at most this many connections per host."""
_MAX_IDLE = WORKERS
_DRAIN = 64 * 1024
_MAX_RETRY_AFTER_S = 10.0
_CHUNK = 1 << 16
_USER_AGENT = f"variant-bridge/{__version__}"
_SCHEMES = ("http", "https")
_REDIRECTS = frozenset({301, 302, 303, 307, 308})


def _status_text(status: int, phrase: str) -> str:
    return f"HTTP {status} {phrase}".rstrip()


class _Attempt(Exception):
    """A failed attempt that may be retried: the error to raise if it is the last."""

    def __init__(self, error: IndexReadError, why: str, retry_after: float | None = None) -> None:
        super().__init__(why)
        self.error = error
        self.why = why
        self.retry_after = retry_after


class Transport:
    """The HTTP requests of one command (see the module docstring).

    :param read_timeout: seconds one read may wait.
    :param deadline: seconds a request may take before received bytes add time.
    :param min_rate: bytes per second that buy one more second each (see :data:`MIN_RATE`).
    :param max_deadline: the most a request may take in all.
    :param retries: retries of a GET after a connection error or a transient status.
    :param backoff: seconds before the first retry (doubled each time).
    :param log: called with a line for every request (``GET url``), redirect and retry.
    :param progress: makes a progress display for downloads of at least :data:`PROGRESS_MIN`.
    :param workers: requests run at once by :meth:`prefetch` and :meth:`submit`.
    """

    def __init__(
        self,
        *,
        read_timeout: float = READ_TIMEOUT_S,
        deadline: float = DEADLINE_S,
        min_rate: float = MIN_RATE,
        max_deadline: float = MAX_DEADLINE_S,
        retries: int = RETRIES,
        backoff: float = BACKOFF_S,
        log: Callable[[str], None] | None = None,
        progress: ProgressFactory | None = None,
        workers: int = WORKERS,
    ) -> None:
        self.read_timeout = read_timeout
        self.deadline = deadline
        self.min_rate = min_rate
        self.max_deadline = max_deadline
        self.retries = retries
        self.backoff = backoff
        self.log = log
        self.progress = progress
        self.workers = workers
        self.requests = 0
        """Requests made so far (retries and redirects included)."""
        self.received = 0
        """Body bytes received so far."""
        self.retried = 0
        """Retries made so far."""
        self._lock = threading.Lock()
        self._pool = Connections(read_timeout, workers)
        self._executor: ThreadPoolExecutor | None = None
        self._memo: dict[tuple[str, str | None, int], _Entry] = {}
        self._settled: set[tuple[str, str | None, int]] = set()
        self._closing = False
        self._closed = weakref.finalize(self, _shut, self._pool, [None])

    # -- life cycle -------------------------------------------------------------------------

    @property
    def connections(self) -> int:
        """TCP connections opened so far."""
        return self._pool.opened

    def close(self) -> None:
        """Close the kept-alive connections and stop the prefetching threads (a prefetch not
        started is dropped; one under way ends with its request)."""
        self._closing = True
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None
        self._pool.close()

    def __enter__(self) -> Transport:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _received_bytes(self, count: int) -> None:
        self._count(0, count)

    def _count(self, requests: int, received: int) -> None:
        with self._lock:
            self.requests += requests
            self.received += received

    # -- requests ---------------------------------------------------------------------------

    @contextlib.contextmanager
    def open(
        self,
        url: str,
        *,
        accept: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Iterator[Body]:
        """Send a GET for *url* and yield its open :class:`Body` (closed when the block ends);
        transient failures are retried first, and redirects followed.

        :raises HTTPStatusError: an error status (after the retries of a transient one).
        :raises IndexReadError: another scheme than http(s), a redirect off them or in a loop,
            no connection, a compressed body; :raises DeadlineExceeded: the deadline passed.
        """
        if urlsplit(url).scheme.lower() not in _SCHEMES:
            raise IndexReadError(f"cannot fetch {url}: only http:// and https:// URLs are fetched")
        sent = {"User-Agent": _USER_AGENT, **(headers or {})}
        if accept:
            sent["Accept"] = accept
        if self.log is not None:
            span = sent.get("Range")
            self.log(f"GET {url}" + (f" ({span})" if span else ""))
        clock = Clock(self.deadline, self.min_rate, self.max_deadline)
        origin, connection, response, final = self._answer(url, sent, clock)
        body = Body(self._received_bytes, url, final, response, clock)
        try:
            yield body
        finally:
            self._release(origin, connection, response)

    def _answer(
        self, url: str, headers: Mapping[str, str], clock: Clock
    ) -> tuple[Origin, http.client.HTTPConnection, http.client.HTTPResponse, str]:
        """The first answer that is neither a redirect nor a retried failure."""
        visited = [url]
        current = url
        attempt = 0
        while True:
            try:
                origin, connection, response = self._exchange(url, current, headers, clock)
            except _Attempt as failed:
                attempt += 1
                self._pause(url, failed, attempt, clock)
                continue
            location = response.headers.get("Location")
            if response.status not in _REDIRECTS or not location:
                return origin, connection, response, current
            self._release(origin, connection, response, drain=True)
            target = urljoin(current, location.strip())
            self._check_redirect(url, target, visited)
            visited.append(target)
            if self.log is not None:
                self.log(f"  redirected to {target}")
            current = target

    def _check_redirect(self, url: str, target: str, visited: list[str]) -> None:
        if urlsplit(target).scheme.lower() not in _SCHEMES:
            raise IndexReadError(
                f"cannot fetch {url}: it redirects to {target}; only http:// and https:// "
                "redirects are followed"
            )
        if target in visited:
            raise IndexReadError(f"cannot fetch {url}: it redirects in a loop (to {target} again)")
        if len(visited) > MAX_REDIRECTS:
            raise IndexReadError(f"cannot fetch {url}: more than {MAX_REDIRECTS} redirects")

    def _pause(self, url: str, failed: _Attempt, attempt: int, clock: Clock) -> None:
        """Wait before retry number *attempt*, or raise when no retry (or time) is left."""
        delay = self.backoff * 2 ** (attempt - 1)
        if failed.retry_after is not None:
            delay = max(delay, min(failed.retry_after, _MAX_RETRY_AFTER_S))
        if attempt > self.retries or clock.remaining() <= delay:
            if attempt > 1 and not isinstance(failed.error, DeadlineExceeded):
                tried = f" ({attempt - 1} {'retry' if attempt == 2 else 'retries'})"
                failed.error.args = (str(failed.error) + tried,)
            raise failed.error from failed.error.__cause__
        with self._lock:
            self.retried += 1
        if self.log is not None:
            self.log(
                f"  retrying {url} in {delay:.2f} s ({failed.why}; retry {attempt} of "
                f"{self.retries})"
            )
        time.sleep(delay)

    def _exchange(
        self, url: str, current: str, headers: Mapping[str, str], clock: Clock
    ) -> tuple[Origin, http.client.HTTPConnection, http.client.HTTPResponse]:
        """One request on a kept-alive connection (a fresh one when a kept one went stale).

        :raises _Attempt: a failure worth retrying.
        """
        import http.client

        parts = urlsplit(current)
        scheme = parts.scheme.lower()
        try:
            port = parts.port or (443 if scheme == "https" else 80)
        except ValueError as e:
            raise IndexReadError(f"cannot fetch {url}: {e}") from None
        origin = (scheme, parts.hostname or "", port)
        if not origin[1]:
            raise IndexReadError(f"cannot fetch {url}: no host in {current}")
        target = parts.path or "/"
        if parts.query:
            target += f"?{parts.query}"
        while True:
            connection, reused = self._pool.take(origin, clock)
            self._count(1, 0)
            try:
                proxy: Any = connection
                path = current.split("#", 1)[0] if proxy.absolute_form else target
                connection.request("GET", path, headers={**headers, **proxy.extra_headers})
                response = connection.getresponse()
            except Expired as e:
                connection.close()
                raise DeadlineExceeded(
                    f"cannot fetch {url}: no answer within {clock.allowed:.0f} s"
                ) from e
            except (OSError, http.client.HTTPException) as e:
                connection.close()
                if reused and _stale(e):
                    continue  # the server closed an idle connection: not a failed attempt
                failure = IndexReadError(f"cannot fetch {url}: {reason(e)}")
                import socket  # loaded by the connection that failed

                if isinstance(e, socket.gaierror) and e.errno != socket.EAI_AGAIN:
                    raise failure from e  # no such host: asking again will not make one
                failure.__cause__ = e
                raise _Attempt(failure, reason(e)) from e
            break
        if response.status >= 400:
            text = _status_text(response.status, response.reason)
            failure = HTTPStatusError(f"cannot fetch {url}: {text}", response.status)
            retry_after = _retry_after(response.headers.get("Retry-After"))
            self._release(origin, connection, response, drain=True)
            if response.status in RETRY_STATUSES:
                raise _Attempt(failure, text, retry_after)
            raise failure
        encoding = (response.headers.get("Content-Encoding") or "identity").strip().lower()
        if encoding != "identity" and response.status not in _REDIRECTS:
            self._release(origin, connection, response)
            raise IndexReadError(
                f"cannot fetch {url}: the server sent it compressed (Content-Encoding: "
                f"{encoding[:40]}), which was not asked for"
            )
        return origin, connection, response

    def _release(
        self,
        origin: Origin,
        connection: http.client.HTTPConnection,
        response: http.client.HTTPResponse,
        *,
        drain: bool = False,
    ) -> None:
        """Keep *connection* for the next request when its answer was read whole, else close it.

        :param drain: read a small rest of the answer first (an error page, a redirect).
        """
        if not response.isclosed() and response.length == 0:
            response.read()  # read whole: this marks it closed
        if drain and not response.isclosed():
            size = length(response.headers.get("Content-Length"))
            if size is not None and size <= _DRAIN:
                with contextlib.suppress(Exception):
                    response.read(size)
        if response.isclosed() and not response.will_close and connection.sock is not None:
            self._pool.give(origin, connection)
        else:
            response.close()
            connection.close()

    def get(
        self,
        url: str,
        *,
        accept: str | None = None,
        not_found_ok: bool = False,
        max_bytes: int = MAX_DOCUMENT,
    ) -> Response | None:
        """Fetch a (small) document whole (taking it from :meth:`prefetch` when asked ahead).

        :param not_found_ok: return ``None`` on HTTP 404 instead of raising.
        :raises TooLarge: larger than *max_bytes* (from ``Content-Length`` when announced).
        :raises IndexReadError: see :meth:`open`; a truncated body.
        """
        key = (url, accept, max_bytes)
        with self._lock:
            entry = self._memo.pop(key, None)  # fetched ahead (or being fetched): take it
            mine = entry is None
            if entry is None:
                entry = self._memo[key] = _Entry()  # in flight: a prefetch of it waits
            self._settled.add(key)
        if mine:
            try:
                found = entry.settle(lambda: self._get(url, accept, max_bytes))
            finally:
                with self._lock:
                    if self._memo.get(key) is entry:
                        del self._memo[key]
        else:
            found = entry.wait()
        if isinstance(found, IndexReadError):
            if not_found_ok and isinstance(found, HTTPStatusError) and found.status == 404:
                return None
            raise found
        return found

    def _get(self, url: str, accept: str | None, max_bytes: int) -> Response:
        with self.open(url, accept=accept) as body:
            data = body.read_all(max_bytes)
            content_type = body.headers.get_content_type()
            charset = body.headers.get_content_charset()
            return Response(body.url, data, content_type, charset, body.status)

    def prefetch(
        self, url: str, *, accept: str | None = None, max_bytes: int = MAX_DOCUMENT
    ) -> Response | None:
        """Fetch *url* now (on a thread of :meth:`submit`), for the first later :meth:`get` with
        the same arguments to take instead of asking the server again.

        :returns: the answer, to read (the later :meth:`get` still gets it); ``None`` when the
            request failed (:meth:`get` then raises the error), or a :meth:`get` took it first.
        """
        key = (url, accept, max_bytes)
        with self._lock:
            if key in self._settled or self._closing:
                return None
            entry = self._memo.get(key)
            run = entry is None
            if entry is None:
                entry = self._memo[key] = _Entry()
        found = entry.settle(lambda: self._get(url, accept, max_bytes)) if run else entry.wait()
        return found if isinstance(found, Response) else None

    def submit(self, task: Callable[[], object]) -> Future[object]:
        """Run *task* on one of :attr:`workers` threads (requests run at once, bounded)."""
        with self._lock:
            if self._executor is None:
                from concurrent.futures import ThreadPoolExecutor

                self._executor = ThreadPoolExecutor(self.workers, thread_name_prefix="fetch")
                self._closed.detach()
                self._closed = weakref.finalize(self, _shut, self._pool, [self._executor])
            return self._executor.submit(task)

    def copy(self, url: str, out: IO[bytes], *, size: int | None = None, name: str = "") -> str:
        """Stream *url* into *out*; return the sha256 of what was written.

        :param size: the size the index lists: a shorter body is reported as truncated (a
            ``Content-Length`` is checked anyway), and it sizes the progress display; it never
            buys time (see the deadline).
        :raises TruncatedRead: fewer bytes than announced or listed.
        """
        digest = hashlib.sha256()
        with self.open(url) as body:
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


class _Entry:
    """One document fetched (or being fetched) once for whoever asks first and next."""

    __slots__ = ("done", "result")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.result: Response | IndexReadError | None = None

    def settle(self, fetch: Callable[[], Response]) -> Response | IndexReadError:
        try:
            self.result = fetch()
        except IndexReadError as e:
            self.result = e
        except BaseException as e:  # anything else still wakes whoever waits
            self.result = IndexReadError(f"cannot fetch: {reason(e)}")
            raise
        finally:
            self.done.set()
        return self.result

    def wait(self) -> Response | IndexReadError:
        self.done.wait()
        assert self.result is not None
        return self.result


def _stale(error: BaseException) -> bool:
    """A kept-alive connection the server closed while it was idle."""
    import http.client

    return isinstance(
        error,
        (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, http.client.BadStatusLine),
    )


def _retry_after(text: str | None) -> float | None:
    if text and text.strip().isdigit() and len(text.strip()) < 6:
        return float(text.strip())
    return None


def _shut(pool: Connections, executor: list[Any]) -> None:
    """Close what a transport left open when it is collected (or at exit)."""
    if executor[0] is not None:
        executor[0].shutdown(wait=False, cancel_futures=True)
    pool.close()
