"""Pure translation between wheel-variant properties and conda's view of a machine.

Forward (:func:`supported_properties`): an :class:`~variant_bridge.environment.Environment` (its
virtual packages and solved toolkit) becomes ordered supported properties per namespace, shaped
exactly like the variant providers' answers, so ranking agrees with uv for the same inputs.
Reverse (:func:`to_conda_specs`): a wheel's properties become the conda specs it needs.
The rules are docs/semantics.md §3-5; the data are the tables of :mod:`variant_bridge.mappings`;
microarchitecture facts come from archspec (imported lazily, cached per name).

>>> to_conda_specs([VariantProperty.parse("nvidia :: cuda_version_lower_bound :: 12.8")]).specs
('__cuda >=12.8', 'cuda-version >=12.8,<13')
"""

from __future__ import annotations

import difflib
import functools
import platform as _platform
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from variant_bridge.environment import (
    CUDA_POLICIES,
    CondaRecord,
    CudaPolicy,
    Environment,
    Source,
    Toolkit,
    VirtualPackage,
)
from variant_bridge.errors import DetectionError, InvalidTarget, quote
from variant_bridge.mappings import (
    CpuTable,
    MappingTables,
    NvidiaFeature,
    NvidiaTable,
    load_tables,
)
from variant_bridge.properties import FEATURE_RE, VariantProperty
from variant_bridge.translate.supported import SupportedFeature, SupportedProperties
from variant_bridge.virtual_packages import (
    VERSION_SHAPES,
    applies_to,
    check_platform,
    microarchitecture_problem,
    not_on_platform,
)

if TYPE_CHECKING:
    from variant_bridge.mappings import NameMapping

__all__ = [
    "CondaFacts",
    "CondaSpec",
    "SpecForm",
    "Translation",
    "environment_from_conda_specs",
    "explain_unsupported",
    "host_subdir",
    "read_conda_specs",
    "supported_properties",
    "to_conda_specs",
]

SpecForm = Literal["any", "rattler", "conda"]

# Canonical numbers of any length: the value's SHAPE is checked by regex, its SIZE apart, so a
# 100000-digit value is "out of range" (never int()-ed, which Python refuses past 4300 digits).
_NUM = r"(?:0|[1-9][0-9]*)"
_CUDA_VALUE_RE = re.compile(rf"(?P<major>{_NUM})(?:\.(?P<minor>{_NUM}))?")
# CMake-style CUDA architectures: the last digit is the minor (90 -> 9.0, 120 -> 12.0).
_SM_VALUE_RE = re.compile(r"(?P<major>[1-9][0-9]*)(?P<minor>[0-9])_(?P<kind>real|virtual)")
# Release prefixes of `abi_dependency`: rattler's version numbers are 64-bit, so at most 18
# digits a component (dates like 20240101 fit; a longer number makes a spec no client parses).
_ABI_VALUE_RE = re.compile(r"(?:0|[1-9][0-9]{0,17})(?:\.(?:0|[1-9][0-9]{0,17})){0,2}")
_LEADING_VERSION_RE = re.compile(r"(?P<major>[0-9]{1,9})(?:\.(?P<minor>[0-9]{1,9}))?")
_RELEASE_RE = re.compile(r"[0-9]{1,18}(?![0-9])(?:\.[0-9]{1,18}(?![0-9])){0,2}")
# Larger numbers than this are no CUDA version or compute capability (and stay out of int()).
_MAX_DIGITS = 4


# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
class Translation:
    """The conda specs a set of properties needs.

    :param specs: every spec string, deduplicated, in a stable order. When forms mix (CPU
        namespaces) these are NOT one conjunction: use :meth:`for_tool` or :attr:`conda_specs`.
    :param by_property: each mapped property with the specs it needs on its own.
    :param unmapped: ``(property, reason)`` for properties with no conda counterpart.
    :param conda_specs: :attr:`specs` with their form (see :class:`CondaSpec`).
    """

    specs: tuple[str, ...] = ()
    by_property: tuple[tuple[VariantProperty, tuple[str, ...]], ...] = ()
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
            "by_property": {str(p): list(specs) for p, specs in self.by_property},
            "unmapped": [{"property": str(p), "reason": r} for p, r in self.unmapped],
            "forms": [
                {"spec": c.spec, "form": c.form, "alternative_to": c.alternative_to}
                for c in self.conda_specs
            ],
        }


# --------------------------------------------------------------------------------------------
# Small parsers
# --------------------------------------------------------------------------------------------


def _major_minor(text: str) -> tuple[int, int] | None:
    """``12.8`` / ``12.8.90`` -> (12, 8); ``12`` -> (12, 0); anything else (numbers of more
    than 9 digits included) -> None."""
    match = _LEADING_VERSION_RE.match(text)
    if match is None or (match.end() < len(text) and text[match.end()] != "."):
        return None
    return int(match["major"]), int(match["minor"] or 0)


def _cuda_value(value: str) -> tuple[int, int] | Literal["range"] | None:
    """``12.8`` -> (12, 8); not ``M[.N]`` -> None; numbers too long to be CUDA -> ``"range"``."""
    match = _CUDA_VALUE_RE.fullmatch(value)
    if match is None:
        return None
    if len(match["major"]) > _MAX_DIGITS or len(match["minor"] or "") > _MAX_DIGITS:
        return "range"
    return int(match["major"]), int(match["minor"] or 0)


