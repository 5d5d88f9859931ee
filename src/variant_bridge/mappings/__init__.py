"""The mapping tables (``mappings/*.yaml``) as frozen rules the translator reads.

The YAML files are data: namespaces, features, value ranges, which virtual package each feature
maps to, reverse spec templates, override variables, platform tags and the PyPI <-> conda name
table. :func:`parse_tables` turns decoded YAML into frozen dataclasses after checking every key;
:func:`validate_tables` lists every problem with its key path, so a broken edit is reported in
one go. Microarchitecture facts are not here: :mod:`variant_bridge.translate` asks archspec.

Nothing is read at import time; :func:`load_tables` reads the packaged files once.
"""

from __future__ import annotations

import functools
import re
import string
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import resources
from types import MappingProxyType
from typing import Any, Literal, cast

import yaml
from packaging.utils import NormalizedName, canonicalize_name

from variant_bridge.errors import MappingTableError
from variant_bridge.properties import FEATURE_RE, NAMESPACE_RE, VALUE_RE

__all__ = [
    "CPU_TABLE_FILES",
    "NVIDIA_RULES",
    "TABLE_FILES",
    "CpuTable",
    "IntRange",
    "MappingTables",
    "NameMapping",
    "NameTable",
    "NvidiaFeature",
    "NvidiaRule",
    "NvidiaTable",
    "OverrideVariable",
    "PlatformTable",
    "PlatformTagRule",
    "SubdirInfo",
    "load_tables",
    "parse_tables",
    "read_tables",
    "validate_tables",
]

TABLE_FILES = ("nvidia.yaml", "x86_64.yaml", "aarch64.yaml", "platform.yaml", "names.yaml")
CPU_TABLE_FILES = ("x86_64.yaml", "aarch64.yaml")
SCHEMA = 1

NvidiaRule = Literal["cuda_lower_bound", "cuda_upper_bound", "sm_arch"]
# Each built-in rule parses values into these kinds; spec templates may be keyed by kind.
NVIDIA_RULES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "cuda_lower_bound": ("version",),
        "cuda_upper_bound": ("version",),
        "sm_arch": ("real", "virtual"),
    }
)
NVIDIA_PLACEHOLDERS = frozenset({"value", "major", "minor", "next_major"})
NAME_KINDS = ("cuda-library", "cuda-meta", "python")
LIBCS = ("glibc", "musl")

# libyaml's safe loader when pyyaml was built with it: about 10x faster start-up.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_VIRTUAL_RE = re.compile(r"__[a-z0-9_]+")
_CONDA_NAME_RE = re.compile(r"[a-z0-9_][a-z0-9._-]*")
_PYPI_NAME_RE = re.compile(r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?")
_ENV_VAR_RE = re.compile(r"[A-Z][A-Z0-9_]*")
_SUBDIR_RE = re.compile(r"[a-z0-9]+-[a-z0-9_]+")
_VERSION_RE = re.compile(r"[0-9]+\.[0-9]+")
_PLAIN_BUILD_RE = re.compile(r"[A-Za-z0-9_]+")
# "<package> <version spec>": the shape whose version parts can be OR-ed with "|".
_NAME_VERSION_SPEC_RE = re.compile(r"(?P<name>[a-z0-9_][a-z0-9._-]*) (?P<version>\S+)")


# --------------------------------------------------------------------------------------------
# The frozen rules
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class IntRange:
    """An inclusive range of integers, e.g. CUDA majors 11..15."""

    low: int
    high: int

    def __contains__(self, number: object) -> bool:
        return isinstance(number, int) and self.low <= number <= self.high

    def __str__(self) -> str:
        return f"{self.low}..{self.high}"


@dataclass(frozen=True, slots=True)
class OverrideVariable:
    """Environment variables that override one virtual package, in both worlds."""

    virtual_package: str
    conda: str
    provider: str | None = None
    """The wheel-variant provider's own variable for the same fact, if it has one."""


@dataclass(frozen=True, slots=True)
class NvidiaFeature:
    """One ``nvidia`` feature: its value rule and reverse spec templates per value kind."""

    name: str
    rule: NvidiaRule
    multi_value: bool
    virtual_package: str
    specs: tuple[tuple[str, tuple[str, ...]], ...]
    """``(kind, templates)`` pairs; every kind of the rule has an entry."""

    def templates(self, kind: str) -> tuple[str, ...]:
        for k, templates in self.specs:
            if k == kind:
                return templates
        return ()


@dataclass(frozen=True, slots=True)
class NvidiaTable:
    """``nvidia.yaml``."""

    namespace: str
    driver_package: str
    driver_majors: IntRange
    driver_minors: IntRange
    toolkit_packages: tuple[str, ...]
    arch_package: str
    arch_majors: IntRange
    arch_minors: IntRange
    lowest_arch: tuple[int, int]
    overrides: tuple[OverrideVariable, ...]
    features: tuple[NvidiaFeature, ...]
    sources: tuple[tuple[str, str], ...] = ()

    def feature(self, name: str) -> NvidiaFeature | None:
        for f in self.features:
            if f.name == name:
                return f
        return None

    def feature_for_rule(self, rule: str) -> NvidiaFeature | None:
        for f in self.features:
            if f.rule == rule:
                return f
        return None


@dataclass(frozen=True, slots=True)
class CpuTable:
    """``x86_64.yaml`` / ``aarch64.yaml``: a CPU namespace over archspec's database."""

    namespace: str
    archspec_family: str
    virtual_package: str
    generation_feature: str
    """The ordered feature (``level``, ``version``)."""
    base_value: str
    base_archspec: str
    archspec_template: str
    """Maps any other value to archspec's generic name, e.g. ``x86_64_{value}``."""
    max_value: str
    flag_value: str
    flag_order: tuple[str, ...]
    """The provider's preference order of flag features (ordering policy only)."""
    rattler_spec: str
    conda_spec: str
    conda_quoted_spec: str
    """:attr:`conda_spec` for names that are not plain build strings (``armv8.1a``)."""
    overrides: tuple[OverrideVariable, ...] = ()
    metapackage: str | None = None
    sources: tuple[tuple[str, str], ...] = ()

    def conda_alternative(self, name: str) -> str:
        """The enumerated spec that accepts exactly microarchitecture *name*."""
        template = self.conda_spec if _PLAIN_BUILD_RE.fullmatch(name) else self.conda_quoted_spec
        return template.format(name=name)

    def archspec_name(self, value: str) -> str:
        """archspec's generic name for a generation value (``v3`` -> ``x86_64_v3``)."""
        if value == self.base_value:
            return self.base_archspec
        return self.archspec_template.format(value=value)

    def value_for(self, archspec_name: str) -> str | None:
        """The generation value for an archspec generic name, or ``None`` if it has none."""
        if archspec_name == self.base_archspec:
            return self.base_value
        prefix, _, suffix = self.archspec_template.partition("{value}")
        if (
            archspec_name.startswith(prefix)
            and archspec_name.endswith(suffix)
            and len(archspec_name) > len(prefix) + len(suffix)
        ):
            value = archspec_name[len(prefix) : len(archspec_name) - len(suffix)]
            return value if VALUE_RE.fullmatch(value) else None
        return None


@dataclass(frozen=True, slots=True)
class SubdirInfo:
    """One conda subdir from ``platform.yaml``."""

    subdir: str
    os: str
    system: str
    machines: tuple[str, ...]
    cpu_family: str | None


@dataclass(frozen=True, slots=True)
class PlatformTagRule:
    """How one family of wheel platform tags maps to conda (``manylinux_X_Y`` -> ``__glibc``)."""

    name: str
    pattern: str
    os: str | None
    libc: str | None
    virtual_package: str | None
    specs: tuple[str, ...]
    arches: tuple[tuple[str, tuple[str, ...]], ...] | None
    """``(arch, subdirs)`` pairs; ``None``: any subdir (of :attr:`os`, when set)."""
    regex: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "regex", re.compile(self.pattern))

    def subdirs_for(self, arch: str | None) -> tuple[str, ...] | None:
        """Subdirs for *arch*; ``None`` when the rule accepts any; ``()`` for an unknown arch."""
        if self.arches is None:
            return None
        for a, subdirs in self.arches:
            if a == arch:
                return subdirs
        return ()


