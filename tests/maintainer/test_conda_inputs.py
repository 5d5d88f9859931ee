"""The conda side from the files maintainers have: .ci_support, variants.yaml, recipes."""

from __future__ import annotations

from pathlib import Path

import pytest

from variant_bridge.cuda_archs import ArchLists
from variant_bridge.errors import InvalidArchList, ReleaseInputError
from variant_bridge.maintainer.conda_inputs import read_raw_builds
from variant_bridge.maintainer.conda_side import RawBuild, conda_builds
from variant_bridge.maintainer.recipe import render_recipe
from variant_bridge.maintainer.variant_config import (
    expand,
    read_rendered_config,
    read_source_config,
)


def test_a_ci_support_file_is_one_build_per_python(corpus: Path) -> None:
    path = corpus / "maint" / "pytorch-cpu" / "ci_support_linux_64_mkl_cuda13.0.yaml"
    config = read_rendered_config(path)
    assert len(config.variants()) == 5  # python 3.10 .. 3.14
    (build,) = conda_builds([RawBuild(str(path), v) for v in config.variants()])
    assert (str(build.cuda), build.glibc, build.platform) == ("13.0", (2, 28), "linux-64")
    assert build.python == ("3.10", "3.11", "3.12", "3.13", "3.14")
    assert build.archs is None  # the arch list lives in build.sh


@pytest.mark.parametrize(
    "name",
    [
        "pytorch-cpu/ci_support_linux_64_mkl_cuda12.9.yaml",
        "flash-attn/ci_support_linux_64_cuda13.0_py312.yaml",
        "jaxlib/ci_support_linux_64_cuda_compiler_versionNonepython3.12.____cpython.yaml",
        "microarch-level/variants.yaml",
    ],
)
def test_zip_keys_expand_as_rattler_build_expands_them(corpus: Path, name: str) -> None:
    path = corpus / "maint" / name
    ours = read_rendered_config(path).variants()
    theirs = read_source_config(path, platform="linux-64").variants()
    assert sorted(map(sorted, (v.items() for v in ours))) == sorted(
        map(sorted, (v.items() for v in theirs))
    )


def test_arch_list_option_wins_per_cuda_version(corpus: Path) -> None:
    folder = corpus / "maint" / "pytorch-cpu-2.10.0"
    raws = read_raw_builds([folder], [], "linux-64")
    lists = ArchLists.parse(["12.9=5.0;6.0;7.0;7.5;8.0;8.6;9.0;10.0;12.0+PTX"])
    (build,) = conda_builds(raws, arch_lists=lists)
    assert build.archs is not None
    assert "50_real" in build.archs.sm_arch
    assert build.arch_source == "--arch-list 12.9"


def test_a_recipe_renders_with_the_arch_list_of_its_staging_build(tmp_path: Path) -> None:
    # flash-attn's shape: TORCH_CUDA_ARCH_LIST in a staging output's script env.
    (tmp_path / "recipe.yaml").write_text(
        """\
context: {version: "1.0"}
recipe: {name: fa, version: "${{ version }}"}
outputs:
  - staging: {name: fa-build}
    build:
      script:
        env: {TORCH_CUDA_ARCH_LIST: "8.0;8.6;9.0+PTX"}
        content: echo build
  - package: {name: fa}
    inherit: fa-build
    build:
      number: 5
      string: cuda${{ cuda_compiler_version | replace(".", "") }}_${{ hash }}_5
"""
    )
    (tmp_path / "variants.yaml").write_text('cuda_compiler_version: ["12.9", "13.0"]\n')
    raws = render_recipe(
        tmp_path / "recipe.yaml", [tmp_path / "variants.yaml"], platform="linux-64"
    )
    builds = conda_builds(raws)
    assert [str(b.cuda) for b in builds] == ["12.9", "13.0"]
    assert {str(b.archs) for b in builds} == {"80_real 86_real 90_real 90_virtual"}
    assert {b.arch_source for b in builds} == {"TORCH_CUDA_ARCH_LIST"}
    assert [r.name for r in raws] == ["fa", "fa"]
    assert raws[0].build_number == 5


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("cuda_compiler_version: [12.9\n", r"not a YAML variant configuration \(line 2\)"),
        ("- 12.9\n", "expected a mapping of variant keys to lists of values"),
        ("python: [{if: unix, then: '3.12'}]\n", "'python' is not a list of plain values"),
        (
            "a: [1, 2]\nb: [1]\nzip_keys: [[a, b]]\n",
            r"the zipped keys need the same number of values: a \(2\), b \(1\)",
        ),
        ("a: [1]\nzip_keys: a\n", "zip_keys must be a list of lists of key names"),
    ],
)
def test_a_malformed_config_is_one_clear_error(tmp_path: Path, content: str, says: str) -> None:
    path = tmp_path / "linux_64_cuda12.9.yaml"
    path.write_text(content)
    with pytest.raises(ReleaseInputError, match=says) as info:
        read_raw_builds([path], [], "linux-64")
    assert str(info.value).startswith(str(path))


def test_bad_values_in_a_config_name_the_file_and_key(tmp_path: Path) -> None:
    path = tmp_path / "ci.yaml"
    path.write_text("cuda_compiler_version: ['12.x']\n")
    with pytest.raises(
        ReleaseInputError, match=r"ci.yaml: cuda_compiler_version '12.x' is no CUDA"
    ):
        conda_builds(read_raw_builds([path], [], "linux-64"))
    path.write_text("cuda_compiler_version: ['12.9']\ncuda_archs: ['8.0;Ampere']\n")
    with pytest.raises(InvalidArchList, match=r"ci.yaml: cuda_archs: unknown CUDA architecture"):
        conda_builds(read_raw_builds([path], [], "linux-64"))


def test_a_recipe_that_does_not_render_is_one_clear_error(tmp_path: Path) -> None:
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text("package: {name: x, version: ${{ undefined_thing + 1 }}}\n")
    with pytest.raises(ReleaseInputError) as info:
        read_raw_builds([recipe], [], "linux-64")
    message = str(info.value)
    assert message.startswith(f"{recipe}: the recipe does not render: ")
    assert "\n" not in message
    meta = tmp_path / "meta.yaml"
    meta.write_text("package: {name: x}\n")
    with pytest.raises(ReleaseInputError, match=r"conda-build \(v0\) recipes do not render here"):
        read_raw_builds([meta], [], "linux-64")


def test_a_malformed_variants_yaml_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "variants.yaml"
    path.write_text("cuda_compiler_version: 12.9\n")
    with pytest.raises(ReleaseInputError) as info:
        read_raw_builds([path], [], "linux-64")
    assert str(info.value).startswith(f"{path}: not a valid variant configuration: ")


def test_missing_and_empty_inputs(tmp_path: Path) -> None:
    with pytest.raises(ReleaseInputError, match="no such file or folder"):
        read_raw_builds([tmp_path / "nope"], [], "linux-64")
    with pytest.raises(ReleaseInputError, match=r"no conda packages and no \.ci_support YAML"):
        read_raw_builds([tmp_path], [], "linux-64")
    assert expand({}, ()) == [{}]