def _sm_value(value: str) -> tuple[str, int, int] | Literal["range"] | None:
    match = _SM_VALUE_RE.fullmatch(value)
    if match is None:
        return None
    if len(match["major"]) > _MAX_DIGITS:
        return "range"
    return match["kind"], int(match["major"]), int(match["minor"])


def _fmt(version: tuple[int, int]) -> str:
    return f"{version[0]}.{version[1]}"


def _vp_text(vp: VirtualPackage, *, build: bool = False) -> str:
    text = f"{vp.name}={vp.version}={vp.build}" if build else f"{vp.name}={vp.version}"
    return f"{text} ({vp.source})"


def _archspec_version() -> str:
    import archspec

    return str(getattr(archspec, "__version__", "?"))


# --------------------------------------------------------------------------------------------
# Forward: environment -> supported properties
# --------------------------------------------------------------------------------------------


def supported_properties(
    env: Environment,
    *,
    policy: CudaPolicy | None = None,
    tables: MappingTables | None = None,
) -> SupportedProperties:
    """The properties *env* supports, most preferred first (semantics.md §3-5).

    :param policy: ``toolkit`` or ``driver``; ``None``: :meth:`Environment.default_policy`.
    :raises InvalidTarget: on an unknown policy.
    """
    if policy is None:
        policy = env.default_policy()
    elif policy not in CUDA_POLICIES:
        raise InvalidTarget(f"unknown CUDA policy {policy!r}: expected 'toolkit' or 'driver'")
    tables = tables if tables is not None else load_tables()
    # No cache of whole results: hashing an Environment costs about as much as computing
    # (~50 us); the expensive parts (archspec, provider value lists) are cached below.
    return _supported(env, policy, tables)


@dataclass(slots=True)
class _Collected:
    features: list[SupportedFeature]
    unsupported: list[tuple[str, str]]
    notes: list[str]


def _supported(env: Environment, policy: CudaPolicy, tables: MappingTables) -> SupportedProperties:
    out = _Collected([], [], [])
    _nvidia_supported(env, policy, tables.nvidia, out)
    for cpu in tables.cpus:
        _cpu_supported(env, cpu, tables, out)
    out.features.extend(_abi_supported(env, tables))
    return SupportedProperties(
        tuple(out.features), tuple(out.unsupported), tuple(out.notes), policy
    )


def _nvidia_supported(
    env: Environment,
    policy: CudaPolicy,
    table: NvidiaTable,
    out: _Collected,
) -> None:
    ns, features, notes = table.namespace, out.features, out.notes
    driver = env.virtual_package(table.driver_package)
    reason, d = _driver_state(table, driver)
    if reason is not None or d is None or driver is None:
        out.unsupported.append((ns, reason or "no driver"))
        return
    toolkit, t = _toolkit_state(env)
    if policy == "toolkit" and t is None:
        if toolkit is not None:
            notes.append(
                f"toolkit policy: cannot read the version of {toolkit}; using the driver policy"
            )
        policy = "driver"
    source = _vp_text(driver)
    if toolkit is not None and t is not None:
        if policy == "toolkit":
            source += f", {toolkit.package}={toolkit.version} ({toolkit.source})"
        else:
            source += f"; {toolkit.package}={toolkit.version} ignored (driver policy)"

    for feature in table.features:
        if feature.rule == "sm_arch":
            _sm_arch_supported(env, table, feature, out)
            continue
        values = _cuda_bounds(table, feature.rule, d, t if policy == "toolkit" else None)
        if policy == "toolkit" and toolkit is not None and t is not None:
            dropped = len(_cuda_bounds(table, feature.rule, d, None)) - len(values)
            if dropped:
                notes.append(
                    f"toolkit policy: {dropped} {feature.name} value(s) the driver allows were "
                    f"dropped because {_toolkit_text(toolkit)}"
                )
        if values:
            features.append(SupportedFeature(ns, feature.name, values, source))
        else:
            notes.append(
                f"no {feature.name} value satisfies {source}: wheels that set it are not supported"
            )


def _toolkit_owner(toolkit: Toolkit) -> str:
    """Whose toolkit it is, from where it came from: a prefix's conda-meta, a lock, or facts
    given on the command line (``--from-conda``, a hand-built environment)."""
    return {Source.PREFIX: "the prefix's", Source.LOCKFILE: "the locked"}.get(
        toolkit.source, "the environment's"
    )


def _toolkit_text(toolkit: Toolkit) -> str:
    """``the prefix's toolkit is cuda-version 12.6`` (or the locked / the environment's)."""
    return f"{_toolkit_owner(toolkit)} toolkit is {toolkit.package} {toolkit.version}"


def _driver_state(
    table: NvidiaTable, driver: VirtualPackage | None
) -> tuple[str | None, tuple[int, int] | None]:
    if driver is None:
        return (
            f"no {table.driver_package}: no NVIDIA driver (or CONDA_OVERRIDE_CUDA is empty)",
            None,
        )
    d = _major_minor(driver.version)
    if d is None:
        return f"{table.driver_package} version {quote(driver.version)} is not a CUDA version", None
    low = (table.driver_majors.low, table.driver_minors.low)
    high = (table.driver_majors.high, table.driver_minors.high)
    if not low <= d <= high:
        return (
            (
                f"{_vp_text(driver)} is outside {_fmt(low)} .. {_fmt(high)}, the driver "
                "versions the NVIDIA provider knows"
            ),
            None,
        )
    return None, d


