"""Variant provider plugins (layer 2) that answer from the bridged view of the active environment.

variantlib-style installers load them through ``providers.{namespace}.plugin-api`` in a package's
variant metadata, or find them under the ``variant_plugins`` entry points; see
:mod:`variant_bridge.providers.plugins`.
"""

from __future__ import annotations

from variant_bridge.providers import plugins
from variant_bridge.providers.plugins import (
    Aarch64Plugin,
    AmdPlugin,
    BridgedView,
    FeatureConfig,
    NvidiaPlugin,
    X8664Plugin,
    plugin_apis,
)
from variant_bridge.providers.protocol import FeatureConfigType, PluginType

__all__ = [
    "NAMESPACES",  # the tables' namespaces, resolved by __getattr__
    "PLUGIN_APIS",
    "Aarch64Plugin",
    "AmdPlugin",
    "BridgedView",
    "FeatureConfig",
    "FeatureConfigType",
    "NvidiaPlugin",
    "PluginType",
    "X8664Plugin",
    "plugin_apis",
]


def __getattr__(name: str) -> object:
    if name in ("NAMESPACES", "PLUGIN_APIS"):
        return getattr(plugins, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
