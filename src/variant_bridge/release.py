"""One release as each ecosystem ships it: conda builds on one side, wheel variants on the other.

The maintainer commands (``check``, ``matrix``) read both sides into these values and compare
them in the pure core. A :class:`CondaBuild` is one concrete conda variant (what one
``.ci_support`` file, one rendered variant or one built ``.conda`` says); a :class:`WheelVariant`
is one label with its properties, its wheels' tags and, when the wheels' ``Requires-Dist`` were
read, its CUDA toolkit evidence (:mod:`variant_bridge.translate.evidence`).

Which CUDA toolkit a wheel was built with is the shared toolkit rule
(:func:`~variant_bridge.translate.evidence.wheel_toolkit`): the pinned CUDA components when there
are any, else what the label says by its publisher's convention (``cu128``, ``cuda12.8``; ``cu12``
is any 12.x), else the lower bound.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from variant_bridge.cuda_archs import ArchSet
from variant_bridge.filenames import WheelFilename
from variant_bridge.mappings import MappingTables, load_tables
from variant_bridge.platform_tags import conda_platform
from variant_bridge.properties import VariantDescription, VariantFeature
from variant_bridge.translate.evidence import (
    CudaVersion,
    ToolkitBasis,
    ToolkitEvidence,
    WheelToolkit,
    wheel_toolkit,
)

__all__ = [
    "CondaBuild",
    "CondaSide",
    "CudaVersion",
    "ToolkitBasis",
    "WheelSide",
    "WheelToolkit",
    "WheelVariant",
    "parse_cuda",
    "python_key",
]

X86_64 = "x86_64"
"""The CPU namespace whose generation is conda-forge's ``microarch_level``."""


def parse_cuda(text: str) -> CudaVersion | None:
    """``12.8`` -> 12.8, ``12`` -> 12 (a major alone); anything else -> ``None``."""
    match = re.fullmatch(r"([1-9][0-9]{0,2})(?:\.([0-9]{1,3}))?", text.strip())
    if match is None:
        return None
    return CudaVersion(int(match[1]), int(match[2]) if match[2] is not None else None)


def python_key(version: str) -> tuple[int, ...]:
    """Sort key of a Python version as both sides name them: ``3.13`` before ``3.13t`` (the
    free-threaded build) before ``3.14``; ``any`` first."""
    if version == "any":
        return (0,)
    free = version.endswith("t")
    return (*(int(x) for x in version.removesuffix("t").split(".")), int(free))


@dataclass(frozen=True, slots=True)
class CondaBuild:
    """One concrete conda build of the release.

    :param where: the file (and variant) it was read from, for messages.
    :param variant: the variant's keys as read (``cuda_compiler_version: '12.9'``...).
    """

    where: str
    variant: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}), hash=False)
    platform: str = "linux-64"
    cuda: CudaVersion | None = None
    """``cuda_compiler_version``; ``None`` for a CPU build."""
    glibc: tuple[int, int] | None = None
    """``c_stdlib_version`` (Linux)."""
    microarch_level: int | None = None
    python: tuple[str, ...] = ()
    """``3.12``, ... from the ``python`` variant values."""
    archs: ArchSet | None = None
    """The CUDA architectures it compiles for; ``None`` when unknown."""
    rocm: tuple[int, int] | None = None
    """The ROCm release of a ROCm build (``rocm_version``, as ``matrix`` writes it)."""
    gfx: tuple[str, ...] = ()
    """The AMD GPUs a ROCm build runs on (from ``amdgpu_arch_constraint``)."""
    arch_source: str | None = None
    build_number: int | None = None
    build_string: str | None = None
    python_specs: tuple[str, ...] = ()
    """The ``python`` variant values as written (``3.12.* *_cpython``)."""
    family: tuple[tuple[str, str], ...] = ()
    """Variant keys that make it a family of its own on its platform (``arm_variant_type:
    tegra``, ``toolkits.yaml``); ``()`` for the family wheels are built for."""

    @property
    def is_cpu(self) -> bool:
        return self.cuda is None

    @property
    def where_built(self) -> str:
        """``linux-64``, ``linux-aarch64 arm_variant_type=tegra``: its platform and family."""
        return " ".join([self.platform, *(f"{k}={v}" for k, v in self.family)])

    @property
    def name(self) -> str:
        """``CUDA 12.9``, ``CPU``, ``CUDA 12.9 x86-64-v3``, with the platform (and family) when
        not linux-64."""
        text = "CPU" if self.cuda is None else f"CUDA {self.cuda}"
        if self.microarch_level is not None:
            text += f" x86-64-v{self.microarch_level}"
        where = self.where_built
        return text if where == "linux-64" else f"{text} ({where})"


@dataclass(frozen=True, slots=True)
class CondaSide:
    """The conda builds of one release, and where they were read."""

    builds: tuple[CondaBuild, ...]
    sources: tuple[str, ...] = ()
    name: str | None = None
    version: str | None = None


