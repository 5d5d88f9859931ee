"""Reading PEP 503 (HTML) and PEP 691 (JSON) simple index pages.

We ask for JSON first and HTML second (content negotiation on ``Accept``) and read whichever the
server answers; requests go through the command's transport (:mod:`.transport`). A 404 on a
project page means "this index has no such project", not an error, as pip and uv treat it.

Each file entry (a JSON ``files`` item, an HTML ``<a>``) is read on its own: one that is
malformed (a field of the wrong type, a URL that does not parse, bytes that are not UTF-8, a
5,000-digit ``size``) becomes one file with its :class:`Problem`, and the rest of the page is
read; only a page with no readable entry, or one that is not a page at all, is an error. Fields
read: PEP 503's ``#sha256=`` fragment, ``data-requires-python``, ``data-yanked`` and
``data-core-metadata`` (PEP 714, or the older ``data-dist-info-metadata``); PEP 691's
``hashes``, ``requires-python``, ``yanked``, ``core-metadata`` (or ``dist-info-metadata``) and
``size``. Only major version 1 of the API is read (``meta.api-version`` / the
``pypi:repository-version`` meta tag).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit

from packaging.utils import canonicalize_name

from variant_bridge._json import loads
from variant_bridge._patterns import Lazy
from variant_bridge.errors import IndexReadError, clip, quote
from variant_bridge.indexes.candidates import IndexFile, Problem, ProblemKind
from variant_bridge.indexes.download import Response, fetch, url_to_path
from variant_bridge.indexes.transport import Transport

__all__ = [
    "ACCEPT",
    "JSON_CONTENT_TYPE",
    "list_project_files",
    "parse_links_page",
    "parse_project_page",
    "project_url",
]

JSON_CONTENT_TYPE = "application/vnd.pypi.simple.v1+json"
HTML_CONTENT_TYPES = ("application/vnd.pypi.simple.v1+html", "text/html")
ACCEPT = f"{JSON_CONTENT_TYPE}, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01"
"""JSON preferred, HTML accepted: what we send as ``Accept``."""

_HEX64_RE = Lazy(r"[0-9a-fA-F]{64}")
_DIGEST_RE = Lazy(r"(\w+)=([0-9A-Fa-f]+)")
_MAX_DIGITS = 20


class _Invalid(ValueError):
    """One entry cannot be read: the reason in words."""


def project_url(index_url: str, project: str) -> str:
    """The project page of *project* under *index_url* (normalised name, trailing slash)."""
    return f"{index_url.rstrip('/')}/{canonicalize_name(project)}/"


def _refused(url: str, page_url: str) -> Problem | None:
    """Why a page may not point to *url*: a remote page to anything but http(s) (a ``file:``
    link would make us read, and install, a file of this machine)."""
    scheme = urlsplit(url).scheme.lower()
    if scheme in ("http", "https"):
        return None
    if scheme == "file" and page_url.startswith("file:"):
        return None
    where = "a remote index" if not page_url.startswith("file:") else "an index"
    return Problem(
        ProblemKind.REFUSED_URL,
        f"links to {clip(url)}: {where} may only point to http:// and https:// files",
    )


def _text(value: str, what: str) -> str:
    """*value*, refused when it holds bytes that were not UTF-8 (decoded as surrogates)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise _Invalid(f"{what} is not UTF-8 text") from None
    return value


def _shown(name: str) -> str:
    """A filename as messages show it (bytes that were not UTF-8 as U+FFFD)."""
    return clip(name.encode("utf-8", "surrogateescape").decode("utf-8", "replace"))


