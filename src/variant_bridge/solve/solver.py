"""One py-rattler solve over local channels that hold conda packages and ``v3.whl`` records.

py-rattler 0.28 reads wheel records only through ``solve_with_sparse_repodata`` with
``PackageFormatSelection.PREFER_CONDA_WITH_WHL`` (its gateway solve has no format selection), so
channels are local directories here. Channels keep their order (strict channel priority, as
conda and pixi use): a package found in an earlier channel is taken only from there.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from variant_bridge._values import value
from variant_bridge.environment import VirtualPackage
from variant_bridge.errors import (
    InvalidWheelFilename,
    NotRegularFileError,
    SolveError,
    clip,
    quote,
)
from variant_bridge.filenames import WheelFilename
from variant_bridge.indexes.local import check_regular
from variant_bridge.solve.channel import MAX_REPODATA, REPODATA

__all__ = ["SolvedPackage", "solve_specs"]


@value
class SolvedPackage:
    """One package of a solution: a conda package, or a wheel (``wheel`` set)."""

    name: str
    version: str
    build: str
    build_number: int
    url: str
    channel: str
    depends: tuple[str, ...]
    sha256: str | None
    wheel: WheelFilename | None = None
    record: Any = None
    """The rattler ``RepoDataRecord`` (for ``rattler.install`` and lock files)."""

    @property
    def is_wheel(self) -> bool:
        return self.wheel is not None


def _virtual(packages: Sequence[VirtualPackage]) -> list[Any]:
    from rattler import GenericVirtualPackage, PackageName, Version
    from rattler.package import BuildString

    return [
        GenericVirtualPackage(PackageName(vp.name), Version(vp.version), BuildString(vp.build))
        for vp in packages
    ]


def _wheel_of(url: str) -> WheelFilename | None:
    if not url.endswith(".whl"):
        return None
    try:
        return WheelFilename.parse(url.rpartition("/")[2])
    except InvalidWheelFilename:
        return None


def _solved(record: Any) -> SolvedPackage:
    sha = record.sha256
    url = str(record.url)
    return SolvedPackage(
        name=record.name.normalized,
        version=str(record.version),
        build=str(record.build),
        build_number=record.build_number,
        url=url,
        channel=str(record.channel or ""),
        depends=tuple(record.depends),
        sha256=sha.hex() if isinstance(sha, bytes) else sha,
        wheel=_wheel_of(url),
        record=record,
    )


def _present(repodata: Path) -> bool:
    """Whether a channel's subdir has its ``repodata.json`` (a regular file within
    :data:`MAX_REPODATA`: a FIFO would block rattler's read forever).

    :raises SolveError: it is there but not a regular file, or too large.
    """
    try:
        check_regular(repodata, max_bytes=MAX_REPODATA)
    except FileNotFoundError:
        return False
    except NotRegularFileError as e:
        raise SolveError(str(e)) from e
    except OSError as e:
        raise SolveError(f"{repodata}: {e.strerror or e}") from e
    return True


def solve_specs(
    specs: Sequence[str],
    channels: Sequence[Path],
    *,
    platform: str,
    virtual_packages: Sequence[VirtualPackage],
) -> tuple[SolvedPackage, ...]:
    """Solve *specs* for *platform* over local *channels* (in priority order).

    :raises SolveError: a spec rattler cannot parse, a channel without repodata, or no
        solution (rattler's explanation, on one line).
    """
    import rattler
    from rattler import Channel, PackageFormatSelection, SparseRepoData

    matchspecs = []
    for spec in specs:
        try:
            matchspecs.append(rattler.MatchSpec(spec))
        except Exception as e:  # rattler's InvalidMatchSpecError
            said = " ".join(str(e).split())
            raise SolveError(f"invalid conda spec {quote(spec)}: {clip(said, limit=200)}") from e
    sources: list[Any] = []
    for channel_dir in channels:
        channel = Channel(channel_dir.as_uri())
        found = False
        for subdir in (platform, "noarch"):
            path = channel_dir / subdir / REPODATA
            if _present(path):
                sources.append(SparseRepoData(channel, subdir, path))
                found = True
        if not found:
            raise SolveError(
                f"channel {channel_dir}: no {platform}/{REPODATA} nor noarch/{REPODATA} "
                "(index it first: variant-bridge index ... -o DIR)"
            )
    try:
        records = asyncio.run(
            rattler.solve_with_sparse_repodata(
                matchspecs,
                sources,
                virtual_packages=_virtual(virtual_packages),
                package_format_selection=PackageFormatSelection.PREFER_CONDA_WITH_WHL,
            )
        )
    except Exception as e:  # rattler's SolverError carries the explanation
        text = " ".join(str(e).split())
        raise SolveError(f"no solution for {' '.join(specs)} on {platform}: {text}") from e
    finally:
        for source in sources:
            source.close()
    return tuple(sorted((_solved(r) for r in records), key=lambda p: p.name))