def _toolkit_state(env: Environment) -> tuple[Toolkit | None, tuple[int, int] | None]:
    if env.toolkit is None:
        return None, None
    return env.toolkit, _major_minor(env.toolkit.version)


@functools.lru_cache(maxsize=512)
def _cuda_bounds(
    table: NvidiaTable, rule: str, d: tuple[int, int], t: tuple[int, int] | None
) -> tuple[str, ...]:
    """The provider's value list for a driver *d*, filtered by toolkit *t* (semantics.md §3)."""
    majors, minors = table.driver_majors, table.driver_minors
    values: list[tuple[str, tuple[int, int]]] = []
    if rule == "cuda_lower_bound":
        # Newest minor first, then the major-only value, then older majors (provider order).
        for major in range(d[0], majors.low - 1, -1):
            top = d[1] if major == d[0] else minors.high
            values += [(f"{major}.{m}", (major, m)) for m in range(top, minors.low - 1, -1)]
            values.append((str(major), (major, 0)))
        if t is not None:
            values = [(v, n) for v, n in values if n <= t and n[0] == t[0]]
    else:
        # From the newest major down to the driver's; no major-only value for the driver's own.
        for major in range(majors.high, d[0] - 1, -1):
            if major > d[0]:
                values += [
                    (f"{major}.{m}", (major, m)) for m in range(minors.high, minors.low - 1, -1)
                ]
                values.append((str(major), (major, 0)))
            else:
                values += [(f"{major}.{m}", (major, m)) for m in range(minors.high, d[1], -1)]
        if t is not None:
            values = [(v, n) for v, n in values if n > t]
    return tuple(v for v, _ in values)


def _sm_arch_supported(
    env: Environment,
    table: NvidiaTable,
    feature: NvidiaFeature,
    out: _Collected,
) -> None:
    features, notes = out.features, out.notes
    arch = env.virtual_package(table.arch_package)
    if arch is None:
        notes.append(
            f"no {table.arch_package}: GPU architecture unknown, wheels that set "
            f"{table.namespace} :: {feature.name} are not supported"
        )
        return
    a = _major_minor(arch.version)
    if a is None:
        notes.append(f"{_vp_text(arch)} is not a compute capability; {feature.name} omitted")
        return
    if a < table.lowest_arch:
        notes.append(
            f"{_vp_text(arch)} is below {_fmt(table.lowest_arch)}, the lowest compute "
            f"capability the NVIDIA provider ranks; {feature.name} omitted"
        )
        return
    values = (*(f"{a[0]}{m}_real" for m in range(a[1], -1, -1)), f"{a[0]}0_virtual")
    features.append(SupportedFeature(table.namespace, feature.name, values, _vp_text(arch)))
    if not arch.source.declared:
        notes.append(
            f"{feature.name} follows {arch.name}={arch.version}, the LOWEST compute capability "
            "of this machine's GPUs (conda's rule, so the wheel runs on every GPU); the NVIDIA "
            "provider uses the HIGHEST, so with GPUs of different generations it would differ"
        )


@dataclass(frozen=True, slots=True)
class _CpuProfile:
    name: str
    generic: str
    generations: tuple[str, ...]
    flags: tuple[str, ...]


def _cpu_supported(
    env: Environment,
    table: CpuTable,
    tables: MappingTables,
    out: _Collected,
) -> None:
    features, unsupported = out.features, out.unsupported
    reason = _cpu_platform_reason(env, table, tables)
    if reason is not None:
        unsupported.append((table.namespace, reason))
        return
    vp = env.virtual_package(table.virtual_package)
    if vp is None:
        unsupported.append(
            (
                table.namespace,
                (
                    f"no {table.virtual_package}: the CPU microarchitecture is unknown "
                    "(or CONDA_OVERRIDE_ARCHSPEC is empty)"
                ),
            )
        )
        return
    profile = _cpu_profile(table, vp.build)
    if isinstance(profile, str):
        unsupported.append((table.namespace, f"{_vp_text(vp, build=True)}: {profile}"))
        return
    source = f"{_vp_text(vp, build=True)}, archspec {_archspec_version()}"
    if profile.generations:
        features.append(
            SupportedFeature(table.namespace, table.generation_feature, profile.generations, source)
        )
    features.extend(
        SupportedFeature(table.namespace, flag, (table.flag_value,), source)
        for flag in profile.flags
    )


def _cpu_platform_reason(env: Environment, table: CpuTable, tables: MappingTables) -> str | None:
    info = tables.platform.subdirs.get(env.platform)
    if info is None:
        return f"unknown platform {env.platform!r}: no CPU namespace for it"
    if info.cpu_family == table.archspec_family:
        return None
    if info.cpu_family is None:
        return f"platform {env.platform} has no CPU variant namespace"
    return f"platform {env.platform} has an {info.cpu_family} CPU, not {table.archspec_family}"


def _cpu_profile(table: CpuTable, name: str) -> _CpuProfile | str:
    """What microarchitecture *name* supports, or why it cannot be used (cached per name)."""
    return _cpu_profiles(table).get(name) or _cpu_profile_miss(table, name)


