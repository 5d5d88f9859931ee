"""Where each installed variant wheel came from: the exact file to pin, with its sha256, taken in
order of trust from a pixi.lock entry, the PEP 610 ``direct_url.json`` (a local file's hash
checked), or a lookup in ``--find-links``/``--index-url`` that must be shown to be the installed
file (same sha256, or the same ``RECORD`` hashes); otherwise ``url=None`` and the reason
(docs/share.md, "Where the wheel files come from").
"""

from __future__ import annotations

import os
import tempfile
import zipfile
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from variant_bridge._json import loads
from variant_bridge.environment import Environment, PythonDistribution
from variant_bridge.errors import DetectionError, ExportError, SelectionError, VariantBridgeError
from variant_bridge.export.model import filename_label
from variant_bridge.indexes import (
    Downloads,
    IndexSource,
    IndexStrategy,
    ProjectListing,
    file_sha256,
    url_to_path,
)
from variant_bridge.indexes.archive import UNREADABLE
from variant_bridge.indexes.installable import decided_metadata
from variant_bridge.indexes.local import read_regular, read_text
from variant_bridge.indexes.variant_files import read_copy_variant, read_wheel_variant_metadata
from variant_bridge.markers import VariantValues
from variant_bridge.properties import VariantDescription

__all__ = [
    "DirectUrl",
    "Places",
    "WheelOrigin",
    "complete_locked",
    "establish_origin",
    "establish_origins",
    "is_variant_distribution",
    "read_direct_url",
    "variant_label",
]

# Files an installer writes or rewrites in a dist-info; their hashes say nothing about the wheel.
_INSTALLER_FILES = frozenset({"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"})


@dataclass(frozen=True, slots=True)
class WheelOrigin:
    """The file a variant wheel was installed from, or why that is unknown.

    :param url: the wheel's URL (``https://``, or ``file://`` for a local file); ``None`` when
        the origin could not be established.
    :param sha256: the wheel file's hex digest, when known.
    :param source: how it was established (``direct_url.json``, ``pixi.lock``, the find-links
        directory or index URL) or, with ``url=None``, why not.
    :param note: a caveat worth printing (a local path, an unverified match).
    :param size: the file's size in bytes, when known (a local file, an index that says).
    """

    name: str
    version: str
    label: str | None
    url: str | None
    sha256: str | None
    source: str
    note: str | None = None
    size: int | None = None


@dataclass(frozen=True, slots=True)
class DirectUrl:
    """The parts of a PEP 610 ``direct_url.json`` the export uses."""

    url: str
    sha256: str | None
    kind: str
    """``archive``, ``dir`` or ``vcs``."""


def variant_label(dist: PythonDistribution) -> str | None:
    """The variant label of *dist*: from its ``variant.json``, else from its wheel's filename."""
    if dist.variant is not None:
        return dist.variant.label
    return filename_label(dist.direct_url) or filename_label(dist.location)


def is_variant_distribution(dist: PythonDistribution) -> bool:
    """Installed from a variant wheel (``variant.json``, or a labelled locked/direct filename)."""
    return variant_label(dist) is not None


def read_direct_url(dist_info: str | os.PathLike[str]) -> DirectUrl | None:
    """Read ``direct_url.json`` of an installed distribution; ``None`` when there is none.

    :raises DetectionError: the file exists but is not a PEP 610 document (naming it).
    """
    path = Path(dist_info) / "direct_url.json"
    try:
        text = read_regular(path)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise DetectionError(f"cannot read {str(path)!r}: {e.strerror or e}") from e
    data = loads(text, source=f"corrupt {str(path)!r}", error=DetectionError)
    if not isinstance(data, dict) or not isinstance(data.get("url"), str):
        raise DetectionError(f"corrupt {str(path)!r}: expected an object with a string 'url'")
    sha256: str | None = None
    kind = "archive"
    if isinstance(data.get("dir_info"), dict):
        kind = "dir"
    elif isinstance(data.get("vcs_info"), dict):
        kind = "vcs"
    archive = data.get("archive_info")
    if isinstance(archive, dict):
        hashes = archive.get("hashes")
        if isinstance(hashes, dict) and isinstance(hashes.get("sha256"), str):
            sha256 = hashes["sha256"].lower()
        elif isinstance(archive.get("hash"), str) and archive["hash"].startswith("sha256="):
            sha256 = archive["hash"].partition("=")[2].lower()
    return DirectUrl(url=data["url"], sha256=sha256, kind=kind)


def _local_path(url: str) -> Path | None:
    return url_to_path(url) if url.startswith("file:") else None


