"""A solution as a pixi.lock (format v7, written by ``rattler.LockFile``) that pixi installs.

Conda packages are ``conda:`` entries; each wheel is a ``pypi:`` entry. pixi's PyPI installer (uv
without wheel-variant support) refuses a variant filename (``torch-2.9.0-...-cu128.whl``), so a
chosen variant wheel is locked as its installable copy under its standard filename in
``variant-wheels/`` beside the lock (:func:`place_wheel`), as ``export`` does: its variant markers
decided (:mod:`variant_bridge.indexes.installable`), since uv cannot read them either, so the
file's ``Requires-Dist`` says what the lock's entry says; plain wheels keep
their file (a path relative to the lock when inside its folder) or URL. Every entry has its
sha256 and ``Requires-Dist``; the environment lists its ``indexes`` (PyPI first, as pixi writes
it, then the solve's) and ``find-links``, as real locks do. py-rattler 0.28 records neither
hashes, requirements nor indexes, so they are added to the written document and the result is
read back and written again by rattler (its own formatting, and the proof that it reads them).
The platform declares the virtual packages the solve used (``__cuda``, ``__cuda_arch``, ...):
records chosen per ``__cuda_arch`` make the lock valid for that machine, and ``detect
--lockfile`` then describes that machine.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from variant_bridge._values import value
from variant_bridge.environment import Environment
from variant_bridge.errors import SolveError, VariantBridgeError
from variant_bridge.filenames import WheelFilename
from variant_bridge.indexes.archive import UNREADABLE
from variant_bridge.indexes.download import file_sha256
from variant_bridge.indexes.installable import installable_copy
from variant_bridge.indexes.local import read_text
from variant_bridge.markers import VariantValues

__all__ = [
    "COPIES_DIR",
    "DECLARED",
    "PYPI_INDEX",
    "LockedPlatform",
    "LockedWheel",
    "declared_virtual_packages",
    "place_wheel",
    "write_lock",
    "write_lock_platforms",
]

DECLARED = ("__cuda", "__cuda_arch", "__archspec", "__glibc")
"""The virtual packages a written lock's platform declares, when the solve had them: those a
pixi manifest's rich platform can declare too (``cuda = { driver, arch }``, ``archspec``,
``glibc``), so the pixi.toml beside the lock can say the same."""
ENVIRONMENT = "default"
COPIES_DIR = "variant-wheels"
PYPI_INDEX = "https://pypi.org/simple"
"""pixi's default index, which it lists first in a lock's ``indexes`` when the manifest names
no ``index-url``."""


@value
class LockedWheel:
    """A wheel of the solution as the lock names it.

    :param location: a path relative to the lock's folder (``./variant-wheels/x.whl``), an
        absolute path, or a URL.
    """

    name: str
    version: str
    location: str
    sha256: str
    requires_dist: tuple[str, ...] = ()
    requires_python: str | None = None


def declared_virtual_packages(env: Environment) -> list[str]:
    """The solve's virtual packages a lock (and a pixi rich platform) declares."""
    found = []
    for vp in env.virtual_packages:
        if vp.name in DECLARED:
            build = f"={vp.build}" if vp.name == "__archspec" else ""
            found.append(f"{vp.name}={vp.version}{build}")
    return found


def _relative(path: Path, folder: Path) -> str | None:
    try:
        inside = path.absolute().relative_to(folder.absolute())
    except ValueError:
        return None
    return f"./{inside.as_posix()}"


def _copy_checked(source: Path, target: Path, sha256: str, values: VariantValues) -> str:
    """Write the installable copy of *source* (which must have the *sha256* the solve chose)
    to *target* atomically; returns the copy's sha256."""
    actual = file_sha256(source)
    if actual != sha256:
        raise SolveError(f"cannot lock {source}: it has sha256 {actual}, not {sha256}")
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    os.close(handle)
    try:
        installable_copy(source, Path(temporary), values)
        copied = file_sha256(Path(temporary))
        if target.is_file() and file_sha256(target) == copied:
            return copied  # already there: re-locking is idempotent
        os.replace(temporary, target)
        return copied
    except (*UNREADABLE, UnicodeDecodeError) as e:
        raise SolveError(
            f"cannot copy {source} to {target}: {getattr(e, 'strerror', None) or e}"
        ) from e
    except VariantBridgeError as e:
        raise SolveError(f"cannot lock {source}: {e}") from e
    finally:
        Path(temporary).unlink(missing_ok=True)


def place_wheel(
    filename: WheelFilename,
    url: str,
    file: Path | None,
    sha256: str,
    lock_dir: Path,
    *,
    folder: str = COPIES_DIR,
    values: VariantValues | None = None,
) -> tuple[str, str]:
    """Where the lock names one chosen wheel, and that file's sha256: a variant wheel's
    installable copy (its variant markers decided for *values*) under its standard filename in
    *folder* (``variant-wheels/``, or a node class's ``variant-wheels/<class>/``) beside the lock
    (made from *file*, which must have *sha256*); a plain wheel's path (relative to the lock
    when inside its folder) or URL, with *sha256*.

    :param file: the wheel on this machine (``None``: a remote plain wheel, named by *url*).
    :raises SolveError: the copy cannot be made, or *file* lacks *sha256*.
    """
    if filename.label is not None:
        if file is None:  # pragma: no cover - the caller fetches remote variant wheels
            raise SolveError(f"cannot lock {filename}: no local file to copy")
        target = lock_dir / folder / filename.base
        copied = _copy_checked(file, target, sha256, values or VariantValues(label=filename.label))
        return f"./{folder}/{filename.base}", copied
    if file is None or not url.startswith("file:"):
        return url, sha256
    return _relative(file, lock_dir) or str(file.absolute()), sha256