def _cpu_profile_miss(table: CpuTable, name: str) -> str:
    import archspec.cpu

    target = archspec.cpu.TARGETS.get(name)
    if target is None:
        close = difflib.get_close_matches(name, list(archspec.cpu.TARGETS), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        return (
            f"{quote(name)} is not a microarchitecture archspec {_archspec_version()} knows{hint}"
        )
    return (
        f"{quote(name)} is an {target.family.name} microarchitecture, not {table.archspec_family}"
    )


@functools.lru_cache(maxsize=16)
def _cpu_profiles(table: CpuTable) -> dict[str, _CpuProfile]:
    """Every microarchitecture of the table's family, computed once from archspec."""
    import archspec.cpu

    targets = {
        name: t
        for name, t in archspec.cpu.TARGETS.items()
        if t.family.name == table.archspec_family
    }
    universe = _flag_universe(table, targets.values())
    cap = targets.get(table.archspec_name(table.max_value))
    profiles: dict[str, _CpuProfile] = {}
    for name, target in targets.items():
        generic = target.generic
        if cap is not None and cap in generic.ancestors:
            generic = cap  # the provider ranks nothing above its max; cap like it does
        chain = [generic, *sorted(generic.ancestors, key=lambda a: -len(a.ancestors))]
        generations = tuple(
            v
            for v in (table.value_for(t.name) for t in chain if t.vendor == "generic")
            if v is not None
        )
        flags = tuple(f for f in universe if f in target)
        profiles[name] = _CpuProfile(name, generic.name, generations, flags)
    return profiles


def _flag_universe(table: CpuTable, targets: Iterable[Any]) -> tuple[str, ...]:
    """Flag features: the provider's order first, then every other archspec flag, sorted."""
    known: set[str] = set()
    for t in targets:
        known |= set(t.features)
    extra = sorted(
        f
        for f in known - set(table.flag_order)
        if FEATURE_RE.fullmatch(f) and f != table.generation_feature
    )
    return (*table.flag_order, *extra)


def _abi_supported(env: Environment, tables: MappingTables) -> list[SupportedFeature]:
    """variantlib's rule: a distribution installed supports X, X.Y, X.Y.Z, least specific first."""
    names = tables.names
    installed = _installed_distributions(env, tables)
    features = []
    for feature in sorted(installed):
        version, source = installed[feature]
        values = _release_prefixes(version)
        if values:
            features.append(SupportedFeature(names.abi_namespace, feature, values, source))
    return features


def _installed_distributions(env: Environment, tables: MappingTables) -> dict[str, tuple[str, str]]:
    """``{feature name: (version, source)}``: PyPI dists, plus conda packages via names.yaml."""
    found: dict[str, tuple[str, str]] = {}
    _, t = _toolkit_state(env)
    for record in env.conda_packages:
        for mapping in tables.names.pypi_for_conda(record.name):
            if mapping.cuda_major is not None and (t is None or t[0] != mapping.cuda_major):
                continue  # cupy / libcublas: only the PyPI name of the toolkit's CUDA major
            found.setdefault(
                _abi_feature(mapping.pypi),
                (record.version, f"{record.name} {record.version} (conda package)"),
            )
    for dist in env.python_packages:  # what Python imports wins over the conda record
        found[_abi_feature(dist.name)] = (dist.version, f"{dist.name} {dist.version} (PyPI)")
    return found


def _abi_feature(name: str) -> str:
    return canonicalize_name(name).replace("-", "_")


def _release_prefixes(version: str) -> tuple[str, ...]:
    """``2.9.1.post1`` -> ``2, 2.9, 2.9.1``; numbers past 18 digits end the list (no conda
    client could match them, see ``_ABI_VALUE_RE``)."""
    try:
        release: Sequence[int] = Version(version).release
    except (InvalidVersion, ValueError):  # ValueError: a number past Python's int() limit
        match = _RELEASE_RE.match(version)
        if match is None:
            return ()
        release = [int(p) for p in match.group().split(".")]
    parts: list[str] = []
    for number in release[:3]:
        text = str(number)
        if len(text) > 18:
            break
        parts.append(text)
    return tuple(".".join(parts[: i + 1]) for i in range(len(parts)))


# --------------------------------------------------------------------------------------------
# Reverse: properties -> conda specs
# --------------------------------------------------------------------------------------------


def to_conda_specs(
    properties: Iterable[VariantProperty], *, tables: MappingTables | None = None
) -> Translation:
    """The conda specs a wheel with *properties* needs (semantics.md §3-5).

    Values of one feature are OR-ed (one spec per package, version specs joined with ``|``);
    features are AND-ed. CPU namespaces give one requirement on ``__archspec``: a CEP 29 regex
    spec (form ``rattler``) and its enumerated alternatives (form ``conda``).
    """
    tables = tables if tables is not None else load_tables()
    groups: dict[str, dict[str, list[VariantProperty]]] = {}
    for prop in dict.fromkeys(properties):
        groups.setdefault(prop.namespace, {}).setdefault(prop.feature, []).append(prop)

    out = _TranslationBuilder()
    for namespace, features in groups.items():
        cpu = tables.cpu(namespace)
        if namespace == tables.nvidia.namespace:
            for feature, props in features.items():
                _nvidia_specs(tables.nvidia, feature, props, out)
        elif cpu is not None:
            _cpu_specs(cpu, features, out)
        elif namespace == tables.names.abi_namespace:
            for props in features.values():
                _abi_specs(tables, props, out)
        else:
            known = ", ".join(tables.namespaces)
            for props in features.values():
                for p in props:
                    reason = f"no mapping for namespace {quote(namespace)}"
                    out.unmapped(p, f"{reason} (variant-bridge maps {known})")
    return out.build()


class _TranslationBuilder:
    def __init__(self) -> None:
        self.specs: dict[CondaSpec, None] = {}
        self.by_property: dict[VariantProperty, tuple[str, ...]] = {}
        self.missing: dict[VariantProperty, str] = {}

    def add(self, spec: CondaSpec) -> None:
        self.specs.setdefault(spec, None)

    def mapped(self, prop: VariantProperty, specs: Iterable[str]) -> None:
        self.by_property[prop] = tuple(dict.fromkeys(specs))

    def unmapped(self, prop: VariantProperty, reason: str) -> None:
        self.missing[prop] = reason

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
    table: NvidiaTable, name: str, props: list[VariantProperty], out: _TranslationBuilder
) -> None:
    feature = table.feature(name)
    if feature is None:
        known = ", ".join(f.name for f in table.features)
        for p in props:
            out.unmapped(p, f"{table.namespace} has no feature {quote(name)} (known: {known})")
        return
    rendered: list[str] = []
    for p in props:
        fields = _nvidia_fields(table, feature, p.value)
        if isinstance(fields, str):
            out.unmapped(p, fields)
            continue
        kind, values = fields
        specs = [t.format(**values) for t in feature.specs.get(kind, ())]
        out.mapped(p, specs)
        rendered += specs
    for spec in _or_join(rendered):
        out.add(CondaSpec(spec))


