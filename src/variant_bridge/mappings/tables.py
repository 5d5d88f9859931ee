"""The mapping tables as frozen values: what each YAML file says, with its lookups built once.

Read by :mod:`variant_bridge.mappings._schema` (which checks every key) and consumed by the
translator, platform tags, detection, the uv settings and the provider plugins: the tables are the
one place that names subdirs, architectures, platform-tag aliases, override variables and
namespaces (docs/semantics.md §1-6).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import field
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal

from variant_bridge._patterns import Lazy
from variant_bridge._values import value

if TYPE_CHECKING:
    from packaging.specifiers import SpecifierSet

__all__ = [
    "CPU_TABLE_FILES",
    "TABLE_FILES",
    "AmdFeature",
    "AmdRule",
    "AmdTable",
    "CpuTable",
    "CudaReleases",
    "FamilyKey",
    "IntRange",
    "IntelTable",
    "LabelConvention",
    "MappingTables",
    "NameKind",
    "NameMapping",
    "NameTable",
    "NvccRelease",
    "NvidiaFeature",
    "NvidiaRule",
    "NvidiaTable",
    "OperatingSystem",
    "OverrideVariable",
    "PlatformTable",
    "PlatformTagRule",
    "SubdirInfo",
    "TagAlias",
    "ToolkitTable",
]

TABLE_FILES = (
    "nvidia.yaml",
    "x86_64.yaml",
    "aarch64.yaml",
    "platform.yaml",
    "names.yaml",
    "toolkits.yaml",
    "amd.yaml",
    "intel.yaml",
)
"""The package's YAML files, one per table."""
CPU_TABLE_FILES = ("x86_64.yaml", "aarch64.yaml")

NvidiaRule = Literal["cuda_lower_bound", "cuda_upper_bound", "sm_arch"]
NameKind = Literal["cuda-library", "cuda-meta", "python"]
AmdRule = Literal["gfx_arch", "rocm_version"]

_PLAIN_BUILD_RE = Lazy(r"[A-Za-z0-9_]+")


@value
class IntRange:
    """An inclusive range of integers, e.g. CUDA majors 11..15."""

    low: int
    high: int

    def __contains__(self, number: object) -> bool:
        return isinstance(number, int) and self.low <= number <= self.high

    def __str__(self) -> str:
        return f"{self.low}..{self.high}"


@value
class OverrideVariable:
    """Environment variables that override one virtual package, in both worlds."""

    virtual_package: str
    conda: str
    provider: str | None = None
    """The wheel-variant provider's own variable for the same fact, if it has one."""


@value
class NvidiaFeature:
    """One ``nvidia`` feature: its value rule and reverse spec templates per value kind."""

    name: str
    rule: NvidiaRule
    multi_value: bool
    virtual_package: str
    specs: Mapping[str, tuple[str, ...]] = field(hash=False)
    """Value kind (``version``; ``real`` / ``virtual`` for ``sm_arch``) -> spec templates."""


@value
class NvidiaTable:
    """``nvidia.yaml``."""

    namespace: str
    driver_package: str
    driver_majors: IntRange
    driver_minors: IntRange
    toolkit_packages: tuple[str, ...]
    arch_package: str
    arch_majors: IntRange
    arch_minors: IntRange
    lowest_arch: tuple[int, int]
    overrides: tuple[OverrideVariable, ...]
    features: tuple[NvidiaFeature, ...]
    """In the provider's priority order."""
    _by_name: Mapping[str, NvidiaFeature] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_name = {f.name: f for f in self.features}
        object.__setattr__(self, "_by_name", MappingProxyType(by_name))

    def feature(self, name: str) -> NvidiaFeature | None:
        return self._by_name.get(name)

    def override(self, virtual_package: str) -> OverrideVariable:
        """The override pair of ``__cuda`` or ``__cuda_arch`` (the schema requires both)."""
        return next(o for o in self.overrides if o.virtual_package == virtual_package)


@value
class AmdFeature:
    """One ``amd`` feature: its value rule and reverse spec templates."""

    name: str
    rule: AmdRule
    multi_value: bool
    specs: tuple[str, ...]


