"""The transport on a real loopback server: kept-alive connections, retries, deadlines that only
received bytes extend, redirects, prefetching (issue 23, issue 22)."""

from __future__ import annotations

import io
import threading
from pathlib import Path

import pytest

from tests.worlds.index_server import IndexServer
from variant_bridge.errors import IndexReadError
from variant_bridge.indexes.transport import (
    DeadlineExceeded,
    HTTPStatusError,
    Transport,
)

BODY = b"0123456789" * 1000


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> IndexServer:
    root = tmp_path_factory.mktemp("transport")
    for name in ("a.bin", "b.bin", "c.bin", "d.bin"):
        (root / name).write_bytes(BODY)
    (root / "small.bin").write_bytes(BODY[:600])
    with IndexServer(root) as index:
        yield index  # type: ignore[misc]


def _quick(**options: object) -> Transport:
    """A transport whose retries do not wait long (the backoff is what is under test)."""
    return Transport(backoff=0.01, **options)  # type: ignore[arg-type]


def test_one_connection_serves_every_request_to_a_host(server: IndexServer) -> None:
    before = server.connections
    with Transport() as transport:
        for name in ("a.bin", "b.bin", "c.bin", "d.bin", "a.bin"):
            response = transport.get(server.file_url(name))
            assert response is not None
            assert response.body == BODY
        ranged = [
            transport.open(server.file_url("b.bin"), headers={"Range": "bytes=-10"})
            for _ in range(3)
        ]
        for opened in ranged:
            with opened as body:
                assert body.read_exact(10) == BODY[-10:]
        assert transport.requests == 8
        assert transport.connections == 1
    assert server.connections - before == 1


def test_a_body_left_unread_is_not_kept_alive(server: IndexServer) -> None:
    before = server.connections
    with Transport() as transport:
        with transport.open(server.file_url("a.bin")) as body:
            assert body.read(10) == BODY[:10]  # the rest is never read: the connection goes
        assert transport.get(server.file_url("b.bin")) is not None
        assert transport.connections == 2
    assert server.connections - before == 2


def test_a_connection_the_server_closed_while_idle_is_replaced(server: IndexServer) -> None:
    with Transport() as transport:
        assert transport.get(server.file_url("a.bin")) is not None
        for kept in transport._pool._idle.values():  # the server hangs up, as after its timeout
            for connection in kept:
                assert connection.sock is not None
                connection.sock.shutdown(2)
        response = transport.get(server.file_url("b.bin"))
        assert response is not None
        assert response.body == BODY
        assert transport.retried == 0  # not a failed attempt: nothing was asked of the server


def test_a_transient_status_is_retried_and_logged(server: IndexServer) -> None:
    lines: list[str] = []
    url = server.file_url("a.bin")
    with server.configured(fail={"/files/a.bin": 2}), _quick(log=lines.append) as transport:
        response = transport.get(url)
    assert response is not None
    assert response.body == BODY
    assert transport.retried == 2
    assert lines == [
        f"GET {url}",
        f"  retrying {url} in 0.01 s (HTTP 503 Service Unavailable; retry 1 of 3)",
        f"  retrying {url} in 0.02 s (HTTP 503 Service Unavailable; retry 2 of 3)",
    ]


def test_a_dropped_connection_is_retried(server: IndexServer) -> None:
    url = server.file_url("c.bin")
    with server.configured(reset={"/files/c.bin": 1}), _quick() as transport:
        response = transport.get(url)
    assert response is not None
    assert response.body == BODY
    assert transport.retried == 1


def test_retries_end_with_the_last_error_and_their_count(server: IndexServer) -> None:
    url = server.file_url("a.bin")
    with (
        server.configured(fail={"/files/a.bin": 10}),
        _quick() as transport,
        pytest.raises(HTTPStatusError) as raised,
    ):
        transport.get(url)
    assert str(raised.value) == f"cannot fetch {url}: HTTP 503 Service Unavailable (3 retries)"
    assert raised.value.status == 503
    assert [r.status for r in server.requests[-4:]] == [503] * 4


def test_an_error_that_is_not_transient_is_not_retried(server: IndexServer) -> None:
    url = server.file_url("nosuch.bin")
    with _quick() as transport, pytest.raises(HTTPStatusError, match=r"HTTP 404 Not Found$"):
        transport.get(url)
    assert transport.retried == 0
    assert transport.requests == 1