def _nvidia_fields(
    table: NvidiaTable, feature: NvidiaFeature, value: str
) -> tuple[str, dict[str, Any]] | str:
    """The template fields of an nvidia *value*, or why it has no conda meaning.

    Values outside the table's vocabulary are refused, not rendered: a bound such as
    ``99999999999999999999.1`` would give a spec no conda client parses (rattler's numbers are
    64-bit). GPU majors have no upper limit in the table (the provider ranks any GPU's own
    generation), only the format's.
    """
    if feature.rule == "sm_arch":
        sm = _sm_value(value)
        if sm is None:
            return (
                f"{quote(value)} is not a CUDA architecture like '90_real' or '90_virtual' "
                "(major digits, one minor digit, _real or _virtual)"
            )
        low = table.lowest_arch
        if sm == "range" or (sm[1], sm[2]) < low:
            return (
                f"{quote(value)} is not a CUDA architecture the NVIDIA provider defines "
                f"(compute capability {_fmt(low)} or newer, majors of at most {_MAX_DIGITS} digits)"
            )
        kind, major, minor = sm
    else:
        cuda = _cuda_value(value)
        if cuda is None:
            return f"{quote(value)} is not a CUDA version like '12.8' or '12'"
        if (
            cuda == "range"
            or cuda[0] not in table.driver_majors
            or cuda[1] not in table.driver_minors
        ):
            return (
                f"{quote(value)} is not a CUDA version the NVIDIA provider defines "
                f"(majors {table.driver_majors}, minors {table.driver_minors})"
            )
        kind, (major, minor) = "version", cuda
    return kind, {"value": value, "major": major, "minor": minor, "next_major": major + 1}


def _cpu_specs(
    table: CpuTable, features: dict[str, list[VariantProperty]], out: _TranslationBuilder
) -> None:
    profiles = _cpu_profiles(table)
    accepted: set[str] | None = None
    mapped: list[VariantProperty] = []
    for props in features.values():
        union: set[str] = set()
        for p in props:
            reason = _cpu_value_reason(table, p)
            names = _cpu_names(profiles, table, p) if reason is None else ()
            if reason is None and not names:
                reason = _cpu_unknown_reason(table, p)
            if reason is not None:
                out.unmapped(p, reason)
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
            out.unmapped(p, f"no microarchitecture archspec knows has all of: {listed}")
        return
    names = tuple(sorted(accepted))
    regex = _cpu_requirement(table, names)[0]
    out.add(CondaSpec(regex, "rattler"))
    for name in names:
        out.add(CondaSpec(table.conda_alternative(name), "conda", regex))


def _cpu_unknown_reason(table: CpuTable, prop: VariantProperty) -> str:
    """Why no microarchitecture accepts *prop* (a value outside the vocabulary)."""
    if prop.feature == table.generation_feature:
        top = table.archspec_name(table.max_value)  # the provider's chain first, newest first
        ranked = sorted(
            _cpu_profiles(table).values(), key=lambda p: (p.name != top, -len(p.generations))
        )
        known = ", ".join(dict.fromkeys(v for p in ranked for v in p.generations))
        return f"{quote(prop.value)} is not an {table.namespace} {prop.feature} (known: {known})"
    return (
        f"no {table.namespace} microarchitecture archspec {_archspec_version()} knows has the "
        f"feature {quote(prop.feature)}"
    )


def _cpu_value_reason(table: CpuTable, prop: VariantProperty) -> str | None:
    if prop.feature == table.generation_feature:
        return None
    if prop.value != table.flag_value:
        return f"CPU flag features take the value {table.flag_value!r}, not {quote(prop.value)}"
    return None


def _cpu_names(
    profiles: dict[str, _CpuProfile], table: CpuTable, prop: VariantProperty
) -> tuple[str, ...]:
    if prop.feature == table.generation_feature:
        return tuple(sorted(n for n, pr in profiles.items() if prop.value in pr.generations))
    return tuple(sorted(n for n, pr in profiles.items() if prop.feature in pr.flags))


def _cpu_requirement(table: CpuTable, names: Sequence[str]) -> tuple[str, ...]:
    regex = table.rattler_spec.format(names="|".join(re.escape(n) for n in names))
    return (regex, *(table.conda_alternative(n) for n in names))


