"""Layer 0: variant properties, features, labels and descriptions as PEP 825 defines them."""

from __future__ import annotations

from typing import Any

import pytest

from variant_bridge.errors import InvalidProperty
from variant_bridge.properties import (
    LABEL_RE,
    NULL_LABEL,
    VariantDescription,
    VariantFeature,
    VariantProperty,
    validate_label,
)

LB = "nvidia :: cuda_version_lower_bound"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "nvidia :: cuda_version_lower_bound :: 12.8",
            ("nvidia", "cuda_version_lower_bound", "12.8"),
        ),  # canonical
        ("nvidia::sm_arch::90_real", ("nvidia", "sm_arch", "90_real")),  # no whitespace around ::
        ("  nvidia ::sm_arch::   90_real  ", ("nvidia", "sm_arch", "90_real")),  # uneven, padded
        ("nvidia\t::\tsm_arch\t::\t90_real", ("nvidia", "sm_arch", "90_real")),  # tabs
        (
            "nvidia\n::\nsm_arch :: 90_real\n",
            ("nvidia", "sm_arch", "90_real"),
        ),  # newlines count as \s
        ("nvidia\u00a0::\u3000sm_arch :: 90_real", ("nvidia", "sm_arch", "90_real")),  # unicode \s
        ("x86_64 :: level :: v3", ("x86_64", "level", "v3")),  # digits and _ in a namespace
        ("blas :: library :: mkl.2025.1", ("blas", "library", "mkl.2025.1")),  # dots in a value
        ("a :: b :: .", ("a", "b", ".")),  # a value may be a lone dot (regex [a-z0-9_.]+)
        ("0 :: _ :: 0", ("0", "_", "0")),  # digit-only / underscore-only names
    ],
)
def test_property_parses(text: str, expected: tuple[str, str, str]) -> None:
    prop = VariantProperty.parse(text)
    assert (prop.namespace, prop.feature, prop.value) == expected
    assert str(prop) == " :: ".join(expected)  # always printed with exactly one space each side
    assert VariantProperty.parse(str(prop)) == prop


@pytest.mark.parametrize(
    "text",
    [
        "",  # empty
        "   ",  # whitespace only
        "nvidia :: sm_arch",  # missing value
        "nvidia :: sm_arch :: 90_real :: extra",  # one part too many
        "NVIDIA :: sm_arch :: 90_real",  # uppercase namespace
        "nvidia :: SM_ARCH :: 90_real",  # uppercase feature
        "nvidia :: sm_arch :: 90_REAL",  # uppercase value
        "nvidia-gpu :: sm_arch :: 90_real",  # dash in namespace
        "nvidia :: sm-arch :: 90_real",  # dash in feature
        "nvidia :: sm_arch :: 90-real",  # dash in value
        "nv.idia :: sm_arch :: 90_real",  # dot in namespace (only values may have dots)
        "nvidia :: sm.arch :: 90_real",  # dot in feature
        ":: sm_arch :: 90_real",  # empty namespace
        "nvidia ::  :: 90_real",  # empty feature
        "nvidia :: sm_arch :: ",  # empty value
        "nvidia : sm_arch : 90_real",  # single colons
        "nvidia ::: sm_arch :: 90_real",  # triple colon
        "nvidia :: sm arch :: 90_real",  # space inside a name
        "nvidiä :: sm_arch :: 90_real",  # non-ASCII letter
        "nvidia :: sm_arch :: 90_real\x00",  # NUL is not whitespace
        "nvidia\u200b:: sm_arch :: 90_real",  # zero-width space is not whitespace
        "nvidia ：： sm_arch ：： 90_real",  # fullwidth colons
    ],
)
def test_property_rejects(text: str) -> None:
    with pytest.raises(InvalidProperty, match="invalid variant property"):
        VariantProperty.parse(text)


@pytest.mark.parametrize(
    ("parts", "message"),
    [
        (("NVIDIA", "sm_arch", "90_real"), "invalid namespace 'NVIDIA'"),  # uppercase
        (
            (" nvidia", "sm_arch", "90_real"),
            "invalid namespace ' nvidia'",
        ),  # constructor never strips
        (("nvidia", "", "90_real"), "invalid feature name ''"),  # empty feature
        (("nvidia", "sm_arch", "9.0-real"), "invalid value '9.0-real'"),  # dash in value
        (("nvidia", "sm_arch", 90), "invalid value 90"),  # not a string
    ],
)
def test_property_constructor_validates(parts: tuple[object, object, object], message: str) -> None:
    with pytest.raises(InvalidProperty, match=message):
        VariantProperty(*parts)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("nvidia :: sm_arch", ("nvidia", "sm_arch")),  # canonical
        ("nvidia::sm_arch", ("nvidia", "sm_arch")),  # no whitespace
        (" \tnvidia  ::sm_arch\n", ("nvidia", "sm_arch")),  # padded
    ],
)
def test_feature_parses(text: str, expected: tuple[str, str]) -> None:
    feature = VariantFeature.parse(text)
    assert (feature.namespace, feature.feature) == expected
    assert str(feature) == " :: ".join(expected)
    assert VariantProperty.parse(f"{text} :: 1").feature_key == feature


