"""``matrix``: derived from conda's real matrices and written back, the same conda matrix; derived
from torch's real variants, the conda side with torch's order as build numbers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from variant_bridge.errors import ReleaseInputError
from variant_bridge.jobs import matrix as matrix_job
from variant_bridge.jobs.context import open_downloads
from variant_bridge.jobs.matrix import MatrixRequest, MatrixResult, write_artifacts
from variant_bridge.jobs.specs import FetchSpec
from variant_bridge.maintainer.variant_config import read_rendered_config, read_source_config

MAINT = ("maint",)


def run_matrix(request: MatrixRequest) -> MatrixResult:
    """The job as ``matrix`` runs it: ``--from-wheels`` through the command's one downloads."""
    if request.from_wheels is None:
        return matrix_job.run_matrix(request)
    with open_downloads(FetchSpec(no_cache=True, quiet=True)) as downloads:
        return matrix_job.run_matrix(request, downloads)


def test_wheels_are_read_only_through_the_commands_downloads(corpus: Path) -> None:
    variants = corpus / "maint" / "variant-repack" / "torch-2.10.0-variants.json"
    with pytest.raises(ValueError, match="through the command's downloads"):
        matrix_job.run_matrix(MatrixRequest(from_wheels=str(variants)))


def combinations(paths: list[Path]) -> list[list[tuple[str, str]]]:
    found = []
    for path in paths:
        found += read_rendered_config(path).variants()
    return sorted(sorted(v.items()) for v in found)


def generated(tmp_path: Path, request: MatrixRequest) -> Path:
    result = run_matrix(request)
    written = write_artifacts(result, tmp_path / "out")
    return next(p for p in written if p.name == "variants.yaml")


def restricted(path: Path, keys: set[str]) -> list[list[tuple[str, str]]]:
    # read back by py-rattler-build, as a recipe build would
    variants = read_source_config(path, platform="linux-64").variants()
    return sorted(sorted((k, v) for k, v in variant.items() if k in keys) for variant in variants)


@pytest.mark.parametrize(
    "files",
    [
        ["microarch-level/variants.yaml"],
        [
            "flash-attn/ci_support_linux_64_cuda12.9_py312.yaml",
            "flash-attn/ci_support_linux_64_cuda13.0_py312.yaml",
        ],
        [
            "jaxlib/ci_support_linux_64_cuda_compiler_versionNonepython3.12.____cpython.yaml",
            "jaxlib/ci_support_linux_64_cuda_compiler_version12.9python3.12.____cpython.yaml",
        ],
    ],
)
def test_from_conda_and_back_is_the_same_conda_matrix(
    corpus: Path, tmp_path: Path, files: list[str]
) -> None:
    paths = [corpus / "maint" / f for f in files]
    request = MatrixRequest(from_conda=tuple(paths))
    out = generated(tmp_path, request)
    expected = combinations(paths)
    # target_platform is the platform rattler-build builds for, never a variants.yaml key
    keys = {k for variant in expected for k, _ in variant} - {"target_platform"}
    expected = [[(k, v) for k, v in variant if k in keys] for variant in expected]
    assert restricted(out, keys) == expected
    # ... and through the written matrix declaration, once more
    matrix_file = out.with_name("variant-matrix.toml")
    again = generated(tmp_path / "again", MatrixRequest(declaration=matrix_file))
    assert restricted(again, keys) == expected


def test_flash_attn_with_its_arch_list_gives_cuda_archs_and_build_offsets(
    corpus: Path, tmp_path: Path
) -> None:
    folder = corpus / "maint" / "flash-attn"
    paths = tuple(sorted(folder.glob("ci_support_*.yaml")))
    result = run_matrix(
        MatrixRequest(from_conda=paths, arch_lists=("8.0;8.6;8.9;9.0;10.0;12.0+PTX",))
    )
    assert [b.label for b in result.matrix.builds] == ["cu129", "cu130"]
    text = result.artifacts["variants-yaml"][1]
    assert "cuda_archs:\n- 80-real;86-real;89-real;90-real;100-real;120\n" in text
    assert result.order.numbers == {"cu129": 0, "cu130": 1}


