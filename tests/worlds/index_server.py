"""A real loopback simple index (PEP 503 HTML and PEP 691 JSON) over a flat directory of files.

::

    with IndexServer(wheel_dir) as index:
        find_candidates("tinyvar", index_urls=[index.url], python_version="3.12",
                        transport=Transport())

Routes (all on ``127.0.0.1`` with a free port):

- ``/simple/``: the project list; ``/simple/{project}/``: one project's files (a non-normalised
  name is redirected to the normalised one, an unknown project is a 404). Both pages come as
  PEP 691 JSON when ``Accept`` prefers ``application/vnd.pypi.simple.v1+json``, else as HTML.
- ``/files/{filename}``: the files themselves, with HTTP range requests (``Range: bytes=a-b``,
  ``bytes=-n``) answered ``206 Partial Content`` unless ``ranges=False``.
- ``/files/{wheel}.metadata``: the wheel's ``METADATA`` (PEP 658), served for every wheel but
  advertised on the pages (``data-core-metadata`` / ``core-metadata``) only with
  ``core_metadata=True``, so a client that fetches it unadvertised is caught in the log.
- ``/links/``: one flat HTML page linking every file (a ``--find-links`` URL), with the same
  attributes as the project pages.

Project pages carry what real indexes do: ``#sha256=`` fragments / ``hashes``,
``data-requires-python`` / ``requires-python`` (taken from each wheel's ``METADATA`` unless
overridden), ``data-yanked`` / ``yanked``, ``size`` and ``versions``. The
``{name}-{version}-variants.json`` file is listed next to the wheels without ``requires-python``
or ``yanked`` (PEP 825 PR #5100).

The directory is read on every request, so tests can add files while the server runs. Options
(yanked files, wrong hashes, forced statuses, which forms are served, latency, answers that fail
before they succeed) can be changed for one block with :meth:`IndexServer.configured`. Every
request is logged in :attr:`IndexServer.requests`, and :attr:`IndexServer.connections` counts the
TCP connections (HTTP/1.1 keep-alive serves many requests on one).
"""

from __future__ import annotations

import contextlib
import hashlib
import html
import json
import re
import socket
import sys
import threading
import zipfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from email.parser import BytesHeaderParser
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote, unquote, urlsplit

from packaging.utils import canonicalize_name

__all__ = [
    "HTML_TYPE",
    "JSON_TYPE",
    "IndexOptions",
    "IndexServer",
    "LoggedRequest",
    "closed_port_url",
]

JSON_TYPE = "application/vnd.pypi.simple.v1+json"
HTML_TYPE = "application/vnd.pypi.simple.v1+html"
_API_VERSION = "1.1"
_VARIANTS_JSON = "-variants.json"

Form = Literal["json", "html"]


