"""detect_environment(): layering of targets, overrides and detection (variant_bridge.detect)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from variant_bridge.detect import detect_environment
from variant_bridge.detect.machine import host_platform
from variant_bridge.environment import Environment, Source
from variant_bridge.errors import InvalidTarget

CUDA = "CONDA_OVERRIDE_CUDA"
ARCH = "CONDA_OVERRIDE_CUDA_ARCH"
NV_CUDA = "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION"
NV_ARCH = "NV_VARIANT_PROVIDER_FORCE_SM_ARCH"


def _rattler_detected() -> dict[str, str]:
    import rattler

    return {
        vp.into_generic().name.normalized: str(vp.into_generic())
        for vp in rattler.VirtualPackage.detect()
    }


def _vp(env: Environment, name: str) -> tuple[str, str] | None:
    vp = env.virtual_package(name)
    return None if vp is None else (str(vp), vp.source)


@pytest.mark.parametrize(
    ("targets", "variables", "expected"),
    [
        (  # --target must beat every variable
            ["cuda=12.8"],
            {CUDA: "12.6", NV_CUDA: "12.4"},
            ("__cuda=12.8=0", Source.TARGET),
        ),
        (  # CONDA_OVERRIDE_CUDA must beat the NVIDIA provider's variable
            [],
            {CUDA: "12.6", NV_CUDA: "12.4"},
            ("__cuda=12.6=0", Source.override(CUDA)),
        ),
        (  # the NVIDIA provider's variable must be honoured when conda's is unset
            [],
            {NV_CUDA: "12.4"},
            ("__cuda=12.4=0", Source.override(NV_CUDA)),
        ),
        (  # an empty CONDA_OVERRIDE_CUDA declares "no CUDA" and wins over NV_FORCE
            [],
            {CUDA: "", NV_CUDA: "12.4"},
            None,
        ),
        (  # an empty --target declares "no CUDA" and wins over CONDA_OVERRIDE_CUDA
            ["cuda="],
            {CUDA: "12.6"},
            None,
        ),
        (  # an empty NV variable is unset (the provider's rule), not "no CUDA"
            [],
            {CUDA: "12.6", NV_CUDA: ""},
            ("__cuda=12.6=0", Source.override(CUDA)),
        ),
    ],
)
def test_cuda_precedence(
    targets: list[str], variables: dict[str, str], expected: tuple[str, str] | None
) -> None:
    env = detect_environment(targets=targets, env=variables)
    assert _vp(env, "__cuda") == expected


@pytest.mark.parametrize(
    ("targets", "variables", "expected"),
    [
        (  # --target beats both variables
            ["cuda_arch=8.0"],
            {CUDA: "12.8", ARCH: "8.6", NV_ARCH: "9.0"},
            ("__cuda_arch=8.0=0", Source.TARGET),
        ),
        (  # CONDA_OVERRIDE_CUDA_ARCH beats NV_FORCE_SM_ARCH
            [],
            {CUDA: "12.8", ARCH: "8.6", NV_ARCH: "9.0"},
            ("__cuda_arch=8.6=0", Source.override(ARCH)),
        ),
        (  # NV_FORCE_SM_ARCH in CMake spelling, normalised
            [],
            {NV_CUDA: "12.8", NV_ARCH: "120"},
            ("__cuda_arch=12.0=0", Source.override(NV_ARCH)),
        ),
        (  # __cuda_arch without __cuda must be dropped (CEP 30)
            [],
            {CUDA: "", ARCH: "9.0"},
            None,
        ),
    ],
)
def test_cuda_arch_precedence(
    targets: list[str], variables: dict[str, str], expected: tuple[str, str] | None
) -> None:
    env = detect_environment(targets=targets, env=variables)
    assert _vp(env, "__cuda_arch") == expected


def test_dropped_cuda_arch_is_explained() -> None:
    env = detect_environment(env={CUDA: "", ARCH: "9.0"})
    assert "__cuda_arch from CONDA_OVERRIDE_CUDA_ARCH dropped: no __cuda" in env.notes


def test_target_cuda_arch_without_cuda_is_an_error() -> None:
    with pytest.raises(InvalidTarget, match=r"--target cuda_arch='9.0' needs __cuda"):
        detect_environment(targets=["cuda=", "cuda_arch=9.0"], env={})


@pytest.mark.parametrize(
    ("targets", "variables", "name", "expected_source"),
    [
        (["archspec=haswell"], {"CONDA_OVERRIDE_ARCHSPEC": "skylake"}, "__archspec", Source.TARGET),
        (
            [],
            {"CONDA_OVERRIDE_ARCHSPEC": "skylake"},
            "__archspec",
            Source.override("CONDA_OVERRIDE_ARCHSPEC"),
        ),
        (["glibc=2.17"], {"CONDA_OVERRIDE_GLIBC": "2.28"}, "__glibc", Source.TARGET),
        ([], {"CONDA_OVERRIDE_GLIBC": "2.28"}, "__glibc", Source.override("CONDA_OVERRIDE_GLIBC")),
        ([], {"CONDA_OVERRIDE_LINUX": "5.15"}, "__linux", Source.override("CONDA_OVERRIDE_LINUX")),
        ([], {}, "__glibc", Source.DETECTED),  # detection is the last layer
        ([], {}, "__archspec", Source.DETECTED),  # same for archspec
    ],
)
def test_other_facts_record_their_source(
    targets: list[str], variables: dict[str, str], name: str, expected_source: str
) -> None:
    if host_platform().split("-")[0] != "linux":
        pytest.skip("glibc/linux facts exist on Linux hosts only")
    env = detect_environment(targets=targets, env=variables)
    vp = env.virtual_package(name)
    assert vp is not None
    assert vp.source == expected_source


def test_archspec_value_is_the_build() -> None:
    env = detect_environment(targets=["archspec=haswell"], env={})
    assert str(env.archspec) == "__archspec=1=haswell"


def test_detection_is_rattlers_when_nothing_is_declared() -> None:
    env = detect_environment(env={})
    assert {vp.name: str(vp) for vp in env.virtual_packages} == _rattler_detected()
    assert env.origin == "this machine"
    assert env.platform == host_platform()


def test_env_mapping_is_hermetic(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CUDA, "12.8")
    monkeypatch.setenv("CONDA_OVERRIDE_GLIBC", "2.17")
    env = detect_environment(env={})
    assert {vp.name: str(vp) for vp in env.virtual_packages} == _rattler_detected()


def test_env_none_reads_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CUDA, "12.8")
    assert _vp(detect_environment(), "__cuda") == ("__cuda=12.8=0", Source.override(CUDA))


@pytest.mark.parametrize(
    ("variable", "value", "gone"),
    [
        ("CONDA_OVERRIDE_OSX", "13.0", "__osx"),  # rattler adds __osx on Linux; must be filtered
        ("CONDA_OVERRIDE_WIN", "10.0", "__win"),  # same for __win
    ],
)
def test_overrides_for_another_os_are_ignored(variable: str, value: str, gone: str) -> None:
    env = detect_environment(targets=["platform=linux-64"], env={variable: value})
    assert env.virtual_package(gone) is None
    assert f"{variable}={value!r} ignored: {gone} does not exist on linux-64" in env.notes


# (targets, --platform, the whole one-line message). One case per line.
NOT_ON_PLATFORM = [
    (
        ["platform=linux-64", "osx=14.1"],
        None,
        "--target osx='14.1': __osx does not exist on linux-64 (only osx-*)",
    ),  # another OS's package
    (
        ["cuda=12.9"],
        "osx-arm64",
        "--target cuda='12.9': __cuda does not exist on osx-arm64 (only linux-* and win-*)",
    ),  # hinted at --target platform although --platform was given
    (
        ["glibc=2.28"],
        "win-64",
        "--target glibc='2.28': __glibc does not exist on win-64 (only linux-*)",
    ),  # same for glibc on Windows
    (
        ["archspec=m1"],
        "linux-64",
        "--target archspec='m1': m1 is an aarch64 microarchitecture but linux-64 is x86_64",
    ),  # accepted, unlike translate --from-conda with the same fact
]


@pytest.mark.parametrize(("targets", "platform", "message"), NOT_ON_PLATFORM)
def test_target_that_cannot_exist_on_the_platform_is_an_error(
    targets: list[str], platform: str | None, message: str
) -> None:
    with pytest.raises(InvalidTarget) as info:
        detect_environment(targets=targets, platform=platform, env={})
    assert str(info.value) == message


def test_target_for_this_machine_says_the_platform_was_chosen() -> None:
    other = "__osx" if host_platform().startswith("linux") else "__glibc"
    key = other[2:]
    with pytest.raises(InvalidTarget) as info:
        detect_environment(targets=[f"{key}=2.28"], env={})
    assert str(info.value).endswith(
        f"; {host_platform()} is this machine's platform: pass --platform to describe another"
    )


def test_shadowed_override_is_explained() -> None:
    env = detect_environment(env={CUDA: "12.6", NV_CUDA: "12.9"})
    assert f"{NV_CUDA}='12.9' overridden by {CUDA}='12.6'" in env.notes


@pytest.mark.parametrize(
    ("targets", "variables", "expected"),
    [
        (  # another platform: pixi's defaults, nothing from this machine
            ["platform=linux-aarch64"],
            {},
            {
                "__archspec": ("__archspec=1=aarch64", Source.PLATFORM_DEFAULT),
                "__glibc": ("__glibc=2.28=0", Source.PLATFORM_DEFAULT),
                "__linux": ("__linux=4.18=0", Source.PLATFORM_DEFAULT),
                "__unix": ("__unix=0=0", Source.PLATFORM_DEFAULT),
            },
        ),
        (  # a declared CUDA machine of another platform
            ["platform=linux-aarch64", "cuda=12.8", "cuda_arch=9.0", "archspec=neoverse_v2"],
            {"CONDA_OVERRIDE_GLIBC": "2.34"},
            {
                "__archspec": ("__archspec=1=neoverse_v2", Source.TARGET),
                "__cuda": ("__cuda=12.8=0", Source.TARGET),
                "__cuda_arch": ("__cuda_arch=9.0=0", Source.TARGET),
                "__glibc": ("__glibc=2.34=0", Source.override("CONDA_OVERRIDE_GLIBC")),
                "__linux": ("__linux=4.18=0", Source.PLATFORM_DEFAULT),
                "__unix": ("__unix=0=0", Source.PLATFORM_DEFAULT),
            },
        ),
        (  # a mac: no glibc/linux/cuda, __osx from the target
            ["platform=osx-arm64", "osx=14.1"],
            {CUDA: "12.8"},
            {
                "__archspec": ("__archspec=1=m1", Source.PLATFORM_DEFAULT),
                "__osx": ("__osx=14.1=0", Source.TARGET),
                "__unix": ("__unix=0=0", Source.PLATFORM_DEFAULT),
            },
        ),
        (  # Windows: __win only when declared, no __unix
            ["platform=win-64", "win=10.0.22631", "cuda=12.8"],
            {},
            {
                "__archspec": ("__archspec=1=x86_64", Source.PLATFORM_DEFAULT),
                "__cuda": ("__cuda=12.8=0", Source.TARGET),
                "__win": ("__win=10.0.22631=0", Source.TARGET),
            },
        ),
    ],
)
def test_another_platform_uses_declarations_and_defaults(
    targets: list[str], variables: dict[str, str], expected: dict[str, tuple[str, str]]
) -> None:
    env = detect_environment(targets=targets, env=variables)
    assert {vp.name: (str(vp), vp.source) for vp in env.virtual_packages} == expected
    assert env.origin == f"declared targets for {env.platform}"


def test_platform_keyword_is_a_target_platform() -> None:
    env = detect_environment(platform="osx-arm64", env={})
    assert env.platform == "osx-arm64"
    assert env.virtual_package("__glibc") is None


def test_python_target() -> None:
    assert detect_environment(targets=["python=3.13"], env={}).python == "3.13"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"env": {CUDA: "abc"}}, "CONDA_OVERRIDE_CUDA='abc': expected a CUDA version like 12.8"),
        ({"env": {NV_ARCH: "sm90"}}, "NV_VARIANT_PROVIDER_FORCE_SM_ARCH='sm90': expected"),
        ({"targets": ["cuda=abc"]}, "--target cuda='abc': expected a CUDA version like 12.8"),
        ({"platform": "linux_64"}, "--platform='linux_64': expected a conda platform"),
        (  # two spellings of the platform must agree
            {"platform": "linux-64", "targets": ["platform=osx-arm64"]},
            "--platform 'linux-64' and --target platform='osx-arm64' disagree",
        ),
        ({"prefix": "/p", "lockfile": "/l"}, "--prefix and --lockfile are mutually exclusive"),
        ({"environment": "cuda"}, "--environment 'cuda' needs --lockfile"),
    ],
)
def test_invalid_input(kwargs: dict[str, object], message: str) -> None:
    kwargs.setdefault("env", {})
    with pytest.raises(InvalidTarget) as info:
        detect_environment(**kwargs)  # type: ignore[arg-type]
    assert str(info.value).startswith(message)


def test_invalid_override_fails_before_reading_the_prefix() -> None:
    # Bad input is reported before anything is read.
    with pytest.raises(InvalidTarget, match="CONDA_OVERRIDE_CUDA='abc'"):
        detect_environment(prefix="/does/not/exist", env={CUDA: "abc"})


def test_import_and_default_detection_stay_light() -> None:
    code = (
        "import sys\n"
        "import variant_bridge.detect as d\n"
        "print('rattler' in sys.modules, 'archspec' in sys.modules)\n"
        "d.detect_environment(env={})\n"
        "print('archspec' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == ["False", "False", "False"]
