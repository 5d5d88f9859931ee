"""Conda repodata records (``v3.whl``) for the wheels of one release (docs/semantics.md §12).

Each wheel becomes one record per place it holds in the priority plan
(:mod:`variant_bridge.priority`): ``depends`` carries ``python`` (from the tags and
``Requires-Python``), the platform tag's virtual package (``__glibc >=2.28``), the variant's
translated specs, its ``__cuda_arch`` cell, its CUDA toolkit evidence as ``cuda-version``, and the
``Requires-Dist`` on projects indexed in the same channel; ``build_number`` says the priority.
Static namespaces add nothing; a variant with an unmapped namespace gets a record that needs
``__variant_<namespace>``, a virtual package no machine has, so it is never chosen and the reason
is visible in the record.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import field
from types import MappingProxyType
from typing import Any, Literal

from packaging.utils import canonicalize_name

from variant_bridge._values import value
from variant_bridge.environment import Environment
from variant_bridge.filenames import WheelFilename
from variant_bridge.mappings import MappingTables, load_tables
from variant_bridge.markers import (
    Dependency,
    VariantValues,
    evaluate_dependencies,
    target_environment,
)
from variant_bridge.metadata import VariantMetadata
from variant_bridge.platform_tags import TargetPython
from variant_bridge.priority import (
    ArchCell,
    Conflict,
    Encoding,
    Placement,
    arch_intervals,
    plan_priority,
)
from variant_bridge.properties import VariantDescription
from variant_bridge.ranking import Priorities
from variant_bridge.solve.specs import (
    Refusal,
    platform_spec,
    python_spec,
    requires_python_spec,
    to_conda_version,
)
from variant_bridge.translate import cuda, to_conda_specs
from variant_bridge.translate.evidence import EvidenceKind, ToolkitEvidence, toolkit_evidence
from variant_bridge.translate.supported import NvidiaValue

__all__ = [
    "IndexSettings",
    "Release",
    "ReleaseRecords",
    "WheelFile",
    "WheelRecord",
    "release_records",
]

Form = Literal["rattler", "conda"]
UNMAPPED_PREFIX = "__variant_"


@value
class WheelFile:
    """One wheel as the index knows it.

    :param url: what the record's ``url`` says: the file name when the wheel sits beside the
        repodata, else its absolute URL.
    """

    filename: WheelFilename
    url: str
    sha256: str
    size: int
    requires_dist: tuple[str, ...] = ()
    requires_python: str | None = None
    variant: VariantDescription | None = None


@value
class Release:
    """The wheels of one project version and their merged variant metadata."""

    project: str
    version: str
    wheels: tuple[WheelFile, ...]
    metadata: VariantMetadata | None = None


@value
class IndexSettings:
    """How records are written: for which subdir, which priority encoding and spec form.

    :param projects: canonical names of every project indexed in the channel: a
        ``Requires-Dist`` on one of them becomes a dependency; the others are left to the wheel
        installer.
    """

    subdir: str
    encoding: Encoding = Encoding.CELLS
    form: Form = "rattler"
    projects: frozenset[str] = frozenset()
    conda_names: Mapping[str, str] | None = field(default=None, hash=False)
    """For ``convert``: canonical PyPI name -> conda name of every project converted in the run.
    Records are then named by it and *every* applying ``Requires-Dist`` becomes a dependency on
    a conda name (:mod:`~variant_bridge.solve.conda_dependencies`), or is listed in
    :attr:`ReleaseRecords.not_dependencies`."""


@value
class WheelRecord:
    """One ``v3.whl`` entry: its key in the repodata and the record."""

    key: str
    record: Mapping[str, Any] = field(hash=False)
    filename: str
    label: str | None
    cell: ArchCell | None = None


@value
class ReleaseRecords:
    """What :func:`release_records` made of one release, and what it could not say."""

    project: str
    version: str
    records: tuple[WheelRecord, ...]
    skipped: tuple[tuple[str, str], ...] = ()
    """``(wheel, reason)``: wheels that got no record."""
    unmapped: tuple[tuple[str, str], ...] = ()
    """``(label, reason)``: variants whose records can never be chosen."""
    conflicts: tuple[Conflict, ...] = ()
    left_to_installer: tuple[tuple[str, str], ...] = ()
    """``(wheel, requirement)``: ``Requires-Dist`` the solve leaves to uv/pip."""
    toolkits: Mapping[str, ToolkitEvidence] = field(
        default_factory=lambda: MappingProxyType({}), hash=False
    )
    not_dependencies: tuple[tuple[str, str, str], ...] = ()
    """``(wheel, requirement, reason)``: with ``conda_names``, requirements that cannot be
    conda dependencies."""


@value
class _Variant:
    """A label's conda side: the base requirements and what orders it."""

    description: VariantDescription
    groups: tuple[tuple[str, ...], ...]
    """A conjunction of disjunctions (``Translation.for_tool``), arch and toolkit excluded."""
    arch: tuple[NvidiaValue, ...]
    toolkit: str | None
    """``cuda-version >=12.8,<13`` from evidence stronger than the lower bound."""
    unmapped: str | None = None


