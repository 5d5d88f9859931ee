"""The ``check`` use case: read both sides of one release, compare them (read-only).

Inputs are checked once, here (:meth:`CheckRequest.sides`); rattler work (rendering a recipe,
reading a ``variants.yaml`` or built packages) runs in a child process (see
:mod:`variant_bridge.maintainer._isolated`); the comparison is the pure core's
(:func:`variant_bridge.release_check.check_release`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from packaging.version import Version

from variant_bridge.cuda_archs import ArchLists
from variant_bridge.errors import ReleaseInputError
from variant_bridge.indexes import Downloads
from variant_bridge.maintainer import conda_inputs
from variant_bridge.maintainer.conda_inputs import one_package
from variant_bridge.maintainer.conda_side import conda_builds
from variant_bridge.maintainer.wheel_side import WheelTarget, with_tags
from variant_bridge.maintainer.wheels import read_wheel_side
from variant_bridge.release import CondaSide, WheelSide, WheelVariant
from variant_bridge.release_check import CheckReport, check_release

__all__ = ["CheckRequest", "read_conda_side", "run_check"]


@dataclass(frozen=True, slots=True)
class CheckRequest:
    """What ``check`` compares.

    :param conda: ``.ci_support`` files or folders, a ``recipe.yaml``, a ``variants.yaml``,
        built packages or folders of them (a channel).
    :param variants: variant files for a recipe (default: the ``variants.yaml`` beside it).
    :param wheels: a wheels folder, a ``*-variants.json``, a declaration (TOML) or an index URL.
    :param arch_lists: ``--arch-list`` values (``[PLATFORM,KEY=VALUE:][CUDA=]LIST``).
    :param wheel_tags: tags the wheels are published with, when only their metadata is read.
    :param platforms: compare only the builds and wheels of these conda platforms; recipes and
        variant configurations are evaluated for each (none given: every platform the rendered
        files and packages name; recipes for linux-64).
    :param download: read a wheel's metadata by downloading it whole where the index offers
        neither PEP 658 files nor range requests (else it is named, not opened).
    """

    conda: tuple[Path, ...]
    wheels: str
    variants: tuple[Path, ...] = ()
    arch_lists: tuple[str, ...] = ()
    wheel_tags: tuple[str, ...] = ()
    project: str | None = None
    conda_name: str | None = None
    version: str | None = None
    platforms: tuple[str, ...] = ()
    download: bool = False

    @property
    def render_platforms(self) -> tuple[str, ...]:
        return self.platforms or (DEFAULT_PLATFORM,)


DEFAULT_PLATFORM = "linux-64"


def read_conda_side(request: CheckRequest, *, project: str | None = None) -> CondaSide:
    """:raises ReleaseInputError, InvalidArchList: an input that cannot be read."""
    if not request.conda:
        raise ReleaseInputError("no conda side given: pass --conda PATH")
    arch_lists = ArchLists.parse(request.arch_lists)
    raws = conda_inputs.read_raw_builds(request.conda, request.variants, request.render_platforms)
    raws = one_package(raws, request.conda_name, project)
    builds = conda_builds(raws, arch_lists=arch_lists, platform=DEFAULT_PLATFORM)
    if not builds:
        raise ReleaseInputError("the conda side has no builds")
    if request.platforms:
        found = sorted({b.platform for b in builds})
        builds = tuple(b for b in builds if b.platform in request.platforms)
        if not builds:
            raise ReleaseInputError(
                f"no conda build for {', '.join(request.platforms)} (the conda side builds for "
                f"{', '.join(found)})"
            )
    versions = sorted({r.version for r in raws if r.version})
    if len(versions) > 1:
        raise ReleaseInputError(
            f"conda packages of different versions ({', '.join(versions)}): check one release"
        )
    names = sorted({r.name for r in raws if r.name})
    return CondaSide(
        builds,
        tuple(str(p) for p in request.conda),
        names[0] if names else None,
        versions[0] if versions else None,
    )


def _same_version(conda: CondaSide, wheels: WheelSide) -> CondaSide:
    """Versions that PEP 440 says are equal compare equal (``2.10`` and ``2.10.0``)."""
    if conda.version is None or wheels.version is None:
        return conda
    try:
        if Version(conda.version) == Version(wheels.version):
            return CondaSide(conda.builds, conda.sources, conda.name, wheels.version)
    except ValueError:  # InvalidVersion, or a number past int()'s 4300 digits
        pass
    return conda


def _on_platforms(side: WheelSide, platforms: tuple[str, ...]) -> WheelSide:
    """*side* with only the wheels for *platforms* (variants without one left out); a side whose
    tags are unknown is kept whole."""
    if not platforms or not side.files_known:
        return side
    variants = []
    for variant in side.variants:
        files = tuple(
            f for f in variant.files
            if any(WheelVariant(variant.description, None, (f,)).for_platform(p) for p in platforms)
        )  # fmt: skip
        if files:
            variants.append(WheelVariant(variant.description, variant.evidence, files))
    return replace(side, variants=tuple(variants))


def run_check(request: CheckRequest, downloads: Downloads) -> CheckReport:
    """Read both sides and compare them; a wheels folder's or index URL's files through the
    command's *downloads* (cache, ``--verbose``, deadlines: ``open_downloads``'s).

    :raises ReleaseInputError, InvalidArchList, InvalidMetadata, IndexReadError: bad input.
    """
    target = WheelTarget(platform=request.render_platforms[0])
    wheels = read_wheel_side(
        request.wheels, project=request.project, version=request.version, target=target,
        download=request.download, downloads=downloads,
    )  # fmt: skip
    wheels = _on_platforms(with_tags(wheels, request.wheel_tags), request.platforms)
    conda = read_conda_side(request, project=wheels.project)
    return check_release(_same_version(conda, wheels), wheels)
