"""This machine through py-rattler, and per-platform rules (variant_bridge.detect.machine)."""

from __future__ import annotations

import pytest

from variant_bridge.detect.machine import (
    applies_to,
    detect_virtual_packages,
    host_platform,
    platform_defaults,
)
from variant_bridge.environment import Source
from variant_bridge.virtual_packages import KNOWN_PLATFORMS


def _rattler_detect() -> set[str]:
    import rattler

    return {str(vp.into_generic()) for vp in rattler.VirtualPackage.detect()}


def test_host_platform_agrees_with_rattler() -> None:
    import rattler

    assert host_platform() == str(rattler.Subdir.current())


def test_detection_equals_rattler_without_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    # Variables in os.environ must not leak into detection: overrides are layered by the caller.
    monkeypatch.setenv("CONDA_OVERRIDE_GLIBC", "2.17")
    monkeypatch.setenv("CONDA_OVERRIDE_CUDA", "12.8")
    detected = detect_virtual_packages()
    assert {str(vp) for vp in detected} == _rattler_detect()
    assert {vp.source for vp in detected} == {Source.DETECTED}


def test_decided_cuda_skips_the_probe() -> None:
    names = {vp.name: vp.version for vp in detect_virtual_packages(cuda="12.4")}
    assert names["__cuda"] == "12.4"


def test_decided_absent_cuda_drops_cuda_and_arch() -> None:
    names = {vp.name for vp in detect_virtual_packages(cuda="")}
    assert "__cuda" not in names
    assert "__cuda_arch" not in names


@pytest.mark.parametrize(
    ("name", "platform", "expected"),
    [
        ("__osx", "linux-64", False),  # rattler adds __osx from CONDA_OVERRIDE_OSX on Linux
        ("__win", "linux-64", False),  # same for __win
        ("__glibc", "osx-arm64", False),  # no glibc on macOS
        ("__linux", "win-64", False),  # no Linux kernel on Windows
        ("__cuda", "osx-arm64", False),  # no CUDA driver on macOS
        ("__cuda_arch", "osx-64", False),  # no CUDA GPU on macOS
        ("__unix", "win-64", False),  # Windows is not unix
        ("__cuda", "linux-aarch64", True),  # CUDA on ARM Linux (Grace) dropped
        ("__cuda", "win-64", True),  # CUDA on Windows dropped
        ("__unix", "osx-arm64", True),  # macOS is unix
        ("__glibc", "linux-ppc64le", True),  # glibc on every Linux
        ("__archspec", "win-arm64", True),  # archspec everywhere
        ("__somethingnew", "linux-64", True),  # unknown names must be kept, not guessed away
    ],
)
def test_applies_to(name: str, platform: str, expected: bool) -> None:
    assert applies_to(name, platform) is expected


@pytest.mark.parametrize(
    ("platform", "expected"),
    [
        (  # pixi's linux defaults
            "linux-64",
            ["__archspec=1=x86_64", "__glibc=2.28=0", "__linux=4.18=0", "__unix=0=0"],
        ),
        (  # the ARM minimum
            "linux-aarch64",
            ["__archspec=1=aarch64", "__glibc=2.28=0", "__linux=4.18=0", "__unix=0=0"],
        ),
        ("osx-arm64", ["__archspec=1=m1", "__osx=13.0=0", "__unix=0=0"]),  # Apple silicon
        ("osx-64", ["__archspec=1=x86_64", "__osx=13.0=0", "__unix=0=0"]),  # Intel mac
        ("win-64", ["__archspec=1=x86_64", "__win=10.0=0"]),  # pixi writes __win=10.0 (v7 locks)
    ],
)
def test_platform_defaults(platform: str, expected: list[str]) -> None:
    defaults = platform_defaults(platform)
    assert sorted(str(vp) for vp in defaults) == expected
    assert {vp.source for vp in defaults} == {Source.PLATFORM_DEFAULT}


def test_platform_default_archspec_names_exist_in_archspec() -> None:
    import archspec.cpu

    for platform in sorted(KNOWN_PLATFORMS):
        for vp in platform_defaults(platform):
            if vp.name == "__archspec":
                assert vp.build in archspec.cpu.TARGETS, platform
