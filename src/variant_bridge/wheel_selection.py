"""Choose one wheel of a package version by PEP 825's rules, and say why for every candidate.

Platform tags filter first; then ranked variant wheels, then the null variant, then non-variant
wheels. Variant order beats tag order; within one label (and among non-variant wheels) the better
platform tag wins, then the higher build number. The variants are ranked by a
:class:`~variant_bridge.ranking.VariantRanker`; each is assessed once. See docs/semantics.md §6.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Generic, Protocol, TypeVar

from packaging.tags import Tag

from variant_bridge._patterns import Lazy
from variant_bridge._values import value
from variant_bridge.filenames import WheelFilename
from variant_bridge.platform_tags import tag_mismatch
from variant_bridge.properties import NULL_LABEL, VariantDescription
from variant_bridge.ranking import Assessment, RankedVariant, VariantRanker

__all__ = ["Selection", "Verdict", "WheelCandidate", "select_wheel"]


class Problem(Protocol):
    """Why a candidate cannot be considered, as its source says it."""

    @property
    def text(self) -> str: ...


class WheelCandidate(Protocol):
    """What selection needs to know of a candidate wheel."""

    @property
    def filename(self) -> WheelFilename: ...

    @property
    def variant(self) -> VariantDescription | None:
        """The variant its label stands for, from the package's variant metadata; ``None`` for
        a non-variant wheel, or when the metadata does not list the label."""

    @property
    def problem(self) -> Problem | None:
        """Why a variant wheel has no :attr:`variant`, when the source knows better than
        "unknown label" (a damaged wheel, a ``variant.json`` naming another label)."""


C = TypeVar("C", bound=WheelCandidate)


@value
class Verdict(Generic[C]):
    """What selection decided about one candidate wheel, and why."""

    candidate: C
    filename: WheelFilename
    label: str | None
    """The variant label; ``None`` for a non-variant wheel."""
    compatible: bool
    rank: int | None
    """1 = selected; ``None`` when incompatible."""
    reason: str
    variant: RankedVariant | None = None
    """The variant's own verdict (``None`` for non-variant wheels and unknown labels)."""


@value
class Selection(Generic[C]):
    """The chosen wheel (if any) and a verdict for every candidate: ranked ones first."""

    selected: C | None
    verdicts: tuple[Verdict[C], ...]

    @property
    def chosen(self) -> Verdict[C] | None:
        """The verdict of the selected candidate."""
        return self.verdicts[0] if self.verdicts and self.verdicts[0].rank == 1 else None

    @property
    def rejected(self) -> tuple[Verdict[C], ...]:
        return tuple(v for v in self.verdicts if not v.compatible)


_BuildKey = tuple[int, str] | tuple[()]
_BUILD_RE = Lazy(r"(\d+)(.*)")


def _build_key(build: str | None) -> _BuildKey:
    # The binary distribution format: a build tag sorts as (number, rest); none sorts lowest.
    match = _BUILD_RE.fullmatch(build) if build else None
    return (int(match[1]), match[2]) if match else ()


class _Entry(Generic[C]):
    """One wheel while it is assessed (a mutable collector; a plain class: no generated code)."""

    __slots__ = ("assessment", "candidate", "index", "reason", "tag_index", "wheel")

    def __init__(self, index: int, candidate: C, wheel: WheelFilename, tag_index: int | None):
        self.index = index
        self.candidate = candidate
        self.wheel = wheel
        self.tag_index = tag_index
        self.assessment: Assessment | None = None
        """``None`` for a non-variant wheel (and for a wheel rejected before its variant was
        read)."""
        self.reason = ""
        """Why it is incompatible; empty when compatible."""

    def order(self, build_rank: Mapping[_BuildKey, int]) -> tuple[object, ...]:
        """Ranked variants, then null, then non-variant; within a group: tag, build, name."""
        a = self.assessment
        if a is None:
            group: tuple[object, ...] = (2, (), "")
        elif a.description.is_null:
            group = (1, (), "")
        else:
            group = (0, *a.sort_key)
        return (
            *group,
            self.tag_index,
            build_rank[_build_key(self.wheel.build)],
            str(self.wheel),
            self.index,
        )


def _unknown_label(candidate: WheelCandidate, label: str) -> str:
    problem = candidate.problem
    if problem is not None and problem.text:
        return problem.text
    return f"unknown variant label {label!r}: the package's variant metadata does not list it"


