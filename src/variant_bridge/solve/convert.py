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
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from variant_bridge._values import value
from variant_bridge.errors import SolveError
from variant_bridge.indexes.archive import UNREADABLE, WheelArchive
from variant_bridge.mappings import MappingTables
from variant_bridge.virtual_packages import CONDA_BUILTIN

__all__ = [
    "ANY_GPU",
    "ANY_GPU_FEATURE",
    "CondaPackage",
    "Packaging",
    "check_wheel",
    "constrained",
    "entry_points",
    "packagings",
    "write_conda_package",
]

_MTIME = 1_700_000_000  # fixed: the same wheel gives the same bytes
_DROPPED = ("RECORD", "RECORD.jws", "RECORD.p7s", "INSTALLER")
_INSTALLER = b"conda\n"


def constrained(tables: MappingTables) -> dict[str, str]:
    """GPU architecture virtual package -> its vendor's presence virtual package
    (``__cuda_arch`` -> ``__cuda``, ``__amdgpu_arch`` -> ``__amdgpu``): the virtual packages a
    converted package constrains instead of depending on them. Stock conda has neither
    architecture (a plugin provides ``__cuda_arch``; nothing ``__amdgpu_arch``), so as a
    dependency it makes every GPU build uninstallable there; as a constraint it is satisfied
    where absent and enforced where the GPU is known (rattler, pixi, conda with a plugin), as
    the conda builds a matrix generates state it (``run_constraints``,
    :mod:`variant_bridge.maintainer.outputs`)."""
    return {
        tables.nvidia.arch_package: tables.nvidia.driver_package,
        tables.amd.arch_package: tables.amd.driver_package,
    }


ANY_GPU = "anygpu"
"""The build-string part of a GPU build's copy for clients that cannot see its GPU
(:func:`packagings`): ``rocm6.4_anygpu_3``."""
ANY_GPU_FEATURE = "variant-bridge-anygpu"
"""That copy's track feature: conda and rattler rank a build with one below every build without."""


@value
class Packaging:
    """The requirements of one conda package written for a record, and how it is told apart."""

    depends: tuple[str, ...]
    constrains: tuple[str, ...] = ()
    any_gpu: bool = False
    """The copy for clients that cannot see the GPU (:data:`ANY_GPU`), taken only when asked."""

    def build(self, build: str) -> str:
        """``rocm6.4_3`` -> ``rocm6.4_anygpu_3`` for the copy for any GPU."""
        if not self.any_gpu:
            return build
        head, _, number = build.rpartition("_")
        return f"{head}_{ANY_GPU}_{number}" if head else f"{ANY_GPU}_{build}"

    @property
    def track_features(self) -> tuple[str, ...]:
        return (ANY_GPU_FEATURE,) if self.any_gpu else ()


def packagings(specs: Sequence[str], tables: MappingTables) -> tuple[Packaging, ...]:
    """The conda packages a record with requirements *specs* becomes.

    One package, the GPU architecture in ``constrains``, when a dependency stock conda knows
    still says the GPU is there (``__cuda``: a CUDA build is installed only beside an NVIDIA
    driver). When none does (``__amdgpu``, which stock conda lacks), a constraint alone would put
    a ROCm build above the null build on every machine, so two packages: the record as ``index``
    writes it (the architecture a dependency: chosen where the GPU is known), and a copy with it
    in ``constrains`` and a track feature (:data:`ANY_GPU`), which conda and rattler rank below
    every build without one: taken only when asked for (``pytorch=*=rocm6.4*``)."""
    gpus = constrained(tables)
    name = {s: s.split(None, 1)[0] for s in specs}
    held = [s for s in specs if name[s] in gpus]
    if not held:
        return (Packaging(tuple(specs)),)
    rest = tuple(s for s in specs if name[s] not in gpus)
    present = {name[s] for s in rest}
    seen = all(gpus[name[s]] in CONDA_BUILTIN and gpus[name[s]] in present for s in held)
    if seen:
        return (Packaging(rest, tuple(held)),)
    return (Packaging(tuple(specs)), Packaging(rest, tuple(held), any_gpu=True))


@value
class CondaPackage:
    """What one converted package is."""

    name: str
    version: str
    build: str
    build_number: int
    subdir: str
    depends: tuple[str, ...]
    constrains: tuple[str, ...] = ()
    """Specs that bind only where their package is present (:func:`constrained`)."""
    track_features: tuple[str, ...] = ()

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
        **({"constrains": list(package.constrains)} if package.constrains else {}),
        **({"track_features": " ".join(package.track_features)} if package.track_features else {}),
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
    except UNREADABLE as e:
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
        except (zipfile.BadZipFile, zlib.error, EOFError) as e:
            partial.unlink(missing_ok=True)
            raise SolveError(f"{wheel}: not a readable wheel: {e}") from e
        except OSError as e:
            partial.unlink(missing_ok=True)
            raise SolveError(f"cannot write {target}: {e.strerror or e}") from e
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
    return target, record
