"""The bridged view of an environment: one frozen snapshot that everything downstream reads.

``detect_environment()`` (layer 2) builds it from the live machine, a conda prefix, a pixi.lock or
declared targets; tests build it by hand. Every fact records where it came from (``source``), so
``detect`` can show it. Precedence when facts are merged (semantics.md §2), first wins: explicit
``--target``; ``CONDA_OVERRIDE_*``; ``NV_VARIANT_PROVIDER_FORCE_*``; detection.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import field, replace
from typing import TYPE_CHECKING, ClassVar, Literal

from variant_bridge._values import value

if TYPE_CHECKING:
    from variant_bridge.properties import VariantDescription

__all__ = [
    "CUDA_POLICIES",
    "CondaRecord",
    "CudaPolicy",
    "DeclaredFeature",
    "Environment",
    "PythonDistribution",
    "Source",
    "SourceKind",
    "Toolkit",
    "VirtualPackage",
]

CudaPolicy = Literal["toolkit", "driver"]
CUDA_POLICIES: tuple[CudaPolicy, ...] = ("toolkit", "driver")


class SourceKind(enum.Enum):
    """Where a fact came from; the value is how messages and ``--json`` name it."""

    DETECTED = "detected"
    TARGET = "--target"
    OVERRIDE = "variable"
    """An environment variable (``CONDA_OVERRIDE_*``, ``NV_VARIANT_PROVIDER_FORCE_*``)."""
    PREFIX = "conda-meta"
    LOCKFILE = "pixi.lock"
    PLATFORM_DEFAULT = "platform default"
    FROM_CONDA = "--from-conda"
    """Conda specs given to ``translate --from-conda``."""
    SUPPLIED = "supplied"
    """This machine's fact as a host application supplies it (a conda plugin: conda's own
    virtual packages) instead of variant-bridge's detection."""
    PROVIDER = "provider"
    """An installed variant provider's answer (``variable`` names its plugin)."""


@value
class Source:
    """Where a fact came from: a kind, and for an override the variable that set it.

    ``str(source)`` is how output names it: ``detected``, ``CONDA_OVERRIDE_CUDA``, ``conda-meta``.
    """

    kind: SourceKind
    variable: str | None = None
    """The variable of an override; the host that supplied a supplied fact."""

    DETECTED: ClassVar[Source]
    TARGET: ClassVar[Source]
    PREFIX: ClassVar[Source]
    LOCKFILE: ClassVar[Source]
    PLATFORM_DEFAULT: ClassVar[Source]
    FROM_CONDA: ClassVar[Source]

    @classmethod
    def override(cls, variable: str) -> Source:
        """A fact set by the environment variable *variable* (``CONDA_OVERRIDE_CUDA``)."""
        return cls(SourceKind.OVERRIDE, variable)

    @classmethod
    def supplied(cls, by: str) -> Source:
        """A fact of this machine that the host *by* (``conda``) supplied."""
        return cls(SourceKind.SUPPLIED, by)

    @property
    def declared(self) -> bool:
        """Stated by the user (a variable, ``--target``, ``--from-conda``), not read or measured."""
        return self.kind in _DECLARED

    def __str__(self) -> str:
        return self.variable if self.variable is not None else self.kind.value


_DECLARED = frozenset({SourceKind.OVERRIDE, SourceKind.TARGET, SourceKind.FROM_CONDA})
Source.DETECTED = Source(SourceKind.DETECTED)
Source.TARGET = Source(SourceKind.TARGET)
Source.PREFIX = Source(SourceKind.PREFIX)
Source.LOCKFILE = Source(SourceKind.LOCKFILE)
Source.PLATFORM_DEFAULT = Source(SourceKind.PLATFORM_DEFAULT)
Source.FROM_CONDA = Source(SourceKind.FROM_CONDA)


@value
class VirtualPackage:
    """A conda virtual package (``__cuda=12.8=0``) and where its value came from."""

    name: str
    version: str
    build: str = "0"
    source: Source = Source.DETECTED

    def __str__(self) -> str:
        return f"{self.name}={self.version}={self.build}"


@value
class Toolkit:
    """The solved CUDA toolkit selector: ``cuda-version`` (or ``cudatoolkit`` for CUDA <= 11)."""

    package: str
    version: str
    source: Source

    def __str__(self) -> str:
        return f"{self.package}={self.version}"


@value
class DeclaredFeature:
    """Values of a variant feature that no conda package describes (Intel's ``device_ip``),
    taken as declared or as the installed provider answers them: never translated."""

    namespace: str
    feature: str
    values: tuple[str, ...]
    """Most preferred first."""
    source: Source

    def __str__(self) -> str:
        return f"{self.namespace} :: {self.feature} :: {', '.join(self.values)}"


@value
class CondaRecord:
    """One installed or locked conda package (enough to report, match and export it)."""

    name: str
    version: str
    build: str
    build_number: int = 0
    subdir: str = ""
    channel: str | None = None
    url: str | None = None
    sha256: str | None = None
    md5: str | None = None
    depends: tuple[str, ...] = ()
    constrains: tuple[str, ...] = ()
    requested_specs: tuple[str, ...] = ()

    def __str__(self) -> str:
        return f"{self.name}={self.version}={self.build}"


