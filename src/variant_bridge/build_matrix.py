"""One declared build matrix for both ecosystems (docs/maintainers.md).

A :class:`Matrix` is a list of :class:`MatrixBuild` rows: label, CUDA toolkit, driver floor
(``cuda_version_lower_bound``), SM list, x86-64 level, glibc floor, static priority, plus conda
variant keys passed through unchanged. It is read from a ``[tool.variant-bridge.matrix]`` table
(:meth:`Matrix.from_table`), or derived from the conda side (:func:`matrix_from_conda`) or the wheel
side (:func:`matrix_from_wheels`); :mod:`variant_bridge.maintainer.outputs` writes what each
ecosystem needs from it. Everything here is pure: tables in, values out.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Literal

from variant_bridge.cuda_archs import ArchSet, parse_arch_list
from variant_bridge.errors import ReleaseInputError, quote
from variant_bridge.mappings import MappingTables, load_tables
from variant_bridge.properties import (
    LABEL_RE,
    NULL_LABEL,
    VariantDescription,
    VariantFeature,
    VariantProperty,
)
from variant_bridge.release import (
    X86_64,
    CondaBuild,
    CudaVersion,
    WheelSide,
    WheelVariant,
    parse_cuda,
    python_key,
)

__all__ = [
    "AMDGPU_CONSTRAINT_KEY",
    "LOWER_BOUND_POLICIES",
    "MAPPED_KEYS",
    "MAX_BUILDS",
    "PROVIDER_CHOICES",
    "ROCM_KEY",
    "LowerBoundPolicy",
    "Matrix",
    "MatrixBuild",
    "ProviderChoice",
    "amd_features",
    "check_gfx",
    "default_label",
    "family_notes",
    "family_text",
    "matrix_from_conda",
    "matrix_from_wheels",
    "matrix_table",
    "parse_rocm",
    "rocm_text",
    "toolkit_notes",
    "toolkit_problems",
]

LowerBoundPolicy = Literal["toolkit", "major"]
LOWER_BOUND_POLICIES: tuple[LowerBoundPolicy, ...] = ("toolkit", "major")
ProviderChoice = Literal["upstream", "bridge"]
PROVIDER_CHOICES: tuple[ProviderChoice, ...] = ("upstream", "bridge")

ROCM_KEY = "rocm_version"
"""The conda variant key of a ROCm build's release (``6.4``; ``None`` for the others)."""
AMDGPU_CONSTRAINT_KEY = "amdgpu_arch_constraint"
"""The ``__amdgpu_arch`` versions a ROCm build runs on, for its ``run_constraints`` entry."""

MAPPED_KEYS = (
    "cuda_compiler_version",
    "c_stdlib_version",
    "microarch_level",
    "python",
    "cuda_archs",
    "cuda_arch_constraint",
    ROCM_KEY,
    AMDGPU_CONSTRAINT_KEY,
    "target_platform",
)
"""Conda variant keys the matrix reads into its columns or writes from them (the rest pass
through)."""

MAX_BUILDS = 64
"""The most builds one matrix holds: a variant configuration that multiplies to more is a global
pinning (conda-forge-pinning: 480 CPU builds), not one package's matrix."""

PRIORITY_NAMESPACE = "priority"
PRIORITY_FEATURE = "order"
"""Where a row's static priority goes on the wheel side (as torch's variants do)."""


_MAX_LABEL = 16
_ROW_KEYS = frozenset(
    {
        "label",
        "cuda",
        "driver",
        "sm",
        "rocm",
        "gfx",
        "x86-64-level",
        "glibc",
        "priority",
        "python",
        "conda",
    }
)
_TABLE_KEYS = frozenset(
    {"name", "version", "platform", "python", "lower-bound", "providers", "build-number",
     "conda", "build"}
)  # fmt: skip


def _glibc(text: str, where: str) -> tuple[int, int]:
    match = re.fullmatch(r"([0-9]{1,4})\.([0-9]{1,4})", text.strip(), re.ASCII)  # int()-able
    if match is None:
        raise ReleaseInputError(f"{where}: glibc {quote(text)} is no version like 2.17")
    return int(match[1]), int(match[2])


