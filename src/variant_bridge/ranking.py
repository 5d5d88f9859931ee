"""PEP 825 filter and rank: which variants an environment supports, in which order, and why.

The input is the bridged *supported properties* (most preferred first) and the package's own
:class:`Priorities` (its namespace order, static providers, PEP 817 feature and property
priorities); the output says, for every variant, whether it is compatible, its rank and why, in
words a user can act on. Choosing among wheels is :mod:`variant_bridge.wheel_selection`.

Ranking (PEP 825, as variantlib implements it; docs/semantics.md §6):

- a variant is compatible when every feature it lists has at least one supported value (values of
  one feature are OR-ed, features AND-ed); the null variant always is;
- each compatible variant gets a key: the ascending list of ``(namespace index, feature index,
  best value index)`` over the features it lists; lower keys win element by element, a key that
  is a prefix of another loses to it (the longer match wins), then the lower label wins;
- the null variant comes after every other compatible variant.

>>> from variant_bridge.translate.supported import SupportedProperties
>>> supported = SupportedProperties.from_dict(
...     {"nvidia": {"cuda_version_lower_bound": ["12.9", "12.8", "12.6"]}}
... )
>>> ranked = VariantRanker(supported).rank(
...     [VariantDescription.parse("cu126: nvidia :: cuda_version_lower_bound :: 12.6"),
...      VariantDescription.parse("cu130: nvidia :: cuda_version_lower_bound :: 13.0"),
...      VariantDescription.null()]
... )
>>> [(r.label, r.rank) for r in ranked]
[('cu126', 1), ('null', 2), ('cu130', None)]
>>> ranked[2].reason
'needs nvidia :: cuda_version_lower_bound :: 13.0; supported: 12.9, 12.8, 12.6'
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import groupby
from operator import attrgetter

from variant_bridge._values import value
from variant_bridge.metadata.model import Provider, VariantMetadata
from variant_bridge.properties import VariantDescription, VariantProperty
from variant_bridge.translate.supported import SupportedFeature, SupportedProperties

__all__ = [
    "Assessment",
    "Explain",
    "Judge",
    "Judgement",
    "Priorities",
    "RankedVariant",
    "VariantRanker",
]

Explain = Callable[[VariantProperty], "str | None"]
"""Says in the caller's terms why one property is unsupported (``None``: use the generic text)."""


@value
class Judgement:
    """A caller's own verdict on a variant its properties allow (the toolkit evidence, §8)."""

    reason: str
    """Said after the matched properties, or instead of them when not :attr:`compatible`."""
    compatible: bool = True


Judge = Callable[[VariantDescription], "Judgement | None"]
"""Judges a non-null variant beyond its properties (``None``: nothing to add)."""

FeaturePriorities = Mapping[str, Sequence[str]] | Sequence[tuple[str, Sequence[str]]]
PropertyPriorities = Sequence[tuple[str, str, Sequence[str]]]

_Triple = tuple[int, int, int]
_Key = tuple[tuple[int, ...], ...]
# Appended to every key: it compares greater than any (ns, feature, value) triple, so a key that is
# a prefix of another loses to it ("the longer match wins") under plain tuple comparison.
_PREFIX_LOSES = (sys.maxsize,)
_STATIC_SOURCE = "static properties in the package's variant metadata"
_SHOWN_VALUES = 6
_feature_of = attrgetter("namespace", "feature")


@value
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


@value
class Assessment:
    """One variant measured against the supported properties, before ranks are given."""

    description: VariantDescription
    key: _Key | None
    """Sort key (lower wins); ``None`` when incompatible."""
    detail: str
    """What matched (compatible) or why not (incompatible), in words."""
    matched: tuple[VariantProperty, ...]

    @property
    def label(self) -> str:
        return self.description.label

    @property
    def compatible(self) -> bool:
        return self.key is not None

    @property
    def sort_key(self) -> tuple[_Key, str]:
        assert self.key is not None
        return (self.key, self.description.label)


@value
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


@value
class Priorities:
    """What a package's variant metadata says about preference, beyond the environment's order.

    :param namespaces: ``default-priorities.namespace`` (most preferred first); namespaces it
        does not list follow in the order of the supported properties.
    :param providers: the package's providers; those with ``static_properties`` add their
        namespace's values (in the order given, which is their ``feature-order``) unless the
        supported properties already have features of that namespace.
    :param features: ``{namespace: [features]}`` put first within their namespace (PEP 817
        ``default-priorities.feature``, a user's preferences).
    :param properties: ``(namespace, feature, [values])`` put first within their feature.
    """

    namespaces: Sequence[str] = ()
    providers: Sequence[Provider] = ()
    features: FeaturePriorities = ()
    properties: PropertyPriorities = ()

    @classmethod
    def of(cls, metadata: VariantMetadata | None) -> Priorities:
        """The priorities a package's merged variant metadata declares (none without it)."""
        if metadata is None:
            return cls()
        return cls(
            metadata.namespace_priorities,
            metadata.providers,
            metadata.feature_priorities,
            metadata.property_priorities,
        )


_NO_PRIORITIES = Priorities()


