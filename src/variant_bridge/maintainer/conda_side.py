"""The conda side of a release, from whatever described it, as :class:`CondaBuild` values.

Readers (rendered configurations, a rendered recipe, built packages) produce :class:`RawBuild`
records: the variant's keys as written, the build script's environment and what a build knows
(number, string, name, version). :func:`conda_builds` reads them the same way whatever their
origin: ``cuda_compiler_version`` (``None`` is a CPU build), ``c_stdlib_version`` (the glibc floor
on Linux), ``microarch_level``, ``python``, and the CUDA architectures: ``--arch-list`` first,
else the first of :data:`ARCH_KEYS` found in the variant or the script environment.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType

from variant_bridge.build_matrix import AMDGPU_CONSTRAINT_KEY, ROCM_KEY, parse_rocm
from variant_bridge.cuda_archs import ArchLists, ArchSet, parse_arch_list
from variant_bridge.errors import ReleaseInputError, quote
from variant_bridge.mappings import load_tables
from variant_bridge.release import CondaBuild, CudaVersion, parse_cuda

__all__ = ["ARCH_KEYS", "RawBuild", "conda_builds", "python_version"]

ARCH_KEYS = (
    "cuda_archs",
    "CUDAARCHS",
    "CMAKE_CUDA_ARCHITECTURES",
    "TORCH_CUDA_ARCH_LIST",
)
"""Where a recipe states its CUDA architectures: a variant key (what ``variant-bridge matrix``
writes), or the build script's environment (CMake's and PyTorch's variables)."""

CUDA_KEY = "cuda_compiler_version"
GLIBC_KEY = "c_stdlib_version"
LEVEL_KEY = "microarch_level"
PYTHON_KEY = "python"
_NO_CUDA = frozenset({"none", ""})
_PYTHON = re.compile(r"(?P<version>3\.[0-9]{1,2})(?:\.\*|\.[0-9]+)?(?:\s+(?P<build>\S+)(?:\s.*)?)?")
_FREE_THREADED = re.compile(r"\*?_cp3[0-9]{1,2}t")
"""conda-forge's free-threaded Python builds: ``python 3.13.* *_cp313t``."""


@dataclass(frozen=True, slots=True)
class RawBuild:
    """One concrete conda variant as a reader found it."""

    where: str
    variant: Mapping[str, str]
    env: Mapping[str, str] = field(default_factory=dict)
    """The build script's environment (``build.script.env``, staging caches included)."""
    platform: str | None = None
    build_number: int | None = None
    build_string: str | None = None
    name: str | None = None
    version: str | None = None


def python_version(value: str, where: str) -> str:
    """``3.12.* *_cpython`` / ``3.12`` -> ``3.12``; ``3.13.* *_cp313t`` -> ``3.13t`` (the
    free-threaded build, a Python of its own).

    :raises ReleaseInputError: no Python version.
    """
    match = _PYTHON.fullmatch(value.strip())
    if match is None:
        raise ReleaseInputError(f"{where}: python {quote(value)} is no Python version like 3.12")
    free = match["build"] is not None and _FREE_THREADED.fullmatch(match["build"]) is not None
    return match["version"] + ("t" if free else "")


def _cuda(variant: Mapping[str, str], where: str) -> CudaVersion | None:
    text = variant.get(CUDA_KEY, "None").strip()
    if text.lower() in _NO_CUDA:
        return None
    version = parse_cuda(text)
    if version is None or version.minor is None:
        raise ReleaseInputError(
            f"{where}: {CUDA_KEY} {quote(text)} is no CUDA version like '12.9' (or None)"
        )
    return version


def _glibc(variant: Mapping[str, str], platform: str, where: str) -> tuple[int, int] | None:
    text = variant.get(GLIBC_KEY)
    if text is None or not platform.startswith("linux"):
        return None
    match = re.fullmatch(r"([0-9]{1,4})\.([0-9]{1,4})", text.strip(), re.ASCII)  # int()-able
    if match is None:
        raise ReleaseInputError(f"{where}: {GLIBC_KEY} {quote(text)} is no glibc version like 2.17")
    return int(match[1]), int(match[2])


def _level(variant: Mapping[str, str], where: str) -> int | None:
    text = variant.get(LEVEL_KEY)
    if text is None:
        return None
    if not re.fullmatch(r"[1-4]", text.strip()):
        raise ReleaseInputError(f"{where}: {LEVEL_KEY} {quote(text)} is no x86-64 level 1-4")
    return int(text)


