"""Kept-alive HTTP connections for :class:`~variant_bridge.indexes.transport.Transport`.

:class:`Connections` hands out one :class:`http.client.HTTPConnection` (or ``HTTPSConnection``)
per request, taken from the idle ones of its origin when there is one: the server's keep-alive
lets the next request skip the TCP and TLS handshakes. A connection is given back only when its
answer was read whole. Every ``recv``, the name lookup and the connection attempt run within the
request's :class:`Clock` (the transport's total deadline, without a timer thread: each socket
wait is bounded by the time left); a host's addresses are looked up once per command, on a daemon
thread nobody waits for past the deadline (the system resolver has no timeout of its own). The
``*_proxy`` variables are honoured: ``http://`` through the proxy, ``https://`` through a
``CONNECT`` tunnel.
"""

from __future__ import annotations

import contextlib
import functools
import io
import os
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

if TYPE_CHECKING:
    import http.client
    import socket
    import ssl

__all__ = ["Clock", "Connections", "Expired", "Origin"]

Origin = tuple[str, str, int]
"""``(scheme, host, port)``."""
_CHUNK = 1 << 16


@functools.cache
def _quickack() -> tuple[int, int] | None:
    """``(level, option)`` of Linux's acknowledge-at-once: a kept-alive connection otherwise
    delays its ACK (up to 40 ms), and a server that writes an answer's headers and body apart
    with Nagle's algorithm on (Python's http.server does) waits for that ACK before sending the
    body. (socket is imported by the first connection: a command reading only local files never
    loads it.)"""
    import socket

    option: int | None = getattr(socket, "TCP_QUICKACK", None)
    return None if option is None else (socket.IPPROTO_TCP, option)


class Expired(TimeoutError):
    """The request's deadline passed (raised by a read, a lookup or a connection attempt)."""


class Clock:
    """One request's deadline: the first *base* seconds, then one more second per *min_rate*
    bytes of body received, never more than *ceiling* in all (an announced size buys nothing)."""

    __slots__ = ("base", "ceiling", "min_rate", "received", "start")

    def __init__(self, base: float, min_rate: float, ceiling: float) -> None:
        self.start = time.monotonic()
        self.base = base
        self.min_rate = min_rate
        self.ceiling = max(ceiling, base)
        self.received = 0

    @property
    def allowed(self) -> float:
        """Seconds allowed from the start, now."""
        return min(self.base + self.received / self.min_rate, self.ceiling)

    def remaining(self) -> float:
        return self.start + self.allowed - time.monotonic()


class _Reader(io.RawIOBase):
    """A connection's socket as http.client reads it, each ``recv`` within the deadline."""

    def __init__(self, sock: socket.socket, clock: Clock, read_timeout: float) -> None:
        super().__init__()
        self._sock = sock
        self._clock = clock
        self._read_timeout = read_timeout

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        left = self._clock.remaining()
        if left <= 0:
            raise Expired("deadline")
        self._sock.settimeout(min(self._read_timeout, left))
        quickack = _quickack()
        if quickack is not None:  # ACK at once: a server that Nagles waits for it (40 ms)
            with contextlib.suppress(OSError):
                self._sock.setsockopt(*quickack, 1)
        try:
            return self._sock.recv_into(buffer)
        except TimeoutError:
            if self._clock.remaining() <= 0:
                raise Expired("deadline") from None
            raise


@functools.cache
def _classes() -> tuple[type[http.client.HTTPConnection], type[http.client.HTTPSConnection]]:
    """The connection classes (made when the first request needs http.client)."""
    import http.client

    class Answer(http.client.HTTPResponse):
        """A response whose every read is within its request's deadline."""

        def __init__(self, sock: socket.socket, *args: Any, owner: Any, **kwargs: Any) -> None:
            super().__init__(sock, *args, **kwargs)
            self.fp = io.BufferedReader(_Reader(sock, owner.clock, owner.read_timeout), _CHUNK)

    class Mixin:
        """Connects through :class:`Connections` (the looked-up addresses, the deadline)."""

        clock: Clock
        read_timeout: float
        connector: Callable[[str, int, float], socket.socket]
        absolute_form = False
        """Requests name the whole URL (``http://`` through a proxy)."""
        extra_headers: dict[str, str] = {}  # noqa: RUF012 - replaced per instance, never changed

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.response_class = functools.partial(Answer, owner=self)
            self._create_connection = self._open  # http.client's hook (set per instance)

        def _open(self, address: tuple[str, int], *args: Any) -> socket.socket:
            return self.connector(address[0], address[1], self.clock.remaining())

    class Plain(Mixin, http.client.HTTPConnection):  # type: ignore[misc]
        pass

    class Secure(Mixin, http.client.HTTPSConnection):  # type: ignore[misc]
        pass

    return Plain, Secure


