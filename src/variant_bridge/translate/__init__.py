"""Pure translation between wheel-variant properties and conda's view of a machine.

:func:`supported_properties` (forward: an environment -> what it supports), :func:`to_conda_specs`
(reverse: properties -> conda specs), :func:`explain_unsupported` (why a property is rejected, from
what the forward translation recorded) and :func:`read_conda_specs` (``--from-conda``). Names
are resolved lazily, so importing :mod:`variant_bridge.translate.supported` (the value types)
loads neither the mapping tables nor archspec.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from variant_bridge.translate.explain import explain_unsupported
    from variant_bridge.translate.forward import supported_properties
    from variant_bridge.translate.from_conda import CondaFacts, read_conda_specs
    from variant_bridge.translate.reverse import CondaSpec, SpecForm, Translation, to_conda_specs

__all__ = [
    "CondaFacts",
    "CondaSpec",
    "SpecForm",
    "Translation",
    "explain_unsupported",
    "read_conda_specs",
    "supported_properties",
    "to_conda_specs",
]

_MODULES = {
    "CondaFacts": "from_conda",
    "CondaSpec": "reverse",
    "SpecForm": "reverse",
    "Translation": "reverse",
    "explain_unsupported": "explain",
    "read_conda_specs": "from_conda",
    "supported_properties": "forward",
    "to_conda_specs": "reverse",
}


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


def __dir__() -> list[str]:
    return list(__all__)
