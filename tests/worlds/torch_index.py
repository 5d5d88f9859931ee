"""A world shaped like the real torch variant index, from real data only.

- ``torch-2.9.0-variants.json``: the real file of wheelnext/variants-index-test (v0.0.3),
  copied verbatim (labels ``cuda12.6``, ``cuda12.8``, ``cuda13.0``, ``rocm6.3``, ``rocm6.4``,
  ``xpu``, ``null``; both CUDA 12 builds declare ``cuda_version_lower_bound :: 12.0``).
- one ``torch-2.9.0-py3-none-any-<label>.whl`` per label, whose ``variant.json`` is that label's
  entry of the real file and whose ``METADATA`` carries the real ``Requires-Dist`` lines of the
  torch 2.10 declaration (wheelnext/variant-repack ``deps_add_list``: ``nvidia-cublas==12.8.4.1;
  platform_system == 'Linux' and variant_label == 'cuda12.8'``...);
- a plain wheel for every ``name==version`` those lines pin (the CUDA component wheels, triton,
  cuda-bindings, the Intel runtime), so an installer can resolve the chosen build's pins;
- with :func:`add_torchvision`: the real ``torchvision-0.24.0-variants.json`` (the same labels;
  both CUDA 12 builds declare lower bound 12.0) and one wheel per label whose ``METADATA`` has
  torchvision 0.24.0's real ``Requires-Dist`` (``numpy``, ``torch==2.9.0``, ``pillow``: no CUDA
  component pin, so only its label says its toolkit), plus plain numpy and pillow wheels.

:func:`~tests.worlds.dialects.uv_readable_document` renders the same variants and priorities in
the dialect uv 0.13.9 reads, for comparing with uv.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import tomlkit

from tests.worlds.dialects import uv_readable_document
from tests.worlds.wheels import make_wheel

__all__ = [
    "TORCHVISION_REQUIRES",
    "TORCH_VARIANTS",
    "add_torchvision",
    "build_torch_index",
    "build_uv_stack",
    "declared_lines",
    "publish_components_as_variants",
    "real_document",
    "uv_readable_document",
]

TORCH_VARIANTS = "real/variants-index-test/v0.0.3/torch/torch-2.9.0-variants.json"
INDEX = "real/variants-index-test/v0.0.3"
TORCHVISION_VARIANTS = f"{INDEX}/torchvision/torchvision-0.24.0-variants.json"
TORCHVISION_REQUIRES = (
    "numpy",
    "torch==2.9.0",
    "pillow!=8.3.*,>=5.3.0",
    "gdown>=4.7.3; extra == 'gdown'",
    "scipy; extra == 'scipy'",
)
"""torchvision 0.24.0's ``Requires-Dist`` as PyTorch publishes it (the same for every build)."""
DECLARATION = "maint/variant-repack/torch-2.10_variant_config.toml"
_PIN_RE = re.compile(r"^\s*(?P<name>[A-Za-z0-9._-]+)==(?P<version>[A-Za-z0-9.]+)\s*;")


def declared_lines(corpus: Path) -> list[str]:
    """The ``Requires-Dist`` lines the torch 2.10 variant wheels were declared with."""
    config = tomlkit.parse((corpus / DECLARATION).read_text())
    return [str(line) for line in config["metadata_configs"]["torch"]["deps_add_list"]]  # type: ignore[index,union-attr]


