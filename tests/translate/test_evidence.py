"""Layer 1: a variant's CUDA toolkit from evidence (semantics.md §8), on the real torch shapes.

The variants are the real ``torch-2.9.0-variants.json``; their dependencies are the real
``Requires-Dist`` lines of the torch 2.10 declaration, evaluated per variant for a linux-64
target. Nothing here derives anything from a label.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import tomlkit
from packaging.requirements import Requirement

from variant_bridge.environment import Environment, Source, Toolkit, VirtualPackage
from variant_bridge.markers import VariantValues, evaluate_dependencies, target_environment
from variant_bridge.metadata.model import VariantMetadata
from variant_bridge.metadata.parse import parse_variant_metadata
from variant_bridge.platform_tags import TargetPython
from variant_bridge.properties import VariantDescription
from variant_bridge.ranking import Judgement, Priorities, VariantRanker
from variant_bridge.translate import supported_properties
from variant_bridge.translate.evidence import (
    CudaVersion,
    EvidenceKind,
    ToolkitEvidence,
    judge_toolkit,
    toolkit_bound,
    toolkit_evidence,
)
from variant_bridge.translate.supported import SupportedProperties

LINUX = target_environment(Environment("linux-64"), TargetPython.parse("3.12.4"))


@pytest.fixture(scope="module")
def torch(corpus: Path) -> VariantMetadata:
    path = corpus / "real/variants-index-test/v0.0.3/torch/torch-2.9.0-variants.json"
    return parse_variant_metadata(json.loads(path.read_text()), source=str(path))


@pytest.fixture(scope="module")
def lines(corpus: Path) -> list[str]:
    config = tomlkit.parse(
        (corpus / "maint/variant-repack/torch-2.10_variant_config.toml").read_text()
    )
    return [str(x) for x in config["metadata_configs"]["torch"]["deps_add_list"]]  # type: ignore[index,union-attr]


def evidence_of(variant: VariantDescription, lines: list[str]) -> ToolkitEvidence:
    applying = evaluate_dependencies(lines, LINUX, VariantValues.of(variant)).applying
    return toolkit_evidence(variant, [d.requirement for d in applying])


def env(*, driver: str, toolkit: str | None, arch: str = "9.0") -> Environment:
    source = Source.DETECTED
    return Environment(
        "linux-64",
        (
            VirtualPackage("__cuda", driver, "0", source),
            VirtualPackage("__cuda_arch", arch, "0", source),
        ),
        Toolkit("cuda-version", toolkit, Source.PREFIX) if toolkit else None,
    )


@pytest.mark.parametrize(
    ("label", "toolkit", "strongest"),
    [
        ("cuda12.6", "12.6", "pins nvidia-cublas 12.6.4.1 (conda: libcublas, CUDA 12.6)"),
        ("cuda12.8", "12.8", "pins nvidia-cublas 12.8.4.1 (conda: libcublas, CUDA 12.8)"),
        ("cuda13.0", "13.0", "pins nvidia-cublas 13.1.0.3 (conda: libcublas, CUDA 13.0)"),
    ],
)
def test_the_pins_say_each_builds_toolkit(
    torch: VariantMetadata, lines: list[str], label: str, toolkit: str, strongest: str
) -> None:
    variant = torch.variant(label)
    assert variant is not None
    found = evidence_of(variant, lines)
    assert str(found.toolkit) == toolkit
    assert found.strongest is not None
    assert found.strongest.text == strongest
    assert found.gaps == ()
    kinds = {e.kind for e in found.evidence}
    assert kinds == {EvidenceKind.LOWER_BOUND, EvidenceKind.PINNED_COMPONENT}
    # Every versioned component agrees (cuDNN, NCCL... say nothing and are not evidence).
    pinned = {str(e.cuda) for e in found.evidence if e.kind is EvidenceKind.PINNED_COMPONENT}
    assert pinned == {toolkit}
    assert not any(e.pypi == "nvidia-cudnn" for e in found.evidence)


@pytest.mark.parametrize("label", ["xpu", "rocm6.3", "null"])
def test_builds_without_cuda_have_no_evidence(
    torch: VariantMetadata, lines: list[str], label: str
) -> None:
    variant = torch.variant(label)
    assert variant is not None
    found = evidence_of(variant, lines)
    assert (found.evidence, found.toolkit) == ((), None)
    assert found.summary().startswith("CUDA toolkit unknown")


def judged(
    torch: VariantMetadata, lines: list[str], environment: Environment
) -> dict[str, str | None]:
    bound = toolkit_bound(supported_properties(environment))
    return {
        v.label: judge_toolkit(evidence_of(v, lines), bound)
        for v in torch.variants
        if v.label.startswith("cuda")
    }


def test_the_toolkit_policy_names_the_evidence(torch: VariantMetadata, lines: list[str]) -> None:
    verdicts = judged(torch, lines, env(driver="12.9", toolkit="12.6"))
    assert verdicts["cuda12.6"] is None
    assert verdicts["cuda12.8"] == (
        "cuda12.8 pins nvidia-cublas 12.8.4.1 (conda: libcublas, CUDA 12.8) but the prefix's "
        "toolkit is cuda-version 12.6"
    )
    assert verdicts["cuda13.0"] == (
        "cuda13.0 pins nvidia-cublas 13.1.0.3 (conda: libcublas, CUDA 13.0) but the prefix's "
        "toolkit is cuda-version 12.6 (CUDA 12)"
    )


def test_a_newer_toolkit_of_the_same_major_accepts_both_12_builds(
    torch: VariantMetadata, lines: list[str]
) -> None:
    verdicts = judged(torch, lines, env(driver="12.9", toolkit="12.9"))
    assert (verdicts["cuda12.6"], verdicts["cuda12.8"]) == (None, None)
    assert verdicts["cuda13.0"] is not None


def test_the_driver_policy_judges_nothing(torch: VariantMetadata, lines: list[str]) -> None:
    assert set(judged(torch, lines, env(driver="12.9", toolkit=None)).values()) == {None}


@pytest.mark.parametrize(
    ("toolkit", "driver", "chosen"),
    [("12.6", "12.9", "cuda12.6"), ("12.8", "12.9", "cuda12.8"), ("12.9", "12.9", "cuda12.8"),
     ("13.0", "13.0", "cuda13.0"), (None, "12.9", "cuda12.8"), (None, "13.0", "cuda13.0")],
)  # fmt: skip
def test_ranking_with_the_evidence_judge(
    torch: VariantMetadata, lines: list[str], toolkit: str | None, driver: str, chosen: str
) -> None:
    supported = supported_properties(env(driver=driver, toolkit=toolkit))
    bound = toolkit_bound(supported)

    def judge(variant: VariantDescription) -> Judgement | None:
        found = evidence_of(variant, lines)
        refused = judge_toolkit(found, bound)
        return Judgement(refused, False) if refused else Judgement(found.summary())

    ranked = VariantRanker(supported, Priorities.of(torch), judge=judge).rank(torch.variants)
    assert ranked[0].label == chosen
    assert "toolkit CUDA" in ranked[0].reason


@pytest.mark.parametrize(
    ("requirement", "said", "gap"),
    [
        ("nvidia-cublas==13.2.0.9", None, "names.yaml has no CUDA release for libcublas 13.2.0.9"),
        ("nvidia-cudnn-cu12==9.1.0.70", CudaVersion(12), None),  # the name says the major
        ("nvidia-cudnn==9.10.2.21", None, None),  # says nothing (published for 12 and 13)
        ("nvidia-cublas-cu12>=12.1", None, None),  # a range is not a pin
        ("nvidia-cuda-runtime==12.8.*", CudaVersion(12, 8), None),  # a prefix pin
        ("torch==2.9.0", None, None),  # not a CUDA component
    ],
)
def test_one_pin(requirement: str, said: CudaVersion | None, gap: str | None) -> None:
    found = toolkit_evidence(VariantDescription.parse("x: a :: b :: c"), [Requirement(requirement)])
    assert found.toolkit == said
    assert found.gaps == ((f"{gap} (pinned as {Requirement(requirement).name})",) if gap else ())


def test_a_major_only_lower_bound_leaves_the_toolkit_unknown() -> None:
    variant = VariantDescription.parse("cu12: nvidia :: cuda_version_lower_bound :: 12")
    found = toolkit_evidence(variant, [])
    assert found.toolkit == CudaVersion(12)
    assert not found.known
    assert found.summary().startswith("CUDA toolkit unknown beyond CUDA 12")


def test_a_precise_lower_bound_is_evidence_on_its_own() -> None:
    variant = VariantDescription.parse("cu128: nvidia :: cuda_version_lower_bound :: 12.8")
    found = toolkit_evidence(variant, [])
    assert found.summary() == (
        "toolkit CUDA 12.8 or newer: declares cuda_version_lower_bound 12.8, no CUDA component pin"
    )
    bound = toolkit_bound(supported_properties(env(driver="12.9", toolkit="12.6")))
    assert judge_toolkit(found, bound) is not None


def test_no_bound_without_the_forward_record() -> None:
    assert toolkit_bound(SupportedProperties()) is None
