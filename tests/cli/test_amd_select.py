"""AMD, Intel, several GPUs and node classes from the command line, on the real torch metadata
(issue 20): what a user types and reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import Cli
from tests.worlds.torch_index import build_torch_index

MI300 = {"CONDA_OVERRIDE_AMDGPU": "0", "CONDA_OVERRIDE_AMDGPU_ARCH": "9.4.2"}


@pytest.fixture(scope="module")
def torch_world(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_torch_index(corpus, tmp_path_factory.mktemp("torch"))


def _select(cli: Cli, world: Path, *args: str, env: dict[str, str] | None = None) -> dict:  # type: ignore[type-arg]
    result = cli(
        "select", "torch==2.9.0", "-f", str(world), "--no-deps", "--python", "3.12", "--json",
        *args, env=env,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    (choice,) = json.loads(result.stdout)
    return choice  # type: ignore[no-any-return]


def test_conda_overrides_of_an_mi300_pick_a_rocm_build_with_the_reason(
    cli: Cli, torch_world: Path
) -> None:
    choice = _select(cli, torch_world, env=MI300)
    assert choice["selected"]["label"] == "rocm6.4"
    (chosen,) = [c for c in choice["candidates"] if c["label"] == "rocm6.4"]
    assert "amd :: gfx_arch :: gfx942 (most preferred value)" in chosen["reason"]


def test_target_gfx_name_and_a_declared_runtime(cli: Cli, torch_world: Path) -> None:
    choice = _select(cli, torch_world, "-t", "amdgpu_arch=gfx942", "-t", "rocm_version=6.3.4")
    assert choice["selected"]["label"] == "rocm6.3"


def test_the_text_report_names_the_reason(cli: Cli, torch_world: Path) -> None:
    result = cli(
        "select", "torch==2.9.0", "-f", str(torch_world), "--no-deps", "--python", "3.12",
        env=MI300,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "torch 2.9.0: torch-2.9.0-py3-none-any-rocm6.4.whl" in result.stdout
    assert "__amdgpu_arch=9.4.2 (CONDA_OVERRIDE_AMDGPU_ARCH)" in result.stdout
    assert "variant xpu: intel :: device_ip has no conda counterpart" in result.stdout


def test_an_unlisted_gpu_falls_back_with_a_warning(cli: Cli, torch_world: Path) -> None:
    env = {"CONDA_OVERRIDE_AMDGPU": "0", "CONDA_OVERRIDE_AMDGPU_ARCH": "11.5.1"}
    result = cli(
        "select", "torch==2.9.0", "-f", str(torch_world), "--no-deps", "--python", "3.12",
        env=env,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "torch 2.9.0: torch-2.9.0-py3-none-any-null.whl" in result.stdout
    assert result.stderr.startswith(
        "warning: torch 2.9.0: no variant has code for this GPU (amd :: gfx_arch :: gfx1151"
    )
    assert "PEP 825 falls back to the null variant" in result.stderr


def test_the_same_warning_for_cuda(cli: Cli, torch_world: Path) -> None:
    env = {"CONDA_OVERRIDE_CUDA": "12.8", "CONDA_OVERRIDE_CUDA_ARCH": "11.0"}
    result = cli(
        "select", "torch==2.9.0", "-f", str(torch_world), "--no-deps", "--python", "3.12",
        env=env,
    )  # fmt: skip
    assert "no variant has code for this GPU (nvidia :: sm_arch :: 110_real" in result.stderr


def test_intel_device_ip_from_target_picks_xpu(cli: Cli, torch_world: Path) -> None:
    choice = _select(cli, torch_world, "-t", "device_ip=12.60.7")
    assert choice["selected"]["label"] == "xpu"


def test_every_gpu_must_run_it(cli: Cli, torch_world: Path) -> None:
    one = _select(cli, torch_world, "-t", "cuda=12.8", "-t", "cuda_arch=6.0")
    assert one["selected"]["label"] == "cuda12.6"
    both = _select(cli, torch_world, "-t", "cuda=12.8", "-t", "cuda_arch=6.0,12.0")
    assert both["selected"]["label"] == "null"
    (refused,) = [c for c in both["candidates"] if c["label"] == "cuda12.6"]
    assert "has no code for __cuda_arch=12.0" in refused["reason"]


NODES = """\
classes:
  h100: {platform: linux-64, cuda: "12.8", cuda_arch: "9.0", cuda_version: "12.6"}
  mi300: {platform: linux-64, amdgpu_arch: gfx942, rocm_version: "6.4"}
"""


def test_detect_targets_text_and_json(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "nodes.yaml"
    path.write_text(NODES)
    text = cli("detect", "--targets", str(path))
    assert text.exit_code == 0, text.output
    assert f"Class h100 ({path}) (linux-64)" in text.stdout
    assert "amd :: gfx_arch :: gfx942" in text.stdout
    assert "ROCm runtime  rocm=6.4  --target" in text.stdout
    data = json.loads(cli("detect", "--targets", str(path), "--json").stdout)
    assert [c["name"] for c in data["classes"]] == ["h100", "mi300"]
    mi300 = data["classes"][1]
    assert mi300["supported"]["amd"] == {"gfx_arch": ["gfx942"], "rocm_version": ["6.4"]}
    assert mi300["rocm"] == {"package": "rocm", "version": "6.4", "source": "--target"}


def test_detect_targets_bad_input(cli: Cli, tmp_path: Path) -> None:
    path = tmp_path / "nodes.yaml"
    path.write_text('classes:\n  h100: {platform: linux-64, cuda: "12.8", cuda_version: "13.0"}\n')
    result = cli("detect", "--targets", str(path))
    assert result.exit_code == 1
    assert result.stderr == (
        f"error: {path}: class 'h100', cuda_version '13.0': cuda-version 13.0 constrains "
        "__cuda >=13, so conda could not have solved it beside __cuda=12.8\n"
    )
    usage = cli("detect", "--targets", str(path), "-t", "cuda=12.8")
    assert usage.exit_code == 2
    assert "--targets describes each class itself" in usage.stderr


def test_env_says_uv_skips_amd(cli: Cli) -> None:
    result = cli("env", env=MI300)
    assert result.exit_code == 0, result.output
    assert "uv 0.13.9 has no amd provider" in result.stderr


def test_torchvision_follows_an_xpu_torch_as_a_build_without_cuda(
    cli: Cli, corpus: Path, tmp_path: Path
) -> None:
    from tests.worlds.torch_index import add_torchvision

    world = add_torchvision(corpus, build_torch_index(corpus, tmp_path / "world"))
    result = cli("select", "torch==2.9.0", "torchvision", "-f", str(world), "--python", "3.12",
                 "-t", "device_ip=12.60.7", "--json")  # fmt: skip
    assert result.exit_code == 0, result.output
    vision = next(c for c in json.loads(result.stdout) if c["package"] == "torchvision")
    (chosen,) = [c for c in vision["candidates"] if c["label"] == "xpu"]
    # an Intel GPU build is no CPU build: what the two share is that neither is a CUDA build
    assert chosen["reason"].endswith("follows torch 2.9.0 xpu (a build without CUDA)")