@dataclass(frozen=True)
class IndexOptions:
    """What the server serves and how it misbehaves.

    :param forms: the page forms served; ``("html",)`` behaves like a static HTML-only index
        that ignores ``Accept``; ``("json",)`` answers 406 to a client that will not take JSON.
    :param yanked: filename -> reason (``True`` for no reason): marked yanked on project pages.
    :param requires_python: filename -> ``requires-python`` to advertise instead of the wheel's own.
    :param wrong_hash: filenames whose advertised sha256 is wrong (the bytes are served intact).
    :param hidden: filenames left off the project pages (still downloadable).
    :param status: request path -> HTTP status to answer with instead, e.g.
        ``{"/simple/x/": 500}``.
    :param core_metadata: advertise each wheel's PEP 658 ``.metadata`` file (with its sha256).
    :param ranges: answer HTTP range requests (``False``: a server that sends the whole file).

    Hostile servers (issue 12):

    :param hashes: list sha256 hashes (``False``: an index that gives none).
    :param links: filename -> the URL its link points to instead (e.g. ``file:///etc/passwd``).
    :param redirects: request path -> where to redirect it (``302``), e.g. to ``ftp://...``.
    :param drip: filename -> seconds between the bytes of its body (a stalling server).
    :param truncate: filenames whose body stops halfway (the full ``Content-Length`` announced).
    :param huge_metadata: ``.metadata`` files announce a 1 GiB ``Content-Length`` (and send
        a few bytes).
    :param announce: filename -> the ``Content-Length`` announced for it instead (with *drip*:
        a server announcing 100 GiB and dripping).
    :param extra: project -> file entries added to its pages as they are (names no file system
        holds: a 5,000-digit version, say).
    :param mangle: request path -> ``(old, new)`` bytes replaced in its answer (a byte that is
        not UTF-8 in one filename of a JSON page).

    Slow and flaky servers (issue 23):

    :param latency: seconds every answer waits before it is sent (a distant index).
    :param fail: request path -> how many times it is answered ``503`` before it is served.
    :param reset: request path -> how many times the connection is closed unanswered first.
    """

    forms: tuple[Form, ...] = ("json", "html")
    yanked: Mapping[str, str | bool] = field(default_factory=dict)
    requires_python: Mapping[str, str] = field(default_factory=dict)
    wrong_hash: frozenset[str] = frozenset()
    hidden: frozenset[str] = frozenset()
    status: Mapping[str, int] = field(default_factory=dict)
    core_metadata: bool = False
    ranges: bool = True
    hashes: bool = True
    links: Mapping[str, str] = field(default_factory=dict)
    redirects: Mapping[str, str] = field(default_factory=dict)
    drip: Mapping[str, float] = field(default_factory=dict)
    truncate: frozenset[str] = frozenset()
    huge_metadata: bool = False
    announce: Mapping[str, int] = field(default_factory=dict)
    extra: Mapping[str, tuple[Mapping[str, Any], ...]] = field(default_factory=dict)
    mangle: Mapping[str, tuple[bytes, bytes]] = field(default_factory=dict)
    latency: float = 0.0
    fail: Mapping[str, int] = field(default_factory=dict)
    reset: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class LoggedRequest:
    path: str
    accept: str | None
    status: int
    content_type: str | None
    range: str | None = None
    """The ``Range`` header sent, if any."""
    sent: int = 0
    """Bytes of body sent."""


