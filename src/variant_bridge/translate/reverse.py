"""Reverse: a wheel's variant properties -> the conda specs it needs (semantics.md §3-5).

Values of one feature are OR-ed (one spec per package, version specs joined with ``|``); features
are AND-ed. CPU namespaces give one requirement on ``__archspec``: a CEP 29 regex spec (form
``rattler``) and its enumerated alternatives (form ``conda``).

>>> to_conda_specs([VariantProperty.parse("nvidia :: cuda_version_lower_bound :: 12.8")]).specs
('__cuda >=12.8', 'cuda-version >=12.8,<13')
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, Literal

from variant_bridge._values import value
from variant_bridge.errors import quote
from variant_bridge.mappings import CpuTable, MappingTables, NameTable, NvidiaTable, load_tables
from variant_bridge.properties import VariantProperty
from variant_bridge.translate import cuda, microarchitectures
from variant_bridge.translate.amd import amd_specs, intel_unmapped

__all__ = ["CondaSpec", "SpecForm", "Translation", "to_conda_specs"]

SpecForm = Literal["any", "rattler", "conda"]

# Release prefixes of `abi_dependency`: rattler's version numbers are 64-bit, so at most 18
# digits a component (dates like 20240101 fit; a longer number makes a spec no client parses).
_ABI_VALUE_RE = re.compile(r"(?:0|[1-9][0-9]{0,17})(?:\.(?:0|[1-9][0-9]{0,17})){0,2}")


@value
class CondaSpec:
    """One conda match spec and which clients understand it.

    ``any``: every conda client. ``rattler``: uses a CEP 29 regex build (rattler, pixi).
    ``conda``: one enumerated alternative of the ``rattler`` spec named by :attr:`alternative_to`,
    for conda/mamba, which match only exact builds and cannot OR separate specs: the requirement
    holds when ANY alternative matches, so never AND them.
    """

    spec: str
    form: SpecForm = "any"
    alternative_to: str | None = None


@value
class Translation:
    """The conda specs a set of properties needs.

    :param specs: every spec string, deduplicated, in a stable order. When forms mix (CPU
        namespaces) these are NOT one conjunction: use :meth:`for_tool` or :attr:`conda_specs`.
    :param by_property: each mapped property with the specs it needs on its own.
    :param unmapped: ``(property, reason)`` for properties with no conda counterpart.
    :param conda_specs: :attr:`specs` with their form (see :class:`CondaSpec`).
    """

    specs: tuple[str, ...] = ()
    by_property: tuple[tuple[VariantProperty, tuple[CondaSpec, ...]], ...] = ()
    unmapped: tuple[tuple[VariantProperty, str], ...] = ()
    conda_specs: tuple[CondaSpec, ...] = ()

    def for_tool(self, tool: Literal["rattler", "conda"]) -> tuple[tuple[str, ...], ...]:
        """Requirements for *tool*: a conjunction of groups, each group a disjunction of specs.

        rattler/pixi: every ``any`` and ``rattler`` spec, one per group. conda/mamba: every
        ``any`` spec, plus one group of enumerated alternatives per ``rattler`` spec.
        """
        groups: list[tuple[str, ...]] = []
        for cs in self.conda_specs:
            if cs.form == "any" or (cs.form == "rattler" and tool == "rattler"):
                groups.append((cs.spec,))
            elif cs.form == "rattler":
                groups.append(
                    tuple(a.spec for a in self.conda_specs if a.alternative_to == cs.spec)
                )
        return tuple(groups)

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape of ``variant-bridge translate --json``."""
        return {
            "specs": list(self.specs),
            "by_property": {str(p): [c.spec for c in specs] for p, specs in self.by_property},
            "unmapped": [{"property": str(p), "reason": r} for p, r in self.unmapped],
            "forms": [
                {"spec": c.spec, "form": c.form, "alternative_to": c.alternative_to}
                for c in self.conda_specs
            ],
        }


def to_conda_specs(
    properties: Iterable[VariantProperty], *, tables: MappingTables | None = None
) -> Translation:
    """The conda specs a wheel with *properties* needs."""
    tables = tables if tables is not None else load_tables()
    groups: dict[str, dict[str, list[VariantProperty]]] = {}
    for prop in dict.fromkeys(properties):
        groups.setdefault(prop.namespace, {}).setdefault(prop.feature, []).append(prop)

    out = _Builder()
    for namespace, features in groups.items():
        _namespace_specs(tables, namespace, features, out)
    return out.build()


def _namespace_specs(
    tables: MappingTables,
    namespace: str,
    features: dict[str, list[VariantProperty]],
    out: _Builder,
) -> None:
    cpu = tables.cpu(namespace)
    if namespace == tables.nvidia.namespace:
        for feature, props in features.items():
            _nvidia_specs(tables.nvidia, feature, props, out)
    elif cpu is not None:
        _cpu_specs(cpu, features, out)
    elif namespace == tables.names.abi_namespace:
        for props in features.values():
            _abi_specs(tables.names, props, out)
    elif namespace == tables.amd.namespace:
        for feature, props in features.items():
            _amd_specs(tables, feature, props, out)
    else:
        reason = (
            intel_unmapped(tables.intel)
            if namespace == tables.intel.namespace
            else f"no mapping for namespace {quote(namespace)} (variant-bridge maps "
            f"{', '.join(tables.namespaces)})"
        )
        for props in features.values():
            for p in props:
                out.missing[p] = reason