def _cuda(text: object, where: str, what: str, *, minor: bool) -> CudaVersion:
    version = parse_cuda(str(text))
    if version is None or (minor and version.minor is None):
        shape = "'12.8'" if minor else "'12.8' or '12'"
        raise ReleaseInputError(
            f"{where}: {what} {quote(str(text))} is no CUDA version like {shape}"
        )
    return version


@dataclass(frozen=True, slots=True)
class MatrixBuild:
    """One build of the matrix, as both ecosystems ship it."""

    label: str
    cuda: CudaVersion | None = None
    """The toolkit (``cuda_compiler_version``); ``None`` for a CPU build."""
    driver: CudaVersion | None = None
    """The driver floor (``cuda_version_lower_bound`` and ``__cuda >=``)."""
    archs: ArchSet | None = None
    rocm: tuple[int, int] | None = None
    """The ROCm release (``rocm_version``, ``amd :: rocm_version``); ``None``: no ROCm build."""
    gfx: tuple[str, ...] = ()
    """The AMD GPUs a ROCm build has code for (``amd :: gfx_arch``: ``gfx942``...)."""
    x86_64_level: int | None = None
    glibc: tuple[int, int] | None = None
    priority: int | None = None
    """Static order, 1 = most preferred (written as ``priority :: order :: N``)."""
    python: tuple[str, ...] = ()
    """Python versions of this build, when they differ from the matrix's."""
    conda: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}), hash=False)
    """Other conda variant keys of this build (passed through)."""
    where: str = field(default="", compare=False, hash=False)
    """Where the row was read (``pyproject.toml build 3``, a conda file), for messages."""

    @property
    def is_null(self) -> bool:
        """A build whose wheel is the null variant (CPU, no x86-64 level, no priority)."""
        return (
            self.cuda is None
            and self.rocm is None
            and self.x86_64_level is None
            and self.priority is None
        )

    def properties(self, tables: MappingTables | None = None) -> tuple[VariantProperty, ...]:
        """The wheel variant's properties."""
        tables = tables or load_tables()
        nvidia, props = tables.nvidia.namespace, []
        if self.driver is not None:
            props.append(VariantProperty(nvidia, "cuda_version_lower_bound", str(self.driver)))
        if self.archs is not None:
            props += [VariantProperty(nvidia, "sm_arch", v) for v in self.archs.sm_arch]
        amd, (gfx_feature, rocm_feature) = tables.amd.namespace, amd_features(tables)
        props += [VariantProperty(amd, gfx_feature, name) for name in self.gfx]
        if self.rocm is not None:
            props.append(VariantProperty(amd, rocm_feature, rocm_text(self.rocm)))
        cpu = tables.cpu(X86_64)
        if self.x86_64_level is not None and cpu is not None:
            value = f"v{self.x86_64_level}"
            props.append(VariantProperty(cpu.namespace, cpu.generation_feature, value))
        if self.priority is not None:
            props.append(VariantProperty(PRIORITY_NAMESPACE, PRIORITY_FEATURE, str(self.priority)))
        return tuple(props)

    def description(self, tables: MappingTables | None = None) -> VariantDescription:
        if self.is_null:
            return VariantDescription.null()
        return VariantDescription.of(self.properties(tables), self.label)


def default_label(build: MatrixBuild) -> str:
    """``cu126``, ``rocm6.4`` (torch's spelling), ``cu126_v3``, ``v3`` (CPU at a level),
    ``null`` (plain CPU)."""
    parts = []
    if build.cuda is not None:
        parts.append(f"cu{build.cuda.major}{build.cuda.minor}")
    if build.rocm is not None:
        parts.append(f"rocm{rocm_text(build.rocm)}")
    if build.x86_64_level is not None:
        parts.append(f"v{build.x86_64_level}")
    return "_".join(parts) or (NULL_LABEL if build.is_null else "cpu")


def _check_label(label: str, build: MatrixBuild, where: str) -> None:
    """Labels are wheel variant labels; ``null`` is only for a build whose wheel is the null
    variant (such a build may have another label: it names the conda build only)."""
    if label == NULL_LABEL and not build.is_null:
        raise ReleaseInputError(
            f"{where}: label 'null' is for the CPU build without x86-64 level or priority"
        )
    if not LABEL_RE.fullmatch(label) or len(label) > _MAX_LABEL:
        raise ReleaseInputError(f"{where}: label {quote(label)} must be 1-16 of a-z 0-9 _ .")


