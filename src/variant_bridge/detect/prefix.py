"""A conda prefix on disk: ``conda-meta/*.json`` records and ``site-packages/*.dist-info``.

Records are read with plain :mod:`json` and checked here. Measured on 1,000 synthetic records
(33 MB, 50-800 files each): ``json`` ~150 ms, ``rattler.PrefixRecord.from_path`` ~100 ms, but
rattler drops conda's ``requested_spec`` key, rejects ``"url": null`` and hides the file list;
re-reading each file to recover those made it ~155 ms. So: ``json``, which also lets errors name
the file with line and column.

PyPI side: ``*.dist-info`` directories that a conda record lists in its files are conda's and are
left out of :attr:`PrefixContents.python_packages` (they are already in ``conda_packages``); what
remains was installed by pip/uv/etc. Incomplete dist-infos (no ``METADATA``, e.g. an interrupted
install) are skipped with a note.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from variant_bridge._json import loads
from variant_bridge._patterns import Lazy
from variant_bridge._values import value
from variant_bridge.environment import CondaRecord, PythonDistribution, Source, Toolkit
from variant_bridge.errors import (
    DetectionError,
    InvalidMetadata,
    NotRegularFileError,
    clip,
    quote,
)
from variant_bridge.indexes.local import read_header, read_regular
from variant_bridge.mappings import load_tables
from variant_bridge.virtual_packages import TOOLKIT_SHAPE

if TYPE_CHECKING:
    from variant_bridge.properties import VariantDescription

__all__ = [
    "PrefixContents",
    "check_toolkit_version",
    "read_conda_meta",
    "read_dist_info",
    "read_dist_info_variant",
    "read_prefix",
    "read_site_packages",
    "toolkit_of",
]

# A dist-info directory named in a conda-meta file list (JSON text; `/` or an escaped `\`).
_OWNED_DIST_INFO = Lazy(rb'site-packages(?:/|\\\\)([^/"\\]+\.dist-info)(?:/|\\\\)')


@value
class PrefixContents:
    """What a prefix holds, before virtual packages are added."""

    path: Path
    platform: str | None
    """The records' subdir (noarch ignored); ``None`` when only noarch records exist."""
    conda_packages: tuple[CondaRecord, ...]
    python_packages: tuple[PythonDistribution, ...]
    python: str | None
    toolkit: Toolkit | None
    notes: tuple[str, ...] = ()
    conda_variants: tuple[PythonDistribution, ...] = ()
    """Variant wheels installed as conda packages (``variant-bridge convert``): dist-infos a
    conda record owns that carry a ``variant.json``."""


def toolkit_of(records: Iterable[CondaRecord], source: Source) -> Toolkit | None:
    """The first of the tables' toolkit packages present (``cuda-version``, else ``cudatoolkit``
    for CUDA <= 11), else ``None``."""
    by_name = {r.name: r for r in records}
    for package in load_tables().nvidia.toolkit_packages:
        record = by_name.get(package)
        if record is not None:
            return Toolkit(package, record.version, source)
    return None


def read_prefix(
    path: str | os.PathLike[str], *, named: str | None = None, hint: str = ""
) -> PrefixContents:
    """Read a conda prefix.

    :param named: how the user gave the prefix, for messages (``--prefix /env``,
        ``$CONDA_PREFIX=/env``); default: the path.
    :param hint: appended to the "not a prefix" messages, e.g. `` (unset it or pass --prefix)``.
    :raises DetectionError: not a directory, no ``conda-meta/``, unreadable or invalid records,
        unreadable dist-info files. Messages name the file.
    """
    prefix = Path(path)
    where = named or clip(str(prefix))
    what = _not_a_directory(prefix)
    if what is not None:
        raise DetectionError(f"{where}: {what}{hint}")
    meta = prefix / "conda-meta"
    if not meta.is_dir():
        raise DetectionError(f"{where} is not a conda prefix (no conda-meta/){hint}")
    notes: list[str] = []
    records, owned, site_hint = read_conda_meta(meta, notes)
    platform = _platform_of(records, notes)
    python_record = next((r for r in records if r.name == "python"), None)
    python = python_record.version if python_record is not None else None
    dists: list[PythonDistribution] = []
    converted: list[PythonDistribution] = []
    for site in _site_packages_dirs(prefix, platform, python, site_hint):
        dists.extend(read_site_packages(site, owned, notes))
        converted.extend(_read_converted(site, owned, notes))
    return PrefixContents(
        path=prefix,
        platform=platform,
        conda_packages=tuple(sorted(records, key=lambda r: r.name)),
        python_packages=tuple(sorted(dists, key=lambda d: d.name.lower())),
        python=python,
        toolkit=toolkit_of(records, Source.PREFIX),
        notes=tuple(notes),
        conda_variants=tuple(sorted(converted, key=lambda d: d.name.lower())),
    )