def _rocm(variant: Mapping[str, str], where: str) -> tuple[tuple[int, int] | None, tuple[str, ...]]:
    """A ROCm build's release and GPUs, as ``matrix`` writes them: ``rocm_version`` (``None``
    for the others) and ``amdgpu_arch_constraint`` (``==9.0.10|==9.4.2``, as gfx names)."""
    from variant_bridge.gfx_archs import gfx_name, parse_isa

    text = variant.get(ROCM_KEY, "None").strip()
    if text.lower() in _NO_CUDA:
        return None, ()
    rocm = parse_rocm(text, where, ROCM_KEY)
    names = []
    constraint = variant.get(AMDGPU_CONSTRAINT_KEY, "").strip()
    for part in constraint.split("|") if constraint else ():
        isa = parse_isa(part.strip().removeprefix("=="))
        name = gfx_name(isa, load_tables().amd.gfx_prefix) if isa is not None else None
        if name is None:
            raise ReleaseInputError(
                f"{where}: {AMDGPU_CONSTRAINT_KEY} {quote(constraint)}: {quote(part)} is no "
                "AMD GPU ISA like ==9.4.2"
            )
        names.append(name)
    return rocm, tuple(names)


def _archs(
    raw: RawBuild, cuda: CudaVersion | None, arch_lists: ArchLists, platform: str
) -> tuple[ArchSet | None, str | None]:
    if cuda is None:
        return None, None
    given = arch_lists.find(str(cuda), platform=platform, variant=raw.variant)
    if given is not None:
        key, archs = given
        return archs, f"--arch-list {key}".rstrip() if key else "--arch-list"
    for source in (raw.variant, raw.env):
        for key in ARCH_KEYS:
            text = source.get(key)
            if text and text.strip():
                return parse_arch_list(text, where=f"{raw.where}: {key}"), key
    return None, None


def _build(raw: RawBuild, arch_lists: ArchLists, platform: str) -> CondaBuild:
    # rattler-build records the virtual packages a recipe names (``__cuda: __cuda``): not keys
    variant = {k: v for k, v in raw.variant.items() if not k.startswith("__")}
    platform = variant.get("target_platform") or raw.platform or platform
    cuda = _cuda(variant, raw.where)
    archs, source = _archs(raw, cuda, arch_lists, platform)
    rocm, gfx = _rocm(variant, raw.where)
    python = variant.get(PYTHON_KEY)
    return CondaBuild(
        where=raw.where,
        variant=MappingProxyType(variant),
        platform=platform,
        cuda=cuda,
        glibc=_glibc(variant, platform, raw.where),
        microarch_level=_level(variant, raw.where),
        python=(python_version(python, raw.where),) if python else (),
        archs=archs,
        rocm=rocm,
        gfx=gfx,
        arch_source=source,
        build_number=raw.build_number,
        build_string=raw.build_string,
        python_specs=(python,) if python else (),
        family=load_tables().toolkits.family(variant),
    )


def _merge_python(builds: Iterable[CondaBuild]) -> list[CondaBuild]:
    """Builds that differ only by Python become one build listing its Pythons."""
    merged: dict[tuple[object, ...], CondaBuild] = {}
    for build in builds:
        rest = tuple(sorted((k, v) for k, v in build.variant.items() if k != PYTHON_KEY))
        key = (build.platform, rest, build.build_number, build.archs)
        known = merged.get(key)
        if known is None:
            merged[key] = build
            continue
        merged[key] = replace(
            known,
            python=tuple(dict.fromkeys(known.python + build.python)),
            python_specs=tuple(dict.fromkeys(known.python_specs + build.python_specs)),
        )
    return list(merged.values())


def conda_builds(
    raws: Sequence[RawBuild],
    *,
    arch_lists: ArchLists | None = None,
    platform: str = "linux-64",
) -> tuple[CondaBuild, ...]:
    """Each raw variant read; builds differing only by Python merged.

    :raises ReleaseInputError: a key of the wrong shape (naming the file and key).
    :raises InvalidArchList: an architecture list no spelling reads.
    """
    lists = arch_lists if arch_lists is not None else ArchLists()
    return tuple(_merge_python(_build(raw, lists, platform) for raw in raws))