class _Links:
    """The links of one page made absolute (a URL that does not parse is the entry's problem),
    each with why it may not be followed. The directory part of a link is joined once: a page
    of thousands of files shares one or two.

    :param base: what links are relative to (the page, or its ``<base href>``).
    :param page_url: the page itself (a remote page may not point to local files).
    """

    def __init__(self, base: str, page_url: str) -> None:
        self.base = base
        self.page_url = page_url
        self._folders: dict[str, tuple[str, Problem | None]] = {}

    def _join(self, link: str) -> tuple[str, Problem | None]:
        try:
            url = urljoin(self.base, link)
            urlsplit(url).port  # noqa: B018 - raises on a malformed port or IPv6 host
        except ValueError as e:
            raise _Invalid(str(e) or "a malformed URL") from None
        return url, _refused(url, self.page_url)

    def resolve(self, link: str) -> tuple[str, str, Problem | None]:
        """``(absolute URL without fragment, fragment, problem)``."""
        link, _, fragment = _text(link, "its URL").partition("#")
        head, _, name = link.rpartition("/")
        if not name or name in (".", "..") or "?" in link or ";" in link or head.endswith(":/"):
            url, problem = self._join(link)
            return url, fragment, problem
        found = self._folders.get(head)
        if found is None:
            found = self._folders[head] = self._join(f"{head}/" if head else "./")
        folder, problem = found
        url = folder + name
        return url, fragment, None if problem is None else _refused(url, self.page_url)


def _sha256(digests: Mapping[str, str]) -> str | None:
    found = digests.get("sha256")
    if found is None:
        return None
    if not _HEX64_RE.fullmatch(found):
        raise _Invalid(f"its sha256 {quote(found)} is not 64 hex digits")
    return found.lower()


class _Huge(int):
    """A JSON integer too long to convert (kept as a marker; no entry accepts one)."""

    digits = 0

    def __repr__(self) -> str:
        return f"a number of {self.digits} digits"


def _int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits <= _MAX_DIGITS:
        return int(text)
    huge = _Huge(0)
    huge.digits = digits
    return huge


# -- PEP 691 ----------------------------------------------------------------------------------


def _field(entry: Mapping[str, Any], key: str, kinds: tuple[type, ...], what: str) -> Any:
    value = entry.get(key)
    if value is not None and (not isinstance(value, kinds) or isinstance(value, _Huge)):
        raise _Invalid(f"{key!r} must be {what}, not {clip(repr(value))}")
    return value


def _hashes(entry: Mapping[str, Any], key: str) -> dict[str, str]:
    value = entry.get(key)
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise _Invalid(f"{key!r} must map hash names to hex digests")
    return {_text(k, key): _text(v, key) for k, v in value.items()}


def _core_metadata(entry: Mapping[str, Any]) -> tuple[bool, str | None]:
    key = "core-metadata" if "core-metadata" in entry else "dist-info-metadata"
    value = entry.get(key)
    if value is None or value is False:
        return False, None
    if value is True:
        return True, None
    return True, _sha256(_hashes(entry, key))


def _json_entry(entry: object, links: _Links, source: str, flat: bool) -> IndexFile:
    if not isinstance(entry, dict):
        raise _Invalid("a file entry must be a JSON object")
    filename = _field(entry, "filename", (str,), "a string")
    if not filename:
        raise _Invalid("no 'filename'")
    link = _field(entry, "url", (str,), "a string")
    if not link:
        raise _Invalid("no 'url'")
    _text(filename, "its filename")
    url, _, refused = links.resolve(link)
    sha256 = _sha256(_hashes(entry, "hashes"))
    requires_python = _field(entry, "requires-python", (str,), "a string")
    yanked = _field(entry, "yanked", (bool, str), "true, false or a reason")
    size = _field(entry, "size", (int,), "a whole number of bytes")
    if isinstance(size, bool) or (size is not None and size < 0):
        raise _Invalid(f"'size' must be a whole number of bytes, not {size!r}")
    has_metadata, metadata_sha256 = _core_metadata(entry)
    return IndexFile(
        filename=filename,
        url=url,
        source=source,
        sha256=sha256,
        requires_python=_text(requires_python, "requires-python") or None
        if requires_python
        else None,
        yanked=(_text(yanked, "yanked") or True) if isinstance(yanked, str) else (yanked or None),
        size=size,
        flat=flat,
        core_metadata=has_metadata,
        core_metadata_sha256=metadata_sha256,
        problem=refused,
    )


def _entry_name(entry: object, position: int) -> str:
    name = entry.get("filename") if isinstance(entry, dict) else None
    return _shown(name) if isinstance(name, str) and name else f"<file entry {position + 1}>"


