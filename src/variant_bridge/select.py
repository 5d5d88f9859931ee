"""PEP 825 selection: filter and rank variants, choose one wheel, and say why for each candidate.

The input is the bridged *supported properties* (most preferred first), optionally completed by the
package's static providers; the output says, for every variant and every wheel, whether it is
compatible, its rank and why, in words a user can act on.

Ranking (PEP 825, as variantlib 0.2.2 implements it):

- a variant is compatible when every feature it lists has at least one supported value (values of
  one feature are OR-ed, features AND-ed); the null variant always is;
- each compatible variant gets a key: the ascending list of ``(namespace index, feature index,
  best value index)`` over the features it lists; lower keys win element by element, a key that
  is a prefix of another loses to it (the longer match wins), then the lower label wins;
- the null variant comes after every other compatible variant.

Wheels (:func:`select_wheel`): platform tags filter first; then ranked variant wheels, then the
null variant, then non-variant wheels. Variant order beats tag order; within one label (and among
non-variant wheels) the better platform tag wins, then the higher build number.

>>> from variant_bridge.translate.supported import SupportedProperties
>>> supported = SupportedProperties.from_dict(
...     {"nvidia": {"cuda_version_lower_bound": ["12.9", "12.8", "12.6"]}}
... )
>>> ranked = rank_variants(
...     [VariantDescription.parse("cu126: nvidia :: cuda_version_lower_bound :: 12.6"),
...      VariantDescription.parse("cu130: nvidia :: cuda_version_lower_bound :: 13.0"),
...      VariantDescription.null()],
...     supported,
... )
>>> [(r.label, r.rank) for r in ranked]
[('cu126', 1), ('null', 2), ('cu130', None)]
>>> ranked[2].reason
'needs nvidia :: cuda_version_lower_bound :: 13.0; supported: 12.9, 12.8, 12.6'
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import groupby
from operator import attrgetter
from typing import Generic, TypeVar

from packaging.tags import Tag

from variant_bridge.filenames import WheelFilename
from variant_bridge.metadata.model import Provider, VariantMetadata
from variant_bridge.properties import NULL_LABEL, VariantDescription, VariantProperty
from variant_bridge.translate.supported import SupportedFeature, SupportedProperties

__all__ = [
    "Explain",
    "RankedVariant",
    "Selection",
    "VariantRanker",
    "Verdict",
    "create_variant_selector",
    "rank_metadata",
    "rank_variants",
    "select_wheel",
]

T = TypeVar("T")

Explain = Callable[[VariantProperty], "str | None"]
"""Says in the caller's terms why one property is unsupported (``None``: use the generic text)."""

FeaturePriorities = Mapping[str, Sequence[str]] | Iterable[tuple[str, Sequence[str]]]
PropertyPriorities = Iterable[tuple[str, str, Sequence[str]]]

_Triple = tuple[int, int, int]
_Key = tuple[tuple[int, ...], ...]
# Appended to every key: it compares greater than any (ns, feature, value) triple, so a key that is
# a prefix of another loses to it ("the longer match wins") under plain tuple comparison.
_PREFIX_LOSES = (sys.maxsize,)
_STATIC_SOURCE = "static properties in the package's variant metadata"
_SHOWN_VALUES = 6
_feature_of = attrgetter("namespace", "feature")


@dataclass(frozen=True, slots=True)
class RankedVariant:
    """One variant's verdict: compatible or not, its rank (1 = most preferred) and why."""

    description: VariantDescription
    compatible: bool
    rank: int | None
    """1-based among the compatible variants (null included); ``None`` when incompatible."""
    reason: str
    matched: tuple[VariantProperty, ...] = ()
    """The properties whose value is supported (what PEP 825 markers see); empty if incompatible."""

    @property
    def label(self) -> str:
        return self.description.label


@dataclass(frozen=True, slots=True)
class _Assessment:
    description: VariantDescription
    key: _Key | None
    """Sort key; ``None`` when incompatible."""
    detail: str
    matched: tuple[VariantProperty, ...]

    @property
    def label(self) -> str:
        return self.description.label

    @property
    def sort_key(self) -> tuple[_Key, str]:
        assert self.key is not None
        return (self.key, self.description.label)