@dataclass(frozen=True, slots=True)
class PlatformTable:
    """``platform.yaml``."""

    subdirs: tuple[SubdirInfo, ...]
    os_virtual_packages: tuple[tuple[str, tuple[str, ...]], ...]
    overrides: tuple[tuple[str, tuple[OverrideVariable, ...]], ...]
    """``(os, overrides)``: CEP 30 applies them only when the target subdir has that OS."""
    tag_aliases: tuple[tuple[str, str], ...]
    tag_rules: tuple[PlatformTagRule, ...]
    sources: tuple[tuple[str, str], ...] = ()

    def subdir(self, name: str) -> SubdirInfo | None:
        for info in self.subdirs:
            if info.subdir == name:
                return info
        return None

    def host_subdir(self, system: str, machine: str) -> str | None:
        """The subdir whose ``system`` and ``machines`` match ``platform.system()/machine()``."""
        machine = machine.lower()
        for info in self.subdirs:
            if info.system == system and machine in info.machines:
                return info.subdir
        return None

    def overrides_for_os(self, os_name: str) -> tuple[OverrideVariable, ...]:
        for name, overrides in self.overrides:
            if name == os_name:
                return overrides
        return ()


@dataclass(frozen=True, slots=True)
class NameMapping:
    """One PyPI distribution and the conda-forge package that provides the same thing."""

    pypi: str
    """Canonical PyPI name (PEP 503)."""
    conda: str
    kind: str
    source: str
    """Key into :attr:`NameTable.sources`."""
    cuda_major: int | None = None
    build: str | None = None
    """A build-string glob that selects the matching conda build (``cuda*``)."""
    requires: tuple[str, ...] = ()
    """Extra conda specs the PyPI distribution implies (``cuda-version 12.*``)."""
    dev: str | None = None
    also_conda: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class NameTable:
    """``names.yaml`` with lookups in both directions (derived here, not module globals)."""

    entries: tuple[NameMapping, ...]
    abi_namespace: str
    abi_spec: str
    sources: tuple[tuple[str, str], ...] = ()
    _by_pypi: Mapping[str, NameMapping] = field(init=False, repr=False, compare=False)
    _by_conda: Mapping[str, tuple[NameMapping, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_pypi: dict[str, NameMapping] = {}
        by_conda: dict[str, list[NameMapping]] = {}
        for entry in self.entries:
            by_pypi.setdefault(entry.pypi, entry)
            for conda_name in (entry.conda, *entry.also_conda):
                by_conda.setdefault(conda_name, []).append(entry)
        object.__setattr__(self, "_by_pypi", MappingProxyType(by_pypi))
        object.__setattr__(
            self, "_by_conda", MappingProxyType({k: tuple(v) for k, v in by_conda.items()})
        )

    def conda_for_pypi(self, name: str) -> NameMapping | None:
        """The conda package for a PyPI name (any spelling: ``Nvidia_Cublas-CU12`` works)."""
        return self._by_pypi.get(canonicalize_name(name))

    def pypi_for_conda(self, name: str) -> tuple[NameMapping, ...]:
        """The PyPI distributions a conda package provides (several: ``cupy``, ``jaxlib``)."""
        return self._by_conda.get(name, ())

    def source_text(self, source: str) -> str:
        return dict(self.sources).get(source, source)


@dataclass(frozen=True, slots=True)
class MappingTables:
    """All tables, validated."""

    nvidia: NvidiaTable
    cpus: tuple[CpuTable, ...]
    platform: PlatformTable
    names: NameTable

    def cpu(self, namespace: str) -> CpuTable | None:
        for table in self.cpus:
            if table.namespace == namespace:
                return table
        return None

    def cpu_for_family(self, family: str | None) -> CpuTable | None:
        for table in self.cpus:
            if table.archspec_family == family:
                return table
        return None

    @property
    def namespaces(self) -> tuple[str, ...]:
        """Every namespace the tables map, in the order supported properties list them."""
        return (
            self.nvidia.namespace,
            *(t.namespace for t in self.cpus),
            self.names.abi_namespace,
        )

    @property
    def overrides(self) -> tuple[OverrideVariable, ...]:
        """Every override variable the tables know (deduplicated by conda variable)."""
        seen: dict[str, OverrideVariable] = {}
        groups: list[Iterable[OverrideVariable]] = [self.nvidia.overrides]
        groups += [t.overrides for t in self.cpus]
        groups += [o for _, o in self.platform.overrides]
        for group in groups:
            for o in group:
                seen.setdefault(o.conda, o)
        return tuple(seen.values())

    def override_for(self, variable: str) -> OverrideVariable | None:
        """The override a ``CONDA_OVERRIDE_*`` or provider variable belongs to."""
        for o in self.overrides:
            if variable in (o.conda, o.provider):
                return o
        return None


# --------------------------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------------------------


@functools.cache
def load_tables() -> MappingTables:
    """The packaged tables, read and validated once per process.

    :raises MappingTableError: listing every problem, when a file is missing or invalid.
    """
    return read_tables(resources.files(__name__))


def read_tables(directory: Any) -> MappingTables:
    """Read and validate the tables in *directory* (a path or an importlib resource)."""
    raw: dict[str, Any] = {}
    problems: list[str] = []
    for name in TABLE_FILES:
        path = directory / name
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as e:
            problems.append(f"{name}: cannot read {path}: {e.strerror or e}")
            continue
        try:
            raw[name] = yaml.load(text, Loader=_LOADER)
        except yaml.YAMLError as e:
            detail = " ".join(str(e).split())
            problems.append(f"{name}: invalid YAML: {detail}")
    if problems:
        raise MappingTableError(problems)
    return parse_tables(raw)


def parse_tables(raw: Mapping[str, Any]) -> MappingTables:
    """Build the frozen tables from decoded YAML (file name -> document).

    :raises MappingTableError: with every problem found, each with its file and key path.
    """
    tables, problems = _parse(raw)
    if problems or tables is None:
        raise MappingTableError(problems or ["no tables"])
    return tables


def validate_tables(raw: Mapping[str, Any]) -> list[str]:
    """Every problem in *raw*, e.g. ``nvidia.yaml: features.sm_arch.virtual_package: ...``."""
    return _parse(raw)[1]


def _parse(raw: Mapping[str, Any]) -> tuple[MappingTables | None, list[str]]:
    problems: list[str] = []
    for name in raw:
        if name not in TABLE_FILES:
            problems.append(f"{name}: unexpected table (expected {', '.join(TABLE_FILES)})")
    docs: dict[str, Mapping[str, Any] | None] = {}
    for name in TABLE_FILES:
        doc = raw.get(name)
        if name not in raw:
            problems.append(f"{name}: missing")
            docs[name] = None
        elif not isinstance(doc, Mapping):
            problems.append(f"{name}: expected a mapping at the top level, got {_kind(doc)}")
            docs[name] = None
        else:
            docs[name] = doc

    nvidia = _nvidia(_Reader("nvidia.yaml", problems), docs["nvidia.yaml"])
    cpus = tuple(_cpu(_Reader(name, problems), docs[name]) for name in CPU_TABLE_FILES)
    # Families named by the CPU files, even by a file with other problems, so that one broken
    # CPU table does not hide (or invent) problems in platform.yaml.
    families = {
        doc["archspec_family"]
        for name in CPU_TABLE_FILES
        if (doc := docs[name]) is not None and isinstance(doc.get("archspec_family"), str)
    }
    platform = _platform(_Reader("platform.yaml", problems), docs["platform.yaml"], families)
    names = _names(_Reader("names.yaml", problems), docs["names.yaml"])

    spaces = [t.namespace for t in (nvidia, *cpus) if t is not None]
    spaces += [names.abi_namespace] if names is not None else []
    for ns in sorted({s for s in spaces if spaces.count(s) > 1}):
        problems.append(f"namespace {ns!r} is defined by more than one table")

    if nvidia is None or platform is None or names is None or problems:
        return None, problems
    return MappingTables(nvidia, tuple(c for c in cpus if c is not None), platform, names), []


# --------------------------------------------------------------------------------------------
# Validation helpers: each check records "file: key.path: problem" and returns None on failure
# --------------------------------------------------------------------------------------------


def _kind(value: object) -> str:
    if value is None:
        return "nothing"
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), repr(value)
    )