def _api_version(version: object, url: str) -> None:
    """Refuse a page of another major version than 1 (a future format we cannot read)."""
    text = version if isinstance(version, str) else ""
    major = text.split(".", 1)[0]
    if not major.isdigit():
        raise IndexReadError(
            f"invalid simple index page {url}: no API version (expected 'meta': "
            "{'api-version': '1.x'})"
        )
    if major != "1":
        raise IndexReadError(
            f"{url}: simple API version {clip(text)} is not supported (1.x is read)"
        )


def _json_files(body: bytes, url: str, *, source: str, flat: bool) -> list[IndexFile]:
    """The files of a PEP 691 page; an entry that cannot be read is one skipped file (with the
    reason), not a failed page (unless no entry can be read: then the page is broken)."""
    # Bytes that are not UTF-8 are kept as surrogates: they spoil the entry holding them only.
    text = body.decode("utf-8", "surrogateescape").removeprefix("\ufeff")
    data = loads(
        text, source=f"invalid simple index page {url}", error=IndexReadError, parse_int=_int
    )
    if not isinstance(data, dict):
        raise IndexReadError(f"invalid simple index page {url}: expected a JSON object")
    meta = data.get("meta")
    _api_version(meta.get("api-version") if isinstance(meta, dict) else None, url)
    entries = data.get("files")
    if not isinstance(entries, list):
        raise IndexReadError(f"invalid simple index page {url}: 'files' must be a list")
    found: list[IndexFile] = []
    reasons: list[str] = []
    links = _Links(url, url)
    for position, entry in enumerate(entries):
        try:
            found.append(_json_entry(entry, links, source, flat))
        except _Invalid as e:
            reasons.append(str(e))
            problem = Problem(ProblemKind.INVALID_FILENAME, f"an invalid entry on {url}: {e}")
            name = _entry_name(entry, position)
            found.append(IndexFile(name, url, source, flat=flat, problem=problem))
    if entries and len(reasons) == len(entries):
        raise IndexReadError(f"invalid simple index page {url}: no readable entry: {reasons[0]}")
    return found


# -- PEP 503 ----------------------------------------------------------------------------------


class _Anchors:
    """The ``<a>`` elements of an HTML page (attributes, text), its ``<base href>`` and its
    ``pypi:repository-version``."""

    def __init__(self, text: str) -> None:
        from html.parser import HTMLParser

        found: list[tuple[dict[str, str | None], list[str]]] = []
        head: dict[str, str] = {}

        class Parser(HTMLParser):
            def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
                values = dict(attrs)
                if tag == "a":
                    found.append((values, []))
                elif tag == "base" and values.get("href") and "base" not in head:
                    head["base"] = values["href"] or ""
                elif tag == "meta" and values.get("name") == "pypi:repository-version":
                    head["version"] = values.get("content") or ""

            def handle_endtag(self, tag: str) -> None:
                if tag == "a" and found:
                    found[-1][1].append("\0")  # text after the link is not its text

            def handle_data(self, data: str) -> None:
                if found:
                    found[-1][1].append(data)

        parser = Parser()
        parser.feed(text)
        parser.close()
        self.items = [(attrs, "".join(parts).split("\0", 1)[0].strip()) for attrs, parts in found]
        self.base = head.get("base")
        self.version = head.get("version")


def _html_entry(
    attrs: Mapping[str, str | None], name: str, links: _Links, source: str, flat: bool
) -> IndexFile:
    clean, fragment, refused = links.resolve(attrs.get("href") or "")
    name = _text(name, "its link text") or unquote(urlsplit(clean).path.rsplit("/", 1)[-1])
    algorithm, _, digest = fragment.partition("=")
    sha256 = _sha256({algorithm: digest}) if algorithm == "sha256" and digest else None
    metadata = attrs.get("data-core-metadata", attrs.get("data-dist-info-metadata"))
    has_metadata, metadata_sha256 = False, None
    if metadata is not None:
        match = _DIGEST_RE.fullmatch(metadata)
        has_metadata = match is not None or metadata.strip().lower() == "true"
        if match is not None and match[1] == "sha256":
            metadata_sha256 = _sha256({"sha256": match[2]})
    yanked = attrs.get("data-yanked", False)
    requires_python = attrs.get("data-requires-python")
    return IndexFile(
        filename=name,
        url=clean,
        source=source,
        sha256=sha256,
        requires_python=_text(requires_python, "data-requires-python").strip() or None
        if requires_python
        else None,
        yanked=None if yanked is False else (yanked or True),
        flat=flat,
        core_metadata=has_metadata,
        core_metadata_sha256=metadata_sha256,
        problem=refused,
    )