@dataclass(frozen=True, slots=True)
class _Feature:
    namespace_index: int
    feature_index: int
    ranks: Mapping[str, int]
    """value -> preference index (0 = most preferred)."""
    supported: SupportedFeature


_SUFFIXES = {1: "st", 2: "nd", 3: "rd"}


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else _SUFFIXES.get(n % 10, "th")
    return f"{n}{suffix}"


def _preference(index: int) -> str:
    return "most preferred value" if index == 0 else f"{_ordinal(index + 1)} preferred value"


def _abbreviate(values: Sequence[str]) -> str:
    if len(values) <= _SHOWN_VALUES:
        return ", ".join(values)
    return ", ".join((*values[:3], "...", values[-1]))


def _first_wins(order: Iterable[str], then: Iterable[str]) -> list[str]:
    """*order* (keeping only names in *then*) followed by the rest of *then*, without duplicates."""
    rest = dict.fromkeys(then)
    head = [name for name in dict.fromkeys(order) if name in rest]
    return head + [name for name in rest if name not in head]


def _static_supported(providers: Iterable[Provider]) -> SupportedProperties:
    return SupportedProperties(
        tuple(
            SupportedFeature(p.namespace, f.name, f.values, _STATIC_SOURCE)
            for p in providers
            if p.static_properties is not None
            for f in p.static_properties
            if f.values
        )
    )