# The folders variant-bridge stages files in (install, downloads, exports): never exported.
_STAGING_PREFIXES = ("variant-bridge-", "vb-wheels-", "vb-origin-")


def _is_staging(path: Path) -> bool:
    """A file in one of variant-bridge's staging folders under the temporary directory (an
    install's or an export's scratch copies, removed when the command ends)."""
    temporary = Path(tempfile.gettempdir())
    try:
        inside = path.absolute().relative_to(temporary.absolute())
    except ValueError:
        return False
    return len(inside.parts) > 1 and inside.parts[0].startswith(_STAGING_PREFIXES)


def _record_hashes(text: str) -> dict[str, str]:
    rows: dict[str, str] = {}
    for line in text.splitlines():
        path, _, rest = line.partition(",")
        digest = rest.partition(",")[0]
        if path and digest and path.rsplit("/", 1)[-1] not in _INSTALLER_FILES:
            rows[path] = digest
    return rows


def _installed_record(dist_info: Path) -> dict[str, str] | None:
    try:
        return _record_hashes(read_text(dist_info / "RECORD"))  # a FIFO: refused, not read
    except (OSError, UnicodeDecodeError):
        return None


def _wheel_record(wheel: Path) -> dict[str, str] | None:
    try:
        with zipfile.ZipFile(wheel) as zf:
            for name in zf.namelist():
                parts = name.split("/")
                if len(parts) == 2 and parts[0].endswith(".dist-info") and parts[1] == "RECORD":
                    return _record_hashes(zf.read(name).decode("utf-8"))
    except (OSError, zipfile.BadZipFile, UnicodeDecodeError, KeyError):
        return None
    return None


def _installed_copy_of(
    path: Path, wheel: _Wheel, dist_info: Path | None, installed: dict[str, str] | None
) -> bool:
    """Whether the installed files (*installed*: the RECORD of *dist_info*) are the installable
    copy of the wheel at *path* (:mod:`variant_bridge.indexes.installable`: what ``install`` and
    the exports' copies hand to an installer): every file as in *path*, ``METADATA`` with its
    variant markers decided for the installed variant. A remote wheel is never fetched for this
    alone."""
    if dist_info is None or installed is None or wheel.dist.variant is None:
        return False
    record = _wheel_record(path)
    metadata = f"{dist_info.name}/METADATA"
    payload = {k: v for k, v in installed.items() if k != metadata}
    if record is None or not _records_agree(
        payload, {k: v for k, v in record.items() if k != metadata}
    ):
        return False
    try:
        decided = decided_metadata(path, VariantValues.of(wheel.dist.variant))
        return decided is not None and decided == (dist_info / "METADATA").read_bytes()
    except (VariantBridgeError, *UNREADABLE, UnicodeDecodeError):
        return False


def _records_agree(installed: dict[str, str], wheel: dict[str, str]) -> bool:
    common = [path for path in installed if path in wheel]
    return bool(common) and all(installed[path] == wheel[path] for path in common)


def complete_locked(
    env: Environment, base_dir: str | os.PathLike[str], *, installed: Path | None = None
) -> Environment:
    """*env* (read from a pixi.lock in *base_dir*) with relative wheel paths made absolute and the
    variant of each local variant wheel read from the wheel's own ``variant.json`` (one under a
    plain name, like the copies ``solve --lockfile`` locks, too), so its host requirements can
    be exported as they are for an installed one.

    :param installed: the environment pixi installed from the lock (``.pixi/envs/<env>``): a
        locked wheel whose file does not say its variant takes the installed ``variant.json``.
    :raises InvalidMetadata: a local variant wheel's ``variant.json`` is malformed.
    """
    packages = []
    for dist in env.python_packages:
        location = dist.location or ""
        if not location or location.endswith(".dist-info"):
            packages.append(dist)
            continue
        path = Path(location)
        if "://" not in location and not path.is_absolute():
            path = Path(base_dir) / path
        local = "://" not in location and path.is_file()
        variant = dist.variant
        if variant is None and local:
            label = filename_label(str(path))
            if label is None:  # a plain-named copy of a variant wheel, or a plain wheel
                variant = read_copy_variant(path)
            else:
                meta = read_wheel_variant_metadata(path)
                variant = meta.variant(label) if meta is not None else None
        if variant is None and installed is not None:
            variant = _installed_variant(installed, dist)
        place = str(path) if "://" not in location else location
        packages.append(replace(dist, location=place, variant=variant))
    return replace(env, python_packages=tuple(packages))


