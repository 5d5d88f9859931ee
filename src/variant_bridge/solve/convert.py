"""A wheel as a conda package (``.tar.bz2``, ``noarch: python`` linking), written with the
standard library.

Layout (what conda and rattler link for ``noarch: python``): the wheel's root and its
``.data/purelib`` / ``.data/platlib`` under ``site-packages/``; ``.data/scripts`` under
``python-scripts/`` (linked into ``bin/``); ``.data/headers`` under ``include/<project>/``;
``.data/data`` at the prefix root. Console and GUI entry points go to ``info/link.json``, which
conda and rattler turn into scripts; the dist-info keeps ``variant.json`` and says ``INSTALLER:
conda``; its ``RECORD`` (paths relative to a pip install) is left out, as conda-build does, since
conda removes the package by its own file list. A binary wheel is placed in its platform subdir
(``subdir`` in ``index.json``) and still linked as ``noarch: python``: the site-packages path of
the prefix's Python is decided at install time, which is what a wheel expects.

Not converted: a wheel's ``.data`` folders other than these five (none is defined), and
``RECORD`` signatures (``RECORD.jws``/``.p7s``), which no longer match.

The wheel is opened through :class:`~variant_bridge.indexes.archive.WheelArchive`, which checks
every member path, ``RECORD`` entry and entry point and the zip's caps before anything is
written; members are then streamed into the package (hashed on the way), never held whole, so a
2 GiB ``libtorch_cuda.so`` costs buffers, not gigabytes.
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from variant_bridge._values import value
from variant_bridge.errors import SolveError
from variant_bridge.indexes.archive import WheelArchive

__all__ = ["CondaPackage", "check_wheel", "entry_points", "write_conda_package"]

_MTIME = 1_700_000_000  # fixed: the same wheel gives the same bytes
_DROPPED = ("RECORD", "RECORD.jws", "RECORD.p7s", "INSTALLER")
_INSTALLER = b"conda\n"


@value
class CondaPackage:
    """What one converted package is."""

    name: str
    version: str
    build: str
    build_number: int
    subdir: str
    depends: tuple[str, ...]

    @property
    def filename(self) -> str:
        return f"{self.name}-{self.version}-{self.build}.tar.bz2"


def entry_points(archive: WheelArchive) -> list[str]:
    """``console_scripts`` and ``gui_scripts`` of a checked wheel as conda's
    ``name = module:function`` lines."""
    points = archive.entry_points
    ordered = [p for p in points if p.group == "console_scripts"]
    ordered += [p for p in points if p.group == "gui_scripts"]
    return [f"{p.name} = {p.value}" for p in ordered]


def _destination(member: str, project: str, data_dir: str) -> str | None:
    """Where one (checked) wheel member goes in the package (``None``: left out)."""
    if member.startswith(data_dir + "/"):
        kind, _, rest = member[len(data_dir) + 1 :].partition("/")
        places = {
            "purelib": "site-packages/",
            "platlib": "site-packages/",
            "scripts": "python-scripts/",
            "headers": f"include/{project}/",
            "data": "",
        }
        if kind not in places or not rest:
            return None
        return places[kind] + rest
    head, _, name = member.rpartition("/")
    if head.endswith(".dist-info") and "/" not in head and name in _DROPPED:
        return None
    return "site-packages/" + member


class _Hashing:
    """A reader that hashes what passes through it (tarfile pulls the member in chunks)."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.stream = stream
        self.digest = hashlib.sha256()

    def read(self, size: int = -1) -> bytes:
        data = self.stream.read(size)
        self.digest.update(data)
        return data


def _add(tar: tarfile.TarFile, path: str, stream: IO[bytes] | _Hashing, size: int) -> None:
    info = tarfile.TarInfo(path)
    info.size = size
    info.mtime = _MTIME
    info.mode = 0o755 if path.startswith("python-scripts/") else 0o644
    tar.addfile(info, stream)  # read() is all tarfile calls


def _index_json(package: CondaPackage) -> dict[str, Any]:
    return {
        "name": package.name,
        "version": package.version,
        "build": package.build,
        "build_number": package.build_number,
        "depends": list(package.depends),
        "noarch": "python",
        "subdir": package.subdir,
        "timestamp": _MTIME * 1000,
        "license": "",
    }


def _info(
    package: CondaPackage, paths: Sequence[dict[str, Any]], scripts: Sequence[str]
) -> dict[str, bytes]:
    index = _index_json(package)
    link = {
        "noarch": {"type": "python", "entry_points": list(scripts)},
        "package_metadata_version": 1,
    }
    ordered = sorted(paths, key=lambda p: str(p["_path"]))
    files = "".join(f"{p['_path']}\n" for p in ordered)
    return {
        "info/index.json": json.dumps(index, indent=1, sort_keys=True).encode(),
        "info/paths.json": json.dumps({"paths": ordered, "paths_version": 1}, indent=1).encode(),
        "info/files": files.encode(),
        "info/link.json": json.dumps(link, indent=1).encode(),
    }