def _static(metadata: VariantMetadata | None) -> frozenset[str]:
    if metadata is None:
        return frozenset()
    return frozenset(p.namespace for p in metadata.providers if p.is_static)


def _marker_environment(subdir: str, python: str | None, tables: MappingTables) -> dict[str, str]:
    values = target_environment(
        Environment(subdir), TargetPython.parse(python or "3.0"), tables=tables
    )
    if python is None:  # unknown: a marker using it is a problem, not 3.0
        values.pop("python_version", None)
        values.pop("python_full_version", None)
    return values


def _evidence_spec(evidence: ToolkitEvidence) -> str | None:
    strongest = evidence.strongest
    if strongest is None or strongest.kind is EvidenceKind.LOWER_BOUND:
        return None  # the lower bound's own cuda-version spec says it already
    said = strongest.cuda
    low = f"{said.major}.{said.minor}" if said.minor is not None else str(said.major)
    return f"cuda-version >={low},<{said.major + 1}"


def _variant(
    description: VariantDescription,
    static: frozenset[str],
    evidence: ToolkitEvidence,
    form: Form,
    tables: MappingTables,
) -> _Variant:
    nvidia = tables.nvidia
    arch_feature = next(f for f in nvidia.features if f.rule == "sm_arch")
    props = [p for p in description.properties if p.namespace not in static]
    is_arch = [p.namespace == nvidia.namespace and p.feature == arch_feature.name for p in props]
    arch = tuple(
        v
        for p, a in zip(props, is_arch, strict=True)
        if a and isinstance(v := cuda.nvidia_value(nvidia, arch_feature, p.value), NvidiaValue)
    )
    rest = [p for p, a in zip(props, is_arch, strict=True) if not a]
    translation = to_conda_specs(rest, tables=tables)
    unmapped = translation.unmapped + tuple(
        (p, "not an sm_arch value the NVIDIA provider defines")
        for p, a in zip(props, is_arch, strict=True)
        if a and not isinstance(cuda.nvidia_value(nvidia, arch_feature, p.value), NvidiaValue)
    )
    groups = list(translation.for_tool(form))
    uses_nvidia = any(p.namespace == nvidia.namespace for p in props)
    if uses_nvidia and not any(g[0].split()[0] == nvidia.driver_package for g in groups):
        groups.append((nvidia.driver_package,))  # the namespace needs a driver, as select says
    reason = None
    if unmapped:
        reason = "; ".join(dict.fromkeys(why for _, why in unmapped))
    return _Variant(description, tuple(groups), arch, _evidence_spec(evidence), reason)


def _unmapped_spec(description: VariantDescription, static: frozenset[str]) -> str:
    namespaces = sorted({p.namespace for p in description.properties} - static)
    return f"{UNMAPPED_PREFIX}{namespaces[0] if namespaces else 'unknown'}"


