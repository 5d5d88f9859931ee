"""Wheel platform tags: what an environment's platform accepts, and why a wheel does not fit
(variant_bridge.platform_tags)."""

from __future__ import annotations

import pytest
from packaging.tags import Tag

from variant_bridge.environment import Environment, VirtualPackage
from variant_bridge.filenames import WheelFilename
from variant_bridge.platform_tags import TargetPython, platform_tags, tag_mismatch, target_tags

LINUX = Environment("linux-64", (VirtualPackage("__glibc", "2.28"),))


def test_manylinux_tags_follow_glibc() -> None:
    tags = platform_tags(LINUX)
    assert tags[0] == "manylinux_2_28_x86_64"
    assert "manylinux_2_29_x86_64" not in tags  # newer than the environment's glibc
    # legacy aliases sit right after the glibc they stand for
    assert tags.index("manylinux2014_x86_64") == tags.index("manylinux_2_17_x86_64") + 1
    assert tags.index("manylinux1_x86_64") == tags.index("manylinux_2_5_x86_64") + 1
    assert tags[-1] == "linux_x86_64"


@pytest.mark.parametrize(
    ("env", "first", "absent"),
    [
        (Environment("linux-64"), "linux_x86_64", "manylinux_2_17_x86_64"),  # no __glibc: no manylinux
        (
            Environment("linux-aarch64", (VirtualPackage("__glibc", "2.17"),)),
            "manylinux_2_17_aarch64",
            "manylinux2010_aarch64",  # manylinux2010 never existed for aarch64
        ),
        (Environment("osx-arm64", (VirtualPackage("__osx", "13.0"),)), "macosx_13_0_arm64", "macosx_14_0_arm64"),
        (Environment("win-64"), "win_amd64", "linux_x86_64"),
    ],
)  # fmt: skip
def test_platform_tags_per_platform(env: Environment, first: str, absent: str) -> None:
    tags = platform_tags(env)
    assert tags[0] == first
    assert absent not in tags


def test_target_tags_for_another_python_prefer_its_own_abi() -> None:
    tags = target_tags(TargetPython.parse("3.12.7"), LINUX)
    assert tags[0] == Tag("cp312", "cp312", "manylinux_2_28_x86_64")
    assert Tag("cp311", "abi3", "manylinux_2_17_x86_64") in tags
    assert Tag("cp313", "cp313", "manylinux_2_28_x86_64") not in tags
    assert tags.index(Tag("py3", "none", "any")) > tags.index(Tag("cp312", "none", "any"))


CP312_LINUX = [Tag("cp312", "cp312", "manylinux_2_28_x86_64"), Tag("py3", "none", "any")]


# (wheel, the end of the reason). One case per line.
MISMATCHES = [
    ("t-1.0-cp313-cp313-manylinux_2_28_x86_64.whl", "(python tag cp313 not accepted)"),  # Python
    ("t-1.0-cp312-abi3-manylinux_2_28_x86_64.whl", "(abi tag abi3 not accepted)"),  # ABI
    ("t-1.0-cp312-cp312-manylinux_2_28_aarch64.whl", "(built for aarch64 CPUs, the target is x86_64)"),  # another CPU: no glibc hint
    ("t-1.0-cp312-cp312-macosx_13_0_arm64.whl", "(built for macOS, the target is Linux)"),  # another OS
    ("t-1.0-cp312-cp312-win_amd64.whl", "(built for Windows, the target is Linux)"),  # Windows
    ("t-1.0-cp312-cp312-manylinux_2_34_x86_64.whl", "(platform tag manylinux_2_34_x86_64 not accepted, needs glibc >=2.34)"),  # glibc too old
    ("t-1.0-cp312-cp312-musllinux_1_2_x86_64.whl", "(platform tag musllinux_1_2_x86_64 not accepted)"),  # musl: no version to name
    ("t-1.0-cp312-cp312-win32.whl", "(built for Windows, the target is Linux)"),  # a tag without an underscore
]  # fmt: skip


@pytest.mark.parametrize(("wheel", "reason"), MISMATCHES)
def test_tag_mismatch_names_what_differs(wheel: str, reason: str) -> None:
    why = tag_mismatch(WheelFilename.parse(wheel), CP312_LINUX)
    assert why.startswith("no matching platform tag: wheel is ")
    assert why.endswith(reason)


def test_tag_mismatch_reads_legacy_aliases_and_macos_versions() -> None:
    old_glibc = [Tag("cp312", "cp312", "manylinux_2_5_x86_64")]
    why = tag_mismatch(WheelFilename.parse("t-1.0-cp312-cp312-manylinux2014_x86_64.whl"), old_glibc)
    assert why.endswith("(platform tag manylinux2014_x86_64 not accepted, needs glibc >=2.17)")
    mac = [Tag("cp312", "cp312", "macosx_11_0_arm64")]
    why = tag_mismatch(WheelFilename.parse("t-1.0-cp312-cp312-macosx_14_0_arm64.whl"), mac)
    assert why.endswith("(platform tag macosx_14_0_arm64 not accepted, needs macOS >=14.0)")


def test_tag_mismatch_without_target_tags() -> None:
    wheel = WheelFilename.parse("t-1.0-py3-none-any.whl")
    assert tag_mismatch(wheel, []) == (
        "no matching platform tag: wheel is py3-none-any, the target accepts no tags"
    )
