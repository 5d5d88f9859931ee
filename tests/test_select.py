"""PEP 825 selection rules, one by one, with hand-built supported properties and wheel names."""

# Parametrize tables keep one case per line (with the defect it catches), whatever its length.

from __future__ import annotations

import doctest
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from packaging.tags import Tag, compatible_tags, cpython_tags

import variant_bridge.select
from variant_bridge.filenames import WheelFilename
from variant_bridge.metadata.model import Provider, StaticFeature, VariantMetadata
from variant_bridge.properties import VariantDescription, VariantProperty
from variant_bridge.select import (
    RankedVariant,
    Selection,
    create_variant_selector,
    rank_metadata,
    rank_variants,
    select_wheel,
)
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


def variants(*texts: str) -> list[VariantDescription]:
    return [VariantDescription.parse(text) for text in texts]


def compatible_labels(ranked: Sequence[RankedVariant]) -> list[str]:
    return [r.label for r in ranked if r.compatible]


def reason_of(ranked: Sequence[RankedVariant], label: str) -> str:
    return next(r.reason for r in ranked if r.label == label)


def test_doctests_pass() -> None:
    assert doctest.testmod(variant_bridge.select).failed == 0


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
    ranked = rank_variants(variants(*texts), supported(data), namespace_priorities=priorities)
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
    ranked = rank_variants(variants(*texts), sp, static=static, namespace_priorities=priorities)
    assert compatible_labels(ranked) == expected


def test_static_reason_names_the_metadata() -> None:
    (ranked,) = rank_variants(variants("a: blas :: impl :: acml"), supported(X86), static=(BLAS,))
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
        feature_priorities=feature_priorities,
        property_priorities=property_priorities,
    )
    assert compatible_labels(ranked) == expected


def test_rank_metadata_uses_its_priorities_and_static_providers() -> None:
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
    ranked = rank_metadata(metadata, supported(NVIDIA))
    assert compatible_labels(ranked) == ["mkl", "sm80", "cu129", "null"]


def test_create_variant_selector_is_generic_over_things() -> None:
    select = create_variant_selector(supported(NVIDIA))
    things = [
        ({"url": "x/null"}, VariantDescription.null()),
        ({"url": "x/sm90"}, VariantDescription.parse("nvidia :: sm_arch :: 90_real")),
        ({"url": "x/sm80"}, VariantDescription.parse("nvidia :: sm_arch :: 80_real")),
    ]
    assert [t["url"] for t in select(things)] == ["x/sm80", "x/null"]


# --- wheels ---------------------------------------------------------------------------------

PLATFORMS = [f"manylinux_2_{minor}_x86_64" for minor in range(28, 16, -1)] + ["linux_x86_64"]
CP312: list[Tag] = [
    *cpython_tags((3, 12), platforms=PLATFORMS),
    *compatible_tags((3, 12), interpreter="cp312", platforms=PLATFORMS),
]
METADATA = {
    v.label: v
    for v in variants(
        "cu129: nvidia :: cuda_version_lower_bound :: 12.9",
        "cu126: nvidia :: cuda_version_lower_bound :: 12.6",
        "cu130: nvidia :: cuda_version_lower_bound :: 13.0",
        "null:",
    )
}


def select(
    names: Sequence[str],
    sp: SupportedProperties | None = None,
    metadata: Mapping[str, VariantDescription] = METADATA,
) -> Selection[str]:
    return select_wheel(
        names,
        filename=WheelFilename.parse,
        variant=lambda name: metadata.get(WheelFilename.parse(name).label or ""),
        supported=supported(NVIDIA) if sp is None else sp,
        tags=CP312,
    )