@dataclass(frozen=True, slots=True)
class Matrix:
    """A declared build matrix."""

    builds: tuple[MatrixBuild, ...]
    name: str | None = None
    version: str | None = None
    platform: str = "linux-64"
    python: tuple[str, ...] = ()
    lower_bound: LowerBoundPolicy = "toolkit"
    providers: ProviderChoice = "upstream"
    build_number: int = 0
    conda: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}), hash=False)
    """Conda variant keys the same for every build (passed through)."""
    source: str = "matrix"
    notes: tuple[str, ...] = field(default=(), compare=False)
    """What a derived matrix left out or could not check, in words."""

    def build(self, label: str) -> MatrixBuild | None:
        return next((b for b in self.builds if b.label == label), None)

    def family(
        self, build: MatrixBuild, tables: MappingTables | None = None
    ) -> tuple[tuple[str, str], ...]:
        """The conda variant keys that make *build* a family of its own on the platform
        (``arm_variant_type=tegra``, ``toolkits.yaml``), from its keys over the matrix's;
        ``()`` for the family wheels are built for."""
        return (tables or load_tables()).toolkits.family({**self.conda, **build.conda})

    def families(
        self, tables: MappingTables | None = None
    ) -> dict[tuple[tuple[str, str], ...], tuple[MatrixBuild, ...]]:
        """The builds per family, the wheels' own (``()``) first when it has any."""
        found: dict[tuple[tuple[str, str], ...], list[MatrixBuild]] = {}
        for build in self.builds:
            found.setdefault(self.family(build, tables), []).append(build)
        return {k: tuple(found[k]) for k in sorted(found, key=lambda k: (k != (), k))}

    def wheel_builds(self, tables: MappingTables | None = None) -> tuple[MatrixBuild, ...]:
        """The builds wheels are made for: every build but those of a family of its own (no
        wheel platform tag describes a tegra build)."""
        return self.families(tables).get((), ())

    @classmethod
    def from_table(
        cls, table: Mapping[str, Any], *, where: str, project: Mapping[str, Any] = {}
    ) -> Matrix:
        """Read a ``[tool.variant-bridge.matrix]`` table (``project``: ``[project]``, for the
        defaults of ``name`` and ``version``).

        :raises ReleaseInputError, InvalidArchList: naming the key and what was expected.
        """
        unknown = sorted(set(table) - _TABLE_KEYS)
        if unknown:
            raise ReleaseInputError(
                f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(_TABLE_KEYS))})"
            )
        rows = table.get("build")
        if not isinstance(rows, list) or not rows:
            raise ReleaseInputError(f"{where}: no builds: add [[...matrix.build]] tables")
        lower = str(table.get("lower-bound", "toolkit"))
        if lower not in LOWER_BOUND_POLICIES:
            raise ReleaseInputError(
                f"{where}: lower-bound must be 'toolkit' or 'major', not {lower!r}"
            )
        providers = str(table.get("providers", "upstream"))
        if providers not in PROVIDER_CHOICES:
            raise ReleaseInputError(
                f"{where}: providers must be 'upstream' or 'bridge', not {providers!r}"
            )
        builds = tuple(_row(row, f"{where} build {i + 1}", lower) for i, row in enumerate(rows))
        matrix = cls(
            builds,
            name=_text(table.get("name", project.get("name")), where, "name"),
            version=_text(table.get("version", project.get("version")), where, "version"),
            platform=str(table.get("platform", "linux-64")),
            python=_pythons(table.get("python", []), where),
            lower_bound=lower,
            providers=providers,
            build_number=_int(table.get("build-number", 0), where, "build-number"),
            conda=MappingProxyType(_extras(table.get("conda", {}), where)),
            source=where,
        )
        return matrix.checked()

    def checked(self, tables: MappingTables | None = None) -> Matrix:
        """The matrix, once its rows can be built and told apart.

        :raises ReleaseInputError: a label used twice, builds conda cannot tell apart, or a row
            the toolkit table rules out (an SM target its nvcc does not compile, a glibc below
            its CUDA major's floor), naming the row.
        """
        for problem in toolkit_problems(self, tables):
            raise ReleaseInputError(problem)
        seen: dict[str, int] = {}
        shapes: dict[tuple[object, ...], str] = {}
        for i, build in enumerate(self.builds):
            if build.label in seen:
                first = seen[build.label] + 1
                raise ReleaseInputError(
                    f"{self.source}: label {build.label!r} is used by builds {first} and {i + 1}"
                )
            seen[build.label] = i
            shape = (
                build.cuda,
                build.rocm,
                build.gfx,
                build.x86_64_level,
                build.glibc,
                tuple(sorted(build.conda.items())),
                build.python,
            )
            if shape in shapes:
                raise ReleaseInputError(
                    f"{self.source}: builds {shapes[shape]!r} and {build.label!r} are the same "
                    "conda build (same CUDA or ROCm, x86-64 level, glibc and conda keys)"
                )
            shapes[shape] = build.label
        return self


