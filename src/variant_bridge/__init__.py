"""variant-bridge: wheel-variant properties (PEP 825) <-> conda virtual packages.

The library's entry points, in the order of the main job (docs/architecture.md)::

    import variant_bridge as vb

    env = vb.detect_environment(prefix="/opt/env")  # the conda/pixi view, with sources
    supported = vb.supported_properties(env)  # what it accepts, most preferred first
    vb.to_conda_specs([vb.VariantProperty.parse("nvidia :: cuda_version_lower_bound :: 12.8")])
    target = vb.Target(env, vb.TargetPython("3.12"), supported)
    with vb.Downloads.temporary(transport=vb.Transport()) as downloads:
        sources = vb.open_sources(index_urls=["https://download.pytorch.org/whl/variant/"])
        choices = vb.select(vb.parse_requests(["torch"]), sources, target, downloads)
    model = vb.prepare_export(vb.ExportRequest(vb.ExportSource(prefix="/opt/env")))

Names resolve lazily (module ``__getattr__``): ``import variant_bridge`` loads none of rattler,
click, yaml or archspec, and neither does importing one of its pure modules.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from variant_bridge._version import __version__

# name -> the module that defines it; the one list of the public API (tests/test_module.py).
_ENTRY_POINTS = {
    "VariantBridgeError": "variant_bridge.errors",
    "VariantProperty": "variant_bridge.properties",
    "VariantDescription": "variant_bridge.properties",
    "Environment": "variant_bridge.environment",
    "detect_environment": "variant_bridge.detect",
    "SupportedProperties": "variant_bridge.translate.supported",
    "supported_properties": "variant_bridge.translate",
    "explain_unsupported": "variant_bridge.translate",
    "to_conda_specs": "variant_bridge.translate",
    "read_conda_specs": "variant_bridge.translate",
    "TargetPython": "variant_bridge.platform_tags",
    "Downloads": "variant_bridge.indexes",
    "open_sources": "variant_bridge.indexes",
    "Transport": "variant_bridge.indexes",
    "Target": "variant_bridge.jobs.select",
    "parse_requests": "variant_bridge.jobs.select",
    "select": "variant_bridge.jobs.select",
    "ExportRequest": "variant_bridge.jobs.export",
    "ExportSource": "variant_bridge.jobs.export",
    "prepare_export": "variant_bridge.jobs.export",
}

__all__ = [
    "Downloads",
    "Environment",
    "ExportRequest",
    "ExportSource",
    "SupportedProperties",
    "Target",
    "TargetPython",
    "Transport",
    "VariantBridgeError",
    "VariantDescription",
    "VariantProperty",
    "__version__",
    "detect_environment",
    "explain_unsupported",
    "open_sources",
    "parse_requests",
    "prepare_export",
    "read_conda_specs",
    "select",
    "supported_properties",
    "to_conda_specs",
]

if TYPE_CHECKING:
    from variant_bridge.detect import detect_environment
    from variant_bridge.environment import Environment
    from variant_bridge.errors import VariantBridgeError
    from variant_bridge.indexes import Downloads, Transport, open_sources
    from variant_bridge.jobs.export import ExportRequest, ExportSource, prepare_export
    from variant_bridge.jobs.select import Target, parse_requests, select
    from variant_bridge.platform_tags import TargetPython
    from variant_bridge.properties import VariantDescription, VariantProperty
    from variant_bridge.translate import (
        explain_unsupported,
        read_conda_specs,
        supported_properties,
        to_conda_specs,
    )
    from variant_bridge.translate.supported import SupportedProperties


def __getattr__(name: str) -> Any:
    module = _ENTRY_POINTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # resolved once
    return value


def __dir__() -> list[str]:
    return list(__all__)