class VariantRanker:
    """PEP 825 filter and ranking over one set of supported properties, with index maps built once.

    :param supported: the bridged supported properties, most preferred first.
    :param namespace_priorities: the package's ``default-priorities.namespace`` (most preferred
        first); namespaces it does not list follow in the order of *supported*.
    :param static: the package's providers; those with ``static_properties`` add their namespace's
        values (in the order given, which is their ``feature-order``) unless *supported* already
        has features of that namespace.
    :param feature_priorities: ``{namespace: [features]}`` put first within their namespace
        (PEP 817 ``default-priorities.feature``, a user's preferences).
    :param property_priorities: ``(namespace, feature, [values])`` put first within their feature.
    :param explain: says in the caller's terms why a property is unsupported; falls back to the
        generic text when it returns ``None`` or ``""``.
    """

    __slots__ = ("_by_index", "_explain", "_features", "_namespaces", "_texts", "supported")

    def __init__(
        self,
        supported: SupportedProperties,
        *,
        namespace_priorities: Sequence[str] = (),
        static: Iterable[Provider] = (),
        feature_priorities: FeaturePriorities = (),
        property_priorities: PropertyPriorities = (),
        explain: Explain | None = None,
    ) -> None:
        static_supported = _static_supported(static)
        if static_supported.features:
            # A static namespace is supported by definition, unless the caller knows better
            # (it has features for it); a mere "unsupported/unmapped" entry gives way.
            known = set(supported.namespaces)
            supported = SupportedProperties(
                supported.features,
                tuple(
                    u
                    for u in supported.unsupported
                    if u[0] not in static_supported.namespaces or u[0] in known
                ),
                supported.notes,
            ).merged(static_supported)
        self.supported = supported
        self._explain = explain
        feature_first = dict(
            feature_priorities.items()
            if isinstance(feature_priorities, Mapping)
            else feature_priorities
        )
        value_first = {(ns, feature): values for ns, feature, values in property_priorities}

        by_namespace: dict[str, list[SupportedFeature]] = {}
        for f in supported.features:
            by_namespace.setdefault(f.namespace, []).append(f)
        namespaces = _first_wins(namespace_priorities, by_namespace)
        features: dict[tuple[str, str], _Feature] = {}
        for ns_index, ns in enumerate(namespaces):
            declared: dict[str, SupportedFeature] = {}
            for f in by_namespace[ns]:
                declared.setdefault(f.feature, f)  # as SupportedProperties.feature(): first wins
            order = _first_wins(feature_first.get(ns, ()), declared)
            for feat_index, name in enumerate(order):
                sf = declared[name]
                values = _first_wins(value_first.get((ns, name), ()), sf.values)
                if tuple(values) != sf.values:
                    sf = SupportedFeature(sf.namespace, sf.feature, tuple(values), sf.source)
                ranks = {value: i for i, value in enumerate(values)}
                features[(ns, name)] = _Feature(ns_index, feat_index, ranks, sf)
        self._features = features
        self._namespaces = frozenset(namespaces)
        self._by_index = {(f.namespace_index, f.feature_index): f for f in features.values()}
        self._texts: dict[_Triple, str] = {}

    def _assess(self, description: VariantDescription) -> _Assessment:
        if description.is_null:
            return _Assessment(description, (_PREFIX_LOSES,), "", ())
        features = self._features
        triples: list[_Triple] = []
        failures: list[str] = []
        matched: list[VariantProperty] = []
        namespaces = self._namespaces
        said: set[str] = set()  # namespaces rejected as a whole: say why once
        # Properties are sorted, so the values of one feature are contiguous.
        for (ns, name), group in groupby(description.properties, _feature_of):
            props = list(group)
            info = features.get((ns, name))
            if info is None and ns not in namespaces:
                if ns not in said:
                    said.add(ns)
                    failures.append(self._failure(ns, name, props, info))
                continue
            best: int | None = None
            if info is not None:
                ranks = info.ranks
                for p in props:
                    rank = ranks.get(p.value)
                    if rank is not None:
                        matched.append(p)
                        if best is None or rank < best:
                            best = rank
            if info is None or best is None:
                failures.append(self._failure(ns, name, props, info))
            else:
                triples.append((info.namespace_index, info.feature_index, best))
        if failures:
            return _Assessment(description, None, "; ".join(dict.fromkeys(failures)), ())
        triples.sort()
        return _Assessment(
            description,
            (*triples, _PREFIX_LOSES),
            ", ".join(map(self._shown, triples)),
            tuple(matched),  # already sorted, as the description's properties are
        )

    def _shown(self, triple: _Triple) -> str:
        text = self._texts.get(triple)
        if text is None:
            ns_index, feat_index, best = triple
            sf = self._by_index[(ns_index, feat_index)].supported
            text = f"{sf.namespace} :: {sf.feature} :: {sf.values[best]} ({_preference(best)})"
            self._texts[triple] = text
        return text

    def _failure(
        self, ns: str, name: str, props: list[VariantProperty], info: _Feature | None
    ) -> str:
        if self._explain is not None:
            texts = [self._explain(p) for p in props]
            if all(texts):  # the caller's words only when they cover every value
                return "; ".join(dict.fromkeys(t for t in texts if t))
        needs = f"needs {ns} :: {name} :: {' or '.join(p.value for p in props)}"
        if info is not None:
            sf = info.supported
            origin = f" (from {sf.source})" if sf.source else ""
            return f"{needs}; supported{origin}: {_abbreviate(sf.values)}"
        reason = self.supported.unsupported_reason(ns)
        if reason is not None:
            return f"{needs}, but {ns} is not supported: {reason}"
        others = [f.feature for f in self.supported.features if f.namespace == ns]
        if others:
            return (
                f"{needs}, but {ns} :: {name} has no supported value "
                f"(supported {ns} features: {', '.join(others)})"
            )
        return f"{needs}, but no provider supports the {ns} namespace"

    def is_compatible(self, description: VariantDescription) -> bool:
        return self._assess(description).key is not None

    def rank(self, variants: Iterable[VariantDescription]) -> tuple[RankedVariant, ...]:
        """Each variant with its verdict: compatible ones in rank order, then the rest as given."""
        assessments = [self._assess(d) for d in variants]
        compatible = sorted((a for a in assessments if a.key is not None), key=_sort_key)
        others = sum(1 for a in compatible if not a.description.is_null)
        result: list[RankedVariant] = []
        previous: _Assessment | None = None
        for rank, a in enumerate(compatible, start=1):
            if a.description.is_null:
                detail = (
                    "null variant: no other variant is compatible"
                    if others == 0
                    else "null variant: always compatible, ranked after the other compatible "
                    "variants"
                )
            else:
                detail = a.detail
                if previous is not None and previous.key == a.key:
                    detail += (
                        f" (same priority as {previous.description.label!r}, "
                        "which sorts first by label)"
                    )
            result.append(
                RankedVariant(a.description, True, rank, f"rank {rank}: {detail}", a.matched)
            )
            previous = a
        result.extend(
            RankedVariant(a.description, False, None, a.detail)
            for a in assessments
            if a.key is None
        )
        return tuple(result)


