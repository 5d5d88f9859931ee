"""Wheel-variant properties, features and descriptions (PEP 825), as immutable value objects.

A property is written ``namespace :: feature :: value``. Whitespace around ``::`` is accepted on
input and printed as exactly one space. Every object here parses from text and prints back to the
same canonical text: ``VariantProperty.parse(str(p)) == p``.

>>> p = VariantProperty.parse("nvidia::cuda_version_lower_bound:: 12.8")
>>> str(p)
'nvidia :: cuda_version_lower_bound :: 12.8'
>>> VariantDescription.of([p]).hexdigest
'f839a2dd'
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import field

from variant_bridge._patterns import Lazy
from variant_bridge._values import value
from variant_bridge.errors import InvalidProperty, quote

__all__ = [
    "LABEL_RE",
    "LEGACY_NULL_LABEL",
    "NULL_LABEL",
    "VariantDescription",
    "VariantFeature",
    "VariantProperty",
    "validate_label",
]


def _q(value: object) -> str:
    # One bad argument must not flood a one-line error: long text is shortened.
    return quote(value) if isinstance(value, str) else repr(value)


NULL_LABEL = "null"
"""The label reserved for the null variant: no properties, always compatible."""

LEGACY_NULL_LABEL = "00000000"
"""variantlib's null label before 2025-08, still used by the real index (torch 2.8.0,
torchvision 0.23.0): a variant with no properties under it IS the null variant."""

_NULL_LABELS = frozenset({NULL_LABEL, LEGACY_NULL_LABEL})

HASH_LENGTH = 8

_NAME = r"[a-z0-9_]+"
_VALUE = r"[a-z0-9_.]+"
NAMESPACE_RE = re.compile(_NAME)
FEATURE_RE = re.compile(_NAME)
VALUE_RE = re.compile(_VALUE)
# PEP 825 dropped PEP 817's 16-character limit; variantlib 0.2.2 agrees.
LABEL_RE = re.compile(r"[0-9a-z_.]+")
_FEATURE_TEXT_RE = Lazy(rf"(?P<namespace>{_NAME})\s*::\s*(?P<feature>{_NAME})")
_PROPERTY_TEXT_RE = Lazy(
    rf"(?P<namespace>{_NAME})\s*::\s*(?P<feature>{_NAME})\s*::\s*(?P<value>{_VALUE})"
)
_EXPECTED = (
    "expected 'namespace :: feature :: value' with lowercase [a-z0-9_] names and [a-z0-9_.] values"
)


def _check(kind: str, text: object, pattern: re.Pattern[str]) -> None:
    if not isinstance(text, str) or pattern.fullmatch(text) is None:
        raise InvalidProperty(f"invalid {kind} {_q(text)}: must match {pattern.pattern}")


def _fullmatch(pattern: re.Pattern[str] | Lazy[str], text: object) -> re.Match[str] | None:
    # Typed callers pass str, but values straight out of JSON or TOML may be anything.
    return pattern.fullmatch(text.strip()) if isinstance(text, str) else None


def validate_label(label: str) -> str:
    """Return *label* if it is a valid variant label, else raise :class:`InvalidProperty`."""
    checked: object = label
    if not isinstance(checked, str) or LABEL_RE.fullmatch(checked) is None:
        raise InvalidProperty(
            f"invalid variant label {_q(label)}: must be non-empty lowercase [0-9a-z_.] characters"
        )
    return label


# The two ordered values below are @value classes (defined without generated code: start-up)
# whose comparisons, the hot path of ranking and of building descriptions, are written out as
# dataclasses would generate them: tuples of the fields, within one class.


@value
class VariantFeature:
    """A feature: the pair ``namespace :: feature``."""

    namespace: str
    feature: str

    def __post_init__(self) -> None:
        _check("namespace", self.namespace, NAMESPACE_RE)
        _check("feature name", self.feature, FEATURE_RE)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, VariantFeature)
        return (self.namespace, self.feature) == (other.namespace, other.feature)

    def __hash__(self) -> int:
        return hash((self.namespace, self.feature))

    def __lt__(self, other: VariantFeature) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.namespace, self.feature) < (other.namespace, other.feature)

    def __le__(self, other: VariantFeature) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.namespace, self.feature) <= (other.namespace, other.feature)

    def __gt__(self, other: VariantFeature) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.namespace, self.feature) > (other.namespace, other.feature)

    def __ge__(self, other: VariantFeature) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.namespace, self.feature) >= (other.namespace, other.feature)

    @classmethod
    def parse(cls, text: str) -> VariantFeature:
        """Parse ``namespace :: feature``."""
        match = _fullmatch(_FEATURE_TEXT_RE, text)
        if match is None:
            raise InvalidProperty(
                f"invalid variant feature {_q(text)}: expected 'namespace :: feature'"
            )
        return cls(match["namespace"], match["feature"])

    def __str__(self) -> str:
        return f"{self.namespace} :: {self.feature}"

    def __repr__(self) -> str:
        return f"<VariantFeature({str(self)!r})>"


@value
class VariantProperty:
    """One property, ``namespace :: feature :: value``; ordered as the spec sorts them."""

    namespace: str
    feature: str
    value: str

    def __post_init__(self) -> None:
        _check("namespace", self.namespace, NAMESPACE_RE)
        _check("feature name", self.feature, FEATURE_RE)
        _check("value", self.value, VALUE_RE)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, VariantProperty)
        return (self.namespace, self.feature, self.value) == (
            other.namespace, other.feature, other.value,
        )  # fmt: skip

    def __hash__(self) -> int:
        return hash((self.namespace, self.feature, self.value))

    def __lt__(self, other: VariantProperty) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.namespace, self.feature, self.value) < (
            other.namespace, other.feature, other.value,
        )  # fmt: skip

    def __le__(self, other: VariantProperty) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.namespace, self.feature, self.value) <= (
            other.namespace, other.feature, other.value,
        )  # fmt: skip

    def __gt__(self, other: VariantProperty) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.namespace, self.feature, self.value) > (
            other.namespace, other.feature, other.value,
        )  # fmt: skip

    def __ge__(self, other: VariantProperty) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.namespace, self.feature, self.value) >= (
            other.namespace, other.feature, other.value,
        )  # fmt: skip

    @classmethod
    def parse(cls, text: str) -> VariantProperty:
        """Parse ``namespace :: feature :: value`` (whitespace around ``::`` is ignored).

        :raises InvalidProperty: if *text* is not a property.
        """
        match = _fullmatch(_PROPERTY_TEXT_RE, text)
        if match is None:
            raise InvalidProperty(f"invalid variant property {_q(text)}: {_EXPECTED}")
        return cls(match["namespace"], match["feature"], match["value"])

    @property
    def feature_key(self) -> VariantFeature:
        """The ``namespace :: feature`` this property belongs to."""
        return VariantFeature(self.namespace, self.feature)

    def __str__(self) -> str:
        return f"{self.namespace} :: {self.feature} :: {self.value}"

    def __repr__(self) -> str:
        return f"<VariantProperty({str(self)!r})>"


def _digest(properties: tuple[VariantProperty, ...]) -> str:
    # Each property ends with a newline so that adjacent properties cannot run together
    # ("a :: b :: cx" + "d :: e :: f" vs "a :: b :: c" + "xd :: e :: f").
    import hashlib  # lazy: ~3 ms to import, and most commands never hash a description

    text = "".join(f"{p}\n" for p in properties)
    return hashlib.sha256(text.encode()).hexdigest()[:HASH_LENGTH]


@value
class VariantDescription:
    """A variant: a label and its set of properties (sorted, no duplicates).

    Build one with :meth:`of` (from properties), :meth:`from_dict` (the JSON shape) or
    :meth:`parse` (the text shape ``label: p1; p2``). Without a label, the null variant gets
    ``null`` and any other variant its 8-hex sha256 digest, as variantlib does.
    """

    properties: tuple[VariantProperty, ...]
    label: str
    _hexdigest: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        props: object = self.properties
        if not isinstance(props, tuple) or not all(isinstance(p, VariantProperty) for p in props):
            raise InvalidProperty("variant properties must be a tuple of VariantProperty")
        if list(props) != sorted(set(props)):
            raise InvalidProperty(
                "variant properties must be sorted and unique; build with VariantDescription.of()"
            )
        validate_label(self.label)
        if not props and self.label not in _NULL_LABELS:
            raise InvalidProperty(
                f"the null variant (no properties) must use the label {NULL_LABEL!r}, "
                f"not {_q(self.label)}"
            )
        if props and self.label == NULL_LABEL:
            raise InvalidProperty(f"the label {NULL_LABEL!r} is reserved for the null variant")
        object.__setattr__(self, "_hexdigest", _digest(props))

    @classmethod
    def of(
        cls, properties: Iterable[VariantProperty], label: str | None = None
    ) -> VariantDescription:
        """Build a description; properties are sorted, duplicates rejected.

        :raises InvalidProperty: on a duplicate property or a bad label.
        """
        props = tuple(properties)
        unique = tuple(sorted(set(props)))
        if len(unique) != len(props):
            dupes = sorted({str(p) for p in props if props.count(p) > 1})
            raise InvalidProperty(f"duplicate variant property: {', '.join(dupes)}")
        if label is None:
            label = _digest(unique) if unique else NULL_LABEL
        return cls(unique, label)

    @classmethod
    def null(cls) -> VariantDescription:
        """The null variant."""
        return cls((), NULL_LABEL)

    @classmethod
    def from_dict(
        cls, data: Mapping[str, Mapping[str, Iterable[str]]], label: str | None = None
    ) -> VariantDescription:
        """Build from the JSON shape ``{namespace: {feature: [values]}}``.

        :raises InvalidProperty: on a bad name or value, a duplicate, or a bare string where a
            list of values belongs (iterating it would yield its characters as values).
        """
        properties: list[VariantProperty] = []
        for namespace, features in data.items():
            for feature, values in features.items():
                if isinstance(values, str):
                    raise InvalidProperty(
                        f"values of {namespace} :: {feature} must be a list, not the string "
                        f"{_q(values)}"
                    )
                properties.extend(VariantProperty(namespace, feature, value) for value in values)
        return cls.of(properties, label)

    @classmethod
    def parse(cls, text: str) -> VariantDescription:
        """Parse ``label: p1; p2`` or ``p1; p2`` (default label); ``null:`` is the null variant."""
        label: str | None = None
        body = text.strip()
        head, sep, rest = body.partition(":")
        if sep and not rest.startswith(":") and LABEL_RE.fullmatch(head.strip()):
            label, body = head.strip(), rest
        parts = [part for part in (p.strip() for p in body.split(";")) if part]
        return cls.of((VariantProperty.parse(part) for part in parts), label)

    @property
    def hexdigest(self) -> str:
        """The 8-hex sha256 digest of the canonical property lines (variantlib's default label)."""
        return self._hexdigest

    @property
    def is_null(self) -> bool:
        return not self.properties

    @property
    def features(self) -> tuple[VariantFeature, ...]:
        """The distinct features, in sorted order."""
        return tuple(sorted({p.feature_key for p in self.properties}))

    @property
    def namespaces(self) -> tuple[str, ...]:
        return tuple(sorted({p.namespace for p in self.properties}))

    def values(self, feature: VariantFeature) -> tuple[str, ...]:
        """The values listed for *feature* (OR-ed), sorted."""
        return tuple(p.value for p in self.properties if p.feature_key == feature)

    def to_dict(self) -> dict[str, dict[str, list[str]]]:
        """The JSON shape: ``{namespace: {feature: [values sorted]}}``."""
        result: dict[str, dict[str, list[str]]] = {}
        for p in self.properties:
            result.setdefault(p.namespace, {}).setdefault(p.feature, []).append(p.value)
        return result

    def __str__(self) -> str:
        return f"{self.label}: {'; '.join(str(p) for p in self.properties)}".rstrip()

    def __repr__(self) -> str:
        return f"<VariantDescription({str(self)!r})>"