def _row_name(matrix: Matrix, index: int) -> str:
    build = matrix.builds[index]
    return f"{build.where or f'{matrix.source} build {index + 1}'} ({build.label})"


def toolkit_problems(matrix: Matrix, tables: MappingTables | None = None) -> list[str]:
    """Rows the toolkit table (``toolkits.yaml``) rules out, one line each naming the row: SM
    targets nvcc of the row's CUDA does not compile, a glibc below the CUDA major's floor."""
    table = (tables or load_tables()).toolkits
    problems = []
    for i, build in enumerate(matrix.builds):
        if build.cuda is None:
            continue
        cuda = build.cuda
        row = table.nvcc_for(cuda.major, cuda.minor or 0)
        if row is not None and build.archs:
            bad = ArchSet(
                frozenset(
                    t for t in build.archs.targets if not row.compiles(t.major, t.minor, t.suffix)
                )
            )
            if bad:
                first, last = row.compute[0], row.compute[-1]
                problems.append(
                    f"{_row_name(matrix, i)}: nvcc {cuda} cannot compile {bad} (it compiles "
                    f"compute capabilities {first[0]}.{first[1]} to {last[0]}.{last[1]}; "
                    "toolkits.yaml)"
                )
        floor = table.glibc_floor(cuda.major)
        if floor is not None and build.glibc is not None and build.glibc < floor:
            problems.append(
                f"{_row_name(matrix, i)}: CUDA {cuda.major} needs glibc >={floor[0]}.{floor[1]}, "
                f"not {build.glibc[0]}.{build.glibc[1]} (toolkits.yaml)"
            )
    return problems


def family_text(family: Sequence[tuple[str, str]]) -> str:
    """``arm_variant_type=tegra``."""
    return " ".join(f"{k}={v}" for k, v in family)


def family_notes(matrix: Matrix, tables: MappingTables | None = None) -> list[str]:
    """One note per build family of its own: conda builds only, numbered among themselves."""
    notes = []
    for family, builds in matrix.families(tables).items():
        if not family:
            continue
        labels = ", ".join(b.label for b in builds)
        notes.append(
            f"{matrix.platform} {family_text(family)}: {labels} "
            f"{'is a build family' if len(builds) == 1 else 'are a build family'} of its own "
            "(toolkits.yaml families: no wheel platform tag describes it): conda builds only, "
            "numbered among themselves, no wheel variant generated"
        )
    return notes


def toolkit_notes(matrix: Matrix, tables: MappingTables | None = None) -> list[str]:
    """CUDA versions of the matrix the toolkit table knows nothing of (not checked)."""
    table = (tables or load_tables()).toolkits
    unknown = sorted(
        {b.cuda for b in matrix.builds if b.cuda is not None and b.archs
         and table.nvcc_for(b.cuda.major, b.cuda.minor or 0) is None},
        key=lambda v: v.key,
    )  # fmt: skip
    return [
        f"no nvcc facts for CUDA {v} in toolkits.yaml: its SM list is not checked" for v in unknown
    ]


def _text(value: object, where: str, key: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, (str, int, float)):
        raise ReleaseInputError(f"{where}: {key} must be a string")
    return str(value)


