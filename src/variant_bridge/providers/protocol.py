"""The provider plugin protocol that variant-aware installers call (variantlib 0.2.2's shape).

A plugin answers two questions, both without arguments: every valid feature and value of its
namespace (``get_all_configs``) and what this machine supports, most preferred first
(``get_supported_configs``). The namespace is not part of the plugin: installers take it from the
``providers`` key of the variant metadata (or from the entry-point name).

This module is standalone on purpose (stdlib only): it types our plugins without importing
variantlib, which installs them and runs them in a subprocess of its own.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["FeatureConfigType", "PluginType"]


@runtime_checkable
class FeatureConfigType(Protocol):
    """One feature and its values (variantlib's ``VariantFeatureConfigType``)."""

    @property
    def name(self) -> str:
        """The feature name, e.g. ``cuda_version_lower_bound``."""
        ...

    @property
    def values(self) -> list[str]:
        """The values, most preferred first: non-empty, no duplicates."""
        ...

    @property
    def multi_value(self) -> bool:
        """Whether one wheel may list several values of this feature (e.g. ``sm_arch``)."""
        ...


@runtime_checkable
class PluginType(Protocol):
    """A provider plugin (variantlib's ``PluginType``); methods may be class methods.

    ``all_properties_compatible`` is optional in the protocol (default ``False``): ``True`` would
    promise the same supported configs on every machine, which a detecting plugin never can.
    """

    @property
    def all_properties_compatible(self) -> bool: ...

    def get_all_configs(self) -> list[FeatureConfigType]:
        """Every valid feature and value of the namespace (order irrelevant)."""
        ...

    def get_supported_configs(self) -> list[FeatureConfigType]:
        """What the active environment supports: features and values most preferred first."""
        ...
