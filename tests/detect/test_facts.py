"""Declared facts (variant_bridge.detect.facts): ``--target K=V`` parsing and value checks, and
override variables read from an explicit mapping."""

from __future__ import annotations

import pytest

from variant_bridge.detect.facts import (
    Fact,
    conda_override_facts,
    normalize_sm_arch,
    parse_targets,
    provider_override_facts,
    target_keys,
)
from variant_bridge.environment import Source
from variant_bridge.errors import InvalidTarget, VariantBridgeError
from variant_bridge.mappings import load_tables
from variant_bridge.virtual_packages import KNOWN_PLATFORMS


@pytest.mark.parametrize(
    ("items", "expected"),
    [
        (["cuda=12.8"], {"cuda": "12.8"}),  # the basic form is lost
        (["cuda=12"], {"cuda": "12"}),  # a major-only CUDA (pixi's `cuda = "12"`) is rejected
        (["cuda_arch=9.0", "cuda=12.8"], {"cuda_arch": "9.0", "cuda": "12.8"}),  # several keys lost
        (["cuda-arch=12.0"], {"cuda_arch": "12.0"}),  # dash spelling of the key rejected
        (["__cuda=12.8"], {"cuda": "12.8"}),  # raw virtual package name not accepted as alias
        (["CUDA=12.8"], {"cuda": "12.8"}),  # an upper-case key rejected
        (["archspec=haswell"], {"archspec": "haswell"}),  # a real archspec name rejected
        (["archspec=x86_64_v3"], {"archspec": "x86_64_v3"}),  # a generic level rejected
        (["archspec=0"], {"archspec": "0"}),  # CEP 30 "unknown microarchitecture" rejected
        (["glibc=2.28"], {"glibc": "2.28"}),  # glibc version rejected
        (["linux=6.18.44"], {"linux": "6.18.44"}),  # three-part kernel version rejected
        (["macos=14.1"], {"osx": "14.1"}),  # pixi's `macos` alias not accepted
        (["windows=10.0.22631"], {"win": "10.0.22631"}),  # pixi's `windows` alias not accepted
        (["platform=osx-arm64"], {"platform": "osx-arm64"}),  # a conda subdir rejected
        (["python=3.12"], {"python": "3.12"}),  # the target interpreter is lost
        (["cuda= 12.8 "], {"cuda": "12.8"}),  # surrounding whitespace kept in the value
        (["cuda=9999.9999"], {"cuda": "9999.9999"}),  # four digits a component is still sane
        (["win=10.0.22631.4317"], {"win": "10.0.22631.4317"}),  # Windows build numbers
        (["linux=6.18.123456"], {"linux": "6.18.123456"}),  # long kernel patch numbers
        (["cuda="], {"cuda": ""}),  # empty value must mean "declared absent", not dropped
        (["platform="], {}),  # an empty platform must mean "not declared"
        (["python="], {}),  # an empty python must mean "not declared"
        (["cuda=12.8", "cuda=12.8"], {"cuda": "12.8"}),  # a harmless repeat rejected
        ([], {}),  # no targets must be no facts
    ],
)
def test_parse_targets_accepts(items: list[str], expected: dict[str, str]) -> None:
    assert parse_targets(items) == expected


def test_parse_targets_accepts_a_mapping() -> None:
    assert parse_targets({"cuda": "12.8", "macos": "13.0"}) == {"cuda": "12.8", "osx": "13.0"}


