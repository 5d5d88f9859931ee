"""The toolkit of a wheel (semantics.md §6.0.1), the rule the commands share: pins, then the label
by a documented convention (toolkits.yaml), then the lower bound; per-major wheels (``cu12``) are
any toolkit of their major. On the real published shapes: torch 2.9.0 (labels ``cuda12.6``...,
lower bounds 12.0, the torch 2.10 declaration's pins), cupy 13.6.0 and cudf 25.12 (``cu12``,
``cuda12``: one wheel per CUDA major), NVIDIA's component wheels (lower bound ``12``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from variant_bridge.metadata.model import VariantMetadata
from variant_bridge.metadata.parse import parse_variant_metadata
from variant_bridge.properties import VariantDescription
from variant_bridge.translate.evidence import (
    CudaVersion,
    ToolkitBasis,
    WheelToolkit,
    toolkit_evidence,
    wheel_toolkit,
)

INDEX = "real/variants-index-test/v0.0.3"


def published(corpus: Path, path: str) -> VariantMetadata:
    file = corpus / INDEX / path
    return parse_variant_metadata(json.loads(file.read_text()), source=str(file))


def of(metadata: VariantMetadata, label: str) -> VariantDescription:
    return next(v for v in metadata.variants if v.label == label)


def test_per_major_wheels_of_cupy_and_cudf(corpus: Path) -> None:
    cupy = published(corpus, "cupy/cupy-13.6.0-variants.json")
    cudf = published(corpus, "cudf/cudf-25.12.0a135-variants.json")
    for description, major in ((of(cupy, "cu12"), 12), (of(cupy, "cu13"), 13),
                               (of(cudf, "cuda12"), 12), (of(cudf, "cuda13"), 13)):  # fmt: skip
        found = wheel_toolkit(description)
        assert found is not None
        assert (found.cuda, found.basis, found.per_major) == (
            CudaVersion(major), ToolkitBasis.LABEL, True,
        )  # fmt: skip
        assert str(found) == f"CUDA {major}.x"
        # beside any toolkit of its major, never only beside 12.0
        assert found.accepts(CudaVersion(major, 0))
        assert found.accepts(CudaVersion(major, 9))
        assert not found.accepts(CudaVersion(major + 1, 0))


def test_a_major_only_lower_bound_is_per_major_too(corpus: Path) -> None:
    runtime = published(corpus, "nvidia-cuda-runtime/nvidia_cuda_runtime-12.9.79-variants.json")
    found = wheel_toolkit(of(runtime, "cu12"))  # lower bound "12"
    assert found is not None
    assert found.per_major


def test_torch_labels_say_the_minor(corpus: Path) -> None:
    torch = published(corpus, "torch/torch-2.9.0-variants.json")
    found = wheel_toolkit(of(torch, "cuda12.8"))  # lower bound 12.0, no pins read
    assert found == WheelToolkit(
        CudaVersion(12, 8), ToolkitBasis.LABEL, "its label 'cuda12.8' says CUDA 12.8"
    )
    assert found.accepts(CudaVersion(12, 9))
    assert not found.accepts(CudaVersion(12, 6))
    assert wheel_toolkit(of(torch, "null")) is None
    assert wheel_toolkit(of(torch, "xpu")) is None


def test_pins_are_stronger_than_the_label() -> None:
    variant = VariantDescription.parse("cuda12.8: nvidia :: cuda_version_lower_bound :: 12.0")
    evidence = toolkit_evidence(variant, [Requirement("nvidia-cublas==12.6.4.1")])
    found = wheel_toolkit(variant, evidence)
    assert found is not None
    assert (found.cuda, found.basis) == (CudaVersion(12, 6), ToolkitBasis.PINS)
    assert found.text == "pins nvidia-cublas 12.6.4.1 (conda: libcublas, CUDA 12.6)"


def test_a_label_is_stronger_than_a_bare_lower_bound() -> None:
    variant = VariantDescription.parse("cu126: nvidia :: cuda_version_lower_bound :: 12.8")
    found = wheel_toolkit(variant)
    assert found is not None
    assert (found.cuda, found.basis) == (CudaVersion(12, 6), ToolkitBasis.LABEL)


def test_a_per_major_label_with_a_precise_floor_is_that_floor() -> None:
    variant = VariantDescription.parse("cu12: nvidia :: cuda_version_lower_bound :: 12.4")
    found = wheel_toolkit(variant)
    assert found is not None
    assert (found.cuda, found.basis, found.per_major) == (
        CudaVersion(12, 4), ToolkitBasis.LOWER_BOUND, False,
    )  # fmt: skip
    assert str(found) == "CUDA 12.4 or newer"
    assert found.text == "declares cuda_version_lower_bound 12.4 (its label 'cu12' says CUDA 12)"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # no convention reads the label: the lower bound is a floor, not a 12.0 build
        ("gpu: nvidia :: cuda_version_lower_bound :: 12.0", (CudaVersion(12, 0), "lower-bound")),
        ("a1b2c3d4: nvidia :: sm_arch :: 90_real", None),
    ],
)
def test_without_a_convention(text: str, expected: tuple[CudaVersion, str] | None) -> None:
    found = wheel_toolkit(VariantDescription.parse(text))
    assert (None if found is None else (found.cuda, found.basis.value)) == expected


def test_a_pin_saying_a_major_only() -> None:
    variant = VariantDescription.parse("gpu: nvidia :: sm_arch :: 90_real")
    evidence = toolkit_evidence(variant, [Requirement("nvidia-cudnn-cu12==9.10.2.21")])
    found = wheel_toolkit(variant, evidence)
    assert found is not None
    assert (found.cuda, found.basis) == (CudaVersion(12), ToolkitBasis.PINS)
