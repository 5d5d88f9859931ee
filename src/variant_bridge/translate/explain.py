"""Why a property is not supported, in words, read from what the forward translation recorded.

:func:`explain_unsupported` compares nothing the forward translation did not: it names the first
:class:`~variant_bridge.translate.supported.Bound` an ``nvidia`` value fails, the microarchitecture
a CPU namespace was read from, the distribution ``abi_dependency`` found (semantics.md §3-5).
e.g. ``needs CUDA driver >= 12.8 but __cuda is 12.6``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType

from variant_bridge.environment import Source, Toolkit, VirtualPackage
from variant_bridge.errors import quote
from variant_bridge.mappings import CpuTable, MappingTables, NvidiaTable, load_tables
from variant_bridge.properties import VariantProperty
from variant_bridge.translate import cuda, microarchitectures
from variant_bridge.translate._words import toolkit_text
from variant_bridge.translate.amd import explain_amd, explain_intel
from variant_bridge.translate.supported import (
    AbiBasis,
    Bound,
    CpuBasis,
    Limit,
    NvidiaBasis,
    NvidiaValue,
    SupportedProperties,
)

__all__ = ["explain_unsupported"]


def explain_unsupported(
    prop: VariantProperty, supported: SupportedProperties, *, tables: MappingTables | None = None
) -> str | None:
    """Why *supported* does not support *prop*; ``None`` when it does, or when *supported*
    records nothing to explain it with (it was not made by ``supported_properties``)."""
    if supported.supports(prop):
        return None
    tables = tables if tables is not None else load_tables()
    cpu = tables.cpu(prop.namespace)
    if prop.namespace == tables.nvidia.namespace:
        return _nvidia(prop, supported, tables.nvidia)
    if cpu is not None:
        return _cpu(prop, supported, cpu)
    if prop.namespace == tables.names.abi_namespace:
        basis = supported.bases.get(prop.namespace)
        return _abi(prop, basis.installed) if isinstance(basis, AbiBasis) else None
    if prop.namespace == tables.amd.namespace:
        return explain_amd(prop, supported, tables.amd)
    if prop.namespace == tables.intel.namespace:
        return explain_intel(prop, supported, tables.intel)
    known = ", ".join(tables.namespaces)
    return f"no mapping for namespace {quote(prop.namespace)} (variant-bridge maps {known})"


def _nvidia(
    prop: VariantProperty, supported: SupportedProperties, table: NvidiaTable
) -> str | None:
    feature = table.feature(prop.feature)
    if feature is None:
        known = ", ".join(f.name for f in table.features)
        return f"{table.namespace} has no feature {quote(prop.feature)} (known: {known})"
    value = cuda.nvidia_value(table, feature, prop.value)
    if isinstance(value, str):
        return value
    reason = supported.unsupported_reason(table.namespace)
    if reason is not None:
        return f"needs an NVIDIA driver, but {reason}"
    basis = supported.bases.get(table.namespace)
    if not isinstance(basis, NvidiaBasis):
        return None
    failed = next((b for b in basis.bounds.get(feature.name, ()) if not b.admits(value)), None)
    if failed is None:
        return (
            f"{quote(prop.value)} is not a value the NVIDIA provider lists (majors "
            f"{table.driver_majors}, minors {table.driver_minors})"
        )
    return _WORDS[failed.limit](_Rejection(prop, value, failed, table))


class _Rejection:
    """A value and the bound it failed, with the words' building blocks."""

    def __init__(
        self, prop: VariantProperty, value: NvidiaValue, bound: Bound, table: NvidiaTable
    ) -> None:
        self.prop, self.value, self.bound, self.table = prop, value, bound, table
        self.needed = f"{value.major}.{value.minor}"

    @property
    def vp(self) -> VirtualPackage:
        assert isinstance(self.bound.fact, VirtualPackage)
        return self.bound.fact

    @property
    def toolkit(self) -> Toolkit:
        assert isinstance(self.bound.fact, Toolkit)
        return self.bound.fact

    @property
    def driver(self) -> str:
        return f"{self.vp.name} is {cuda.fmt(self.bound.version)}"

    @property
    def gpu(self) -> str:
        return f"{self.vp.name} is {self.vp.version}"