@pytest.mark.parametrize(
    ("items", "message"),
    [
        (
            ["cuda=abc"],
            "--target cuda='abc': expected a CUDA version like 12.8",
        ),  # rattler takes it
        (["cuda=12.8.1"], "--target cuda='12.8.1': expected a CUDA version like 12.8"),  # too deep
        (["cuda=>=12"], "--target cuda='>=12': expected a CUDA version like 12.8"),  # a spec
        (
            ["cuda_arch=9"],
            "--target cuda_arch='9': expected a compute capability like 9.0",
        ),  # not d.d
        (
            ["cuda_arch=90"],
            "--target cuda_arch='90': expected a compute capability like 9.0",
        ),  # cmake
        (  # the classic typo must get a suggestion
            ["archspec=x86-64-v3"],
            (
                "--target archspec='x86-64-v3': expected an archspec microarchitecture name like "
                "haswell, or 0 for unknown (did you mean 'x86_64_v3'?)"
            ),
        ),
        (  # a near miss must get a suggestion
            ["archspec=haswel"],
            (
                "--target archspec='haswel': expected an archspec microarchitecture name like "
                "haswell, or 0 for unknown (did you mean 'haswell'?)"
            ),
        ),
        (["glibc=2"], "--target glibc='2': expected a glibc version like 2.28"),  # no minor
        (["osx=fourteen"], "--target osx='fourteen': expected a macOS version like 13.0"),  # words
        (["python=3"], "--target python='3': expected a Python version like 3.12"),  # no minor
        (  # a misspelt subdir must get a suggestion
            ["platform=linux64"],
            (
                "--target platform='linux64': expected a conda platform like linux-64 "
                "(did you mean 'linux-64'?)"
            ),
        ),
        (["platform=noarch"], "--target platform='noarch': expected a conda platform"),  # no target
        (["cuda"], "--target 'cuda': expected KEY=VALUE with KEY one of cuda, cuda_arch"),  # no =
        (["=12.8"], "--target '=12.8': expected KEY=VALUE"),  # no key
        (  # unknown key must list the keys and suggest
            ["cudaa=12.8"],
            (
                "--target 'cudaa': unknown key; expected one of cuda, cuda_arch, amdgpu, "
                "amdgpu_arch, archspec, glibc, linux, osx, win, cuda_version, cudatoolkit, "
                "rocm_version, device_ip, platform, python (did you mean 'cuda'?)"
            ),
        ),
        (  # a contradiction must not silently keep one
            ["cuda=12.8", "cuda=12.6"],
            "--target cuda given twice with different values: '12.8' and '12.6'",
        ),
        (["cuda=١٢.٨"], "--target cuda='١٢.٨': expected a CUDA version like 12.8"),  # \d took it
        (["python=٣.١٢"], "--target python='٣.١٢': expected a Python version like 3.12"),  # same
        (
            ["cuda=1.99999999999999999999"],
            "--target cuda='1.99999999999999999999': expected a CUDA version like 12.8",
        ),  # over 64 bits: rattler failed with a message that blamed detection
        (["cuda=12345.1"], "--target cuda='12345.1': expected a CUDA version"),  # 5 digits
        (["glibc=2.12345"], "--target glibc='2.12345': expected a glibc version"),  # 5 digits
        (
            ["cuda=1." + "9" * 5000],
            "--target cuda='1." + "9" * 78 + "…' (5002 characters): expected a CUDA version",
        ),  # the 5000-digit value was echoed in full
        (
            ["x" * 300 + "=1"],
            "--target '" + "x" * 80 + "…' (300 characters): unknown key",
        ),  # a long key was echoed in full
        (
            ["platform=" + "l" * 300],
            "--target platform='" + "l" * 80 + "…' (300 characters): expected a conda platform",
        ),  # a long platform was echoed in full
    ],
)
def test_parse_targets_rejects(items: list[str], message: str) -> None:
    with pytest.raises(InvalidTarget) as info:
        parse_targets(items)
    assert str(info.value).startswith(message)
    assert "\n" not in str(info.value)  # one line
    assert isinstance(info.value, VariantBridgeError)


def test_target_keys_are_documented_order() -> None:
    assert target_keys() == (
        "cuda",
        "cuda_arch",
        "amdgpu",
        "amdgpu_arch",
        "archspec",
        "glibc",
        "linux",
        "osx",
        "win",
        "cuda_version",
        "cudatoolkit",
        "rocm_version",
        "device_ip",
        "platform",
        "python",
    )


def test_known_platforms_match_rattler() -> None:
    import rattler

    assert {str(p) for p in rattler.Subdir.all()} - {"noarch"} == KNOWN_PLATFORMS


