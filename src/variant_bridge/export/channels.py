"""Channel names as an export writes them, and their priority order (docs/share.md,
"environment.yml": the lock's or the history's channels first, then the records' own)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from variant_bridge.environment import CondaRecord
from variant_bridge.virtual_packages import KNOWN_PLATFORMS

__all__ = ["is_conda_forge", "is_defaults", "normalize_channel", "order_channels"]

_ANACONDA_ORG = re.compile(r"https?://conda\.anaconda\.org/(?P<name>[^/]+)/?")
_DEFAULTS_CHANNELS = ("defaults", "main", "r", "msys2", "pkgs/main", "pkgs/r", "pkgs/msys2")
_CONDA_FORGE = "conda-forge"
_SUBDIRS = KNOWN_PLATFORMS | {"noarch"}


def normalize_channel(channel: str) -> str:
    """``https://conda.anaconda.org/conda-forge/`` -> ``conda-forge``; other URLs lose a
    trailing ``/`` and a subdir (conda records ``file:///srv/channel/linux-64`` as a package's
    channel: the channel is ``file:///srv/channel``); names stay."""
    text = channel.strip()
    if "://" in text:
        text = text.rstrip("/")
        head, _, last = text.rpartition("/")
        if last in _SUBDIRS and "://" in head:
            text = head
    match = _ANACONDA_ORG.fullmatch(text)
    if match is not None:
        return match["name"]
    return text


def is_defaults(channel: str) -> bool:
    """Whether *channel* is one of Anaconda's ``defaults`` channels."""
    return normalize_channel(channel) in _DEFAULTS_CHANNELS or "repo.anaconda.com" in channel


def is_conda_forge(channel: str) -> bool:
    """Whether *channel* is conda-forge (by name or URL)."""
    return normalize_channel(channel).rstrip("/").endswith(_CONDA_FORGE)


def order_channels(
    records: Iterable[CondaRecord], preferred: Sequence[str] = ()
) -> tuple[str, ...]:
    """Channels in priority order: *preferred* (a lock file's list, the history's ``-c``)
    first, then the records' other channels by how many packages they gave, then by name."""
    counts: dict[str, int] = {}
    for record in records:
        if record.channel:
            channel = normalize_channel(record.channel)
            counts[channel] = counts.get(channel, 0) + 1
    ordered = list(dict.fromkeys(normalize_channel(c) for c in preferred if c.strip()))
    rest = sorted((c for c in counts if c not in ordered), key=lambda c: (-counts[c], c))
    return tuple(ordered + rest)
