"""Decoded YAML -> the frozen tables: each rule type declared as a record of readers.

In the style of packaging's ``pylock.py`` (``_get``/``_get_required`` and a ``_from_dict`` per
type): :func:`record` declares a type's keys with a reader each, and a problem carries its key
path, built up as it propagates (``features`` + ``sm_arch`` + ``rule``). Unlike pylock, reading
goes on after a problem, so one :class:`~variant_bridge.errors.MappingTableError` lists every
problem as ``file: key.path: message``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from types import MappingProxyType
from typing import Any

from packaging.utils import canonicalize_name

from variant_bridge.mappings._reading import (
    Invalid,
    Opt,
    Problems,
    Reader,
    boolean,
    fail,
    got,
    int_range,
    kind_of,
    listed,
    mapping,
    optional,
    record,
    strings,
    template,
    text,
)
from variant_bridge.mappings.tables import (
    CpuTable,
    MappingTables,
    NameMapping,
    NameTable,
    NvidiaFeature,
    NvidiaTable,
    OperatingSystem,
    OverrideVariable,
    PlatformTable,
    PlatformTagRule,
    SubdirInfo,
    TagAlias,
)
from variant_bridge.properties import FEATURE_RE, NAMESPACE_RE, VALUE_RE

__all__ = ["CPU_TABLE_FILES", "NVIDIA_RULES", "TABLE_FILES", "tables_from_documents"]

TABLE_FILES = ("nvidia.yaml", "x86_64.yaml", "aarch64.yaml", "platform.yaml", "names.yaml")
CPU_TABLE_FILES = ("x86_64.yaml", "aarch64.yaml")
SCHEMA = 1

# Each built-in rule parses values into these kinds; spec templates may be keyed by kind.
NVIDIA_RULES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "cuda_lower_bound": ("version",),
        "cuda_upper_bound": ("version",),
        "sm_arch": ("real", "virtual"),
    }
)


# --------------------------------------------------------------------------------------------
def _schema(value: Any) -> int:
    if value != SCHEMA:
        fail(f"expected {SCHEMA}, got {got(value)}")
    return SCHEMA


def _version(value: Any) -> tuple[int, int]:
    major, minor = text(re.compile(r"[0-9]+\.[0-9]+"), "a version 'M.N'")(value).split(".")
    return int(major), int(minor)


def _fields(**values: Any) -> dict[str, Any]:
    return values


_virtual_package = text(re.compile(r"__[a-z0-9_]+"), "a string starting with '__'")
_CONDA_NAME_RE = re.compile(r"[a-z0-9_][a-z0-9._-]*")
_conda_name = text(_CONDA_NAME_RE, "a conda package name")
_namespace = text(NAMESPACE_RE, "a namespace")
_feature_name = text(FEATURE_RE, "a feature name")
_property_value = text(VALUE_RE, "a property value")
_SUBDIR_RE = re.compile(r"[a-z0-9]+-[a-z0-9_]+")

_overrides = listed(
    record(
        OverrideVariable,
        virtual_package=_virtual_package,
        conda=text(
            re.compile(r"CONDA_OVERRIDE_[A-Z0-9_]+"),
            "a variable name starting with 'CONDA_OVERRIDE_'",
        ),
        provider=Opt(optional(text(re.compile(r"[A-Z][A-Z0-9_]*"), "an upper-case variable name"))),
    ),
    "overrides",
    allow_empty=True,
)

# --------------------------------------------------------------------------------------------
# nvidia.yaml
# --------------------------------------------------------------------------------------------

_spec_templates = listed(
    template(
        {"value", "major", "minor", "next_major"},
        # "<package> <version spec>": the shape whose version parts can be OR-ed with "|".
        shape=re.compile(r"[a-z0-9_][a-z0-9._-]* \S+"),
        shape_text="'<package> <version spec>' (no build, no spaces in the version)",
    ),
    "spec templates",
)


def _feature_specs(value: Any) -> tuple[str, ...] | dict[str, tuple[str, ...]]:
    """One template list for every value kind, or one per kind (``real:``, ``virtual:``)."""
    if isinstance(value, list):
        return _spec_templates(value)
    return mapping(lambda _, v: _spec_templates(v))(value)


def _nvidia_feature(name: str, value: Any) -> NvidiaFeature:
    if FEATURE_RE.fullmatch(name) is None:
        fail(f"invalid feature name {name!r}: must match {FEATURE_RE.pattern}")

    def build(*, rule: str, multi_value: bool, virtual_package: str, specs: Any) -> NvidiaFeature:
        kinds = NVIDIA_RULES[rule]
        if isinstance(specs, tuple):
            specs = dict.fromkeys(kinds, specs)
        problems = Problems()
        for kind in kinds:
            if kind not in specs:
                problems.add(f"specs.{kind}", "missing")
        for kind in specs:
            if kind not in kinds:
                problems.add(f"specs.{kind}", f"unknown key (expected one of: {', '.join(kinds)})")
        problems.done()
        return NvidiaFeature(name, rule, multi_value, virtual_package, MappingProxyType(specs))  # type: ignore[arg-type]

    return record(
        build,
        rule=text(choices=tuple(NVIDIA_RULES)),
        multi_value=boolean,
        virtual_package=_virtual_package,
        specs=_feature_specs,
    )(value)


def _nvidia_features(value: Any) -> tuple[NvidiaFeature, ...]:
    features = mapping(_nvidia_feature)(value)
    if not features:
        fail("expected at least one feature")
    rules = [f.rule for f in features.values()]
    problems = Problems()
    for i, feature in enumerate(features.values()):
        if feature.rule in rules[:i]:
            problems.add(f"{feature.name}.rule", f"rule {feature.rule!r} is used by two features")
    problems.done()
    return tuple(features.values())


def _nvidia_table(
    *,
    schema: int,
    namespace: str,
    driver: Any,
    toolkit: Any,
    gpu: Any,
    overrides: Any,
    features: Any,
) -> NvidiaTable:
    return NvidiaTable(
        namespace=namespace,
        driver_package=driver["virtual_package"],
        driver_majors=driver["majors"],
        driver_minors=driver["minors"],
        toolkit_packages=toolkit["packages"],
        arch_package=gpu["virtual_package"],
        arch_majors=gpu["majors"],
        arch_minors=gpu["minors"],
        lowest_arch=gpu["lowest"],
        overrides=overrides,
        features=features,
    )


_nvidia = record(
    _nvidia_table,
    schema=_schema,
    namespace=_namespace,
    driver=record(_fields, virtual_package=_virtual_package, majors=int_range, minors=int_range),
    toolkit=record(_fields, packages=strings(_CONDA_NAME_RE, "a conda package name")),
    gpu=record(
        _fields,
        virtual_package=_virtual_package,
        majors=int_range,
        minors=int_range,
        lowest=_version,
    ),
    overrides=_overrides,
    features=_nvidia_features,
)

# --------------------------------------------------------------------------------------------
# x86_64.yaml, aarch64.yaml
# --------------------------------------------------------------------------------------------


def _cpu_table(
    *,
    schema: int,
    namespace: str,
    archspec_family: str,
    virtual_package: str,
    overrides: tuple[OverrideVariable, ...],
    generation: dict[str, Any],
    flags: dict[str, Any],
    specs: dict[str, str],
    metapackage: str | None,
) -> CpuTable:
    if generation["feature"] in flags["order"]:
        fail(f"{generation['feature']!r} is the generation feature, not a flag", "flags.order")
    return CpuTable(
        namespace=namespace,
        archspec_family=archspec_family,
        virtual_package=virtual_package,
        generation_feature=generation["feature"],
        base_value=generation["base"]["value"],
        base_archspec=generation["base"]["archspec"],
        archspec_template=generation["archspec_template"],
        max_value=generation["max"],
        flag_value=flags["value"],
        flag_order=flags["order"],
        rattler_spec=specs["rattler"],
        conda_spec=specs["conda"],
        conda_quoted_spec=specs["conda_quoted"],
        overrides=overrides,
        metapackage=metapackage,
    )


_cpu = record(
    _cpu_table,
    schema=_schema,
    namespace=_namespace,
    archspec_family=text(expected="an archspec family name"),
    virtual_package=_virtual_package,
    overrides=_overrides,
    generation=record(
        _fields,
        feature=_feature_name,
        base=record(_fields, value=_property_value, archspec=text(expected="an archspec name")),
        archspec_template=template({"value"}, required={"value"}),
        max=_property_value,
    ),
    flags=record(
        _fields,
        value=_property_value,
        order=strings(FEATURE_RE, "a feature name", allow_empty=True),
    ),
    specs=record(
        _fields,
        rattler=template({"names"}, required={"names"}),
        conda=template({"name"}, required={"name"}),
        conda_quoted=template({"name"}, required={"name"}),
    ),
    metapackage=Opt(optional(_conda_name)),
)

# --------------------------------------------------------------------------------------------
# platform.yaml
# --------------------------------------------------------------------------------------------


def _subdir(
    families: Collection[str], os_names: Collection[str] | None
) -> Callable[[str, Any], SubdirInfo]:
    def family(value: Any) -> str | None:
        name = optional(text(expected="an archspec family"))(value)
        if name is not None and families and name not in families:
            known = ", ".join(sorted(families))
            fail(f"{name!r} is not the archspec_family of any CPU table ({known}); use null")
        return name

    def read(name: str, value: Any) -> SubdirInfo:
        if _SUBDIR_RE.fullmatch(name) is None:
            fail(f"invalid subdir name {name!r}: expected '<os>-<arch>'")

        def build(
            *, os: str, system: str, machines: tuple[str, ...], arch: str, cpu_family: str | None
        ) -> SubdirInfo:
            return SubdirInfo(
                name, os, system, tuple(m.lower() for m in machines), arch, cpu_family
            )

        return record(
            build,
            os=text(choices=os_names),
            system=text(expected="a platform.system() name"),
            machines=strings(expected="a machine name"),
            arch=text(expected="an architecture name"),
            cpu_family=family,
        )(value)

    return read


def _tag_alias(name: str, value: Any) -> TagAlias:
    def build(*, tag: str, arches: tuple[str, ...] | None) -> TagAlias:
        return TagAlias(name, tag, None if arches is None else frozenset(arches))

    return record(
        build,
        tag=text(expected="a platform tag prefix"),
        arches=optional(strings(expected="an architecture")),
    )(value)


def _regex(value: Any) -> str:
    pattern = text(expected="a regular expression")(value)
    try:
        re.compile(pattern)
    except re.error as e:
        fail(f"invalid regular expression {pattern!r}: {e}")
    return pattern


def _tag_rule(
    os_names: Collection[str] | None, subdirs: Collection[str] | None
) -> Callable[[str, Any], PlatformTagRule]:
    def subdir(value: Any) -> str:
        name = text(_SUBDIR_RE, "a subdir")(value)
        if subdirs is not None and name not in subdirs:
            fail(f"unknown subdir {name!r} (not under subdirs)")
        return name

    arches = optional(mapping(lambda _, v: listed(subdir, "subdirs")(v)))

    def read(name: str, value: Any) -> PlatformTagRule:
        def build(
            *,
            pattern: str,
            os: str | None,
            libc: str | None,
            virtual_package: str | None,
            arches: Any,
        ) -> PlatformTagRule:
            groups = set(re.compile(pattern).groupindex)
            if libc == "glibc" and virtual_package is None:
                fail(
                    "a glibc rule needs the virtual package that carries the glibc version",
                    "virtual_package",
                )
            if virtual_package is not None and not {"major", "minor"} <= groups:
                fail(
                    "a rule with a virtual_package needs (?P<major>) and (?P<minor>) groups",
                    "pattern",
                )
            if arches is not None and "arch" not in groups:
                fail("arches need a (?P<arch>) group in the pattern", "arches")
            mapped = None if arches is None else MappingProxyType(arches)
            return PlatformTagRule(name, pattern, os, libc, virtual_package, mapped)

        return record(
            build,
            pattern=_regex,
            os=optional(text(choices=os_names)),
            libc=optional(text(choices=("glibc", "musl"))),
            virtual_package=optional(_virtual_package),
            arches=arches,
        )(value)

    return read


def _keys(section: object) -> tuple[str, ...] | None:
    return tuple(map(str, section)) if isinstance(section, Mapping) else None


def _platform(families: Collection[str]) -> Callable[[Any], PlatformTable]:
    """*families*: the CPU tables' archspec families (read even from broken CPU files, so that
    one broken CPU table neither hides nor invents problems here)."""

    def read(value: Any) -> PlatformTable:
        # Sections name each other by their raw keys, so that a problem in one entry does not
        # hide (or invent) problems in the entries that name it.
        doc = value if isinstance(value, Mapping) else {}
        os_names, subdirs = _keys(doc.get("os")), _keys(doc.get("subdirs"))

        def build(*, schema: int, subdirs: Any, os: Any, platform_tags: Any) -> PlatformTable:
            return PlatformTable(
                subdirs=MappingProxyType(subdirs),
                operating_systems=MappingProxyType(os),
                tag_aliases=MappingProxyType(platform_tags["aliases"]),
                tag_rules=tuple(platform_tags["rules"].values()),
            )

        return record(
            build,
            schema=_schema,
            subdirs=mapping(_subdir(families, os_names)),
            os=mapping(
                lambda _, v: record(
                    OperatingSystem,
                    name=text(expected="a name for messages"),
                    overrides=_overrides,
                )(v)
            ),
            platform_tags=record(
                _fields,
                aliases=mapping(_tag_alias),
                rules=mapping(_tag_rule(os_names, subdirs)),
            ),
        )(value)

    return read


# --------------------------------------------------------------------------------------------
# names.yaml
# --------------------------------------------------------------------------------------------

_PYPI_NAME_RE = re.compile(r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?")
_pypi_name = text(_PYPI_NAME_RE, "a PyPI name")
_PypiNames = tuple[tuple[int | None, str], ...]


def _pypi_names(value: Any) -> _PypiNames:
    """``name`` for every CUDA major, or ``{cuda major: name or [names]}``."""
    if isinstance(value, str):
        return ((None, _pypi_name(value)),)
    if not isinstance(value, Mapping) or not value:
        fail(f"expected a PyPI name or {{cuda major: name or [names]}}, got {got(value)}")
    problems = Problems()
    result: list[tuple[int | None, str]] = []
    for major, names in value.items():
        if isinstance(major, bool) or not isinstance(major, int) or major < 1:
            problems.add(str(major), f"expected a CUDA major (an integer) as key, got {major!r}")
            continue
        read = _pypi_name if isinstance(names, str) else strings(_PYPI_NAME_RE, "a PyPI name")
        listed = problems.read(str(major), names, read)
        if listed is not None:
            result += [(major, name) for name in ((listed,) if isinstance(listed, str) else listed)]
    problems.done()
    return tuple(result)


def _package(value: Any) -> tuple[NameMapping, ...]:
    # Which placeholders `requires` may use depends on the PyPI names (their problems are the
    # record's to report).
    pypi = Problems().read(
        "", value.get("pypi") if isinstance(value, Mapping) else None, _pypi_names
    )
    per_major = bool(pypi) and all(major is not None for major, _ in pypi or ())

    def build(
        *, conda: str, kind: str, pypi: _PypiNames, also_conda: tuple[str, ...], build: str | None,
        requires: tuple[str, ...],
    ) -> tuple[NameMapping, ...]:  # fmt: skip
        return tuple(
            NameMapping(
                pypi=canonicalize_name(name),
                conda=conda,
                kind=kind,  # type: ignore[arg-type]
                cuda_major=major,
                build=build,
                requires=tuple(t.format(cuda_major=major) for t in requires),
                also_conda=also_conda,
            )
            for major, name in pypi
        )

    return record(
        build,
        conda=_conda_name,
        kind=text(choices=("cuda-library", "cuda-meta", "python")),
        pypi=_pypi_names,
        also_conda=Opt(strings(_CONDA_NAME_RE, "a conda package name"), ()),
        build=Opt(optional(text(expected="a build-string glob"))),
        requires=Opt(listed(template({"cuda_major"} if per_major else ()), "conda specs"), ()),
    )(value)


def _packages(value: Any) -> tuple[NameMapping, ...]:
    if not isinstance(value, list) or not value:
        fail(f"expected a non-empty list of packages, got {got(value)}")
    problems = Problems()
    owner: dict[str, str] = {}
    entries: list[NameMapping] = []
    for i, item in enumerate(value):
        # PyPI names are compared even in otherwise broken entries.
        pypi = item.get("pypi") if isinstance(item, Mapping) else None
        for major, name in Problems().read("", pypi, _pypi_names) or ():
            canonical = canonicalize_name(name)
            if canonical in owner:
                where = f"[{i}]" if major is None else f"[{i}].pypi.{major}"
                problems.add(where, f"PyPI name {name!r} is already mapped by {owner[canonical]}")
            owner.setdefault(canonical, f"packages[{i}]")
        entries += problems.read(f"[{i}]", item, _package) or ()
    problems.done()
    return tuple(entries)


_names = record(
    lambda *, schema, abi_dependency, packages: NameTable(
        packages, abi_dependency["namespace"], abi_dependency["spec"]
    ),
    schema=_schema,
    abi_dependency=record(
        _fields,
        namespace=_namespace,
        spec=template({"conda", "version"}, required={"conda", "version"}),
    ),
    packages=_packages,
)

# --------------------------------------------------------------------------------------------
# All tables
# --------------------------------------------------------------------------------------------


def tables_from_documents(raw: Mapping[str, Any]) -> tuple[MappingTables | None, list[str]]:
    """The tables from decoded YAML (file name -> document), or every problem found."""
    problems = [
        f"{name}: unexpected table (expected {', '.join(TABLE_FILES)})"
        for name in raw
        if name not in TABLE_FILES
    ]
    for name in TABLE_FILES:
        if name not in raw:
            problems.append(f"{name}: missing")
        elif not isinstance(raw[name], Mapping):
            problems.append(
                f"{name}: expected a mapping at the top level, got {kind_of(raw[name])}"
            )
    families = {
        doc["archspec_family"]
        for name in CPU_TABLE_FILES
        if isinstance(doc := raw.get(name), Mapping) and isinstance(doc.get("archspec_family"), str)
    }
    readers: dict[str, Reader] = {
        "nvidia.yaml": _nvidia,
        "x86_64.yaml": _cpu,
        "aarch64.yaml": _cpu,
        "platform.yaml": _platform(families),
        "names.yaml": _names,
    }
    read: dict[str, Any] = {}
    for name, reader in readers.items():
        if isinstance(raw.get(name), Mapping):
            try:
                read[name] = reader(raw[name])
            except Invalid as e:
                problems += [f"{name}: {path}: {message}" for path, message in e.problems]
    spaces = [t.namespace for t in read.values() if isinstance(t, (NvidiaTable, CpuTable))]
    spaces += [t.abi_namespace for t in read.values() if isinstance(t, NameTable)]
    problems += [
        f"namespace {ns!r} is defined by more than one table"
        for ns in sorted({s for s in spaces if spaces.count(s) > 1})
    ]
    if problems or len(read) != len(TABLE_FILES):
        return None, problems
    cpus = tuple(read[name] for name in CPU_TABLE_FILES)
    return MappingTables(read["nvidia.yaml"], cpus, read["platform.yaml"], read["names.yaml"]), []
