"""The GPU fallback warning: a package publishes builds for this kind of GPU, but none has code
for this GPU, so PEP 825 falls back to the null or non-variant wheel (semantics.md §3c).

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

from collections.abc import Iterable

from variant_bridge.properties import VariantDescription
from variant_bridge.translate.supported import SupportedProperties

__all__ = ["GPU_FEATURES", "gpu_fallback"]

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
