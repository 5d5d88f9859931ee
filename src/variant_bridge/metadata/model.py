"""The normalised model of variant metadata, whatever dialect it was read from.

``*.dist-info/variant.json`` (one label) and ``{name}-{version}-variants.json`` (every label)
come in several schema dialects (PEP 817 ``v0.0.3``, PEP 825 ``peps/825/v0.1.1``, variantlib
``v0.2.0`` and ``peps/850/v0.2.0``). The readers in :mod:`variant_bridge.metadata` turn each into a
:class:`VariantMetadata`: labels -> properties, namespace priorities and providers.
"""

from __future__ import annotations

from typing import Literal

from variant_bridge._values import value
from variant_bridge.properties import VariantDescription

__all__ = ["Dialect", "Provider", "StaticFeature", "VariantMetadata"]

Dialect = Literal["pep817", "pep825", "variantlib", "pep850"]


@value
class StaticFeature:
    """One feature of a static provider with its values, most preferred first."""

    name: str
    values: tuple[str, ...]


@value
class Provider:
    """How the compatibility of one namespace is decided.

    Exactly one of ``requires`` (an install-time plugin package), ``static_properties`` (values
    baked in at build time) or ``builtin`` (implemented by the installer) is normally set; PEP 825
    files carry no providers at all.
    """

    namespace: str
    requires: tuple[str, ...] = ()
    plugin_api: str | None = None
    static_properties: tuple[StaticFeature, ...] | None = None
    builtin: str | None = None
    optional: bool = False
    enable_if: str | None = None
    """PEP 817 only: a PEP 508 marker saying when the provider applies."""
    install_time: bool = True
    """PEP 817 only: ``False`` for an ahead-of-time provider."""

    @property
    def is_static(self) -> bool:
        return self.static_properties is not None


@value
class VariantMetadata:
    """Variant metadata of one package version (or of one wheel).

    :param variants: every known variant, sorted by label (``null`` included when present).
    :param namespace_priorities: ``default-priorities.namespace``, most preferred first.
    :param providers: one entry per namespace that has a provider, in priority order.
    :param feature_priorities: PEP 817 ``default-priorities.feature`` (``{ns: [features]}``).
    :param property_priorities: PEP 817 ``default-priorities.property``.
    """

    dialect: Dialect
    schema: str | None
    variants: tuple[VariantDescription, ...]
    namespace_priorities: tuple[str, ...] = ()
    providers: tuple[Provider, ...] = ()
    feature_priorities: tuple[tuple[str, tuple[str, ...]], ...] = ()
    property_priorities: tuple[tuple[str, str, tuple[str, ...]], ...] = ()

    @property
    def labels(self) -> tuple[str, ...]:
        return tuple(v.label for v in self.variants)

    def variant(self, label: str) -> VariantDescription | None:
        """The variant called *label*, or ``None`` when this metadata does not list it."""
        for description in self.variants:
            if description.label == label:
                return description
        return None

    def provider(self, namespace: str) -> Provider | None:
        for provider in self.providers:
            if provider.namespace == namespace:
                return provider
        return None
