"""A cluster: the torch world (real torch 2.9.0 and torchvision 0.24.0 variant metadata) and a
targets file naming four classes of nodes, an NVIDIA H100, an AMD MI300, an Intel GPU (Ponte
Vecchio) and one without a GPU (docs/clusters.md).

torchvision: the real ``torchvision-0.24.0-variants.json`` (the same labels as torch) and one wheel
per label whose ``METADATA`` has torchvision 0.24.0's real ``Requires-Dist`` (``numpy``,
``torch==2.9.0``, ``pillow``), plus plain numpy and pillow wheels.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.worlds.torch_index import INDEX, build_torch_index
from tests.worlds.wheels import make_wheel

__all__ = [
    "CLASSES",
    "TORCHVISION_REQUIRES",
    "add_torchvision_0_24",
    "build_cluster",
    "write_targets",
]

TORCHVISION_VARIANTS = f"{INDEX}/torchvision/torchvision-0.24.0-variants.json"
TORCHVISION_REQUIRES = (
    "numpy",
    "torch==2.9.0",
    "pillow!=8.3.*,>=5.3.0",
    "gdown>=4.7.3; extra == 'gdown'",
    "scipy; extra == 'scipy'",
)
"""torchvision 0.24.0's ``Requires-Dist`` as PyTorch publishes it (the same for every build)."""

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


def add_torchvision_0_24(corpus: Path, root: Path) -> Path:
    """torchvision 0.24.0 beside the torch world in *root* (see the module docstring)."""
    document: dict[str, Any] = json.loads((corpus / TORCHVISION_VARIANTS).read_text())
    (root / "torchvision-0.24.0-variants.json").write_text(json.dumps(document, indent=4))
    for label, properties in document["variants"].items():
        one = {**document, "variants": {label: properties}}
        make_wheel(
            root, "torchvision", "0.24.0", label=label, requires=TORCHVISION_REQUIRES,
            variant_json=json.dumps(one, indent=4),
        )  # fmt: skip
    for name, version in (("numpy", "2.3.4"), ("pillow", "12.0.0")):
        make_wheel(root, name, version)
    return root


def write_targets(directory: Path, text: str = CLASSES) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "nodes.yaml"
    path.write_text(text)
    return path


def build_cluster(corpus: Path, root: Path) -> tuple[Path, Path]:
    """``root/wheels`` (torch and torchvision) and ``root/nodes.yaml``."""
    wheels = add_torchvision_0_24(corpus, build_torch_index(corpus, root / "wheels"))
    return wheels, write_targets(root)