# -- override variables -------------------------------------------------------------------------


def test_conda_override_variables() -> None:
    assert sorted(o.conda for o in load_tables().overrides) == sorted(
        f"CONDA_OVERRIDE_{n}"
        for n in (
            "CUDA",
            "CUDA_ARCH",
            "AMDGPU",
            "AMDGPU_ARCH",
            "ARCHSPEC",
            "GLIBC",
            "LINUX",
            "OSX",
            "WIN",
        )
    )


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, {}),  # nothing set must declare nothing
        (  # the plain override is lost
            {"CONDA_OVERRIDE_CUDA": "12.8"},
            {"__cuda": Fact("__cuda", "12.8", Source.override("CONDA_OVERRIDE_CUDA"), raw="12.8")},
        ),
        (  # empty must declare absence (CEP 30), not be ignored
            {"CONDA_OVERRIDE_CUDA": ""},
            {"__cuda": Fact("__cuda", None, Source.override("CONDA_OVERRIDE_CUDA"), raw="")},
        ),
        (  # conda strips the value; so must we
            {"CONDA_OVERRIDE_GLIBC": " 2.28 "},
            {
                "__glibc": Fact(
                    "__glibc", "2.28", Source.override("CONDA_OVERRIDE_GLIBC"), raw=" 2.28 "
                )
            },
        ),
        (  # archspec's value is a microarchitecture name
            {"CONDA_OVERRIDE_ARCHSPEC": "skylake"},
            {
                "__archspec": Fact(
                    "__archspec",
                    "skylake",
                    Source.override("CONDA_OVERRIDE_ARCHSPEC"),
                    raw="skylake",
                )
            },
        ),
        (  # unrelated variables must be ignored
            {"CONDA_OVERRIDE_FOO": "1", "PATH": "/bin"},
            {},
        ),
    ],
)
def test_conda_override_facts(env: dict[str, str], expected: dict[str, Fact]) -> None:
    assert conda_override_facts(env) == expected


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (  # rattler exports __cuda=abc; we must not
            {"CONDA_OVERRIDE_CUDA": "abc"},
            (
                "CONDA_OVERRIDE_CUDA='abc': expected a CUDA version like 12.8 "
                "(or empty to declare no CUDA)"
            ),
        ),
        (  # rattler's own rule: strict major.minor
            {"CONDA_OVERRIDE_CUDA_ARCH": "9"},
            (
                "CONDA_OVERRIDE_CUDA_ARCH='9': expected a compute capability like 9.0 "
                "(or empty to declare no GPU)"
            ),
        ),
        (  # the CEP's `9.0=H100` form is not a version
            {"CONDA_OVERRIDE_CUDA_ARCH": "9.0=H100"},
            "CONDA_OVERRIDE_CUDA_ARCH='9.0=H100': expected a compute capability like 9.0",
        ),
        (  # unknown microarchitecture with suggestion
            {"CONDA_OVERRIDE_ARCHSPEC": "x86-64-v3"},
            (
                "CONDA_OVERRIDE_ARCHSPEC='x86-64-v3': expected an archspec microarchitecture name "
                "like haswell, or 0 for unknown (did you mean 'x86_64_v3'?)"
            ),
        ),
        (  # garbage glibc
            {"CONDA_OVERRIDE_GLIBC": "glibc-2.28"},
            "CONDA_OVERRIDE_GLIBC='glibc-2.28': expected a glibc version like 2.28",
        ),
        (  # Arabic-Indic digits passed \d and failed in rattler, blaming detection
            {"CONDA_OVERRIDE_CUDA": "١٢.٨"},
            "CONDA_OVERRIDE_CUDA='١٢.٨': expected a CUDA version like 12.8",
        ),
        (  # beyond 64 bits: rattler's "malformed version string" blamed detection
            {"CONDA_OVERRIDE_CUDA": "99999999999999999999.1"},
            "CONDA_OVERRIDE_CUDA='99999999999999999999.1': expected a CUDA version like 12.8",
        ),
        (  # full-width digits are no digits either
            {"CONDA_OVERRIDE_GLIBC": "２.２８"},
            "CONDA_OVERRIDE_GLIBC='２.２８': expected a glibc version like 2.28",
        ),
    ],
)
def test_conda_override_rejects(env: dict[str, str], message: str) -> None:
    with pytest.raises(InvalidTarget) as info:
        conda_override_facts(env)
    assert str(info.value).startswith(message)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("9.0", "9.0"),  # the provider's own form is lost
        ("12.0", "12.0"),  # two-digit major mangled
        ("8.6", "8.6"),  # a minor other than 0 mangled
        ("90", "9.0"),  # CMake spelling not understood
        ("86", "8.6"),  # CMake spelling with a minor not understood
        ("120", "12.0"),  # three-digit CMake spelling read as 1.20
        (" 9.0 ", "9.0"),  # surrounding spaces rejected
    ],
)
def test_normalize_sm_arch(value: str, expected: str) -> None:
    assert normalize_sm_arch(value, variable="NV_VARIANT_PROVIDER_FORCE_SM_ARCH") == expected