def _tag_preference(filename: WheelFilename) -> tuple[int, ...]:
    """Higher = preferred among wheels of one label that a target accepts together: a platform
    tag over ``any`` (and a newer glibc/macOS), a specific ABI over abi3 over none."""
    best: tuple[int, ...] = (0,)
    for tag in filename.tags:
        digits = [int(d) for d in tag.platform.split("_") if d.isdigit()]
        abi = 2 if tag.abi.startswith("cp") else 1 if tag.abi == "abi3" else 0
        best = max(best, (tag.platform != "any", *digits[:2], abi))
    return best


@value
class _Slot:
    wheel: WheelFile
    label: str | None
    tier: int
    """0: plain or never choosable, 1: null, 2: base placement, 3: cell placement."""
    position: int
    cell: ArchCell | None
    variant: _Variant | None


def _slots(
    release: Release, variants: Mapping[str, _Variant], plan_of: Mapping[str, Sequence[Placement]]
) -> list[_Slot]:
    slots: list[_Slot] = []
    for wheel in release.wheels:
        label = wheel.filename.label
        if label is None:
            slots.append(_Slot(wheel, None, 0, 0, None, None))
            continue
        variant = variants.get(label)
        if variant is None or variant.description.is_null:
            slots.append(_Slot(wheel, label, 1, 0, None, variant))
        elif variant.unmapped is not None:
            slots.append(_Slot(wheel, label, 0, 0, None, variant))
        else:
            for placement in plan_of.get(label, ()):
                tier = 2 if placement.cell is None else 3
                slots.append(_Slot(wheel, label, tier, placement.position, placement.cell, variant))
    return slots


def _build_numbers(slots: list[_Slot]) -> list[tuple[_Slot, int]]:
    """Base slots numbered 0.. in preference order; each cell's numbered above all of them."""

    def key(slot: _Slot) -> tuple[Any, ...]:
        return (slot.tier, slot.position, _tag_preference(slot.wheel.filename), slot.wheel.url)

    base = sorted((s for s in slots if s.tier < 3), key=key)
    numbered = [(slot, n) for n, slot in enumerate(base)]
    top = len(base)
    cells: dict[ArchCell, list[_Slot]] = {}
    for slot in slots:
        if slot.cell is not None:
            cells.setdefault(slot.cell, []).append(slot)
    for members in cells.values():
        numbered += [(slot, top + n) for n, slot in enumerate(sorted(members, key=key))]
    return numbered


def _arch_spec(variant: _Variant, cell: ArchCell | None) -> str | None:
    if cell is not None:
        return cell.spec
    if not variant.arch:
        return None
    spans = arch_intervals(variant.arch)
    return "__cuda_arch " + "|".join(f">={cuda.fmt(a)},<{cuda.fmt(b)}" for a, b in spans)


