"""``select --targets``: one choice per node class, side by side, from a machine with no GPU, on the
real torch 2.9.0 variant metadata (docs/clusters.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import Cli, run_script
from tests.worlds.cluster import build_cluster, write_targets
from tests.worlds.wheels import make_wheel


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> tuple[Path, Path]:
    return build_cluster(corpus, tmp_path_factory.mktemp("cluster"))


def test_each_package_lists_every_class_side_by_side(
    cli: Cli, cluster: tuple[Path, Path], tmp_path: Path
) -> None:
    wheels, nodes = cluster
    result = cli("select", "torch", "-f", str(wheels), "--targets", str(nodes),
                 "--python", "3.12", "--cache-dir", str(tmp_path))  # fmt: skip
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"Node classes of {nodes}")
    assert any(
        line.split() == ["mi300", "linux-64:", "__amdgpu=0,", "__amdgpu_arch=9.4.2,",
                         "__archspec=1=zen4,", "rocm=6.4;", "Python", "3.12", "(--python)"]
        for line in lines
    )  # fmt: skip
    section = lines[lines.index("torch 2.9.0") + 1 :][:8]
    chosen = {line.split()[0]: line.split()[1] for line in section[::2]}
    assert chosen == {
        "h100": "torch-2.9.0-py3-none-any-cuda12.6.whl",
        "mi300": "torch-2.9.0-py3-none-any-rocm6.4.whl",
        "pvc": "torch-2.9.0-py3-none-any-xpu.whl",
        "cpu": "torch-2.9.0-py3-none-any-null.whl",
    }
    reasons = [line.strip() for line in section[1::2]]
    assert reasons[1].startswith("rank 1: variant rocm6.4: amd :: gfx_arch :: gfx942")
    assert reasons[3].startswith("rank 1: null variant")
    # the packages without variants: which classes' trees hold them
    assert "  nvidia_cublas-12.6.4.1-py3-none-any.whl  (h100)" in lines
    assert "  triton_rocm-3.6.0-py3-none-any.whl  (mi300)" in lines


def test_json_has_each_class_with_selects_shape(
    cli: Cli, cluster: tuple[Path, Path], tmp_path: Path
) -> None:
    wheels, nodes = cluster
    result = cli("select", "torch", "torchvision", "-f", str(wheels), "--targets", str(nodes),
                 "--python", "3.12", "--cache-dir", str(tmp_path), "--json")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["targets_file"] == str(nodes)
    assert [c["name"] for c in data["classes"]] == ["h100", "mi300", "pvc", "cpu"]
    mi300 = data["classes"][1]
    assert mi300["platform"] == "linux-64"
    assert "__amdgpu_arch=9.4.2" in mi300["declared"]
    assert mi300["python"] == "3.12"
    picked = {c["package"]: c["selected"]["label"] for c in mi300["choices"]}
    assert picked["torch"] == picked["torchvision"] == "rocm6.4"
    assert set(mi300["choices"][0]) >= {"package", "verdict", "reason", "selected", "candidates"}


def test_options_of_one_environment_are_a_usage_error(cli: Cli, cluster: tuple[Path, Path]) -> None:
    wheels, nodes = cluster
    for option in (("--prefix", "/opt/env"), ("--platform", "linux-64"), ("-t", "cuda=12.8")):
        result = cli("select", "torch", "-f", str(wheels), "--targets", str(nodes),
                     "--python", "3.12", *option)  # fmt: skip
        assert result.exit_code == 2, result.output
        long = {"-t": "--target"}.get(option[0], option[0])
        assert f"--targets describes each class itself; it cannot be combined with {long}" in (
            result.stderr
        )


def test_a_bad_file_is_one_line_naming_the_class_and_key(
    cluster: tuple[Path, Path], tmp_path: Path
) -> None:
    wheels, _ = cluster
    nodes = write_targets(tmp_path, "classes:\n  h100: {platform: linux-64, gpu: '9.0'}\n")
    done = run_script("select", "torch", "-f", str(wheels), "--targets", str(nodes),
                      "--python", "3.12")  # fmt: skip
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr.startswith(f"error: {nodes}: class 'h100': unknown key 'gpu'")
    assert len(done.stderr.splitlines()) == 1


def test_a_class_without_a_compatible_wheel_fails_the_command(cli: Cli, tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    make_wheel(wheels, "gpuonly", "1.0", label="cu128",
               properties=["nvidia :: cuda_version_lower_bound :: 12.8"])  # fmt: skip
    nodes = write_targets(
        tmp_path,
        "classes:\n"
        "  h100: {platform: linux-64, cuda: '12.8', cuda_arch: '9.0'}\n"
        "  cpu: {platform: linux-64}\n",
    )
    result = cli("select", "gpuonly", "-f", str(wheels), "--targets", str(nodes),
                 "--python", "3.12", "--cache-dir", str(tmp_path / "cache"))  # fmt: skip
    assert result.exit_code == 1
    assert "  h100  gpuonly-1.0-py3-none-any-cu128.whl" in result.stdout
    assert "  cpu   no compatible wheel" in result.stdout
    assert result.stderr.strip().splitlines()[-1] == (
        "error: no compatible wheel for gpuonly 1.0 in class 'cpu' (each file's reason is "
        "listed above)"
    )
