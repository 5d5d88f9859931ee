"""Targets files: a cluster's node classes, read and checked once (docs/clusters.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from variant_bridge.detect.targets_file import (
    MAX_BYTES,
    node_environments,
    read_targets_file,
)
from variant_bridge.environment import Source
from variant_bridge.errors import InvalidTarget
from variant_bridge.metadata import parse_variant_metadata
from variant_bridge.ranking import Priorities, VariantRanker
from variant_bridge.translate import explain_unsupported, supported_properties

CLUSTER = """\
# Login node without a GPU; three kinds of compute nodes.
classes:
  h100:
    platform: linux-64
    cuda: "12.8"
    cuda_arch: "9.0"
    archspec: sapphirerapids
    glibc: "2.28"
    cuda-version: "12.6"
  mixed:
    platform: linux-64
    cuda: "12.8"
    cuda_arch: ["6.0", "12.0"]
    glibc: "2.28"
  mi300:
    platform: linux-64
    amdgpu_arch: gfx942
    rocm_version: "6.4"
    archspec: zen4
  pvc:
    platform: linux-64
    device_ip: ["12.60.7"]
"""
TORCH = "real/variants-index-test/v0.0.3/torch/torch-2.9.0-variants.json"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "nodes.yaml"
    path.write_text(text)
    return path


def test_each_class_is_one_declared_environment(tmp_path: Path) -> None:
    targets = read_targets_file(write(tmp_path, CLUSTER))
    classes = {node.name: env for node, env in node_environments(targets)}
    assert list(classes) == ["h100", "mixed", "mi300", "pvc"]
    h100 = classes["h100"]
    assert str(h100.toolkit) == "cuda-version=12.6"
    assert h100.cuda is not None
    assert h100.cuda.source == Source.TARGET
    # nothing of this machine: the rest are pixi's platform defaults
    assert {str(vp.source) for vp in h100.virtual_packages} == {"--target", "platform default"}
    assert [g.version for g in classes["mixed"].gpus] == ["6.0", "12.0"]
    assert classes["mi300"].rocm is not None
    assert classes["mi300"].rocm.version == "6.4"
    assert classes["pvc"].declared_features[0].values == ("12.60.7",)


def test_one_file_gives_each_class_its_torch_build(tmp_path: Path, corpus: Path) -> None:
    """The real torch metadata, ranked for each class of one targets file."""
    metadata = parse_variant_metadata(json.loads((corpus / TORCH).read_text()), source=TORCH)
    chosen = {}
    for node, env in node_environments(read_targets_file(write(tmp_path, CLUSTER))):
        supported = supported_properties(env)
        ranker = VariantRanker(
            supported,
            Priorities.of(metadata),
            explain=lambda p, s=supported: explain_unsupported(p, s),  # type: ignore[misc]
        )
        best = ranker.rank(metadata.variants)[0]
        chosen[node.name] = best.label
    # mixed: no CUDA 12 build has code for both a 6.0 and a 12.0 GPU. h100: by properties alone
    # (both CUDA 12 builds declare lower bound 12.0); select's toolkit evidence, read from the
    # wheels' pins, then prefers cuda12.6 for its cuda-version 12.6.
    assert chosen == {"h100": "cuda12.8", "mixed": "null", "mi300": "rocm6.4", "pvc": "xpu"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            'classes:\n  h100: {platform: linux-64, cuda: "12.8", cuda_version: "13.0"}\n',
            (
                "nodes.yaml: class 'h100', cuda_version '13.0': cuda-version 13.0 constrains "
                "__cuda >=13, so conda could not have solved it beside __cuda=12.8"
            ),
        ),  # the impossible pair
        (
            "classes:\n  h100: {platform: linux-64, gpu: '9.0'}\n",
            "nodes.yaml: class 'h100': unknown key 'gpu' (expected one of cuda, cuda_arch,",
        ),
        (
            "classes:\n  h100: {platform: linux-64, cuda: 12.10}\n",
            "nodes.yaml: class 'h100', cuda: 12.1 is a YAML number; quote it ('12.1')",
        ),  # 12.10 would silently be 12.1
        (
            "classes:\n  h100: {cuda: '12.8'}\n",
            "nodes.yaml: class 'h100': platform missing",
        ),
        (
            "classes:\n  h100: {platform: linux-64, cuda: 'abc'}\n",
            "nodes.yaml: class 'h100', cuda 'abc': expected a CUDA version like 12.8",
        ),
        (
            "classes:\n  h100: {platform: linux-64, cuda_arch: '9.0'}\n",
            "nodes.yaml: class 'h100', cuda_arch '9.0': needs cuda",
        ),
        (
            "classes:\n  m1: {platform: osx-arm64, cuda: '12.8'}\n",
            "nodes.yaml: class 'm1': --target cuda='12.8': __cuda does not exist on osx-arm64",
        ),
        (
            "classes:\n  bad name: {platform: linux-64}\n",
            "nodes.yaml: class name 'bad name': expected letters, digits",
        ),
        ("nodes: {}\n", "nodes.yaml: unknown key 'nodes' (expected: classes)"),
        ("classes: []\n", "nodes.yaml: 'classes' must map class names to their facts"),
        ("[1, 2]\n", "nodes.yaml: expected a mapping with 'classes', got a list"),
        ("classes: {a: [\n", "nodes.yaml: not valid YAML:"),
        (  # an unquoted YAML integer past int()'s 4,300 digits (an internal error in the fuzz run)
            f"classes:\n  mi300: {{platform: linux-64, amdgpu_arch: {'9' * 4983}}}\n",
            "nodes.yaml: not valid YAML: a number longer than 4300 digits",
        ),
    ],
)
def test_bad_files_are_one_error_naming_class_and_key(
    tmp_path: Path, text: str, message: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(InvalidTarget) as info:
        node_environments(read_targets_file(path))
    assert str(info.value).startswith(str(path.parent / message)), str(info.value)


def test_a_huge_file_is_refused_before_it_is_parsed(tmp_path: Path) -> None:
    path = write(tmp_path, "#" * (MAX_BYTES + 1))
    with pytest.raises(InvalidTarget, match="larger than"):
        read_targets_file(path)


def test_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InvalidTarget, match="cannot read the targets file"):
        read_targets_file(tmp_path / "none.yaml")