def closed_port_url() -> str:
    """An ``http://127.0.0.1:PORT/simple/`` URL on which nothing listens (connection refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/simple/"


def _project_of(filename: str) -> str | None:
    """The canonical project a file belongs to, from its name alone."""
    if filename.endswith(_VARIANTS_JSON):
        name = filename[: -len(_VARIANTS_JSON)].rpartition("-")[0]
        return canonicalize_name(name) if name else None
    if filename.endswith(".whl"):
        return canonicalize_name(filename.split("-", 1)[0])
    match = re.match(r"(.+?)-\d", filename)
    return canonicalize_name(match[1]) if match else None


def _version_of(filename: str) -> str | None:
    if filename.endswith(".whl"):
        parts = filename.split("-")
        return parts[1] if len(parts) >= 5 else None
    return None


def wheel_metadata(path: Path) -> bytes | None:
    """The ``METADATA`` of a wheel (its top-level ``.dist-info``), or ``None``."""
    try:
        with zipfile.ZipFile(path) as zf:
            for name in zf.namelist():
                if name.count("/") == 1 and name.endswith(".dist-info/METADATA"):
                    return zf.read(name)
    except (zipfile.BadZipFile, OSError):
        return None
    return None


def _wheel_requires_python(path: Path) -> str | None:
    """From the METADATA's header block only (a hostile wheel's body may inflate to GiBs)."""
    try:
        with zipfile.ZipFile(path) as zf:
            names = [
                n for n in zf.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA")
            ]
            if not names:
                return None
            with zf.open(names[0]) as member:
                head = member.read(1 << 20).replace(b"\r\n", b"\n").split(b"\n\n", 1)[0]
    except (zipfile.BadZipFile, OSError):
        return None
    value = BytesHeaderParser().parsebytes(head).get("Requires-Python")
    return str(value).strip() if value else None


_RANGE_RE = re.compile(r"bytes=(?P<start>[0-9]*)-(?P<end>[0-9]*)")


def _byte_range(header: str, size: int) -> tuple[int, int] | None:
    """``Range: bytes=a-b`` / ``bytes=a-`` / ``bytes=-n`` -> (first, last) inclusive."""
    match = _RANGE_RE.fullmatch(header.strip())
    if match is None or (not match["start"] and not match["end"]):
        return None
    if not match["start"]:
        return max(0, size - int(match["end"])), size - 1
    first = int(match["start"])
    last = min(int(match["end"]), size - 1) if match["end"] else size - 1
    return (first, last) if first <= last else None


def _accepted(accept: str | None) -> dict[str, float]:
    """``Accept`` header -> {media type: q}; no header means anything."""
    if not accept:
        return {"*/*": 1.0}
    result: dict[str, float] = {}
    for part in accept.split(","):
        media, *params = (p.strip() for p in part.split(";"))
        q = 1.0
        for param in params:
            key, _, value = param.partition("=")
            if key.strip() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        if media:
            result[media.lower()] = q
    return result


def _negotiate(accept: str | None, forms: tuple[Form, ...]) -> tuple[Form, str] | None:
    """Pick the form and content type to answer with; ``None`` means 406 Not Acceptable."""
    if forms == ("html",):
        return "html", "text/html"  # a static HTML index ignores Accept
    wanted = _accepted(accept)
    offers: list[tuple[Form, str]] = []
    for form in forms:
        if form == "json":
            offers.append(("json", JSON_TYPE))
        else:
            offers += [("html", "text/html"), ("html", HTML_TYPE)]
    best: tuple[float, int, tuple[Form, str]] | None = None
    for rank, offer in enumerate(offers):
        media = offer[1]
        q = wanted.get(media, wanted.get(media.split("/")[0] + "/*", wanted.get("*/*", 0.0)))
        # Without an explicit preference PEP 691 says answer HTML (what old clients expect).
        if media not in wanted and offer[0] == "json" and "html" in forms:
            q = min(q, 0.001)
        if q > 0 and (best is None or (q, -rank) > (best[0], best[1])):
            best = (q, -rank, offer)
    return best[2] if best is not None else None


class IndexServer:
    """A threaded HTTP server serving *root* as a simple index; use it as a context manager."""

    def __init__(self, root: Path, **options: Any) -> None:
        self.root = Path(root)
        self.options = IndexOptions(**options)
        self.requests: list[LoggedRequest] = []
        self.connections = 0
        """TCP connections accepted so far (keep-alive serves many requests on one)."""
        self.most_at_once = 0
        """The most requests the server was answering at the same time."""
        self._at_once = 0
        self._failed: dict[tuple[str, str], int] = {}
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._cache: dict[tuple[str, int, int], tuple[str, str | None]] = {}
        self._metadata_cache: dict[tuple[str, int, int], str | None] = {}

    # -- life cycle -------------------------------------------------------------------------
    def start(self) -> IndexServer:
        server = self

        class Handler(_Handler):
            index = server

        class Server(ThreadingHTTPServer):
            request_queue_size = 128  # clients that open many connections at once (uv, us)

            def handle_error(self, request: Any, client_address: Any) -> None:
                # A client that closes a kept-alive connection with an answer unread (a range
                # request answered whole) resets it: a real server drops it without a word.
                if not isinstance(sys.exc_info()[1], ConnectionError):
                    super().handle_error(request, client_address)

        self._httpd = Server(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},  # a quick shutdown keeps fixtures' teardown fast
            name="index-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = self._thread = None

    def __enter__(self) -> IndexServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @contextmanager
    def configured(self, **options: Any) -> Iterator[IndexServer]:
        """Change some :class:`IndexOptions` for the duration of a ``with`` block (the counts
        of ``fail``/``reset`` start again)."""
        previous = self.options
        self.options = replace(previous, **options)
        self._failed.clear()
        try:
            yield self
        finally:
            self.options = previous
            self._failed.clear()

    # -- addresses --------------------------------------------------------------------------
    @property
    def base(self) -> str:
        if self._httpd is None:
            raise RuntimeError("the index server is not running")
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def url(self) -> str:
        """The simple index root, ``http://127.0.0.1:PORT/simple/``."""
        return f"{self.base}/simple/"

    @property
    def links_url(self) -> str:
        """A flat page linking every file, usable as ``--find-links``."""
        return f"{self.base}/links/"

    def file_url(self, filename: str) -> str:
        return f"{self.base}/files/{quote(filename)}"

    def take_failure(self, kind: str, path: str) -> bool:
        """Whether this request of *path* should still fail as *kind* (``fail`` / ``reset``)."""
        wanted = (self.options.fail if kind == "fail" else self.options.reset).get(path, 0)
        with self._lock:
            done = self._failed.get((kind, path), 0)
            if done >= wanted:
                return False
            self._failed[(kind, path)] = done + 1
            return True

    def paths_requested(self, prefix: str = "") -> list[str]:
        """Paths requested so far (optionally only those starting with *prefix*)."""
        return [r.path for r in self.requests if r.path.startswith(prefix)]

    # -- content ----------------------------------------------------------------------------
    def files(self) -> dict[str, list[Path]]:
        """Canonical project name -> its files, read from the directory now."""
        projects: dict[str, list[Path]] = {}
        for path in sorted(self.root.iterdir()):
            if path.is_file() and not path.name.startswith("."):
                project = _project_of(path.name)
                if project:
                    projects.setdefault(project, []).append(path)
        return projects

    def _facts(self, path: Path) -> tuple[str, str | None]:
        """(sha256, wheel's Requires-Python) of *path*, cached while the file is unchanged."""
        stat = path.stat()
        key = (path.name, stat.st_mtime_ns, stat.st_size)
        facts = self._cache.get(key)
        if facts is None:
            data = path.read_bytes()
            requires = _wheel_requires_python(path) if path.name.endswith(".whl") else None
            facts = self._cache[key] = (hashlib.sha256(data).hexdigest(), requires)
        return facts

    def _metadata_sha256(self, path: Path) -> str | None:
        """The sha256 of a wheel's METADATA, cached while the file is unchanged."""
        stat = path.stat()
        key = (path.name, stat.st_mtime_ns, stat.st_size)
        if key not in self._metadata_cache:
            metadata = wheel_metadata(path)
            digest = hashlib.sha256(metadata).hexdigest() if metadata is not None else None
            self._metadata_cache[key] = digest
        return self._metadata_cache[key]

    def sha256(self, path: Path) -> str:
        """The sha256 the index advertises for *path* (a wrong one when configured so)."""
        if path.name in self.options.wrong_hash:
            return hashlib.sha256(b"tampered:" + path.read_bytes()).hexdigest()
        return self._facts(path)[0]

    def file_entries(self, project: str) -> list[dict[str, Any]]:
        """The project's files as PEP 691 ``files`` entries (URLs relative to the page)."""
        opts = self.options
        entries = []
        for path in self.files().get(project, []):
            if path.name in opts.hidden:
                continue
            entry: dict[str, Any] = {
                "filename": path.name,
                "url": opts.links.get(path.name, f"../../files/{quote(path.name)}"),
                "hashes": {"sha256": self.sha256(path)} if opts.hashes else {},
                "size": path.stat().st_size,
            }
            if opts.core_metadata and path.name.endswith(".whl"):
                digest = self._metadata_sha256(path)
                if digest is not None:
                    entry["core-metadata"] = {"sha256": digest}
            if not path.name.endswith(_VARIANTS_JSON):
                requires_python = opts.requires_python.get(path.name)
                if requires_python is None:
                    requires_python = self._facts(path)[1]
                if requires_python:
                    entry["requires-python"] = requires_python
                entry["yanked"] = opts.yanked.get(path.name, False)
            entries.append(entry)
        return entries + [dict(e) for e in opts.extra.get(project, ())]

    def project_json(self, project: str) -> dict[str, Any]:
        files = self.file_entries(project)
        versions = sorted({v for f in files if (v := _version_of(f["filename"]))})
        return {
            "meta": {"api-version": _API_VERSION},
            "name": project,
            "files": files,
            "versions": versions,
        }

    def project_html(self, project: str) -> str:
        links = [_anchor(entry, entry["url"]) for entry in self.file_entries(project)]
        return _html_page(f"Links for {project}", links)

    def root_json(self) -> dict[str, Any]:
        return {
            "meta": {"api-version": _API_VERSION},
            "projects": [{"name": name} for name in sorted(self.files())],
        }

    def root_html(self) -> str:
        links = [
            f'    <a href="{quote(n)}/">{html.escape(n)}</a><br>' for n in sorted(self.files())
        ]
        return _html_page("Simple index", links)

    def links_html(self) -> str:
        """Every project's files on one page, with the same attributes as project pages."""
        links = [
            _anchor(entry, self.file_url(entry["filename"]))
            for project in sorted(self.files())
            for entry in self.file_entries(project)
        ]
        return _html_page("Find links", links)