def _sort_key(a: _Assessment) -> tuple[_Key, str]:
    return a.sort_key


def rank_variants(
    variants: Iterable[VariantDescription],
    supported: SupportedProperties,
    *,
    namespace_priorities: Sequence[str] = (),
    static: Iterable[Provider] = (),
    feature_priorities: FeaturePriorities = (),
    property_priorities: PropertyPriorities = (),
    explain: Explain | None = None,
) -> tuple[RankedVariant, ...]:
    """Filter and rank *variants* (PEP 825): compatible ones by rank, then incompatible as given.

    The null variant is ranked only if *variants* contains it (variantlib always adds one).
    See :class:`VariantRanker` for the parameters.
    """
    ranker = VariantRanker(
        supported,
        namespace_priorities=namespace_priorities,
        static=static,
        feature_priorities=feature_priorities,
        property_priorities=property_priorities,
        explain=explain,
    )
    return ranker.rank(variants)


def rank_metadata(
    metadata: VariantMetadata,
    supported: SupportedProperties,
    *,
    explain: Explain | None = None,
) -> tuple[RankedVariant, ...]:
    """:func:`rank_variants` over every variant of *metadata*, with its priorities and providers."""
    return rank_variants(
        metadata.variants,
        supported,
        namespace_priorities=metadata.namespace_priorities,
        static=metadata.providers,
        feature_priorities=metadata.feature_priorities,
        property_priorities=metadata.property_priorities,
        explain=explain,
    )


def create_variant_selector(
    supported: SupportedProperties,
    *,
    namespace_priorities: Sequence[str] = (),
    static: Iterable[Provider] = (),
    feature_priorities: FeaturePriorities = (),
    property_priorities: PropertyPriorities = (),
) -> Callable[[Iterable[tuple[T, VariantDescription]]], Iterator[T]]:
    """A selector over ``(thing, description)`` pairs, like ``packaging.tags``' tag selector.

    The returned callable yields the compatible things, most preferred first (the null variant
    last); ties keep their input order.
    """
    ranker = VariantRanker(
        supported,
        namespace_priorities=namespace_priorities,
        static=static,
        feature_priorities=feature_priorities,
        property_priorities=property_priorities,
    )

    def selector(things: Iterable[tuple[T, VariantDescription]]) -> Iterator[T]:
        keyed = []
        for thing, description in things:
            assessment = ranker._assess(description)
            if assessment.key is not None:
                keyed.append((assessment.sort_key, thing))
        keyed.sort(key=lambda pair: pair[0])
        return (thing for _, thing in keyed)

    return selector


# --- wheels ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Verdict(Generic[T]):
    """What selection decided about one candidate wheel, and why."""

    candidate: T
    filename: WheelFilename
    label: str | None
    """The variant label; ``None`` for a non-variant wheel."""
    compatible: bool
    rank: int | None
    """1 = selected; ``None`` when incompatible."""
    reason: str
    variant: RankedVariant | None = None
    """The variant's own verdict (``None`` for non-variant wheels and unknown labels)."""


@dataclass(frozen=True, slots=True)
class Selection(Generic[T]):
    """The chosen wheel (if any) and a verdict for every candidate: ranked ones first."""

    selected: T | None
    verdicts: tuple[Verdict[T], ...]

    @property
    def chosen(self) -> Verdict[T] | None:
        """The verdict of the selected candidate."""
        return self.verdicts[0] if self.verdicts and self.verdicts[0].rank == 1 else None

    @property
    def rejected(self) -> tuple[Verdict[T], ...]:
        return tuple(v for v in self.verdicts if not v.compatible)


_BuildKey = tuple[int, str] | tuple[()]
_BUILD_RE = re.compile(r"(\d+)(.*)")
_MANYLINUX_RE = re.compile(r"manylinux_(\d+)_(\d+)_")
_LEGACY_MANYLINUX = {"manylinux1": "2.5", "manylinux2010": "2.12", "manylinux2014": "2.17"}
_MACOSX_RE = re.compile(r"macosx_(\d+)_(\d+)_")


def _build_key(build: str | None) -> _BuildKey:
    # The binary distribution format: a build tag sorts as (number, rest); none sorts lowest.
    match = _BUILD_RE.fullmatch(build) if build else None
    return (int(match[1]), match[2]) if match else ()