@value
class PythonDistribution:
    """One installed or locked PyPI distribution; ``variant`` is set when it was a variant wheel."""

    name: str
    version: str
    variant: VariantDescription | None = None
    requires: tuple[str, ...] = ()
    location: str | None = None
    """The ``*.dist-info`` directory, or the locked URL for a pixi.lock entry."""
    installer: str | None = None
    direct_url: str | None = None
    """The PEP 610 ``url`` the wheel was installed from, when recorded."""
    sha256: str | None = None
    unknown_variant_label: str | None = None
    """The label of a variant wheel whose properties are not known here, with ``variant``
    ``None``: a locked wheel on an index (its ``variant.json`` is inside the wheel, and detection
    downloads nothing)."""

    @property
    def variant_label(self) -> str | None:
        """The variant label, whether or not its properties are known; ``None``: not a variant."""
        return self.variant.label if self.variant is not None else self.unknown_variant_label

    def __str__(self) -> str:
        label = self.variant_label
        suffix = f" [{label}]" if label is not None else ""
        return f"{self.name}=={self.version}{suffix}"


@value
class Environment:
    """A frozen snapshot of one target environment as conda/pixi sees it.

    :param platform: the conda subdir, e.g. ``linux-64``.
    :param virtual_packages: the virtual packages for that platform, one per name.
    :param toolkit: the solved ``cuda-version`` (or ``cudatoolkit``), or ``None``.
    :param python: the environment's Python ``major.minor[.micro]``, when known.
    :param origin: what was read, e.g. ``prefix /opt/env``, ``pixi.lock default/linux-64``.
    """

    platform: str
    virtual_packages: tuple[VirtualPackage, ...] = ()
    toolkit: Toolkit | None = None
    conda_packages: tuple[CondaRecord, ...] = ()
    python_packages: tuple[PythonDistribution, ...] = ()
    python: str | None = None
    origin: str = "this machine"
    notes: tuple[str, ...] = field(default=())
    prefix: str | None = None
    """The conda prefix that was read (``--prefix`` or ``$CONDA_PREFIX``), as a path."""
    platform_source: Source = Source.DETECTED
    """Where :attr:`platform` came from (``--target``/``--platform``, conda-meta, pixi.lock, or
    this machine's)."""
    python_source: Source | None = None
    """Where :attr:`python` came from; ``None`` when it is unknown."""
    conda_variants: tuple[PythonDistribution, ...] = ()
    """Variant wheels installed as conda packages (``variant-bridge convert``): conda packages,
    listed for what they are, never exported as wheels."""
    lockfile: str | None = None
    """The pixi.lock that was read, as a path."""
    lock_environment: str | None = None
    """The pixi.lock environment read, as named (``None``: ``default``)."""
    rocm: Toolkit | None = None
    """The ROCm runtime: ``rocm-core`` in the prefix or lock, ``--target rocm_version``, the AMD
    provider's variable, or this machine's ROCm (``/opt/rocm/.info/version``)."""
    gpus: tuple[VirtualPackage, ...] = ()
    """Each GPU of a machine with several, as the GPU virtual package it alone would give
    (``__cuda_arch=8.0`` and ``__cuda_arch=9.0``); the one conda sees is in
    :attr:`virtual_packages`. Empty when one GPU (or none) is known."""
    declared_features: tuple[DeclaredFeature, ...] = ()
    """Features with no conda counterpart, as declared or as their provider answers."""

    def gpus_of(self, name: str) -> tuple[VirtualPackage, ...]:
        """The GPUs known for virtual package *name* (``__cuda_arch``), or ``()``."""
        return tuple(vp for vp in self.gpus if vp.name == name)

    def virtual_package(self, name: str) -> VirtualPackage | None:
        """The virtual package called *name* (``__cuda``), or ``None`` when absent."""
        for vp in self.virtual_packages:
            if vp.name == name:
                return vp
        return None

    @property
    def cuda(self) -> VirtualPackage | None:
        """``__cuda``: the newest CUDA the driver supports."""
        return self.virtual_package("__cuda")

    @property
    def cuda_arch(self) -> VirtualPackage | None:
        """``__cuda_arch``: the lowest compute capability over all GPUs."""
        return self.virtual_package("__cuda_arch")

    @property
    def archspec(self) -> VirtualPackage | None:
        """``__archspec``: build = the archspec microarchitecture name."""
        return self.virtual_package("__archspec")

    @property
    def glibc(self) -> VirtualPackage | None:
        return self.virtual_package("__glibc")

    def conda_package(self, name: str) -> CondaRecord | None:
        for record in self.conda_packages:
            if record.name == name:
                return record
        return None

    def with_virtual_packages(self, packages: Iterable[VirtualPackage]) -> Environment:
        """A copy where *packages* replace same-named ones (and are added otherwise)."""
        new = {vp.name: vp for vp in packages}
        kept = tuple(vp for vp in self.virtual_packages if vp.name not in new)
        return replace(self, virtual_packages=tuple(sorted((*kept, *new.values()), key=_vp_key)))

    def default_policy(self) -> CudaPolicy:
        """``toolkit`` whenever a toolkit is solved, else ``driver`` (semantics.md §3)."""
        return "toolkit" if self.toolkit is not None else "driver"


def _vp_key(vp: VirtualPackage) -> str:
    return vp.name
