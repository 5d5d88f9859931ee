"""The ``amd`` and ``intel`` namespaces, both directions (semantics.md §3a, §3b).

``amd :: gfx_arch`` <-> ``__amdgpu_arch`` through the gfx naming rule (:mod:`variant_bridge.
gfx_archs`); ``amd :: rocm_version`` <-> the environment's ROCm runtime (``rocm-core``), else this
machine's ROCm as the AMD provider reads it, else every version the provider knows (ROCm wheels
bundle their ROCm libraries). ``intel :: device_ip`` has no conda counterpart: its values are taken
as declared or as the Intel provider answers, and never translated.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from variant_bridge._patterns import Lazy
from variant_bridge.environment import Environment, SourceKind, Toolkit, VirtualPackage
from variant_bridge.errors import quote
from variant_bridge.gfx_archs import gfx_name, isa_of, isa_text, parse_isa
from variant_bridge.mappings import AmdFeature, AmdTable, IntelTable
from variant_bridge.properties import VariantProperty
from variant_bridge.translate._words import vp_text
from variant_bridge.translate.supported import (
    AmdBasis,
    EveryGpu,
    SupportedFeature,
    SupportedProperties,
)

__all__ = [
    "amd_specs",
    "explain_amd",
    "explain_intel",
    "forward_amd",
    "forward_intel",
    "intel_unmapped",
    "rocm_minor",
]

_ROCM = Lazy(r"([0-9]{1,4})\.([0-9]{1,4})(?:\.[0-9]+)?", re.ASCII)
_ROCM_VALUE = Lazy(r"(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})", re.ASCII)


class AmdOut:
    """What the forward translation collects for the ``amd`` namespace."""

    def __init__(self) -> None:
        self.features: list[SupportedFeature] = []
        self.unsupported: list[tuple[str, str]] = []
        self.notes: list[str] = []
        self.every_gpu: list[EveryGpu] = []
        self.basis: AmdBasis | None = None


def rocm_minor(version: str) -> tuple[int, int] | None:
    """``6.4.3`` -> ``(6, 4)``; ``None`` for anything else."""
    match = _ROCM.fullmatch(version.strip())
    return (int(match[1]), int(match[2])) if match else None


# -- forward -------------------------------------------------------------------------------------


def forward_amd(env: Environment, table: AmdTable, out: AmdOut) -> None:
    """``gfx_arch`` from ``__amdgpu_arch`` (each declared GPU), ``rocm_version`` from the
    runtime; the namespace is unsupported without ``__amdgpu``."""
    driver = env.virtual_package(table.driver_package)
    if driver is None:
        variable = table.override(table.driver_package).conda
        reason = f"no {table.driver_package}: no AMD GPU (or {variable} is empty)"
        out.unsupported.append((table.namespace, reason))
        return
    arch = env.virtual_package(table.arch_package)
    gfx = _gfx_arch(env, table, arch, out)
    _rocm_version(env, table, out)
    out.basis = AmdBasis(arch, gfx, env.rocm)


def _gfx_arch(
    env: Environment, table: AmdTable, arch: VirtualPackage | None, out: AmdOut
) -> tuple[str, ...]:
    feature = _feature(table, "gfx_arch")
    if arch is None:
        out.notes.append(
            f"no {table.arch_package}: AMD GPU architecture unknown, wheels that set "
            f"{table.namespace} :: {feature.name} are not supported"
        )
        return ()
    gpus = env.gpus_of(table.arch_package) or (arch,)
    names = [(gpu, _gfx(gpu, table)) for gpu in gpus]
    unnamed = [gpu for gpu, name in names if name is None]
    for gpu in unnamed:
        out.notes.append(
            f"{vp_text(gpu)} has no gfx name (a minor or stepping past one hex digit); wheels "
            f"that set {table.namespace} :: {feature.name} are not supported on it"
        )
    values = tuple(dict.fromkeys(name for _, name in names if name is not None))
    if not values:
        return ()
    source = ", ".join(dict.fromkeys(vp_text(gpu) for gpu in gpus))
    out.features.append(SupportedFeature(table.namespace, feature.name, values, source))
    _several_amd(table, feature, arch, names, out)
    return values


def _several_amd(
    table: AmdTable,
    feature: AmdFeature,
    arch: VirtualPackage,
    names: Sequence[tuple[VirtualPackage, str | None]],
    out: AmdOut,
) -> None:
    """Which GPU decides, and what the AMD provider (every GPU's gfx_arch) would say."""
    shown = _gfx(arch, table) or arch.version
    if len(names) > 1 and arch.source.kind is SourceKind.TARGET:
        declared = f"--target {table.arch_package[2:]}=" + ",".join(n or "?" for _, n in names)
        out.every_gpu.append(
            EveryGpu(
                table.namespace,
                feature.name,
                tuple((f"{n} ({gpu.version})", (n,)) for gpu, n in names if n is not None),
                declared,
            )
        )
        out.notes.append(
            f"{feature.name}: every GPU of {declared} must run the wheel, so a variant is chosen "
            f"only if its {feature.name} list holds each; conda's {table.arch_package} is the "
            f"first listed, {arch.version} ({shown})"
        )
    elif len(names) > 1 and arch.source.kind is SourceKind.DETECTED:
        others = ", ".join(n or gpu.version for gpu, n in names[1:] if n != shown)
        out.notes.append(
            f"{feature.name} follows {arch.name}={arch.version} ({shown}), the GPU with the MOST "
            f"compute units (rattler's rule, the one conda solves with); the AMD provider lists "
            f"every GPU's gfx_arch, so it would also accept wheels built only for {others}; "
            f"ask for every GPU with --target {table.arch_package[2:]}={shown},{others}"
        )
    elif arch.source.kind is SourceKind.DETECTED:
        out.notes.append(
            f"{feature.name} follows {arch.name}={arch.version} ({shown}), the GPU with the "
            f"{table.several.upper()} (rattler's rule); the AMD provider lists every GPU's "
            "gfx_arch, so with GPUs of different architectures it would accept more"
        )


def _gfx(gpu: VirtualPackage, table: AmdTable) -> str | None:
    isa = parse_isa(gpu.version)
    return gfx_name(isa, table.gfx_prefix) if isa is not None else None


def _rocm_version(env: Environment, table: AmdTable, out: AmdOut) -> None:
    feature = _feature(table, "rocm_version")
    rocm = env.rocm
    if rocm is None:
        values = table.runtime_versions
        out.features.append(
            SupportedFeature(
                table.namespace,
                feature.name,
                values,
                "no ROCm runtime known: every version the AMD provider knows",
            )
        )
        packages = ", ".join(table.runtime_packages)
        out.notes.append(
            f"{feature.name}: no ROCm runtime in the environment ({packages})"
            f" nor on this machine ({table.default_root}/{table.version_file}), so every ROCm "
            "version the AMD provider knows is supported, newest first: ROCm wheels carry their "
            "ROCm libraries. The AMD provider would list none and choose no ROCm build; declare "
            "one with --target rocm_version=X.Y"
        )
        return
    minor = rocm_minor(rocm.version)
    if minor is None:
        out.notes.append(
            f"{rocm} ({rocm.source}) is not a ROCm version; {feature.name} omitted, wheels that "
            "set it are not supported"
        )
        return
    value = f"{minor[0]}.{minor[1]}"
    source = f"{rocm} ({rocm.source})"
    out.features.append(SupportedFeature(table.namespace, feature.name, (value,), source))


def _feature(table: AmdTable, rule: str) -> AmdFeature:
    return next(f for f in table.features if f.rule == rule)


def forward_intel(env: Environment, table: IntelTable) -> SupportedFeature | str:
    """The declared ``device_ip`` values, or why the namespace is unsupported."""
    for declared in env.declared_features:
        if declared.namespace == table.namespace and declared.feature == table.feature:
            source = f"{declared.source}; {_NO_COUNTERPART}"
            return SupportedFeature(table.namespace, table.feature, declared.values, source)
    return (
        f"{table.namespace} :: {table.feature} has no conda counterpart ({_NO_COUNTERPART_WHY}) "
        f"and none was given: declare it with --target {table.target}=IP[,IP...] or "
        f"{table.provider_override}, or install the Intel provider "
        f"({table.plugin_api.partition('.')[0].replace('_', '-')})"
    )


_NO_COUNTERPART = "taken as given: no conda counterpart"
_NO_COUNTERPART_WHY = "no conda virtual package describes an Intel GPU"


# -- reverse -------------------------------------------------------------------------------------


def amd_specs(
    table: AmdTable, name: str, props: Sequence[VariantProperty]
) -> tuple[list[tuple[VariantProperty, list[str]]], dict[VariantProperty, str]]:
    """Each mappable property with its rendered specs, and why the others are unmapped."""
    feature = table.feature(name)
    mapped: list[tuple[VariantProperty, list[str]]] = []
    missing: dict[VariantProperty, str] = {}
    for p in props:
        fields = _fields(table, feature, p) if feature is not None else _no_feature(table, name)
        if isinstance(fields, str):
            missing[p] = fields
            continue
        assert feature is not None
        mapped.append((p, [t.format(**fields) for t in feature.specs]))
    return mapped, missing


def _no_feature(table: AmdTable, name: str) -> str:
    known = ", ".join(f.name for f in table.features)
    return f"{table.namespace} has no feature {quote(name)} (known: {known})"


def _fields(table: AmdTable, feature: AmdFeature, prop: VariantProperty) -> dict[str, object] | str:
    if feature.rule == "gfx_arch":
        isa = isa_of(prop.value, table.gfx_prefix)
        if isa is None:
            return (
                f"{quote(prop.value)} is not an AMD GPU name like 'gfx942' or 'gfx90a' ("
                f"{table.gfx_prefix} + major + minor and stepping as one hex digit each)"
            )
        major, minor, stepping = isa
        return {
            "value": prop.value,
            "isa": isa_text(isa),
            "major": major,
            "minor": minor,
            "stepping": stepping,
        }
    match = _ROCM_VALUE.fullmatch(prop.value)
    if match is None:
        return f"{quote(prop.value)} is not a ROCm version like '6.4' (major.minor)"
    return {"value": prop.value, "major": int(match[1]), "minor": int(match[2])}


def intel_unmapped(table: IntelTable) -> str:
    return (
        f"{table.namespace} :: {table.feature} has no conda counterpart "
        f"({_NO_COUNTERPART_WHY}); the bridge never maps it"
    )


# -- explain -------------------------------------------------------------------------------------


def explain_amd(
    prop: VariantProperty, supported: SupportedProperties, table: AmdTable
) -> str | None:
    feature = table.feature(prop.feature)
    if feature is None:
        return _no_feature(table, prop.feature)
    fields = _fields(table, feature, prop)
    if isinstance(fields, str):
        return fields
    reason = supported.unsupported_reason(table.namespace)
    if reason is not None:
        return f"needs an AMD GPU, but {reason}"
    basis = supported.bases.get(table.namespace)
    if not isinstance(basis, AmdBasis):
        return None
    if feature.rule == "gfx_arch":
        return _explain_gfx(prop, basis, table)
    return _explain_rocm(prop, basis.rocm)


def _explain_gfx(prop: VariantProperty, basis: AmdBasis, table: AmdTable) -> str:
    if basis.arch is None:
        variable = table.override(table.arch_package).conda
        return (
            f"needs an AMD GPU {prop.value} but there is no {table.arch_package} (its "
            f"architecture is unknown, or {variable} is empty)"
        )
    isa = isa_text(isa_of(prop.value, table.gfx_prefix) or (0, 0, 0))
    if not basis.gfx:
        return f"{basis.arch.name} {basis.arch.version} has no gfx name"
    gpus = ", ".join(basis.gfx)
    return f"built for {prop.value} ({isa}) but {basis.arch.name} is {basis.arch.version} ({gpus})"


def _explain_rocm(prop: VariantProperty, rocm: Toolkit | None) -> str:
    if rocm is None:
        return f"needs ROCm {prop.value}, which is not a ROCm version the AMD provider knows"
    owner = {SourceKind.PREFIX: "the prefix's", SourceKind.LOCKFILE: "the locked"}.get(
        rocm.source.kind, "the"
    )
    return (
        f"built for ROCm {prop.value} but {owner} ROCm runtime is {rocm.package} {rocm.version} "
        f"({rocm.source}): its libraries would load beside another ROCm"
    )


def explain_intel(prop: VariantProperty, supported: SupportedProperties, table: IntelTable) -> str:
    reason = supported.unsupported_reason(table.namespace)
    if reason is not None:
        return reason
    if prop.feature != table.feature:
        return f"{table.namespace} has no feature {quote(prop.feature)} (known: {table.feature})"
    given = ", ".join(supported.values(table.namespace, table.feature))
    return (
        f"needs Intel device IP {prop.value}, but the declared IPs are {given} ({_NO_COUNTERPART})"
    )