def _assess_wheels(
    candidates: Sequence[C], tags: Sequence[Tag], ranker: VariantRanker
) -> list[_Entry[C]]:
    tag_rank: dict[Tag, int] = {}
    for i, tag in enumerate(tags):
        tag_rank.setdefault(tag, i)
    entries: list[_Entry[C]] = []
    for index, candidate in enumerate(candidates):
        wheel = candidate.filename
        tag_index = min((tag_rank[t] for t in wheel.tags if t in tag_rank), default=None)
        entry = _Entry(index, candidate, wheel, tag_index)
        entries.append(entry)
        if tag_index is None:
            entry.reason = tag_mismatch(wheel, tags)
            continue
        if wheel.label is None:
            continue
        description = candidate.variant
        if description is None and wheel.label == NULL_LABEL:
            # The label is reserved for "no properties": it needs no metadata entry (variantlib
            # answers the same for a label-less lookup of "null").
            description = VariantDescription.null()
        if description is None:
            entry.reason = _unknown_label(candidate, wheel.label)
            continue
        entry.assessment = ranker.assess(description)
        if not entry.assessment.compatible:
            entry.reason = f"variant {wheel.label}: {entry.assessment.detail}"
    return entries


def _compatible_reasons(ranked: Sequence[_Entry[C]], tags: Sequence[Tag]) -> list[str]:
    """The reason of each compatible wheel, already in rank order."""
    variants_ok = any(e.assessment and not e.assessment.description.is_null for e in ranked)
    nulls_ok = any(e.assessment and e.assessment.description.is_null for e in ranked)
    per_label: dict[str | None, int] = {}
    for e in ranked:
        per_label[e.wheel.label] = per_label.get(e.wheel.label, 0) + 1
    reasons = []
    for rank, e in enumerate(ranked, start=1):
        a = e.assessment
        if a is None and (variants_ok or nulls_ok):
            what = "non-variant wheel: ranked after the compatible variant wheels"
        elif a is None:
            what = "non-variant wheel"
        elif a.description.is_null and variants_ok:
            what = "null variant: ranked after the compatible variants"
        elif a.description.is_null:
            what = "null variant: no other variant is compatible"
        else:
            what = f"variant {a.description.label}: {a.detail}"
        if per_label[e.wheel.label] > 1 and e.tag_index is not None:
            # Only worth saying when the tag decides between wheels of the same label.
            what += f"; tag {tags[e.tag_index]} (target preference {e.tag_index + 1})"
            if e.wheel.build:
                what += f", build {e.wheel.build}"
        reasons.append(f"rank {rank}: {what}")
    return reasons


def select_wheel(
    candidates: Sequence[C], ranker: VariantRanker, tags: Sequence[Tag]
) -> Selection[C]:
    """Choose one wheel among *candidates* (one package version) by PEP 825's rules.

    :param ranker: ranks the variants, with the package's priorities and the caller's words
        for unsupported properties.
    :param tags: the target interpreter's tags, most preferred first.
    :returns: the selected candidate (``None`` when nothing is compatible) and a verdict for every
        candidate: the compatible ones in rank order, then the rejected ones in input order.
    """
    entries = _assess_wheels(candidates, tags, ranker)
    ranked = [e for e in entries if not e.reason]
    builds = sorted({_build_key(e.wheel.build) for e in ranked}, reverse=True)
    build_rank = {b: i for i, b in enumerate(builds)}
    ranked.sort(key=lambda e: e.order(build_rank))

    descriptions = {e.assessment.label: e.assessment.description for e in entries if e.assessment}
    variants = {rv.label: rv for rv in ranker.rank(descriptions.values())}

    def verdict(e: _Entry[C], rank: int | None, reason: str) -> Verdict[C]:
        rv = variants.get(e.assessment.label) if e.assessment else None
        return Verdict(e.candidate, e.wheel, e.wheel.label, rank is not None, rank, reason, rv)

    reasons = _compatible_reasons(ranked, tags)
    verdicts = [
        verdict(e, rank, r)
        for rank, (e, r) in enumerate(zip(ranked, reasons, strict=True), start=1)
    ]
    verdicts += [verdict(e, None, e.reason) for e in entries if e.reason]
    return Selection(ranked[0].candidate if ranked else None, tuple(verdicts))