def _abi_specs(
    tables: MappingTables, props: list[VariantProperty], out: _TranslationBuilder
) -> None:
    names = tables.names
    rendered: list[str] = []
    extra: list[str] = []
    for p in props:
        mapping = names.conda_for_pypi(p.feature)
        if mapping is None:
            out.unmapped(
                p,
                f"no conda name for PyPI {quote(p.feature.replace('_', '-'))} in names.yaml "
                "(add a row; names are never guessed)",
            )
            continue
        if _ABI_VALUE_RE.fullmatch(p.value) is None:
            out.unmapped(p, f"{quote(p.value)} is not a release prefix like '2', '2.9' or '2.9.1'")
            continue
        spec = _abi_spec(tables, mapping, p.value)
        out.mapped(p, (spec, *mapping.requires))
        rendered.append(spec)
        extra += mapping.requires
    for spec in (*_or_join(rendered), *dict.fromkeys(extra)):
        out.add(CondaSpec(spec))


def _abi_spec(tables: MappingTables, mapping: NameMapping, value: str) -> str:
    spec = tables.names.abi_spec.format(conda=mapping.conda, version=value)
    return f"{spec} {mapping.build}" if mapping.build else spec


# --------------------------------------------------------------------------------------------
# Why a property is not supported
# --------------------------------------------------------------------------------------------


def explain_unsupported(
    prop: VariantProperty,
    env: Environment,
    *,
    policy: CudaPolicy | None = None,
    tables: MappingTables | None = None,
) -> str:
    """Why *env* does not support *prop*, in words; ``""`` when it does support it.

    e.g. ``needs CUDA driver >= 12.8 but __cuda is 12.6``.
    """
    tables = tables if tables is not None else load_tables()
    policy = policy if policy is not None else env.default_policy()
    supported = supported_properties(env, policy=policy, tables=tables)
    if supported.supports(prop):
        return ""
    cpu = tables.cpu(prop.namespace)
    if prop.namespace == tables.nvidia.namespace:
        reason = _explain_nvidia(prop, env, policy, tables.nvidia, supported)
    elif cpu is not None:
        reason = _explain_cpu(prop, env, cpu, supported)
    elif prop.namespace == tables.names.abi_namespace:
        reason = _explain_abi(prop, env, tables)
    else:
        known = ", ".join(tables.namespaces)
        reason = f"no mapping for namespace {quote(prop.namespace)} (variant-bridge maps {known})"
    return reason


def _explain_nvidia(
    prop: VariantProperty,
    env: Environment,
    policy: CudaPolicy,
    table: NvidiaTable,
    supported: SupportedProperties,
) -> str:
    feature = table.feature(prop.feature)
    if feature is None:
        known = ", ".join(f.name for f in table.features)
        return f"{table.namespace} has no feature {quote(prop.feature)} (known: {known})"
    fields = _nvidia_fields(table, feature, prop.value)
    if isinstance(fields, str):
        return fields
    ns_reason = supported.unsupported_reason(table.namespace)
    if ns_reason is not None:
        return f"needs an NVIDIA driver, but {ns_reason}"
    if feature.rule == "sm_arch":
        return _explain_sm_arch(prop.value, env, table, fields[1])
    driver = env.virtual_package(table.driver_package)
    d = _major_minor(driver.version) if driver is not None else None
    toolkit, t = _toolkit_state(env)
    value = (fields[1]["major"], fields[1]["minor"])
    toolkit_text = _toolkit_text(toolkit) if toolkit is not None else ""
    use_toolkit = policy == "toolkit" and t is not None
    vocabulary = (
        f"{quote(prop.value)} is not a value the NVIDIA provider lists (majors "
        f"{table.driver_majors}, minors {table.driver_minors})"
    )
    if d is None:  # pragma: no cover - unsupported_reason covers a missing/invalid driver
        return vocabulary
    if feature.rule == "cuda_lower_bound":
        if value > d:
            return f"needs CUDA driver >= {prop.value} but {table.driver_package} is {_fmt(d)}"
        if use_toolkit and t is not None and value[0] != t[0]:
            prefix = toolkit is not None and toolkit.source == Source.PREFIX
            owner = "the prefix's" if prefix else "the environment's"
            return (
                f"built for CUDA {value[0]} but {toolkit_text} (CUDA {t[0]}): its libraries "
                f"would clash with {owner}"
            )
        if use_toolkit and t is not None and value > t:
            return f"needs {prop.feature} {prop.value} but {toolkit_text}"
        return vocabulary
    if value <= d:
        return f"needs CUDA driver < {prop.value} but {table.driver_package} is {_fmt(d)}"
    if use_toolkit and t is not None and value <= t:
        return f"needs a toolkit older than {prop.value} ({prop.feature}) but {toolkit_text}"
    return vocabulary


def _explain_sm_arch(
    value: str, env: Environment, table: NvidiaTable, fields: dict[str, Any]
) -> str:
    major, minor = fields["major"], fields["minor"]
    arch = env.virtual_package(table.arch_package)
    if arch is None:
        return (
            f"needs a GPU of compute capability {major}.{minor} or newer but there is no "
            f"{table.arch_package} (no GPU detected, or CONDA_OVERRIDE_CUDA_ARCH is empty)"
        )
    a = _major_minor(arch.version)
    if a is None:
        return f"{table.arch_package} version {quote(arch.version)} is not a compute capability"
    if a < table.lowest_arch:
        return (
            f"{table.arch_package} {arch.version} is below {_fmt(table.lowest_arch)}, the lowest "
            "compute capability the NVIDIA provider ranks"
        )
    here = f"{table.arch_package} is {arch.version}"
    if value.endswith("_virtual"):
        if (major, minor) > a:
            return f"needs compute capability >= {major}.{minor} (PTX {value}) but {here}"
        return (
            f"PTX {value} would JIT-compile on compute capability {arch.version}, but the NVIDIA "
            f"provider offers PTX only as {a[0]}0_virtual (the GPU's own generation)"
        )
    if major > a[0] or (major == a[0] and minor > a[1]):
        return f"needs a GPU of compute capability {major}.{minor} (sm_arch {value}) but {here}"
    return (
        f"sm_arch {value} is machine code for compute capability {major}.x only; {here} and "
        "code for one generation does not run on another"
    )