_SYSTEM_ARCH_RE = re.compile(
    r"(?P<system>manylinux_\d+_\d+|manylinux\d+|musllinux_\d+_\d+|macosx_\d+_\d+|linux|win)"
    r"_(?P<arch>.+)"
)
_SYSTEMS = {"manylinux": "Linux", "musllinux": "Linux", "linux": "Linux", "macosx": "macOS",
            "win": "Windows"}  # fmt: skip
_ARCH_ALIASES = {"amd64": "x86_64", "arm64": "aarch64", "win32": "x86"}


def _system_arch(platform: str) -> tuple[str, str] | None:
    """``manylinux_2_28_x86_64`` -> ``("Linux", "x86_64")``; ``win_amd64`` -> Windows, x86_64."""
    match = _SYSTEM_ARCH_RE.fullmatch(platform)
    if match is None:
        return None
    system = _SYSTEMS[re.sub(r"[\d_]+$", "", match["system"])]
    return system, _ARCH_ALIASES.get(match["arch"], match["arch"])


def _join(items: Iterable[str]) -> str:
    return ", ".join(sorted(set(items)))


def _platform_hint(platforms: Iterable[str]) -> str:
    needs: list[str] = []
    for platform in platforms:
        if match := _MANYLINUX_RE.match(platform):
            needs.append(f"glibc >={match[1]}.{match[2]}")
        elif legacy := _LEGACY_MANYLINUX.get(platform.partition("_")[0]):
            needs.append(f"glibc >={legacy}")
        elif match := _MACOSX_RE.match(platform):
            needs.append(f"macOS >={match[1]}.{match[2]}")
    return f", needs {' or '.join(dict.fromkeys(needs))}" if needs else ""


def _tag_mismatch(wheel: WheelFilename, tags: Sequence[Tag]) -> str:
    text = f"{wheel.python_tag}-{wheel.abi_tag}-{wheel.platform_tag}"
    if not tags:
        return f"no matching platform tag: wheel is {text}, the target accepts no tags"
    interpreters = {t.interpreter for t in tags}
    abis = {t.abi for t in tags}
    platforms = {t.platform for t in tags}
    expanded = wheel.tags
    if not {t.interpreter for t in expanded} & interpreters:
        why = f"python tag {wheel.python_tag} not accepted"
    elif not {t.abi for t in expanded} & abis:
        why = f"abi tag {wheel.abi_tag} not accepted"
    elif not {t.platform for t in expanded} & platforms:
        wheel_platforms = sorted({t.platform for t in expanded})
        wheel_kinds = {k for k in map(_system_arch, wheel_platforms) if k}
        target_kinds = {k for k in map(_system_arch, platforms) if k}
        # A glibc/macOS hint would mislead when no version of the OS makes the wheel fit.
        if (
            wheel_kinds
            and target_kinds
            and not {k[0] for k in wheel_kinds} & {k[0] for k in target_kinds}
        ):
            why = f"built for {_join(k[0] for k in wheel_kinds)}, the target is " + _join(
                k[0] for k in target_kinds
            )
        elif wheel_kinds and target_kinds and not wheel_kinds & target_kinds:
            why = f"built for {_join(k[1] for k in wheel_kinds)} CPUs, the target is " + _join(
                k[1] for k in target_kinds
            )
        else:
            hint = _platform_hint(wheel_platforms)
            why = f"platform tag {wheel.platform_tag} not accepted{hint}"
    else:
        why = "this combination of tags not accepted"
    return f"no matching platform tag: wheel is {text}, target is {tags[0]} ({why})"


@dataclass(slots=True)
class _Entry(Generic[T]):
    index: int
    candidate: T
    wheel: WheelFilename
    tag_index: int | None
    assessment: _Assessment | None = None
    """``None`` for a non-variant wheel (and for a wheel rejected before its variant was read)."""
    reason: str = ""
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