def verdict_table(
    names: Sequence[str], sp: SupportedProperties | None = None
) -> list[tuple[str, int | None, str]]:
    return [(v.candidate, v.rank, v.reason) for v in select(names, sp).verdicts]


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["t-1.0-cp312-cp312-manylinux_2_28_x86_64-cu126.whl", "t-1.0-cp312-cp312-manylinux_2_17_x86_64-cu129.whl"], "t-1.0-cp312-cp312-manylinux_2_17_x86_64-cu129.whl"),  # variant order must beat tag order
        (["t-1.0-cp312-cp312-manylinux_2_17_x86_64-cu129.whl", "t-1.0-cp312-cp312-manylinux_2_28_x86_64-cu129.whl"], "t-1.0-cp312-cp312-manylinux_2_28_x86_64-cu129.whl"),  # within a label the better tag must win
        (["t-1.0-1-cp312-cp312-manylinux_2_28_x86_64-cu129.whl", "t-1.0-2-cp312-cp312-manylinux_2_28_x86_64-cu129.whl"], "t-1.0-2-cp312-cp312-manylinux_2_28_x86_64-cu129.whl"),  # same tag: the higher build number must win
        (["t-1.0-10-cp312-cp312-manylinux_2_28_x86_64-cu129.whl", "t-1.0-9-cp312-cp312-manylinux_2_28_x86_64-cu129.whl"], "t-1.0-10-cp312-cp312-manylinux_2_28_x86_64-cu129.whl"),  # build numbers compare as numbers
        (["t-1.0-2-cp312-cp312-manylinux_2_17_x86_64-cu129.whl", "t-1.0-1-cp312-cp312-manylinux_2_28_x86_64-cu129.whl"], "t-1.0-1-cp312-cp312-manylinux_2_28_x86_64-cu129.whl"),  # the tag must outweigh the build number
        (["t-1.0-py3-none-any.whl", "t-1.0-py3-none-any-null.whl", "t-1.0-cp312-cp312-manylinux_2_17_x86_64-cu126.whl"], "t-1.0-cp312-cp312-manylinux_2_17_x86_64-cu126.whl"),  # a compatible variant must beat null and non-variant
        (["t-1.0-cp312-cp312-manylinux_2_28_x86_64.whl", "t-1.0-py3-none-any-null.whl", "t-1.0-cp312-cp312-manylinux_2_28_x86_64-cu130.whl"], "t-1.0-py3-none-any-null.whl"),  # null must beat the non-variant wheel even with a worse tag
        (["t-1.0-py3-none-any.whl", "t-1.0-cp312-cp312-manylinux_2_28_x86_64.whl"], "t-1.0-cp312-cp312-manylinux_2_28_x86_64.whl"),  # among non-variant wheels the better tag must win
        (["t-1.0-cp313-cp313-manylinux_2_28_x86_64-cu129.whl", "t-1.0-cp312-cp312-manylinux_2_28_x86_64-cu126.whl"], "t-1.0-cp312-cp312-manylinux_2_28_x86_64-cu126.whl"),  # tags must filter before variants rank
        (["t-1.0-cp312-cp312-manylinux_2_28_x86_64-cu999.whl", "t-1.0-py3-none-any.whl"], "t-1.0-py3-none-any.whl"),  # an unknown label must be incompatible
        (["t-1.0-cp312-cp312-manylinux_2_28_x86_64-cu130.whl"], None),  # nothing compatible: nothing selected
        (["t-1.0-py3-none-any-null.whl", "t-1.0-py3-none-any.whl"], "t-1.0-py3-none-any-null.whl"),  # a null wheel needs no metadata entry
        ([], None),  # no candidates: nothing selected
    ],
)  # fmt: skip
def test_select_wheel_choice(names: list[str], expected: str | None) -> None:
    selection = select(names)
    assert select(names, metadata={k: v for k, v in METADATA.items() if k != "null"}) == selection
    assert selection.selected == expected
    assert len(selection.verdicts) == len(names)
    chosen = selection.chosen
    assert (chosen.candidate if chosen else None) == expected


