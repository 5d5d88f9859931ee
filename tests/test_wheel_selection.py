"""Choosing one wheel by PEP 825's rules, with hand-built supported properties and wheel names."""

# Parametrize tables keep one case per line (with the defect it catches), whatever its length.

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pytest
from packaging.tags import Tag, compatible_tags, cpython_tags, sys_tags

from tests.test_ranking import NVIDIA, X86, _explain, supported, variants
from variant_bridge.filenames import WheelFilename
from variant_bridge.metadata.model import Provider, StaticFeature
from variant_bridge.properties import VariantDescription
from variant_bridge.ranking import Priorities, VariantRanker
from variant_bridge.translate.supported import SupportedProperties
from variant_bridge.wheel_selection import Selection, select_wheel


@dataclass(frozen=True)
class Problem:
    text: str


class Name(str):
    """A wheel filename as a candidate: compares equal to the plain name."""

    metadata: Mapping[str, VariantDescription] = {}
    problems: Mapping[str, str] = {}

    @property
    def filename(self) -> WheelFilename:
        return WheelFilename.parse(self)

    @property
    def variant(self) -> VariantDescription | None:
        return self.metadata.get(self.filename.label or "")

    @property
    def problem(self) -> Problem | None:
        text = self.problems.get(self)
        return Problem(text) if text is not None else None


def named(
    names: Sequence[str],
    metadata: Mapping[str, VariantDescription] | None = None,
    problems: Mapping[str, str] | None = None,
) -> list[Name]:
    class Known(Name):
        pass

    Known.metadata = metadata or {}
    Known.problems = problems or {}
    return [Known(name) for name in names]


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
) -> Selection[Name]:
    ranker = VariantRanker(supported(NVIDIA) if sp is None else sp)
    return select_wheel(named(names, metadata), ranker, CP312)


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
    ranker = VariantRanker(
        supported({**NVIDIA, **X86}), Priorities(("x86_64", "nvidia")), explain=_explain
    )
    selection = select_wheel(named(names, metadata), ranker, CP312)
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
    blas = Provider("blas", static_properties=(StaticFeature("impl", ("mkl", "openblas")),))
    ranker = VariantRanker(SupportedProperties(), Priorities(providers=(blas,)))
    selection = select_wheel(named(names, metadata), ranker, CP312)
    assert selection.selected == "t-1.0-py3-none-any-mkl.whl"


def test_select_wheel_with_the_running_interpreter_tags() -> None:
    selection = select_wheel(
        named(["t-1.0-py3-none-any.whl", "t-1.0-py2-none-any.whl"]),
        VariantRanker(SupportedProperties()),
        tuple(sys_tags()),
    )
    assert selection.selected == "t-1.0-py3-none-any.whl"
    assert selection.verdicts[1].reason.startswith(
        "no matching platform tag: wheel is py2-none-any, target is "
    )


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
    selection = select_wheel(named([wheel]), VariantRanker(SupportedProperties()), tags)
    (verdict,) = selection.verdicts
    assert verdict.reason.endswith(reason)


def test_a_known_problem_replaces_unknown_label() -> None:
    # The index layer can say why a label has no description; the verdict should carry that.
    wheels = ["t-1.0-py3-none-any-cu126.whl", "t-1.0-py3-none-any-cu999.whl"]
    problems = {"t-1.0-py3-none-any-cu126.whl": "variant.json inside names label 'cu128'"}
    selection = select_wheel(
        named(wheels, problems=problems), VariantRanker(SupportedProperties()), CP312
    )
    reasons = {str(v.filename): v.reason for v in selection.verdicts}
    assert reasons["t-1.0-py3-none-any-cu126.whl"] == "variant.json inside names label 'cu128'"
    assert reasons["t-1.0-py3-none-any-cu999.whl"].startswith("unknown variant label 'cu999'")
