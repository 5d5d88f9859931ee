"""Pure translation between wheel-variant properties and conda's view of a machine.

Names are resolved lazily, so importing :mod:`variant_bridge.translate.supported` (the value
types) does not load the mapping tables.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from variant_bridge.translate._legacy import (
        CondaFacts,
        CondaSpec,
        SpecForm,
        Translation,
        environment_from_conda_specs,
        explain_unsupported,
        host_subdir,
        read_conda_specs,
        supported_properties,
        to_conda_specs,
    )

__all__ = [
    "CondaFacts",
    "CondaSpec",
    "SpecForm",
    "Translation",
    "environment_from_conda_specs",
    "explain_unsupported",
    "host_subdir",
    "read_conda_specs",
    "supported_properties",
    "to_conda_specs",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module("variant_bridge.translate._legacy"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return list(__all__)