def _plan(archive: WheelArchive, project: str) -> list[tuple[zipfile.ZipInfo, str]]:
    """``(member, package path)`` of every member converted; two members landing on one path
    are refused (a wheel's root and its ``.data/purelib`` holding the same file)."""
    planned: dict[str, zipfile.ZipInfo] = {}
    for info in archive.files:
        target = _destination(info.filename.rstrip("/"), project, archive.data_dir)
        if target is None:
            continue
        if target in planned:
            raise SolveError(
                f"{archive.name}: members {planned[target].filename!r} and {info.filename!r} "
                f"both become {target!r}"
            )
        planned[target] = info
    return [(info, target) for target, info in planned.items()]


class _HashingSink:
    """The package file, hashed as it is written (its repodata record needs md5 and sha256)."""

    def __init__(self, raw: IO[bytes]) -> None:
        self.raw = raw
        self.md5 = hashlib.md5(usedforsecurity=False)
        self.sha256 = hashlib.sha256()
        self.size = 0

    def write(self, data: bytes) -> int:
        self.md5.update(data)
        self.sha256.update(data)
        self.size += len(data)
        return self.raw.write(data)

    def flush(self) -> None:
        self.raw.flush()


def _write(archive: WheelArchive, package: CondaPackage, partial: Path) -> dict[str, Any]:
    plan = _plan(archive, package.name)
    scripts = entry_points(archive)
    paths: list[dict[str, Any]] = []
    with partial.open("wb") as raw:
        sink = _HashingSink(raw)
        with tarfile.open(fileobj=sink, mode="w:bz2") as tar:  # type: ignore[call-overload]
            _fill(tar, archive, plan, package, scripts=scripts, paths=paths)
    record = _index_json(package)
    record.update(md5=sink.md5.hexdigest(), sha256=sink.sha256.hexdigest(), size=sink.size)
    return record


def _fill(
    tar: tarfile.TarFile,
    archive: WheelArchive,
    plan: list[tuple[zipfile.ZipInfo, str]],
    package: CondaPackage,
    *,
    scripts: list[str],
    paths: list[dict[str, Any]],
) -> None:
    """Files first, each streamed and hashed; info/ last, when every hash is known (conda and
    rattler read info/ wherever it sits in a .tar.bz2)."""
    for info, target in plan:
        with archive.open(info) as member:
            hashing = _Hashing(member)
            _add(tar, target, hashing, info.file_size)
        paths.append(_path_entry(target, hashing.digest.hexdigest(), info.file_size))
    installer = f"site-packages/{archive.dist_info}/INSTALLER"
    _add(tar, installer, io.BytesIO(_INSTALLER), len(_INSTALLER))
    paths.append(_path_entry(installer, hashlib.sha256(_INSTALLER).hexdigest(), len(_INSTALLER)))
    for name, content in _info(package, paths, scripts).items():
        _add(tar, name, io.BytesIO(content), len(content))


def _path_entry(path: str, sha256: str, size: int) -> dict[str, Any]:
    return {"_path": path, "path_type": "hardlink", "sha256": sha256, "size_in_bytes": size}


def _open(wheel: Path) -> WheelArchive:
    try:
        return WheelArchive(wheel)
    except (OSError, zipfile.BadZipFile, EOFError) as e:
        raise SolveError(f"{wheel}: not a readable wheel: {e}") from e


def check_wheel(wheel: Path) -> None:
    """Open *wheel* and check it whole (paths, entry points, zip caps), writing nothing.

    :raises UnsafeArchive: see :class:`~variant_bridge.indexes.archive.WheelArchive`.
    :raises SolveError: not a readable wheel.
    """
    with _open(wheel):
        pass


def write_conda_package(
    wheel: Path, package: CondaPackage, channel: Path
) -> tuple[Path, dict[str, Any]]:
    """Write *wheel* as *package* into ``channel/<subdir>/`` (whole or not at all); returns the
    file and its repodata record (``index.json`` with ``md5``, ``sha256`` and ``size``), so the
    channel can be indexed without reading the package back.

    :raises UnsafeArchive: a member path, ``RECORD`` entry or entry point outside its root, or a
        zip cap exceeded: nothing is written.
    :raises SolveError: the wheel cannot be read.
    """
    target = channel / package.subdir / package.filename
    archive = _open(wheel)
    partial = target.with_name(f".{target.name}.partial")
    with archive:
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            record = _write(archive, package, partial)
            partial.replace(target)
        except (zipfile.BadZipFile, EOFError) as e:
            partial.unlink(missing_ok=True)
            raise SolveError(f"{wheel}: not a readable wheel: {e}") from e
        except OSError as e:
            partial.unlink(missing_ok=True)
            raise SolveError(f"cannot write {target}: {e.strerror or e}") from e
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
    return target, record
