"""Override variables read from an explicit mapping (variant_bridge.detect.overrides)."""

from __future__ import annotations

import pytest

from variant_bridge.detect.overrides import (
    CONDA_OVERRIDES,
    conda_override_facts,
    normalize_sm_arch,
    nv_force_facts,
)
from variant_bridge.detect.targets import Fact
from variant_bridge.errors import InvalidTarget


def test_conda_override_variables() -> None:
    assert sorted(CONDA_OVERRIDES) == sorted(
        f"CONDA_OVERRIDE_{n}"
        for n in ("CUDA", "CUDA_ARCH", "ARCHSPEC", "GLIBC", "LINUX", "OSX", "WIN")
    )


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, {}),  # nothing set must declare nothing
        (  # the plain override is lost
            {"CONDA_OVERRIDE_CUDA": "12.8"},
            {"__cuda": Fact("__cuda", "12.8", "CONDA_OVERRIDE_CUDA", raw="12.8")},
        ),
        (  # empty must declare absence (CEP 30), not be ignored
            {"CONDA_OVERRIDE_CUDA": ""},
            {"__cuda": Fact("__cuda", None, "CONDA_OVERRIDE_CUDA", raw="")},
        ),
        (  # conda strips the value; so must we
            {"CONDA_OVERRIDE_GLIBC": " 2.28 "},
            {"__glibc": Fact("__glibc", "2.28", "CONDA_OVERRIDE_GLIBC", raw=" 2.28 ")},
        ),
        (  # archspec's value is a microarchitecture name
            {"CONDA_OVERRIDE_ARCHSPEC": "skylake"},
            {"__archspec": Fact("__archspec", "skylake", "CONDA_OVERRIDE_ARCHSPEC", raw="skylake")},
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
    assert normalize_sm_arch(value) == expected


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
        normalize_sm_arch(value)


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
                    "__cuda", "12.9", "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION", raw="12.9"
                )
            },
        ),
        (  # the SM arch maps to __cuda_arch, normalised
            {"NV_VARIANT_PROVIDER_FORCE_SM_ARCH": "90"},
            {
                "__cuda_arch": Fact(
                    "__cuda_arch", "9.0", "NV_VARIANT_PROVIDER_FORCE_SM_ARCH", raw="90"
                )
            },
        ),
    ],
)
def test_nv_force_facts(env: dict[str, str], expected: dict[str, Fact]) -> None:
    assert nv_force_facts(env) == expected


def test_nv_force_rejects_a_bad_driver_version() -> None:
    with pytest.raises(InvalidTarget) as info:
        nv_force_facts({"NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION": "latest"})
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
    facts = nv_force_facts(variables)
    assert {name: fact.value for name, fact in facts.items()} == expected
