"""The host requirements an export states: the virtual-package specs the reverse translation derives
from the installed variant wheels' properties (``__cuda >=12.8``, ``__cuda_arch >=9.0,<10``).

Several wheels' requirements on one virtual package become one spec, their intersection
(:mod:`.intersect`): conda would AND two lines by gluing their version specs, which changes what
an ``|`` means. A requirement on a virtual package only a conda plugin provides
(``__cuda_arch``) says which plugin (:func:`~variant_bridge.virtual_packages.conda_plugin`).

A CPU requirement whose conda form is a list of alternatives (``__archspec 1.* haswell`` OR ...)
cannot be one line of an environment.yml, which ANDs its lines: it becomes conda-forge's
``_x86_64-microarch-level >=N`` where that can be had, otherwise a comment. Non-virtual specs the
wheels imply (``cuda-version >=12.8,<13``, ``rocm-core 6.4.*``) are reported, not added: the
export pins the CUDA toolkit itself and other packages as the environment holds them, and the
header says which one pins each, or that none does (docs/semantics.md §3.2, §4.2; docs/share.md,
"environment.yml").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from variant_bridge.environment import Environment, PythonDistribution
from variant_bridge.export.channels import is_conda_forge
from variant_bridge.export.history import spec_name
from variant_bridge.export.intersect import intersect
from variant_bridge.export.model import HostRequirement
from variant_bridge.export.origins import variant_label
from variant_bridge.mappings import MappingTables, load_tables
from variant_bridge.properties import VariantProperty
from variant_bridge.translate import CondaSpec, to_conda_specs
from variant_bridge.virtual_packages import conda_plugin

__all__ = ["HostRequirements", "wheel_host_requirements", "wheel_text"]


@dataclass(frozen=True, slots=True)
class HostRequirements:
    """What the variant wheels of an environment require of the machine.

    :param requirements: one per distinct spec, naming every wheel that implies it.
    :param implied: non-virtual specs the wheels imply (reported, not added).
    :param notes: properties with no conda counterpart, implied specs the environment breaks.
    """

    requirements: tuple[HostRequirement, ...] = ()
    implied: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()


def wheel_text(dist: PythonDistribution) -> str:
    """``torch 2.9.0 [cu128]``: a distribution as messages and comments name it."""
    label = variant_label(dist)
    return f"{dist.name} {dist.version}" + (f" [{label}]" if label else "")


def wheel_host_requirements(env: Environment, channels: Sequence[str]) -> HostRequirements:
    """The host requirements of *env*'s variant wheels (*channels*: where conda-forge's CPU
    metapackage could come from)."""
    found = _Found(load_tables(), env, channels)
    for dist in env.python_packages:
        if dist.variant is not None and dist.variant.properties:
            found.add_wheel(dist, dist.variant.properties)
    return HostRequirements(found.merged(), tuple(found.implied), found.all_notes())


@dataclass(slots=True)
class _Found:
    tables: MappingTables
    env: Environment
    channels: Sequence[str]
    requirements: dict[str, HostRequirement] = field(default_factory=dict)
    implied: dict[str, None] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    unmapped: dict[tuple[str, str, str], tuple[dict[str, None], dict[str, None]]] = field(
        default_factory=dict
    )
    """``(namespace, feature, reason)`` -> (its values, the wheels): one note per fact."""

    def add(self, spec: str, rattler_spec: str, wheel: str, *, expressible: bool = True) -> None:
        known = self.requirements.get(spec)
        wheels = (*known.wheels, wheel) if known is not None else (wheel,)
        plugin = conda_plugin(spec_name(spec))
        self.requirements[spec] = HostRequirement(
            spec, rattler_spec, tuple(dict.fromkeys(wheels)), expressible, plugin
        )

    def merged(self) -> tuple[HostRequirement, ...]:
        """One requirement per package: the intersection of the wheels' specs on it."""
        groups: dict[str, list[HostRequirement]] = {}
        for requirement in self.requirements.values():
            key = spec_name(requirement.spec) if requirement.expressible else requirement.spec
            groups.setdefault(key, []).append(requirement)
        out: list[HostRequirement] = []
        for name, group in groups.items():
            merged = self.merge(name, group) if len(group) > 1 else None
            out += group if merged is None else [merged]
        return tuple(out)

    def merge(self, name: str, group: list[HostRequirement]) -> HostRequirement | None:
        versions = [r.spec[len(name) :].strip() for r in group]
        result = intersect(versions) if all(r.expressible for r in group) else None
        if result is None:
            return None  # a build string or another form: the lines stay apart
        wheels = tuple(dict.fromkeys(w for r in group for w in r.wheels))
        plugin = group[0].plugin
        if result.empty:
            said = " and ".join(f"{r.spec} ({', '.join(r.wheels)})" for r in group)
            self.notes.append(f"no machine satisfies every wheel's {name} requirement: {said}")
            return HostRequirement(f"{name} {' and '.join(versions)}", group[0].rattler_spec,
                                   wheels, expressible=False, plugin=plugin)  # fmt: skip
        spec = f"{name} {result.spec}"
        return HostRequirement(spec, spec, wheels, True, plugin)

    def add_wheel(self, dist: PythonDistribution, properties: Sequence[VariantProperty]) -> None:
        wheel = wheel_text(dist)
        translation = to_conda_specs(properties, tables=self.tables)
        for prop, reason in translation.unmapped:
            values, wheels = self.unmapped.setdefault(
                (prop.namespace, prop.feature, reason), ({}, {})
            )
            values[prop.value] = None
            wheels[wheel] = None
        for cs in translation.conda_specs:
            if cs.form == "any" and cs.spec.startswith("__"):
                self.add(cs.spec, cs.spec, wheel)
            elif cs.form == "any":
                self.add_implied(cs.spec, wheel)
            elif cs.form == "rattler":
                alternatives = [
                    a.spec for a in translation.conda_specs if a.alternative_to == cs.spec
                ]
                self.add_cpu(cs.spec, alternatives, properties, translation.by_property, wheel)

    def all_notes(self) -> tuple[str, ...]:
        """The notes, then one per property with no conda counterpart, naming every wheel that
        has it (an ``xpu`` build's six Intel device IPs are one fact: its feature)."""
        said = []
        for (namespace, feature, reason), (values, wheels) in self.unmapped.items():
            what = f"{namespace} :: {feature}"
            if reason.startswith(what):  # the reason names the feature as a whole
                fact = reason
            else:
                fact = f"{what} :: {', '.join(values)} has no conda counterpart ({reason})"
            said.append(f"{', '.join(wheels)}: {fact}")
        return (*self.notes, *said)

    def add_implied(self, spec: str, wheel: str) -> None:
        self.implied.setdefault(spec, None)
        conflict = _conflict(self.env, spec)
        if conflict is not None:
            self.notes.append(f"{wheel} expects {spec}, but the environment has {conflict}")

    def add_cpu(
        self,
        rattler_spec: str,
        alternatives: Sequence[str],
        properties: Sequence[VariantProperty],
        by_property: Sequence[tuple[VariantProperty, tuple[CondaSpec, ...]]],
        wheel: str,
    ) -> None:
        if len(alternatives) == 1:
            self.add(alternatives[0], rattler_spec, wheel)
            return
        conda_form = self.metapackage_form(properties, rattler_spec, by_property)
        if conda_form is not None:
            self.add(conda_form, rattler_spec, wheel)
            return
        names = ", ".join(a.rsplit(" ", 1)[-1] for a in alternatives)
        self.add(
            f"{_first_word(rattler_spec)} build one of: {names}",
            rattler_spec,
            wheel,
            expressible=False,
        )

    def metapackage_form(
        self,
        properties: Sequence[VariantProperty],
        rattler_spec: str,
        by_property: Sequence[tuple[VariantProperty, tuple[CondaSpec, ...]]],
    ) -> str | None:
        """``_x86_64-microarch-level >=N`` for a CPU generation requirement, where conda-forge's
        metapackage can be had (a conda-forge channel, or already installed)."""
        for prop, specs in by_property:
            if prop not in properties or rattler_spec not in (c.spec for c in specs):
                continue
            cpu = self.tables.cpu(prop.namespace)
            if cpu is None or cpu.metapackage is None or prop.feature != cpu.generation_feature:
                continue
            level = _level_number(prop.value)
            reachable = self.env.conda_package(cpu.metapackage) is not None or any(
                is_conda_forge(c) for c in self.channels
            )
            if level is not None and reachable:
                return f"{cpu.metapackage} >={level}"
        return None


def _conflict(env: Environment, spec: str) -> str | None:
    """The installed record that *spec* rejects (``cuda-version=12.6``), or ``None``."""
    record = env.conda_package(spec_name(spec))
    if record is None:
        return None
    from rattler import MatchSpec, PackageRecord  # heavy: only when a wheel implies a spec
    from rattler.package import BuildString

    candidate = PackageRecord(
        record.name,
        str(record.version),
        BuildString(str(record.build)),
        record.build_number,
        record.subdir or env.platform,
    )
    try:
        matches = MatchSpec(spec).matches(candidate)
    except Exception:  # a spec rattler cannot read is reported elsewhere, not judged here
        return None
    return None if matches else f"{record.name}={record.version}"


def _first_word(spec: str) -> str:
    return re.split(r"[\s\[]", spec, maxsplit=1)[0]


def _level_number(value: str) -> int | None:
    digits = re.findall(r"[0-9]+", value)
    return int(digits[-1]) if digits else None
