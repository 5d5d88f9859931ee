"""What a request gives back: an open :class:`Body` read within its deadline, a whole
:class:`Response`, and the errors a request ends with (used through
:mod:`variant_bridge.indexes.transport`, which re-exports them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from variant_bridge._values import value
from variant_bridge.errors import IndexReadError, TruncatedRead
from variant_bridge.indexes._connections import Clock, Expired

if TYPE_CHECKING:
    import http.client
    from email.message import Message

__all__ = [
    "Body",
    "DeadlineExceeded",
    "HTTPStatusError",
    "Progress",
    "ProgressFactory",
    "Response",
    "TooLarge",
    "length",
    "reason",
]

_CHUNK = 1 << 16


class DeadlineExceeded(IndexReadError):
    """A request took longer than its total deadline."""


class TooLarge(IndexReadError):
    """A document is larger than what is read of it."""

    def __init__(self, message: str, size: int | None) -> None:
        super().__init__(message)
        self.size = size


class HTTPStatusError(IndexReadError):
    """The server answered with an error status (after retries, for a transient one)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


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
    if isinstance(error, ConnectionRefusedError):
        return "connection refused"
    if isinstance(error, ConnectionResetError):
        return "connection reset by the server"
    if isinstance(error, TimeoutError):
        return "timed out"
    import socket  # lazy: a command that fetches nothing never loads it

    if isinstance(error, socket.gaierror):
        return f"cannot resolve host ({error.strerror})"
    if isinstance(error, OSError) and error.strerror:
        return error.strerror[:1].lower() + error.strerror[1:]
    name = type(error).__name__
    if name == "RemoteDisconnected":
        return "the server closed the connection without answering"
    return str(error) or name


class Body:
    """An open response: read it in chunks, each read within the request's deadline."""

    def __init__(
        self, counted: Callable[[int], None], url: str, final: str,
        response: http.client.HTTPResponse,
        clock: Clock,
    ) -> None:  # fmt: skip
        self._counted = counted
        self._response = response
        self._clock = clock
        self.requested = url
        self.url: str = final
        self.status: int = response.status
        self.headers: Message = response.headers
        self.length: int | None = length(response.headers.get("Content-Length"))
        """The announced ``Content-Length``; ``None`` when not announced."""
        self.received = 0

    def _expired(self) -> DeadlineExceeded:
        return DeadlineExceeded(
            f"cannot fetch {self.requested}: no complete answer within "
            f"{self._clock.allowed:.0f} s ({self.received} bytes received; the server is "
            "stalled or too slow)"
        )

    def read(self, size: int = _CHUNK) -> bytes:
        """Up to *size* bytes; ``b""`` at the end of a complete body.

        :raises TruncatedRead: the body ended before its ``Content-Length``.
        :raises DeadlineExceeded: the request's deadline passed.
        """
        import http.client

        try:
            data = self._response.read1(size)
        except Expired as e:
            raise self._expired() from e
        except http.client.IncompleteRead as e:
            raise TruncatedRead(self._truncated(self.received + len(e.partial))) from e
        except (OSError, ValueError, http.client.HTTPException) as e:
            if self._clock.remaining() <= 0:
                raise self._expired() from e
            raise IndexReadError(f"cannot read {self.requested}: {reason(e)}") from e
        self.received += len(data)
        self._clock.received += len(data)
        self._counted(len(data))
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


def length(text: str | None) -> int | None:
    if not text or not text.strip().isdigit():
        return None
    digits = text.strip().lstrip("0") or "0"
    return int(digits) if len(digits) <= 19 else 1 << 63  # a 5,000-digit length is huge