def _got(value: object) -> str:
    return _kind(value) if isinstance(value, (dict, list)) or value is None else repr(value)


class _Reader:
    def __init__(self, file: str, problems: list[str]) -> None:
        self.file = file
        self.problems = problems

    def fail(self, path: str, message: str) -> None:
        where = f"{self.file}: {path}: " if path else f"{self.file}: "
        self.problems.append(where + message)

    def mapping(
        self,
        value: object,
        path: str,
        *,
        required: Iterable[str] = (),
        optional: Iterable[str] = (),
        open_keys: bool = False,
    ) -> Mapping[Any, Any] | None:
        if not isinstance(value, Mapping):
            self.fail(path, f"expected a mapping, got {_got(value)}")
            return None
        allowed = {*required, *optional}
        for key in required:
            if key not in value:
                self.fail(_join(path, key), "missing")
        if not open_keys:
            for key in value:
                if key not in allowed:
                    known = ", ".join(sorted(allowed))
                    self.fail(_join(path, str(key)), f"unknown key (expected one of: {known})")
        return value

    def string(
        self,
        value: object,
        path: str,
        *,
        pattern: re.Pattern[str] | None = None,
        expected: str = "a string",
        choices: Iterable[str] | None = None,
    ) -> str | None:
        options = tuple(choices) if choices is not None else None
        ok = isinstance(value, str) and value != ""
        if ok and pattern is not None:
            ok = pattern.fullmatch(cast(str, value)) is not None
        if ok and options is not None:
            ok = value in options
            expected = "one of " + ", ".join(repr(c) for c in options)
        if not ok:
            self.fail(path, f"expected {expected}, got {_got(value)}")
            return None
        return cast(str, value)

    def optional_string(self, value: object, path: str, **kwargs: Any) -> tuple[bool, str | None]:
        """``(ok, value)``: ``None`` is allowed."""
        if value is None:
            return True, None
        checked = self.string(value, path, **kwargs)
        return checked is not None, checked

    def integer(self, value: object, path: str, *, minimum: int = 0) -> int | None:
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            self.fail(path, f"expected an integer >= {minimum}, got {_got(value)}")
            return None
        return value

    def boolean(self, value: object, path: str) -> bool | None:
        if not isinstance(value, bool):
            self.fail(path, f"expected true or false, got {_got(value)}")
            return None
        return value

    def strings(
        self,
        value: object,
        path: str,
        *,
        pattern: re.Pattern[str] | None = None,
        expected: str = "a string",
        allow_empty: bool = False,
        unique: bool = True,
    ) -> tuple[str, ...] | None:
        if not isinstance(value, list) or (not value and not allow_empty):
            what = "a list" if allow_empty else "a non-empty list"
            self.fail(path, f"expected {what} of {expected}s, got {_got(value)}")
            return None
        items: list[str] = []
        ok = True
        for i, item in enumerate(value):
            checked = self.string(item, f"{path}[{i}]", pattern=pattern, expected=expected)
            if checked is None:
                ok = False
            elif unique and checked in items:
                self.fail(f"{path}[{i}]", f"duplicate {checked!r}")
                ok = False
            else:
                items.append(checked)
        return tuple(items) if ok else None

    def int_range(self, value: object, path: str) -> IntRange | None:
        if (
            not isinstance(value, list)
            or len(value) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value)
            or value[0] > value[1]
        ):
            self.fail(
                path, f"expected [low, high] with integers 0 <= low <= high, got {_got(value)}"
            )
            return None
        return IntRange(value[0], value[1])

    def schema(self, doc: Mapping[str, Any]) -> None:
        if doc.get("schema") != SCHEMA:
            self.fail("schema", f"expected {SCHEMA}, got {_got(doc.get('schema'))}")

    def sources(self, value: object, path: str = "sources") -> tuple[tuple[str, str], ...] | None:
        doc = self.mapping(value, path, open_keys=True)
        if doc is None:
            return None
        if not doc:
            self.fail(path, "expected at least one source")
            return None
        result: list[tuple[str, str]] = []
        for key, text in doc.items():
            checked = self.string(text, _join(path, str(key)), expected="a description")
            if checked is not None:
                result.append((str(key), " ".join(checked.split())))
        return tuple(result)

    def overrides(self, value: object, path: str) -> tuple[OverrideVariable, ...] | None:
        if not isinstance(value, list):
            self.fail(path, f"expected a list of overrides, got {_got(value)}")
            return None
        result: list[OverrideVariable] = []
        for i, item in enumerate(value):
            p = f"{path}[{i}]"
            doc = self.mapping(
                item, p, required=("virtual_package", "conda"), optional=("provider",)
            )
            if doc is None:
                continue
            vp = self.virtual_package(doc.get("virtual_package"), _join(p, "virtual_package"))
            conda = self.string(
                doc.get("conda"),
                _join(p, "conda"),
                pattern=re.compile(r"CONDA_OVERRIDE_[A-Z0-9_]+"),
                expected="a variable name starting with 'CONDA_OVERRIDE_'",
            )
            ok, provider = self.optional_string(
                doc.get("provider"),
                _join(p, "provider"),
                pattern=_ENV_VAR_RE,
                expected="an upper-case variable name",
            )
            if vp is not None and conda is not None and ok:
                result.append(OverrideVariable(vp, conda, provider))
        return tuple(result) if len(result) == len(value) else None

    def virtual_package(self, value: object, path: str) -> str | None:
        return self.string(value, path, pattern=_VIRTUAL_RE, expected="a string starting with '__'")

    def template(
        self,
        value: object,
        path: str,
        allowed: Iterable[str],
        *,
        required: Iterable[str] = (),
        shape: re.Pattern[str] | None = None,
        shape_text: str = "",
    ) -> str | None:
        text = self.string(value, path, expected="a spec template")
        if text is None:
            return None
        try:
            fields = [f for _, f, _, _ in string.Formatter().parse(text) if f is not None]
        except ValueError as e:
            self.fail(path, f"invalid template {text!r}: {e}")
            return None
        allowed_set = set(allowed)
        bad = [f for f in fields if f not in allowed_set]
        if bad:
            names = ", ".join("{" + a + "}" for a in sorted(allowed_set)) or "none"
            self.fail(path, f"unknown placeholder {{{bad[0]}}} in {text!r} (allowed: {names})")
            return None
        for need in required:
            if need not in fields:
                self.fail(path, f"template {text!r} must contain {{{need}}}")
                return None
        if shape is not None and shape.fullmatch(text) is None:
            self.fail(path, f"expected {shape_text}, got {text!r}")
            return None
        return text


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


