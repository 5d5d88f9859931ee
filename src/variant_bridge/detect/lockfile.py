"""A pixi.lock environment, read with ``rattler.LockFile`` (imported lazily).

py-rattler 0.28 panics when handed a freshly built ``LockPlatform``; every platform object used
here comes from the lock file itself. A lock platform is chosen by name (``linux-64``, or a rich
platform alias such as ``cuda``) or, failing that, by its conda subdir when that is unambiguous.
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit
from urllib.request import url2pathname

from variant_bridge.detect.prefix import check_toolkit_version, toolkit_of
from variant_bridge.environment import CondaRecord, PythonDistribution, Source, Toolkit
from variant_bridge.errors import (
    DetectionError,
    InvalidWheelFilename,
    NotRegularFileError,
    VariantBridgeError,
    clip,
    quote,
)
from variant_bridge.filenames import WheelFilename
from variant_bridge.indexes.local import MAX_LOCAL_DOCUMENT, check_regular
from variant_bridge.indexes.variant_files import read_copy_variant, read_wheel_variant_metadata

__all__ = ["LockedEnvironment", "check_lock", "pixi_environment_prefix", "read_lockfile"]

DEFAULT_ENVIRONMENT = "default"


def pixi_environment_prefix(
    lockfile: str | os.PathLike[str], environment: str | None = None, *, installed: bool = True
) -> Path | None:
    """The environment pixi installed from *lockfile*: ``.pixi/envs/<environment>`` beside it
    (``default`` when *environment* is ``None``), when that directory exists; else ``None``.

    :param installed: ``False``: where pixi installs it, whether or not it did (``None`` only
        for a name that is no directory name).
    """
    name = environment or DEFAULT_ENVIRONMENT
    if not name or "/" in name or "\\" in name or name in (".", ".."):
        return None
    prefix = Path(lockfile).absolute().parent / ".pixi" / "envs" / name
    return prefix if not installed or prefix.is_dir() else None


def check_lock(path: Path) -> None:
    """Refuse *path* unless it is a regular file within :data:`MAX_LOCAL_DOCUMENT`, before
    rattler opens it (a FIFO would block rattler's read forever, ``/dev/zero`` never ends).

    :raises DetectionError: one line naming it (``…/pixi.lock: a FIFO, not a regular file``).
    """
    try:
        check_regular(path, max_bytes=MAX_LOCAL_DOCUMENT)
    except NotRegularFileError as e:
        raise DetectionError(str(e)) from e
    except OSError as e:  # missing, too large, a name too long
        what = "no such file" if e.errno == errno.ENOENT else e.strerror or str(e)
        raise DetectionError(f"{clip(str(path))}: {what}") from e


@dataclass(frozen=True, slots=True)
class LockedEnvironment:
    """One environment of a lock file, for one platform."""

    path: Path
    environment: str
    platform_name: str
    """The lock's name for the platform (a subdir, or a rich-platform alias)."""
    platform: str
    """The conda subdir."""
    conda_packages: tuple[CondaRecord, ...]
    python_packages: tuple[PythonDistribution, ...]
    python: str | None
    toolkit: Toolkit | None
    declared_virtual_packages: tuple[str, ...] = ()
    """Virtual packages the lock declares for this platform (lock v7 rich platforms)."""
    notes: tuple[str, ...] = ()

    @property
    def origin(self) -> str:
        return f"{self.path.name} {self.environment}/{self.platform_name}"


def read_lockfile(
    path: str | os.PathLike[str],
    *,
    environment: str | None = None,
    platform: str | None = None,
    host: str,
) -> LockedEnvironment:
    """Read *environment* (default ``default``) for *platform* from a pixi.lock.

    :param platform: a lock platform name or conda subdir; ``None`` picks *host* if locked, else
        the only locked platform.
    :param host: this machine's conda subdir.
    :raises DetectionError: unreadable or invalid lock (message names the file, no rattler
        internals), unknown environment or platform (message lists the available ones).
    """
    import rattler

    lock_path = Path(path)
    check_lock(lock_path)
    try:
        lock = rattler.LockFile.from_path(lock_path)
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # pyo3 panics derive from BaseException
        raise DetectionError(f"{lock_path}: not a readable lock file: {_first_line(e)}") from e
    env_name = environment or DEFAULT_ENVIRONMENT
    env = _guard(lock_path, lambda: lock.environment(env_name))
    if env is None:
        names = sorted(name for name, _ in _guard(lock_path, lock.environments))
        available = ", ".join(names) or "none"
        raise DetectionError(
            f"{lock_path}: no environment {quote(env_name)} (available: {available})"
        )
    locked = _guard(lock_path, env.platforms)
    chosen = _choose_platform(lock_path, env_name, locked, platform, host)
    records = _guard(lock_path, lambda: env.conda_repodata_records_for_platform(chosen)) or []
    pypi = _guard(lock_path, lambda: env.pypi_packages_for_platform(chosen)) or []
    conda_packages = tuple(sorted((_conda_record(r) for r in records), key=lambda r: r.name))
    for record in conda_packages:
        check_toolkit_version(record, f"{lock_path} ({env_name}, {chosen.name})")
    python_record = next((r for r in conda_packages if r.name == "python"), None)
    notes: list[str] = []
    python_packages = [_pypi(p, lock_path.parent, notes) for p in pypi]
    remote = [
        str(d) for d in sorted(python_packages, key=lambda d: d.name.lower())
        if d.unknown_variant_label is not None and _is_remote(d.location or "")
    ]  # fmt: skip
    if remote:
        notes.append(
            f"locked variant wheel(s) on an index, properties unknown: {', '.join(remote)} "
            "(variant.json is inside the wheel, which detection does not download)"
        )
    return LockedEnvironment(
        path=lock_path,
        environment=env_name,
        platform_name=chosen.name,
        platform=str(chosen.subdir),
        conda_packages=conda_packages,
        python_packages=tuple(sorted(python_packages, key=lambda d: d.name.lower())),
        python=python_record.version if python_record is not None else None,
        toolkit=toolkit_of(conda_packages, Source.LOCKFILE),
        declared_virtual_packages=tuple(chosen.virtual_packages),
        notes=tuple(notes),
    )


def _guard(path: Path, call: Any) -> Any:
    """Run a rattler accessor; its failures (panics included) become a DetectionError."""
    try:
        return call()
    except (KeyboardInterrupt, SystemExit):
        raise
    except BaseException as e:  # pyo3 panics derive from BaseException
        raise DetectionError(f"{path}: cannot read the lock file: {_first_line(e)}") from e


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _choose_platform(
    path: Path, env_name: str, locked: list[Any], wanted: str | None, host: str
) -> Any:
    available = ", ".join(sorted(p.name for p in locked)) or "none"
    if wanted is None:
        by_name = [p for p in locked if p.name == host]
        by_subdir = [p for p in locked if str(p.subdir) == host]
        for candidates in (by_name, by_subdir, locked):
            if len(candidates) == 1:
                return candidates[0]
        raise DetectionError(
            f"{path}: environment {env_name!r} locks several platforms and none is this "
            f"machine's ({host}); choose one of: {available}"
            if locked
            else f"{path}: environment {env_name!r} locks no platform"
        )
    by_name = [p for p in locked if p.name == wanted]
    if by_name:
        return by_name[0]
    by_subdir = [p for p in locked if str(p.subdir) == wanted]
    if len(by_subdir) == 1:
        return by_subdir[0]
    if by_subdir:
        raise DetectionError(
            f"{path}: platform {quote(wanted)} is locked several times in {env_name!r}; "
            f"choose one of: {', '.join(p.name for p in by_subdir)}"
        )
    raise DetectionError(
        f"{path}: environment {quote(env_name)} does not lock platform {quote(wanted)} "
        f"(available: {available})"
    )


def _hex(value: Any) -> str | None:
    return value.hex() if isinstance(value, (bytes, bytearray)) and value else None


def _conda_record(record: Any) -> CondaRecord:
    return CondaRecord(
        name=record.name.normalized,
        version=str(record.version),
        build=str(record.build),  # rattler hands back a BuildString, the snapshot holds text
        build_number=int(record.build_number),
        subdir=str(record.subdir),
        channel=record.channel or None,
        url=record.url or None,
        sha256=_hex(record.sha256),
        md5=_hex(record.md5),
        depends=tuple(record.depends),
        constrains=tuple(record.constrains),
    )


def _locked_sha256(package: Any) -> Any:
    try:
        return package.hashes.sha256
    except AttributeError:  # py-rattler 0.28: an empty PackageHashes wraps None
        return None


def _pypi(package: Any, root: Path, notes: list[str]) -> PythonDistribution:
    location = str(package.location)
    sha256 = _hex(_locked_sha256(package))
    if sha256 is None and "#sha256=" in location:
        sha256 = location.rpartition("#sha256=")[2] or None
    dist = PythonDistribution(
        name=package.name,
        version=str(package.version),
        requires=tuple(package.requires_dist),
        location=location,
        sha256=sha256,
    )
    return _with_variant(dist, location, root, notes)


def _plain_named_variant(dist: PythonDistribution, location: str, root: Path) -> PythonDistribution:
    """A local wheel under a plain name that is a variant wheel (the copies ``solve --lockfile``
    locks, which pixi's installer accepts): its one ``variant.json`` variant."""
    if _is_remote(location):
        return dist
    url = urlsplit(location)
    path = Path(url2pathname(url.path) if url.scheme == "file" else location)
    path = path if path.is_absolute() else root / path
    try:
        variant = read_copy_variant(path) if path.is_file() else None
    except VariantBridgeError:
        return dist  # a plain wheel it stays; a broken variant.json is reported where it matters
    return dist if variant is None else replace(dist, variant=variant)


def _is_remote(location: str) -> bool:
    scheme = urlsplit(location).scheme
    return len(scheme) > 1 and scheme != "file"  # `C:` is a drive, not a scheme


def _with_variant(
    dist: PythonDistribution, location: str, root: Path, notes: list[str]
) -> PythonDistribution:
    """A locked variant wheel, recognised by the label in its filename. A local wheel's
    ``variant.json`` gives the properties; a remote one is not downloaded (detection stays
    offline and fast), so only its label is known."""
    url = urlsplit(location)
    path_text = unquote(url.path) if url.scheme else location
    filename = path_text.replace("\\", "/").rstrip("/").rpartition("/")[2]
    if not filename.endswith(".whl"):
        return dist  # an sdist, a directory, a git checkout: not a wheel, no label
    try:
        label = WheelFilename.parse(filename).label
    except InvalidWheelFilename:
        return dist
    if label is None:
        return _plain_named_variant(dist, location, root)
    if _is_remote(location):  # one note for all of them, by the caller
        return replace(dist, unknown_variant_label=label)
    path = Path(url2pathname(url.path) if url.scheme == "file" else path_text)
    if not path.is_absolute():
        path = root / path  # pixi writes local paths relative to the workspace, the lock's dir
    try:
        meta = read_wheel_variant_metadata(path)
    except VariantBridgeError as e:
        notes.append(
            f"{dist.name} {dist.version}: locked variant wheel {label!r} with unknown "
            f"properties: {e}"
        )
        return replace(dist, unknown_variant_label=label)
    variant = meta.variant(label) if meta is not None else None
    if variant is None:  # pragma: no cover - read_wheel_variant_metadata checks the label
        return replace(dist, unknown_variant_label=label)
    return replace(dist, variant=variant)