def _installed_variant(prefix: Path, dist: PythonDistribution) -> VariantDescription | None:
    """The ``variant.json`` of *dist* as installed in *prefix*, if any."""
    from variant_bridge.detect.prefix import read_dist_info_variant

    stem = f"{canonicalize_name(dist.name).replace('-', '_')}-{dist.version}.dist-info"
    for dist_info in sorted(prefix.glob(f"lib/python*/site-packages/{stem}")):
        return read_dist_info_variant(dist_info)
    return None


@dataclass(frozen=True, slots=True)
class Places:
    """Where installed wheels are looked up: the command's sources in the order they are
    consulted (uv's), its index strategy, its one ``Downloads`` (a wheel fetched to compare it
    is the file copied later, and the cache is shared) and the target Python
    (``requires-python``)."""

    sources: Sequence[IndexSource]
    downloads: Downloads
    python: Version
    strategy: IndexStrategy = IndexStrategy.FIRST_INDEX
    _listings: dict[str, ProjectListing] = field(default_factory=dict, compare=False)

    def __bool__(self) -> bool:
        return bool(self.sources)

    def __str__(self) -> str:
        return ", ".join(s.name for s in self.sources)

    def listing(self, project: str) -> ProjectListing:
        """*project*'s files from the sources the strategy consults, read once.

        :raises IndexReadError: a source cannot be read.
        """
        found = self._listings.get(project)
        if found is None:
            found = self._listings[project] = ProjectListing(
                project,
                self.sources,
                python=self.python,
                strategy=self.strategy,
                transport=self.downloads.transport,
            )
        return found


def establish_origins(
    env: Environment, places: Places | None = None, *, every_wheel: bool = False
) -> tuple[WheelOrigin, ...]:
    """The origin of every variant wheel in *env* (of every wheel with *every_wheel*), in the
    order of ``env.python_packages``.

    :param places: where to look a wheel up that its records do not pin; ``None``: nowhere.
    :raises IndexReadError: a given find-links directory or index cannot be read.
    :raises DetectionError: a ``direct_url.json`` is corrupt.
    :raises ExportError: a pixi.lock hash does not match the local file it names.
    """
    return tuple(
        establish_origin(dist, places)
        for dist in env.python_packages
        if every_wheel or is_variant_distribution(dist)
    )


def establish_origin(dist: PythonDistribution, places: Places | None = None) -> WheelOrigin:
    """The origin of one installed or locked variant wheel (see the module docstring)."""
    wheel = _Wheel(dist, variant_label(dist))
    location = dist.location or ""
    installed = location.rstrip("/\\").endswith(".dist-info")
    if location and not installed:
        return _locked_origin(wheel, location)
    dist_info = Path(location) if installed else None
    direct = read_direct_url(dist_info) if dist_info is not None else None
    if direct is None and dist.direct_url:
        direct = DirectUrl(dist.direct_url, dist.sha256, "archive")
    if direct is not None and direct.kind == "archive":
        return _archive_origin(wheel, direct, dist_info, places)
    if places:
        found = _lookup(wheel, expected=dist.sha256, dist_info=dist_info, places=places)
        if found is not None:
            return found
        return wheel.origin(
            None,
            None,
            f"no wheel{'' if wheel.label is None else f' with label {wheel.label!r}'} that "
            f"matches the installed files was found in {places}",
        )
    why = (
        "no direct_url.json" if direct is None else f"installed from a {direct.kind} ({direct.url})"
    )
    return wheel.origin(None, None, f"{why} and no --find-links/--index-url to look it up in")


@dataclass(frozen=True, slots=True)
class _Wheel:
    """The variant wheel whose origin is sought."""

    dist: PythonDistribution
    label: str | None

    @property
    def text(self) -> str:
        label = f" [{self.label}]" if self.label else ""
        return f"{self.dist.name} {self.dist.version}{label}"

    def origin(
        self,
        url: str | None,
        sha256: str | None,
        source: str,
        note: str | None = None,
        *,
        size: int | None = None,
    ) -> WheelOrigin:
        local = _local_path(url) if url is not None else None
        if size is None and local is not None and local.is_file():
            size = local.stat().st_size
        dist = self.dist
        return WheelOrigin(dist.name, dist.version, self.label, url, sha256, source, note, size)