def _toolkit_major(r: _Rejection) -> str:
    # The clash is with whatever holds the toolkit's libraries: the prefix, or the environment.
    owner = "the prefix's" if r.toolkit.source == Source.PREFIX else "the environment's"
    return (
        f"built for CUDA {r.value.major} but {toolkit_text(r.toolkit)} "
        f"(CUDA {r.bound.version[0]}): its libraries would clash with {owner}"
    )


def _gpu_at_least(r: _Rejection) -> str:
    if r.value.kind == "virtual":
        return f"needs compute capability >= {r.needed} (PTX {r.prop.value}) but {r.gpu}"
    return f"needs a GPU of compute capability {r.needed} (sm_arch {r.prop.value}) but {r.gpu}"


_WORDS: Mapping[Limit, Callable[[_Rejection], str]] = MappingProxyType(
    {
        Limit.DRIVER_AT_LEAST: lambda r: f"needs CUDA driver >= {r.prop.value} but {r.driver}",
        Limit.TOOLKIT_MAJOR: _toolkit_major,
        Limit.TOOLKIT_AT_LEAST: lambda r: (
            f"needs {r.prop.feature} {r.prop.value} but {toolkit_text(r.toolkit)}"
        ),
        Limit.DRIVER_BELOW: lambda r: f"needs CUDA driver < {r.prop.value} but {r.driver}",
        Limit.TOOLKIT_BELOW: lambda r: (
            f"needs a toolkit older than {r.prop.value} ({r.prop.feature}) but "
            f"{toolkit_text(r.toolkit)}"
        ),
        Limit.GPU_AT_LEAST: _gpu_at_least,
        Limit.GPU_GENERATION: lambda r: (
            f"sm_arch {r.prop.value} is machine code for compute capability {r.value.major}.x "
            f"only; {r.gpu} and code for one generation does not run on another"
        ),
        Limit.GPU_PTX: lambda r: (
            f"PTX {r.prop.value} would JIT-compile on compute capability {r.vp.version}, but "
            f"the NVIDIA provider offers PTX only as {r.bound.version[0]}0_virtual (the GPU's "
            "own generation)"
        ),
        Limit.NO_GPU: lambda r: (
            f"needs a GPU of compute capability {r.needed} or newer but there is no "
            f"{r.table.arch_package} (no GPU detected, or "
            f"{r.table.override(r.table.arch_package).conda} is empty)"
        ),
        Limit.GPU_UNREADABLE: lambda r: (
            f"{r.vp.name} version {quote(r.vp.version)} is not a compute capability"
        ),
        Limit.GPU_TOO_OLD: lambda r: (
            f"{r.vp.name} {r.vp.version} is below {cuda.fmt(r.bound.version)}, the lowest "
            "compute capability the NVIDIA provider ranks"
        ),
    }
)


def _cpu(prop: VariantProperty, supported: SupportedProperties, table: CpuTable) -> str | None:
    value_reason = microarchitectures.value_reason(table, prop)
    if value_reason is not None:
        return value_reason
    reason = supported.unsupported_reason(table.namespace)
    if reason is not None:
        return f"needs an {table.archspec_family} CPU, but {reason}"
    basis = supported.bases.get(table.namespace)
    if not isinstance(basis, CpuBasis):
        return None
    if not microarchitectures.names_with(table, prop):
        return microarchitectures.unknown_reason(table, prop)
    cpu = f"{table.virtual_package} {basis.microarchitecture.build}"
    if prop.feature == table.generation_feature:
        best = (supported.values(table.namespace, prop.feature) or ("unknown",))[0]
        needs = f"needs {table.namespace} {prop.feature} {prop.value}"
        return f"{needs} but {cpu} is {prop.feature} {best}"
    version = microarchitectures.archspec_version()
    return f"needs CPU feature {prop.feature} but {cpu} does not have it (archspec {version})"


def _abi(prop: VariantProperty, installed: Mapping[str, str]) -> str:
    name = prop.feature.replace("_", "-")
    if prop.feature not in installed:
        return f"needs {name} {prop.value}.* but {name} is not installed"
    return f"needs {name} {prop.value}.* but {installed[prop.feature]} is installed"
