"""``--target K=V`` parsing and value checks (variant_bridge.detect.targets)."""

from __future__ import annotations

import pytest

from variant_bridge.detect.targets import KNOWN_PLATFORMS, TARGET_KEYS, parse_targets
from variant_bridge.errors import InvalidTarget, VariantBridgeError


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
                "--target 'cudaa': unknown key; expected one of cuda, cuda_arch, archspec, glibc, "
                "linux, osx, win, platform, python (did you mean 'cuda'?)"
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
    assert TARGET_KEYS == (
        "cuda",
        "cuda_arch",
        "archspec",
        "glibc",
        "linux",
        "osx",
        "win",
        "platform",
        "python",
    )


def test_known_platforms_match_rattler() -> None:
    import rattler

    assert {str(p) for p in rattler.Subdir.all()} - {"noarch"} == KNOWN_PLATFORMS
