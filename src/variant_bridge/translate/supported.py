"""Ordered supported properties: what a target environment accepts, most preferred first.

This is the input of PEP 825 ranking and the output of provider plugins' ``get_supported_configs``:
namespaces in priority order, each with features in priority order, each with values most
preferred first. A namespace can also be listed as *unsupported* with the reason why. The forward
translation also records what it derived the values from (:class:`Bound` per nvidia feature, the
microarchitecture of a CPU namespace, the installed distributions of ``abi_dependency``), so that
:func:`~variant_bridge.translate.explain_unsupported` words a rejection without recomputing
(semantics.md §3-5).
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable, Mapping
from dataclasses import field
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal

from variant_bridge._values import value
from variant_bridge.environment import CudaPolicy, Toolkit, VirtualPackage

if TYPE_CHECKING:  # properties (~2.5 ms of classes) load only when a property is handled
    from variant_bridge.properties import VariantFeature, VariantProperty

__all__ = [
    "AbiBasis",
    "AmdBasis",
    "Basis",
    "Bound",
    "CpuBasis",
    "EveryGpu",
    "Limit",
    "NvidiaBasis",
    "NvidiaValue",
    "SupportedFeature",
    "SupportedProperties",
]


@value
class SupportedFeature:
    """One feature with its supported values, most preferred first."""

    namespace: str
    feature: str
    values: tuple[str, ...]
    source: str = ""
    """What the values were derived from, e.g. ``__cuda=12.9 (CONDA_OVERRIDE_CUDA)``."""

    @property
    def key(self) -> VariantFeature:
        from variant_bridge.properties import VariantFeature

        return VariantFeature(self.namespace, self.feature)


@value
class NvidiaValue:
    """An ``nvidia`` property value, read: ``12.8`` -> (version, 12, 8); ``90_real`` -> (real,
    9, 0)."""

    kind: Literal["version", "real", "virtual"]
    major: int
    minor: int

    @property
    def version(self) -> tuple[int, int]:
        return (self.major, self.minor)


class Limit(enum.Enum):
    """What one :class:`Bound` compares a value with."""

    DRIVER_AT_LEAST = "the driver runs at least the value"  # lower bounds: value <= __cuda
    TOOLKIT_MAJOR = "the toolkit's CUDA major"  # lower bounds, toolkit policy
    TOOLKIT_AT_LEAST = "the toolkit is at least the value"  # lower bounds, toolkit policy
    DRIVER_BELOW = "the driver is below the value"  # upper bounds: value > __cuda
    TOOLKIT_BELOW = "the toolkit is below the value"  # upper bounds, toolkit policy
    GPU_AT_LEAST = "the GPU is at least the value"  # sm_arch: value <= __cuda_arch
    GPU_GENERATION = "SASS of the GPU's generation"  # sm_arch real: the GPU's major
    GPU_PTX = "PTX of the GPU's generation"  # sm_arch virtual: exactly {major}0_virtual
    NO_GPU = "no __cuda_arch"
    GPU_UNREADABLE = "__cuda_arch is not a compute capability"
    GPU_TOO_OLD = "__cuda_arch is below the lowest the provider ranks"


_ADMITS: Mapping[Limit, Callable[[NvidiaValue, tuple[int, int]], bool]] = MappingProxyType(
    {
        Limit.DRIVER_AT_LEAST: lambda v, limit: v.version <= limit,
        Limit.TOOLKIT_MAJOR: lambda v, limit: v.major == limit[0],
        Limit.TOOLKIT_AT_LEAST: lambda v, limit: v.version <= limit,
        Limit.DRIVER_BELOW: lambda v, limit: v.version > limit,
        Limit.TOOLKIT_BELOW: lambda v, limit: v.version > limit,
        Limit.GPU_AT_LEAST: lambda v, limit: v.version <= limit,
        Limit.GPU_GENERATION: lambda v, limit: v.kind != "real" or v.major == limit[0],
        Limit.GPU_PTX: lambda v, limit: v.kind != "virtual" or v.version == (limit[0], 0),
        Limit.NO_GPU: lambda v, limit: False,
        Limit.GPU_UNREADABLE: lambda v, limit: False,
        Limit.GPU_TOO_OLD: lambda v, limit: False,
    }
)


@value
class Bound:
    """One rule the values of an nvidia feature had to meet, and the fact it came from.

    The forward translation lists the values every bound admits; an explanation names the first
    bound a value fails (semantics.md §3).
    """

    limit: Limit
    version: tuple[int, int] = (0, 0)
    """The fact's ``major.minor`` (the lowest ranked GPU for :attr:`Limit.GPU_TOO_OLD`)."""
    fact: VirtualPackage | Toolkit | None = None

    def admits(self, value: NvidiaValue) -> bool:
        return _ADMITS[self.limit](value, self.version)


@value
class NvidiaBasis:
    """The bounds of each nvidia feature (also of a feature left with no value)."""

    bounds: Mapping[str, tuple[Bound, ...]] = field(hash=False)


