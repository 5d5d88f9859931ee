"""Conda build numbers that say what PEP 825 says: which build of a matrix a machine should get.

A conda solver, among the builds of one version a machine can install, takes the highest build
number (equal numbers fall back to the newest upload: conda-forge's single ``+200`` for CUDA
leaves CUDA minors tied). PEP 825 ranks wheel variants by their properties against the machine.
:func:`build_order` ranks the matrix's wheel variants on a grid of machines (each driver and
toolkit of the matrix, each GPU generation its SM lists name, each x86-64 level) with the
bridge's own ranking, collects which build each machine prefers over which, and gives the
builds numbers in one order that agrees with every machine, when one exists. Pairs that
machines order both ways are :class:`OrderConflict` values: no single build number expresses them.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from variant_bridge.build_matrix import (
    PRIORITY_FEATURE,
    PRIORITY_NAMESPACE,
    Matrix,
    MatrixBuild,
    family_text,
)
from variant_bridge.mappings import MappingTables, load_tables
from variant_bridge.metadata import Provider, StaticFeature
from variant_bridge.ranking import Priorities, VariantRanker
from variant_bridge.release import X86_64
from variant_bridge.translate.forward import supported_properties
from variant_bridge.translate.from_conda import read_conda_specs

__all__ = ["BuildOrder", "OrderConflict", "build_order", "machines"]


@dataclass(frozen=True, slots=True)
class OrderConflict:
    """Two builds that machines prefer both ways (one build number cannot say both)."""

    first: str
    second: str
    first_wins_on: str
    """A machine preferring :attr:`first`, as conda specs (``__cuda=12.9 __cuda_arch=8.6``)."""
    second_wins_on: str


@dataclass(frozen=True, slots=True)
class BuildOrder:
    """The matrix's builds from least to most preferred, with their conda build numbers."""

    order: tuple[str, ...]
    numbers: dict[str, int]
    conflicts: tuple[OrderConflict, ...] = ()
    ties: tuple[tuple[str, str], ...] = ()
    """Pairs PEP 825 ranks equal on some machine (installers then take the first label)."""
    machines: int = 0
    families: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """Each build family of its own (``arm_variant_type=tegra``) and its order, least
    preferred first, when the matrix has one beside the main family."""


def _fallback_key(build: MatrixBuild) -> tuple[object, ...]:
    cuda = build.cuda.key if build.cuda is not None else (-1, -1)
    rocm = build.rocm or (-1, -1)
    priority = -(build.priority or 0)
    return (cuda, rocm, build.x86_64_level or 0, priority, build.label)


def _amd_machines(matrix: Matrix, tables: MappingTables) -> list[list[str]]:
    """An AMD GPU of each gfx name the ROCm builds list, with no ROCm runtime (every release is
    supported, newest first), and the first one with each ROCm release of the matrix."""
    from variant_bridge.gfx_archs import isa_of, isa_text

    amd = tables.amd
    names = dict.fromkeys(g for b in matrix.builds for g in b.gfx)
    isas = [isa_text(i) for g in names if (i := isa_of(g, amd.gfx_prefix)) is not None]
    if not isas:
        return []
    gpu = [f"{amd.driver_package}={amd.driver_version}"]
    releases = sorted({b.rocm for b in matrix.builds if b.rocm is not None})
    runtime = amd.runtime_packages[0]
    return [
        *([*gpu, f"{amd.arch_package}={isa}"] for isa in isas),
        *([*gpu, f"{amd.arch_package}={isas[0]}", f"{runtime}={r[0]}.{r[1]}"] for r in releases),
    ]


def machines(matrix: Matrix, tables: MappingTables | None = None) -> list[list[str]]:
    """The grid of machines, each as ``--from-conda`` specs: NVIDIA drivers and GPUs and CPU
    levels, then AMD GPUs (:func:`_amd_machines`)."""
    drivers = sorted(
        {b.cuda.key for b in matrix.builds if b.cuda}
        | {b.driver.key for b in matrix.builds if b.driver},
    )
    gpus = sorted({(t.major, t.minor) for b in matrix.builds if b.archs for t in b.archs.targets})
    levels = sorted({b.x86_64_level for b in matrix.builds if b.x86_64_level})
    grid: list[list[str]] = []
    for driver in [None, *drivers]:
        for gpu in [None, *gpus] if driver else [None]:
            for level in [None, *levels]:
                specs = []
                if driver is not None:
                    specs.append(f"__cuda={driver[0]}.{max(driver[1], 0)}")
                if gpu is not None:
                    specs.append(f"__cuda_arch={gpu[0]}.{gpu[1]}")
                if level is not None:
                    specs.append(f"__archspec=1={'x86_64' if level == 1 else f'x86_64_v{level}'}")
                grid.append(specs)
    return grid + _amd_machines(matrix, tables or load_tables())


def _priorities(matrix: Matrix, tables: MappingTables) -> Priorities:
    values = sorted({b.priority for b in matrix.builds if b.priority is not None})
    providers: tuple[Provider, ...] = ()
    if values:
        feature = StaticFeature(PRIORITY_FEATURE, tuple(str(v) for v in values))
        providers = (Provider(PRIORITY_NAMESPACE, static_properties=(feature,)),)
    namespaces = (tables.nvidia.namespace, tables.amd.namespace, X86_64, PRIORITY_NAMESPACE)
    return Priorities(namespaces, providers)