def test_from_torchs_variants_the_priority_order_becomes_build_numbers(corpus: Path) -> None:
    variants = corpus / "maint" / "variant-repack" / "torch-2.10.0-variants.json"
    result = run_matrix(MatrixRequest(from_wheels=str(variants)))
    matrix = result.matrix
    labels = ["cuda12.6", "cuda12.8", "cuda13.0", "null", "rocm7.0", "rocm7.1"]
    assert [b.label for b in matrix.builds] == labels
    assert [str(b.driver) for b in matrix.builds[:3]] == ["12.0", "12.0", "13.0"]
    assert [b.priority for b in matrix.builds] == [3, 2, 1, None, None, None]
    order = ("null", "rocm7.0", "rocm7.1", "cuda12.6", "cuda12.8", "cuda13.0")
    assert result.order.order == order
    text = result.artifacts["variants-yaml"][1]
    # torch's driver floors are not its toolkits: the recipe needs them as a key
    assert "cuda_driver_floor:\n- '12.0'\n- '12.0'\n- '13.0'\n- ''\n- ''\n- ''\n" in text
    assert "__cuda >=${{ cuda_driver_floor }}" in result.artifacts["recipe"][1]


@pytest.mark.parametrize("order", ["9" * 5000, "1" + "0" * 9, "x"])
def test_a_priority_that_is_no_plain_number_gives_no_order(
    corpus: Path, tmp_path: Path, order: str
) -> None:
    # a 5,000-digit value once escaped int() as an internal error
    variants = corpus / "maint" / "variant-repack" / "torch-2.10.0-variants.json"
    document = json.loads(variants.read_text())
    document["variants"]["cuda12.6"]["priority"]["order"] = [order]
    changed = tmp_path / variants.name
    changed.write_text(json.dumps(document))
    result = run_matrix(MatrixRequest(from_wheels=str(changed)))
    assert [b.priority for b in result.matrix.builds][:3] == [None, 2, 1]


def test_from_wheels_names_every_variant_it_leaves_out(corpus: Path) -> None:
    variants = corpus / "maint" / "variant-repack" / "torch-2.10.0-variants.json"
    result = run_matrix(MatrixRequest(from_wheels=str(variants)))
    # an Intel GPU has no conda counterpart: the matrix has no column for it
    assert result.notes[0] == (
        "variant xpu is not in the matrix: it has no column for namespace intel (its wheels "
        "stay as they are; its conda build is not generated)"
    )


@pytest.mark.parametrize(
    ("path", "releases"),
    [
        ("maint/variant-repack/torch-2.10.0-variants.json", {"rocm7.0": (7, 0), "rocm7.1": (7, 1)}),
        ("real/variants-index-test/v0.0.3/torch/torch-2.9.0-variants.json",
         {"rocm6.3": (6, 3), "rocm6.4": (6, 4)}),
    ],
)  # fmt: skip
def test_from_wheels_the_rocm_builds_are_rows_with_their_provider(
    corpus: Path, tmp_path: Path, path: str, releases: dict[str, tuple[int, int]]
) -> None:
    """torch's published ROCm builds: a row each (its ROCm release and GPUs) whose conda build
    needs that rocm-core and constrains __amdgpu_arch, and whose wheel names the AMD provider
    the real metadata names."""
    document = json.loads((corpus / path).read_text())
    result = run_matrix(MatrixRequest(from_wheels=str(corpus / path)))
    for label, release in releases.items():
        build = result.matrix.build(label)
        assert build is not None
        assert build.rocm == release
        assert list(build.gfx) == sorted(document["variants"][label]["amd"]["gfx_arch"])
    pyproject = result.artifacts["pyproject"][1]
    provider = document["providers"]["amd"]
    assert f"requires = {json.dumps(provider['requires'])}" in pyproject
    assert f'plugin-api = "{provider["plugin-api"]}"' in pyproject
    expected = json.loads(result.artifacts["variants-json"][1])
    for label in releases:
        assert expected["variants"][label] == document["variants"][label]
    variants = result.artifacts["variants-yaml"][1]
    assert "rocm_version:\n- None\n- None\n- None\n- None\n" in variants
    # ... and the written matrix and variants.yaml read back to the same ROCm rows
    out = tmp_path / "out"
    write_artifacts(result, out)
    for again in (
        run_matrix(MatrixRequest(declaration=out / "variant-matrix.toml")),
        run_matrix(MatrixRequest(from_conda=(out / "variants.yaml",))),
    ):
        for label, release in releases.items():
            (build,) = [b for b in again.matrix.builds if b.rocm == release]
            assert build.gfx == result.matrix.build(label).gfx  # type: ignore[union-attr]


