"""The export's own inputs, checked before anything is read: the environment name, and the index
URLs and find-links locations (``indexes.urls``' checks) that end up in the exported file. A bad
value written as-is makes a file that fails later, on someone else's machine (conda rejects
``name: a: b``; pip splits ``--find-links /my wheels``), so it is refused up front, in one line
naming the option.
"""

from __future__ import annotations

import re

from variant_bridge.errors import InvalidTarget
from variant_bridge.indexes.urls import check_find_links, check_url, is_url

__all__ = [
    "check_find_links",
    "check_name",
    "check_url",
    "is_url",
    "safe_name",
]

# conda's PREFIX_NAME_DISALLOWED_CHARS ("/ :#"), plus any whitespace or control character, which
# cannot be typed back.
_BAD_NAME_RE = re.compile(r"[/:#\s\x00-\x1f\x7f]")


def check_name(name: str, *, option: str = "--name") -> str:
    """*name* when conda accepts it as an environment name (and pixi as a workspace name).

    :raises InvalidTarget: empty, or with ``/``, ``:``, ``#``, whitespace or a control character.
    """
    if not name:
        raise InvalidTarget(f"{option} '': expected a non-empty environment name")
    bad = _BAD_NAME_RE.search(name)
    if bad is not None:
        raise InvalidTarget(
            f"{option} {name!r}: {bad.group()!r} is not allowed in an environment name "
            "(conda refuses '/', ':', '#', spaces and other whitespace)"
        )
    return name


def safe_name(text: str) -> str:
    """*text* (a directory name) made a valid environment name: each refused character becomes
    ``-``; ``env`` when nothing is left."""
    return _BAD_NAME_RE.sub("-", text).strip("-") or "env"