# --------------------------------------------------------------------------------------------
# Per-file parsers
# --------------------------------------------------------------------------------------------


def _nvidia(r: _Reader, doc: Mapping[str, Any] | None) -> NvidiaTable | None:
    if doc is None:
        return None
    top = r.mapping(
        doc,
        "",
        required=(
            "schema",
            "namespace",
            "sources",
            "driver",
            "toolkit",
            "gpu",
            "overrides",
            "features",
        ),
    )
    if top is None:
        return None
    r.schema(top)
    namespace = r.string(
        top.get("namespace"), "namespace", pattern=NAMESPACE_RE, expected="a namespace"
    )
    sources = r.sources(top.get("sources"))

    driver = r.mapping(
        top.get("driver"), "driver", required=("virtual_package", "majors", "minors")
    )
    driver_vp = d_majors = d_minors = None
    if driver is not None:
        driver_vp = r.virtual_package(driver.get("virtual_package"), "driver.virtual_package")
        d_majors = r.int_range(driver.get("majors"), "driver.majors")
        d_minors = r.int_range(driver.get("minors"), "driver.minors")

    toolkit = r.mapping(top.get("toolkit"), "toolkit", required=("packages",))
    toolkit_packages = None
    if toolkit is not None:
        toolkit_packages = r.strings(
            toolkit.get("packages"),
            "toolkit.packages",
            pattern=_CONDA_NAME_RE,
            expected="a conda package name",
        )

    gpu = r.mapping(
        top.get("gpu"), "gpu", required=("virtual_package", "majors", "minors", "lowest")
    )
    gpu_vp = g_majors = g_minors = lowest = None
    if gpu is not None:
        gpu_vp = r.virtual_package(gpu.get("virtual_package"), "gpu.virtual_package")
        g_majors = r.int_range(gpu.get("majors"), "gpu.majors")
        g_minors = r.int_range(gpu.get("minors"), "gpu.minors")
        low = r.string(
            gpu.get("lowest"), "gpu.lowest", pattern=_VERSION_RE, expected="a version 'M.N'"
        )
        if low is not None:
            major, minor = low.split(".")
            lowest = (int(major), int(minor))

    overrides = r.overrides(top.get("overrides"), "overrides")
    features = _nvidia_features(r, top.get("features"))

    parts = (namespace, sources, driver_vp, d_majors, d_minors, toolkit_packages, gpu_vp)
    more = (g_majors, g_minors, lowest, overrides, features)
    if any(p is None for p in (*parts, *more)):
        return None
    return NvidiaTable(
        namespace=cast(str, namespace),
        driver_package=cast(str, driver_vp),
        driver_majors=cast(IntRange, d_majors),
        driver_minors=cast(IntRange, d_minors),
        toolkit_packages=cast("tuple[str, ...]", toolkit_packages),
        arch_package=cast(str, gpu_vp),
        arch_majors=cast(IntRange, g_majors),
        arch_minors=cast(IntRange, g_minors),
        lowest_arch=cast("tuple[int, int]", lowest),
        overrides=cast("tuple[OverrideVariable, ...]", overrides),
        features=cast("tuple[NvidiaFeature, ...]", features),
        sources=cast("tuple[tuple[str, str], ...]", sources),
    )