def test_retries_stop_at_the_deadline(server: IndexServer) -> None:
    url = server.file_url("a.bin")
    # Backoffs of 0.4, 0.8 s... cannot fit a 1 s deadline twice: the error comes sooner.
    with (
        server.configured(fail={"/files/a.bin": 10}),
        Transport(deadline=1.0, backoff=0.4) as transport,
        pytest.raises(HTTPStatusError, match=r"HTTP 503 Service Unavailable \(1 retry\)$"),
    ):
        transport.get(url)
    assert transport.retried == 1


def test_a_server_announcing_100_gib_cannot_buy_time(server: IndexServer) -> None:
    """Issue 22: the deadline grows with what arrives, not with what is announced."""
    url = server.file_url("d.bin")
    announced = 100 * 1024**3
    with (
        server.configured(drip={"d.bin": 0.05}, announce={"d.bin": announced}),
        Transport(deadline=1.0) as transport,
        pytest.raises(DeadlineExceeded) as raised,
    ):
        transport.copy(url, io.BytesIO(), size=announced)
    message = str(raised.value)
    assert message.startswith(f"cannot fetch {url}: no complete answer within 1 s (")
    assert message.endswith(" bytes received; the server is stalled or too slow)")


def test_received_bytes_extend_the_deadline(server: IndexServer) -> None:
    """A body arriving faster than the minimum rate is not cut off by the first deadline."""
    url = server.file_url("small.bin")
    with (
        server.configured(drip={"small.bin": 0.002}),  # 600 bytes in more than 1.2 s
        Transport(deadline=1.0, min_rate=10) as transport,  # every 10 bytes buy a second
    ):
        out = io.BytesIO()
        transport.copy(url, out)
    assert out.getvalue() == BODY[:600]


def test_a_redirect_loop_is_one_line(server: IndexServer) -> None:
    url = server.file_url("a.bin")
    loop = {"/files/a.bin": "/files/b.bin", "/files/b.bin": "/files/a.bin"}
    with (
        server.configured(redirects=loop),
        Transport() as transport,
        pytest.raises(IndexReadError) as raised,
    ):
        transport.get(url)
    assert str(raised.value) == (f"cannot fetch {url}: it redirects in a loop (to {url} again)")


def test_a_compressed_body_is_refused_with_its_encoding(tmp_path: Path) -> None:
    import http.server

    class Gzip(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", "4")
            self.end_headers()
            self.wfile.write(b"\x1f\x8b\x08\x00")

        def log_message(self, *args: object) -> None:
            pass

    httpd = http.server.HTTPServer(("127.0.0.1", 0), Gzip)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}/simple/x/"
    try:
        with Transport() as transport, pytest.raises(IndexReadError) as raised:
            transport.get(url)
    finally:
        httpd.shutdown()
        httpd.server_close()
    assert str(raised.value) == (
        f"cannot fetch {url}: the server sent it compressed (Content-Encoding: gzip), which "
        "was not asked for"
    )


def test_a_prefetched_document_is_fetched_once(server: IndexServer) -> None:
    url, raced = server.file_url("c.bin"), server.file_url("d.bin")
    before = len(server.paths_requested("/files/"))
    with Transport() as transport:
        assert transport.submit(lambda: transport.prefetch(url)).result() is not None
        response = transport.get(url)  # takes the prefetched answer
        assert response is not None
        assert response.body == BODY
        assert transport.prefetch(url) is None  # taken: a late prefetch asks nothing
        ahead = transport.submit(lambda: transport.prefetch(raced))
        response = transport.get(raced)  # whichever starts first, the other waits for it
        ahead.result()
        assert response is not None
        assert response.body == BODY
    assert sorted(server.paths_requested("/files/")[before:]) == ["/files/c.bin", "/files/d.bin"]


def test_a_failed_prefetch_is_the_later_gets_error(server: IndexServer) -> None:
    url = server.file_url("nosuch.bin")
    with Transport() as transport:
        assert transport.submit(lambda: transport.prefetch(url)).result() is None
        with pytest.raises(HTTPStatusError, match=r"HTTP 404 Not Found$"):
            transport.get(url)
        assert transport.get(url, not_found_ok=True) is None