@value
class AmdTable:
    """``amd.yaml``: ``__amdgpu``, ``__amdgpu_arch`` and the ROCm runtime."""

    namespace: str
    driver_package: str
    driver_version: str
    """``__amdgpu``'s only version (rattler: ``0``)."""
    arch_package: str
    gfx_prefix: str
    several: str
    """Which GPU ``__amdgpu_arch`` describes when there are several, in words."""
    known_gfx: tuple[str, ...]
    """The provider's gfx_arch vocabulary (``get_all_configs``)."""
    runtime_packages: tuple[str, ...]
    root_variable: str
    default_root: str
    version_file: str
    runtime_versions: tuple[str, ...]
    """The provider's ``rocm_version`` vocabulary, newest first."""
    overrides: tuple[OverrideVariable, ...]
    runtime_override: str
    features: tuple[AmdFeature, ...]
    """In the provider's priority order."""

    def feature(self, name: str) -> AmdFeature | None:
        return next((f for f in self.features if f.name == name), None)

    def override(self, virtual_package: str) -> OverrideVariable:
        """The override pair of ``__amdgpu`` or ``__amdgpu_arch`` (the schema requires both)."""
        return next(o for o in self.overrides if o.virtual_package == virtual_package)


@value
class IntelTable:
    """``intel.yaml``: a namespace with no conda counterpart, taken as declared or as the
    installed provider answers."""

    namespace: str
    feature: str
    multi_value: bool
    target: str
    provider_override: str
    plugin_api: str


@value
class CpuTable:
    """``x86_64.yaml`` / ``aarch64.yaml``: a CPU namespace over archspec's database."""

    namespace: str
    archspec_family: str
    virtual_package: str
    generation_feature: str
    """The ordered feature (``level``, ``version``)."""
    base_value: str
    base_archspec: str
    archspec_template: str
    """Maps any other value to archspec's generic name, e.g. ``x86_64_{value}``."""
    max_value: str
    flag_value: str
    flag_order: tuple[str, ...]
    """The provider's preference order of flag features (ordering policy only)."""
    rattler_spec: str
    conda_spec: str
    conda_quoted_spec: str
    """:attr:`conda_spec` for names that are not plain build strings (``armv8.1a``)."""
    overrides: tuple[OverrideVariable, ...] = ()
    metapackage: str | None = None

    def conda_alternative(self, name: str) -> str:
        """The enumerated spec that accepts exactly microarchitecture *name*."""
        template = self.conda_spec if _PLAIN_BUILD_RE.fullmatch(name) else self.conda_quoted_spec
        return template.format(name=name)

    def archspec_name(self, value: str) -> str:
        """archspec's generic name for a generation value (``v3`` -> ``x86_64_v3``)."""
        if value == self.base_value:
            return self.base_archspec
        return self.archspec_template.format(value=value)

    def value_for(self, archspec_name: str) -> str | None:
        """The generation value for an archspec generic name, or ``None`` if it has none."""
        if archspec_name == self.base_archspec:
            return self.base_value
        prefix, _, suffix = self.archspec_template.partition("{value}")
        if (
            archspec_name.startswith(prefix)
            and archspec_name.endswith(suffix)
            and len(archspec_name) > len(prefix) + len(suffix)
        ):
            from variant_bridge.properties import VALUE_RE  # lazy: detection reads no property

            value = archspec_name[len(prefix) : len(archspec_name) - len(suffix)]
            return value if VALUE_RE.fullmatch(value) else None
        return None


@value
class SubdirInfo:
    """One conda subdir from ``platform.yaml``."""

    subdir: str
    os: str
    system: str
    """What ``platform.system()`` reports there (``Linux``, ``Darwin``, ``Windows``)."""
    machines: tuple[str, ...]
    """What ``platform.machine()`` reports there, lower-cased."""
    arch: str
    """The CPU architecture's name in messages (``x86_64`` for ``win-64`` too)."""
    cpu_family: str | None
    platform_machine: str | None = None
    """PEP 508 ``platform_machine`` there, spelled as the OS reports it (``AMD64`` on
    ``win-64``); ``None``: the first of :attr:`machines`."""

    @property
    def marker_machine(self) -> str:
        return self.platform_machine or self.machines[0]