def _with_static(
    supported: SupportedProperties, providers: Iterable[Provider]
) -> SupportedProperties:
    static = _static_supported(providers)
    if not static.features:
        return supported
    # A static namespace is supported by definition, unless the caller knows better (it has
    # features for it); a mere "unsupported/unmapped" entry gives way.
    known = set(supported.namespaces)
    return SupportedProperties(
        supported.features,
        tuple(u for u in supported.unsupported if u[0] not in static.namespaces or u[0] in known),
        supported.notes,
        supported.policy,
        supported.bases,
        supported.every_gpu,
    ).merged(static)


class VariantRanker:
    """PEP 825 filter and ranking over one set of supported properties, with index maps built once.

    Each variant is assessed once per ranker: assessments are kept by label, so ranking the
    variants whose wheels were already measured, or asking again whether one is compatible,
    costs a lookup.

    :param supported: the bridged supported properties, most preferred first.
    :param priorities: the package's own priorities (:meth:`Priorities.of` its metadata).
    :param explain: says in the caller's terms why a property is unsupported; falls back to the
        generic text when it returns ``None`` or ``""``.
    :param judge: a further rule for variants whose properties are supported: it may refuse
        one (with its reason) or add to why it is accepted.
    """

    __slots__ = (
        "_assessed",
        "_by_index",
        "_explain",
        "_features",
        "_judge",
        "_namespaces",
        "_texts",
        "supported",
    )

    def __init__(
        self,
        supported: SupportedProperties,
        priorities: Priorities = Priorities(),  # noqa: B008 (frozen: a @value)
        *,
        explain: Explain | None = None,
        judge: Judge | None = None,
    ) -> None:
        supported = _with_static(supported, priorities.providers)
        self.supported = supported
        self._explain = explain
        self._judge = judge
        features = priorities.features
        feature_first = dict(features.items() if isinstance(features, Mapping) else features)
        value_first = {(ns, feature): values for ns, feature, values in priorities.properties}

        by_namespace: dict[str, list[SupportedFeature]] = {}
        for f in supported.features:
            by_namespace.setdefault(f.namespace, []).append(f)
        namespaces = _first_wins(priorities.namespaces, by_namespace)
        table: dict[tuple[str, str], _Feature] = {}
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
                table[(ns, name)] = _Feature(ns_index, feat_index, ranks, sf)
        self._features = table
        self._namespaces = frozenset(namespaces)
        self._by_index = {(f.namespace_index, f.feature_index): f for f in table.values()}
        self._texts: dict[_Triple, str] = {}
        self._assessed: dict[str, Assessment] = {}

    def assess(self, description: VariantDescription) -> Assessment:
        """Whether *description* is compatible, its sort key and why (computed once per label)."""
        known = self._assessed.get(description.label)
        if known is not None and (
            known.description is description or known.description == description
        ):
            return known
        assessment = self._assess(description)
        self._assessed[description.label] = assessment
        return assessment

    def _assess(self, description: VariantDescription) -> Assessment:
        assessment = self._assess_properties(description)
        if self._judge is None or assessment.key is None or description.is_null:
            return assessment
        judgement = self._judge(description)
        if judgement is None:
            return assessment
        if not judgement.compatible:
            return Assessment(description, None, judgement.reason, ())
        detail = f"{assessment.detail}; {judgement.reason}"
        return Assessment(description, assessment.key, detail, assessment.matched)

    def _assess_properties(self, description: VariantDescription) -> Assessment:
        if description.is_null:
            return Assessment(description, (_PREFIX_LOSES,), "", ())
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
        failures += self._not_every_gpu(description)
        if failures:
            return Assessment(description, None, "; ".join(dict.fromkeys(failures)), ())
        triples.sort()
        return Assessment(
            description,
            (*triples, _PREFIX_LOSES),
            ", ".join(map(self._shown, triples)),
            tuple(matched),  # already sorted, as the description's properties are
        )

    def _not_every_gpu(self, description: VariantDescription) -> list[str]:
        """Why the variant lacks code for one of several declared GPUs (docs/clusters.md)."""
        failures = []
        for every in self.supported.every_gpu:
            values = [
                p.value
                for p in description.properties
                if (p.namespace, p.feature) == (every.namespace, every.feature)
            ]
            missing = every.missing(values) if values else ()
            if missing:
                failures.append(
                    f"{every.namespace} :: {every.feature} :: {', '.join(values)} has no code for "
                    f"{' and '.join(missing)}, and {every.declared} asks that every GPU runs it"
                )
        return failures

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

    def rank(self, variants: Iterable[VariantDescription]) -> tuple[RankedVariant, ...]:
        """Each variant with its verdict: compatible ones in rank order, then the rest as given."""
        assessments = [self.assess(d) for d in variants]
        compatible = sorted((a for a in assessments if a.key is not None), key=_sort_key)
        others = sum(1 for a in compatible if not a.description.is_null)
        result: list[RankedVariant] = []
        previous: Assessment | None = None
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


def _sort_key(a: Assessment) -> tuple[_Key, str]:
    return a.sort_key