def _assess_wheels(
    candidates: Sequence[T],
    filename: Callable[[T], WheelFilename],
    variant: Callable[[T], VariantDescription | None],
    tags: Sequence[Tag],
    ranker: VariantRanker,
    *,
    problem: Callable[[T], str | None] | None = None,
) -> list[_Entry[T]]:
    tag_rank: dict[Tag, int] = {}
    for i, tag in enumerate(tags):
        tag_rank.setdefault(tag, i)
    by_label: dict[str, _Assessment] = {}
    entries: list[_Entry[T]] = []
    for index, candidate in enumerate(candidates):
        wheel = filename(candidate)
        tag_index = min((tag_rank[t] for t in wheel.tags if t in tag_rank), default=None)
        entry = _Entry(index, candidate, wheel, tag_index)
        entries.append(entry)
        if tag_index is None:
            entry.reason = _tag_mismatch(wheel, tags)
            continue
        if wheel.label is None:
            continue
        description = variant(candidate)
        if description is None and wheel.label == NULL_LABEL:
            # The label is reserved for "no properties": it needs no metadata entry (variantlib
            # answers the same for a label-less lookup of "null").
            description = VariantDescription.null()
        if description is None:
            entry.reason = (problem(candidate) if problem is not None else None) or (
                f"unknown variant label {wheel.label!r}: the package's variant metadata does not "
                "list it"
            )
            continue
        assessment = by_label.get(description.label)
        if assessment is None or assessment.description != description:
            assessment = by_label[description.label] = ranker._assess(description)
        entry.assessment = assessment
        if assessment.key is None:
            entry.reason = f"variant {wheel.label}: {assessment.detail}"
    return entries


def _compatible_reasons(ranked: Sequence[_Entry[T]], tags: Sequence[Tag]) -> list[str]:
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
    candidates: Sequence[T],
    *,
    filename: Callable[[T], WheelFilename],
    variant: Callable[[T], VariantDescription | None],
    supported: SupportedProperties,
    tags: Sequence[Tag] | None = None,
    namespace_priorities: Sequence[str] = (),
    static: Iterable[Provider] = (),
    feature_priorities: FeaturePriorities = (),
    property_priorities: PropertyPriorities = (),
    explain: Explain | None = None,
    problem: Callable[[T], str | None] | None = None,
) -> Selection[T]:
    """Choose one wheel among *candidates* (one package version) by PEP 825's rules.

    :param filename: the parsed filename of a candidate.
    :param variant: the description of a variant candidate's label from the package's variant
        metadata, or ``None`` when the metadata is missing or does not list the label (the wheel
        is then incompatible, except ``null``, which means no properties by definition). Not
        called for non-variant or tag-incompatible wheels.
    :param tags: the target interpreter's tags, most preferred first; ``None``: the running
        interpreter's (``packaging.tags.sys_tags()``).
    :param problem: why a variant candidate has no description, when the caller knows better
        than "unknown label" (a damaged wheel, a ``variant.json`` naming another label).
    :returns: the selected candidate (``None`` when nothing is compatible) and a verdict for every
        candidate: the compatible ones in rank order, then the rejected ones in input order.

    See :class:`VariantRanker` for the other parameters.
    """
    if tags is None:
        from packaging.tags import sys_tags

        tags = tuple(sys_tags())
    ranker = VariantRanker(
        supported,
        namespace_priorities=namespace_priorities,
        static=static,
        feature_priorities=feature_priorities,
        property_priorities=property_priorities,
        explain=explain,
    )
    entries = _assess_wheels(candidates, filename, variant, tags, ranker, problem=problem)
    ranked = [e for e in entries if not e.reason]
    builds = sorted({_build_key(e.wheel.build) for e in ranked}, reverse=True)
    build_rank = {b: i for i, b in enumerate(builds)}
    ranked.sort(key=lambda e: e.order(build_rank))

    descriptions = {e.assessment.label: e.assessment.description for e in entries if e.assessment}
    variants = {rv.label: rv for rv in ranker.rank(descriptions.values())}

    def verdict(e: _Entry[T], rank: int | None, reason: str) -> Verdict[T]:
        rv = variants.get(e.assessment.label) if e.assessment else None
        return Verdict(e.candidate, e.wheel, e.wheel.label, rank is not None, rank, reason, rv)

    reasons = _compatible_reasons(ranked, tags)
    verdicts = [
        verdict(e, rank, r)
        for rank, (e, r) in enumerate(zip(ranked, reasons, strict=True), start=1)
    ]
    verdicts += [verdict(e, None, e.reason) for e in entries if e.reason]
    return Selection(ranked[0].candidate if ranked else None, tuple(verdicts))
