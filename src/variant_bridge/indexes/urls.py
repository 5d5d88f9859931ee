"""Index URLs and find-links locations, checked before anything is fetched.

A malformed value would otherwise fail deep in urllib (``http://[::1`` raises ``ValueError``) or
be written into an exported file that fails on someone else's machine (pip splits
``--find-links /my wheels``); it is refused up front, in one line naming the option.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from variant_bridge.errors import InvalidTarget, quote

__all__ = ["check_find_links", "check_url", "is_url"]

_SCHEMES = ("http", "https", "file")
_EXPECTED = "expected an http://, https:// or file:// URL"


def is_url(location: str) -> bool:
    """Whether a find-links *location* is a URL rather than a local path."""
    return "://" in location or location.startswith("file:")


def check_url(url: str, *, option: str) -> str:
    """*url* when it is a usable http(s) or file URL.

    :raises InvalidTarget: naming *option*: another scheme, no host, a malformed host or port,
        or whitespace (which pip would split at).
    """
    problem = _url_problem(url)
    if problem is not None:
        raise InvalidTarget(f"{option} {quote(url)}: {_EXPECTED} ({problem})")
    return url


def check_find_links(location: str) -> str:
    """A ``--find-links`` value: a local directory (checked when it is read) or a URL.

    :raises InvalidTarget: a malformed URL.
    """
    if not is_url(location):
        if not location.strip():
            raise InvalidTarget(f"--find-links {quote(location)}: expected a directory or a URL")
        return location
    problem = _url_problem(location)
    if problem is not None:
        raise InvalidTarget(
            f"--find-links {quote(location)}: expected a directory or an http://, https:// or "
            f"file:// URL ({problem})"
        )
    return location


def _url_problem(url: str) -> str | None:
    if re.search(r"[\s\x00-\x1f\x7f]", url):
        return "whitespace or a control character; percent-encode it"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError as e:
        return str(e)
    if parts.scheme.lower() not in _SCHEMES:
        return f"scheme {parts.scheme!r}" if parts.scheme else "no scheme"
    if parts.scheme.lower() == "file":
        return None if parts.path else "no path"
    if not parts.hostname:
        return "no host"
    return None
