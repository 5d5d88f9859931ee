"""Layer 0: wheel filenames with an optional variant label (PEP 825), unparseable by packaging."""

from __future__ import annotations

import pytest
from packaging.tags import Tag

from variant_bridge.errors import InvalidWheelFilename
from variant_bridge.filenames import WheelFilename

#         filename, (name, version, build, python, abi, platform, label)
VALID = [
    (
        "torch-2.9.0-cp312-cp312-manylinux_2_28_x86_64-cu128.whl",
        ("torch", "2.9.0", None, "cp312", "cp312", "manylinux_2_28_x86_64", "cu128"),
    ),  # 6 parts: a variant label
    (
        "tinyvar-0.1.0-py3-none-any.whl",
        ("tinyvar", "0.1.0", None, "py3", "none", "any", None),
    ),  # 5 parts: non-variant
    (
        "tinyvar-0.1.0-py3-none-any-null.whl",
        ("tinyvar", "0.1.0", None, "py3", "none", "any", "null"),
    ),  # the null variant is a variant wheel
    (
        "tinyvar-0.1.0-1-py3-none-any.whl",
        ("tinyvar", "0.1.0", "1", "py3", "none", "any", None),
    ),  # 6 parts: a build tag starts with a digit, a python tag must not
    (
        "tinyvar-0.1.0-1_abc-py3-none-any-cu128.whl",
        ("tinyvar", "0.1.0", "1_abc", "py3", "none", "any", "cu128"),
    ),  # 7 parts: build tag and label
    (
        "numpy-2.3.2-cp313-cp313t-musllinux_1_2_x86_64-x86_64_v3.whl",
        ("numpy", "2.3.2", None, "cp313", "cp313t", "musllinux_1_2_x86_64", "x86_64_v3"),
    ),  # PEP 825's example
    (
        "tinyvar-0.1.0-py2.py3-none-any-39bc0ddc.whl",
        ("tinyvar", "0.1.0", None, "py2.py3", "none", "any", "39bc0ddc"),
    ),  # compressed tag set and a hash label
    (
        "Foo_Bar-1.0-py3-none-any.whl",
        ("Foo_Bar", "1.0", None, "py3", "none", "any", None),
    ),  # mixed case name
    (
        "pkg-1.0+cu128-py3-none-any.whl",
        ("pkg", "1.0+cu128", None, "py3", "none", "any", None),
    ),  # a local version is not a label
    (
        "pkg-1.0-py3-none-any-cu12.8.whl",
        ("pkg", "1.0", None, "py3", "none", "any", "cu12.8"),
    ),  # dotted label
    (
        "zope.interface-6.0-cp311-cp311-win_amd64.whl",
        ("zope.interface", "6.0", None, "cp311", "cp311", "win_amd64", None),
    ),  # older tools left dots in names
]


@pytest.mark.parametrize(("filename", "parts"), VALID)
def test_parses(filename: str, parts: tuple[str | None, ...]) -> None:
    wheel = WheelFilename.parse(filename)
    assert (
        wheel.name,
        wheel.version,
        wheel.build,
        wheel.python_tag,
        wheel.abi_tag,
        wheel.platform_tag,
        wheel.label,
    ) == parts
    assert str(wheel) == filename
    assert WheelFilename.parse(str(wheel)) == wheel
    assert wheel.is_variant == (wheel.label is not None)


@pytest.mark.parametrize(
    ("filename", "message"),
    [
        ("tinyvar-0.1.0-py3-none-any.tar.gz", "must end in '.whl'"),  # not a wheel
        ("tinyvar-0.1.0-py3-none-any-cu128.WHL", "must end in '.whl'"),  # suffix is case-sensitive
        ("tinyvar-0.1.0-py3-none.whl", "got 4"),  # too few parts
        ("a-1-2-py3-none-any-x-y.whl", "got 8"),  # too many parts
        ("tinyvar-0.1.0-py3-none-any-CU128.whl", "variant label 'CU128'"),  # uppercase label
        ("tinyvar-0.1.0-py3-none-any-.whl", "variant label ''"),  # empty label
        (
            "tinyvar-0.1.0-x1-py3-none-any-cu128.whl",
            "build tag 'x1' must start with a digit",
        ),  # 7 parts
        (
            "a-1.0-1-3py-none-any-cu128.whl",
            "python tag '3py' must not start with a digit",
        ),  # PEP 825
        ("tinyvar-notaversion-py3-none-any.whl", "not a PEP 440 version"),  # bad version
        ("-0.1.0-py3-none-any.whl", "bad name ''"),  # empty name
        ("dir/tinyvar-0.1.0-py3-none-any.whl", "bad name 'dir/tinyvar'"),  # a path, not a name
        ("tinyvar-0.1.0-py3-no!ne-any.whl", "bad abi tag 'no!ne'"),  # bad tag characters
        ("tinyvar-0.1.0-py3-none--cu128.whl", "bad platform tag ''"),  # empty part
    ],
)
def test_rejects(filename: str, message: str) -> None:
    with pytest.raises(InvalidWheelFilename, match=message.replace("(", r"\(")) as info:
        WheelFilename.parse(filename)
    assert repr(filename) in str(info.value)  # the message names the input
    assert "\n" not in str(info.value)


def test_derived_views() -> None:
    wheel = WheelFilename.parse("Foo_Bar-1.0-1-py2.py3-none-any-cu128.whl")
    assert wheel.project == "foo-bar"
    assert str(wheel.parsed_version) == "1.0"
    assert wheel.tags == frozenset({Tag("py2", "none", "any"), Tag("py3", "none", "any")})
    assert wheel.base == "Foo_Bar-1.0-1-py2.py3-none-any.whl"  # what non-variant tools see
    assert WheelFilename.parse(wheel.base).label is None