def _anchor(entry: Mapping[str, Any], href: str) -> str:
    """One PEP 503 link from a PEP 691 file entry."""
    if "://" in entry["url"]:  # an absolute link (a hostile one) stays as it is
        href = entry["url"]
    sha256 = entry["hashes"].get("sha256")
    fragment = f"#sha256={sha256}" if sha256 else ""
    attributes = [f'href="{html.escape(href)}{fragment}"']
    if "requires-python" in entry:
        attributes.append(f'data-requires-python="{html.escape(entry["requires-python"])}"')
    core = entry.get("core-metadata")
    if core:
        value = html.escape(f"sha256={core['sha256']}")
        attributes.append(f'data-core-metadata="{value}" data-dist-info-metadata="{value}"')
    yanked = entry.get("yanked", False)
    if yanked is not False:
        reason = yanked if isinstance(yanked, str) else ""
        attributes.append(f'data-yanked="{html.escape(reason)}"')
    return f"    <a {' '.join(attributes)}>{html.escape(entry['filename'])}</a><br>"


def _html_page(title: str, links: list[str]) -> str:
    return "\n".join(
        [
            "<!DOCTYPE html>",
            "<html>",
            "  <head>",
            f'    <meta name="pypi:repository-version" content="{_API_VERSION}">',
            f"    <title>{html.escape(title)}</title>",
            "  </head>",
            "  <body>",
            f"    <h1>{html.escape(title)}</h1>",
            *links,
            "  </body>",
            "</html>",
            "",
        ]
    )


