"""An environment's health, from facts already read: what is wrong, and what fixes it.

Pure (layer 1): :func:`examine` reads an :class:`~variant_bridge.environment.Environment` (its
conda records and PyPI distributions, as detection read them) and what it supports, and finds

- CUDA libraries present twice, a conda package and a PyPI wheel (:mod:`.libraries`);
- installed variant wheels whose build no longer agrees with the environment (:mod:`.variants`);
- CUDA (``nvidia-*``) wheels nothing requires any more (:mod:`.requirements`).

Each :class:`~variant_bridge.health.model.Finding` carries its fixes as commands for the
:class:`~variant_bridge.health.model.Place` examined (:mod:`.commands`). Reading the environment
is detection's job; running a fix is the ``doctor`` use case's (:mod:`variant_bridge.jobs.doctor`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from variant_bridge.health.checkup import examine, marker_environment
    from variant_bridge.health.model import (
        Basis,
        Detail,
        Disagreement,
        Finding,
        FindingKind,
        Fix,
        FixKind,
        HealthReport,
        LibraryCopies,
        Orphan,
        Place,
        PlaceKind,
        Reason,
        ReasonKind,
        Severity,
    )
    from variant_bridge.health.pairs import conda_copy
    from variant_bridge.health.requirements import (
        RequirementGraph,
        is_cuda_wheel,
        orphaned_wheels,
        requirement_graph,
    )

__all__ = [
    "Basis",
    "Detail",
    "Disagreement",
    "Finding",
    "FindingKind",
    "Fix",
    "FixKind",
    "HealthReport",
    "LibraryCopies",
    "Orphan",
    "Place",
    "PlaceKind",
    "Reason",
    "ReasonKind",
    "RequirementGraph",
    "Severity",
    "conda_copy",
    "examine",
    "is_cuda_wheel",
    "marker_environment",
    "orphaned_wheels",
    "requirement_graph",
]

_MODULES = {
    **dict.fromkeys(("examine", "marker_environment"), "checkup"),
    "conda_copy": "pairs",
    **dict.fromkeys(
        ("RequirementGraph", "is_cuda_wheel", "orphaned_wheels", "requirement_graph"),
        "requirements",
    ),
}


def __getattr__(name: str) -> Any:
    # Names resolve on first use, so `select` (which needs only conda_copy) loads only its module.
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = _MODULES.get(name, "model")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


def __dir__() -> list[str]:
    return list(__all__)
