"""The GPU fallback warnings: a package publishes builds for this kind of GPU, but none has code
for this GPU, so PEP 825 falls back to the null or non-variant wheel (semantics.md §3c); or the
machine has a CUDA driver, yet every CUDA build was excluded (by the toolkit, the driver, ...) and
the CPU build was chosen (:func:`cuda_fallback`, semantics.md §6.6): no silent downgrade.

>>> from variant_bridge.translate.supported import SupportedFeature
>>> supported = SupportedProperties(
...     (SupportedFeature("amd", "gfx_arch", ("gfx1151",), "__amdgpu_arch=11.5.1 (variable)"),)
... )
>>> rocm = VariantDescription.parse("rocm6.4: amd :: gfx_arch :: gfx942")
>>> print(gpu_fallback("torch 2.9.0", None, [rocm], supported))  # doctest: +NORMALIZE_WHITESPACE
torch 2.9.0: no variant has code for this GPU (amd :: gfx_arch :: gfx1151, from
__amdgpu_arch=11.5.1 (variable)): rocm6.4 lists gfx942; PEP 825 falls back to the
non-variant wheel, which does not use this GPU
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from variant_bridge._values import value
from variant_bridge.environment import Toolkit, VirtualPackage
from variant_bridge.properties import VariantDescription
from variant_bridge.translate.evidence import CudaVersion, WheelToolkit
from variant_bridge.translate.supported import SupportedProperties

__all__ = ["GPU_FEATURES", "CudaBuild", "cuda_fallback", "gpu_fallback"]

GPU_FEATURES = (("nvidia", "sm_arch"), ("amd", "gfx_arch"))
"""The features that say which GPU a build has code for."""
_SHOWN = 6


def gpu_fallback(
    package: str,
    chosen: VariantDescription | None,
    variants: Iterable[VariantDescription],
    supported: SupportedProperties,
) -> str | None:
    """Why *chosen* (``None``: a non-variant wheel) does not use the environment's GPU although
    *package* publishes builds for that kind of GPU; ``None`` when there is nothing to warn
    about (no such GPU, no such build, or a build for it was chosen)."""
    variants = list(variants)
    for namespace, feature in GPU_FEATURES:
        gpu = supported.feature(namespace, feature)
        if gpu is None or (chosen is not None and namespace in chosen.namespaces):
            continue
        built = [(v.label, _values(v, namespace, feature)) for v in variants]
        built = [(label, values) for label, values in built if values]
        if not built or any(set(values) & set(gpu.values) for _, values in built):
            continue
        listed = "; ".join(
            f"{label} lists {_abbreviate(values)}" for label, values in built[:_SHOWN]
        )
        fallback = "the non-variant wheel" if chosen is None else f"variant {chosen.label}"
        if chosen is not None and chosen.is_null:
            fallback = "the null variant"
        return (
            f"{package}: no variant has code for this GPU ({namespace} :: {feature} :: "
            f"{', '.join(gpu.values[:_SHOWN])}, from {gpu.source}): {listed}; PEP 825 falls back "
            f"to {fallback}, which does not use this GPU"
        )
    return None


def _values(variant: VariantDescription, namespace: str, feature: str) -> list[str]:
    return [p.value for p in variant.properties if (p.namespace, p.feature) == (namespace, feature)]


def _abbreviate(values: list[str]) -> str:
    return ", ".join(values) if len(values) <= _SHOWN else ", ".join([*values[:_SHOWN], "…"])


@value
class CudaBuild:
    """One CUDA build of a package that was not chosen, and why."""

    label: str
    toolkit: WheelToolkit | None
    """Its toolkit by the shared rule (pins, label, lower bound)."""
    floor: CudaVersion | None
    """Its lowest ``cuda_version_lower_bound`` (the driver it needs)."""
    reason: str
    """The verdict: why it was refused."""


def _fallback_name(chosen: VariantDescription | None) -> str:
    if chosen is None:
        return "the non-variant wheel"
    return "the null variant" if chosen.is_null else f"variant {chosen.label}"


def _listed(builds: Sequence[CudaBuild], what: str) -> str:
    shown = [
        f"{b.label} {getattr(b, what)}" for b in builds[:_SHOWN] if getattr(b, what) is not None
    ]
    return ", ".join(shown) + (", …" if len(builds) > _SHOWN else "")


def _why_excluded(
    builds: Sequence[CudaBuild], driver: VirtualPackage, toolkit: Toolkit | None
) -> str:
    """What excluded every CUDA build, said once when one fact did; else each build's reason."""
    kits = [b.toolkit for b in builds]
    if toolkit is not None and all(k is not None for k in kits):
        major, _, rest = toolkit.version.partition(".")
        minor = rest.split(".")[0]
        if major.isdigit() and minor.isdigit():
            said = CudaVersion(int(major), int(minor))
            known = [k for k in kits if k is not None]
            if all(k.cuda.key > said.key and not k.accepts(said) for k in known):
                return (
                    f"{toolkit.package} {toolkit.version} ({toolkit.source}) is older than every "
                    f"CUDA build ({_listed(builds, 'toolkit')})"
                )
            if all(k.cuda.major < said.major for k in known):
                return (
                    f"{toolkit.package} {toolkit.version} ({toolkit.source}) is newer than every "
                    f"CUDA build's major ({_listed(builds, 'toolkit')})"
                )
    floors = [b.floor for b in builds]
    release = [int(x) for x in driver.version.split(".")[:2] if x.isdigit()]
    if len(release) == 2 and all(f is not None for f in floors):
        have = CudaVersion(release[0], release[1])
        if all(f is not None and f.key > have.key for f in floors):
            return (
                f"__cuda={driver.version} ({driver.source}) is older than every CUDA build's "
                f"driver floor ({_listed(builds, 'floor')})"
            )
    return "every CUDA build was refused: " + "; ".join(b.reason for b in builds[:_SHOWN])


def cuda_fallback(
    package: str,
    chosen: VariantDescription | None,
    builds: Sequence[CudaBuild],
    *,
    driver: VirtualPackage | None,
    toolkit: Toolkit | None,
) -> str | None:
    """Why *package* gets a CPU build (*chosen*: the null variant, a variant of no CUDA, or
    ``None``: the non-variant wheel) on a machine whose CUDA driver is present, when it
    publishes CUDA builds and every one (*builds*, all refused) was excluded; ``None`` when there
    is nothing to warn about."""
    if driver is None or not builds:
        return None
    return (
        f"{package}: {_fallback_name(chosen)} (a CPU build) was chosen although the CUDA driver "
        f"is present (__cuda={driver.version}): {_why_excluded(builds, driver, toolkit)}"
    )