def real_document(corpus: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((corpus / TORCH_VARIANTS).read_text())
    return document


def build_torch_index(corpus: Path, root: Path, *, tags: str = "py3-none-any") -> Path:
    """Write the torch world into *root* (flat: find-links directory and index alike)."""
    root.mkdir(parents=True, exist_ok=True)
    document = real_document(corpus)
    (root / "torch-2.9.0-variants.json").write_text((corpus / TORCH_VARIANTS).read_text())
    lines = declared_lines(corpus)
    for label, properties in document["variants"].items():
        one = {**document, "variants": {label: properties}}
        make_wheel(
            root, "torch", "2.9.0", label=label, tags=tags, requires=lines,
            variant_json=json.dumps(one, indent=4),
        )  # fmt: skip
    pinned = {(m["name"], m["version"]) for line in lines if (m := _PIN_RE.match(line))}
    for name, version in sorted(pinned):
        make_wheel(root, name, version)
    return root


def add_torchvision(corpus: Path, root: Path, *, labels: tuple[str, ...] | None = None) -> Path:
    """Add torchvision 0.24.0 to the torch world in *root*: the real variants file and a wheel
    per label (only *labels* when given, the file too), and the plain wheels it requires."""
    document: dict[str, Any] = json.loads((corpus / TORCHVISION_VARIANTS).read_text())
    if labels is not None:
        document = {**document, "variants": {k: document["variants"][k] for k in labels}}
    (root / "torchvision-0.24.0-variants.json").write_text(json.dumps(document, indent=4))
    for label, properties in document["variants"].items():
        one = {**document, "variants": {label: properties}}
        make_wheel(
            root, "torchvision", "0.24.0", label=label, requires=TORCHVISION_REQUIRES,
            variant_json=json.dumps(one, indent=4),
        )  # fmt: skip
    for name, version in (("numpy", "2.3.4"), ("pillow", "12.0.0")):
        if not list(root.glob(f"{name}-{version}-*.whl")):
            make_wheel(root, name, version)
    return root


def build_uv_stack(corpus: Path, root: Path) -> Path:
    """torch 2.9.0 and torchvision 0.24.0 as uv 0.13.9 can read them: the same variants and
    priorities in its dialect (``uv_readable_document``), in the ``*-variants.json`` and each
    wheel's ``variant.json``; torchvision requires ``torch==2.9.0`` (and numpy, pillow), torch
    pins nothing (uv refuses variant markers), so only the labels say the toolkits."""
    root.mkdir(parents=True, exist_ok=True)
    for name, version, path, requires in (
        ("torch", "2.9.0", TORCH_VARIANTS, ()),
        ("torchvision", "0.24.0", TORCHVISION_VARIANTS, TORCHVISION_REQUIRES[:3]),
    ):
        document = uv_readable_document(json.loads((corpus / path).read_text()))
        (root / f"{name}-{version}-variants.json").write_text(json.dumps(document, indent=4))
        for label, properties in document["variants"].items():
            one = {**document, "variants": {label: properties}}
            make_wheel(root, name, version, label=label, requires=requires,
                       variant_json=json.dumps(one, indent=4))  # fmt: skip
    for name, version in (("numpy", "2.3.4"), ("pillow", "12.0.0")):
        make_wheel(root, name, version)
    return root


def publish_components_as_variants(corpus: Path, root: Path) -> list[str]:
    """Publish each CUDA component wheel of the world as the real index does: as variants.

    For every plain ``name-version`` wheel in *root* whose real ``*-variants.json`` is in the
    corpus (``nvidia_cublas-12.6.4.1-variants.json``: one ``cu12`` variant, ``nvidia ::
    cuda_version_lower_bound :: 12.0``), the plain wheel is replaced by one wheel per label,
    each carrying that label's entry of the real file, and the real file is copied beside them.

    :returns: the ``name-version`` stems republished.
    """
    done: list[str] = []
    for wheel in sorted(root.glob("*-py3-none-any.whl")):
        stem = wheel.name.split("-py3-")[0]
        name = stem.rsplit("-", 1)[0]
        real = corpus / INDEX / name.replace("_", "-") / f"{stem}-variants.json"
        if not real.is_file():
            continue
        document = json.loads(real.read_text())
        version = stem.rsplit("-", 1)[1]
        wheel.unlink()
        (root / real.name).write_text(real.read_text())
        for label in document["variants"]:
            one = {**document, "variants": {label: document["variants"][label]}}
            make_wheel(root, name.replace("_", "-"), version, label=label,
                       variant_json=json.dumps(one, indent=4))  # fmt: skip
        done.append(stem)
    return done