class _Handler(BaseHTTPRequestHandler):
    index: IndexServer
    protocol_version = "HTTP/1.1"
    # As real index servers do: without it, a kept-alive connection waits for the client's
    # delayed ACK (40 ms on Linux) between an answer's headers and its body.
    disable_nagle_algorithm = True

    def setup(self) -> None:
        super().setup()
        with self.index._lock:
            self.index.connections += 1

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean; IndexServer.requests has the log

    def _send(self, status: int, body: bytes, content_type: str | None, **headers: str) -> None:
        swap = self.index.options.mangle.get(urlsplit(self.path).path)
        if swap is not None:
            body = body.replace(*swap)
        # Log before answering, so a client that got its answer always finds the entry.
        sent = 0 if self.command == "HEAD" else len(body)
        logged = LoggedRequest(
            self.path, self.headers.get("Accept"), status, content_type,
            self.headers.get("Range"), sent,
        )  # fmt: skip
        with self.index._lock:
            self.index.requests.append(logged)
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Vary", "Accept")
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _log(self, status: int, sent: int) -> None:
        logged = LoggedRequest(
            self.path, self.headers.get("Accept"), status, None, self.headers.get("Range"), sent
        )
        with self.index._lock:
            self.index.requests.append(logged)

    def _send_partial(self, body: bytes, announced: int) -> None:
        """Announce *announced* bytes, send *body* (fewer), and close the connection."""
        self._log(200, len(body))
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(announced))
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()
        self.close_connection = True

    def _drip(self, body: bytes, interval: float, announced: int | None = None) -> None:
        """Send *body* one byte every *interval* seconds (until the client gives up)."""
        import time

        self._log(200, len(body))
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(body) if announced is None else announced))
        self.end_headers()
        self.close_connection = True
        try:
            for i in range(len(body)):
                self.wfile.write(body[i : i + 1])
                self.wfile.flush()
                time.sleep(interval)
        except OSError:
            pass  # the client hung up: what a deadline does

    def _error(self, status: HTTPStatus) -> None:
        self._send(status, f"{status.value} {status.phrase}\n".encode(), "text/plain")

    def _page(self, form_json: Any, form_html: str) -> None:
        chosen = _negotiate(self.headers.get("Accept"), self.index.options.forms)
        if chosen is None:
            self._error(HTTPStatus.NOT_ACCEPTABLE)
            return
        form, content_type = chosen
        if form == "json":
            self._send(200, json.dumps(form_json, indent=1).encode(), content_type)
        else:
            self._send(200, form_html.encode(), f"{content_type}; charset=utf-8")

    def _misbehaved(self, path: str) -> bool:
        """Wait the latency; hang up or answer 503 while *path* is to fail (then ``True``)."""
        index = self.index
        if index.options.latency:
            import time

            time.sleep(index.options.latency)
        if index.take_failure("reset", path):
            self._log(0, 0)
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
            return True
        if index.take_failure("fail", path):
            self._error(HTTPStatus.SERVICE_UNAVAILABLE)
            return True
        return False

    def do_HEAD(self) -> None:
        self.do_GET()

    def do_GET(self) -> None:
        index = self.index
        with index._lock:
            index._at_once += 1
            index.most_at_once = max(index.most_at_once, index._at_once)
        try:
            self._answer()
        finally:
            with index._lock:
                index._at_once -= 1

    def _answer(self) -> None:
        index = self.index
        path = urlsplit(self.path).path
        if self._misbehaved(path):
            return
        forced = index.options.status.get(path)
        if forced is not None:
            self._error(HTTPStatus(forced))
            return
        location = index.options.redirects.get(path)
        if location is not None:
            self._send(302, b"", None, Location=location)
            return
        parts = [unquote(p) for p in path.split("/") if p]
        if parts == ["simple"]:
            if not path.endswith("/"):
                self._send(301, b"", None, Location="/simple/")
                return
            self._page(index.root_json(), index.root_html())
        elif len(parts) == 2 and parts[0] == "simple":
            project = canonicalize_name(parts[1])
            if parts[1] != project or not path.endswith("/"):
                self._send(301, b"", None, Location=f"/simple/{project}/")
            elif project not in index.files():
                self._error(HTTPStatus.NOT_FOUND)
            else:
                self._page(index.project_json(project), index.project_html(project))
        elif parts == ["links"]:
            self._send(200, index.links_html().encode(), "text/html; charset=utf-8")
        elif len(parts) == 2 and parts[0] == "files":
            self._file(parts[1])
        else:
            self._error(HTTPStatus.NOT_FOUND)

    def _file(self, name: str) -> None:
        target = self.index.root / name
        if "/" not in name and name.endswith(".whl.metadata"):
            wheel = self.index.root / name.removesuffix(".metadata")
            metadata = wheel_metadata(wheel) if wheel.is_file() else None
            if metadata is None:
                self._error(HTTPStatus.NOT_FOUND)
            elif self.index.options.huge_metadata:
                self._send_partial(metadata[:100], 1 << 30)
            else:
                self._send(200, metadata, "application/octet-stream")
            return
        if "/" in name or not target.is_file():
            self._error(HTTPStatus.NOT_FOUND)
            return
        kind = "application/json" if target.suffix == ".json" else "application/octet-stream"
        data = target.read_bytes()
        options = self.index.options
        if name in options.drip:
            self._drip(data, options.drip[name], options.announce.get(name))
            return
        if name in options.truncate:
            self._send_partial(data[: len(data) // 2], len(data))
            return
        requested = self.headers.get("Range")
        if requested is None or not self.index.options.ranges:
            self._send(
                200, data, kind, Accept_Ranges="bytes" if self.index.options.ranges else "none"
            )
            return
        span = _byte_range(requested, len(data))
        if span is None:
            self._send(416, b"", None, Content_Range=f"bytes */{len(data)}")
            return
        first, last = span
        self._send(
            206, data[first : last + 1], kind, Content_Range=f"bytes {first}-{last}/{len(data)}"
        )