class _Builder:
    def __init__(self) -> None:
        self.specs: dict[CondaSpec, None] = {}
        self.by_property: dict[VariantProperty, tuple[CondaSpec, ...]] = {}
        self.missing: dict[VariantProperty, str] = {}

    def add(self, spec: CondaSpec) -> None:
        self.specs.setdefault(spec, None)

    def mapped(self, prop: VariantProperty, specs: Iterable[CondaSpec]) -> None:
        self.by_property[prop] = tuple(dict.fromkeys(specs))

    def build(self) -> Translation:
        conda_specs = tuple(self.specs)
        return Translation(
            specs=tuple(dict.fromkeys(c.spec for c in conda_specs)),
            by_property=tuple(self.by_property.items()),
            unmapped=tuple(self.missing.items()),
            conda_specs=conda_specs,
        )


def _or_join(specs: Iterable[str]) -> list[str]:
    """OR specs of the same package (and build): ``a >=1`` + ``a >=2`` -> ``a >=1|>=2``."""
    grouped: dict[tuple[str, str], list[str]] = {}
    for spec in specs:
        name, version, *rest = spec.split(" ")
        versions = grouped.setdefault((name, " ".join(rest)), [])
        if version not in versions:
            versions.append(version)
    return [" ".join(filter(None, (n, "|".join(v), b))) for (n, b), v in grouped.items()]


def _nvidia_specs(
    table: NvidiaTable, name: str, props: list[VariantProperty], out: _Builder
) -> None:
    feature = table.feature(name)
    if feature is None:
        known = ", ".join(f.name for f in table.features)
        for p in props:
            out.missing[p] = f"{table.namespace} has no feature {quote(name)} (known: {known})"
        return
    rendered: list[str] = []
    for p in props:
        value = cuda.nvidia_value(table, feature, p.value)
        if isinstance(value, str):
            out.missing[p] = value
            continue
        fields = {
            "value": p.value,
            "major": value.major,
            "minor": value.minor,
            "next_major": value.major + 1,
        }
        specs = [t.format(**fields) for t in feature.specs.get(value.kind, ())]
        out.mapped(p, map(CondaSpec, specs))
        rendered += specs
    for spec in _or_join(rendered):
        out.add(CondaSpec(spec))


def _amd_specs(
    tables: MappingTables, name: str, props: list[VariantProperty], out: _Builder
) -> None:
    mapped, missing = amd_specs(tables.amd, name, props)
    out.missing.update(missing)
    rendered: list[str] = []
    for p, specs in mapped:
        out.mapped(p, map(CondaSpec, specs))
        rendered += specs
    for spec in _or_join(rendered):
        out.add(CondaSpec(spec))


def _cpu_specs(table: CpuTable, features: dict[str, list[VariantProperty]], out: _Builder) -> None:
    accepted: set[str] | None = None
    mapped: list[VariantProperty] = []
    for props in features.values():
        union: set[str] = set()
        for p in props:
            reason = microarchitectures.value_reason(table, p)
            names = microarchitectures.names_with(table, p) if reason is None else ()
            if reason is None and not names:
                reason = microarchitectures.unknown_reason(table, p)
            if reason is not None:
                out.missing[p] = reason
                continue
            mapped.append(p)
            union |= set(names)
            out.mapped(p, _cpu_requirement(table, names))
        if union:
            accepted = union if accepted is None else accepted & union
    if accepted is None:
        return
    if not accepted:
        listed = ", ".join(str(p) for p in mapped)
        for p in mapped:
            del out.by_property[p]
            out.missing[p] = f"no microarchitecture archspec knows has all of: {listed}"
        return
    for spec in _cpu_requirement(table, sorted(accepted)):
        out.add(spec)


def _cpu_requirement(table: CpuTable, names: Sequence[str]) -> tuple[CondaSpec, ...]:
    """The regex spec over *names*, then one enumerated alternative per name."""
    regex = table.rattler_spec.format(names="|".join(re.escape(n) for n in names))
    alternatives = (CondaSpec(table.conda_alternative(n), "conda", regex) for n in names)
    return (CondaSpec(regex, "rattler"), *alternatives)


def _abi_specs(names: NameTable, props: list[VariantProperty], out: _Builder) -> None:
    rendered: list[str] = []
    extra: list[str] = []
    for p in props:
        mapping = names.conda_for_pypi(p.feature)
        if mapping is None:
            out.missing[p] = (
                f"no conda name for PyPI {quote(p.feature.replace('_', '-'))} in names.yaml "
                "(add a row; names are never guessed)"
            )
            continue
        if _ABI_VALUE_RE.fullmatch(p.value) is None:
            out.missing[p] = f"{quote(p.value)} is not a release prefix like '2', '2.9' or '2.9.1'"
            continue
        spec = names.abi_spec.format(conda=mapping.conda, version=p.value)
        spec = f"{spec} {mapping.build}" if mapping.build else spec
        out.mapped(p, map(CondaSpec, (spec, *mapping.requires)))
        rendered.append(spec)
        extra += mapping.requires
    for spec in (*_or_join(rendered), *dict.fromkeys(extra)):
        out.add(CondaSpec(spec))