def _not_a_directory(path: Path) -> str | None:
    """Why *path* is not a directory (``no such directory``...), or ``None`` when it is one."""
    try:
        if path.is_dir():
            return None
        return "not a directory" if path.exists() else "no such directory"
    except OSError as e:  # a name too long, a loop of links: is_dir() does not hide those
        return f"cannot read: {e.strerror or e}"


def read_conda_meta(
    meta: Path, notes: list[str] | None = None
) -> tuple[list[CondaRecord], frozenset[str], str | None]:
    """Records of ``conda-meta/*.json``, the dist-info names they own, and the python record's
    ``python_site_packages_path`` (CEP 17) when set.

    :param notes: where a ``*.json`` that is not a regular file (a FIFO, a device: reading it
        would block or never end) is reported as skipped; without it, that is an error.
    :raises DetectionError: the directory or a record cannot be read or is invalid.
    """
    try:
        names = sorted(e.name for e in os.scandir(meta) if e.name.endswith(".json"))
    except OSError as e:
        raise DetectionError(f"{meta}: cannot list: {e.strerror or e}") from e
    records: list[CondaRecord] = []
    owned: set[str] = set()
    site_hint: str | None = None
    for name in names:
        path = meta / name
        try:
            raw = _read_bytes(path)
        except DetectionError as e:
            if notes is None or not isinstance(e.__cause__, NotRegularFileError):
                raise
            notes.append(f"skipped {path}: {e.__cause__.kind}, not a conda record")
            continue
        obj = _load_json(raw, path)
        record = _record(obj, path)
        check_toolkit_version(record, str(path))
        records.append(record)
        if b".dist-info" in raw:
            owned.update(m.decode("utf-8", "replace") for m in _OWNED_DIST_INFO.findall(raw))
        if record.name == "python":
            hint = obj.get("python_site_packages_path")
            site_hint = hint if isinstance(hint, str) and hint else None
    return records, frozenset(owned), site_hint


def check_toolkit_version(record: CondaRecord, where: str) -> None:
    """A toolkit record (``cuda-version``, ``cudatoolkit``) whose version cannot be read is an
    error naming *where*: the policy must never fall back to the driver silently (§11).

    :raises DetectionError: e.g. ``.../cuda-version-x.json: cuda-version 'x' is not a CUDA
        toolkit version like 12.6; the solved toolkit cannot be read``.
    """
    if record.name in load_tables().nvidia.toolkit_packages and not TOOLKIT_SHAPE.matches(
        record.version
    ):
        raise DetectionError(
            f"{where}: {record.name} {quote(record.version)} is not {TOOLKIT_SHAPE.expected}; the "
            "solved toolkit cannot be read"
        )


def _read_bytes(path: Path) -> bytes:
    """A regular file's bytes (a FIFO or a device would block or never end).

    :raises DetectionError: naming *path*; caused by :class:`NotRegularFileError` for a FIFO.
    """
    try:
        return read_regular(path)
    except OSError as e:
        raise DetectionError(_cannot_read(path, e)) from e


def _read_optional(path: Path, *, header: bool = False) -> bytes | None:
    """:func:`_read_bytes` (only the header block with *header*: a ``METADATA``'s long
    description is never read), or ``None`` when *path* does not exist."""
    try:
        return read_header(path) if header else read_regular(path)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise DetectionError(_cannot_read(path, e)) from e


def _cannot_read(path: Path, error: OSError) -> str:
    """``…/METADATA: a FIFO, not a regular file`` (as every command says it), or
    ``…: cannot read: Permission denied``."""
    if isinstance(error, NotRegularFileError):
        return str(error)
    return f"{path}: cannot read: {error.strerror or error}"


def _load_json(raw: bytes, path: Path) -> Any:
    return loads(raw, source=str(path), error=DetectionError)


MAX_BUILD_STRING = 64
"""CEP 26's longest build string (rattler's ``BuildString`` refuses a longer one)."""