@value
class OperatingSystem:
    """One OS (a subdir prefix): its name in messages and its version overrides."""

    name: str
    overrides: tuple[OverrideVariable, ...]
    sys_platform: str | None = None
    """PEP 508 ``sys_platform`` (``linux``, ``darwin``, ``win32``); ``None`` when it varies."""
    os_name: str | None = None
    """PEP 508 ``os_name`` (``posix``, ``nt``)."""


@value
class TagAlias:
    """A legacy platform tag name and the PEP 600 tag it means (``manylinux2014``)."""

    name: str
    tag: str
    """The PEP 600 prefix it stands for, e.g. ``manylinux_2_17``."""
    arches: frozenset[str] | None
    """Architectures the legacy name was defined for; ``None``: every one."""


@value
class PlatformTagRule:
    """How one family of wheel platform tags maps to conda (``manylinux_X_Y`` -> ``__glibc``)."""

    name: str
    pattern: str
    os: str | None
    libc: str | None
    virtual_package: str | None
    arches: Mapping[str, tuple[str, ...]] | None = field(hash=False)
    """Tag architecture -> subdirs; ``None``: any subdir (of :attr:`os`, when set)."""

    @property
    def regex(self) -> re.Pattern[str]:
        """:attr:`pattern`, compiled on first use (detection never reads a platform tag)."""
        return _compiled_pattern(self.pattern)


