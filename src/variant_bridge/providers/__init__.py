"""Variant provider plugins (layer 2) that answer from the bridged view of the active environment.

variantlib-style installers load them through ``providers.{namespace}.plugin-api`` in a package's
variant metadata, or find them under the ``variant_plugins`` entry points; see
:mod:`variant_bridge.providers.plugins`.
"""

from __future__ import annotations

from variant_bridge.providers.plugins import (
    NAMESPACES,
    PLUGIN_APIS,
    Aarch64Plugin,
    FeatureConfig,
    NvidiaPlugin,
    X8664Plugin,
    all_configs,
    supported_configs,
)
from variant_bridge.providers.protocol import FeatureConfigType, PluginType

__all__ = [
    "NAMESPACES",
    "PLUGIN_APIS",
    "Aarch64Plugin",
    "FeatureConfig",
    "FeatureConfigType",
    "NvidiaPlugin",
    "PluginType",
    "X8664Plugin",
    "all_configs",
    "supported_configs",
]
