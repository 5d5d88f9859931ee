"""Ordered supported properties: what a target environment accepts, most preferred first.

This is the input of PEP 825 ranking and the output of provider plugins' ``get_supported_configs``:
namespaces in priority order, each with features in priority order, each with values most
preferred first. A namespace can also be listed as *unsupported* with the reason why, so selection
can explain a rejection ("no __cuda: no NVIDIA driver detected").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from variant_bridge.environment import CudaPolicy
from variant_bridge.properties import VariantFeature, VariantProperty

__all__ = ["SupportedFeature", "SupportedProperties"]


@dataclass(frozen=True, slots=True)
class SupportedFeature:
    """One feature with its supported values, most preferred first."""

    namespace: str
    feature: str
    values: tuple[str, ...]
    source: str = ""
    """What the values were derived from, e.g. ``__cuda=12.9 (CONDA_OVERRIDE_CUDA)``."""

    @property
    def key(self) -> VariantFeature:
        return VariantFeature(self.namespace, self.feature)


@dataclass(frozen=True, slots=True)
class SupportedProperties:
    """Supported features in priority order, plus namespaces known to be unsupported."""

    features: tuple[SupportedFeature, ...] = ()
    unsupported: tuple[tuple[str, str], ...] = ()
    """``(namespace, reason)`` for namespaces the environment cannot satisfy at all."""
    notes: tuple[str, ...] = ()
    """Remarks worth showing a user (e.g. the lowest GPU was used where a provider would not)."""
    policy: CudaPolicy | None = None
    """The CUDA policy the values were derived with (decided once, by ``supported_properties``)."""

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
        )
