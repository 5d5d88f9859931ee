"""PEP 825 ranking rules, one by one, with hand-built supported properties."""

# Parametrize tables keep one case per line (with the defect it catches), whatever its length.

from __future__ import annotations

import doctest
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

import variant_bridge.ranking
from variant_bridge.metadata.model import Provider, StaticFeature, VariantMetadata
from variant_bridge.properties import VariantDescription, VariantProperty
from variant_bridge.ranking import Explain, Priorities, RankedVariant, VariantRanker
from variant_bridge.translate.supported import SupportedFeature, SupportedProperties

# What a 12.9 driver with a compute-capability 8.6 GPU supports, in the NVIDIA provider's shape.
LOWER = ("12.9", "12.8", "12.7", "12.6", "12.5", "12.4", "12.3", "12.2", "12.1", "12.0", "12")
SM = ("86_real", "85_real", "84_real", "83_real", "82_real", "81_real", "80_real", "80_virtual")
NVIDIA = {"nvidia": {"cuda_version_lower_bound": LOWER, "sm_arch": SM}}
X86 = {"x86_64": {"level": ("v3", "v2", "v1")}}


def supported(
    data: Mapping[str, Mapping[str, Sequence[str]]],
    unsupported: tuple[tuple[str, str], ...] = (),
) -> SupportedProperties:
    return SupportedProperties(SupportedProperties.from_dict(data).features, unsupported)


def rank_variants(
    variants: Sequence[VariantDescription],
    supported: SupportedProperties,
    priorities: Priorities | None = None,
    *,
    explain: Explain | None = None,
) -> tuple[RankedVariant, ...]:
    ranker = VariantRanker(supported, priorities or Priorities(), explain=explain)
    return ranker.rank(variants)


def variants(*texts: str) -> list[VariantDescription]:
    return [VariantDescription.parse(text) for text in texts]


def compatible_labels(ranked: Sequence[RankedVariant]) -> list[str]:
    return [r.label for r in ranked if r.compatible]


def reason_of(ranked: Sequence[RankedVariant], label: str) -> str:
    return next(r.reason for r in ranked if r.label == label)


def test_doctests_pass() -> None:
    assert doctest.testmod(variant_bridge.ranking).failed == 0


# Short synthetic names keep one case per line; the rules do not depend on the names.
NV = {"nv": {"lo": ("12.9", "12.8", "12.6", "12"), "sm": ("86r", "85r", "80r", "80v")}}
NVX = {**NV, "x": {"lvl": ("v3", "v2", "v1")}}
SMFIRST = {"nv": {"sm": NV["nv"]["sm"], "lo": NV["nv"]["lo"]}}


@pytest.mark.parametrize(
    ("texts", "data", "priorities", "expected"),
    [
        (("a: nv :: sm :: 90r; nv :: sm :: 80r",), NV, (), ["a"]),  # values of one feature must be OR-ed
        (("a: nv :: sm :: 90r",), NV, (), []),  # an unsupported value must reject the variant
        (("a: nv :: lo :: 12.6; nv :: sm :: 90r",), NV, (), []),  # features must be AND-ed
        (("a: nv :: sm :: 85r", "b: nv :: sm :: 86r; nv :: sm :: 80r"), NV, (), ["b", "a"]),  # a multi-value feature ranks by its BEST value
        (("a: nv :: lo :: 12.6", "b: nv :: lo :: 12.8"), NV, (), ["b", "a"]),  # a lower value index must win
        (("a: nv :: sm :: 86r", "b: nv :: lo :: 12"), NV, (), ["b", "a"]),  # feature order must outweigh value order
        (("a: nv :: lo :: 12.8", "b: nv :: lo :: 12.8; nv :: sm :: 80v"), NV, (), ["b", "a"]),  # on a prefix tie the LONGER key must win
        (("a: nv :: lo :: 12", "b: nv :: lo :: 12.8; nv :: sm :: 80v"), NV, (), ["b", "a"]),  # no prefix: compare element by element
        (("a: nv :: lo :: 12; nv :: sm :: 86r", "b: nv :: sm :: 85r"), SMFIRST, (), ["a", "b"]),  # a key must list features by priority, not by name
        (("b: nv :: sm :: 86r", "a: nv :: sm :: 86r; nv :: sm :: 80r"), NV, (), ["a", "b"]),  # equal keys: the lower label must win
        (("b2: nv :: sm :: 86r", "b10: nv :: sm :: 86r"), NV, (), ["b10", "b2"]),  # labels compare as strings
        (("null:", "a: nv :: sm :: 80v"), NV, (), ["a", "null"]),  # null must follow every compatible variant
        (("null:", "a: nv :: sm :: 90r"), NV, (), ["null"]),  # null is always compatible
        (("n: nv :: lo :: 12", "x: x :: lvl :: v1"), NVX, (), ["n", "x"]),  # no priorities: supported order decides
        (("n: nv :: lo :: 12", "x: x :: lvl :: v1"), NVX, ("x", "nv"), ["x", "n"]),  # namespace_priorities must come first
        (("n: nv :: lo :: 12", "x: x :: lvl :: v1"), NVX, ("x",), ["x", "n"]),  # unlisted namespaces follow listed ones
        (("n: nv :: lo :: 12", "x: x :: lvl :: v1"), NVX, ("blas", "x"), ["x", "n"]),  # unknown prioritised namespaces are skipped
        (("x: x :: lvl :: v3", "b: blas :: impl :: mkl"), NVX, (), ["x"]),  # a namespace nobody supports rejects
    ],
)  # fmt: skip
def test_rank_order(
    texts: tuple[str, ...],
    data: Mapping[str, Mapping[str, Sequence[str]]],
    priorities: tuple[str, ...],
    expected: list[str],
) -> None:
    ranked = rank_variants(variants(*texts), supported(data), Priorities(priorities))
    assert compatible_labels(ranked) == expected
    assert [r.rank for r in ranked if r.compatible] == list(range(1, len(expected) + 1))
    assert all(r.rank is None for r in ranked if not r.compatible)


