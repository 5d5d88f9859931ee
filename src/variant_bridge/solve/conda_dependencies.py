"""A converted wheel's ``Requires-Dist`` as conda dependencies, on conda names (``convert``).

A converted package must need what its wheel needs, or conda installs it without its
dependencies. Each requirement that applies on the subdir becomes a conda spec on the package
conda will have: the package converted in the same run, else conda-forge's name for the same
Python distribution (``torch`` -> ``pytorch``, from ``mappings/names.yaml``), else the PyPI name
itself, which is conda-forge's name for most Python packages (docs/conda-solvers.md, "Converted
packages"). What cannot be a conda dependency is returned with the reason, for the caller to
list: a direct URL, a CUDA library wheel (``nvidia-cublas-cu12``) that was not converted too
(conda-forge's ``libcublas`` lays the library out under ``lib/``, not where the wheel's code
loads it from, ``site-packages/nvidia/``). A version conda cannot express is refused with its
text: a dependency that means something else is worse than none.
"""

from __future__ import annotations

from collections.abc import Mapping

from packaging.utils import canonicalize_name

from variant_bridge._values import value
from variant_bridge.errors import SolveError, quote
from variant_bridge.mappings import MappingTables
from variant_bridge.markers import Dependency
from variant_bridge.solve.specs import to_conda_version

__all__ = ["NotConda", "conda_dependency", "conda_name"]


@value
class NotConda:
    """A requirement that cannot be a conda dependency, and why."""

    requirement: str
    reason: str


def conda_name(project: str, tables: MappingTables) -> str:
    """The name a converted PyPI *project* takes: conda-forge's when the table maps that Python
    distribution to one conda package without a build restriction (``torch`` -> ``pytorch``,
    ``cupy-cuda12x`` -> ``cupy``), so the converted package replaces conda-forge's instead of
    clobbering its files under another name; else the canonical PyPI name."""
    mapping = tables.names.conda_for_pypi(project)
    if mapping is None or mapping.kind != "python" or mapping.build is not None:
        return canonicalize_name(project)
    return mapping.conda


def conda_dependency(
    dependency: Dependency,
    *,
    converted: Mapping[str, str],
    tables: MappingTables,
    wheel: str,
) -> tuple[tuple[str, ...], NotConda | None]:
    """The conda specs of one applying requirement of *wheel* (none or one, plus the specs its
    table entry implies, ``cuda-version 12.*`` for ``cupy-cuda12x``), and what of it is not a
    conda dependency.

    :param converted: canonical PyPI name -> conda name of every project converted in the run.
    :raises SolveError: its version specifier has no conda form (naming *wheel* and the text).
    """
    requirement = dependency.requirement
    stated = dependency.stated
    name = canonicalize_name(requirement.name)
    if requirement.url:
        return (), NotConda(stated, "a direct URL reference, which a conda dependency cannot be")
    version = to_conda_version(requirement.specifier)
    if version is None:
        raise SolveError(
            f"{wheel}: requirement {quote(stated)} has no conda form (conda cannot express "
            f"{quote(str(requirement.specifier))}); refusing to write a dependency that would "
            "mean something else"
        )
    extras = (
        NotConda(stated, f"extras [{','.join(sorted(requirement.extras))}] are not converted")
        if requirement.extras
        else None
    )
    if name in converted:
        return (f"{converted[name]} {version}".strip(),), extras
    mapping = tables.names.conda_for_pypi(name)
    if mapping is None:
        return (f"{name} {version}".strip(),), extras
    if mapping.kind != "python":
        return (), NotConda(
            stated,
            f"the wheel's files (site-packages) are not what conda-forge's {mapping.conda} "
            f"provides; convert {name} in the same run to keep this dependency",
        )
    build = f" {mapping.build}" if mapping.build is not None else ""
    spec = f"{mapping.conda} {version or '*'}{build}" if build else f"{mapping.conda} {version}"
    return (spec.strip(), *mapping.requires), extras