def _preferences(
    matrix: Matrix, tables: MappingTables
) -> tuple[dict[tuple[str, str], str], set[tuple[str, str]], int]:
    """``(better, worse) -> first machine saying so``, tied pairs, machines tried."""
    described = [(b.label, b.description(tables)) for b in matrix.builds]
    priorities = _priorities(matrix, tables)
    preferred: dict[tuple[str, str], str] = {}
    ties: set[tuple[str, str]] = set()
    grid = machines(matrix, tables)
    for specs in grid:
        facts = read_conda_specs(specs, platform=matrix.platform, tables=tables)
        supported = supported_properties(facts.environment, policy="driver", tables=tables)
        ranker = VariantRanker(supported, priorities)
        assessed = sorted(
            (
                (label, a)
                for label, a in ((lb, ranker.assess(d)) for lb, d in described)
                if a.compatible
            ),
            key=lambda item: (item[1].description.is_null, item[1].sort_key, item[0]),
        )
        shown = " ".join(specs) or "no GPU"
        for i, (better, a) in enumerate(assessed):
            for worse, b in assessed[i + 1 :]:
                if a.description == b.description:
                    continue  # the same wheel variant: nothing to order
                pair = (better, worse)
                if a.key == b.key and not b.description.is_null:
                    ties.add(pair)  # installers then take the first label: still an order
                    preferred.setdefault(pair, f"{shown} (equal rank: the label decides)")
                else:
                    preferred.setdefault(pair, shown)
    return preferred, ties, len(grid)


def _order(builds: Sequence[MatrixBuild], edges: Iterable[tuple[str, str]]) -> list[str]:
    """Least preferred first: a topological order of ``worse -> better`` edges, ties by the
    fallback key (CUDA, level, priority, label)."""
    key = {b.label: _fallback_key(b) for b in builds}
    after: dict[str, set[str]] = {b.label: set() for b in builds}
    waiting = {b.label: 0 for b in builds}
    for better, worse in edges:
        if better not in after[worse]:
            after[worse].add(better)
            waiting[better] += 1
    ready = [(key[label], label) for label, n in waiting.items() if n == 0]
    heapq.heapify(ready)
    order: list[str] = []
    while len(order) < len(builds):
        if not ready:  # a cycle (three-way conflicts): take the lowest by the fallback key
            label = min((n for n in waiting if n not in order), key=key.__getitem__)
        else:
            label = heapq.heappop(ready)[1]
        if label in order:
            continue
        order.append(label)
        for better in after[label]:
            waiting[better] -= 1
            if waiting[better] == 0:
                heapq.heappush(ready, (key[better], better))
    return order


def build_order(matrix: Matrix, *, tables: MappingTables | None = None) -> BuildOrder:
    """The consensus order of the matrix's builds and their build numbers (``build-number`` +
    position, 0 for the least preferred), with the conflicts that no order resolves.

    A build family of its own (``arm_variant_type=tegra``) is ordered and numbered among
    itself: its packages never compete with the main family's on one machine, and its wheel
    variants would duplicate theirs. :attr:`BuildOrder.order` is the main family's order (or the
    only family's); :attr:`BuildOrder.families` holds the others'."""
    tables = tables or load_tables()
    families = matrix.families(tables)
    if len(families) == 1:
        return _one_family(matrix, tables)
    parts = {f: _one_family(replace(matrix, builds=b), tables) for f, b in families.items()}
    main = next(iter(parts.values()))
    return BuildOrder(
        main.order,
        {label: n for part in parts.values() for label, n in part.numbers.items()},
        tuple(c for part in parts.values() for c in part.conflicts),
        tuple(t for part in parts.values() for t in part.ties),
        sum(part.machines for part in parts.values()),
        tuple((family_text(f), part.order) for f, part in parts.items() if f),
    )


def _one_family(matrix: Matrix, tables: MappingTables) -> BuildOrder:
    preferred, ties, count = _preferences(matrix, tables)
    conflicts = []
    for (better, worse), machine in sorted(preferred.items()):
        other = preferred.get((worse, better))
        if other is not None and better < worse:
            conflicts.append(OrderConflict(better, worse, machine, other))
    clashing = {(c.first, c.second) for c in conflicts} | {(c.second, c.first) for c in conflicts}
    edges = [pair for pair in preferred if pair not in clashing]
    order = _order(matrix.builds, edges)
    # Builds PEP 825 cannot tell apart (same properties) share a number: nothing orders them.
    shapes = {b.label: b.properties(tables) for b in matrix.builds}
    numbers: dict[str, int] = {}
    seen: dict[tuple[object, ...], int] = {}
    for label in order:
        shape = shapes[label]
        if shape not in seen:
            seen[shape] = len(seen)
        numbers[label] = matrix.build_number + seen[shape]
    return BuildOrder(tuple(order), numbers, tuple(conflicts), tuple(sorted(ties)), count)