def _proxy(scheme: str, host: str) -> str | None:
    """The ``*_proxy`` URL for *scheme* unless ``no_proxy`` exempts *host*."""
    if not any(k.lower().endswith("_proxy") for k in os.environ):
        return None
    import urllib.request

    proxies = urllib.request.getproxies_environment()
    found = proxies.get(scheme)
    bypass: Callable[[str, dict[str, str]], bool] = urllib.request.proxy_bypass_environment  # type: ignore[attr-defined]
    if not found or bypass(host, proxies):
        return None
    return found if "://" in found else f"http://{found}"


def _proxy_auth(proxy: str) -> dict[str, str]:
    where = urlsplit(proxy)
    if where.username is None:
        return {}
    import base64

    pair = f"{unquote(where.username)}:{unquote(where.password or '')}".encode()
    return {"Proxy-Authorization": "Basic " + base64.b64encode(pair).decode()}


def _literal(host: str) -> bool:
    import socket

    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            socket.inet_pton(family, host)
        except (OSError, ValueError):
            continue
        return True
    return False


class Connections:
    """Kept-alive connections by origin, for one transport.

    :param read_timeout: seconds a connection attempt or one read may wait.
    :param max_idle: idle connections kept per origin (the most requests run at once).
    """

    def __init__(self, read_timeout: float, max_idle: int) -> None:
        self.read_timeout = read_timeout
        self.max_idle = max_idle
        self.opened = 0
        """TCP connections opened so far."""
        self._lock = threading.Lock()
        self._idle: dict[Origin, list[http.client.HTTPConnection]] = {}
        self._addresses: dict[tuple[str, int], list[Any]] = {}
        self._tls: ssl.SSLContext | None = None

    def take(self, origin: Origin, clock: Clock) -> tuple[http.client.HTTPConnection, bool]:
        """A connection to *origin* for one request timed by *clock*, and whether it is a kept
        one (which the server may have closed meanwhile)."""
        with self._lock:
            idle = self._idle.get(origin)
            connection = idle.pop() if idle else None
        reused = connection is not None
        if connection is None:
            connection = self._new(*origin)
        connection.clock = clock  # type: ignore[attr-defined]
        return connection, reused

    def give(self, origin: Origin, connection: http.client.HTTPConnection) -> None:
        """Keep *connection* (its last answer read whole) for the next request to *origin*."""
        with self._lock:
            idle = self._idle.setdefault(origin, [])
            if len(idle) < self.max_idle:
                idle.append(connection)
                return
        connection.close()

    def close(self) -> None:
        with self._lock:
            connections = [c for idle in self._idle.values() for c in idle]
            self._idle.clear()
        for connection in connections:
            connection.close()

    def _new(self, scheme: str, host: str, port: int) -> http.client.HTTPConnection:
        plain, secure = _classes()
        proxy = _proxy(scheme, host)
        connection: Any
        if proxy is None:
            connection = (
                secure(host, port, context=self._context())
                if scheme == "https"
                else plain(host, port)
            )
        else:
            where = urlsplit(proxy)
            proxy_host = where.hostname or ""
            proxy_port = where.port or (443 if where.scheme == "https" else 80)
            if scheme == "https":
                connection = secure(proxy_host, proxy_port, context=self._context())
                connection.set_tunnel(host, port, headers=_proxy_auth(proxy))
            else:
                connection = plain(proxy_host, proxy_port)
                connection.absolute_form = True
                connection.extra_headers = _proxy_auth(proxy)
        connection.connector = self._connect
        connection.read_timeout = self.read_timeout
        return connection  # type: ignore[no-any-return]

    def _context(self) -> ssl.SSLContext:
        if self._tls is None:
            import ssl

            self._tls = ssl.create_default_context()
        return self._tls

    def _resolve(self, host: str, port: int, seconds: float) -> list[Any]:
        """``getaddrinfo`` for *host*, once per transport, within *seconds*."""
        import socket

        key = (host, port)
        found = self._addresses.get(key)
        if found is not None:
            return found
        if _literal(host):  # an address needs no lookup
            found = socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM, 0, socket.AI_NUMERICHOST)
        else:
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
                raise Expired(f"no address for {host} before the deadline") from None
            if isinstance(answer[0], OSError):
                raise answer[0] from None
            found = answer[0]
        assert found is not None
        self._addresses[key] = found
        return found

    def _connect(self, host: str, port: int, seconds: float) -> socket.socket:
        """A connected socket to *host*: name lookup and connection within *seconds*."""
        import socket

        start = time.monotonic()
        error: OSError | None = None
        for family, kind, proto, _, address in self._resolve(host, port, seconds):
            left = seconds - (time.monotonic() - start)
            if left <= 0:
                raise Expired(f"no connection to {host} before the deadline")
            sock = socket.socket(family, kind, proto)
            try:
                sock.settimeout(min(self.read_timeout, left))
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                sock.connect(address)
            except OSError as e:
                sock.close()
                if isinstance(e, TimeoutError) and seconds - (time.monotonic() - start) <= 0:
                    raise Expired(f"no connection to {host} before the deadline") from e
                error = e
                continue
            with self._lock:
                self.opened += 1
            return sock
        raise error or OSError(f"no address for {host}")
