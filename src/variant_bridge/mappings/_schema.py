"""Decoded YAML -> the frozen tables: each rule type declared as a record of readers.

In the style of packaging's ``pylock.py`` (``_get``/``_get_required`` and a ``_from_dict`` per
type): ``record`` (:mod:`~variant_bridge.mappings._reading`) declares a type's keys with a reader
each, and a problem carries its key path, built up as it propagates (``features`` + ``sm_arch`` +
``rule``). Unlike pylock, reading goes on after a problem, so one
:class:`~variant_bridge.errors.MappingTableError` lists every problem as
``file: key.path: message``. platform.yaml's readers are in ``_platform_schema``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name

from variant_bridge.mappings._platform_schema import platform_table
from variant_bridge.mappings._reading import (
    CONDA_NAME_RE,
    Invalid,
    Opt,
    Problems,
    Reader,
    boolean,
    conda_name,
    fail,
    feature_name,
    fields,
    got,
    int_range,
    kind_of,
    listed,
    major_minor,
    mapping,
    namespace,
    optional,
    overrides,
    property_value,
    record,
    schema_version,
    strings,
    template,
    text,
    virtual_package,
)
from variant_bridge.mappings.tables import (
    CPU_TABLE_FILES,
    TABLE_FILES,
    AmdFeature,
    AmdTable,
    CpuTable,
    CudaReleases,
    FamilyKey,
    IntelTable,
    LabelConvention,
    MappingTables,
    NameMapping,
    NameTable,
    NvccRelease,
    NvidiaFeature,
    NvidiaTable,
    OverrideVariable,
    ToolkitTable,
)
from variant_bridge.properties import FEATURE_RE

__all__ = ["AMD_RULES", "NVIDIA_RULES", "tables_from_documents"]

# Each built-in rule parses values into these kinds; spec templates may be keyed by kind.
NVIDIA_RULES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "cuda_lower_bound": ("version",),
        "cuda_upper_bound": ("version",),
        "sm_arch": ("real", "virtual"),
    }
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
        virtual_package=virtual_package,
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
    schema=schema_version,
    namespace=namespace,
    driver=record(fields, virtual_package=virtual_package, majors=int_range, minors=int_range),
    toolkit=record(fields, packages=strings(CONDA_NAME_RE, "a conda package name")),
    gpu=record(
        fields,
        virtual_package=virtual_package,
        majors=int_range,
        minors=int_range,
        lowest=major_minor,
    ),
    overrides=overrides,
    features=_nvidia_features,
)

# --------------------------------------------------------------------------------------------
# amd.yaml, intel.yaml
# --------------------------------------------------------------------------------------------

# The placeholders each amd rule fills in its spec templates.
AMD_RULES: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "gfx_arch": frozenset({"value", "isa", "major", "minor", "stepping"}),
        "rocm_version": frozenset({"value", "major", "minor"}),
    }
)
_VERSION_RE = re.compile(r"(0|[1-9][0-9]{0,3})\.(0|[1-9][0-9]{0,3})")


def _amd_feature(name: str, value: Any) -> AmdFeature:
    if FEATURE_RE.fullmatch(name) is None:
        fail(f"invalid feature name {name!r}: must match {FEATURE_RE.pattern}")
    rule = value.get("rule") if isinstance(value, Mapping) else None
    allowed = AMD_RULES.get(rule, frozenset()) if isinstance(rule, str) else frozenset()
    shape = re.compile(r"[a-z0-9_][a-z0-9._-]* \S+")
    specs = listed(
        template(allowed, shape=shape, shape_text="'<package> <version spec>'"), "spec templates"
    )
    return record(
        lambda *, rule, multi_value, specs: AmdFeature(name, rule, multi_value, specs),
        rule=text(choices=tuple(AMD_RULES)),
        multi_value=boolean,
        specs=specs,
    )(value)


def _amd_features(value: Any) -> tuple[AmdFeature, ...]:
    features = mapping(_amd_feature)(value)
    rules = sorted(f.rule for f in features.values())
    if rules != sorted(AMD_RULES):
        fail(f"expected one feature per rule ({', '.join(sorted(AMD_RULES))}), got {rules}")
    return tuple(features.values())


def _amd_overrides(value: Any) -> tuple[OverrideVariable, ...]:
    read = overrides(value)
    names = sorted(o.virtual_package for o in read)
    if names != ["__amdgpu", "__amdgpu_arch"]:
        fail(f"expected the overrides of __amdgpu and __amdgpu_arch, got {names}")
    return read


def _amd_table(
    *,
    schema: int,
    namespace: str,
    driver: Any,
    gpu: Any,
    runtime: Any,
    overrides: tuple[OverrideVariable, ...],
    runtime_override: str,
    features: tuple[AmdFeature, ...],
) -> AmdTable:
    return AmdTable(
        namespace=namespace,
        driver_package=driver["virtual_package"],
        driver_version=driver["version"],
        arch_package=gpu["virtual_package"],
        gfx_prefix=gpu["prefix"],
        several=gpu["several"],
        known_gfx=gpu["known"],
        runtime_packages=runtime["packages"],
        root_variable=runtime["root_variable"],
        default_root=runtime["default_root"],
        version_file=runtime["version_file"],
        runtime_versions=runtime["versions"],
        overrides=overrides,
        runtime_override=runtime_override,
        features=features,
    )


_VARIABLE_RE = re.compile(r"[A-Z][A-Z0-9_]*")
_variable = text(_VARIABLE_RE, "an upper-case variable name")

_amd = record(
    _amd_table,
    schema=schema_version,
    namespace=namespace,
    driver=record(fields, virtual_package=virtual_package, version=text(re.compile(r"[0-9]+"))),
    gpu=record(
        fields,
        virtual_package=virtual_package,
        prefix=text(re.compile(r"[a-z]+"), "a lower-case prefix"),
        several=text(expected="which GPU decides, in words"),
        known=strings(re.compile(r"gfx[1-9][0-9]{0,2}[0-9a-f]{2}"), "a gfx name like gfx942"),
    ),
    runtime=record(
        fields,
        packages=strings(CONDA_NAME_RE, "a conda package name"),
        root_variable=_variable,
        default_root=text(expected="a directory"),
        version_file=text(expected="a path relative to the root"),
        versions=strings(_VERSION_RE, "a version 'M.N'"),
    ),
    overrides=_amd_overrides,
    runtime_override=_variable,
    features=_amd_features,
)


def _intel_table(*, schema: int, **values: Any) -> IntelTable:
    return IntelTable(**values)


_intel = record(
    _intel_table,
    schema=schema_version,
    namespace=namespace,
    feature=feature_name,
    multi_value=boolean,
    target=text(re.compile(r"[a-z][a-z0-9_]*"), "a --target key"),
    provider_override=_variable,
    plugin_api=text(re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*"), "'module:Class'"),
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
    schema=schema_version,
    namespace=namespace,
    archspec_family=text(expected="an archspec family name"),
    virtual_package=virtual_package,
    overrides=overrides,
    generation=record(
        fields,
        feature=feature_name,
        base=record(fields, value=property_value, archspec=text(expected="an archspec name")),
        archspec_template=template({"value"}, required={"value"}),
        max=property_value,
    ),
    flags=record(
        fields,
        value=property_value,
        order=strings(FEATURE_RE, "a feature name", allow_empty=True),
    ),
    specs=record(
        fields,
        rattler=template({"names"}, required={"names"}),
        conda=template({"name"}, required={"name"}),
        conda_quoted=template({"name"}, required={"name"}),
    ),
    metapackage=Opt(optional(conda_name)),
)

# --------------------------------------------------------------------------------------------
# names.yaml
# --------------------------------------------------------------------------------------------

_PYPI_NAME_RE = re.compile(r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?")
_pypi_name = text(_PYPI_NAME_RE, "a PyPI name")
_PypiNames = tuple[tuple[int | None, str], ...]


_ANY_MAJOR = "any"


def _pypi_names(value: Any) -> _PypiNames:
    """``name`` for every CUDA major, or ``{cuda major or 'any': name or [names]}``."""
    if isinstance(value, str):
        return ((None, _pypi_name(value)),)
    if not isinstance(value, Mapping) or not value:
        fail(f"expected a PyPI name or {{cuda major: name or [names]}}, got {got(value)}")
    problems = Problems()
    result: list[tuple[int | None, str]] = []
    for key, names in value.items():
        major: int | None = None
        if key != _ANY_MAJOR and (isinstance(key, bool) or not isinstance(key, int) or key < 1):
            problems.add(
                str(key), f"expected a CUDA major (an integer) or 'any' as key, got {key!r}"
            )
            continue
        if key != _ANY_MAJOR:
            major = key
        read = _pypi_name if isinstance(names, str) else strings(_PYPI_NAME_RE, "a PyPI name")
        listed = problems.read(str(key), names, read)
        if listed is not None:
            result += [(major, name) for name in ((listed,) if isinstance(listed, str) else listed)]
    problems.done()
    return tuple(result)


_RELEASE_RE = re.compile(r"(0|[1-9][0-9]{0,8})(\.(0|[1-9][0-9]{0,8})){0,3}")
_CUDA_MINOR_RE = re.compile(r"(1[0-9]|[1-9])\.(0|[1-9][0-9]?)")


def _release(value: Any) -> tuple[int, ...]:
    return tuple(
        int(n) for n in text(_RELEASE_RE, "a version prefix like '11.3.3'")(value).split(".")
    )


def _cuda_minor(value: Any) -> tuple[int, int]:
    major, minor = text(_CUDA_MINOR_RE, "a CUDA version like '12.8'")(value).split(".")
    return int(major), int(minor)


def _releases(value: Any) -> tuple[tuple[tuple[int, ...], tuple[int, int]], ...]:
    if not isinstance(value, Mapping) or not value:
        fail(f"expected a mapping of version prefix -> CUDA version, got {got(value)}")
    problems = Problems()
    result = []
    for key, cuda in value.items():
        prefix = problems.read(str(key), key, _release)
        minor = problems.read(str(key), cuda, _cuda_minor)
        if prefix is not None and minor is not None:
            result.append((prefix, minor))
    problems.done()
    return tuple(result)


def _specifier(value: Any) -> str:
    spec = text(expected="a version range like '>=12,<13.1'")(value)
    try:
        SpecifierSet(spec)
    except InvalidSpecifier:
        fail(f"expected a version range like '>=12,<13.1', got {spec!r}")
    return spec


def _cuda_rule(*, same_minor: str | None, releases: Any, source: str) -> CudaReleases:
    if same_minor is None and not releases:
        fail("expected same_minor, releases or both")
    return CudaReleases(same_minor, releases, source)


_cuda_releases = record(
    _cuda_rule,
    same_minor=Opt(_specifier),
    releases=Opt(_releases, ()),
    source=text(expected="where the rule comes from"),
)


def _package(value: Any) -> tuple[NameMapping, ...]:
    # Which placeholders `requires` may use depends on the PyPI names (their problems are the
    # record's to report).
    pypi = Problems().read(
        "", value.get("pypi") if isinstance(value, Mapping) else None, _pypi_names
    )
    per_major = bool(pypi) and all(major is not None for major, _ in pypi or ())

    def build(
        *, conda: str, kind: str, pypi: _PypiNames, also_conda: tuple[str, ...], build: str | None,
        requires: tuple[str, ...], cuda: CudaReleases | None,
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
                cuda=cuda,
            )
            for major, name in pypi
        )

    return record(
        build,
        conda=conda_name,
        kind=text(choices=("cuda-library", "cuda-meta", "python")),
        pypi=_pypi_names,
        also_conda=Opt(strings(CONDA_NAME_RE, "a conda package name"), ()),
        build=Opt(optional(text(expected="a build-string glob"))),
        requires=Opt(listed(template({"cuda_major"} if per_major else ()), "conda specs"), ()),
        cuda=Opt(_cuda_releases),
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
    schema=schema_version,
    abi_dependency=record(
        fields,
        namespace=namespace,
        spec=template({"conda", "version"}, required={"conda", "version"}),
    ),
    packages=_packages,
)

# --------------------------------------------------------------------------------------------
# toolkits.yaml
# --------------------------------------------------------------------------------------------

_capabilities = listed(major_minor, "compute capabilities like '9.0'", unique=True)


def _nvcc_row(
    *, cuda: tuple[int, int], compute: tuple[tuple[int, int], ...],
    arch_specific: tuple[tuple[int, int], ...], family_specific: tuple[tuple[int, int], ...],
) -> NvccRelease:  # fmt: skip
    problems = Problems()
    for key, listed_ in (("arch_specific", arch_specific), ("family_specific", family_specific)):
        for i, capability in enumerate(listed_):
            if capability not in compute:
                problems.add(f"{key}[{i}]", f"{capability[0]}.{capability[1]} is not in compute")
    problems.done()
    return NvccRelease(cuda, compute, arch_specific, family_specific)


def _nvcc(value: Any) -> tuple[NvccRelease, ...]:
    rows = listed(
        record(
            _nvcc_row,
            cuda=major_minor,
            compute=_capabilities,
            arch_specific=Opt(_capabilities, ()),
            family_specific=Opt(_capabilities, ()),
        ),
        "nvcc releases",
    )(value)
    problems = Problems()
    for i in range(1, len(rows)):
        if rows[i].cuda <= rows[i - 1].cuda:
            problems.add(f"[{i}].cuda", "releases must be listed oldest first, each once")
    problems.done()
    return rows


def _glibc_floors(value: Any) -> dict[int, tuple[int, int]]:
    rows = listed(
        record(
            lambda *, cuda_major, floor: (cuda_major, floor),
            cuda_major=_cuda_major,
            floor=major_minor,
        ),
        "glibc floors",
    )(value)
    majors = [major for major, _ in rows]
    if len(set(majors)) != len(majors):
        fail("a CUDA major is listed twice")
    return dict(rows)


def _cuda_major(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 99:
        fail(f"expected a CUDA major (an integer), got {got(value)}")
    return value


def _label_convention(*, pattern: str, says: str, example: str, source: str) -> LabelConvention:
    try:
        groups = set(re.compile(pattern).groupindex)
    except re.error as e:
        fail(f"invalid regular expression {pattern!r}: {e}", "pattern")
    wanted = {"major", "minor"} if says == "minor" else {"major"}
    if groups != wanted:
        fail(f"expected the groups {sorted(wanted)}, got {sorted(groups)}", "pattern")
    convention = LabelConvention(pattern, says, example, source)  # type: ignore[arg-type]
    if convention.read(example) is None:
        fail(f"the example {example!r} does not match the pattern", "example")
    return convention


_labels = listed(
    record(
        _label_convention,
        pattern=text(expected="a regular expression"),
        says=text(choices=("minor", "major")),
        example=text(expected="a label"),
        source=text(expected="where the convention is documented"),
    ),
    "label conventions",
)

_families = listed(
    record(
        FamilyKey,
        key=text(re.compile(r"[A-Za-z_][A-Za-z0-9_]*"), "a conda variant key"),
        wheels=text(expected="the value of the family wheels are built for"),
        source=text(expected="where the convention comes from"),
    ),
    "family keys",
    allow_empty=True,
)

_toolkits = record(
    lambda *, schema, nvcc, glibc, labels, families: ToolkitTable(
        nvcc, MappingProxyType(glibc), labels, families
    ),
    schema=schema_version,
    nvcc=_nvcc,
    glibc=_glibc_floors,
    labels=_labels,
    families=_families,
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
        "platform.yaml": platform_table(families),
        "names.yaml": _names,
        "toolkits.yaml": _toolkits,
        "amd.yaml": _amd,
        "intel.yaml": _intel,
    }
    read: dict[str, Any] = {}
    for name, reader in readers.items():
        if isinstance(raw.get(name), Mapping):
            try:
                read[name] = reader(raw[name])
            except Invalid as e:
                problems += [f"{name}: {path}: {message}" for path, message in e.problems]
    spaces = [
        t.namespace
        for t in read.values()
        if isinstance(t, (NvidiaTable, CpuTable, AmdTable, IntelTable))
    ]
    spaces += [t.abi_namespace for t in read.values() if isinstance(t, NameTable)]
    problems += [
        f"namespace {ns!r} is defined by more than one table"
        for ns in sorted({s for s in spaces if spaces.count(s) > 1})
    ]
    if problems or len(read) != len(TABLE_FILES):
        return None, problems
    cpus = tuple(read[name] for name in CPU_TABLE_FILES)
    tables = MappingTables(
        read["nvidia.yaml"],
        cpus,
        read["platform.yaml"],
        read["names.yaml"],
        read["toolkits.yaml"],
        read["amd.yaml"],
        read["intel.yaml"],
    )
    return tables, []
