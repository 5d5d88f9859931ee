"""Who requires whom among installed distributions, and the CUDA wheels nothing requires.

Each distribution's ``Requires-Dist`` lines are evaluated for the target (ordinary markers) and
for that distribution's own variant (variant markers). An installed distribution does not record
which extras were installed, so a line of an extra counts as a requirement, and so does a line
whose marker the target does not decide (it may apply): an *orphan* is a wheel nothing can need.

Only lines naming a distribution of interest are parsed (a cheap look at the name first), so a
prefix of hundreds of packages costs a few string comparisons per line.

:func:`orphaned_wheels` is the reusable piece: ``doctor`` uses it for an environment as it is, and
``install`` can use it on the target's state after an install (the leftovers of a replaced build).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from packaging.utils import canonicalize_name

from variant_bridge._patterns import Lazy
from variant_bridge._values import value
from variant_bridge.environment import PythonDistribution
from variant_bridge.errors import RequirementError
from variant_bridge.mappings import MappingTables, load_tables
from variant_bridge.markers import Dependency, VariantValues, parse_dependency

__all__ = [
    "RequirementGraph",
    "is_cuda_wheel",
    "needed_wheels",
    "orphaned_wheels",
    "requirement_graph",
]

_NAME_RE = Lazy(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_CUDA_KINDS = frozenset({"cuda-library", "cuda-meta"})


def is_cuda_wheel(name: str, *, tables: MappingTables | None = None) -> bool:
    """A PyPI distribution that only carries CUDA libraries: ``names.yaml`` maps it to a conda
    CUDA library (``nvidia-cublas-cu12``, ``cutensor-cu12``), or it is an ``nvidia-*`` wheel the
    table does not call a Python package (``nvidia-ml-py`` is one: users install it themselves)."""
    mapping = (tables or load_tables()).names.conda_for_pypi(name)
    if mapping is not None:
        return mapping.kind in _CUDA_KINDS
    return canonicalize_name(name).startswith("nvidia-")


def _values(dist: PythonDistribution) -> VariantValues:
    if dist.variant is not None:
        return VariantValues.of(dist.variant)
    return VariantValues(label=dist.unknown_variant_label or "")


def _applies(dependency: Dependency, environment: Mapping[str, str], values: VariantValues) -> bool:
    """The line applies to the target without an extra, or with one of the extras it names.

    :raises RequirementError: a comparison the target does not decide.
    """
    for extra in ("", *sorted(dependency.marker_extras)):
        if dependency.applies({**environment, "extra": extra}, values):
            return True
    return False


@value
class RequirementGraph:
    """For each distribution of interest, the installed distributions that require it."""

    required_by: Mapping[str, tuple[str, ...]]
    """Canonical name -> canonical names of its dependents, in the order given."""
    problems: tuple[str, ...] = ()
    """Lines that could not be parsed or evaluated (each then counted as applying)."""

    def dependents(self, name: str) -> tuple[str, ...]:
        return self.required_by.get(canonicalize_name(name), ())


def requirement_graph(
    dists: Iterable[PythonDistribution], environment: Mapping[str, str], wanted: Iterable[str]
) -> RequirementGraph:
    """Which of *dists* require each of the *wanted* names (canonical), on the target.

    :param environment: the target's PEP 508 marker values
        (:func:`~variant_bridge.markers.target_environment`).
    """
    targets = frozenset(canonicalize_name(n) for n in wanted)
    found: dict[str, list[str]] = {name: [] for name in targets}
    problems: list[str] = []
    for dist in dists:
        owner = canonicalize_name(dist.name)
        values = _values(dist)
        for line in dist.requires:
            match = _NAME_RE.match(line)
            if match is None or canonicalize_name(match.group(1)) not in targets:
                continue  # names nothing of interest (or is no requirement: parsing says why)
            try:
                dependency = parse_dependency(line)
                if not _applies(dependency, environment, values):
                    continue
            except RequirementError as e:
                problems.append(f"{dist.name} {dist.version}: {e}")
            name = canonicalize_name(match.group(1))
            if owner != name and owner not in found[name]:
                found[name].append(owner)
    return RequirementGraph({k: tuple(v) for k, v in found.items()}, tuple(problems))


def orphaned_wheels(
    dists: Iterable[PythonDistribution],
    environment: Mapping[str, str],
    *,
    tables: MappingTables | None = None,
) -> tuple[tuple[PythonDistribution, ...], tuple[str, ...]]:
    """The CUDA wheels (:func:`is_cuda_wheel`) among *dists* that nothing else installed needs,
    directly or through other CUDA wheels, and the lines that could not be evaluated.

    Every other distribution is a root (something a user or a conda package may need); a CUDA
    wheel is needed when a root requires it, or a needed CUDA wheel does (``nvidia-cudnn-cu12``
    requires ``nvidia-cublas-cu12``).

    :returns: the orphans in the order of *dists*, and the problems.
    """
    tables = tables if tables is not None else load_tables()
    every = list(dists)
    cuda = {canonicalize_name(d.name): d for d in every if is_cuda_wheel(d.name, tables=tables)}
    if not cuda:
        return (), ()
    graph = requirement_graph(every, environment, cuda)
    needed = needed_wheels(graph, cuda)
    return tuple(d for n, d in cuda.items() if n not in needed), graph.problems


def needed_wheels(graph: RequirementGraph, cuda: Iterable[str]) -> frozenset[str]:
    """Which of the *cuda* wheels (canonical names, all in *graph*) something else installed
    needs, directly or through other needed ones."""
    names = frozenset(cuda)
    needed: set[str] = set()
    todo = [name for name in names if any(r not in names for r in graph.dependents(name))]
    while todo:
        name = todo.pop()
        if name in needed:
            continue
        needed.add(name)
        todo.extend(n for n in names if name in graph.dependents(n))
    return frozenset(needed)