def test_per_major_wheels_give_no_conda_minor(corpus: Path) -> None:
    variants = corpus / "real/variants-index-test/v0.0.3/cupy/cupy-13.6.0-variants.json"
    with pytest.raises(ReleaseInputError) as info:
        run_matrix(MatrixRequest(from_wheels=str(variants)))
    assert str(info.value) == (
        f"{variants}: variant 'cu11': its CUDA toolkit is CUDA 11.x (its label 'cu11' says any "
        "CUDA 11.x (a per-major wheel)); a conda build needs one minor: declare the matrix with "
        "the minors you build"
    )


def test_a_whole_ci_support_folder_gives_one_platforms_matrix(corpus: Path) -> None:
    folder = corpus / "maint" / "pytorch-cpu-2.10.0-final" / ".ci_support"
    lists = ("12.9=5.0;6.0;7.0;7.5;8.0;8.6;9.0;10.0;12.0+PTX",
             "13.0=7.5;8.0;8.6;9.0;10.0;11.0;12.0+PTX")  # fmt: skip
    result = run_matrix(MatrixRequest(from_conda=(folder,), arch_lists=lists))
    assert result.matrix.platform == "linux-64"
    assert {str(b.cuda) for b in result.matrix.builds} == {"None", "12.9", "13.0"}
    assert result.notes[0] == (
        "the matrix of linux-64: the builds for linux-aarch64, osx-64, osx-arm64, win-64 are "
        "left out (one matrix per platform; pass --platform for another)"
    )
    arm = run_matrix(
        MatrixRequest(from_conda=(folder,), arch_lists=lists, platform="linux-aarch64")
    )
    assert arm.matrix.platform == "linux-aarch64"


def test_the_tegra_build_is_a_family_of_its_own_not_a_wheel_row(
    corpus: Path, tmp_path: Path
) -> None:
    """pytorch-cpu 2.10.0's linux-aarch64 builds: CPU, CUDA 12.9 and 13.0 for sbsa (the servers
    manylinux aarch64 wheels are for) and CUDA 12.9 for tegra (Jetson, glibc 2.34)."""
    folder = corpus / "maint" / "pytorch-cpu-2.10.0-final" / ".ci_support"
    lists = ("12.9=5.0;6.0;7.0;7.5;8.0;8.6;9.0;10.0;12.0+PTX",
             "13.0=7.5;8.0;8.6;9.0;10.0;11.0;12.0+PTX",
             "linux-aarch64,arm_variant_type=tegra:12.9=8.7;10.1+PTX")  # fmt: skip
    request = MatrixRequest(from_conda=(folder,), arch_lists=lists, platform="linux-aarch64")
    result = run_matrix(request)
    matrix = result.matrix
    assert [b.label for b in matrix.builds] == ["cu129", "null", "cu130", "cu129_tegra"]
    assert [b.label for b in matrix.wheel_builds()] == ["cu129", "null", "cu130"]
    # ordered and numbered among themselves: the tegra build competes with no sbsa build
    assert result.order.order == ("null", "cu129", "cu130")
    assert result.order.families == (("arm_variant_type=tegra", ("cu129_tegra",)),)
    assert result.order.numbers == {"null": 0, "cu129": 1, "cu130": 2, "cu129_tegra": 0}
    assert (
        "linux-aarch64 arm_variant_type=tegra: cu129_tegra is a build family of its own "
        "(toolkits.yaml families: no wheel platform tag describes it): conda builds only, "
        "numbered among themselves, no wheel variant generated"
    ) in result.notes
    # the conda side keeps it; the wheel side has no variant for it
    variants = result.artifacts["variants-yaml"][1]
    assert "arm_variant_type:\n- sbsa\n- sbsa\n- sbsa\n- tegra\n" in variants
    assert (
        "cuda_archs:\n- 50-real;60-real;70-real;75-real;80-real;86-real;90-real;100-real;120\n"
        in variants
    )
    assert "87-real;101\n" in variants
    for artifact in ("variants-json", "make-variant", "scikit-build"):
        assert "tegra" not in result.artifacts[artifact][1], artifact
    # ... and so does the matrix it writes, read back
    out = tmp_path / "out"
    write_artifacts(result, out)
    again = run_matrix(MatrixRequest(declaration=out / "variant-matrix.toml"))
    assert again.order == result.order
    assert again.artifacts["variants-yaml"][1].split("\n", 1)[1] == variants.split("\n", 1)[1]


