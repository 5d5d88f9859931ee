"""Real pixi.lock files, written by ``rattler.LockFile`` from real solves."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["LockedPlatform", "write_lockfile"]


@dataclass(frozen=True)
class LockedPlatform:
    """What one environment locks for one platform.

    :param name: the lock's platform name (a subdir, or a rich-platform alias with *subdir*).
    :param records: solved rattler ``RepoDataRecord`` objects.
    :param pypi: ``(name, version, url)`` of locked PyPI wheels.
    :param virtual_packages: declared virtual packages of a rich platform, e.g. ``__cuda=12.6``.
    """

    name: str
    records: Sequence[Any] = ()
    pypi: Sequence[tuple[str, str, str]] = ()
    subdir: str | None = None
    virtual_packages: Sequence[str] = ()


def write_lockfile(
    path: Path,
    environments: Mapping[str, Sequence[LockedPlatform]],
    channels: Sequence[str] = (),
) -> Path:
    """Write a lock file (rattler writes lock format v7) and return its path."""
    import rattler

    platforms: dict[str, LockedPlatform] = {}
    for locked in environments.values():
        for platform in locked:
            platforms.setdefault(platform.name, platform)
    lock = rattler.LockFile(
        [
            rattler.LockPlatform(
                p.name,
                rattler.Subdir(p.subdir) if p.subdir else None,
                list(p.virtual_packages) or None,
            )
            for p in platforms.values()
        ]
    )
    # py-rattler 0.28 panics on a LockPlatform that is not the lock file's own object.
    own = {p.name: p for p in lock.platforms()}
    for env_name, locked in environments.items():
        lock.set_channels(env_name, [rattler.LockChannel(url) for url in channels])
        for platform in locked:
            for record in platform.records:
                lock.add_conda_package(env_name, own[platform.name], record)
            for name, version, url in platform.pypi:
                lock.add_pypi_package(env_name, own[platform.name], name, version, url)
    lock.to_path(path)
    return path