def test_incompatible_follow_in_input_order() -> None:
    ranked = rank_variants(
        variants(
            "z: nvidia :: sm_arch :: 90_real", "a: nvidia :: sm_arch :: 80_real", "m: a :: b :: c"
        ),
        supported(NVIDIA),
    )
    assert [(r.label, r.compatible) for r in ranked] == [("a", True), ("z", False), ("m", False)]


@pytest.mark.parametrize(
    ("text", "sp", "expected"),
    [
        ("a: nvidia :: cuda_version_lower_bound :: 13.0", supported(NVIDIA), "needs nvidia :: cuda_version_lower_bound :: 13.0; supported: 12.9, 12.8, 12.7, ..., 12"),  # must name the feature and the supported values
        ("a: nvidia :: sm_arch :: 90_real; nvidia :: sm_arch :: 100_real", supported(NVIDIA), "needs nvidia :: sm_arch :: 100_real or 90_real; supported: 86_real, 85_real, 84_real, ..., 80_virtual"),  # OR-ed values must all be named
        ("a: x86_64 :: level :: v4", supported(X86), "needs x86_64 :: level :: v4; supported: v3, v2, v1"),  # short lists are shown in full
        ("a: nvidia :: sm_arch :: 90_real", supported(X86, (("nvidia", "no __cuda: no NVIDIA driver detected"),)), "needs nvidia :: sm_arch :: 90_real, but nvidia is not supported: no __cuda: no NVIDIA driver detected"),  # an unsupported namespace must give its reason
        ("a: nvidia :: cuda_version_lower_bound :: 12.6; nvidia :: sm_arch :: 90_real", supported(X86, (("nvidia", "no __cuda: no NVIDIA driver detected"),)), "needs nvidia :: cuda_version_lower_bound :: 12.6, but nvidia is not supported: no __cuda: no NVIDIA driver detected"),  # a wholly unsupported namespace must be explained once, not per feature
        ("a: blas :: impl :: mkl", supported(X86), "needs blas :: impl :: mkl, but no provider supports the blas namespace"),  # an unknown namespace must be said so
        ("a: x86_64 :: avx512f :: on", supported(X86), "needs x86_64 :: avx512f :: on, but x86_64 :: avx512f has no supported value (supported x86_64 features: level)"),  # an unknown feature must be said so
        ("a: x86_64 :: level :: v4; nvidia :: sm_arch :: 90_real", supported({**NVIDIA, **X86}), "needs nvidia :: sm_arch :: 90_real; supported: 86_real, 85_real, 84_real, ..., 80_virtual; needs x86_64 :: level :: v4; supported: v3, v2, v1"),  # every failing feature must be listed
    ],
)  # fmt: skip
def test_incompatible_reason(text: str, sp: SupportedProperties, expected: str) -> None:
    (ranked,) = rank_variants(variants(text), sp)
    assert (ranked.compatible, ranked.rank, ranked.reason) == (False, None, expected)


