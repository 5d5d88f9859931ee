"""Hand-made snapshots shared by the pure export tests (no disk, no solver)."""

from __future__ import annotations

from variant_bridge.environment import (
    CondaRecord,
    Environment,
    PythonDistribution,
    Source,
    Toolkit,
    VirtualPackage,
)
from variant_bridge.export.build import build_export
from variant_bridge.export.model import ExportModel
from variant_bridge.export.origins import WheelOrigin
from variant_bridge.properties import VariantDescription

CF = "https://conda.anaconda.org/conda-forge/"
RECORDS = (
    CondaRecord("python", "3.12.7", "h0_0_cpython", channel=CF, depends=("__glibc >=2.17",)),
    CondaRecord(
        "cuda-version",
        "12.6",
        "h0_3",
        subdir="noarch",
        channel=CF,
        constrains=("__cuda >=12", "cudatoolkit 12.6|12.6.*"),
    ),
    CondaRecord(
        "libcublas",
        "12.6.77",
        "h0_0",
        channel=CF,
        depends=("cuda-version >=12.6,<12.7.0a0", "__glibc >=2.17,<3.0.a0"),
    ),
)
HOST = (
    VirtualPackage("__archspec", "1", "haswell", Source.DETECTED),
    VirtualPackage("__cuda", "12.9", "0", Source.override("CONDA_OVERRIDE_CUDA")),
    VirtualPackage("__cuda_arch", "9.0", "0", Source.override("CONDA_OVERRIDE_CUDA_ARCH")),
    VirtualPackage("__glibc", "2.36", "0", Source.DETECTED),
)
TORCH_CU126 = PythonDistribution(
    "torch",
    "2.9.0",
    variant=VariantDescription.parse(
        "cu126: nvidia :: cuda_version_lower_bound :: 12.6; nvidia :: sm_arch :: 90_real"
    ),
    location="/env/lib/python3.12/site-packages/torch-2.9.0.dist-info",
)
TORCH_PTX = PythonDistribution(
    "torch",
    "2.9.0",
    # PTX for 9.0 runs on every newer GPU: a requirement pixi's platforms can state.
    variant=VariantDescription.parse(
        "cu126: nvidia :: cuda_version_lower_bound :: 12.6; nvidia :: sm_arch :: 90_real; "
        "nvidia :: sm_arch :: 90_virtual"
    ),
    location="/env/lib/python3.12/site-packages/torch-2.9.0.dist-info",
)
NUMPY = PythonDistribution("numpy", "2.1.0", location="/env/site-packages/numpy-2.1.0.dist-info")
TORCH_ORIGIN = WheelOrigin(
    "torch",
    "2.9.0",
    "cu126",
    "https://wheels.example/torch-2.9.0-cp312-cp312-linux-cu126.whl",
    "ab" * 32,
    "direct_url.json",
)


def environment(**changes: object) -> Environment:
    base: dict[str, object] = {
        "platform": "linux-64",
        "virtual_packages": HOST,
        "toolkit": Toolkit("cuda-version", "12.6", Source.PREFIX),
        "conda_packages": RECORDS,
        "python_packages": (TORCH_CU126, NUMPY),
        "python": "3.12.7",
        "origin": "prefix /env",
    }
    base.update(changes)
    return Environment(**base)  # type: ignore[arg-type]


def model(**options: object) -> ExportModel:
    """The export of :func:`environment` (torch pinned by URL) with *options*."""
    env_changes = options.pop("env", {})
    assert isinstance(env_changes, dict)
    options.setdefault("origins", (TORCH_ORIGIN,))
    return build_export(environment(**env_changes), name="env", **options)  # type: ignore[arg-type]


def pixi_model(**options: object) -> ExportModel:
    """:func:`model` with a torch wheel whose GPU range pixi can declare (PTX: 9.0 and up)."""
    env_changes = options.pop("env", {})
    assert isinstance(env_changes, dict)
    env_changes.setdefault("python_packages", (TORCH_PTX, NUMPY))
    return model(env=env_changes, **options)