def test_a_global_pinning_is_no_package_matrix(corpus: Path) -> None:
    pinning = corpus / "maint" / "conda-forge-pinning" / "conda_build_config.yaml"
    with pytest.raises(ReleaseInputError) as info:
        run_matrix(MatrixRequest(from_conda=(pinning,)))
    assert str(info.value).startswith(f"{pinning}: 480 conda builds: more than one package's")
    assert str(info.value).endswith("read its CUDA axis with --from-pinning")


def test_conda_forge_pinning_with_the_cuda_13_migration(corpus: Path) -> None:
    pinning = corpus / "maint" / "conda-forge-pinning"
    request = MatrixRequest(
        from_pinning=pinning / "conda_build_config.yaml",
        migrations=(pinning / "migrations_cuda130.yaml",),
        arch_lists=("12.9=75-real;80-real;90;100;120", "13.0=75-real;80-real;90;100;110;120"),
    )
    result = run_matrix(request)
    rows = [(str(b.cuda), b.glibc, b.conda.get("c_compiler_version")) for b in result.matrix.builds]
    # None and 12.9 from the pinning (CF_CUDA_ENABLED), 13.0 with glibc 2.28 from the migration
    assert rows == [("None", (2, 17), "15"), ("12.9", (2, 17), "14"), ("13.0", (2, 28), "15")]
    assert result.matrix.python == (
        "3.10.* *_cpython", "3.11.* *_cpython", "3.12.* *_cpython", "3.13.* *_cp313",
    )  # fmt: skip
    assert dict(result.matrix.conda) == {"cuda_compiler": "cuda-nvcc", "c_stdlib": "sysroot"}
    assert "its other 480 keys are pins a recipe takes by name, not build axes" in result.notes[0]
    assert result.order.order == ("null", "cu129", "cu130")
    # without the migration: the pinning alone builds CUDA 12.9 and CPU
    alone = run_matrix(MatrixRequest(from_pinning=pinning / "conda_build_config.yaml"))
    assert [str(b.cuda) for b in alone.matrix.builds] == ["None", "12.9"]


def test_a_migration_needs_the_pinning(corpus: Path) -> None:
    migration = corpus / "maint" / "conda-forge-pinning" / "migrations_cuda130.yaml"
    with pytest.raises(ReleaseInputError, match="a conda-forge migration, not a variant config"):
        run_matrix(MatrixRequest(from_conda=(migration,)))
    with pytest.raises(ReleaseInputError, match="--migration applies to conda-forge's pinning"):
        run_matrix(MatrixRequest(from_conda=(migration,), migrations=(migration,)))


def test_rapids_dependency_file_generator(corpus: Path) -> None:
    dfg = corpus / "maint" / "cudf-25.12" / "dependencies.yaml"
    result = run_matrix(
        MatrixRequest(from_dfg=dfg, arch_lists=("12=70-real;80-real;90", "13=80-real;90"))
    )
    assert [(str(b.cuda), b.glibc) for b in result.matrix.builds] == [
        ("12.9", (2, 28)),
        ("13.0", (2, 28)),
    ]
    assert result.matrix.python == ("3.10", "3.11", "3.12", "3.13")
    assert result.notes[0].startswith(
        "dependency-file-generator's files.all matrix for linux-64: cuda 12.9, 13.0"
    )
    with pytest.raises(ReleaseInputError, match=r"files\.all builds for arch x86_64, aarch64"):
        run_matrix(MatrixRequest(from_dfg=dfg, platform="linux-ppc64le"))
    with pytest.raises(ReleaseInputError, match="dependency-file-generator file, not a variant"):
        run_matrix(MatrixRequest(from_conda=(dfg,)))
    # a CUDA 13 build of sm_70 is one nvcc 13 cannot compile: refused naming the build
    with pytest.raises(ReleaseInputError, match=r"nvcc 13\.0 cannot compile 70_real"):
        run_matrix(MatrixRequest(from_dfg=dfg, arch_lists=("70-real;80-real",)))