class _Builder:
    """Records of one release: the per-wheel facts computed once, then one record per slot."""

    def __init__(self, release: Release, settings: IndexSettings, tables: MappingTables) -> None:
        self.release = release
        self.settings = settings
        self.tables = tables
        self.skipped: list[tuple[str, str]] = []
        self.left: list[tuple[str, str]] = []
        self.not_conda: list[tuple[str, str, str]] = []
        self.static = _static(release.metadata)
        self.head: dict[str, list[str]] = {}
        self.needs: dict[str, list[str]] = {}

    def wheel_head(self, wheel: WheelFile) -> list[str] | None:
        """``python``, ``Requires-Python`` and platform specs; ``None`` (with the reason
        recorded) when the wheel does not belong in this subdir or conda cannot say it."""
        tags = wheel.filename.tags
        python = python_spec(tags)
        platform = platform_spec(tags, self.settings.subdir, tables=self.tables)
        for refusal in (python, platform):
            if isinstance(refusal, Refusal):
                self.skipped.append((str(wheel.filename), refusal.reason))
                return None
        head = [str(python)]
        requires_python = requires_python_spec(wheel.requires_python)
        if requires_python is not None:
            head.append(requires_python)
        if isinstance(platform, str):
            head.append(platform)
        return head

    def evaluated(
        self, wheel: WheelFile, description: VariantDescription | None
    ) -> list[Dependency]:
        """The wheel's ``Requires-Dist`` that apply to it: markers evaluated for this subdir,
        the wheel's Python (when its tags name one) and the variant."""
        environment = _marker_environment(
            self.settings.subdir, _wheel_python(wheel.filename), self.tables
        )
        evaluated = evaluate_dependencies(
            wheel.requires_dist, environment, VariantValues.of(description)
        )
        return list(evaluated.applying)

    def dependencies(self, wheel: WheelFile, description: VariantDescription | None) -> list[str]:
        """Dependencies on projects indexed in the channel; the rest is left to the installer.
        With ``conda_names`` (``convert``), every applying requirement, on conda names."""
        if self.settings.conda_names is not None:
            return self.conda_dependencies(wheel, description, self.settings.conda_names)
        specs: list[str] = []
        for dependency in self.evaluated(wheel, description):
            requirement = dependency.requirement
            name = canonicalize_name(requirement.name)
            version = to_conda_version(requirement.specifier)
            indexed = name in self.settings.projects and name != self.release.project
            if indexed and version is not None:
                specs.append(f"{name} {version}".strip())
            else:
                self.left.append((str(wheel.filename), dependency.stated))
        return specs

    def conda_dependencies(
        self,
        wheel: WheelFile,
        description: VariantDescription | None,
        converted: Mapping[str, str],
    ) -> list[str]:
        from variant_bridge.solve.conda_dependencies import conda_dependency

        name = str(wheel.filename)
        environment = _marker_environment(
            self.settings.subdir, _wheel_python(wheel.filename), self.tables
        )
        evaluated = evaluate_dependencies(
            wheel.requires_dist, environment, VariantValues.of(description)
        )
        specs: list[str] = []
        for dependency in evaluated.applying:
            if canonicalize_name(dependency.name) == self.release.project:
                continue
            found, problem = conda_dependency(
                dependency, converted=converted, tables=self.tables, wheel=name
            )
            specs += found
            if problem is not None:
                self.not_conda.append((name, problem.requirement, problem.reason))
        for problem_text in evaluated.problems:
            self.not_conda.append((name, problem_text, "its marker cannot be decided here"))
        return specs


def _wheel_python(filename: WheelFilename) -> str | None:
    """``3.12`` when every tag names CPython 3.12's own ABI; else ``None`` (unknown)."""
    found = set()
    for tag in filename.tags:
        abi = tag.abi
        if not (abi.startswith("cp") and abi[2:].isdigit() and len(abi) > 3):
            return None
        found.add(f"{abi[2]}.{abi[3:]}")
    return found.pop() if len(found) == 1 else None


def _descriptions(release: Release) -> dict[str, VariantDescription]:
    found: dict[str, VariantDescription] = {}
    if release.metadata is not None:
        found.update((d.label, d) for d in release.metadata.variants)
    for wheel in release.wheels:
        if wheel.variant is not None:
            found.setdefault(wheel.variant.label, wheel.variant)
    return found


def _evidence(
    builder: _Builder, descriptions: Mapping[str, VariantDescription]
) -> dict[str, ToolkitEvidence]:
    """Each label's toolkit evidence, read from its first wheel (they share a declaration)."""
    found: dict[str, ToolkitEvidence] = {}
    for wheel in sorted(builder.release.wheels, key=lambda w: str(w.filename)):
        label = wheel.filename.label
        if label is None or label in found:
            continue
        description = descriptions.get(label)
        if description is None or description.is_null:
            continue
        requirements = [d.requirement for d in builder.evaluated(wheel, description)]
        found[label] = toolkit_evidence(description, requirements, tables=builder.tables)
    return found