def test_reason_names_the_source_of_supported_values() -> None:
    sp = SupportedProperties(
        (
            SupportedFeature(
                "nvidia", "cuda_version_lower_bound", ("12.6", "12"), "cuda-version 12.6"
            ),
        )
    )
    (ranked,) = rank_variants(variants("cu128: nvidia :: cuda_version_lower_bound :: 12.8"), sp)
    assert ranked.reason == (
        "needs nvidia :: cuda_version_lower_bound :: 12.8; supported (from cuda-version 12.6): 12.6, 12"
    )


def _explain(prop: VariantProperty) -> str | None:
    if prop.feature == "cuda_version_lower_bound":
        return f"needs cuda_version_lower_bound {prop.value} but the prefix's toolkit is cuda-version 12.6"
    return None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("cu128: nvidia :: cuda_version_lower_bound :: 13.0", "needs cuda_version_lower_bound 13.0 but the prefix's toolkit is cuda-version 12.6"),  # the caller's words must replace the generic text
        ("sm90: nvidia :: sm_arch :: 90_real", "needs nvidia :: sm_arch :: 90_real; supported: 86_real, 85_real, 84_real, ..., 80_virtual"),  # explain() returning None must fall back to the generic text
        ("both: nvidia :: cuda_version_lower_bound :: 13.0; nvidia :: cuda_version_lower_bound :: 13.1", "needs cuda_version_lower_bound 13.0 but the prefix's toolkit is cuda-version 12.6; needs cuda_version_lower_bound 13.1 but the prefix's toolkit is cuda-version 12.6"),  # every OR-ed value must be explained
    ],
)  # fmt: skip
def test_explain_callback(text: str, expected: str) -> None:
    (ranked,) = rank_variants(variants(text), supported(NVIDIA), explain=_explain)
    assert ranked.reason == expected


@pytest.mark.parametrize(
    ("texts", "label", "expected"),
    [
        (("a: nvidia :: cuda_version_lower_bound :: 12.6",), "a", "rank 1: nvidia :: cuda_version_lower_bound :: 12.6 (4th preferred value)"),  # compatible reasons must say which value matched and how preferred it is
        (("a: nvidia :: cuda_version_lower_bound :: 12.9; nvidia :: sm_arch :: 80_real; nvidia :: sm_arch :: 82_real",), "a", "rank 1: nvidia :: cuda_version_lower_bound :: 12.9 (most preferred value), nvidia :: sm_arch :: 82_real (5th preferred value)"),  # each feature's best value, in priority order
        (("b: nvidia :: sm_arch :: 86_real", "a: nvidia :: sm_arch :: 86_real"), "b", "rank 2: nvidia :: sm_arch :: 86_real (most preferred value) (same priority as 'a', which sorts first by label)"),  # a label tie-break must be explained
        (("null:",), "null", "rank 1: null variant: no other variant is compatible"),  # null winning must say why
        (("null:", "a: nvidia :: sm_arch :: 86_real"), "null", "rank 2: null variant: always compatible, ranked after the other compatible variants"),  # null after variants
    ],
)  # fmt: skip
def test_compatible_reason(texts: tuple[str, ...], label: str, expected: str) -> None:
    assert reason_of(rank_variants(variants(*texts), supported(NVIDIA)), label) == expected


def test_matched_narrows_to_supported_values() -> None:
    (ranked,) = rank_variants(
        variants("a: nvidia :: sm_arch :: 80_real; nvidia :: sm_arch :: 90_real"), supported(NVIDIA)
    )
    assert [str(p) for p in ranked.matched] == ["nvidia :: sm_arch :: 80_real"]


BLAS = Provider("blas", static_properties=(StaticFeature("impl", ("openblas", "mkl")),))
BLAS_TWO = Provider(
    "blas",
    static_properties=(
        StaticFeature("threads", ("openmp", "serial")),
        StaticFeature("impl", ("mkl",)),
    ),
)


