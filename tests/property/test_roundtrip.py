"""Property-based: every layer-0 value object prints to text that parses back to itself."""

from __future__ import annotations

import random
import string

from hypothesis import given, settings
from hypothesis import strategies as st

from variant_bridge.filenames import WheelFilename
from variant_bridge.properties import (
    NULL_LABEL,
    VariantDescription,
    VariantFeature,
    VariantProperty,
)

_NAME_CHARS = string.ascii_lowercase + string.digits + "_"
names = st.text(_NAME_CHARS, min_size=1, max_size=12)
values = st.text(_NAME_CHARS + ".", min_size=1, max_size=12)
labels = st.text(_NAME_CHARS + ".", min_size=1, max_size=20).filter(lambda s: s != NULL_LABEL)
# Whitespace the parser must ignore around '::' (Python's \s, as variantlib uses it).
spaces = st.text(" \t\n\r\x0b\x0c\u00a0\u2003\u3000\x85", max_size=3)

features = st.builds(VariantFeature, names, names)
properties = st.builds(VariantProperty, names, names, values)


@st.composite
def descriptions(draw: st.DrawFn) -> VariantDescription:
    props = draw(st.lists(properties, max_size=6, unique=True))
    label = draw(st.none() | labels) if props else draw(st.sampled_from([None, NULL_LABEL]))
    return VariantDescription.of(props, label)


_SETTINGS = settings(max_examples=300, deadline=None)


@_SETTINGS
@given(features)
def test_feature_round_trips(feature: VariantFeature) -> None:
    assert VariantFeature.parse(str(feature)) == feature


@_SETTINGS
@given(properties, spaces, spaces, spaces, spaces)
def test_property_round_trips(prop: VariantProperty, a: str, b: str, c: str, d: str) -> None:
    assert VariantProperty.parse(str(prop)) == prop
    loose = f"{a}{prop.namespace}{b}::{c}{prop.feature}{d}::{a}{prop.value}{b}"
    assert VariantProperty.parse(loose) == prop


@_SETTINGS
@given(descriptions(), st.randoms(use_true_random=False))
def test_description_round_trips(description: VariantDescription, rnd: random.Random) -> None:
    assert VariantDescription.parse(str(description)) == description
    # The digest depends on the set of properties only, never on input order.
    shuffled = list(description.properties)
    rnd.shuffle(shuffled)
    assert VariantDescription.of(shuffled, description.label).hexdigest == description.hexdigest
    assert VariantDescription.from_dict(description.to_dict(), description.label) == description


_ALNUM = string.ascii_letters + string.digits
wheel_names = st.from_regex(r"[A-Za-z0-9](?:[A-Za-z0-9._]{0,10}[A-Za-z0-9])?", fullmatch=True)
versions = st.builds(
    lambda release, suffix: ".".join(map(str, release)) + suffix,
    st.lists(st.integers(0, 300), min_size=1, max_size=4),
    st.sampled_from(["", "rc1", ".post2", ".dev0", "+cu128", "+local.7", "a3"]),
)
builds = st.none() | st.from_regex(r"[0-9][A-Za-z0-9_.]{0,5}", fullmatch=True)
# Compressed tag sets (py2.py3) have no empty part: 'py3.' is not a tag.
python_tags = st.from_regex(r"[a-z][a-z0-9_]{0,4}(?:\.[a-z][a-z0-9_]{0,3})?", fullmatch=True)
tags = st.lists(st.text(_ALNUM + "_", min_size=1, max_size=7), min_size=1, max_size=2).map(".".join)


wheel_filenames = st.builds(
    WheelFilename,
    wheel_names,
    versions,
    builds,
    python_tags,
    tags,
    tags,
    st.none() | labels | st.just(NULL_LABEL),
)


@_SETTINGS
@given(wheel_filenames)
def test_wheel_filename_round_trips(wheel: WheelFilename) -> None:
    assert WheelFilename.parse(str(wheel)) == wheel
    assert str(WheelFilename.parse(str(wheel))) == str(wheel)
    assert WheelFilename.parse(wheel.base).label is None