def _locked_origin(wheel: _Wheel, location: str) -> WheelOrigin:
    """A locked entry: pixi.lock names the exact file (URL or path) and its hash; a local file's
    hash is checked before it is exported (the file may have been rebuilt since the lock).

    :raises ExportError: the local file no longer has the locked hash (naming both).
    """
    url, _, fragment = location.partition("#")
    sha256 = wheel.dist.sha256 or (
        fragment[len("sha256=") :] if fragment.startswith("sha256=") else None
    )
    path = Path(url) if "://" not in url else _local_path(url)
    if path is None:
        return wheel.origin(url, sha256, "pixi.lock")
    # pixi.lock keeps local wheels as paths; a direct reference needs a URL.
    url = path.absolute().as_uri()
    if not path.is_file():
        note = None if sha256 is None else "the locked file is gone; its hash was not checked"
        return wheel.origin(url, sha256, "pixi.lock", note)
    actual = file_sha256(path)
    if sha256 is not None and actual != sha256.lower():
        raise ExportError(
            f"cannot pin {wheel.text}: pixi.lock records sha256 {sha256.lower()} for {path}, "
            f"but the file has sha256 {actual} (rebuilt or replaced since the lock; "
            "re-lock with pixi, or restore the file)"
        )
    return wheel.origin(url, actual, "pixi.lock")


def _archive_origin(
    wheel: _Wheel, direct: DirectUrl, dist_info: Path | None, places: Places | None
) -> WheelOrigin:
    """An archive ``direct_url.json``: an https URL as recorded; a local file hash-checked,
    and looked up in *places* first, since a path on this machine means nothing elsewhere."""
    recorded = direct.sha256
    local = _local_path(direct.url)
    if local is None:
        return wheel.origin(direct.url, recorded, "direct_url.json")
    if _is_staging(local):
        # What an installer recorded for a copy it was handed from a temporary folder: the
        # path means nothing once that folder is gone, on this machine or another.
        found = (
            _lookup(wheel, expected=recorded, dist_info=dist_info, places=places)
            if places
            else None
        )
        if found is not None:
            return found
        return wheel.origin(
            None,
            None,
            f"direct_url.json names a temporary staging copy ({local}), not a file that outlives "
            "the install",
        )
    # The file named may have changed since the install: its hash is checked, never assumed.
    actual = file_sha256(local) if local.is_file() else None
    expected = recorded if recorded is not None else actual
    if places:
        found = _lookup(wheel, expected=expected, dist_info=dist_info, places=places)
        if found is not None:
            return found
    if recorded is not None and actual is not None and actual != recorded:
        return wheel.origin(
            None,
            None,
            f"{local} has sha256 {actual}, but direct_url.json recorded {recorded} "
            "(the file changed after the install)",
        )
    return wheel.origin(
        direct.url,
        expected,
        "direct_url.json",
        note="a file on this machine; pass --find-links/--index-url to pin a shareable URL",
    )


def _lookup(
    wheel: _Wheel, *, expected: str | None, dist_info: Path | None, places: Places
) -> WheelOrigin | None:
    """The wheel in *places* whose files match the installed ones (fetched, when it must be
    hashed, through the command's downloads: the copy made later is that same file)."""
    dist = wheel.dist
    try:
        version = Version(dist.version)
        spec = SpecifierSet(f"=={version}")
        listing = places.listing(dist.name)
        if version not in listing.versions(spec, tags=None):
            return None
        files = listing.files(version, spec, downloads=places.downloads, tags=None)
    except (ValueError, SelectionError):  # InvalidVersion, or a number past int()'s 4300 digits
        return None
    installed = _installed_record(dist_info) if dist_info is not None else None
    unverified: list[tuple[str, str | None, str]] = []
    for candidate in files.candidates:
        if candidate.label != wheel.label:
            continue
        url, sha256 = candidate.url, candidate.sha256
        if expected is not None and sha256 is not None:
            local = _local_path(url)
            if sha256.lower() == expected or (
                local is not None and _installed_copy_of(local, wheel, dist_info, installed)
            ):
                return wheel.origin(url, sha256, candidate.source, size=candidate.size)
            continue
        local = _local_path(url)
        path = local if local is not None else places.downloads.get(candidate)
        actual = file_sha256(path)
        if expected is not None:
            if actual == expected or _installed_copy_of(path, wheel, dist_info, installed):
                return wheel.origin(url, actual, candidate.source, size=path.stat().st_size)
            continue
        record = _wheel_record(path)
        if installed is not None and record is not None:
            if _records_agree(installed, record):
                return wheel.origin(url, actual, candidate.source, size=path.stat().st_size)
            continue
        unverified.append((url, actual, candidate.source))
    if len(unverified) == 1:
        url, sha256, source = unverified[0]
        return wheel.origin(
            url,
            sha256,
            source,
            note="matched by name, version and label only (no installed hash or RECORD to compare)",
        )
    return None
