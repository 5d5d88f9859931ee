"""PEP 825 variant priority as conda build numbers, so a conda solver picks what ``select`` picks.

A conda solver takes the highest version, then the highest ``build_number`` among the records
whose dependencies the environment satisfies. PEP 825's order is richer: each variant's rank comes
from where its best *supported* value sits in the environment's lists, so the order of two
variants can depend on the machine. With torch-like ``sm_arch`` lists, ``a = {80, 90}`` and
``b = {86, 90}`` tie on a 9.0 GPU (the label decides) but ``b`` wins on an 8.6 GPU: no single
build number per label says both (docs/semantics.md §12).

Every other feature the bridge maps keeps one order whatever the machine: a newer CUDA lower
bound, a higher x86-64 level, a flag the CPU has. The machine only decides which values are
supported. ``sm_arch`` is different because each GPU supports its own generation's values only,
and a variant's *best* value is the highest one at or below the GPU. So:

- ``rank`` (:attr:`Encoding.RANK`): one record per variant, ``build_number`` from one order
  merged over representative environments; when two environments order a pair differently that
  is a :class:`Conflict`, reported, never hidden.
- ``cells`` (:attr:`Encoding.CELLS`, the default): the ``__cuda_arch`` axis is cut at every value
  the variants declare (and at each generation's end); a variant gets one record per interval
  (a *cell*) where its ``sm_arch`` is supported, with ``__cuda_arch >=lo,<hi`` among its
  dependencies and the build number of its place in that cell's order. Variants without
  ``sm_arch`` get one *base* record for machines outside every cell (no ``__cuda_arch``),
  numbered below every cell record, and a record in each cell where they outrank a variant with
  code for it (a ROCm or CPU-level build ranked below every CUDA build needs none: its base
  record does the same).

The order of each cell (or of the whole package, for ``rank``) is read from :mod:`ranking` itself,
the code ``select`` runs, over representative environments: every declared CUDA bound as the
driver, every toolkit the variants state, the cell's lowest GPU, every CPU of the platform's
family the variants distinguish. Pairs never compatible together need no order; they keep the
order of the most complete ranking seen.

This module is pure (it builds :class:`~variant_bridge.environment.Environment` values and asks
:func:`~variant_bridge.translate.supported_properties`); writing the records is
:mod:`variant_bridge.solve`'s.
"""

from __future__ import annotations

import enum
import functools
import itertools
from collections.abc import Iterable, Mapping, Sequence

from variant_bridge._values import value
from variant_bridge.environment import Environment, Source, Toolkit, VirtualPackage
from variant_bridge.mappings import CpuTable, MappingTables, load_tables
from variant_bridge.properties import VariantDescription
from variant_bridge.ranking import Priorities, VariantRanker
from variant_bridge.translate import cuda
from variant_bridge.translate.forward import supported_properties
from variant_bridge.translate.supported import NvidiaValue, SupportedProperties

__all__ = [
    "ArchCell",
    "Conflict",
    "Encoding",
    "Placement",
    "PriorityPlan",
    "arch_intervals",
    "plan_priority",
]

Version = tuple[int, int]
_DECLARED = Source.FROM_CONDA


class Encoding(enum.Enum):
    """How variant priority is written into conda records; the value is the CLI's word."""

    RANK = "rank"
    """One record per variant; one build number per label (conda/conda-pypi#361's plan)."""
    CELLS = "cells"
    """One record per variant and ``__cuda_arch`` interval where it is supported."""


@value
class ArchCell:
    """An interval ``[low, high)`` of ``__cuda_arch`` (compute capability ``major.minor``)."""

    low: Version
    high: Version

    @property
    def spec(self) -> str:
        return f"__cuda_arch >={cuda.fmt(self.low)},<{cuda.fmt(self.high)}"

    @property
    def name(self) -> str:
        """``sm86_90``: a build-string-safe name of the cell (lowest GPU, first GPU above)."""
        return f"sm{self.low[0]}{self.low[1]}_{self.high[0]}{self.high[1]}"

    def __str__(self) -> str:
        return f"[{cuda.fmt(self.low)}, {cuda.fmt(self.high)})"


@value
class Placement:
    """One record to write for a variant: where it applies and its place in that order.

    :param cell: ``None`` for the base record (every machine; below every cell record).
    :param position: 0 = least preferred within its cell (or the base).
    """

    label: str
    cell: ArchCell | None
    position: int


