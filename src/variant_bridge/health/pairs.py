"""Which conda package is the same CUDA library as a PyPI wheel, in one environment.

``names.yaml`` pairs them (``nvidia-cublas-cu12`` and ``nvidia-cublas`` are ``libcublas``; kind
``cuda-library``). ``select`` warns with it before an install (the chosen wheel's requirements),
the health check reports with it after (the installed wheels). Kept apart from the findings so
the install path loads only this lookup.
"""

from __future__ import annotations

from variant_bridge.environment import CondaRecord, Environment
from variant_bridge.mappings import MappingTables, NameMapping

__all__ = ["conda_copy"]


def conda_copy(
    pypi_name: str, env: Environment, tables: MappingTables
) -> tuple[NameMapping, CondaRecord] | None:
    """The conda package of *env* that is the same CUDA library as the PyPI distribution
    *pypi_name* (``names.yaml`` kind ``cuda-library``), with its mapping; ``None`` when none is
    installed (or the name is no CUDA library)."""
    mapping = tables.names.conda_for_pypi(pypi_name)
    if mapping is None or mapping.kind != "cuda-library":
        return None
    for conda_name in (mapping.conda, *mapping.also_conda):
        record = env.conda_package(conda_name)
        if record is not None:
            return mapping, record
    return None
