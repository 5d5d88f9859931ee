"""The wheel side from what maintainers have: wheels (a folder, an index), a variants.json,
a declaration (variant-repack, scikit-build-core overrides)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.worlds.index_server import IndexServer
from tests.worlds.torch_index import build_torch_index
from tests.worlds.wheels import make_wheel
from variant_bridge.errors import ReleaseInputError
from variant_bridge.jobs.context import open_downloads
from variant_bridge.jobs.specs import FetchSpec
from variant_bridge.maintainer import wheels
from variant_bridge.release import ToolkitBasis, WheelSide


def read_wheel_side(location: str, **kwargs: Any) -> WheelSide:
    """The reader as a command calls it: through the command's one downloads."""
    with open_downloads(FetchSpec(no_cache=True, quiet=True)) as downloads:
        return wheels.read_wheel_side(location, downloads=downloads, **kwargs)


@pytest.fixture(scope="module")
def torch_index(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_torch_index(
        corpus, tmp_path_factory.mktemp("torch"), tags="cp312-cp312-manylinux_2_28_x86_64"
    )


@pytest.fixture(scope="module")
def index(torch_index: Path) -> Iterator[IndexServer]:
    with IndexServer(torch_index, core_metadata=True) as server:
        yield server


def test_an_index_gives_tags_and_the_pins_of_each_variant(index: IndexServer) -> None:
    side = read_wheel_side(index.url, project="torch")
    assert (side.project, side.version, side.files_known) == ("torch", "2.9.0", True)
    cu128 = side.variant("cuda12.8")
    assert cu128 is not None
    claim = cu128.claim()
    assert claim is not None
    assert (str(claim.cuda), claim.basis) == ("12.8", ToolkitBasis.PINS)
    assert claim.text == "pins nvidia-cublas 12.8.4.1 (conda: libcublas, CUDA 12.8)"
    assert cu128.glibc("linux-64") == (2, 28)
    assert cu128.python() == frozenset({"3.12"})


def test_an_index_without_ranges_or_metadata_files_opens_no_wheel(torch_index: Path) -> None:
    """A server offering neither PEP 658 files nor range requests: the variants come from the
    index's variants.json and the tags from the filenames; the wheels are named, not fetched."""
    with IndexServer(torch_index, core_metadata=False, ranges=False) as server:
        side = read_wheel_side(server.url, project="torch")
        whole = [r for r in server.requests if r.path.endswith(".whl") and r.status == 200]
    assert side.files_known
    assert sorted(side.unread) == sorted(
        f"torch-2.9.0-cp312-cp312-manylinux_2_28_x86_64-{label}.whl"
        for label in ("cuda12.6", "cuda12.8", "cuda13.0", "null", "rocm6.3", "rocm6.4", "xpu")
    )
    cu128 = side.variant("cuda12.8")
    assert cu128 is not None
    assert cu128.evidence is None
    claim = cu128.claim()
    assert claim is not None
    assert (str(claim.cuda), claim.basis) == ("12.8", ToolkitBasis.LABEL)  # the label says it
    assert cu128.glibc("linux-64") == (2, 28)
    # no wheel was sent whole: at most the first bytes of a range probe the server ignored
    assert sum(r.sent for r in whole) < 7 * 256 * 1024
    with IndexServer(torch_index, core_metadata=False, ranges=False) as server:
        side = read_wheel_side(server.url, project="torch", download=True)
    assert side.unread == ()
    assert side.variant("cuda12.8").evidence is not None  # type: ignore[union-attr]


def test_a_folder_of_several_projects_needs_the_project(torch_index: Path) -> None:
    with pytest.raises(
        ReleaseInputError, match=r"wheels of several projects .*name one with --project"
    ):
        read_wheel_side(str(torch_index))
    side = read_wheel_side(str(torch_index), project="torch")
    assert {v.label for v in side.variants} >= {"cuda12.6", "cuda12.8", "null"}


def test_an_index_url_needs_the_project(index: IndexServer) -> None:
    with pytest.raises(ReleaseInputError, match="an index URL needs --project NAME"):
        read_wheel_side(index.url)


def test_wheels_of_different_versions_are_one_clear_error(tmp_path: Path) -> None:
    for version in ("1.0", "1.1"):
        make_wheel(
            tmp_path,
            "demo",
            version,
            label="cu128",
            properties=["nvidia :: cuda_version_lower_bound :: 12.8"],
        )
    with pytest.raises(ReleaseInputError) as info:
        read_wheel_side(str(tmp_path))
    assert str(info.value) == (
        f"{tmp_path}: wheels of different versions (1.0 (1 wheels), 1.1 (1 wheels)); check one "
        "release: pass --version"
    )
    assert read_wheel_side(str(tmp_path), version="1.1").version == "1.1"


def test_a_variants_json_alone_knows_no_tags(corpus: Path) -> None:
    side = read_wheel_side(str(corpus / "maint" / "variant-repack" / "torch-2.10.0-variants.json"))
    assert (side.project, side.version, side.files_known) == ("torch", "2.10.0", False)
    claim = side.variant("cuda12.6").claim()  # type: ignore[union-attr]
    assert claim is not None
    assert claim.basis is ToolkitBasis.LABEL


def test_variant_repack_declarations_with_their_pins(corpus: Path) -> None:
    side = read_wheel_side(
        str(corpus / "maint" / "variant-repack" / "torch-2.10_variant_config.toml"), project="torch"
    )
    assert [v.label for v in side.variants] == [
        "cuda12.6",
        "cuda12.8",
        "cuda13.0",
        "xpu",
        "rocm7.0",
        "rocm7.1",
        "null",
    ]
    claim = side.variant("cuda13.0").claim()  # type: ignore[union-attr]
    assert claim is not None
    assert claim.text == "pins nvidia-cublas 13.1.0.3 (conda: libcublas, CUDA 13.0)"
    with pytest.raises(
        ReleaseInputError, match=r"declares several projects \(torch, torchvision\)"
    ):
        read_wheel_side(str(corpus / "maint" / "variant-repack" / "torch-2.10_variant_config.toml"))
    cupy = read_wheel_side(str(corpus / "maint" / "variant-repack" / "cupy_variant_config.toml"))
    claim = cupy.variant("cu12").claim()  # type: ignore[union-attr]
    assert claim is not None
    # one wheel per CUDA major (cupy-cuda12x): any 12.x, never a 12.0 build
    assert (str(claim.cuda), claim.basis, claim.per_major) == ("12", ToolkitBasis.LABEL, True)


def test_scikit_build_core_overrides(tmp_path: Path) -> None:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(
        """\
[project]
name = "skbdemo"
version = "1.0.0"

[[tool.scikit-build.overrides]]
if.env.VARIANT_LABEL = "cu129"
variant = ["nvidia :: cuda_version_lower_bound :: 12.9", "nvidia :: sm_arch :: 90_real"]
variant-label = "cu129"

[[tool.scikit-build.overrides]]
if.env.VARIANT_LABEL = "null"
null-variant = true
"""
    )
    side = read_wheel_side(str(pyproject))
    assert (side.project, side.version) == ("skbdemo", "1.0.0")
    assert [str(v.description) for v in side.variants] == [
        "cu129: nvidia :: cuda_version_lower_bound :: 12.9; nvidia :: sm_arch :: 90_real",
        "null:",
    ]


@pytest.mark.parametrize(
    ("content", "says"),
    [
        (
            "[variant_configs.cu]\nproperties = 3\n",
            r"\[variant_configs.cu\] needs a properties list",
        ),
        ("[tool.other]\nx = 1\n", "expected a wheels folder, an index URL"),
        (
            "[variant_configs.cu]\nvariant_label = 'CU 12'\nproperties = []\n",
            "invalid variant label 'CU 12'",
        ),
    ],
)
def test_bad_declarations(tmp_path: Path, content: str, says: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(content)
    with pytest.raises(ReleaseInputError, match=says):
        read_wheel_side(str(path))


def test_what_is_no_wheel_side(tmp_path: Path) -> None:
    with pytest.raises(ReleaseInputError, match="no such file or folder"):
        read_wheel_side(str(tmp_path / "missing"))
    other = tmp_path / "notes.txt"
    other.write_text("hello")
    with pytest.raises(ReleaseInputError, match="expected a wheels folder, an index URL"):
        read_wheel_side(str(other))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ReleaseInputError, match="no wheels in this directory"):
        read_wheel_side(str(empty))
    shutil.rmtree(empty)
