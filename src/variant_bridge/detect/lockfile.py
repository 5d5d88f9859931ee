"""A pixi.lock environment, read with ``rattler.LockFile`` (imported lazily).

py-rattler 0.28 panics when handed a freshly built ``LockPlatform``; every platform object used
here comes from the lock file itself. A lock platform is chosen by name (``linux-64``, or a rich
platform alias such as ``cuda``) or, failing that, by its conda subdir when that is unambiguous.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from variant_bridge.detect.prefix import toolkit_of
from variant_bridge.environment import CondaRecord, PythonDistribution, Source, Toolkit
from variant_bridge.errors import DetectionError

__all__ = ["LockedEnvironment", "read_lockfile"]

DEFAULT_ENVIRONMENT = "default"


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
    if not lock_path.is_file():
        what = "not a file" if lock_path.exists() else "no such file"
        raise DetectionError(f"{lock_path}: {what}")
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
        raise DetectionError(
            f"{lock_path}: no environment {env_name!r} (available: {', '.join(names) or 'none'})"
        )
    locked = _guard(lock_path, env.platforms)
    chosen = _choose_platform(lock_path, env_name, locked, platform, host)
    records = _guard(lock_path, lambda: env.conda_repodata_records_for_platform(chosen)) or []
    pypi = _guard(lock_path, lambda: env.pypi_packages_for_platform(chosen)) or []
    conda_packages = tuple(sorted((_conda_record(r) for r in records), key=lambda r: r.name))
    python_record = next((r for r in conda_packages if r.name == "python"), None)
    return LockedEnvironment(
        path=lock_path,
        environment=env_name,
        platform_name=chosen.name,
        platform=str(chosen.subdir),
        conda_packages=conda_packages,
        python_packages=tuple(sorted((_pypi(p) for p in pypi), key=lambda d: d.name.lower())),
        python=python_record.version if python_record is not None else None,
        toolkit=toolkit_of(conda_packages, Source.LOCKFILE),
        declared_virtual_packages=tuple(chosen.virtual_packages),
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
            f"{path}: platform {wanted!r} is locked several times in {env_name!r}; "
            f"choose one of: {', '.join(p.name for p in by_subdir)}"
        )
    raise DetectionError(
        f"{path}: environment {env_name!r} does not lock platform {wanted!r} "
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


def _pypi(package: Any) -> PythonDistribution:
    location = str(package.location)
    sha256 = _hex(_locked_sha256(package))
    if sha256 is None and "#sha256=" in location:
        sha256 = location.rpartition("#sha256=")[2] or None
    return PythonDistribution(
        name=package.name,
        version=str(package.version),
        requires=tuple(package.requires_dist),
        location=location,
        sha256=sha256,
    )