@pytest.mark.parametrize(
    "value",
    [
        "sm_90",  # a compiler flag spelling is not a capability
        "9",  # a lone digit is ambiguous
        "9.0a",  # suffixes are dropped by conda, not passed in
        "1234",  # four digits is no capability
        "٩٠",  # Arabic-Indic digits passed \d and reached rattler
        "٩.٠",  # the same in the dotted form
    ],
)
def test_normalize_sm_arch_rejects(value: str) -> None:
    with pytest.raises(InvalidTarget, match=r"NV_VARIANT_PROVIDER_FORCE_SM_ARCH="):
        normalize_sm_arch(value, variable="NV_VARIANT_PROVIDER_FORCE_SM_ARCH")


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, {}),  # unset must declare nothing
        (  # empty is unset for the provider (not "absent" like conda's)
            {
                "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION": "",
                "NV_VARIANT_PROVIDER_FORCE_SM_ARCH": "",
            },
            {},
        ),
        (  # the driver version maps to __cuda
            {"NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION": "12.9"},
            {
                "__cuda": Fact(
                    "__cuda",
                    "12.9",
                    Source.override("NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION"),
                    raw="12.9",
                )
            },
        ),
        (  # the SM arch maps to __cuda_arch, normalised
            {"NV_VARIANT_PROVIDER_FORCE_SM_ARCH": "90"},
            {
                "__cuda_arch": Fact(
                    "__cuda_arch",
                    "9.0",
                    Source.override("NV_VARIANT_PROVIDER_FORCE_SM_ARCH"),
                    raw="90",
                )
            },
        ),
    ],
)
def test_provider_override_facts(env: dict[str, str], expected: dict[str, Fact]) -> None:
    assert provider_override_facts(env) == expected


def test_nv_force_rejects_a_bad_driver_version() -> None:
    with pytest.raises(InvalidTarget) as info:
        provider_override_facts({"NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION": "latest"})
    assert str(info.value) == (
        "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION='latest': expected a CUDA version like 12.8"
    )


@pytest.mark.parametrize(
    ("variables", "expected"),
    [
        ({"NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION": "none"}, {"__cuda": None}),
        ({"NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION": "NONE"}, {"__cuda": None}),
        ({"NV_VARIANT_PROVIDER_FORCE_SM_ARCH": "none"}, {"__cuda_arch": None}),
        ({"NV_VARIANT_PROVIDER_FORCE_SM_ARCH": "0.0"}, {"__cuda_arch": None}),  # below sm 5.0
        ({"NV_VARIANT_PROVIDER_FORCE_SM_ARCH": "5.0"}, {"__cuda_arch": "5.0"}),
    ],
)
def test_nv_force_none_declares_absent(
    variables: dict[str, str], expected: dict[str, object]
) -> None:
    # `variant-bridge env` prints these values; sourcing them must not break later detection.
    facts = provider_override_facts(variables)
    assert {name: fact.value for name, fact in facts.items()} == expected