def test_verdicts_give_every_candidate_a_rank_and_reason() -> None:
    names = [
        "t-1.0-cp312-cp312-manylinux_2_28_x86_64.whl",
        "t-1.0-cp313-cp313-manylinux_2_28_x86_64-cu129.whl",
        "t-1.0-py3-none-any-null.whl",
        "t-1.0-cp312-cp312-manylinux_2_34_x86_64-cu129.whl",
        "t-1.0-cp312-cp312-manylinux_2_28_x86_64-cu130.whl",
        "t-1.0-cp312-cp312-manylinux_2_17_x86_64-cu126.whl",
        "t-1.0-cp312-cp312-manylinux_2_28_x86_64-cu999.whl",
        "t-1.0-cp312-cp312-win_amd64.whl",
    ]
    assert verdict_table(names) == [
        ("t-1.0-cp312-cp312-manylinux_2_17_x86_64-cu126.whl", 1, "rank 1: variant cu126: nvidia :: cuda_version_lower_bound :: 12.6 (4th preferred value)"),
        ("t-1.0-py3-none-any-null.whl", 2, "rank 2: null variant: ranked after the compatible variants"),
        ("t-1.0-cp312-cp312-manylinux_2_28_x86_64.whl", 3, "rank 3: non-variant wheel: ranked after the compatible variant wheels"),
        ("t-1.0-cp313-cp313-manylinux_2_28_x86_64-cu129.whl", None, "no matching platform tag: wheel is cp313-cp313-manylinux_2_28_x86_64, target is cp312-cp312-manylinux_2_28_x86_64 (python tag cp313 not accepted)"),
        ("t-1.0-cp312-cp312-manylinux_2_34_x86_64-cu129.whl", None, "no matching platform tag: wheel is cp312-cp312-manylinux_2_34_x86_64, target is cp312-cp312-manylinux_2_28_x86_64 (platform tag manylinux_2_34_x86_64 not accepted, needs glibc >=2.34)"),
        ("t-1.0-cp312-cp312-manylinux_2_28_x86_64-cu130.whl", None, "variant cu130: needs nvidia :: cuda_version_lower_bound :: 13.0; supported: 12.9, 12.8, 12.7, ..., 12"),
        ("t-1.0-cp312-cp312-manylinux_2_28_x86_64-cu999.whl", None, "unknown variant label 'cu999': the package's variant metadata does not list it"),
        ("t-1.0-cp312-cp312-win_amd64.whl", None, "no matching platform tag: wheel is cp312-cp312-win_amd64, target is cp312-cp312-manylinux_2_28_x86_64 (built for Windows, the target is Linux)"),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["t-1.0-py3-none-any-null.whl", "t-1.0-py3-none-any.whl"], ["rank 1: null variant: no other variant is compatible", "rank 2: non-variant wheel: ranked after the compatible variant wheels"]),  # null winning must say no variant fits
        (["t-1.0-py3-none-any-cu130.whl", "t-1.0-py3-none-any.whl"], ["rank 1: non-variant wheel"]),  # non-variant winning is plain
        (["t-1.0-cp312-cp312-manylinux_2_17_x86_64-cu129.whl", "t-1.0-1-cp312-cp312-manylinux_2_28_x86_64-cu129.whl"], ["rank 1: variant cu129: nvidia :: cuda_version_lower_bound :: 12.9 (most preferred value); tag cp312-cp312-manylinux_2_28_x86_64 (target preference 1), build 1", "rank 2: variant cu129: nvidia :: cuda_version_lower_bound :: 12.9 (most preferred value); tag cp312-cp312-manylinux_2_17_x86_64 (target preference 12)"]),  # when tags decide within a label, the reason must name the tag
    ],
)  # fmt: skip
def test_compatible_wheel_reasons(names: list[str], expected: list[str]) -> None:
    assert [v.reason for v in select(names).verdicts if v.compatible] == expected


def test_variant_verdict_carries_the_ranked_variant() -> None:
    selection = select(["t-1.0-py3-none-any-cu126.whl", "t-1.0-py3-none-any.whl"])
    chosen = selection.chosen
    assert chosen is not None
    assert chosen.label == "cu126"
    assert chosen.variant is not None
    assert [str(p) for p in chosen.variant.matched] == [
        "nvidia :: cuda_version_lower_bound :: 12.6"
    ]
    assert selection.verdicts[1].variant is None  # the non-variant wheel has none