@pytest.mark.parametrize(
    ("texts", "sp", "static", "priorities", "expected"),
    [
        (("m: blas :: impl :: mkl", "o: blas :: impl :: openblas"), supported(X86), (BLAS,), (), ["o", "m"]),  # static values must be supported, in their order
        (("m: blas :: impl :: mkl", "x: x86_64 :: level :: v1"), supported(X86), (BLAS,), ("blas", "x86_64"), ["m", "x"]),  # a static namespace must follow namespace_priorities
        (("m: blas :: impl :: mkl", "x: x86_64 :: level :: v1"), supported(X86), (BLAS,), (), ["x", "m"]),  # unlisted static namespaces come after the bridged ones
        (("m: blas :: impl :: mkl", "s: blas :: threads :: serial"), supported(X86), (BLAS_TWO,), (), ["s", "m"]),  # static feature order (feature-order) must rank features
        (("m: blas :: impl :: mkl",), supported(X86, (("blas", "no mapping for namespace blas"),)), (BLAS,), (), ["m"]),  # static properties must override an "unsupported" entry
        (("m: blas :: impl :: mkl", "o: blas :: impl :: openblas"), supported({"blas": {"impl": ("mkl",)}}), (BLAS,), (), ["m"]),  # the caller's own supported features must win over static ones
        (("m: blas :: impl :: mkl",), supported(X86), (Provider("blas", requires=("blas-provider",)),), (), []),  # a plugin provider must not be treated as static
    ],
)  # fmt: skip
def test_static_providers(
    texts: tuple[str, ...],
    sp: SupportedProperties,
    static: tuple[Provider, ...],
    priorities: tuple[str, ...],
    expected: list[str],
) -> None:
    ranked = rank_variants(variants(*texts), sp, Priorities(priorities, static))
    assert compatible_labels(ranked) == expected


def test_static_reason_names_the_metadata() -> None:
    (ranked,) = rank_variants(
        variants("a: blas :: impl :: acml"), supported(X86), Priorities(providers=(BLAS,))
    )
    assert ranked.reason == (
        "needs blas :: impl :: acml; supported (from static properties in the package's variant "
        "metadata): openblas, mkl"
    )


@pytest.mark.parametrize(
    ("feature_priorities", "property_priorities", "expected"),
    [
        ((), (), ["lower", "sm86", "sm80"]),  # without priorities the supported order must rule
        ({"nvidia": ["sm_arch"]}, (), ["sm86", "sm80", "lower"]),  # feature priorities must come first within the namespace
        ((("nvidia", ("sm_arch",)),), (), ["sm86", "sm80", "lower"]),  # VariantMetadata's tuple shape must be accepted
        ({"nvidia": ["sm_arch"]}, (("nvidia", "sm_arch", ("80_real",)),), ["sm80", "sm86", "lower"]),  # property priorities must reorder values
        ((), (("nvidia", "sm_arch", ("90_real", "80_real")),), ["lower", "sm80", "sm86"]),  # a prioritised unsupported value must not make anything compatible
    ],
)  # fmt: skip
def test_feature_and_property_priorities(
    feature_priorities: Any, property_priorities: Any, expected: list[str]
) -> None:
    ranked = rank_variants(
        variants(
            "sm80: nvidia :: sm_arch :: 80_real",
            "sm86: nvidia :: sm_arch :: 86_real",
            "lower: nvidia :: cuda_version_lower_bound :: 12",
            "sm90: nvidia :: sm_arch :: 90_real",
        ),
        supported(NVIDIA),
        Priorities(features=feature_priorities, properties=property_priorities),
    )
    assert compatible_labels(ranked) == expected


def test_priorities_of_metadata_use_its_priorities_and_static_providers() -> None:
    metadata = VariantMetadata(
        dialect="pep850",
        schema=None,
        variants=tuple(
            variants(
                "null:",
                "mkl: blas :: impl :: mkl",
                "cu129: nvidia :: cuda_version_lower_bound :: 12.9",
                "sm80: nvidia :: sm_arch :: 80_real",
            )
        ),
        namespace_priorities=("blas", "nvidia"),
        providers=(BLAS, Provider("nvidia", requires=("nvidia-variant-provider",))),
        feature_priorities=(("nvidia", ("sm_arch",)),),
    )
    ranked = rank_variants(metadata.variants, supported(NVIDIA), Priorities.of(metadata))
    assert compatible_labels(ranked) == ["mkl", "sm80", "cu129", "null"]


def test_each_variant_is_assessed_once() -> None:
    ranker = VariantRanker(supported(NVIDIA))
    (sm80,) = variants("sm80: nvidia :: sm_arch :: 80_real")
    first = ranker.assess(sm80)
    assert ranker.assess(sm80) is first
    assert ranker.rank([sm80])[0].reason == f"rank 1: {first.detail}"
    (other,) = variants("sm80: nvidia :: sm_arch :: 90_real")  # the same label, other properties
    assert not ranker.assess(other).compatible


def test_same_explanation_is_said_once() -> None:
    (ranked,) = rank_variants(
        variants("a: nvidia :: cuda_version_lower_bound :: 13.0; nvidia :: sm_arch :: 90_real"),
        supported(NVIDIA),
        explain=lambda prop: "the GPU driver is too old",
    )
    assert ranked.reason == "the GPU driver is too old"  # not once per failing feature