def _complete(
    path: Path,
    wheels: dict[str, LockedWheel],
    indexes: Sequence[str],
    find_links: Sequence[str],
) -> None:
    """Give every ``pypi:`` entry its sha256 and requirements and the environment its indexes,
    then let rattler rewrite it."""
    import rattler
    import yaml

    document: Any = yaml.safe_load(read_text(path))  # the lock rattler has just written
    environment = document.get("environments", {}).get(ENVIRONMENT)
    if isinstance(environment, dict) and wheels:
        ordered: dict[str, Any] = {"channels": environment.get("channels", [])}
        ordered["indexes"] = list(dict.fromkeys([PYPI_INDEX, *indexes]))
        if find_links:
            ordered["find-links"] = [
                {"url": f} if "://" in f else {"path": f} for f in dict.fromkeys(find_links)
            ]
        ordered.update((k, v) for k, v in environment.items() if k not in ordered)
        document["environments"][ENVIRONMENT] = ordered
    for entry in document.get("packages", []):
        wheel = wheels.get(str(entry.get("pypi")))
        if wheel is None:
            continue
        entry["sha256"] = wheel.sha256
        if wheel.requires_dist:
            entry["requires_dist"] = list(wheel.requires_dist)
        if wheel.requires_python:
            entry["requires_python"] = wheel.requires_python
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    rattler.LockFile.from_path(path).to_path(path)


@value
class LockedPlatform:
    """One platform of a lock and its solution.

    :param name: the lock's name for it: the subdir, or a named platform (a node class).
    :param virtual_packages: what the platform declares (``__cuda=12.8``,
        ``__archspec=1=zen4``), as a pixi manifest's platform entry declares them.
    :param conda: the solved conda packages (rattler ``RepoDataRecord`` objects).
    """

    name: str
    subdir: str
    virtual_packages: tuple[str, ...]
    conda: tuple[Any, ...]
    wheels: tuple[LockedWheel, ...]


def write_lock(
    target: Path,
    env: Environment,
    *,
    conda: Sequence[Any],
    wheels: Sequence[LockedWheel],
    channels: Sequence[str],
    indexes: Sequence[str] = (),
    find_links: Sequence[str] = (),
) -> None:
    """Write a solution to *target* as a pixi.lock, whole or not at all.

    :param conda: the solved conda packages (rattler ``RepoDataRecord`` objects).
    :param indexes: the simple indexes the wheels came from (after PyPI, pixi's default).
    :param find_links: the find-links locations (paths relative to the lock, or URLs).
    :raises SolveError: the file cannot be written (naming it).
    """
    declared = tuple(declared_virtual_packages(env))
    platform = LockedPlatform(env.platform, env.platform, declared, tuple(conda), tuple(wheels))
    write_lock_platforms(
        target, [platform], channels=channels, indexes=indexes, find_links=find_links
    )


def write_lock_platforms(
    target: Path,
    platforms: Sequence[LockedPlatform],
    *,
    channels: Sequence[str],
    indexes: Sequence[str] = (),
    find_links: Sequence[str] = (),
) -> None:
    """Write the solutions of several platforms (a cluster's node classes, each a named
    platform) to *target* as one pixi.lock, whole or not at all.

    :raises SolveError: the file cannot be written (naming it).
    """
    import rattler
    from rattler.platform.subdir import Subdir

    lock = rattler.LockFile([
        rattler.LockPlatform(p.name, Subdir(p.subdir), list(p.virtual_packages) or None)
        for p in platforms
    ])  # fmt: skip
    # py-rattler 0.28 panics on a platform object not its own
    own = {p.name: p for p in lock.platforms()}
    lock.set_channels(ENVIRONMENT, [rattler.LockChannel(url) for url in channels])
    for platform in platforms:
        for record in platform.conda:
            lock.add_conda_package(ENVIRONMENT, own[platform.name], record)
        for wheel in platform.wheels:
            lock.add_pypi_package(ENVIRONMENT, own[platform.name], wheel.name, wheel.version,
                                  wheel.location)  # fmt: skip
    wheels = [w for p in platforms for w in p.wheels]
    target = target.absolute()
    if not target.parent.is_dir():
        raise SolveError(f"cannot write {target}: {target.parent} is not a directory")
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    os.close(handle)
    try:
        lock.to_path(Path(temporary))
        _complete(Path(temporary), {w.location: w for w in wheels}, indexes, find_links)
        os.replace(temporary, target)
    except OSError as e:
        Path(temporary).unlink(missing_ok=True)
        raise SolveError(f"cannot write {target}: {e.strerror or e}") from e
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
