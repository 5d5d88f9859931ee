"""The ``convert`` use case: variant wheels as conda packages in a channel.

Each wheel becomes one package per record ``index`` would write for it (same build string and
build number, so the same priority encoding applies), linked as ``noarch: python``
(:mod:`variant_bridge.solve.convert`); pure wheels go to ``noarch/``, binary ones to their
platform subdir. Packages take their conda names (``torch`` -> ``pytorch``) and *every*
requirement of their wheel that applies on the subdir, as a dependency on a conda name
(:mod:`variant_bridge.solve.conda_dependencies`); what cannot be one is listed per package. Every
wheel is opened and checked (paths, entry points, zip caps: :mod:`variant_bridge.indexes.archive`)
before the first package is written. The channel is then indexed with ``rattler.index``.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from packaging.utils import canonicalize_name

from variant_bridge._values import value
from variant_bridge.errors import SolveError
from variant_bridge.filenames import WheelFilename
from variant_bridge.indexes import Downloads, url_to_path
from variant_bridge.jobs.context import Context
from variant_bridge.jobs.index import Gathered, IndexRequest, gather, records_of, require_wheels
from variant_bridge.mappings import load_tables
from variant_bridge.solve.channel import add_package_records, index_conda_packages
from variant_bridge.solve.conda_dependencies import conda_name
from variant_bridge.solve.convert import (
    CondaPackage,
    check_wheel,
    packagings,
    write_conda_package,
)
from variant_bridge.solve.records import ReleaseRecords

__all__ = ["ConvertReport", "convert_wheels"]


@value
class ConvertReport:
    """The packages written, and what the records of each release could not say.

    :param names: canonical PyPI name -> the conda name its packages took (``torch`` ->
        ``pytorch``), for every project converted.
    :param any_gpu: ``(conda name, build, label)`` of each copy written for clients that cannot see
        the build's GPU (:func:`~variant_bridge.solve.convert.packagings`: stock conda and an
        AMD GPU), installed only when asked for.
    """

    channel: Path
    packages: tuple[Path, ...]
    releases: tuple[ReleaseRecords, ...]
    names: tuple[tuple[str, str], ...] = ()
    any_gpu: tuple[tuple[str, str, str], ...] = ()


def _wheel_files(gathered: list[Gathered], downloads: Downloads) -> dict[str, Path]:
    """Record URL -> the wheel on disk (remote ones downloaded, hash-checked)."""
    found: dict[str, Path] = {}
    for one in gathered:
        for url, candidate in one.candidates:
            found[url] = url_to_path(url) if url.startswith("file:") else downloads.get(candidate)
    return found


def convert_wheels(request: IndexRequest, ctx: Context) -> ConvertReport:
    """Convert the request's wheels (from the context's sources and the files named) into conda
    packages in ``request.channel``, for the context's target platform; remote wheels are
    fetched through its downloads (once: the file hashed is the file converted).

    :raises SolveError: nothing to convert, an unreadable wheel, a requirement conda cannot
        express, rattler cannot index.
    :raises UnsafeArchive: a wheel with a path outside its root or over a zip cap (nothing is
        written then).
    """
    if not ctx.sources and not request.files:
        raise SolveError("nothing to convert: pass wheel files or directories")
    subdir = ctx.target.env.platform
    local = replace(request, copy=False, index_conda=True)
    tables = load_tables()
    written: list[Path] = []
    any_gpu: list[tuple[str, str, str]] = []
    listed: dict[str, dict[str, object]] = {}
    gathered, _ = gather(local, ctx)
    require_wheels(gathered, "converted")
    projects = sorted({one.release.project for one in gathered})
    names = {p: conda_name(p, tables) for p in projects}
    releases = records_of(gathered, local, subdir, tables=tables, conda_names=names)
    wheels = _wheel_files(gathered, ctx.downloads)
    for path in dict.fromkeys(wheels.values()):
        check_wheel(path)  # every wheel, before the first package is written
    for release in releases:
        for record in release.records:
            data = record.record
            url = str(data["url"])
            tags = WheelFilename.parse(record.filename).tags
            pure = all(t.platform == "any" for t in tags)
            for packaging in packagings(data["depends"], tables):
                package = CondaPackage(
                    str(data["name"]), str(data["version"]), packaging.build(str(data["build"])),
                    int(data["build_number"]), "noarch" if pure else subdir, packaging.depends,
                    packaging.constrains, packaging.track_features,
                )  # fmt: skip
                path, entry = write_conda_package(wheels[url], package, request.channel)
                written.append(path)
                listed[f"{package.subdir}/{path.name}"] = entry
                if packaging.any_gpu:
                    any_gpu.append((package.name, package.build, record.label or ""))
    if not written:
        raise SolveError("no wheels found to convert")
    # Listed from what was written: rattler would read each package back whole to index it.
    add_package_records(request.channel, listed)
    index_conda_packages(request.channel, force=False)
    renamed = tuple((p, n) for p, n in names.items() if n != canonicalize_name(p))
    return ConvertReport(request.channel, tuple(written), tuple(releases), renamed, tuple(any_gpu))
