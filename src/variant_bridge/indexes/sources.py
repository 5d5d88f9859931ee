"""Where wheels come from: find-links locations and simple indexes behind one small interface.

The finder and the use cases talk to :class:`IndexSource` only (the idea of pypa/installer's
``WheelSource``). A source is checked once, when it is made from what the user typed (the option
that carried it names it in the error), and is trusted afterwards::

    sources = (FindLinks.parse("./wheels"), SimpleIndex.parse("https://example.org/simple/"))
    files = find_files(requirement, sources, python=Version("3.12"), downloads=downloads)
"""

from __future__ import annotations

import enum
import os
from collections.abc import Iterable, Sequence
from typing import Protocol

from variant_bridge._values import value
from variant_bridge.indexes import findlinks, simple
from variant_bridge.indexes.candidates import IndexFile
from variant_bridge.indexes.transport import Transport
from variant_bridge.indexes.urls import check_find_links, check_url

__all__ = [
    "FindLinks",
    "IndexSource",
    "IndexStrategy",
    "SimpleIndex",
    "index_order",
    "open_sources",
]


class IndexStrategy(enum.Enum):
    """Which indexes are consulted for a project, as uv's ``--index-strategy`` names them."""

    FIRST_INDEX = "first-index"
    """Only the first index (in order) that has the project: a name on a later index can never
    shadow it (dependency confusion). uv's default."""
    UNSAFE_BEST_MATCH = "unsafe-best-match"
    """Every index's files merged, the best version wins wherever it is (pip's behaviour)."""


def index_order(index_url: str | None, extra_index_urls: Sequence[str]) -> list[str]:
    """The indexes in uv's order of precedence: every ``--extra-index-url`` (earlier first),
    then ``--index-url`` (uv's docs: extra indexes "take priority over the index specified by
    --index-url")."""
    return [*extra_index_urls, *([index_url] if index_url else [])]


class IndexSource(Protocol):
    """A place that lists wheel files by project."""

    @property
    def name(self) -> str:
        """How messages name it: an absolute path or a URL."""

    @property
    def flat(self) -> bool:
        """``True`` for a find-links location: its files are merged with the index consulted for
        a project whatever the :class:`IndexStrategy` (as uv merges ``--find-links``)."""

    def list_files(self, project: str, *, transport: Transport) -> Sequence[IndexFile] | None:
        """The files offered for *project* (canonical name); ``None`` when the source has no
        page for it (a simple index's HTTP 404), which is not an error.

        :param transport: the command's HTTP requests.

        A flat listing (a find-links directory or page) lists every project's files; the caller
        keeps *project*'s. Local wheels may come back ``unread`` (see :class:`IndexFile`).

        :raises IndexReadError: the source cannot be read.
        """

    def missing(self, project: str) -> str:
        """The note for a project :meth:`list_files` has no page for."""


@value
class FindLinks:
    """A ``--find-links`` location: a directory (or its ``file://`` URL) or a page of links."""

    location: str
    name: str

    @property
    def flat(self) -> bool:
        return True

    @classmethod
    def parse(cls, location: str | os.PathLike[str]) -> FindLinks:
        """:raises InvalidTarget: a malformed URL."""
        text = check_find_links(os.fspath(location))
        return cls(text, findlinks.location_name(text))

    def list_files(self, project: str, *, transport: Transport) -> Sequence[IndexFile]:
        return findlinks.list_find_links(
            self.location, project=project, lazy=True, transport=transport
        )

    def missing(self, project: str) -> str:  # pragma: no cover - a listing is never missing
        return f"{self.name}: no files for {project}"


@value
class SimpleIndex:
    """A PEP 503 / PEP 691 simple index root, e.g. ``https://pypi.org/simple``."""

    url: str

    @property
    def flat(self) -> bool:
        return False

    @classmethod
    def parse(cls, url: str, *, option: str = "index URL") -> SimpleIndex:
        """:raises InvalidTarget: naming *option*, when *url* is not a usable http(s)/file URL."""
        return cls(check_url(url, option=option))

    @property
    def name(self) -> str:
        return self.url

    def list_files(self, project: str, *, transport: Transport) -> Sequence[IndexFile] | None:
        return simple.list_project_files(self.url, project, transport=transport)

    def missing(self, project: str) -> str:
        return f"{simple.project_url(self.url, project)}: HTTP 404 Not Found"


def open_sources(
    find_links: Iterable[str | os.PathLike[str]] = (), index_urls: Iterable[str] = ()
) -> tuple[FindLinks | SimpleIndex, ...]:
    """Find-links locations first, then indexes, in the order given (their order of precedence:
    see :func:`index_order` for uv's order of ``--index-url`` and ``--extra-index-url``).

    :raises InvalidTarget: a malformed URL.
    """
    return (
        *(FindLinks.parse(location) for location in find_links),
        *(SimpleIndex.parse(url) for url in index_urls),
    )