def _nvidia_features(r: _Reader, value: object) -> tuple[NvidiaFeature, ...] | None:
    doc = r.mapping(value, "features", open_keys=True)
    if doc is None:
        return None
    if not doc:
        r.fail("features", "expected at least one feature")
        return None
    result: list[NvidiaFeature] = []
    ok = True
    rules_seen: list[str] = []
    for name, spec in doc.items():
        path = f"features.{name}"
        if not isinstance(name, str) or FEATURE_RE.fullmatch(name) is None:
            r.fail(path, f"invalid feature name {name!r}: must match {FEATURE_RE.pattern}")
            ok = False
            continue
        f = r.mapping(spec, path, required=("rule", "multi_value", "virtual_package", "specs"))
        if f is None:
            ok = False
            continue
        rule = r.string(f.get("rule"), f"{path}.rule", choices=NVIDIA_RULES)
        multi = r.boolean(f.get("multi_value"), f"{path}.multi_value")
        vp = r.virtual_package(f.get("virtual_package"), f"{path}.virtual_package")
        specs = _kinded_templates(r, f.get("specs"), f"{path}.specs", rule)
        if rule is not None and rule in rules_seen:
            r.fail(f"{path}.rule", f"rule {rule!r} is used by two features")
            rule = None
        if rule is not None:
            rules_seen.append(rule)
        if rule is None or multi is None or vp is None or specs is None:
            ok = False
            continue
        result.append(NvidiaFeature(name, cast(NvidiaRule, rule), multi, vp, specs))
    return tuple(result) if ok else None


def _kinded_templates(
    r: _Reader, value: object, path: str, rule: str | None
) -> tuple[tuple[str, tuple[str, ...]], ...] | None:
    kinds = NVIDIA_RULES.get(rule or "", ())

    def templates(v: object, p: str) -> tuple[str, ...] | None:
        if not isinstance(v, list) or not v:
            r.fail(p, f"expected a non-empty list of spec templates, got {_got(v)}")
            return None
        out = [
            r.template(
                t,
                f"{p}[{i}]",
                NVIDIA_PLACEHOLDERS,
                shape=_NAME_VERSION_SPEC_RE,
                shape_text="'<package> <version spec>' (no build, no spaces in the version)",
            )
            for i, t in enumerate(v)
        ]
        return tuple(cast(str, t) for t in out) if all(t is not None for t in out) else None

    if isinstance(value, list):
        listed = templates(value, path)
        if listed is None or not kinds:
            return None
        return tuple((kind, listed) for kind in kinds)
    doc = r.mapping(value, path, required=kinds, optional=kinds) if kinds else None
    if doc is None:
        if not kinds and not isinstance(value, list):
            r.fail(path, "cannot check the templates without a valid rule")
        return None
    pairs = [(kind, templates(doc.get(kind), f"{path}.{kind}")) for kind in kinds if kind in doc]
    if len(pairs) != len(kinds) or any(t is None for _, t in pairs):
        return None
    return tuple((k, cast("tuple[str, ...]", t)) for k, t in pairs)