def _html_files(
    response: Response, *, source: str, flat: bool, links_only: bool
) -> list[IndexFile]:
    """Each link of an HTML page; a link that cannot be read (a malformed URL) is one skipped
    file with the reason.

    :raises IndexReadError: a page whose every link is unreadable.
    """
    url = response.url
    try:
        encoding = response.charset or "utf-8"
        "".encode(encoding)
    except LookupError:
        encoding = "utf-8"
    try:
        anchors = _Anchors(response.body.decode(encoding, "replace"))
    except Exception as e:  # html.parser's few complaints about broken markup
        raise IndexReadError(f"invalid simple index page {url}: {clip(str(e))}") from e
    if anchors.version is not None:
        _api_version(anchors.version, url)
    links = _Links(urljoin(url, anchors.base) if anchors.base else url, url)
    found: list[IndexFile] = []
    reasons: list[str] = []
    for attrs, name in anchors.items:
        href = attrs.get("href") or ""
        if links_only and (not name or href.endswith("/")):
            continue
        try:
            found.append(_html_entry(attrs, name, links, source, flat))
        except _Invalid as e:
            reasons.append(str(e))
            problem = Problem(ProblemKind.INVALID_FILENAME, f"an invalid link on {url}: {e}")
            shown = _shown(name) if name else "<link>"
            found.append(IndexFile(shown, url, source, flat=flat, problem=problem))
    if reasons and len(reasons) == len(found):
        raise IndexReadError(f"invalid simple index page {url}: no readable link: {reasons[0]}")
    return found


# -- pages ------------------------------------------------------------------------------------


def parse_project_page(
    response: Response, project: str, *, source: str, flat: bool = False
) -> list[IndexFile]:
    """Read a project page in whichever form the server sent (JSON or HTML).

    :param project: the project the page is for (unused by the reading: files are named by the
        page; kept for callers).
    :raises IndexReadError: the page is neither form, or has no readable entry.
    """
    url = response.url
    if response.content_type == JSON_CONTENT_TYPE:
        return _json_files(response.body, url, source=source, flat=flat)
    if response.content_type in HTML_CONTENT_TYPES or (
        url.startswith("file:") and response.content_type in ("", "text/plain")
    ):
        return _html_files(response, source=source, flat=flat, links_only=False)
    raise IndexReadError(
        f"unsupported content type {response.content_type!r} from {url}: expected "
        f"{JSON_CONTENT_TYPE} or text/html"
    )


def parse_links_page(response: Response, *, source: str) -> list[IndexFile]:
    """Read a flat HTML page of links (a ``--find-links`` URL): every link is a file."""
    try:
        return _html_files(response, source=source, flat=True, links_only=True)
    except IndexReadError as e:
        raise IndexReadError(
            str(e).replace("invalid simple index page", "invalid find-links page", 1)
        ) from e


def list_project_files(
    index_url: str, project: str, *, transport: Transport
) -> list[IndexFile] | None:
    """The files an index lists for *project*; ``None`` when the index has no such project.

    A ``file://`` index is read from ``{project}/index.html``, as pip does.

    :param transport: the command's HTTP requests.
    :raises IndexReadError: the index cannot be reached or answers with an error or a bad page.
    """
    url = project_url(index_url, project)
    if url.startswith("file:"):
        directory = url_to_path(url)
        if directory.is_dir():
            url = urljoin(url, "index.html")
        elif not Path(directory).exists():
            return None
    response = fetch(url, accept=ACCEPT, not_found_ok=True, transport=transport)
    if response is None:
        return None
    return parse_project_page(response, project, source=index_url)
