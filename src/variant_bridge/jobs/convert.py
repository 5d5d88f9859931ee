"""The ``convert`` use case: variant wheels as conda packages in a channel.

Each wheel becomes one package per record ``index`` would write for it (same ``depends``, build
string and build number, so the same priority encoding applies), linked as ``noarch: python``
(:mod:`variant_bridge.solve.convert`); pure wheels go to ``noarch/``, binary ones to their
platform subdir. The channel is then indexed with ``rattler.index``.
"""

from __future__ import annotations

from pathlib import Path

from variant_bridge._values import value
from variant_bridge.errors import SolveError
from variant_bridge.filenames import WheelFilename
from variant_bridge.indexes import Downloads, url_to_path
from variant_bridge.indexes.transport import Transport
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


def convert_wheels(request: IndexRequest) -> ConvertReport:
    """Convert the request's wheels into conda packages in ``request.channel``.

    :raises SolveError: nothing to convert, an unreadable wheel, rattler cannot index.
    """
    if not request.sources and not request.files:
        raise SolveError("nothing to convert: pass wheel files or directories")
    local = IndexRequest(
        request.channel, request.subdir, request.sources, request.files, request.projects,
        request.encoding, request.form, copy=False, index_conda=True,
    )  # fmt: skip
    written: list[Path] = []
    with Downloads.temporary(transport=Transport()) as downloads:
        gathered, _ = gather(local, downloads)
        require_wheels(gathered, "converted")
        releases = records_of(gathered, local)
        candidates = {url: c for one in gathered for url, c in one.candidates}
        for release in releases:
            for record in release.records:
                data = record.record
                url = str(data["url"])
                tags = WheelFilename.parse(record.filename).tags
                pure = all(t.platform == "any" for t in tags)
                package = CondaPackage(
                    str(data["name"]), str(data["version"]), str(data["build"]),
                    int(data["build_number"]), "noarch" if pure else request.subdir,
                    tuple(data["depends"]),
                )  # fmt: skip
                local_file = url.startswith("file:")
                path = url_to_path(url) if local_file else downloads.get(candidates[url])
                written.append(write_conda_package(path, package, request.channel))
    if not written:
        raise SolveError("no wheels found to convert")
    index_conda_packages(request.channel)
    return ConvertReport(request.channel, tuple(written), tuple(releases))
