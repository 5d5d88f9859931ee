"""The shipped mapping tables validate, a broken copy reports every problem, lookups work."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from variant_bridge import mappings
from variant_bridge.errors import MappingTableError
from variant_bridge.mappings import TABLE_FILES, IntRange, MappingTables, load_tables, parse_tables

MAPPINGS_DIR = Path(mappings.__file__).resolve().parent
NV_DRIVER = "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION"
NV_ARCH = "NV_VARIANT_PROVIDER_FORCE_SM_ARCH"


@pytest.fixture(scope="module")
def raw() -> dict[str, Any]:
    """The shipped YAML files, decoded, exactly as the loader sees them."""
    return {
        name: yaml.safe_load((MAPPINGS_DIR / name).read_text(encoding="utf-8"))
        for name in TABLE_FILES
    }


@pytest.fixture(scope="module")
def tables() -> MappingTables:
    return load_tables()


def validate_tables(raw: dict[str, Any]) -> list[str]:
    """Every problem in *raw* (none: ``[]``)."""
    try:
        parse_tables(raw)
    except MappingTableError as e:
        return list(e.problems)
    return []


def test_shipped_tables_validate(raw: dict[str, Any]) -> None:
    assert validate_tables(raw) == []
    assert parse_tables(raw) == load_tables()


def test_load_tables_reads_once_per_process(tables: MappingTables) -> None:
    assert load_tables() is tables


def test_nvidia_table_holds_the_provider_ranges(tables: MappingTables) -> None:
    nv = tables.nvidia
    assert (nv.driver_majors, nv.driver_minors) == (IntRange(11, 15), IntRange(0, 20))
    assert (nv.arch_majors, nv.arch_minors, nv.lowest_arch) == (
        IntRange(5, 12),
        IntRange(0, 9),
        (5, 0),
    )
    assert [f.name for f in nv.features] == [
        "cuda_version_lower_bound",
        "cuda_version_upper_bound",
        "sm_arch",
    ]
    assert nv.toolkit_packages == ("cuda-version", "cudatoolkit")


@pytest.mark.parametrize(
    ("variable", "conda", "provider"),
    [
        ("CONDA_OVERRIDE_CUDA", "CONDA_OVERRIDE_CUDA", NV_DRIVER),  # driver pair lost
        (NV_DRIVER, "CONDA_OVERRIDE_CUDA", NV_DRIVER),  # reverse lookup broken
        (NV_ARCH, "CONDA_OVERRIDE_CUDA_ARCH", NV_ARCH),  # GPU arch pair lost
        ("CONDA_OVERRIDE_ARCHSPEC", "CONDA_OVERRIDE_ARCHSPEC", None),  # CPU override missing
        ("CONDA_OVERRIDE_GLIBC", "CONDA_OVERRIDE_GLIBC", None),  # libc override missing
    ],
)
def test_override_variables_pair_both_worlds(
    tables: MappingTables, variable: str, conda: str, provider: str | None
) -> None:
    (found,) = [o for o in tables.overrides if variable in (o.conda, o.provider)]
    assert (found.conda, found.provider) == (conda, provider)


@pytest.mark.parametrize(
    ("pypi", "conda", "cuda_major", "requires", "build"),
    [
        ("nvidia-cublas-cu12", "libcublas", 12, (), None),  # CUDA 12 name lost
        ("nvidia-cublas", "libcublas", None, (), None),  # unsuffixed: any major (variant index)
        ("nvidia-cudnn-cu13", "libcudnn", 13, (), None),  # cuDNN keeps the suffix on 13
        ("nvidia-cuda-runtime-cu12", "cuda-cudart", 12, (), None),  # cudart name differs
        ("Nvidia_NCCL-cu12", "nccl", 12, (), None),  # PyPI spellings not normalised
        ("torch", "pytorch", None, (), None),  # torch <-> pytorch
        ("cupy-cuda12x", "cupy", 12, ("cuda-version 12.*",), None),  # cupy's CUDA pin lost
        ("cupy-cuda13x", "cupy", 13, ("cuda-version 13.*",), None),  # cupy 13x
        ("jax-cuda12-plugin", "jaxlib", 12, ("cuda-version 12.*",), "cuda*"),  # jax plugin
        ("jax-cuda13-pjrt", "jaxlib", 13, ("cuda-version 13.*",), "cuda*"),  # jax pjrt
    ],
)
def test_pypi_to_conda_names(  # noqa: PLR0917 - pytest passes parameters positionally
    tables: MappingTables,
    pypi: str,
    conda: str,
    cuda_major: int | None,
    requires: tuple[str, ...],
    build: str | None,
) -> None:
    found = tables.names.conda_for_pypi(pypi)
    assert found is not None
    assert (found.conda, found.cuda_major, found.requires, found.build) == (
        conda,
        cuda_major,
        requires,
        build,
    )


@pytest.mark.parametrize(
    ("conda", "pypi"),
    [
        ("pytorch", {"torch"}),  # reverse of torch lost
        ("pytorch-cpu", {"torch"}),  # the CPU mutex provides torch too
        ("libcublas", {"nvidia-cublas-cu12", "nvidia-cublas"}),  # both CUDA majors
        ("cupy", {"cupy-cuda12x", "cupy-cuda13x"}),  # several PyPI names
        ("libtorch", set()),  # the C++ library does not provide the Python dist
    ],
)
def test_conda_to_pypi_names(tables: MappingTables, conda: str, pypi: set[str]) -> None:
    assert {m.pypi for m in tables.names.pypi_for_conda(conda)} == pypi


def test_cpu_tables_list_no_microarchitectures(raw: dict[str, Any]) -> None:
    """Microarchitecture facts come from archspec: no table may list archspec CPU names."""
    import archspec.cpu

    specific = {n for n, t in archspec.cpu.TARGETS.items() if t.vendor != "generic"}

    def strings(node: object) -> set[str]:
        if isinstance(node, dict):
            return set().union(*(strings(k) | strings(v) for k, v in node.items()))
        if isinstance(node, list):
            return set().union(*(strings(v) for v in node))
        return {node} if isinstance(node, str) else set()

    for name in ("x86_64.yaml", "aarch64.yaml"):
        assert strings(raw[name]) & specific == set(), name


@pytest.mark.parametrize(
    ("system", "machine", "subdir"),
    [
        ("Linux", "x86_64", "linux-64"),  # the common case
        ("Linux", "aarch64", "linux-aarch64"),  # ARM servers
        ("Darwin", "arm64", "osx-arm64"),  # Apple silicon
        ("Darwin", "x86_64", "osx-64"),  # Intel macs
        ("Windows", "AMD64", "win-64"),  # Windows reports upper case
        ("Linux", "sparc", None),  # unknown machines must not be guessed
    ],
)
def test_host_subdir_from_platform_module(
    tables: MappingTables, system: str, machine: str, subdir: str | None
) -> None:
    assert tables.platform.host_subdir(system, machine) == subdir


# ------------------------------------------------------------------------------------------
# A broken copy reports every problem with its key path
# ------------------------------------------------------------------------------------------

Edit = Callable[[dict[str, Any]], None]


def _set(file: str, path: str, value: object) -> Edit:
    def edit(raw: dict[str, Any]) -> None:
        node: Any = raw[file]
        *parents, last = path.split("/")
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        if isinstance(node, list):
            node[int(last)] = value
        elif value is _DELETE:
            del node[last]
        else:
            node[last] = value

    return edit


_DELETE = object()

BROKEN: list[tuple[Edit, str]] = [
    (
        _set("nvidia.yaml", "features/sm_arch/virtual_package", 12),
        (
            "nvidia.yaml: features.sm_arch.virtual_package: "
            "expected a string starting with '__', got 12"
        ),
    ),
    (
        _set("nvidia.yaml", "driver/majors", [15, 11]),
        (
            "nvidia.yaml: driver.majors: "
            "expected [low, high] with integers 0 <= low <= high, got a list"
        ),
    ),
    (
        _set("nvidia.yaml", "features/cuda_version_lower_bound/specs/1", "cuda-version >={valu}"),
        "nvidia.yaml: features.cuda_version_lower_bound.specs[1]: unknown placeholder {valu}",
    ),
    (
        _set("nvidia.yaml", "features/sm_arch/rule", "sm"),
        (
            "nvidia.yaml: features.sm_arch.rule: "
            "expected one of 'cuda_lower_bound', 'cuda_upper_bound', 'sm_arch', got 'sm'"
        ),
    ),
    (
        _set("nvidia.yaml", "overrides/0/conda", "CUDA_OVERRIDE"),
        (
            "nvidia.yaml: overrides[0].conda: "
            "expected a variable name starting with 'CONDA_OVERRIDE_'"
        ),
    ),
    (_set("x86_64.yaml", "generation/max", _DELETE), "x86_64.yaml: generation.max: missing"),
    (_set("x86_64.yaml", "flagz", {}), "x86_64.yaml: flagz: unknown key"),
    (
        _set("aarch64.yaml", "specs/rattler", "__archspec 1.* {name}"),
        "aarch64.yaml: specs.rattler: unknown placeholder {name}",
    ),
    (
        _set("aarch64.yaml", "flags/order/0", "SVE2"),
        "aarch64.yaml: flags.order[0]: expected a feature name, got 'SVE2'",
    ),
    (
        _set("platform.yaml", "subdirs/linux-64/cpu_family", "x86-64"),
        (
            "platform.yaml: subdirs.linux-64.cpu_family: "
            "'x86-64' is not the archspec_family of any CPU table"
        ),
    ),
    (
        _set("platform.yaml", "platform_tags/rules/manylinux/pattern", "manylinux_("),
        "platform.yaml: platform_tags.rules.manylinux.pattern: invalid regular expression",
    ),
    (
        _set("platform.yaml", "platform_tags/rules/macosx/arches/arm64", ["osx-arm65"]),
        "platform.yaml: platform_tags.rules.macosx.arches.arm64[0]: unknown subdir 'osx-arm65'",
    ),
    (
        _set("names.yaml", "packages/1/pypi", {12: "nvidia-cuda-runtime-cu12"}),
        (
            "names.yaml: packages[1].pypi.12: "
            "PyPI name 'nvidia-cuda-runtime-cu12' is already mapped by packages[0]"
        ),
    ),
    (
        _set("names.yaml", "packages/2/pypi", {"twelve": "nvidia-cufft-cu12"}),
        "names.yaml: packages[2].pypi.twelve: expected a CUDA major (an integer) or 'any' as key",
    ),
    (
        _set("names.yaml", "packages/3/kind", "library"),
        (
            "names.yaml: packages[3].kind: "
            "expected one of 'cuda-library', 'cuda-meta', 'python', got 'library'"
        ),
    ),
    (_set("names.yaml", "schema", 2), "names.yaml: schema: expected 1, got 2"),
]


@pytest.mark.parametrize(("edit", "expected"), BROKEN)
def test_one_broken_key_is_reported_with_its_path(
    raw: dict[str, Any], edit: Edit, expected: str
) -> None:
    broken = copy.deepcopy(raw)
    edit(broken)
    problems = validate_tables(broken)
    assert any(p.startswith(expected) for p in problems), problems


def test_every_problem_is_reported_at_once(raw: dict[str, Any]) -> None:
    broken = copy.deepcopy(raw)
    for edit, _ in BROKEN:
        edit(broken)
    problems = validate_tables(broken)
    missing = [e for _, e in BROKEN if not any(p.startswith(e) for p in problems)]
    assert missing == []


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda r: r.pop("names.yaml"), "names.yaml: missing"),  # a file left out
        (
            lambda r: r.update({"nvidia.yaml": ["x"]}),
            "nvidia.yaml: expected a mapping at the top level, got a list",
        ),  # wrong top level
        (lambda r: r.update({"ascend.yaml": {}}), "ascend.yaml: unexpected table"),  # stray file
    ],
)
def test_file_level_problems(
    raw: dict[str, Any], change: Callable[[dict[str, Any]], object], expected: str
) -> None:
    broken = copy.deepcopy(raw)
    change(broken)
    assert any(p.startswith(expected) for p in validate_tables(broken))


def test_invalid_yaml_is_one_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in TABLE_FILES:
        (tmp_path / name).write_text((MAPPINGS_DIR / name).read_text(encoding="utf-8"))
    (tmp_path / "x86_64.yaml").write_text("namespace: [unclosed\n")
    with pytest.raises(MappingTableError, match=r"^x86_64\.yaml: invalid YAML: "):
        mappings.read_tables(tmp_path)