@functools.cache
def _compiled_pattern(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


@value
class PlatformTable:
    """``platform.yaml``."""

    subdirs: Mapping[str, SubdirInfo] = field(hash=False)
    operating_systems: Mapping[str, OperatingSystem] = field(hash=False)
    """OS -> its name and overrides; CEP 30 applies them only to subdirs of that OS."""
    tag_aliases: Mapping[str, TagAlias] = field(hash=False)
    """Legacy tag name (``manylinux2014``) -> what it means."""
    tag_rules: tuple[PlatformTagRule, ...]
    """Tried in order."""
    _hosts: Mapping[tuple[str, str], str] = field(init=False, repr=False, compare=False)
    _tag_arches: Mapping[str, str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        hosts: dict[tuple[str, str], str] = {}
        for info in self.subdirs.values():
            for machine in info.machines:
                hosts.setdefault((info.system, machine), info.subdir)
        # A subdir's tag architecture: the first one a rule of its OS lists it under.
        tag_arches: dict[str, str] = {}
        for rule in self.tag_rules:
            for arch, subdirs in (rule.arches or {}).items():
                for subdir in subdirs:
                    tag_arches.setdefault(subdir, arch)
        object.__setattr__(self, "_hosts", MappingProxyType(hosts))
        object.__setattr__(self, "_tag_arches", MappingProxyType(tag_arches))

    def host_subdir(self, system: str, machine: str) -> str | None:
        """The subdir whose ``system`` and ``machines`` match ``platform.system()/machine()``."""
        return self._hosts.get((system, machine.lower()))

    def tag_arch(self, subdir: str) -> str | None:
        """The architecture as wheel platform tags spell it (``win-64`` -> ``amd64``)."""
        return self._tag_arches.get(subdir)


Release = tuple[int, ...]


@value
class CudaReleases:
    """Which CUDA toolkit (``major.minor``) a CUDA component's version ships with.

    ``names.yaml`` states it per component (semantics.md §8): *same_minor* is the range of
    versions numbered after their CUDA release (``cuda-cudart 12.8.90`` -> CUDA 12.8);
    *releases* lists the others, by version prefix (``libcufft 11.3.3`` -> CUDA 12.8). A version
    neither covers is a gap of the table, never a guess.
    """

    same_minor: str | None
    releases: tuple[tuple[Release, tuple[int, int]], ...]
    source: str
    """Where the rule comes from, in words."""

    def cuda_of(self, release: Release) -> tuple[int, int] | None:
        """The CUDA ``(major, minor)`` of a component version (its release numbers, a prefix
        such as ``(12, 8)`` for a ``==12.8.*`` pin included); ``None`` when the table does not
        know it."""
        best: tuple[Release, tuple[int, int]] | None = None
        for prefix, cuda in self.releases:
            if release[: len(prefix)] == prefix and (best is None or len(prefix) > len(best[0])):
                best = (prefix, cuda)
        if best is not None:
            return best[1]
        if self.same_minor is None or len(release) < 2:
            return None
        if _specifier(self.same_minor).contains(".".join(map(str, release)), prereleases=True):
            return release[0], release[1]
        return None


@functools.cache
def _specifier(text: str) -> SpecifierSet:
    from packaging.specifiers import SpecifierSet  # lazy: packaging costs ~10 ms to import

    return SpecifierSet(text)


@value
class NameMapping:
    """One PyPI distribution and the conda-forge package that provides the same thing."""

    pypi: str
    """Canonical PyPI name (PEP 503)."""
    conda: str
    kind: NameKind
    cuda_major: int | None = None
    """The CUDA major this PyPI name is for (``nvidia-cublas-cu12``); ``None``: any (the real
    variant index publishes unsuffixed ``nvidia-cublas`` for CUDA 12 and 13 alike)."""
    build: str | None = None
    """A build-string glob that selects the matching conda build (``cuda*``)."""
    requires: tuple[str, ...] = ()
    """Extra conda specs the PyPI distribution implies (``cuda-version 12.*``)."""
    also_conda: tuple[str, ...] = ()
    cuda: CudaReleases | None = None
    """How a version of this CUDA component says its CUDA minor; ``None``: it does not (cuDNN,
    NCCL...: then only a ``-cuXX`` name says the major, through :attr:`cuda_major`)."""


@value
class NameTable:
    """``names.yaml`` with lookups in both directions."""

    entries: tuple[NameMapping, ...]
    abi_namespace: str
    abi_spec: str
    _by_pypi: Mapping[str, NameMapping] = field(init=False, repr=False, compare=False)
    _by_conda: Mapping[str, tuple[NameMapping, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_pypi: dict[str, NameMapping] = {}
        by_conda: dict[str, list[NameMapping]] = {}
        for entry in self.entries:
            by_pypi.setdefault(entry.pypi, entry)
            for conda_name in (entry.conda, *entry.also_conda):
                by_conda.setdefault(conda_name, []).append(entry)
        object.__setattr__(self, "_by_pypi", MappingProxyType(by_pypi))
        object.__setattr__(
            self, "_by_conda", MappingProxyType({k: tuple(v) for k, v in by_conda.items()})
        )

    def conda_for_pypi(self, name: str) -> NameMapping | None:
        """The conda package for a PyPI name (any spelling: ``Nvidia_Cublas-CU12`` works)."""
        from packaging.utils import canonicalize_name  # lazy: packaging costs ~10 ms to import

        return self._by_pypi.get(canonicalize_name(name))

    def pypi_for_conda(self, name: str) -> tuple[NameMapping, ...]:
        """The PyPI distributions a conda package provides (several: ``cupy``, ``jaxlib``)."""
        return self._by_conda.get(name, ())


Capability = tuple[int, int]
"""A compute capability ``(major, minor)``: ``(9, 0)``."""


@value
class NvccRelease:
    """What one nvcc release (and the later minors up to the next row) compiles."""

    cuda: tuple[int, int]
    compute: tuple[Capability, ...]
    """Compute capabilities it compiles real code (``sm_XY``) and PTX (``compute_XY``) for."""
    arch_specific: tuple[Capability, ...] = ()
    """Those it also compiles as ``sm_XYa``."""
    family_specific: tuple[Capability, ...] = ()
    """Those it also compiles as ``sm_XYf``."""

    def compiles(self, major: int, minor: int, suffix: str = "") -> bool:
        """Whether nvcc of this release has the target ``{major}{minor}{suffix}``."""
        listed = {"": self.compute, "a": self.arch_specific, "f": self.family_specific}
        return (major, minor) in listed.get(suffix, ())


@value
class LabelConvention:
    """A publisher's way of naming a wheel built with one CUDA toolkit (``cu126``, ``cu12``)."""

    pattern: str
    """A regular expression with the groups ``major`` and, for :attr:`says` ``minor``, ``minor``;
    matched against the whole label up to its first ``_``."""
    says: Literal["minor", "major"]
    example: str
    source: str

    def read(self, label: str) -> tuple[int, int | None] | None:
        """``(12, 6)`` for ``cu126`` (``(12, None)`` for a per-major ``cu12``); ``None`` when the
        label does not follow this convention."""
        match = _compiled_pattern(self.pattern).fullmatch(label.split("_", 1)[0])
        if match is None:
            return None
        minor = match.groupdict().get("minor")
        return int(match["major"]), (int(minor) if minor is not None else None)


@value
class FamilyKey:
    """A conda variant key splitting a platform's builds into families (``arm_variant_type``)."""

    key: str
    wheels: str
    """The value of the family wheels are built for (``sbsa``); other values are families of
    their own."""
    source: str


@value
class ToolkitTable:
    """``toolkits.yaml``: what CUDA toolkits compile and need, and how builds of them are named."""

    nvcc: tuple[NvccRelease, ...]
    """By release, oldest first."""
    glibc: Mapping[int, tuple[int, int]] = field(hash=False)
    """CUDA major -> the oldest glibc a build with it targets on Linux."""
    labels: tuple[LabelConvention, ...]
    families: tuple[FamilyKey, ...]

    def nvcc_for(self, major: int, minor: int) -> NvccRelease | None:
        """The row for toolkit ``major.minor``: the newest of its major not newer than it;
        ``None`` for a release before the major's first row, or a major the table lacks."""
        found = None
        for row in self.nvcc:
            if row.cuda[0] == major and row.cuda <= (major, minor):
                found = row
        return found

    def glibc_floor(self, major: int) -> tuple[int, int] | None:
        return self.glibc.get(major)

    def label_cuda(self, label: str) -> tuple[tuple[int, int | None], LabelConvention] | None:
        """What *label* says of its toolkit by the first convention it follows, or ``None``."""
        for convention in self.labels:
            said = convention.read(label)
            if said is not None:
                return said, convention
        return None

    def family(self, variant: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
        """The family keys of a conda variant whose value is not the wheels' one: ``()`` for
        the platform's main family, ``(("arm_variant_type", "tegra"),)`` for a tegra build."""
        return tuple(
            (f.key, variant[f.key])
            for f in self.families
            if variant.get(f.key, f.wheels) != f.wheels
        )


@value
class MappingTables:
    """All tables, validated."""

    nvidia: NvidiaTable
    cpus: tuple[CpuTable, ...]
    platform: PlatformTable
    names: NameTable
    toolkits: ToolkitTable
    amd: AmdTable
    intel: IntelTable
    namespaces: tuple[str, ...] = field(init=False, compare=False)
    """Every namespace the tables map, in the order supported properties list them (``intel``
    is not among them: it has no conda counterpart)."""
    overrides: tuple[OverrideVariable, ...] = field(init=False, compare=False)
    """Every override variable the tables know, one per conda variable (detection's order)."""
    _cpu_by_namespace: Mapping[str, CpuTable] = field(init=False, repr=False, compare=False)
    _cpu_by_package: Mapping[str, CpuTable] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        namespaces = (self.nvidia.namespace, self.amd.namespace, *(t.namespace for t in self.cpus))
        object.__setattr__(self, "namespaces", (*namespaces, self.names.abi_namespace))
        seen: dict[str, OverrideVariable] = {}
        groups = [self.nvidia.overrides, self.amd.overrides, *(t.overrides for t in self.cpus)]
        groups += [os.overrides for os in self.platform.operating_systems.values()]
        for group in groups:
            for o in group:
                seen.setdefault(o.conda, o)
        object.__setattr__(self, "overrides", tuple(seen.values()))
        by_namespace = {t.namespace: t for t in self.cpus}
        by_package = {t.virtual_package: t for t in reversed(self.cpus)}
        object.__setattr__(self, "_cpu_by_namespace", MappingProxyType(by_namespace))
        object.__setattr__(self, "_cpu_by_package", MappingProxyType(by_package))

    def cpu(self, namespace: str) -> CpuTable | None:
        """The CPU table of *namespace* (``x86_64``), or ``None``."""
        return self._cpu_by_namespace.get(namespace)

    def cpu_for_package(self, virtual_package: str) -> CpuTable | None:
        """A CPU table whose facts come from *virtual_package* (``__archspec``), or ``None``."""
        return self._cpu_by_package.get(virtual_package)