@value
class CpuBasis:
    """The ``__archspec`` a CPU namespace's values come from."""

    microarchitecture: VirtualPackage


@value
class AbiBasis:
    """``abi_dependency`` feature -> what provides it (``torch 2.9.1 (PyPI)``)."""

    installed: Mapping[str, str] = field(hash=False)


@value
class AmdBasis:
    """What the ``amd`` values came from: ``__amdgpu_arch`` (``None``: absent) and the ROCm
    runtime (``None``: none known, so every version the provider knows was offered)."""

    arch: VirtualPackage | None
    gfx: tuple[str, ...]
    """The supported gfx names (several when several GPUs are declared)."""
    rocm: Toolkit | None


@value
class EveryGpu:
    """A multi-value feature that must have code for EACH of several GPUs
    (``--target cuda_arch=8.0,9.0``): a variant that lists the feature is compatible only when,
    for every GPU, one of its values is among that GPU's values (docs/clusters.md)."""

    namespace: str
    feature: str
    gpus: tuple[tuple[str, tuple[str, ...]], ...]
    """``(GPU in words, its supported values)`` per GPU, e.g. ``("__cuda_arch=9.0", (...))``."""
    declared: str
    """How the GPUs were declared, for messages (``--target cuda_arch=8.0,9.0``)."""

    def missing(self, values: Iterable[str]) -> tuple[str, ...]:
        """The GPUs none of *values* runs on."""
        given = set(values)
        return tuple(gpu for gpu, runs in self.gpus if given.isdisjoint(runs))


Basis = NvidiaBasis | CpuBasis | AbiBasis | AmdBasis

_NO_BASES: Mapping[str, Basis] = MappingProxyType({})


@value
class SupportedProperties:
    """Supported features in priority order, plus namespaces known to be unsupported."""

    features: tuple[SupportedFeature, ...] = ()
    unsupported: tuple[tuple[str, str], ...] = ()
    """``(namespace, reason)`` for namespaces the environment cannot satisfy at all."""
    notes: tuple[str, ...] = ()
    """Remarks worth showing a user (e.g. the lowest GPU was used where a provider would not)."""
    policy: CudaPolicy | None = None
    """The CUDA policy the values were derived with (decided once, by ``supported_properties``)."""
    bases: Mapping[str, Basis] = field(
        default_factory=lambda: _NO_BASES, hash=False, compare=False, repr=False
    )
    """Namespace -> what its values were derived from (read by ``explain_unsupported``)."""
    every_gpu: tuple[EveryGpu, ...] = field(default=(), compare=False)
    """Features that must run on each of several declared GPUs (checked by the ranking)."""

    @property
    def namespaces(self) -> tuple[str, ...]:
        """Namespaces with at least one supported feature, in priority order."""
        seen: dict[str, None] = {}
        for f in self.features:
            seen.setdefault(f.namespace, None)
        return tuple(seen)

    def feature(self, namespace: str, feature: str) -> SupportedFeature | None:
        for f in self.features:
            if f.namespace == namespace and f.feature == feature:
                return f
        return None

    def values(self, namespace: str, feature: str) -> tuple[str, ...]:
        """Supported values of ``namespace :: feature`` (empty when unsupported)."""
        f = self.feature(namespace, feature)
        return f.values if f is not None else ()

    def supports(self, prop: VariantProperty) -> bool:
        return prop.value in self.values(prop.namespace, prop.feature)

    def unsupported_reason(self, namespace: str) -> str | None:
        for ns, reason in self.unsupported:
            if ns == namespace:
                return reason
        return None

    def as_dict(self) -> dict[str, dict[str, list[str]]]:
        """``{namespace: {feature: [values, most preferred first]}}`` in priority order."""
        result: dict[str, dict[str, list[str]]] = {}
        for f in self.features:
            result.setdefault(f.namespace, {})[f.feature] = list(f.values)
        return result

    @classmethod
    def from_dict(
        cls, data: Mapping[str, Mapping[str, Iterable[str]]], *, source: str = ""
    ) -> SupportedProperties:
        """Build from the ``as_dict()`` shape (orders are taken as given)."""
        return cls(
            tuple(
                SupportedFeature(ns, feature, tuple(values), source)
                for ns, features in data.items()
                for feature, values in features.items()
            )
        )

    def merged(self, other: SupportedProperties) -> SupportedProperties:
        """*self* followed by the namespaces of *other* that *self* does not cover."""
        mine = set(self.namespaces) | {ns for ns, _ in self.unsupported}
        return SupportedProperties(
            self.features + tuple(f for f in other.features if f.namespace not in mine),
            self.unsupported + tuple(u for u in other.unsupported if u[0] not in mine),
            self.notes + other.notes,
            self.policy,
            MappingProxyType({**other.bases, **self.bases}),
            self.every_gpu + other.every_gpu,
        )