def _int(value: object, where: str, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ReleaseInputError(f"{where}: {key} must be a whole number >= 0, not {value!r}")
    return value


def _pythons(value: object, where: str) -> tuple[str, ...]:
    items = value if isinstance(value, list) else [value]
    out = []
    for item in items:
        if not re.fullmatch(r"3\.[0-9]{1,2}t?|3\.[0-9]{1,2}(?:\.\*)?(?:\s+\S+)?", str(item)):
            raise ReleaseInputError(
                f"{where}: python {quote(str(item))} is no version like 3.12 or 3.13t "
                "(free-threaded), or a conda python variant like '3.12.* *_cpython'"
            )
        out.append(str(item))
    return tuple(out)


def _extras(value: object, where: str) -> dict[str, str]:
    if not isinstance(value, Mapping):
        raise ReleaseInputError(f"{where}: conda must be a table of variant keys")
    out = {}
    for key, item in value.items():
        if key in MAPPED_KEYS:
            raise ReleaseInputError(
                f"{where}: conda.{key} is a column of the matrix; set it on the build"
            )
        if not isinstance(item, (str, int, float)) or isinstance(item, bool):
            raise ReleaseInputError(f"{where}: conda.{key} must be a plain value")
        out[str(key)] = str(item)
    return out


def _archs(value: object, where: str) -> ArchSet:
    text = " ".join(map(str, value)) if isinstance(value, list) else str(value)
    return parse_arch_list(text, where=f"{where}: sm")


def amd_features(tables: MappingTables) -> tuple[str, str]:
    """The ``amd`` features a ROCm row's ``gfx`` and ``rocm`` columns are (amd.yaml's rules)."""
    rule = {f.rule: f.name for f in tables.amd.features}
    return rule["gfx_arch"], rule["rocm_version"]


def parse_rocm(text: str, where: str, key: str = "rocm") -> tuple[int, int]:
    """``6.4`` (a ROCm release's ``major.minor``, as ``amd :: rocm_version`` says it)."""
    match = re.fullmatch(r"([0-9]{1,3})\.([0-9]{1,3})", text.strip())
    if match is None:
        raise ReleaseInputError(f"{where}: {key} {quote(text)} is no ROCm release like 6.4")
    return int(match[1]), int(match[2])


def rocm_text(rocm: tuple[int, int]) -> str:
    return f"{rocm[0]}.{rocm[1]}"


def check_gfx(names: Sequence[str], where: str, tables: MappingTables | None = None) -> None:
    """Every name a gfx processor name (``gfx942``, ``gfx90a``: amd.yaml's naming rule)."""
    from variant_bridge.gfx_archs import isa_of

    prefix = (tables or load_tables()).amd.gfx_prefix
    for name in names:
        if isa_of(name, prefix) is None:
            raise ReleaseInputError(
                f"{where}: gfx {quote(name)} is no AMD GPU name like gfx942 or gfx90a"
            )


def _rocm(row: Mapping[str, Any], where: str) -> tuple[tuple[int, int] | None, tuple[str, ...]]:
    if row.get("rocm") in (None, "", "none", "None"):
        if "gfx" in row:
            raise ReleaseInputError(f"{where}: gfx needs a rocm version")
        return None, ()
    rocm = parse_rocm(str(row["rocm"]), where)
    value = row.get("gfx", [])
    names = tuple(str(v) for v in (value if isinstance(value, list) else [value]))
    check_gfx(names, where)
    return rocm, names


def _row(row: object, where: str, lower: LowerBoundPolicy) -> MatrixBuild:
    if not isinstance(row, Mapping):
        raise ReleaseInputError(f"{where}: a build must be a table")
    unknown = sorted(set(row) - _ROW_KEYS)
    if unknown:
        raise ReleaseInputError(
            f"{where}: unknown key {unknown[0]!r} (known: {', '.join(sorted(_ROW_KEYS))})"
        )
    cuda = (
        _cuda(row["cuda"], where, "cuda", minor=True)
        if row.get("cuda") not in (None, "", "none", "None")
        else None
    )
    driver = None
    if cuda is not None:
        default = cuda if lower == "toolkit" else CudaVersion(cuda.major, 0)
        driver = _cuda(row["driver"], where, "driver", minor=False) if "driver" in row else default
    elif "driver" in row or "sm" in row:
        raise ReleaseInputError(f"{where}: driver and sm need a cuda version")
    archs = _archs(row["sm"], where) if "sm" in row and cuda is not None else None
    rocm, gfx = _rocm(row, where)
    if rocm is not None and cuda is not None:
        raise ReleaseInputError(f"{where}: a build is built with CUDA or with ROCm, not both")
    level = row.get("x86-64-level")
    if level is not None and (isinstance(level, bool) or level not in (1, 2, 3, 4)):
        raise ReleaseInputError(f"{where}: x86-64-level must be 1, 2, 3 or 4, not {level!r}")
    priority = row.get("priority")
    if priority is not None:
        _int(priority, where, "priority")
    build = MatrixBuild(
        label="",
        where=where,
        cuda=cuda,
        driver=driver,
        archs=archs,
        rocm=rocm,
        gfx=gfx,
        x86_64_level=level,
        glibc=_glibc(str(row["glibc"]), where) if "glibc" in row else None,
        priority=priority,
        python=_pythons(row["python"], where) if "python" in row else (),
        conda=MappingProxyType(_extras(row.get("conda", {}), where)),
    )
    label = str(row.get("label") or default_label(build))
    _check_label(label, build, where)
    return replace(build, label=label)


# -- derived matrices -----------------------------------------------------------------------


def _clean(value: str) -> str:
    return re.sub(r"[^0-9a-z_.]", "", value.lower().replace("-", "_"))


def _unique_labels(builds: Sequence[MatrixBuild]) -> tuple[MatrixBuild, ...]:
    """Builds whose default labels collide get the values that tell them apart appended (in
    the variant's key order, as few as make them unique), else a number."""
    groups: dict[str, list[MatrixBuild]] = {}
    for b in builds:
        groups.setdefault(b.label, []).append(b)
    renamed: dict[int, str] = {}
    for label, group in groups.items():
        if len(group) == 1:
            continue
        keys = [k for k in group[0].conda if len({b.conda.get(k) for b in group}) > 1]
        base = "" if label in (NULL_LABEL, "cpu") else f"{label}_"
        for count in range(1, len(keys) + 1):
            names = [
                (base + "_".join(_clean(b.conda.get(k, "")) for k in keys[:count]))[:_MAX_LABEL]
                for b in group
            ]
            if len(set(names)) == len(names) and all(n and n != NULL_LABEL for n in names):
                break
        else:
            names = [f"{(base or 'b')}{i}"[:_MAX_LABEL] for i in range(len(group))]
        for b, name in zip(group, names, strict=True):
            renamed[id(b)] = name
    return tuple(replace(b, label=renamed.get(id(b), b.label)) for b in builds)


def _filled(extras: list[dict[str, str]]) -> list[dict[str, str]]:
    """Rendered variants keep only the keys a build uses (a CPU build has no ``cuda_compiler``):
    a key some builds lack gets the value the others share, else an empty one."""
    keys = list(dict.fromkeys(k for extra in extras for k in extra))
    for key in keys:
        values = {extra[key] for extra in extras if key in extra}
        fill = next(iter(values)) if len(values) == 1 else ""
        for extra in extras:
            extra.setdefault(key, fill)
    return extras


def matrix_from_conda(
    builds: Sequence[CondaBuild],
    *,
    lower_bound: LowerBoundPolicy = "toolkit",
    name: str | None = None,
    version: str | None = None,
    source: str = "conda",
) -> Matrix:
    """The matrix a conda side builds: one row per build (Pythons merged), the keys the matrix
    does not read kept as they are (those the same everywhere at the matrix level)."""
    if not builds:
        raise ReleaseInputError(f"{source}: no conda builds")
    if len(builds) > MAX_BUILDS:
        raise ReleaseInputError(
            f"{source}: {len(builds)} conda builds: more than one package's matrix "
            f"(at most {MAX_BUILDS}); a global pinning such as conda-forge-pinning's "
            "conda_build_config.yaml multiplies every key it pins: read its CUDA axis with "
            "--from-pinning"
        )
    extras = _filled([{k: v for k, v in b.variant.items() if k not in MAPPED_KEYS} for b in builds])
    common = {k: v for k, v in extras[0].items() if all(e.get(k) == v for e in extras)}
    pythons = {b.python_specs for b in builds}
    shared_python = next(iter(pythons)) if len(pythons) == 1 else ()
    rows = []
    for build, extra in zip(builds, extras, strict=True):
        driver = None
        if build.cuda is not None:
            driver = build.cuda if lower_bound == "toolkit" else CudaVersion(build.cuda.major, 0)
        row = MatrixBuild(
            label="",
            where=build.where,
            cuda=build.cuda,
            driver=driver,
            archs=build.archs if build.cuda is not None else None,
            rocm=build.rocm,
            gfx=build.gfx,
            x86_64_level=build.microarch_level,
            glibc=build.glibc,
            python=() if shared_python else build.python_specs,
            conda=MappingProxyType({k: v for k, v in extra.items() if k not in common}),
        )
        label = "_".join([default_label(row), *(_clean(v) for _, v in build.family)])
        rows.append(replace(row, label=label[:_MAX_LABEL]))
    platforms = {b.platform for b in builds}
    if len(platforms) > 1:
        shown = ", ".join(sorted(platforms))
        raise ReleaseInputError(
            f"{source}: builds for several platforms ({shown}); give one platform's files"
        )
    return Matrix(
        _unique_labels(rows),
        name=name,
        version=version,
        platform=platforms.pop(),
        python=shared_python,
        lower_bound=lower_bound,
        conda=MappingProxyType(common),
        source=source,
    ).checked()


def _unmapped_note(variants: Sequence[WheelVariant], known: set[str]) -> str:
    spaces = sorted({ns for v in variants for ns in v.description.namespaces} - known)
    shown = ", ".join(v.label for v in variants)
    one = len(variants) == 1
    return (
        f"{'variant' if one else 'variants'} {shown} {'is' if one else 'are'} not in the matrix: "
        f"it has no column for namespace{'s' if len(spaces) > 1 else ''} {', '.join(spaces)} "
        f"({'its wheels stay' if one else 'their wheels stay'} as they are; "
        f"{'its conda build is' if one else 'their conda builds are'} not generated)"
    )


def _amd_columns(
    variant: WheelVariant, where: str, tables: MappingTables
) -> tuple[tuple[int, int] | None, tuple[str, ...]]:
    """A wheel variant's ROCm release and GPUs (the ``rocm`` and ``gfx`` columns).

    :raises ReleaseInputError: not one ROCm release, GPUs without one, or an ``amd`` feature
        the matrix has no column for.
    """
    amd = tables.amd.namespace
    gfx_feature, rocm_feature = amd_features(tables)
    other = sorted(
        p.feature
        for p in variant.description.properties
        if p.namespace == amd and p.feature not in (gfx_feature, rocm_feature)
    )
    if other:
        raise ReleaseInputError(
            f"{where}: variant {variant.label!r}: {amd} :: {other[0]} has no column in the matrix "
            f"(it has {gfx_feature} and {rocm_feature})"
        )
    releases = variant.description.values(VariantFeature(amd, rocm_feature))
    gfx = variant.description.values(VariantFeature(amd, gfx_feature))
    if not releases and not gfx:
        return None, ()
    if len(releases) != 1:
        said = f"{len(releases)} ROCm releases" if releases else f"{amd} :: {gfx_feature} alone"
        raise ReleaseInputError(
            f"{where}: variant {variant.label!r} has {said}; a conda build is built with one "
            f"({amd} :: {rocm_feature})"
        )
    check_gfx(gfx, f"{where}: variant {variant.label!r}", tables)
    return parse_rocm(releases[0], f"{where}: variant {variant.label!r}"), gfx


def _static_priority(values: tuple[str, ...]) -> int | None:
    """A variant's ``priority :: order`` as a number; ``None`` when it has none, or none that is
    a plain decimal of at most 9 digits (a 5,000-digit value is no order, and ``int()`` refuses
    it past 4,300 digits)."""
    if not values:
        return None
    text = values[0]
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 9 else None


def matrix_from_wheels(
    side: WheelSide, *, tables: MappingTables | None = None, platform: str = "linux-64"
) -> Matrix:
    """The matrix a wheel side ships: one row per variant whose namespaces the matrix has
    columns for (NVIDIA, AMD's ROCm release and GPUs, x86-64, the static priority); every other
    variant (XPU: an Intel GPU has no conda counterpart) is named in :attr:`Matrix.notes`, never
    dropped silently.

    :raises ReleaseInputError: no variant the matrix can describe.
    """
    tables = tables or load_tables()
    known = {tables.nvidia.namespace, tables.amd.namespace, X86_64, PRIORITY_NAMESPACE}
    source = ", ".join(side.sources)
    rows = []
    unmapped = []
    for variant in side.variants:
        if set(variant.description.namespaces) - known:
            unmapped.append(variant)
            continue
        claim = variant.claim(tables)
        priority_values = variant.description.values(
            VariantFeature(PRIORITY_NAMESPACE, PRIORITY_FEATURE)
        )
        if claim is not None and (claim.cuda.minor is None or claim.per_major):
            raise ReleaseInputError(
                f"{', '.join(side.sources)}: variant {variant.label!r}: its CUDA toolkit is "
                f"{claim} ({claim.text}); a conda build needs one minor: declare the matrix "
                "with the minors you build"
            )
        archs = variant.archs(tables) if claim is not None else None
        rocm, gfx = _amd_columns(variant, source, tables)
        if rocm is not None and claim is not None:
            raise ReleaseInputError(
                f"{source}: variant {variant.label!r} is built with CUDA and with ROCm: a conda "
                "build is one or the other"
            )
        glibc = variant.glibc(platform)
        python = variant.python()
        rows.append(
            MatrixBuild(
                label=variant.label,
                where=f"variant {variant.label}",
                cuda=claim.cuda if claim is not None else None,
                driver=variant.lower_bound(tables),
                archs=archs or None,
                rocm=rocm,
                gfx=gfx,
                x86_64_level=variant.x86_64_level(tables),
                glibc=glibc,
                priority=_static_priority(priority_values),
                python=tuple(sorted(python - {"any"}, key=python_key)) if python else (),
            )
        )
    if not rows:
        note = f"; {_unmapped_note(unmapped, known)}" if unmapped else ""
        raise ReleaseInputError(f"{source}: no variant the matrix can describe{note}")
    return Matrix(
        tuple(rows),
        name=side.project,
        version=side.version,
        platform=platform,
        source=source,
        notes=(_unmapped_note(unmapped, known),) if unmapped else (),
    ).checked(tables)


def _row_table(build: MatrixBuild, matrix: Matrix) -> dict[str, Any]:
    row: dict[str, Any] = {"label": build.label}
    if build.cuda is not None:
        row["cuda"] = str(build.cuda)
        default = (
            build.cuda if matrix.lower_bound == "toolkit" else CudaVersion(build.cuda.major, 0)
        )
        if build.driver != default and build.driver is not None:
            row["driver"] = str(build.driver)
    if build.archs:
        row["sm"] = build.archs.cmake()
    if build.rocm is not None:
        row["rocm"] = rocm_text(build.rocm)
    if build.gfx:
        row["gfx"] = list(build.gfx)
    if build.x86_64_level is not None:
        row["x86-64-level"] = build.x86_64_level
    if build.glibc is not None:
        row["glibc"] = f"{build.glibc[0]}.{build.glibc[1]}"
    if build.priority is not None:
        row["priority"] = build.priority
    if build.python:
        row["python"] = list(build.python)
    if build.conda:
        row["conda"] = dict(build.conda)
    return row


def matrix_table(matrix: Matrix) -> dict[str, Any]:
    """The ``[tool.variant-bridge.matrix]`` table declaring *matrix* (what
    :meth:`Matrix.from_table` reads back)."""
    table: dict[str, Any] = {}
    for key, value in (("name", matrix.name), ("version", matrix.version)):
        if value is not None:
            table[key] = value
    table["platform"] = matrix.platform
    if matrix.python:
        table["python"] = list(matrix.python)
    table["lower-bound"] = matrix.lower_bound
    table["providers"] = matrix.providers
    if matrix.build_number:
        table["build-number"] = matrix.build_number
    if matrix.conda:
        table["conda"] = dict(matrix.conda)
    table["build"] = [_row_table(b, matrix) for b in matrix.builds]
    return table
