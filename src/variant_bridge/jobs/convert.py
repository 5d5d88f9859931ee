"""The ``convert`` use case: variant wheels as conda packages in a channel.

Each wheel becomes one package per record ``index`` would write for it (same ``depends``, build
string and build number, so the same priority encoding applies), linked as ``noarch: python``
(:mod:`variant_bridge.solve.convert`); pure wheels go to ``noarch/``, binary ones to their
platform subdir. The channel is then indexed with ``rattler.index``.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from variant_bridge._values import value
from variant_bridge.errors import SolveError
from variant_bridge.filenames import WheelFilename
from variant_bridge.indexes import url_to_path
from variant_bridge.jobs.context import Context
from variant_bridge.jobs.index import IndexRequest, gather, records_of, require_wheels
from variant_bridge.solve.channel import index_conda_packages
from variant_bridge.solve.convert import CondaPackage, write_conda_package
from variant_bridge.solve.records import ReleaseRecords

__all__ = ["ConvertReport", "convert_wheels"]


@value
class ConvertReport:
    """The packages written, and what the records of each release could not say."""

    channel: Path
    packages: tuple[Path, ...]
    releases: tuple[ReleaseRecords, ...]


def convert_wheels(request: IndexRequest, ctx: Context) -> ConvertReport:
    """Convert the request's wheels (from the context's sources and the files named) into conda
    packages in ``request.channel``, for the context's target platform; remote wheels are
    fetched through its downloads (once: the file hashed is the file converted).

    :raises SolveError: nothing to convert, an unreadable wheel, rattler cannot index.
    """
    if not ctx.sources and not request.files:
        raise SolveError("nothing to convert: pass wheel files or directories")
    subdir = ctx.target.env.platform
    local = replace(request, copy=False, index_conda=True)
    written: list[Path] = []
    gathered, _ = gather(local, ctx)
    require_wheels(gathered, "converted")
    releases = records_of(gathered, local, subdir)
    candidates = {url: c for one in gathered for url, c in one.candidates}
    for release in releases:
        for record in release.records:
            data = record.record
            url = str(data["url"])
            tags = WheelFilename.parse(record.filename).tags
            pure = all(t.platform == "any" for t in tags)
            package = CondaPackage(
                str(data["name"]), str(data["version"]), str(data["build"]),
                int(data["build_number"]), "noarch" if pure else subdir,
                tuple(data["depends"]),
            )  # fmt: skip
            local_file = url.startswith("file:")
            path = url_to_path(url) if local_file else ctx.downloads.get(candidates[url])
            written.append(write_conda_package(path, package, request.channel))
    if not written:
        raise SolveError("no wheels found to convert")
    index_conda_packages(request.channel)
    return ConvertReport(request.channel, tuple(written), tuple(releases))