def _record(obj: Any, path: Path) -> CondaRecord:
    if not isinstance(obj, dict):
        raise DetectionError(
            f"{path}: expected a JSON object (a conda package record), got {type(obj).__name__}"
        )
    name = _string(obj, "name", path, required=True)
    version = _string(obj, "version", path, required=True)
    build = _string(obj, "build", path, required=True)
    assert build is not None
    if len(build) > MAX_BUILD_STRING:  # rattler refuses it wherever a record is built
        raise DetectionError(
            f"{path}: 'build' {quote(build)} is longer than the {MAX_BUILD_STRING} characters "
            "a conda build string may have (CEP 26)"
        )
    build_number = obj.get("build_number", 0)
    if not isinstance(build_number, int) or isinstance(build_number, bool):
        raise DetectionError(
            f"{path}: 'build_number' must be an integer, got {clip(repr(build_number))}"
        )
    requested = _strings(obj, "requested_specs", path)
    # conda writes the singular `requested_spec` (one string); rattler/pixi the list.
    single = _string(obj, "requested_spec", path)
    if single and single not in requested:
        requested = (*requested, single)
    assert name is not None
    assert version is not None
    return CondaRecord(
        name=name,
        version=version,
        build=build,
        build_number=build_number,
        subdir=_string(obj, "subdir", path) or "",
        channel=_string(obj, "channel", path),
        url=_string(obj, "url", path),
        sha256=_string(obj, "sha256", path),
        md5=_string(obj, "md5", path),
        depends=_strings(obj, "depends", path),
        constrains=_strings(obj, "constrains", path),
        requested_specs=requested,
    )


def _string(obj: dict[str, Any], key: str, path: Path, *, required: bool = False) -> str | None:
    value = obj.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str) or (required and not value):
        got = "nothing" if value is None else clip(repr(value))
        raise DetectionError(f"{path}: {key!r} must be a non-empty string, got {got}")
    return value


def _strings(obj: dict[str, Any], key: str, path: Path) -> tuple[str, ...]:
    value = obj.get(key)
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DetectionError(f"{path}: {key!r} must be a list of strings, got {clip(repr(value))}")
    return tuple(value)


def _platform_of(records: list[CondaRecord], notes: list[str]) -> str | None:
    counts = Counter(r.subdir for r in records if r.subdir and r.subdir != "noarch")
    if not counts:
        return None
    (platform, _), *others = counts.most_common()
    if others:
        notes.append(
            f"records of several platforms ({', '.join(sorted(counts))}); using {platform}"
        )
    return platform


def _site_packages_dirs(
    prefix: Path, platform: str | None, python: str | None, hint: str | None
) -> list[Path]:
    if hint:
        return [prefix / hint]
    if (platform or "").startswith("win") or (platform is None and os.name == "nt"):
        return [prefix / "Lib" / "site-packages"]
    if python is not None:
        major_minor = ".".join(python.split(".")[:2])
        # A free-threaded build (3.13t) installs into lib/python3.13t.
        candidates = [f"python{major_minor}", f"python{major_minor}t"]
        return [prefix / "lib" / c / "site-packages" for c in candidates]
    return sorted((prefix / "lib").glob("python*/site-packages"))


def read_site_packages(
    site: Path, owned: frozenset[str] = frozenset(), notes: list[str] | None = None
) -> list[PythonDistribution]:
    """The PyPI distributions of one ``site-packages`` directory (none when it does not exist).

    :param owned: dist-info names a conda record lists (conda's, left out).
    :param notes: where incomplete dist-infos and corrupt ``direct_url.json`` files are noted.
    :raises DetectionError: the directory or a dist-info file cannot be read.
    """
    notes = notes if notes is not None else []
    try:
        entries = sorted(
            e.name for e in os.scandir(site) if e.name.endswith(".dist-info") and e.is_dir()
        )
    except FileNotFoundError:
        return []
    except OSError as e:
        raise DetectionError(f"{site}: cannot list: {e.strerror or e}") from e
    dists = []
    for name in entries:
        if name in owned or name.startswith("~"):  # `~name` = pip's half-removed leftovers
            continue
        dist = read_dist_info(site / name, notes=notes)
        if dist is None:
            notes.append(f"skipped {site / name}: no METADATA (incomplete install?)")
            continue
        dists.append(dist)
    return dists


def _read_converted(
    site: Path, owned: frozenset[str], notes: list[str]
) -> list[PythonDistribution]:
    """Conda-owned dist-infos that carry a ``variant.json`` (converted variant wheels)."""
    found = []
    for name in sorted(owned):
        if (site / name / "variant.json").is_file():
            dist = read_dist_info(site / name, notes=notes)
            if dist is not None:
                found.append(dist)
    return found


