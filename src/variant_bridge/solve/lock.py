"""A solution as a pixi.lock (format v7, written by ``rattler.LockFile``).

Conda packages are ``conda:`` entries; each wheel is a ``pypi:`` entry at its file's URL. py-rattler
0.28's ``add_pypi_package`` records neither the wheel's sha256 nor its ``Requires-Dist``, so they
are added to the written document and the result is read back and written again by rattler (its
own formatting, and the proof that it reads them). The platform declares the virtual packages the
solve used (``__cuda``, ``__cuda_arch``, ...): records chosen per ``__cuda_arch`` make the lock
valid for that machine, and ``detect --lockfile`` then describes that machine.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from variant_bridge._values import value
from variant_bridge.environment import Environment
from variant_bridge.errors import SolveError

__all__ = ["DECLARED", "LockedWheel", "write_lock"]

DECLARED = ("__cuda", "__cuda_arch", "__archspec", "__glibc", "__osx")
"""The virtual packages a written lock's platform declares, when the solve had them."""
ENVIRONMENT = "default"


@value
class LockedWheel:
    """A wheel of the solution as the lock names it."""

    name: str
    version: str
    url: str
    sha256: str
    requires_dist: tuple[str, ...] = ()


def _declared(env: Environment) -> list[str]:
    found = []
    for vp in env.virtual_packages:
        if vp.name in DECLARED:
            build = f"={vp.build}" if vp.name == "__archspec" else ""
            found.append(f"{vp.name}={vp.version}{build}")
    return found


def _add_hashes(path: Path, wheels: dict[str, tuple[str, tuple[str, ...]]]) -> None:
    """Give every ``pypi:`` entry its sha256 and requires_dist, then let rattler rewrite it."""
    import rattler
    import yaml

    document: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
    for entry in document.get("packages", []):
        found = wheels.get(str(entry.get("pypi")))
        if found is not None:
            sha256, requires = found
            entry["sha256"] = sha256
            if requires:
                entry["requires_dist"] = list(requires)
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    rattler.LockFile.from_path(path).to_path(path)


def write_lock(
    target: Path,
    env: Environment,
    *,
    conda: Sequence[Any],
    wheels: Sequence[LockedWheel],
    channels: Sequence[str],
) -> None:
    """Write a solution to *target* as a pixi.lock, whole or not at all.

    :param conda: the solved conda packages (rattler ``RepoDataRecord`` objects).

    :raises SolveError: the file cannot be written (naming it).
    """
    import rattler

    platform = rattler.LockPlatform(env.platform, None, _declared(env) or None)
    lock = rattler.LockFile([platform])
    own = lock.platforms()[0]  # py-rattler 0.28 panics on a platform object not its own
    lock.set_channels(ENVIRONMENT, [rattler.LockChannel(url) for url in channels])
    for record in conda:
        lock.add_conda_package(ENVIRONMENT, own, record)
    hashes: dict[str, tuple[str, tuple[str, ...]]] = {}
    for wheel in wheels:
        lock.add_pypi_package(ENVIRONMENT, own, wheel.name, wheel.version, wheel.url)
        hashes[wheel.url] = (wheel.sha256, wheel.requires_dist)
    target = target.absolute()
    if not target.parent.is_dir():
        raise SolveError(f"cannot write {target}: {target.parent} is not a directory")
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    os.close(handle)
    try:
        lock.to_path(Path(temporary))
        if hashes:
            _add_hashes(Path(temporary), hashes)
        os.replace(temporary, target)
    except OSError as e:
        Path(temporary).unlink(missing_ok=True)
        raise SolveError(f"cannot write {target}: {e.strerror or e}") from e
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
