"""The declared build matrix (``[tool.variant-bridge.matrix]``) and its conda build order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from variant_bridge.build_matrix import Matrix, matrix_table
from variant_bridge.build_order import build_order
from variant_bridge.errors import InvalidArchList, ReleaseInputError
from variant_bridge.maintainer._files import load_toml

DEMO = Path(__file__).resolve().parents[1] / "docs" / "examples" / "vbdemo" / "pyproject.toml"


def demo() -> Matrix:
    data = load_toml(DEMO)
    return Matrix.from_table(
        data["tool"]["variant-bridge"]["matrix"], where="pyproject.toml", project=data["project"]
    )


def test_the_demo_matrix_reads_with_defaults() -> None:
    matrix = demo()
    assert (matrix.name, matrix.version, matrix.platform) == ("vbdemo", "1.0.0", "linux-64")
    assert [b.label for b in matrix.builds] == ["null", "cu126", "cu128", "cu129", "cu130"]
    cu126 = matrix.build("cu126")
    assert cu126 is not None
    assert (str(cu126.cuda), str(cu126.driver), cu126.glibc) == ("12.6", "12.6", (2, 17))
    assert cu126.archs is not None
    assert cu126.archs.cmake() == "50-real;60-real;70-real;75-real;80-real;86-real;90"
    assert [str(p) for p in cu126.description().properties] == [
        "nvidia :: cuda_version_lower_bound :: 12.6",
        *(f"nvidia :: sm_arch :: {v}_real" for v in (50, 60, 70, 75, 80, 86, 90)),
        "nvidia :: sm_arch :: 90_virtual",
    ]
    assert matrix.build("null").description().is_null  # type: ignore[union-attr]


def test_lower_bound_major_is_torchs_policy() -> None:
    matrix = Matrix.from_table(
        {"lower-bound": "major", "build": [{"cuda": "12.8"}, {"cuda": "12.6", "driver": "12.4"}]},
        where="m",
    )
    assert [str(b.driver) for b in matrix.builds] == ["12.0", "12.4"]


def test_the_table_written_back_reads_the_same_matrix() -> None:
    matrix = demo()
    again = Matrix.from_table(matrix_table(matrix), where=matrix.source)
    assert again.builds == matrix.builds
    assert (again.name, again.version, again.providers) == ("vbdemo", "1.0.0", "bridge")


@pytest.mark.parametrize(
    ("table", "says"),
    [
        ({}, "no builds"),
        ({"build": [{"cuda": "twelve"}]}, "cuda 'twelve' is no CUDA version like '12.8'"),
        ({"build": [{"cuda": "12"}]}, "cuda '12' is no CUDA version like '12.8'"),
        ({"build": [{"cuda": "12.8", "x86-64-level": 7}]}, "x86-64-level must be 1, 2, 3 or 4"),
        (
            {"build": [{"cuda": "12.8"}, {"cuda": "12.8"}]},
            "label 'cu128' is used by builds 1 and 2",
        ),
        ({"build": [{"cuda": "12.8", "label": "null"}]}, "label 'null' is for the CPU build"),
        ({"build": [{"cuda": "12.8", "label": "CUDA 12"}]}, "must be 1-16 of a-z 0-9 _ ."),
        ({"build": [{"glibc": "2.x"}]}, "glibc '2.x' is no version"),
        ({"build": [{"sm": "80-real"}]}, "driver and sm need a cuda version"),
        ({"build": [{"cuda": "12.8", "colour": "red"}]}, "unknown key 'colour'"),
        ({"lower-bound": "minor", "build": [{}]}, "lower-bound must be 'toolkit' or 'major'"),
        ({"build": [{"conda": {"cuda_compiler_version": "12.8"}}]}, "is a column of the matrix"),
        (
            {"build": [{"label": "a", "cuda": "12.8"}, {"label": "b", "cuda": "12.8"}]},
            "are the same conda build",
        ),
        ({"build": [{"rocm": "six"}]}, "rocm 'six' is no ROCm release like 6.4"),
        ({"build": [{"rocm": "6.4", "gfx": ["MI300"]}]}, "gfx 'MI300' is no AMD GPU name"),
        ({"build": [{"gfx": ["gfx942"]}]}, "gfx needs a rocm version"),
        ({"build": [{"cuda": "12.8", "rocm": "6.4"}]}, "built with CUDA or with ROCm, not both"),
        ({"build": [{"conda": {"rocm_version": "6.4"}}]}, "is a column of the matrix"),
    ],
)
def test_malformed_matrices_are_one_clear_error(table: dict[str, Any], says: str) -> None:
    with pytest.raises(ReleaseInputError, match=says) as info:
        Matrix.from_table(table, where="pyproject.toml")
    assert str(info.value).startswith("pyproject.toml")


def test_an_unknown_sm_spelling_names_the_build() -> None:
    with pytest.raises(
        InvalidArchList, match=r"pyproject.toml build 1: sm: unknown CUDA architecture 'Hopper'"
    ):
        Matrix.from_table({"build": [{"cuda": "12.8", "sm": "Hopper"}]}, where="pyproject.toml")


def test_build_numbers_rank_cuda_minors_as_pep_825_does() -> None:
    # conda-forge's single +200 leaves minors tied: the solver then takes the newest upload.
    order = build_order(demo())
    assert order.order == ("null", "cu126", "cu128", "cu129", "cu130")
    assert order.numbers == {"null": 0, "cu126": 1, "cu128": 2, "cu129": 3, "cu130": 4}
    assert not order.conflicts


def test_static_priority_decides_between_equal_lower_bounds() -> None:
    # torch's shape: both 12.x builds declare 12.0; priority 1 is preferred.
    matrix = Matrix.from_table(
        {
            "lower-bound": "major",
            "build": [
                {"label": "cuda12.6", "cuda": "12.6", "sm": "8.0", "priority": 2},
                {"label": "cuda12.8", "cuda": "12.8", "sm": "8.0", "priority": 1},
            ],
        },
        where="m",
    )
    assert build_order(matrix).order == ("cuda12.6", "cuda12.8")


def test_orders_no_single_build_number_expresses_are_reported() -> None:
    # a 8.6 GPU prefers b (86_real matches); on a 9.0 GPU both rank equal and the label decides.
    matrix = Matrix.from_table(
        {
            "build": [
                {"label": "a", "cuda": "12.8", "sm": "80-real;90-real", "conda": {"flavour": "a"}},
                {"label": "b", "cuda": "12.8", "sm": "86-real;90-real", "conda": {"flavour": "b"}},
            ]
        },
        where="m",
    )
    order = build_order(matrix)
    (conflict,) = order.conflicts
    assert (conflict.first, conflict.second) == ("a", "b")
    assert conflict.first_wins_on == "__cuda=12.8 __cuda_arch=9.0 (equal rank: the label decides)"
    assert conflict.second_wins_on == "__cuda=12.8 __cuda_arch=8.6"


def test_builds_pep_825_cannot_tell_apart_share_a_number() -> None:
    matrix = Matrix.from_table(
        {
            "build": [
                {"label": "mkl", "conda": {"blas": "mkl"}},
                {"label": "openblas", "conda": {"blas": "openblas"}},
            ]
        },
        where="m",
    )
    assert set(build_order(matrix).numbers.values()) == {0}


# -- matrices nvcc cannot build are refused, naming the row (toolkits.yaml) --------------------


@pytest.mark.parametrize(
    ("row", "says"),
    [
        (
            {"cuda": "12.6", "sm": "9.0;10.0;12.0"},
            (
                "m build 2 (cu126): nvcc 12.6 cannot compile 100_real 120_real (it compiles compute "
                "capabilities 5.0 to 9.0; toolkits.yaml)"
            ),
        ),
        (
            {"cuda": "13.0", "sm": "5.0;6.0;7.0;7.5", "glibc": "2.28"},
            (
                "m build 2 (cu130): nvcc 13.0 cannot compile 50_real 60_real 70_real (it compiles "
                "compute capabilities 7.5 to 12.1; toolkits.yaml)"
            ),
        ),
        (
            {"cuda": "13.0", "sm": "8.0", "glibc": "2.17"},
            "m build 2 (cu130): CUDA 13 needs glibc >=2.28, not 2.17 (toolkits.yaml)",
        ),
        (
            {"cuda": "12.8", "sm": "10.1;10.3", "label": "thor"},
            "m build 2 (thor): nvcc 12.8 cannot compile 103_real (it compiles",
        ),
        (
            {"cuda": "13.0", "sm": "10.1", "glibc": "2.28"},  # renamed sm_110 in 13.0
            "m build 2 (cu130): nvcc 13.0 cannot compile 101_real",
        ),
    ],
)
def test_matrices_the_toolkit_cannot_build_are_refused(row: dict[str, str], says: str) -> None:
    with pytest.raises(ReleaseInputError) as info:
        Matrix.from_table({"build": [{"glibc": "2.17"}, row]}, where="m")
    assert str(info.value).startswith(says)
    assert "\n" not in str(info.value)


def test_what_the_toolkit_table_allows() -> None:
    matrix = Matrix.from_table(
        {"build": [
            {"cuda": "12.6", "sm": "5.0;6.0;7.0;7.5;8.0;8.6;9.0"},
            {"cuda": "12.8", "sm": "7.5;8.0;8.6;9.0;10.0;12.0+PTX"},
            {"cuda": "12.9", "sm": "sm_100a compute_103f 12.1"},
            {"cuda": "13.0", "sm": "7.5;8.0;8.6;9.0;10.0;11.0;12.0+PTX", "glibc": "2.28"},
            {"cuda": "11.2", "sm": "3.5;8.6"},  # a release the table does not know: unchecked
        ]},
        where="m",
    )  # fmt: skip
    assert len(matrix.builds) == 5
    from variant_bridge.build_matrix import toolkit_notes

    assert toolkit_notes(matrix) == [
        "no nvcc facts for CUDA 11.2 in toolkits.yaml: its SM list is not checked"
    ]


def test_free_threaded_python_is_a_python_of_its_own() -> None:
    from variant_bridge.build_order import build_order
    from variant_bridge.maintainer.outputs import conda_variants

    matrix = Matrix.from_table(
        {"python": ["3.13", "3.13t"], "build": [{"cuda": "12.8", "sm": "8.0"}]}, where="m"
    )
    values, _ = conda_variants(matrix, build_order(matrix))
    assert values["python"] == ["3.13", "3.13.* *_cp313t"]
    with pytest.raises(ReleaseInputError, match=r"'3\.13x' is no version like 3\.12 or 3\.13t"):
        Matrix.from_table({"python": ["3.13x"], "build": [{"cuda": "12.8"}]}, where="m")


def test_a_rocm_build_is_a_row_of_both_sides() -> None:
    """A ROCm build (torch's rocm6.4: its release and the GPUs it has code for) gives a wheel
    variant of the amd namespace and a conda build that needs that ROCm runtime and constrains
    the AMD GPU, as amd.yaml maps them."""
    from variant_bridge.maintainer import outputs

    matrix = Matrix.from_table(
        {"build": [{}, {"rocm": "6.4", "gfx": ["gfx942", "gfx90a"]}]}, where="matrix.toml"
    )
    null, rocm = matrix.builds
    assert rocm.label == "rocm6.4"
    assert not rocm.is_null
    assert [str(p) for p in rocm.properties()] == [
        "amd :: gfx_arch :: gfx942",
        "amd :: gfx_arch :: gfx90a",
        "amd :: rocm_version :: 6.4",
    ]
    order = build_order(matrix)
    assert order.order == ("null", "rocm6.4")  # an MI300 or MI250 prefers its ROCm build
    assert outputs.run_requirements(matrix, rocm) == ["rocm-core 6.4.*"]
    assert outputs.run_constraints(rocm) == ["__amdgpu_arch ==9.4.2|==9.0.10"]
    variants = outputs.variants_yaml(matrix, order)
    assert "rocm_version:\n- None\n- '6.4'\n" in variants
    assert "amdgpu_arch_constraint:\n- ''\n- ==9.4.2|==9.0.10\n" in variants
    recipe = outputs.recipe_requirements(matrix, order)
    assert (
        '    - if: rocm_version != "None"\n      then: rocm-core ${{ rocm_version }}.*\n' in recipe
    )
    assert "      then: __amdgpu_arch ${{ amdgpu_arch_constraint }}\n" in recipe
    table = outputs.pyproject_variant(matrix)
    assert table["providers"]["amd"] == {
        "requires": ["amd-variant-provider>=0.0.2,<1.0.0"],
        "plugin-api": "amd_variant_provider.plugin:AMDVariantPlugin",
    }
    assert outputs.variants_json(matrix)["variants"]["rocm6.4"] == {
        "amd": {"gfx_arch": ["gfx90a", "gfx942"], "rocm_version": ["6.4"]}  # sorted, as JSON
    }
    assert null.is_null