def _cpu(r: _Reader, doc: Mapping[str, Any] | None) -> CpuTable | None:
    if doc is None:
        return None
    top = r.mapping(
        doc,
        "",
        required=(
            "schema",
            "namespace",
            "archspec_family",
            "virtual_package",
            "sources",
            "overrides",
            "generation",
            "flags",
            "specs",
        ),
        optional=("metapackage",),
    )
    if top is None:
        return None
    r.schema(top)
    namespace = r.string(
        top.get("namespace"), "namespace", pattern=NAMESPACE_RE, expected="a namespace"
    )
    family = r.string(
        top.get("archspec_family"), "archspec_family", expected="an archspec family name"
    )
    vp = r.virtual_package(top.get("virtual_package"), "virtual_package")
    sources = r.sources(top.get("sources"))
    overrides = r.overrides(top.get("overrides"), "overrides")
    ok_meta, metapackage = r.optional_string(
        top.get("metapackage"),
        "metapackage",
        pattern=_CONDA_NAME_RE,
        expected="a conda package name",
    )

    gen = r.mapping(
        top.get("generation"),
        "generation",
        required=("feature", "base", "archspec_template", "max"),
    )
    feature = base_value = base_archspec = template = max_value = None
    if gen is not None:
        feature = r.string(
            gen.get("feature"), "generation.feature", pattern=FEATURE_RE, expected="a feature name"
        )
        base = r.mapping(gen.get("base"), "generation.base", required=("value", "archspec"))
        if base is not None:
            base_value = r.string(
                base.get("value"),
                "generation.base.value",
                pattern=VALUE_RE,
                expected="a property value",
            )
            base_archspec = r.string(
                base.get("archspec"), "generation.base.archspec", expected="an archspec name"
            )
        template = r.template(
            gen.get("archspec_template"),
            "generation.archspec_template",
            {"value"},
            required={"value"},
        )
        max_value = r.string(
            gen.get("max"), "generation.max", pattern=VALUE_RE, expected="a property value"
        )

    flags = r.mapping(top.get("flags"), "flags", required=("value", "order"))
    flag_value = flag_order = None
    if flags is not None:
        flag_value = r.string(
            flags.get("value"), "flags.value", pattern=VALUE_RE, expected="a property value"
        )
        flag_order = r.strings(
            flags.get("order"),
            "flags.order",
            pattern=FEATURE_RE,
            expected="a feature name",
            allow_empty=True,
        )
        if flag_order is not None and feature is not None and feature in flag_order:
            r.fail("flags.order", f"{feature!r} is the generation feature, not a flag")
            flag_order = None

    specs = r.mapping(top.get("specs"), "specs", required=("rattler", "conda", "conda_quoted"))
    rattler_spec = conda_spec = conda_quoted = None
    if specs is not None:
        rattler_spec = r.template(
            specs.get("rattler"), "specs.rattler", {"names"}, required={"names"}
        )
        conda_spec = r.template(specs.get("conda"), "specs.conda", {"name"}, required={"name"})
        conda_quoted = r.template(
            specs.get("conda_quoted"), "specs.conda_quoted", {"name"}, required={"name"}
        )

    values = (namespace, family, vp, sources, overrides, feature, base_value, base_archspec)
    more = (template, max_value, flag_value, flag_order, rattler_spec, conda_spec, conda_quoted)
    if not ok_meta or any(v is None for v in (*values, *more)):
        return None
    return CpuTable(
        namespace=cast(str, namespace),
        archspec_family=cast(str, family),
        virtual_package=cast(str, vp),
        generation_feature=cast(str, feature),
        base_value=cast(str, base_value),
        base_archspec=cast(str, base_archspec),
        archspec_template=cast(str, template),
        max_value=cast(str, max_value),
        flag_value=cast(str, flag_value),
        flag_order=cast("tuple[str, ...]", flag_order),
        rattler_spec=cast(str, rattler_spec),
        conda_spec=cast(str, conda_spec),
        conda_quoted_spec=cast(str, conda_quoted),
        overrides=cast("tuple[OverrideVariable, ...]", overrides),
        metapackage=metapackage,
        sources=cast("tuple[tuple[str, str], ...]", sources),
    )


def _platform(
    r: _Reader, doc: Mapping[str, Any] | None, families: set[str]
) -> PlatformTable | None:
    if doc is None:
        return None
    top = r.mapping(doc, "", required=("schema", "sources", "subdirs", "os", "platform_tags"))
    if top is None:
        return None
    r.schema(top)
    sources = r.sources(top.get("sources"))

    os_doc = r.mapping(top.get("os"), "os", open_keys=True)
    os_vps: list[tuple[str, tuple[str, ...]]] = []
    os_overrides: list[tuple[str, tuple[OverrideVariable, ...]]] = []
    ok = os_doc is not None
    for os_name, spec in (os_doc or {}).items():
        p = f"os.{os_name}"
        entry = r.mapping(spec, p, required=("virtual_packages", "overrides"))
        if entry is None:
            ok = False
            continue
        vps = r.strings(
            entry.get("virtual_packages"),
            f"{p}.virtual_packages",
            pattern=_VIRTUAL_RE,
            expected="a string starting with '__'",
        )
        overrides = r.overrides(entry.get("overrides"), f"{p}.overrides")
        if vps is None or overrides is None:
            ok = False
            continue
        os_vps.append((str(os_name), vps))
        os_overrides.append((str(os_name), overrides))
    os_names = tuple(name for name, _ in os_vps) if os_doc is not None else None

    subdirs_doc = r.mapping(top.get("subdirs"), "subdirs", open_keys=True)
    subdirs: list[SubdirInfo] = []
    ok = ok and subdirs_doc is not None
    for name, spec in (subdirs_doc or {}).items():
        p = f"subdirs.{name}"
        if not isinstance(name, str) or _SUBDIR_RE.fullmatch(name) is None:
            r.fail(p, f"invalid subdir name {name!r}: expected '<os>-<arch>'")
            ok = False
            continue
        entry = r.mapping(spec, p, required=("os", "system", "machines", "cpu_family"))
        if entry is None:
            ok = False
            continue
        os_name = r.string(entry.get("os"), f"{p}.os", choices=os_names)
        system = r.string(entry.get("system"), f"{p}.system", expected="a platform.system() name")
        machines = r.strings(entry.get("machines"), f"{p}.machines", expected="a machine name")
        family_ok, family = r.optional_string(entry.get("cpu_family"), f"{p}.cpu_family")
        if family is not None and families and family not in families:
            known = ", ".join(sorted(families))
            r.fail(
                f"{p}.cpu_family",
                f"{family!r} is not the archspec_family of any CPU table ({known}); use null",
            )
            family_ok = False
        if os_name is None or system is None or machines is None or not family_ok:
            ok = False
            continue
        subdirs.append(
            SubdirInfo(name, os_name, system, tuple(m.lower() for m in machines), family)
        )
    known_subdirs = {s.subdir for s in subdirs}

    aliases, rules = _platform_tags(r, top.get("platform_tags"), os_names, known_subdirs)
    if not ok or sources is None or aliases is None or rules is None:
        return None
    return PlatformTable(
        subdirs=tuple(subdirs),
        os_virtual_packages=tuple(os_vps),
        overrides=tuple(os_overrides),
        tag_aliases=aliases,
        tag_rules=rules,
        sources=sources,
    )