@pytest.mark.parametrize(
    "text",
    [
        "nvidia",  # no feature
        "nvidia :: sm_arch :: 90_real",  # a property is not a feature
        "nvidia :: ",  # empty feature
        "Nvidia :: sm_arch",  # uppercase
        "nvidia :: sm.arch",  # dot in a feature name
        "nvidia : sm_arch",  # single colon
    ],
)
def test_feature_rejects(text: str) -> None:
    with pytest.raises(InvalidProperty, match="invalid variant feature"):
        VariantFeature.parse(text)


@pytest.mark.parametrize(
    "label",
    [
        "cu128",  # typical
        "cu12.8",  # dots
        "x86_64_v3",  # underscores
        "0",  # one character
        "39bc0ddc",  # a hash label
        "a" * 40,  # PEP 825 dropped PEP 817's 16-character limit
        NULL_LABEL,  # valid as a label; the description decides whether it fits
    ],
)
def test_valid_labels(label: str) -> None:
    assert validate_label(label) == label
    assert LABEL_RE.fullmatch(label)


@pytest.mark.parametrize(
    "label",
    [
        "",  # empty
        "CU128",  # uppercase
        "cu-128",  # dash (separates filename parts)
        "cu 128",  # space
        "cu128\n",  # trailing newline must not slip through a $-anchored match
        "cuä",  # non-ASCII
        None,  # not a string
    ],
)
def test_invalid_labels(label: str) -> None:
    with pytest.raises(InvalidProperty, match="invalid variant label"):
        validate_label(label)


def _props(*texts: str) -> list[VariantProperty]:
    return [VariantProperty.parse(text) for text in texts]


@pytest.mark.parametrize(
    ("texts", "digest"),
    [
        ((f"{LB} :: 12.8",), "f839a2dd"),  # the spec's single-property example
        (
            (f"{LB} :: 12.6", "nvidia :: sm_arch :: 80_real", "nvidia :: sm_arch :: 90_real"),
            "39bc0ddc",
        ),  # variantlib make-variant output
        (
            ("nvidia::sm_arch::90_real", "nvidia :: sm_arch :: 80_real", f"{LB}::12.6"),
            "39bc0ddc",
        ),  # same set, other order and spacing
        ((), "e3b0c442"),  # sha256 of "": the null variant
    ],
)
def test_hexdigest(texts: tuple[str, ...], digest: str) -> None:
    description = VariantDescription.of(_props(*texts))
    assert description.hexdigest == digest
    assert description.label == (digest if texts else NULL_LABEL)  # the default label


def test_properties_sort_as_plain_strings() -> None:
    description = VariantDescription.of(
        _props(
            "nvidia :: sm_arch :: 90_real",
            "amd :: gfx_arch :: gfx942",
            "nvidia :: sm_arch :: 100_real",
            f"{LB} :: 12.8",
            "nvidia :: sm_arch :: 80_real",
        )
    )
    assert [str(p) for p in description.properties] == [
        "amd :: gfx_arch :: gfx942",
        f"{LB} :: 12.8",
        "nvidia :: sm_arch :: 100_real",  # "1" < "8" < "9": string order, not numeric
        "nvidia :: sm_arch :: 80_real",
        "nvidia :: sm_arch :: 90_real",
    ]
    assert description.namespaces == ("amd", "nvidia")
    assert [str(f) for f in description.features] == [
        "amd :: gfx_arch",
        LB,
        "nvidia :: sm_arch",
    ]
    sm_arch = VariantFeature("nvidia", "sm_arch")
    assert description.values(sm_arch) == ("100_real", "80_real", "90_real")


@pytest.mark.parametrize(
    ("texts", "label", "message"),
    [
        ((), "cu128", "null variant .* must use the label 'null'"),  # empty needs null
        ((f"{LB} :: 12.8",), "null", "reserved for the null variant"),  # null needs empty
        ((f"{LB} :: 12.8",), "CU128", "invalid variant label 'CU128'"),  # bad label
        ((f"{LB} :: 12.8",), "", "invalid variant label ''"),  # empty label (None means default)
        ((f"{LB} :: 12.8", f"{LB}::12.8"), None, "duplicate variant property"),  # same twice
    ],
)
def test_description_rejects(texts: tuple[str, ...], label: str | None, message: str) -> None:
    with pytest.raises(InvalidProperty, match=message):
        VariantDescription.of(_props(*texts), label)