def read_dist_info(path: Path, *, notes: list[str] | None = None) -> PythonDistribution | None:
    """One installed distribution from its ``*.dist-info``; ``None`` when it has no METADATA.

    :param notes: where a corrupt ``direct_url.json`` is reported (the URL is then unknown);
        without it, that is an error. Detection passes it: only ``export`` needs the URL, and one
        broken file must not make the whole prefix unreadable.
    :raises DetectionError: a file exists but cannot be read or parsed.
    :raises InvalidMetadata: its ``variant.json`` is malformed (that changes what is installed,
        so it stays an error; the message names the file).
    """
    raw = _read_optional(path / "METADATA", header=True)
    if raw is None:
        return None
    name, version, requires = _parse_metadata(raw.decode("utf-8", "replace"))
    if not name or not version:
        stem_name, _, stem_version = path.name.removesuffix(".dist-info").partition("-")
        name, version = name or stem_name, version or stem_version
    try:
        direct_url, sha256 = _direct_url(path / "direct_url.json")
    except DetectionError as e:
        if notes is None:
            raise
        notes.append(f"{e}; ignored, so where {name} {version} was installed from is unknown")
        direct_url = sha256 = None
    return PythonDistribution(
        name=name,
        version=version,
        variant=read_dist_info_variant(path),
        requires=requires,
        location=str(path),
        installer=_installer(path / "INSTALLER"),
        direct_url=direct_url,
        sha256=sha256,
    )


def _parse_metadata(text: str) -> tuple[str, str, tuple[str, ...]]:
    """Name, Version and Requires-Dist from the header block of a METADATA file (what
    :func:`~variant_bridge.detect._files.read_header` read)."""
    header, _, _ = text.partition("\n\n")
    fields: list[tuple[str, str]] = []
    for line in header.splitlines():
        if line[:1] in (" ", "\t") and fields:  # RFC 822 continuation line
            key, value = fields[-1]
            fields[-1] = (key, f"{value} {line.strip()}")
        elif ":" in line:
            key, _, value = line.partition(":")
            fields.append((key.strip().lower(), value.strip()))
    first: dict[str, str] = {}
    for key, value in fields:
        first.setdefault(key, value)
    requires = tuple(v for k, v in fields if k == "requires-dist")
    return first.get("name", ""), first.get("version", ""), requires


def _installer(path: Path) -> str | None:
    raw = _read_optional(path)
    if raw is None:
        return None
    text = raw.decode("utf-8", "replace")
    return text.strip().splitlines()[0].strip() if text.strip() else None


def _direct_url(path: Path) -> tuple[str | None, str | None]:
    """PEP 610: the ``url`` and the archive's sha256 (``hashes`` or the legacy ``hash``)."""
    raw = _read_optional(path)
    if raw is None:
        return None, None
    obj = _load_json(raw, path)
    if not isinstance(obj, dict) or not isinstance(obj.get("url"), str):
        raise DetectionError(f"{path}: expected a PEP 610 object with a string 'url'")
    sha256 = None
    info = obj.get("archive_info")
    if isinstance(info, dict):
        hashes = info.get("hashes")
        if isinstance(hashes, dict) and isinstance(hashes.get("sha256"), str):
            sha256 = hashes["sha256"]
        elif isinstance(info.get("hash"), str) and info["hash"].startswith("sha256="):
            sha256 = info["hash"].removeprefix("sha256=")
    return obj["url"], sha256


def read_dist_info_variant(dist_info: str | os.PathLike[str]) -> VariantDescription | None:
    """The variant an installed distribution was built as, from ``{dist_info}/variant.json``.

    :returns: ``None`` when the distribution has no ``variant.json`` (a non-variant install).
    :raises InvalidMetadata: when *dist_info* is not a directory, or ``variant.json`` is not a
        regular file, is malformed or lists other than exactly one label.
    """
    from variant_bridge.metadata import read_variant_json, single_variant

    directory = Path(dist_info)
    if not directory.is_dir():
        raise InvalidMetadata(f"{directory}: not a .dist-info directory")
    file = directory / "variant.json"
    try:
        raw = read_regular(file)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise InvalidMetadata(f"{file}: cannot read: {e.strerror or e}") from e
    meta = read_variant_json(raw, source=str(file))
    return single_variant(meta, source=str(file))
