"""A cluster: the torch world (real torch 2.9.0 and torchvision 0.24.0 variant metadata) and a
targets file naming four classes of nodes, an NVIDIA H100, an AMD MI300, an Intel GPU (Ponte
Vecchio) and one without a GPU (docs/clusters.md). torchvision is
:func:`tests.worlds.torch_index.add_torchvision`'s.
"""

from __future__ import annotations

from pathlib import Path

from tests.worlds.torch_index import add_torchvision, build_torch_index

__all__ = ["CLASSES", "build_cluster", "write_targets"]

CLASSES = """\
# A login node without a GPU locks for four kinds of compute nodes.
classes:
  h100:
    platform: linux-64
    cuda: "12.8"
    cuda_arch: "9.0"
    archspec: sapphirerapids
    cuda_version: "12.6"
  mi300:
    platform: linux-64
    amdgpu_arch: gfx942
    rocm_version: "6.4"
    archspec: zen4
  pvc:
    platform: linux-64
    device_ip: ["12.60.7"]
    archspec: sapphirerapids
  cpu:
    platform: linux-64
    archspec: zen3
"""
"""The targets file of the cluster (the classes every test of it uses)."""


def write_targets(directory: Path, text: str = CLASSES) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "nodes.yaml"
    path.write_text(text)
    return path


def build_cluster(corpus: Path, root: Path) -> tuple[Path, Path]:
    """``root/wheels`` (torch and torchvision) and ``root/nodes.yaml``."""
    wheels = add_torchvision(corpus, build_torch_index(corpus, root / "wheels"))
    return wheels, write_targets(root)