def _record(
    builder: _Builder, slot: _Slot, build_number: int, alternative: Sequence[str], index: int
) -> WheelRecord:
    wheel = slot.wheel
    release = builder.release
    depends = list(builder.head[wheel.url])
    variant = slot.variant
    if variant is not None and variant.unmapped is not None:
        depends.append(_unmapped_spec(variant.description, builder.static))
    elif variant is not None and not variant.description.is_null:
        depends += alternative
        arch = _arch_spec(variant, slot.cell)
        if arch is not None:
            depends.append(arch)
        if variant.toolkit is not None:
            depends.append(variant.toolkit)
    depends += builder.needs[wheel.url]
    parts = [slot.label or "whl"]
    if slot.cell is not None:
        parts.append(slot.cell.name)
    if index:
        parts.append(f"a{index}")
    build = "_".join([*parts, str(build_number)])
    names = builder.settings.conda_names or {}
    name = names.get(release.project, release.project)
    record = {
        "name": name,
        "version": release.version,
        "build": build,
        "build_number": build_number,
        "depends": list(dict.fromkeys(depends)),
        "subdir": builder.settings.subdir,
        "url": wheel.url,
        "sha256": wheel.sha256,
        "size": wheel.size,
    }
    key = f"{name}-{release.version}-{build}.whl"
    return WheelRecord(key, record, str(wheel.filename), slot.label, slot.cell)


def release_records(
    release: Release, settings: IndexSettings, *, tables: MappingTables | None = None
) -> ReleaseRecords:
    """The ``v3.whl`` records of one release's wheels for ``settings.subdir``."""
    tables = tables if tables is not None else load_tables()
    builder = _Builder(release, settings, tables)
    descriptions = _descriptions(release)
    evidence = _evidence(builder, descriptions)
    variants = {
        label: _variant(
            d, builder.static, evidence.get(label, ToolkitEvidence(label)), settings.form, tables
        )
        for label, d in descriptions.items()
    }
    kept = []
    for wheel in release.wheels:
        head = builder.wheel_head(wheel)
        if head is None:
            continue
        label = wheel.filename.label
        if label is not None and label not in descriptions:
            builder.skipped.append(
                (str(wheel.filename), f"label {label!r} is not in the variant metadata")
            )
            continue
        builder.head[wheel.url] = head
        builder.needs[wheel.url] = builder.dependencies(
            wheel, descriptions.get(label) if label else None
        )
        kept.append(wheel)
    release = Release(release.project, release.version, tuple(kept), release.metadata)
    builder.release = release
    ordered = [
        v.description for v in variants.values() if v.unmapped is None and not v.description.is_null
    ]
    toolkits = {
        (t.major, t.minor)
        for e in evidence.values()
        if (t := e.toolkit) is not None and t.minor is not None
    }
    plan = plan_priority(
        ordered, Priorities.of(release.metadata), platform=settings.subdir,
        toolkits=toolkits, encoding=settings.encoding, tables=tables,
    )  # fmt: skip
    plan_of: dict[str, list[Placement]] = {}
    for placement in plan.placements:
        plan_of.setdefault(placement.label, []).append(placement)
    records: list[WheelRecord] = []
    for slot, number in _build_numbers(_slots(release, variants, plan_of)):
        groups = slot.variant.groups if slot.variant is not None else ()
        for index, alternative in enumerate(itertools.product(*groups)):
            records.append(_record(builder, slot, number, alternative, index))
    unmapped = tuple(
        (label, v.unmapped) for label, v in sorted(variants.items()) if v.unmapped is not None
    )
    return ReleaseRecords(
        release.project, release.version, tuple(records), tuple(builder.skipped), unmapped,
        plan.conflicts, tuple(builder.left), MappingProxyType(evidence),
        tuple(dict.fromkeys(builder.not_conda)),
    )  # fmt: skip
