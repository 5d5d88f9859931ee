"""variant-bridge: wheel-variant properties (PEP 825) <-> conda virtual packages.

The library's entry points, as the CLI uses them (docs/library.md, docs/architecture.md)::

    import variant_bridge as vb

    env = vb.detect_environment(prefix="/opt/env")  # the conda/pixi view, with sources
    supported = vb.supported_properties(env)  # what it accepts, most preferred first
    vb.to_conda_specs([vb.VariantProperty.parse("nvidia :: cuda_version_lower_bound :: 12.8")])

    # A command's context: its sources, its one way onto the network, its target; built once.
    sources = vb.SourceSpec(index_url="https://download.pytorch.org/whl/variant/")
    with vb.Context.open(sources, vb.EnvironmentSpec(prefix="/opt/env")) as ctx:
        choices = vb.select(vb.parse_requests(["torch"]), ctx)  # the tree, as `select`
        prepared = vb.prepare_install(vb.parse_requests(["torch"]), ctx, dry_run=True)
        result = vb.run_install(prepared, ctx, dry_run=True)  # as `install --dry-run`
        model = vb.prepare_export(vb.ExportRequest(), ctx)  # as `export`

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
    "Source": "variant_bridge.environment",
    "VirtualPackage": "variant_bridge.environment",
    "detect_environment": "variant_bridge.detect",
    "SupportedProperties": "variant_bridge.translate.supported",
    "supported_properties": "variant_bridge.translate",
    "explain_unsupported": "variant_bridge.translate",
    "to_conda_specs": "variant_bridge.translate",
    "read_conda_specs": "variant_bridge.translate",
    "TargetPython": "variant_bridge.platform_tags",
    "SourceSpec": "variant_bridge.jobs.specs",
    "EnvironmentSpec": "variant_bridge.jobs.specs",
    "FetchSpec": "variant_bridge.jobs.specs",
    "Reporter": "variant_bridge.jobs.specs",
    "Target": "variant_bridge.jobs.target",
    "Context": "variant_bridge.jobs.context",
    "Sources": "variant_bridge.jobs.context",
    "Downloads": "variant_bridge.indexes",
    "Transport": "variant_bridge.indexes",
    "parse_requests": "variant_bridge.jobs.select",
    "select": "variant_bridge.jobs.select",
    "prepare_install": "variant_bridge.jobs.install",
    "run_install": "variant_bridge.jobs.install",
    "ExportRequest": "variant_bridge.jobs.export",
    "ExportOutput": "variant_bridge.jobs.export",
    "prepare_export": "variant_bridge.jobs.export",
    "run_export": "variant_bridge.jobs.export",
}

__all__ = [
    "Context",
    "Downloads",
    "Environment",
    "EnvironmentSpec",
    "ExportOutput",
    "ExportRequest",
    "FetchSpec",
    "Reporter",
    "Source",
    "SourceSpec",
    "Sources",
    "SupportedProperties",
    "Target",
    "TargetPython",
    "Transport",
    "VariantBridgeError",
    "VariantDescription",
    "VariantProperty",
    "VirtualPackage",
    "__version__",
    "detect_environment",
    "explain_unsupported",
    "parse_requests",
    "prepare_export",
    "prepare_install",
    "read_conda_specs",
    "run_export",
    "run_install",
    "select",
    "supported_properties",
    "to_conda_specs",
]

if TYPE_CHECKING:
    from variant_bridge.detect import detect_environment
    from variant_bridge.environment import Environment, Source, VirtualPackage
    from variant_bridge.errors import VariantBridgeError
    from variant_bridge.indexes import Downloads, Transport
    from variant_bridge.jobs.context import Context, Sources
    from variant_bridge.jobs.export import (
        ExportOutput,
        ExportRequest,
        prepare_export,
        run_export,
    )
    from variant_bridge.jobs.install import prepare_install, run_install
    from variant_bridge.jobs.select import parse_requests, select
    from variant_bridge.jobs.specs import EnvironmentSpec, FetchSpec, Reporter, SourceSpec
    from variant_bridge.jobs.target import Target
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