@dataclass(frozen=True, slots=True)
class WheelVariant:
    """One wheel variant of the release.

    :param evidence: its CUDA toolkit evidence; ``None`` when its ``Requires-Dist`` were not
        read (a ``variants.json`` alone), so only its properties and label say anything.
    :param files: its wheels (empty when only the variant metadata was read).
    """

    description: VariantDescription
    evidence: ToolkitEvidence | None = None
    files: tuple[WheelFilename, ...] = ()

    @property
    def label(self) -> str:
        return self.description.label

    @property
    def is_null(self) -> bool:
        return self.description.is_null

    def _values(self, namespace: str, feature: str) -> tuple[str, ...]:
        return self.description.values(VariantFeature(namespace, feature))

    def lower_bound(self, tables: MappingTables | None = None) -> CudaVersion | None:
        """The lowest ``cuda_version_lower_bound`` it declares (values are OR-ed)."""
        nvidia = (tables or load_tables()).nvidia
        names = [f.name for f in nvidia.features if f.rule == "cuda_lower_bound"]
        found = [parse_cuda(v) for n in names for v in self._values(nvidia.namespace, n)]
        known = [v for v in found if v is not None]
        return min(known, key=lambda v: v.key) if known else None

    def archs(self, tables: MappingTables | None = None) -> ArchSet:
        """Its ``sm_arch`` values as targets."""
        nvidia = (tables or load_tables()).nvidia
        names = [f.name for f in nvidia.features if f.rule == "sm_arch"]
        values = [v for n in names for v in self._values(nvidia.namespace, n)]
        return ArchSet.of(values, where=f"{self.label}: sm_arch")

    def uses_cuda(self, tables: MappingTables | None = None) -> bool:
        return (tables or load_tables()).nvidia.namespace in self.description.namespaces

    def x86_64_level(self, tables: MappingTables | None = None) -> int | None:
        """``x86_64 :: level :: v3`` -> 3 (the lowest declared)."""
        table = (tables or load_tables()).cpu(X86_64)
        if table is None:
            return None
        levels = [
            int(v[1:])
            for v in self._values(table.namespace, table.generation_feature)
            if re.fullmatch(r"v[1-9][0-9]?", v)
        ]
        return min(levels) if levels else None

    def claim(self, tables: MappingTables | None = None) -> WheelToolkit | None:
        """The toolkit it is taken to be built with (the shared rule: pins, else the label by
        its publisher's convention, else the lower bound); ``None`` for a variant without
        NVIDIA properties."""
        if not self.uses_cuda(tables):
            return None
        return wheel_toolkit(self.description, self.evidence, tables=tables)

    def platforms(self) -> frozenset[str] | None:
        """The conda subdirs its wheels are for; ``None`` when any platform would do (no wheel
        was read, or a wheel is for any platform)."""
        found: set[str] = set()
        for wheel in self.files:
            for tag in wheel.platform_tag.split("."):
                needs = conda_platform(tag)
                if needs is None:
                    continue
                if not needs.subdirs:  # ``any``
                    return None
                found.update(needs.subdirs)
        return frozenset(found) if self.files else None

    def for_platform(self, platform: str) -> bool:
        """Whether it has a wheel for conda subdir *platform* (yes when its wheels are unknown)."""
        platforms = self.platforms()
        return platforms is None or platform in platforms

    def glibc(self, platform: str) -> tuple[int, int] | None:
        """The lowest glibc its wheels for *platform* need; ``None`` when no wheel says."""
        floors = []
        for wheel in self.files:
            for tag in wheel.platform_tag.split("."):
                needs = conda_platform(tag)
                if needs and needs.libc == "glibc" and needs.version and platform in needs.subdirs:
                    floors.append(needs.version)
        return min(floors) if floors else None

    def python(self, platform: str | None = None) -> frozenset[str] | None:
        """``3.12``, ``3.13t`` (free-threaded), ... its wheels (for *platform*, when given) are
        for (``any`` for ``py3``/``abi3`` wheels); ``None`` with no wheels."""
        if not self.files:
            return None
        found: set[str] = set()
        for wheel in self.files:
            if platform is not None and not _wheel_for(wheel, platform):
                continue
            for tag in wheel.tags:
                match = re.fullmatch(r"cp(?P<major>3)(?P<minor>[0-9]+)", tag.interpreter)
                if match is None or tag.abi == "abi3":
                    found.add("any")
                else:
                    free = "t" if tag.abi == f"{tag.interpreter}t" else ""
                    found.add(f"{match['major']}.{match['minor']}{free}")
        return frozenset(found)


def _wheel_for(wheel: WheelFilename, platform: str) -> bool:
    for tag in wheel.platform_tag.split("."):
        needs = conda_platform(tag)
        if needs is not None and (not needs.subdirs or platform in needs.subdirs):
            return True
    return False


@dataclass(frozen=True, slots=True)
class WheelSide:
    """The wheel variants of one release, and where they were read.

    :param files_known: the wheels themselves (or their filenames) were read, so tags (glibc,
        Python) are known; ``False`` for a ``variants.json`` alone.
    :param unread: wheels whose core metadata was not read (an index offering neither PEP 658
        files nor range requests, and whole downloads not allowed): their variants' toolkits
        come from their properties and labels alone.
    """

    variants: tuple[WheelVariant, ...]
    sources: tuple[str, ...] = ()
    project: str | None = None
    version: str | None = None
    files_known: bool = False
    unread: tuple[str, ...] = ()

    def variant(self, label: str) -> WheelVariant | None:
        return next((v for v in self.variants if v.label == label), None)
