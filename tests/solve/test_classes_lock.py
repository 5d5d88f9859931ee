"""``solve --targets --write-lock``: one conda solve per node class on the real torch 2.9.0
variant metadata, written as one pixi.lock with a named platform per class and the pixi.toml
beside it declaring the same platforms (docs/clusters.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import tomllib
import yaml

from tests.cli.conftest import Cli
from tests.export.pixi_toml.test_schema import problems
from tests.worlds.channel import Channel, Pkg, base_packages, cuda_packages
from tests.worlds.cluster import build_cluster, write_targets

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, corpus: Path) -> tuple[Path, Path, Path]:
    """The cluster's wheels and targets file, and a channel with python, the CUDA toolkits and
    the ROCm runtime (the ROCm builds of torch require ``rocm-core 6.4.*``)."""
    root = tmp_path_factory.mktemp("cluster")
    wheels, nodes = build_cluster(corpus, root)
    channel = Channel(root / "channel").add(
        [*cuda_packages(("12.6", "12.8")), *base_packages(), Pkg("rocm-core", "6.4.1", "h0_0")]
    )
    return wheels, nodes, channel.path


def solve(world: tuple[Path, Path, Path], lock: Path, *args: str) -> Any:
    wheels, nodes, channel = world
    return Cli()("solve", "torch", "python", "-f", str(wheels), "-c", str(channel),
                 "--targets", str(nodes), "--write-lock", str(lock), *args)  # fmt: skip


def test_one_lock_with_a_named_platform_per_class(
    world: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    lock = tmp_path / "pixi.lock"
    result = solve(world, lock, "--cache-dir", str(tmp_path / "c"), "--json")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert [c["name"] for c in data["classes"]] == ["h100", "mi300", "pvc", "cpu"]
    labels = {c["name"]: [w["label"] for w in c["wheels"] if w["name"] == "torch"] for c in
              data["classes"]}  # fmt: skip
    # the conda solve: h100 the CUDA build of the toolkit it declares (a spec of its solve),
    # mi300 the ROCm build beside the ROCm runtime; intel :: device_ip has no conda
    # counterpart, so pvc gets the null variant, as the class without a GPU
    assert labels == {
        "h100": ["cuda12.6"], "mi300": ["rocm6.4"], "pvc": ["null"], "cpu": ["null"]
    }  # fmt: skip
    h100 = data["classes"][0]
    assert h100["specs"] == ["torch", "python", "cuda-version 12.6.*"]
    assert h100["toolkit"] == "12.6"
    assert data["lockfile"] == str(lock)
    assert data["manifest"] == str(tmp_path / "pixi.toml")

    document = yaml.safe_load(lock.read_text())
    platforms = {p["name"]: p for p in document["platforms"]}
    assert platforms["h100"] == {
        "name": "h100", "subdir": "linux-64",
        "virtual-packages": ["__cuda=12.8", "__cuda_arch=9.0", "__archspec=1=sapphirerapids"],
    }  # fmt: skip
    assert platforms["mi300"]["virtual-packages"] == [
        "__archspec=1=zen4", "__amdgpu=0", "__amdgpu_arch=9.4.2"
    ]  # fmt: skip
    packages = document["environments"]["default"]["packages"]
    mi300 = [next(iter(p.values())) for p in packages["mi300"]]
    assert any("rocm-core-6.4.1" in p for p in mi300)
    assert "./variant-wheels/mi300/torch-2.9.0-py3-none-any.whl" in mi300
    assert not any("nvidia" in p for p in mi300)
    for name in ("h100", "mi300", "pvc", "cpu"):
        assert (tmp_path / "variant-wheels" / name / "torch-2.9.0-py3-none-any.whl").is_file()

    # the manifest beside it declares the same platforms, as pixi's schema wants them
    text = (tmp_path / "pixi.toml").read_text()
    assert problems(text) == []
    manifest = tomllib.loads(text)
    entries = {e["name"]: e for e in manifest["workspace"]["platforms"]}
    assert list(entries) == ["h100", "mi300", "pvc", "cpu"]
    assert entries["h100"]["cuda"] == {"driver": "12.8", "arch": "9.0"}
    assert entries["mi300"]["__amdgpu_arch"] == "9.4.2"
    assert manifest["target"]["mi300"]["dependencies"]["rocm-core"]["version"] == "==6.4.1"
    assert manifest["target"]["mi300"]["pypi-dependencies"]["torch"] == {
        "path": "./variant-wheels/mi300/torch-2.9.0-py3-none-any.whl"
    }


def test_each_class_reads_back_from_the_lock(
    world: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    lock = tmp_path / "pixi.lock"
    assert solve(world, lock, "--cache-dir", str(tmp_path / "c")).exit_code == 0
    cli = Cli()
    detected = cli("detect", "--lockfile", str(lock), "--platform", "mi300", "--json")
    assert detected.exit_code == 0, detected.stderr
    facts = {vp["name"]: vp["version"] for vp in json.loads(detected.stdout)["virtual_packages"]}
    assert facts["__amdgpu_arch"] == "9.4.2"
    exported = cli("export", "--lockfile", str(lock), "--platform", "h100")
    assert exported.exit_code == 0, exported.stderr
    assert "cuda-version=12.6" in exported.stdout
    assert "# from pixi.lock default/h100 (linux-64)." in exported.stdout


def test_again_replaces_its_own_manifest_and_never_a_users(
    world: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    lock = tmp_path / "pixi.lock"
    cache = ("--cache-dir", str(tmp_path / "c"))
    assert solve(world, lock, *cache).exit_code == 0
    first = (tmp_path / "pixi.toml").read_text()
    again = solve(world, lock, *cache)
    assert again.exit_code == 0, again.stderr
    assert (tmp_path / "pixi.toml").read_text() == first

    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "pixi.toml").write_text('[workspace]\nname = "mine"\n')
    refused = solve(world, mine / "pixi.lock", *cache)
    assert refused.exit_code == 1
    assert refused.stderr.startswith(f"error: {mine / 'pixi.toml'} exists: solve --targets")
    assert sorted(p.name for p in mine.iterdir()) == ["pixi.toml"]  # nothing solved or written


def test_wiring_errors(world: tuple[Path, Path, Path], tmp_path: Path) -> None:
    wheels, _, channel = world
    nodes = write_targets(tmp_path, "classes:\n  gpu_a: {platform: linux-64, cuda: '12.8'}\n")
    result = Cli()("solve", "torch", "-f", str(wheels), "-c", str(channel), "--targets",
                   str(nodes), "--write-lock", str(tmp_path / "pixi.lock"))  # fmt: skip
    assert result.exit_code == 1
    assert result.stderr.startswith(f"error: {nodes}: class 'gpu_a' cannot name a pixi platform"), (
        result.stderr
    )
    assert not (tmp_path / "pixi.lock").exists()
    into = solve(world, tmp_path / "x.lock", "--into", str(tmp_path / "env"))
    assert into.exit_code == 2
    assert "--into installs one environment; --targets solves one per class" in into.stderr
    for option in (("--platform", "linux-64"), ("-t", "cuda=12.8")):
        usage = solve(world, tmp_path / "x.lock", *option)
        assert usage.exit_code == 2
        assert "--targets describes each class itself" in usage.stderr


def test_a_variant_wheels_requirements_are_locked_with_its_markers_decided(
    world: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    """torch's real Requires-Dist say ``'nvidia' in variant_namespaces``, which PEP 508 (and
    rattler, reading the lock) has no word for: the lock holds them decided for the build."""
    wheels, _, channel = world
    lock = tmp_path / "pixi.lock"
    result = Cli()("solve", "torch", "python", "-f", str(wheels), "-c", str(channel), "--strict",
                   "--platform", "linux-64", "-t", "cuda=12.8", "-t", "cuda_arch=9.0",
                   "--write-lock", str(lock), "--cache-dir", str(tmp_path / "c"))  # fmt: skip
    assert result.exit_code == 0, result.stderr
    entries = yaml.safe_load(lock.read_text())["packages"]
    torch = next(
        p for p in entries if str(p.get("pypi", "")).endswith("torch-2.9.0-py3-none-any.whl")
    )
    assert "variant_" not in " ".join(torch["requires_dist"])
    assert "triton==3.6.0 ; platform_system == 'Linux'" in torch["requires_dist"]
    assert not any("rocm" in line for line in torch["requires_dist"])