def test_select_wheel_passes_namespace_priorities_and_explain() -> None:
    names = [
        "t-1.0-py3-none-any-cu129.whl",
        "t-1.0-py3-none-any-v3.whl",
        "t-1.0-py3-none-any-cu130.whl",
    ]
    metadata = {
        v.label: v
        for v in variants(
            "cu129: nvidia :: cuda_version_lower_bound :: 12.9",
            "cu130: nvidia :: cuda_version_lower_bound :: 13.0",
            "v3: x86_64 :: level :: v3",
        )
    }
    selection = select_wheel(
        names,
        filename=WheelFilename.parse,
        variant=lambda name: metadata.get(WheelFilename.parse(name).label or ""),
        supported=supported({**NVIDIA, **X86}),
        tags=CP312,
        namespace_priorities=("x86_64", "nvidia"),
        explain=_explain,
    )
    assert [(v.label, v.rank) for v in selection.verdicts] == [
        ("v3", 1),
        ("cu129", 2),
        ("cu130", None),
    ]
    assert selection.verdicts[2].reason == (
        "variant cu130: needs cuda_version_lower_bound 13.0 but the prefix's toolkit is cuda-version 12.6"
    )


def test_select_wheel_static_provider() -> None:
    names = ["t-1.0-py3-none-any-mkl.whl", "t-1.0-py3-none-any-openblas.whl"]
    metadata = {
        v.label: v
        for v in variants("mkl: blas :: impl :: mkl", "openblas: blas :: impl :: openblas")
    }
    selection = select_wheel(
        names,
        filename=WheelFilename.parse,
        variant=lambda name: metadata.get(WheelFilename.parse(name).label or ""),
        supported=SupportedProperties(),
        tags=CP312,
        static=(Provider("blas", static_properties=(StaticFeature("impl", ("mkl", "openblas")),)),),
    )
    assert selection.selected == "t-1.0-py3-none-any-mkl.whl"


def test_select_wheel_defaults_to_the_running_interpreter_tags() -> None:
    selection = select_wheel(
        ["t-1.0-py3-none-any.whl", "t-1.0-py2-none-any.whl"],
        filename=WheelFilename.parse,
        variant=lambda name: None,
        supported=SupportedProperties(),
    )
    assert selection.selected == "t-1.0-py3-none-any.whl"
    assert selection.verdicts[1].reason.startswith(
        "no matching platform tag: wheel is py2-none-any, target is "
    )


def test_same_explanation_is_said_once() -> None:
    (ranked,) = rank_variants(
        variants("a: nvidia :: cuda_version_lower_bound :: 13.0; nvidia :: sm_arch :: 90_real"),
        supported(NVIDIA),
        explain=lambda prop: "the GPU driver is too old",
    )
    assert ranked.reason == "the GPU driver is too old"  # not once per failing feature


@pytest.mark.parametrize(
    ("wheel", "reason"),
    [
        (
            "t-1.0-cp312-cp312-manylinux_2_28_aarch64.whl",
            "(built for aarch64 CPUs, the target is x86_64)",
        ),  # another CPU: no glibc hint
        (
            "t-1.0-cp312-cp312-macosx_13_0_arm64.whl",
            "(built for macOS, the target is Linux)",
        ),  # another OS
        (
            "t-1.0-cp312-cp312-manylinux_2_34_x86_64.whl",
            "(platform tag manylinux_2_34_x86_64 not accepted, needs glibc >=2.34)",
        ),  # glibc too old
    ],
)
def test_tag_mismatch_names_what_differs(wheel: str, reason: str) -> None:
    tags = [Tag("cp312", "cp312", "manylinux_2_28_x86_64"), Tag("py3", "none", "any")]
    selection = select_wheel([wheel], filename=WheelFilename.parse, variant=lambda _: None,
                             supported=SupportedProperties(), tags=tags)  # fmt: skip
    (verdict,) = selection.verdicts
    assert verdict.reason.endswith(reason)


def test_a_known_problem_replaces_unknown_label() -> None:
    # The index layer can say why a label has no description; the verdict should carry that.
    wheels = ["t-1.0-py3-none-any-cu126.whl", "t-1.0-py3-none-any-cu999.whl"]
    problems = {"t-1.0-py3-none-any-cu126.whl": "variant.json inside names label 'cu128'"}
    selection = select_wheel(wheels, filename=WheelFilename.parse, variant=lambda _: None,
                             supported=SupportedProperties(), problem=problems.get)  # fmt: skip
    reasons = {str(v.filename): v.reason for v in selection.verdicts}
    assert reasons["t-1.0-py3-none-any-cu126.whl"] == "variant.json inside names label 'cu128'"
    assert reasons["t-1.0-py3-none-any-cu999.whl"].startswith("unknown variant label 'cu999'")