def _explain_cpu(
    prop: VariantProperty, env: Environment, table: CpuTable, supported: SupportedProperties
) -> str:
    value_reason = _cpu_value_reason(table, prop)
    if value_reason is not None:
        return value_reason
    ns_reason = supported.unsupported_reason(table.namespace)
    if ns_reason is not None:
        return f"needs an {table.archspec_family} CPU, but {ns_reason}"
    vp = env.virtual_package(table.virtual_package)
    profile = _cpu_profile(table, vp.build) if vp is not None else None
    if vp is None or not isinstance(profile, _CpuProfile):  # pragma: no cover - ns_reason covers
        return f"no usable {table.virtual_package}"
    if not _cpu_names(_cpu_profiles(table), table, prop):
        return _cpu_unknown_reason(table, prop)
    if prop.feature == table.generation_feature:
        best = profile.generations[0] if profile.generations else "unknown"
        return (
            f"needs {table.namespace} {prop.feature} {prop.value} but {table.virtual_package} "
            f"{vp.build} is {prop.feature} {best}"
        )
    return (
        f"needs CPU feature {prop.feature} but {table.virtual_package} {vp.build} does not have "
        f"it (archspec {_archspec_version()})"
    )


def _explain_abi(prop: VariantProperty, env: Environment, tables: MappingTables) -> str:
    installed = _installed_distributions(env, tables)
    name = prop.feature.replace("_", "-")
    if prop.feature not in installed:
        return f"needs {name} {prop.value}.* but {name} is not installed"
    _, source = installed[prop.feature]
    return f"needs {name} {prop.value}.* but {source} is installed"


# --------------------------------------------------------------------------------------------
# --from-conda: conda specs -> a declared environment
# --------------------------------------------------------------------------------------------

_SPEC_RE = re.compile(
    r"(?P<name>[A-Za-z0-9_][A-Za-z0-9_.-]*)"
    r"(?:(?:\s*==?\s*|\s+)(?P<version>[^=\s]+)(?:(?:\s*=\s*|\s+)(?P<build>[^=\s]+))?)?"
)
_EXACT_VERSION_RE = re.compile(r"[0-9][0-9A-Za-z._+]*")


@dataclass(frozen=True, slots=True)
class CondaFacts:
    """What :func:`read_conda_specs` made of conda specs.

    :param environment: the declared environment.
    :param ignored: ``(spec as given, reason)`` for packages that change nothing: neither a
        virtual package, nor a toolkit selector, nor a package ``abi_dependency`` knows.
    """

    environment: Environment
    ignored: tuple[tuple[str, str], ...] = ()


def host_subdir(*, tables: MappingTables | None = None) -> str:
    """This machine's conda subdir (``linux-64``), from ``platform.system()/machine()``.

    :raises DetectionError: when the system/machine pair names no known subdir.
    """
    tables = tables if tables is not None else load_tables()
    system, machine = _platform.system(), _platform.machine()
    subdir = tables.platform.host_subdir(system, machine)
    if subdir is None:
        raise DetectionError(f"no conda subdir for system {system!r}, machine {machine!r}")
    return subdir


def environment_from_conda_specs(
    specs: Iterable[str],
    *,
    platform: str | None = None,
    tables: MappingTables | None = None,
) -> Environment:
    """The environment of :func:`read_conda_specs` (what it ignored is dropped)."""
    return read_conda_specs(specs, platform=platform, tables=tables).environment


