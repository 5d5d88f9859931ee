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
"""

from __future__ import annotations

import configparser
import hashlib
import io
import json
import tarfile
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from variant_bridge._values import value
from variant_bridge.errors import SolveError

__all__ = ["CondaPackage", "entry_points", "write_conda_package"]

_MTIME = 1_700_000_000  # fixed: the same wheel gives the same bytes
_DROPPED = ("RECORD", "RECORD.jws", "RECORD.p7s", "INSTALLER")


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


def entry_points(text: str) -> list[str]:
    """``console_scripts`` and ``gui_scripts`` of an ``entry_points.txt`` as conda's
    ``name = module:function`` lines."""
    parser = configparser.ConfigParser(delimiters=("=",), interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(text)
    found = []
    for section in ("console_scripts", "gui_scripts"):
        if parser.has_section(section):
            found += [f"{k.strip()} = {v.strip()}" for k, v in parser.items(section)]
    return found


def _destination(member: str, project: str, data_dir: str) -> str | None:
    """Where one wheel member goes in the package (``None``: left out)."""
    if member.endswith("/"):
        return None
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


def _files(wheel: Path, project: str) -> tuple[dict[str, bytes], list[str]]:
    """Package paths -> content, and the wheel's entry points."""
    try:
        with zipfile.ZipFile(wheel) as archive:
            names = archive.namelist()
            dist_info = next(
                (n.split("/")[0] for n in names if n.split("/")[0].endswith(".dist-info")), None
            )
            if dist_info is None:
                raise SolveError(f"{wheel}: no .dist-info directory (not a wheel)")
            data_dir = dist_info.removesuffix(".dist-info") + ".data"
            files: dict[str, bytes] = {}
            for name in names:
                target = _destination(name, project, data_dir)
                if target is not None:
                    files[target] = archive.read(name)
    except (OSError, zipfile.BadZipFile) as e:
        raise SolveError(f"{wheel}: not a readable wheel: {e}") from e
    files[f"site-packages/{dist_info}/INSTALLER"] = b"conda\n"
    text = files.get(f"site-packages/{dist_info}/entry_points.txt", b"").decode("utf-8", "replace")
    try:
        scripts = entry_points(text) if text else []
    except configparser.Error as e:
        raise SolveError(f"{wheel}: unreadable entry_points.txt: {e}") from e
    return files, scripts


def _info(
    package: CondaPackage, files: Mapping[str, bytes], scripts: Sequence[str]
) -> dict[str, bytes]:
    index: dict[str, Any] = {
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
    paths = [
        {
            "_path": path,
            "path_type": "hardlink",
            "sha256": hashlib.sha256(content).hexdigest(),
            "size_in_bytes": len(content),
        }
        for path, content in sorted(files.items())
    ]
    link = {
        "noarch": {"type": "python", "entry_points": list(scripts)},
        "package_metadata_version": 1,
    }
    return {
        "info/index.json": json.dumps(index, indent=1, sort_keys=True).encode(),
        "info/paths.json": json.dumps({"paths": paths, "paths_version": 1}, indent=1).encode(),
        "info/files": ("\n".join(sorted(files)) + "\n").encode(),
        "info/link.json": json.dumps(link, indent=1).encode(),
    }


def write_conda_package(wheel: Path, package: CondaPackage, channel: Path) -> Path:
    """Write *wheel* as *package* into ``channel/<subdir>/`` (whole or not at all).

    :raises SolveError: the wheel cannot be read.
    """
    files, scripts = _files(wheel, package.name)
    members = {**_info(package, files, scripts), **files}
    target = channel / package.subdir / package.filename
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.partial")
    try:
        with tarfile.open(partial, "w:bz2") as archive:
            for path, content in members.items():
                info = tarfile.TarInfo(path)
                info.size = len(content)
                info.mtime = _MTIME
                info.mode = 0o755 if path.startswith("python-scripts/") else 0o644
                archive.addfile(info, io.BytesIO(content))
        partial.replace(target)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return target