@value
class Conflict:
    """Two variants that representative environments order both ways: one build number each
    cannot make the solver agree with ``select`` on all of them."""

    first: str
    second: str
    where: str
    """Where it happens, in words (the cell, or ``every __cuda_arch`` for ``rank``)."""

    def __str__(self) -> str:
        return (
            f"{self.first} and {self.second} rank in both orders ({self.where}): "
            "one build number per label cannot express it; use --priority cells"
        )


@value
class PriorityPlan:
    """The records one package version needs, and what its encoding cannot express."""

    encoding: Encoding
    placements: tuple[Placement, ...]
    cells: tuple[ArchCell, ...] = ()
    conflicts: tuple[Conflict, ...] = ()

    def of(self, label: str) -> tuple[Placement, ...]:
        return tuple(p for p in self.placements if p.label == label)


def _sm_values(variant: VariantDescription, tables: MappingTables) -> list[NvidiaValue]:
    table = tables.nvidia
    feature = next((f for f in table.features if f.rule == "sm_arch"), None)
    if feature is None:
        return []
    found = []
    for prop in variant.properties:
        if prop.namespace == table.namespace and prop.feature == feature.name:
            read = cuda.nvidia_value(table, feature, prop.value)
            if isinstance(read, NvidiaValue):
                found.append(read)
    return found


def arch_intervals(values: Iterable[NvidiaValue]) -> tuple[tuple[Version, Version], ...]:
    """Where ``select`` supports these ``sm_arch`` values (the provider's rule, semantics §3.1):
    ``{MN}_real`` on GPUs ``M.N <= A < (M+1).0``, ``{M}0_virtual`` on ``M.0 <= A < (M+1).0``;
    merged, sorted."""
    spans = sorted(
        ((v.major, v.minor if v.kind == "real" else 0), (v.major + 1, 0)) for v in values
    )
    merged: list[tuple[Version, Version]] = []
    for low, high in spans:
        if merged and low <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], high))
        else:
            merged.append((low, high))
    return tuple(merged)


def _cells(values: Iterable[NvidiaValue]) -> tuple[ArchCell, ...]:
    """The intervals between consecutive boundaries where at least one value is supported."""
    values = list(values)
    spans = arch_intervals(values)
    points = sorted(
        {p for v in values for p in ((v.major, v.minor), (v.major, 0), (v.major + 1, 0))}
    )
    return tuple(
        ArchCell(low, high)
        for low, high in itertools.pairwise(points)
        if any(s_low <= low < s_high for s_low, s_high in spans)
    )


def _bounds(variants: Iterable[VariantDescription], tables: MappingTables) -> list[Version]:
    table = tables.nvidia
    names = {f.name for f in table.features if f.rule in ("cuda_lower_bound", "cuda_upper_bound")}
    found = {
        shape
        for v in variants
        for p in v.properties
        if p.namespace == table.namespace
        and p.feature in names
        and (shape := cuda.major_minor(p.value)) is not None
    }
    return sorted(found)


@value
class _Axes:
    """The representative values of each fact that can change ``select``'s order."""

    drivers: tuple[Version | None, ...]
    toolkits: tuple[Version | None, ...]
    cpus: tuple[str | None, ...]
    amd: tuple[_AmdGpu | None, ...] = (None,)
    """AMD machines: ``(__amdgpu_arch, ROCm runtime or None)`` for each declared gfx name (no
    runtime: every ROCm version is supported) and each declared ROCm version."""


_AmdGpu = tuple[str, "str | None"]


def _amd_axis(
    variants: Sequence[VariantDescription], tables: MappingTables
) -> tuple[_AmdGpu | None, ...]:
    from variant_bridge.gfx_archs import isa_of, isa_text

    amd = tables.amd
    values: dict[str, list[str]] = {"gfx_arch": [], "rocm_version": []}
    for v in variants:
        for p in v.properties:
            if p.namespace == amd.namespace and p.feature in values:
                values[p.feature].append(p.value)
    isas = [
        isa_text(i) for g in dict.fromkeys(values["gfx_arch"]) if (i := isa_of(g, amd.gfx_prefix))
    ]
    if not isas:
        return (None,)
    runtimes = sorted(set(values["rocm_version"]))
    return (None, *((isa, None) for isa in isas), *((isas[0], r) for r in runtimes))