def _platform_tags(
    r: _Reader, value: object, os_names: tuple[str, ...] | None, subdirs: set[str]
) -> tuple[tuple[tuple[str, str], ...] | None, tuple[PlatformTagRule, ...] | None]:
    doc = r.mapping(value, "platform_tags", required=("aliases", "rules"))
    if doc is None:
        return None, None
    alias_doc = r.mapping(doc.get("aliases"), "platform_tags.aliases", open_keys=True)
    aliases: list[tuple[str, str]] | None = [] if alias_doc is not None else None
    for old, new in (alias_doc or {}).items():
        checked = r.string(new, f"platform_tags.aliases.{old}", expected="a platform tag prefix")
        if checked is not None and aliases is not None:
            aliases.append((str(old), checked))
        else:
            aliases = None

    rules_doc = r.mapping(doc.get("rules"), "platform_tags.rules", open_keys=True)
    if rules_doc is None:
        return (tuple(aliases) if aliases is not None else None), None
    rules: list[PlatformTagRule] = []
    ok = True
    for name, spec in rules_doc.items():
        p = f"platform_tags.rules.{name}"
        entry = r.mapping(
            spec, p, required=("pattern", "os", "libc", "virtual_package", "specs", "arches")
        )
        if entry is None:
            ok = False
            continue
        pattern = r.string(entry.get("pattern"), f"{p}.pattern", expected="a regular expression")
        groups: set[str] = set()
        if pattern is not None:
            try:
                groups = set(re.compile(pattern).groupindex)
            except re.error as e:
                r.fail(f"{p}.pattern", f"invalid regular expression {pattern!r}: {e}")
                pattern = None
        os_ok, os_name = r.optional_string(entry.get("os"), f"{p}.os", choices=os_names)
        libc_ok, libc = r.optional_string(entry.get("libc"), f"{p}.libc", choices=LIBCS)
        vp_ok, vp = r.optional_string(
            entry.get("virtual_package"),
            f"{p}.virtual_package",
            pattern=_VIRTUAL_RE,
            expected="a string starting with '__'",
        )
        if libc == "glibc" and vp is None and vp_ok:
            r.fail(
                f"{p}.virtual_package",
                "a glibc rule needs the virtual package that carries the glibc version",
            )
            vp_ok = False
        if vp is not None and not {"major", "minor"} <= groups and pattern is not None:
            r.fail(
                f"{p}.pattern",
                "a rule with a virtual_package needs (?P<major>) and (?P<minor>) groups",
            )
            pattern = None
        specs_value = entry.get("specs")
        specs: tuple[str, ...] | None = None
        if isinstance(specs_value, list):
            checked_specs = [
                r.template(t, f"{p}.specs[{i}]", groups & {"major", "minor"})
                for i, t in enumerate(specs_value)
            ]
            if all(s is not None for s in checked_specs):
                specs = tuple(cast(str, s) for s in checked_specs)
        else:
            r.fail(f"{p}.specs", f"expected a list of spec templates, got {_got(specs_value)}")
        arches = _arches(r, entry.get("arches"), f"{p}.arches", subdirs, "arch" in groups)
        if (
            pattern is None
            or not os_ok
            or not libc_ok
            or not vp_ok
            or specs is None
            or arches is False
        ):
            ok = False
            continue
        rules.append(
            PlatformTagRule(
                name=str(name),
                pattern=pattern,
                os=os_name,
                libc=libc,
                virtual_package=vp,
                specs=specs,
                arches=arches,
            )
        )
    return (tuple(aliases) if aliases is not None else None), (tuple(rules) if ok else None)


def _arches(
    r: _Reader, value: object, path: str, subdirs: set[str], has_arch_group: bool
) -> tuple[tuple[str, tuple[str, ...]], ...] | Literal[False] | None:
    if value is None:
        return None
    if not has_arch_group:
        r.fail(path, "arches need a (?P<arch>) group in the pattern")
        return False
    doc = r.mapping(value, path, open_keys=True)
    if doc is None:
        return False
    result: list[tuple[str, tuple[str, ...]]] = []
    ok = True
    for arch, listed in doc.items():
        names = r.strings(listed, f"{path}.{arch}", pattern=_SUBDIR_RE, expected="a subdir")
        if names is None:
            ok = False
            continue
        for i, name in enumerate(names):
            if subdirs and name not in subdirs:
                r.fail(f"{path}.{arch}[{i}]", f"unknown subdir {name!r} (not under subdirs)")
                ok = False
        result.append((str(arch), names))
    return tuple(result) if ok else False