def read_conda_specs(
    specs: Iterable[str],
    *,
    platform: str | None = None,
    tables: MappingTables | None = None,
) -> CondaFacts:
    """A declared :class:`Environment` from specs like ``__cuda=12.8`` or ``cuda-version 12.6``.

    Accepted: ``name=version[=build]``, ``name==version``, ``name version [build]``, a bare
    virtual package (``__unix``) and ``__archspec=<name>`` (the build, as
    ``CONDA_OVERRIDE_ARCHSPEC`` sets it). Every fact gets the source ``--from-conda``. Virtual
    package values are checked exactly as ``detect`` checks ``--target`` (same shapes, same
    platforms), so both commands accept the same facts.

    :param platform: the conda subdir; ``None``: this machine's.
    :raises InvalidTarget: on a spec that is not one exact package, a duplicate, a version of
        the wrong shape, a virtual package the platform cannot have, an unknown
        microarchitecture or one of another family, an unknown platform.
    """
    tables = tables if tables is not None else load_tables()
    if platform is None:
        platform = host_subdir(tables=tables)
    platform = check_platform(platform, where="--platform")
    info = tables.platform.subdirs.get(platform)

    seen: dict[str, str] = {}
    ignored: list[tuple[str, str]] = []
    virtual: list[VirtualPackage] = []
    records: list[tuple[str, CondaRecord]] = []
    toolkits: dict[str, Toolkit] = {}
    for text in specs:
        name, version, build = _parse_exact_spec(text)
        if name in seen:
            raise InvalidTarget(f"{name} given twice: {quote(seen[name])} and {quote(text)}")
        seen[name] = text
        if name.startswith("__"):
            if name not in _KNOWN_VIRTUAL and name not in VERSION_SHAPES:
                # Kept as declared (conda would see it), but no variant namespace reads it.
                ignored.append((text.strip(), f"no variant property depends on {name}"))
            virtual.append(
                _declared_virtual(
                    text,
                    name=name,
                    version=version,
                    build=build,
                    platform=platform,
                    cpu_family=info.cpu_family if info is not None else None,
                    tables=tables,
                )
            )
            continue
        if version is None:
            raise InvalidTarget(
                f"invalid spec {quote(text)}: a package needs a version, e.g. 'name=1.2'"
            )
        if name in tables.nvidia.toolkit_packages:
            if _major_minor(version) is None:
                raise InvalidTarget(
                    f"invalid spec {quote(text)}: {name} needs a version like '12.6'"
                )
            toolkits[name] = Toolkit(name, version, Source.FROM_CONDA)
        records.append((text, CondaRecord(name, version, build or "", subdir=platform)))

    toolkit = next((toolkits[p] for p in tables.nvidia.toolkit_packages if p in toolkits), None)
    kept: list[CondaRecord] = []
    for text, record in records:
        reason = _ignored_reason(record.name, toolkit, tables)
        if reason is None:
            kept.append(record)
        else:
            ignored.append((text.strip(), reason))
    notes: list[str] = []
    names = {vp.name for vp in virtual}
    if tables.nvidia.arch_package in names and tables.nvidia.driver_package not in names:
        notes.append(
            f"{tables.nvidia.arch_package} without {tables.nvidia.driver_package}: conda drops "
            "the GPU architecture when there is no driver, so the nvidia namespace is unsupported"
        )
    environment = Environment(
        platform=platform,
        virtual_packages=tuple(sorted(virtual, key=lambda vp: vp.name)),
        toolkit=toolkit,
        conda_packages=tuple(kept),
        origin=str(Source.FROM_CONDA),
        notes=tuple(notes),
    )
    return CondaFacts(environment, tuple(ignored))


# CEP 30 names that carry no version fact of their own (their presence alone is the fact).
_KNOWN_VIRTUAL = frozenset({"__archspec", "__unix"})


def _ignored_reason(name: str, toolkit: Toolkit | None, tables: MappingTables) -> str | None:
    """Why conda package *name* changes no supported property, or ``None`` when it does (a
    toolkit selector, or a package ``abi_dependency`` reads through names.yaml)."""
    if name in tables.nvidia.toolkit_packages:
        return None
    mappings = tables.names.pypi_for_conda(name)
    if not mappings:
        return (
            "not a virtual package, a toolkit selector "
            f"({', '.join(tables.nvidia.toolkit_packages)}) or a package whose PyPI name "
            "variant-bridge knows (for abi_dependency)"
        )
    t = _major_minor(toolkit.version) if toolkit is not None else None
    majors = sorted({m.cuda_major for m in mappings if m.cuda_major is not None})
    if len(majors) < len(mappings) or (t is not None and t[0] in majors):
        return None
    return (
        f"its PyPI name depends on the CUDA major ({', '.join(map(str, majors))}) and no "
        "toolkit of one of those is given (e.g. cuda-version=12.6)"
    )


def _parse_exact_spec(text: str) -> tuple[str, str | None, str | None]:
    match = _SPEC_RE.fullmatch(text.strip())
    if match is None or any(c in text for c in "<>!*|,[]()~^"):
        raise InvalidTarget(
            f"invalid spec {quote(text)}: expected one exact package like '__cuda=12.8', "
            "'__archspec=1=haswell' or 'cuda-version 12.6'"
        )
    name = match["name"].lower()
    return name, match["version"], match["build"]


def _declared_virtual(
    text: str,
    *,
    name: str,
    version: str | None,
    build: str | None,
    platform: str,
    cpu_family: str | None,
    tables: MappingTables,
) -> VirtualPackage:
    if not applies_to(name, platform):
        raise InvalidTarget(f"invalid spec {quote(text)}: {not_on_platform(name, platform)}")
    cpu = next((c for c in tables.cpus if c.virtual_package == name), None)
    if cpu is not None:
        if build is None and version is not None and not version[0].isdigit():
            version, build = "1", version  # __archspec=haswell: the build, like the override
        if build is None:
            raise InvalidTarget(
                f"invalid spec {quote(text)}: {name} needs a microarchitecture, "
                f"e.g. '{name}=1=haswell'"
            )
        problem = microarchitecture_problem(build, platform, cpu_family=cpu_family)
        if problem is not None:
            raise InvalidTarget(f"invalid spec {quote(text)}: {problem}")
        return VirtualPackage(name, version or "1", build, Source.FROM_CONDA)
    shape = VERSION_SHAPES.get(name)
    if shape is not None and (version is None or not shape.matches(version)):
        raise InvalidTarget(f"invalid spec {quote(text)}: {name} needs {shape.expected}")
    if version is not None and _EXACT_VERSION_RE.fullmatch(version) is None:
        raise InvalidTarget(f"invalid spec {quote(text)}: {quote(version)} is not a version")
    return VirtualPackage(name, version or "0", build or "0", Source.FROM_CONDA)