def test_description_constructor_requires_canonical_tuple() -> None:
    a, b = _props(f"{LB} :: 12.8", "nvidia :: sm_arch :: 90_real")
    with pytest.raises(InvalidProperty, match="sorted and unique"):
        VariantDescription((b, a), "cu128")  # unsorted
    with pytest.raises(InvalidProperty, match="sorted and unique"):
        VariantDescription((a, a), "cu128")  # duplicate
    with pytest.raises(InvalidProperty, match="tuple of VariantProperty"):
        VariantDescription([a], "cu128")  # type: ignore[arg-type]  # a list is not canonical
    assert VariantDescription((a, b), "cu128") == VariantDescription.of([b, a], "cu128")


def test_null_variant() -> None:
    null = VariantDescription.null()
    assert (null.label, null.properties, null.is_null, null.hexdigest) == (
        "null",
        (),
        True,
        "e3b0c442",
    )
    assert null == VariantDescription.of([]) == VariantDescription.from_dict({}, None)
    assert str(null) == "null:"
    assert VariantDescription.parse("null:") == null
    assert VariantDescription.parse("") == null


@pytest.mark.parametrize(
    ("text", "label", "properties"),
    [
        (f"cu128: {LB} :: 12.8", "cu128", (f"{LB} :: 12.8",)),  # labelled
        (f"  cu128 :{LB}::12.8 ; ", "cu128", (f"{LB} :: 12.8",)),  # spacing and a trailing ;
        (f"{LB} :: 12.8", "f839a2dd", (f"{LB} :: 12.8",)),  # no label: the hash
        (f"{LB}::12.8", "f839a2dd", (f"{LB} :: 12.8",)),  # first ':' is part of '::'
        (
            f"nvidia :: sm_arch :: 90_real; {LB} :: 12.6; nvidia :: sm_arch :: 80_real",
            "39bc0ddc",
            (f"{LB} :: 12.6", "nvidia :: sm_arch :: 80_real", "nvidia :: sm_arch :: 90_real"),
        ),  # several, unsorted
        ("cu12.8: nvidia :: a :: b", "cu12.8", ("nvidia :: a :: b",)),  # dotted label
    ],
)
def test_description_parse(text: str, label: str, properties: tuple[str, ...]) -> None:
    description = VariantDescription.parse(text)
    assert description.label == label
    assert tuple(str(p) for p in description.properties) == properties
    assert VariantDescription.parse(str(description)) == description


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("cu128: nvidia :: sm_arch", "invalid variant property"),  # a property lacks its value
        ("CU128: nvidia :: a :: b", "invalid variant property"),  # bad label is not taken as one
        ("cu128:", "must use the label 'null'"),  # labelled but empty
        ("null: nvidia :: a :: b", "reserved for the null variant"),  # null with a property
    ],
)
def test_description_parse_rejects(text: str, message: str) -> None:
    with pytest.raises(InvalidProperty, match=message):
        VariantDescription.parse(text)


def test_dict_shape_round_trips() -> None:
    data = {"nvidia": {"sm_arch": ["90_real", "80_real"], "cuda_version_lower_bound": ["12.6"]}}
    description = VariantDescription.from_dict(data)
    assert description.label == "39bc0ddc"
    assert description.to_dict() == {
        "nvidia": {"cuda_version_lower_bound": ["12.6"], "sm_arch": ["80_real", "90_real"]}
    }
    assert VariantDescription.from_dict(description.to_dict(), "x") == VariantDescription.of(
        description.properties, "x"
    )


def test_from_dict_rejects_a_bare_string_of_values() -> None:
    # Iterating "90" would otherwise give the properties "... :: 9" and "... :: 0".
    with pytest.raises(InvalidProperty, match="must be a list, not the string '90'"):
        VariantDescription.from_dict({"nvidia": {"sm_arch": "90"}})


def test_value_objects_are_immutable_and_hashable() -> None:
    prop = VariantProperty.parse(f"{LB} :: 12.8")
    with pytest.raises(AttributeError):
        prop.value = "12.9"  # type: ignore[misc]
    description = VariantDescription.of([prop], "cu128")
    assert {prop, VariantProperty.parse(f"{LB}::12.8")} == {prop}
    assert {description, VariantDescription.of([prop], "cu128")} == {description}
    assert repr(prop) == "<VariantProperty('nvidia :: cuda_version_lower_bound :: 12.8')>"


@pytest.mark.parametrize(
    "make",
    [
        lambda: VariantDescription.parse("9" * 20000 + ":"),  # a label, no properties
        lambda: VariantDescription.from_dict({"nvidia": {"sm_arch": "9" * 20000}}),
    ],
)
def test_an_error_quoting_a_long_label_or_value_stays_one_short_line(make: Any) -> None:
    """The fuzz run's 20,000-digit label made a 20,066-character error: the label is quoted
    shortened, with its length."""
    with pytest.raises(InvalidProperty) as raised:
        make()
    message = str(raised.value)
    assert len(message) < 400
    assert "20000 characters" in message