def _axes(
    variants: Sequence[VariantDescription],
    toolkits: Iterable[Version],
    platform: str,
    tables: MappingTables,
) -> _Axes:
    nvidia = tables.nvidia.namespace
    uses_nvidia = any(nvidia in v.namespaces for v in variants)
    bounds = _bounds(variants, tables)
    drivers: tuple[Version | None, ...] = (None,)
    kits: tuple[Version | None, ...] = (None,)
    if uses_nvidia:
        drivers = (None, *(bounds or [(12, 0)]))
        kits = (None, *sorted({*bounds, *toolkits}))
    cpu_table = _cpu_table(platform, tables)
    cpus: tuple[str | None, ...] = (None,)
    if cpu_table is not None and any(cpu_table.namespace in v.namespaces for v in variants):
        from variant_bridge.translate.microarchitectures import profiles

        cpus = (None, *sorted(profiles(cpu_table)))
    return _Axes(drivers, kits, cpus, _amd_axis(variants, tables))


def _cpu_table(platform: str, tables: MappingTables) -> CpuTable | None:
    info = tables.platform.subdirs.get(platform)
    if info is None or info.cpu_family is None:
        return None
    return next((t for t in tables.cpus if t.archspec_family == info.cpu_family), None)


def _environment(
    platform: str,
    driver: Version | None,
    toolkit: Version | None,
    arch: Version | None,
    cpu: str | None,
    *,
    amd: _AmdGpu | None = None,
) -> Environment:
    packages = []
    rocm = None
    if amd is not None:
        packages.append(VirtualPackage("__amdgpu", "0", source=_DECLARED))
        packages.append(VirtualPackage("__amdgpu_arch", amd[0], source=_DECLARED))
        rocm = Toolkit("rocm", amd[1], _DECLARED) if amd[1] is not None else None
    if driver is not None:
        packages.append(VirtualPackage("__cuda", cuda.fmt(driver), source=_DECLARED))
        if arch is not None:
            packages.append(VirtualPackage("__cuda_arch", cuda.fmt(arch), source=_DECLARED))
    if cpu is not None:
        packages.append(VirtualPackage("__archspec", "1", cpu, source=_DECLARED))
    kit = Toolkit("cuda-version", cuda.fmt(toolkit), _DECLARED) if toolkit is not None else None
    return Environment(
        platform, tuple(packages), kit, origin="representative environment", rocm=rocm
    )


class _Votes:
    """Pairwise orders seen over the environments of one cell, and the fullest ranking."""

    def __init__(self) -> None:
        self.before: dict[tuple[str, str], int] = {}
        self.reference: list[str] = []

    def add(self, ranked: Sequence[str]) -> None:
        for i, first in enumerate(ranked):
            for second in ranked[i + 1 :]:
                self.before[(first, second)] = self.before.get((first, second), 0) + 1
        if len(ranked) > len(self.reference):
            self.reference = list(ranked)

    def conflicts(self) -> list[tuple[str, str]]:
        return sorted((a, b) for a, b in self.before if a < b and (b, a) in self.before)

    def order(self, labels: Sequence[str]) -> list[str]:
        """Most preferred first: the majority of votes per pair, completed by the reference
        ranking, then by label (a topological sort that breaks cycles by fewest losses)."""
        seen = {label: i for i, label in enumerate(self.reference)}
        key = {label: (seen.get(label, len(seen)), label) for label in labels}
        wins = {
            (a, b)
            for (a, b), n in self.before.items()
            if n > self.before.get((b, a), 0) and a in key and b in key
        }
        remaining = sorted(labels, key=key.__getitem__)
        result: list[str] = []
        while remaining:
            losses = {x: sum((y, x) in wins for y in remaining) for x in remaining}
            best = min(remaining, key=lambda x: (losses[x], key[x]))
            result.append(best)
            remaining.remove(best)
        return result


@functools.lru_cache(maxsize=4096)
def _supported(
    platform: str,
    driver: Version | None,
    toolkit: Version | None,
    arch: Version | None,
    cpu: str | None,
    *,
    amd: _AmdGpu | None = None,
) -> SupportedProperties:
    """A representative machine's supported properties (a pure function of these facts and the
    process's tables: releases indexed together ask for the same machines)."""
    return supported_properties(_environment(platform, driver, toolkit, arch, cpu, amd=amd))


def _ranked(
    members: Sequence[VariantDescription], supported: SupportedProperties, priorities: Priorities
) -> list[str]:
    ranker = VariantRanker(supported, priorities)
    return [r.label for r in ranker.rank(members) if r.compatible and not r.description.is_null]


