"""CUDA architecture lists in CMake, PyTorch, sm_arch and nvcc spellings: one set of targets."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from variant_bridge.cuda_archs import ArchKind, ArchLists, ArchSet, CudaArch, parse_arch_list
from variant_bridge.errors import InvalidArchList

# pytorch-cpu-feedstock 2.13.0 recipe/build.sh, CUDA 12.8/12.9 (shared corpus cuda-arch-lists.yaml)
TORCH_LIST = "5.0;6.0;7.0;7.5;8.0;8.6;9.0;10.0;12.0+PTX"
TORCH_TARGETS = (
    "50_real 60_real 70_real 75_real 80_real 86_real 90_real 100_real 120_real 120_virtual"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (TORCH_LIST, TORCH_TARGETS),
        (
            "80-real;90-real;100-real;110-real;120",
            "80_real 90_real 100_real 110_real 120_real 120_virtual",
        ),
        ("80_real 90_virtual", "80_real 90_virtual"),
        ("sm_80,compute_90", "80_real 90_virtual"),
        ("8.0 9.0+ptx", "80_real 90_real 90_virtual"),  # space-separated, PTX in any case
        ("90a-real;100f", "90a_real 100f_real 100f_virtual"),
        ("  86-virtual  ", "86_virtual"),
    ],
)
def test_every_spelling_reads_as_targets(text: str, expected: str) -> None:
    assert str(parse_arch_list(text)) == expected


def test_the_same_list_in_three_spellings_is_one_set() -> None:
    torch = parse_arch_list("8.0;8.6;9.0+PTX")
    cmake = parse_arch_list("80-real;86-real;90")
    sm_arch = ArchSet.of(["80_real", "86_real", "90_real", "90_virtual"])
    assert torch == cmake == sm_arch
    assert torch.cmake() == "80-real;86-real;90"


def test_differences_are_sets_of_targets() -> None:
    conda, wheel = parse_arch_list(TORCH_LIST), parse_arch_list("7.0;7.5;8.0;8.6;9.0;10.0;12.0")
    assert str(conda - wheel) == "50_real 60_real 120_virtual"
    assert not wheel - conda


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "empty CUDA architecture list"),
        ("all", "'all' depends on the nvcc version"),
        ("native", "'native' depends on the nvcc version"),
        ("Ampere", "unknown CUDA architecture 'Ampere'"),
        ("8.0;9", "unknown CUDA architecture '9'"),
        ("80-fast", "unknown CUDA architecture '80-fast'"),
        ("1000-real", "unknown CUDA architecture '1000-real'"),
    ],
)
def test_unknown_spellings_are_one_clear_error(text: str, says: str) -> None:
    with pytest.raises(InvalidArchList, match=says) as info:
        parse_arch_list(text, where="--arch-list 12.9")
    assert str(info.value).startswith("--arch-list 12.9: ")
    assert "\n" not in str(info.value)


def test_arch_lists_per_platform_and_variant_key() -> None:
    lists = ArchLists.parse(
        [
            "12.9=5.0;8.0",
            "linux-aarch64:12.9=8.0;9.0",
            "linux-aarch64,arm_variant_type=tegra:12.9=8.7;10.1+PTX",
            "win-64:8.0",
        ]
    )
    assert lists.find("12.9") == ("12.9", parse_arch_list("5.0;8.0"))
    assert lists.find("12.9", platform="linux-aarch64") == (
        "linux-aarch64:12.9",
        parse_arch_list("8.0;9.0"),
    )
    tegra = {"arm_variant_type": "tegra", "cuda_compiler_version": "12.9"}
    assert lists.find("12.9", platform="linux-aarch64", variant=tegra) == (
        "linux-aarch64,arm_variant_type=tegra:12.9",
        parse_arch_list("8.7;10.1+PTX"),
    )
    # a platform's list for any CUDA is more specific than a CUDA version's for any platform
    assert lists.find("12.9", platform="win-64") == ("win-64:", parse_arch_list("8.0"))
    assert lists.find("12.8", platform="linux-64") is None


def test_two_lists_applying_alike_are_an_error() -> None:
    lists = ArchLists.parse(["linux-aarch64:12.9=8.0", "arm_variant_type=tegra:12.9=8.7"])
    with pytest.raises(
        InvalidArchList, match=r"both apply to the CUDA 12\.9 build for linux-aarch64"
    ):
        lists.find("12.9", platform="linux-aarch64", variant={"arm_variant_type": "tegra"})


def test_arch_lists_per_version_major_and_default() -> None:
    lists = ArchLists.parse(["12.9=8.0;9.0", "13=80-real", "75-real"])
    assert lists.find("12.9") == ("12.9", parse_arch_list("8.0;9.0"))
    assert lists.find("13.0") == ("13", parse_arch_list("80-real"))
    assert lists.find("12.8") == ("", parse_arch_list("75-real"))
    assert ArchLists.parse(["12.9=8.0"]).find("12.8") is None


@pytest.mark.parametrize(
    ("items", "says"),
    [
        (["twelve=8.0"], "'twelve' is no CUDA version"),
        (["12.9=8.0", "12.9=9.0"], "--arch-list 12.9 given twice"),
        (["8.0", "9.0"], r"--arch-list \(any CUDA\) given twice"),
        (["linux-64:12.9=8.0", "linux-64:12.9=9.0"], "--arch-list linux-64:12.9 given twice"),
        (["linux_64:12.9=8.0"], "'linux_64' is no platform or KEY=VALUE"),
        (["linux-64,win-64:12.9=8.0"], "'win-64' is no platform or KEY=VALUE"),
        (["12.9="], "--arch-list 12.9: empty"),
    ],
)
def test_bad_arch_list_options(items: list[str], says: str) -> None:
    with pytest.raises(InvalidArchList, match=says):
        ArchLists.parse(items)


targets = st.builds(
    CudaArch,
    st.integers(5, 12),
    st.integers(0, 9),
    st.sampled_from(["", "a", "f"]),
    st.sampled_from(list(ArchKind)),
)


@given(st.frozensets(targets, min_size=1, max_size=12))
def test_each_spelling_written_back_reads_the_same(found: frozenset[CudaArch]) -> None:
    s = ArchSet(found)
    assert parse_arch_list(s.cmake()) == s
    assert ArchSet.of(s.sm_arch) == s