def _names(r: _Reader, doc: Mapping[str, Any] | None) -> NameTable | None:  # noqa: PLR0915
    if doc is None:
        return None
    top = r.mapping(doc, "", required=("schema", "sources", "abi_dependency", "packages"))
    if top is None:
        return None
    r.schema(top)
    sources = r.sources(top.get("sources"))
    source_ids = {s for s, _ in sources or ()}

    abi = r.mapping(top.get("abi_dependency"), "abi_dependency", required=("namespace", "spec"))
    abi_ns = abi_spec = None
    if abi is not None:
        abi_ns = r.string(
            abi.get("namespace"),
            "abi_dependency.namespace",
            pattern=NAMESPACE_RE,
            expected="a namespace",
        )
        abi_spec = r.template(
            abi.get("spec"),
            "abi_dependency.spec",
            {"conda", "version"},
            required={"conda", "version"},
        )

    packages = top.get("packages")
    entries: list[NameMapping] = []
    ok = True
    owner: dict[str, str] = {}
    if not isinstance(packages, list) or not packages:
        r.fail("packages", f"expected a non-empty list of packages, got {_got(packages)}")
        ok = False
        packages = []
    for i, item in enumerate(packages):
        p = f"packages[{i}]"
        entry = r.mapping(
            item,
            p,
            required=("conda", "kind", "source", "pypi"),
            optional=("dev", "also_conda", "build", "requires"),
        )
        if entry is None:
            ok = False
            continue
        conda = r.string(
            entry.get("conda"),
            f"{p}.conda",
            pattern=_CONDA_NAME_RE,
            expected="a conda package name",
        )
        kind = r.string(entry.get("kind"), f"{p}.kind", choices=NAME_KINDS)
        source = r.string(entry.get("source"), f"{p}.source", expected="a source id")
        if source is not None and sources is not None and source not in source_ids:
            r.fail(f"{p}.source", f"unknown source {source!r} (not under sources)")
            source = None
        dev_ok, dev = r.optional_string(
            entry.get("dev"), f"{p}.dev", pattern=_CONDA_NAME_RE, expected="a conda package name"
        )
        build_ok, build = r.optional_string(
            entry.get("build"), f"{p}.build", expected="a build-string glob"
        )
        also: tuple[str, ...] | None = ()
        if "also_conda" in entry:
            also = r.strings(
                entry.get("also_conda"),
                f"{p}.also_conda",
                pattern=_CONDA_NAME_RE,
                expected="a conda package name",
            )
        pypi = _pypi_names(r, entry.get("pypi"), f"{p}.pypi")
        requires: tuple[str, ...] | None = ()
        if "requires" in entry:
            allowed = (
                {"cuda_major"}
                if pypi is not None and all(m is not None for m, _ in pypi)
                else set()
            )
            raw_requires = entry.get("requires")
            if isinstance(raw_requires, list) and raw_requires:
                checked = [
                    r.template(t, f"{p}.requires[{j}]", allowed) for j, t in enumerate(raw_requires)
                ]
                requires = (
                    tuple(cast(str, c) for c in checked)
                    if all(c is not None for c in checked)
                    else None
                )
            else:
                r.fail(
                    f"{p}.requires",
                    f"expected a non-empty list of conda specs, got {_got(raw_requires)}",
                )
                requires = None
        fresh: list[tuple[int | None, NormalizedName]] = []
        for major, name in pypi or ():  # duplicates are found even in otherwise broken entries
            canonical = canonicalize_name(name)
            where = p if major is None else f"{p}.pypi.{major}"
            if canonical in owner:
                r.fail(where, f"PyPI name {name!r} is already mapped by {owner[canonical]}")
                ok = False
            else:
                owner[canonical] = p
                fresh.append((major, canonical))
        if None in (conda, kind, source, pypi, also, requires) or not (dev_ok and build_ok):
            ok = False
            continue
        for major, pypi_name in fresh:
            entries.append(
                NameMapping(
                    pypi=pypi_name,
                    conda=cast(str, conda),
                    kind=cast(str, kind),
                    source=cast(str, source),
                    cuda_major=major,
                    build=build,
                    requires=tuple(
                        t.format(cuda_major=major) for t in cast("tuple[str, ...]", requires)
                    ),
                    dev=dev,
                    also_conda=cast("tuple[str, ...]", also),
                )
            )
    if not ok or sources is None or abi_ns is None or abi_spec is None:
        return None
    return NameTable(tuple(entries), abi_ns, abi_spec, sources)


def _pypi_names(r: _Reader, value: object, path: str) -> tuple[tuple[int | None, str], ...] | None:
    expected = "a PyPI name"
    if isinstance(value, str):
        name = r.string(value, path, pattern=_PYPI_NAME_RE, expected=expected)
        return ((None, name),) if name is not None else None
    if not isinstance(value, Mapping) or not value:
        r.fail(path, f"expected a PyPI name or {{cuda major: name or [names]}}, got {_got(value)}")
        return None
    result: list[tuple[int | None, str]] = []
    ok = True
    for major, names in value.items():
        p = f"{path}.{major}"
        if isinstance(major, bool) or not isinstance(major, int) or major < 1:
            r.fail(p, f"expected a CUDA major (an integer) as key, got {major!r}")
            ok = False
            continue
        if isinstance(names, str):
            listed: tuple[str, ...] | None = (names,)
            if r.string(names, p, pattern=_PYPI_NAME_RE, expected=expected) is None:
                listed = None
        else:
            listed = r.strings(names, p, pattern=_PYPI_NAME_RE, expected=expected)
        if listed is None:
            ok = False
            continue
        result.extend((major, n) for n in listed)
    return tuple(result) if ok else None
