"""``variant-bridge translate``: properties -> conda specs; ``--from-conda`` specs -> properties.

Expected CPU names come from archspec (through the channel world's helper), never from a list.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.cli.conftest import Cli, run_script
from tests.worlds.channel import x86_64_names_at_level

LOWER_128 = "nvidia :: cuda_version_lower_bound :: 12.8"


def translate_json(cli: Cli, *args: str) -> dict[str, Any]:
    result = cli("translate", "--json", *args)
    assert result.exit_code == 0, result.stderr
    assert result.stderr == ""
    data: dict[str, Any] = json.loads(result.stdout)
    return data


# -- properties -> conda specs ------------------------------------------------------------------


def test_lower_bound_json(cli: Cli) -> None:
    data = translate_json(cli, LOWER_128)
    assert data["specs"] == ["__cuda >=12.8", "cuda-version >=12.8,<13"]
    assert data["by_property"] == {LOWER_128: ["__cuda >=12.8", "cuda-version >=12.8,<13"]}
    assert data["unmapped"] == []
    assert data["requirements"]["rattler"] == [["__cuda >=12.8"], ["cuda-version >=12.8,<13"]]
    assert data["requirements"]["conda"] == data["requirements"]["rattler"]


def test_spacing_of_the_property_does_not_matter(cli: Cli) -> None:
    compact = translate_json(cli, "nvidia::cuda_version_lower_bound::12.8")
    assert compact == translate_json(cli, LOWER_128)


def test_sm_arch_values_are_or_ed(cli: Cli) -> None:
    data = translate_json(cli, "nvidia :: sm_arch :: 90_real", "nvidia :: sm_arch :: 86_real")
    assert data["specs"] == ["__cuda_arch >=9.0,<10|>=8.6,<9"]
    assert data["by_property"] == {
        "nvidia :: sm_arch :: 90_real": ["__cuda_arch >=9.0,<10"],
        "nvidia :: sm_arch :: 86_real": ["__cuda_arch >=8.6,<9"],
    }


def test_x86_64_level_gives_both_archspec_forms(cli: Cli) -> None:
    data = translate_json(cli, "x86_64 :: level :: v3")
    names = x86_64_names_at_level(3)
    regex = f"__archspec[version='1.*', build='^({'|'.join(names)})$']"
    enumerated = [f"__archspec 1.* {name}" for name in names]
    assert data["specs"] == [regex, *enumerated]
    assert "haswell" in names
    assert "nehalem" not in names
    assert data["requirements"]["rattler"] == [[regex]]
    assert data["requirements"]["conda"] == [enumerated]  # one group: any one of them


def test_unmapped_properties_have_a_reason(cli: Cli) -> None:
    data = translate_json(cli, LOWER_128, "foo :: bar :: baz")
    assert data["by_property"] == {LOWER_128: ["__cuda >=12.8", "cuda-version >=12.8,<13"]}
    (unmapped,) = data["unmapped"]
    assert unmapped["property"] == "foo :: bar :: baz"
    assert unmapped["reason"].startswith("no mapping for namespace 'foo'")


def test_every_emitted_spec_parses_with_rattler(cli: Cli) -> None:
    import rattler

    data = translate_json(
        cli,
        LOWER_128,
        "nvidia :: cuda_version_upper_bound :: 13",
        "nvidia :: sm_arch :: 120_real",
        "nvidia :: sm_arch :: 90_virtual",
        "x86_64 :: level :: v2",
        "x86_64 :: avx2 :: on",
    )
    assert data["unmapped"] == []
    for spec in data["specs"]:
        rattler.MatchSpec(spec)


def test_text_output(cli: Cli) -> None:
    result = cli("translate", LOWER_128, "nvidia :: sm_arch :: 90_real", "x86_64 :: level :: v4")
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert out.startswith(f"{LOWER_128}\n  __cuda >=12.8\n  cuda-version >=12.8,<13\n")
    assert "nvidia :: sm_arch :: 90_real\n  __cuda_arch >=9.0,<10\n" in out
    assert "x86_64 :: level :: v4\n  pixi, rattler (a CEP 29 regex build):\n" in out
    assert "  conda, mamba (any one of these exact builds):\n" in out
    for name in x86_64_names_at_level(4):
        assert f"    __archspec 1.* {name}\n" in out
    assert "\nAll together, for pixi, rattler (every item is needed)\n" in out
    assert "\nAll together, for conda, mamba (every item is needed)\n  __cuda >=12.8\n" in out
    assert "  any one of:\n    __archspec 1.* " in out


# (a property outside the nvidia table, the start of its reason). One case per line.
OUT_OF_RANGE = [
    (
        "nvidia :: cuda_version_lower_bound :: 99999999999999999999.1",
        (
            "'99999999999999999999.1' is not a CUDA version the NVIDIA provider defines (majors 11..15, "
            "minors 0..20)"
        ),
    ),  # exited 0 with `__cuda >=99999999999999999999.1`, which rattler rejects
    (
        "nvidia :: cuda_version_lower_bound :: 1" + "0" * 100000,
        "'1" + "0" * 79 + "…' (100001 characters) is not a CUDA version the NVIDIA provider",
    ),  # `unexpected ValueError: Exceeds the limit (4300 digits)`
]


@pytest.mark.parametrize(("prop", "reason"), OUT_OF_RANGE)
def test_values_outside_the_table_are_unmapped(cli: Cli, prop: str, reason: str) -> None:
    data = translate_json(cli, prop)
    assert data["specs"] == []
    assert data["unmapped"] == [{"property": prop, "reason": data["unmapped"][0]["reason"]}]
    assert data["unmapped"][0]["reason"].startswith(reason)
    text = cli("translate", prop)
    assert text.exit_code == 0, text.stderr
    assert reason in text.stdout
    assert max(len(line) for line in text.stdout.splitlines()) < 400  # no 100000-char line


def test_text_output_lists_unmapped(cli: Cli) -> None:
    result = cli("translate", "foo :: bar :: baz")
    assert result.exit_code == 0
    assert result.stdout.startswith("Unmapped (no conda counterpart; nothing is emitted")
    assert "\n  foo :: bar :: baz: no mapping for namespace 'foo'" in result.stdout


# (arguments, the start of the one stderr line). One case per line.
BAD_PROPERTIES = [
    (["nvidia :: cuda_version_lower_bound"], "invalid variant property 'nvidia :: cuda_versi"),  # 2
    (["Nvidia :: sm_arch :: 90_real"], "invalid variant property 'Nvidia :: sm_arch"),  # uppercase
    (
        ["nvidia :: sm_arch :: 9.0-real"],
        "invalid variant property 'nvidia :: sm_arch :: 9.0-",
    ),  # '-'
    ([LOWER_128, "x86_64 : level : v3"], "invalid variant property 'x86_64 : level : v3'"),  # ':'
    (
        ["A" * 5000],
        "invalid variant property '" + "A" * 80 + "…' (5000 characters): expected 'namespace",
    ),  # echoed 5000 characters
]


@pytest.mark.parametrize(("args", "message"), BAD_PROPERTIES)
def test_malformed_property_is_one_line(cli: Cli, args: list[str], message: str) -> None:
    result = cli("translate", *args)
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith(f"error: {message}")
    assert result.stderr.count("\n") == 1


# (arguments, a part of click's usage error). One case per line.
USAGE_ERRORS = [
    ([], "Missing argument 'PROPERTY...|SPEC...'"),  # nothing to translate
    (["--from-conda"], "Missing argument 'PROPERTY...|SPEC...'"),  # no specs
    (["--platform", "linux-64", LOWER_128], "--platform only applies with --from-conda."),  # unused
    (
        ["--cuda-policy", "driver", LOWER_128],
        "--cuda-policy only applies with --from-conda.",
    ),  # same
]


@pytest.mark.parametrize(("args", "message"), USAGE_ERRORS)
def test_usage_errors_exit_2(cli: Cli, args: list[str], message: str) -> None:
    result = cli("translate", *args)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert message in result.stderr.splitlines()[-1]


# -- conda specs -> supported properties -------------------------------------------------------

GPU_SPECS = ("__cuda=12.9", "__cuda_arch=8.6", "cuda-version=12.6", "__archspec=1=haswell")


def test_from_conda_defaults_to_this_machine(cli: Cli) -> None:
    # Moved from the translator's tests: the default platform is the shell's to choose.
    data = translate_json(cli, "--from-conda", "__cuda=12.8")
    assert data["platform"] == "linux-64"  # the test machine (x86_64 Linux)


def test_from_conda_toolkit_policy(cli: Cli) -> None:
    data = translate_json(cli, "--from-conda", "--platform", "linux-64", *GPU_SPECS)
    assert data["platform"] == "linux-64"
    assert data["policy"] == "toolkit"
    assert data["toolkit"] == {
        "package": "cuda-version",
        "version": "12.6",
        "source": "--from-conda",
    }
    nvidia = data["supported"]["nvidia"]
    assert nvidia["cuda_version_lower_bound"] == [
        "12.6",
        "12.5",
        "12.4",
        "12.3",
        "12.2",
        "12.1",
        "12.0",
        "12",
    ]
    assert nvidia["sm_arch"] == [f"8{minor}_real" for minor in range(6, -1, -1)] + ["80_virtual"]
    assert data["supported"]["x86_64"]["level"] == ["v3", "v2", "v1"]
    assert {vp["name"]: vp["source"] for vp in data["virtual_packages"]} == {
        "__archspec": "--from-conda",
        "__cuda": "--from-conda",
        "__cuda_arch": "--from-conda",
    }


def test_from_conda_driver_policy(cli: Cli) -> None:
    args = ("--from-conda", "--platform", "linux-64", "--cuda-policy", "driver", *GPU_SPECS)
    data = translate_json(cli, *args)
    assert data["policy"] == "driver"
    assert data["supported"]["nvidia"]["cuda_version_lower_bound"][0] == "12.9"


def test_from_conda_has_the_shape_of_detect(cli: Cli) -> None:
    # The same facts through both commands give the same supported properties.
    targets = [
        "-t",
        "cuda=12.8",
        "-t",
        "cuda_arch=9.0",
        "-t",
        "archspec=haswell",
        "-t",
        "glibc=2.28",
    ]
    detect = cli("detect", "--json", "--platform", "linux-64", *targets)
    assert detect.exit_code == 0, detect.stderr
    detected = json.loads(detect.stdout)
    specs = ["__cuda=12.8", "__cuda_arch=9.0", "__archspec=1=haswell", "__glibc=2.28"]
    translated = translate_json(cli, "--from-conda", "--platform", "linux-64", *specs)
    assert set(translated) == set(detected) | {"ignored"}
    assert translated["ignored"] == []
    assert translated["supported"] == detected["supported"]
    assert translated["policy"] == detected["policy"] == "driver"


def test_from_conda_without_cuda(cli: Cli) -> None:
    data = translate_json(cli, "--from-conda", "--platform", "linux-64", "__archspec=1=haswell")
    assert "nvidia" not in data["supported"]
    assert "nvidia" in {u["namespace"] for u in data["unsupported"]}


def test_from_conda_text_output(cli: Cli) -> None:
    result = cli("translate", "--from-conda", "--platform", "linux-64", *GPU_SPECS)
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert out.startswith("Conda specs given (linux-64)\n")
    assert re.search(r"^  cuda-version=12\.6 +--from-conda$", out, re.MULTILINE)
    assert "CUDA policy: toolkit" in out
    assert (
        "  nvidia :: cuda_version_lower_bound :: 12.6, 12.5, 12.4, 12.3, 12.2, 12.1, 12.0, 12\n"
        in out
    )


def test_from_conda_reports_an_ignored_package(cli: Cli) -> None:
    # `numpy=1.0` exited 0 and vanished without a word.
    data = translate_json(cli, "--from-conda", "--platform", "linux-64", "numpy=1.0")
    assert data["ignored"] == [
        {
            "spec": "numpy=1.0",
            "reason": "not a virtual package, a toolkit selector (cuda-version, cudatoolkit, "
            "rocm-core) or a package whose PyPI name variant-bridge knows (for abi_dependency)",
        }
    ]
    result = cli("translate", "--from-conda", "--platform", "linux-64", "numpy=1.0")
    assert result.exit_code == 0, result.stderr
    notes = result.stdout.partition("\nNotes\n")[2]
    assert "  - numpy=1.0: not a virtual package, a toolkit selector" in notes
    assert "; ignored" in notes


def test_from_conda_notes_name_the_toolkit_without_a_prefix(cli: Cli) -> None:
    # "the prefix's toolkit" was said although --from-conda reads no prefix.
    data = translate_json(cli, "--from-conda", "--platform", "linux-64", *GPU_SPECS)
    dropped = [n for n in data["notes"] if "dropped because" in n]
    assert dropped
    assert all(n.endswith("the environment's toolkit is cuda-version 12.6") for n in dropped)
    assert not any("prefix" in n for n in data["notes"])


# (specs, the start of the one stderr line). One case per line.
BAD_SPECS = [
    (["__cuda>=12"], "invalid spec '__cuda>=12': expected one exact package"),  # a range
    (["__cuda=12.9", "__cuda=12.8"], "__cuda given twice"),  # contradiction
    (["__archspec=1=haswel"], "'haswel'"),  # unknown microarchitecture
    (["cuda-version"], "invalid spec 'cuda-version': a package needs a version"),  # no version
]


# (--platform, specs, the one stderr line after "error: "). One case per line.
PLATFORM_SPECS = [
    (
        "osx-arm64",
        ["__cuda=12.8"],
        "invalid spec '__cuda=12.8': __cuda does not exist on osx-arm64 (only linux-* and win-*)",
    ),  # was accepted; detect rejects the same fact
    (
        "win-64",
        ["__glibc=2.28"],
        "invalid spec '__glibc=2.28': __glibc does not exist on win-64 (only linux-*)",
    ),  # the same words as detect
    (
        "linux64",
        ["__cuda=12.8"],
        "--platform='linux64': expected a conda platform like linux-64 (did you mean 'linux-64'?)",
    ),  # the same words as detect --platform
]


@pytest.mark.parametrize(("platform", "specs", "message"), PLATFORM_SPECS)
def test_from_conda_platform_errors_match_detect(
    cli: Cli, platform: str, specs: list[str], message: str
) -> None:
    result = cli("translate", "--from-conda", "--platform", platform, *specs)
    assert result.exit_code == 1
    assert result.stderr == f"error: {message}\n"


@pytest.mark.parametrize(("specs", "message"), BAD_SPECS)
def test_from_conda_bad_spec_is_one_line(cli: Cli, specs: list[str], message: str) -> None:
    result = cli("translate", "--from-conda", "--platform", "linux-64", *specs)
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith("error: ")
    assert message in result.stderr
    assert result.stderr.count("\n") == 1


# -- the real console script ------------------------------------------------------------------


def test_console_script_translate() -> None:
    proc = run_script("translate", "--json", LOWER_128)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["specs"] == ["__cuda >=12.8", "cuda-version >=12.8,<13"]


def test_console_script_from_conda() -> None:
    proc = run_script(
        "translate", "--from-conda", "--json", "--platform", "linux-64", "__cuda=12.4"
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["supported"]["nvidia"]["cuda_version_lower_bound"][0] == "12.4"
