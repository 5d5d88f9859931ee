"""Reading PEP 503 (HTML) and PEP 691 (JSON) simple index pages.

We ask for JSON first and HTML second (content negotiation on ``Accept``) and parse whichever the
server answers with pypi-simple's page models; requests go through :mod:`urllib` (see
:mod:`variant_bridge.indexes.download`). A 404 on a project page means "this index has no such
project", not an error, as pip and uv treat it.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

from packaging.utils import canonicalize_name

from variant_bridge._json import loads
from variant_bridge.errors import IndexReadError, clip
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


def _to_index_file(package: Any, *, source: str, flat: bool, page_url: str = "") -> IndexFile:
    """Convert a pypi-simple ``DistributionPackage`` to our :class:`IndexFile`."""
    digests: dict[str, str] = package.digests or {}
    sha256 = digests.get("sha256")
    yanked: str | bool | None = None
    if package.is_yanked:
        yanked = package.yanked_reason or True
    metadata_digests: dict[str, str] = package.metadata_digests or {}
    metadata_sha256 = metadata_digests.get("sha256")
    return IndexFile(
        filename=package.filename,
        url=package.url,
        source=source,
        sha256=sha256.lower() if sha256 else None,
        requires_python=package.requires_python or None,
        yanked=yanked,
        size=package.size,
        flat=flat,
        core_metadata=bool(package.has_metadata),
        core_metadata_sha256=metadata_sha256.lower() if metadata_sha256 else None,
        problem=_refused(package.url, page_url or package.url),
    )


def _entry_name(entry: object, position: int) -> str:
    name = entry.get("filename") if isinstance(entry, dict) else None
    return name if isinstance(name, str) and name else f"<file entry {position + 1}>"


def _json_files(data: Any, url: str, *, source: str, flat: bool) -> list[IndexFile]:
    """The files of a PEP 691 page; an entry that does not validate is one skipped file (with
    the reason), not a failed page (unless no entry validates: then the page is broken)."""
    from pypi_simple import ProjectPage

    try:
        page = ProjectPage.from_json_data(data, base_url=url)
    except Exception as error:
        files = data.get("files") if isinstance(data, dict) else None
        if not isinstance(files, list) or not files:
            raise
        found: list[IndexFile] = []
        valid = False
        for position, entry in enumerate(files):
            try:
                one = ProjectPage.from_json_data({**data, "files": [entry]}, base_url=url)
            except Exception as e:
                text = str(e).splitlines()[0] if str(e) else type(e).__name__
                problem = Problem(
                    ProblemKind.INVALID_FILENAME, f"an invalid entry on {url}: {text}"
                )
                name = _entry_name(entry, position)
                found.append(IndexFile(name, url, source, flat=flat, problem=problem))
                continue
            valid = True
            found += [
                _to_index_file(p, source=source, flat=flat, page_url=url) for p in one.packages
            ]
        if not valid:
            raise error from None
        return found
    return [_to_index_file(p, source=source, flat=flat, page_url=url) for p in page.packages]


class _Anchors:
    """The ``<a>`` elements of an HTML page: (attributes, text), in order."""

    def __init__(self, text: str) -> None:
        from html.parser import HTMLParser

        found: list[tuple[list[tuple[str, str | None]], list[str]]] = []

        class Parser(HTMLParser):
            def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
                if tag == "a":
                    found.append((attrs, []))

            def handle_data(self, data: str) -> None:
                if found:
                    found[-1][1].append(data)

        Parser().feed(text)
        self.items = [(attrs, "".join(parts).strip()) for attrs, parts in found]


def _html_files(
    response: Response, project: str, *, source: str, flat: bool, links_only: bool
) -> list[IndexFile]:
    """Each link of an HTML page on its own, when the page as a whole does not parse: a link
    pypi-simple cannot read (a malformed URL) is one skipped file with the reason.

    :raises ValueError: no link of the page is readable (the page is broken).
    """
    import html

    from pypi_simple import ProjectPage

    url = response.url
    text = response.body.decode(response.charset or "utf-8", "replace")
    found: list[IndexFile] = []
    valid = False
    for attrs, name in _Anchors(text).items:
        href = dict(attrs).get("href") or ""
        if links_only and (not name or href.endswith("/")):
            continue
        shown = " ".join(f'{k}="{html.escape(v)}"' for k, v in attrs if v is not None)
        try:
            page = ProjectPage.from_html(
                project, f"<a {shown}>{html.escape(name)}</a>", base_url=url
            )
        except Exception as e:
            reason = f"an invalid link on {url}: {clip(str(e) or type(e).__name__)}"
            problem = Problem(ProblemKind.INVALID_FILENAME, reason)
            found.append(IndexFile(name or "<link>", url, source, flat=flat, problem=problem))
            continue
        valid = True
        found += [_to_index_file(p, source=source, flat=flat, page_url=url) for p in page.packages]
    if not valid:
        raise ValueError("no readable link")
    return found


def parse_project_page(
    response: Response, project: str, *, source: str, flat: bool = False
) -> list[IndexFile]:
    """Parse a project page in whichever form the server sent (JSON or HTML).

    :raises IndexReadError: the page is neither form, or does not parse.
    """
    from pypi_simple import ProjectPage

    url = response.url
    try:
        # Beautiful Soup and pypi-simple warn about odd markup / newer minor API versions;
        # neither should stop an install.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if response.content_type == JSON_CONTENT_TYPE:
                data = loads(
                    response.body, source=f"invalid simple index page {url}", error=IndexReadError
                )
                return _json_files(data, url, source=source, flat=flat)
            if response.content_type in HTML_CONTENT_TYPES or (
                url.startswith("file:") and response.content_type in ("", "text/plain")
            ):
                try:
                    page = ProjectPage.from_html(
                        project, response.body, base_url=url, from_encoding=response.charset
                    )
                except ValueError as error:  # one malformed link: read them one by one
                    try:
                        return _html_files(
                            response, project, source=source, flat=flat, links_only=False
                        )
                    except ValueError:
                        raise error from None
            else:
                raise IndexReadError(
                    f"unsupported content type {response.content_type!r} from {url}: expected "
                    f"{JSON_CONTENT_TYPE} or text/html"
                )
    except IndexReadError:
        raise
    except Exception as e:  # json, pydantic and pypi-simple errors all mean "bad page"
        reason = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise IndexReadError(f"invalid simple index page {url}: {clip(reason)}") from e
    return [_to_index_file(p, source=source, flat=flat, page_url=url) for p in page.packages]


def parse_links_page(response: Response, *, source: str) -> list[IndexFile]:
    """Parse a flat HTML page of links (a ``--find-links`` URL): every link is a file."""
    from pypi_simple import DistributionPackage
    from pypi_simple.html import RepositoryPage

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                page = RepositoryPage.from_html(
                    response.body, base_url=response.url, from_encoding=response.charset
                )
                return [
                    _to_index_file(
                        DistributionPackage.from_link(link),
                        source=source,
                        flat=True,
                        page_url=response.url,
                    )
                    for link in page.links
                    if link.text and not link.url.endswith("/")
                ]
            except ValueError as error:  # one malformed link: read them one by one
                try:
                    return _html_files(response, "", source=source, flat=True, links_only=True)
                except ValueError:
                    raise error from None
    except Exception as e:
        raise IndexReadError(f"invalid find-links page {response.url}: {clip(str(e))}") from e


def list_project_files(
    index_url: str, project: str, *, transport: Transport | None = None
) -> list[IndexFile] | None:
    """The files an index lists for *project*; ``None`` when the index has no such project.

    A ``file://`` index is read from ``{project}/index.html``, as pip does.

    :param transport: the command's HTTP requests (default: a new one).
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