def _votes(
    members: Sequence[VariantDescription],
    arches: Sequence[Version | None],
    axes: _Axes,
    platform: str,
    priorities: Priorities,
) -> _Votes:
    votes = _Votes()
    for arch, driver, kit, cpu, amd in itertools.product(
        arches, axes.drivers, axes.toolkits, axes.cpus, axes.amd
    ):
        if kit is not None and (driver is None or kit[0] > driver[0]):
            continue  # conda's cuda-version X.Y constrains __cuda >=X
        supported = _supported(platform, driver, kit, arch, cpu, amd=amd)
        votes.add(_ranked(members, supported, priorities))
    return votes


def _placed(order: Sequence[str], cell: ArchCell | None) -> list[Placement]:
    """Placements of *order* (most preferred first): position 0 is the least preferred."""
    return [Placement(label, cell, len(order) - 1 - i) for i, label in enumerate(order)]


def _with_code_for(order: Sequence[str], arch_of: Mapping[str, Sequence[NvidiaValue]]) -> list[str]:
    """A cell's order without its tail of variants that have no ``sm_arch``: ranked below every
    variant with code for the cell's GPUs, they need no record of the cell, since their base
    records (below every cell) keep the same order among themselves. A ROCm build ranked below
    the CUDA builds so gets no ``__cuda_arch`` cell (torch's namespaces put nvidia first)."""
    end = len(order)
    while end and not arch_of[order[end - 1]]:
        end -= 1
    return list(order[:end])


def plan_priority(
    variants: Sequence[VariantDescription],
    priorities: Priorities = Priorities(),  # noqa: B008 (frozen: a @value)
    *,
    platform: str,
    toolkits: Iterable[Version] = (),
    encoding: Encoding = Encoding.CELLS,
    tables: MappingTables | None = None,
) -> PriorityPlan:
    """The records (cells and positions) that make a solver agree with ``select``.

    :param variants: the non-null variants of one package version whose properties all map to
        conda (the null variant and unmapped ones get records of their own, outside any order).
    :param priorities: the package's own priorities (:meth:`Priorities.of` its metadata).
    :param platform: the conda subdir the records are for (its CPU family matters).
    :param toolkits: the CUDA toolkits the variants' evidence states (representative
        ``cuda-version`` values).
    """
    tables = tables if tables is not None else load_tables()
    members = [v for v in variants if not v.is_null]
    axes = _axes(members, toolkits, platform, tables)
    arch_of = {v.label: _sm_values(v, tables) for v in members}
    cells = _cells(v for values in arch_of.values() for v in values)
    if encoding is Encoding.RANK or not cells:
        arches: list[Version | None] = [None, *(c.low for c in cells)]
        votes = _votes(members, arches, axes, platform, priorities)
        order = votes.order([v.label for v in members])
        where = "every __cuda_arch"
        conflicts = tuple(Conflict(a, b, where) for a, b in votes.conflicts())
        return PriorityPlan(encoding, tuple(_placed(order, None)), (), conflicts)
    base = [v for v in members if not arch_of[v.label]]
    placements_list: list[Placement] = []
    conflicts_list: list[Conflict] = []
    if base:
        votes = _votes(base, [None], axes, platform, priorities)
        order = votes.order([v.label for v in base])
        placements_list += _placed(order, None)
        conflicts_list += [Conflict(a, b, "no __cuda_arch") for a, b in votes.conflicts()]
    ordered: list[tuple[ArchCell, list[str]]] = []
    for cell in cells:
        inside = [
            v
            for v in members
            if not arch_of[v.label]
            or any(low <= cell.low < high for low, high in arch_intervals(arch_of[v.label]))
        ]
        votes = _votes(inside, [cell.low], axes, platform, priorities)
        conflicts_list += [Conflict(a, b, f"__cuda_arch in {cell}") for a, b in votes.conflicts()]
        order = _with_code_for(votes.order([v.label for v in inside]), arch_of)
        if ordered and ordered[-1][0].high == cell.low and ordered[-1][1] == order:
            ordered[-1] = (ArchCell(ordered[-1][0].low, cell.high), order)  # same order: merge
        else:
            ordered.append((cell, order))
    for cell, order in ordered:
        placements_list += _placed(order, cell)
    cells = tuple(cell for cell, _ in ordered)
    return PriorityPlan(encoding, tuple(placements_list), cells, tuple(conflicts_list))


def positions(plan: PriorityPlan) -> Mapping[str, int]:
    """Label -> position for a plan with one record per label (``rank``)."""
    return {p.label: p.position for p in plan.placements if p.cell is None}
