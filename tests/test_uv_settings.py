"""uv_env: the bridged view -> the variables uv 0.13.9's built-in providers honour, and shell text.

What the values *do* to uv is checked against the real uv in tests/test_uv_agreement.py; here the
mapping from supported properties to values, the notes and the quoting are pinned down.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from variant_bridge.environment import CudaPolicy, Environment, Source, Toolkit, VirtualPackage
from variant_bridge.translate.supported import SupportedFeature, SupportedProperties
from variant_bridge.uv_settings import (
    DRIVER_VARIABLE,
    NO_CUDA,
    NO_GPU_ARCH,
    PREVIEW_VARIABLE,
    SHELL_FORMATS,
    SM_ARCH_VARIABLE,
    UvSettings,
    format_variables,
    uv_settings,
)

LOWER = "cuda_version_lower_bound"


def minors(major: int, top: int) -> list[str]:
    return [f"{major}.{minor}" for minor in range(top, -1, -1)] + [str(major)]


def sm_values(arch: str) -> list[str]:
    major, minor = arch.split(".")
    return [f"{major}{m}_real" for m in range(int(minor), -1, -1)] + [f"{major}0_virtual"]


def supported(
    lower: list[str] | None = None, sm: list[str] | None = None, policy: CudaPolicy = "driver"
) -> SupportedProperties:
    features = []
    if lower:
        features.append(SupportedFeature("nvidia", LOWER, tuple(lower)))
    if sm is not None:
        features.append(SupportedFeature("nvidia", "sm_arch", tuple(sm)))
    unsupported = () if features else (("nvidia", "no __cuda: no NVIDIA driver"),)
    return SupportedProperties(tuple(features), unsupported, policy=policy)


def environment(
    cuda: str | None = None, toolkit: str | None = None, archspec: tuple[str, Source] | None = None
) -> Environment:
    vps = []
    if cuda is not None:
        vps.append(VirtualPackage("__cuda", cuda, source=Source.override("CONDA_OVERRIDE_CUDA")))
    if archspec is not None:
        vps.append(VirtualPackage("__archspec", "1", archspec[0], source=archspec[1]))
    kit = Toolkit("cuda-version", toolkit, Source.PREFIX) if toolkit is not None else None
    return Environment("linux-64", tuple(vps), kit)


GPU_90, GPU_86 = sm_values("9.0"), sm_values("8.6")
CU12_9, CU12_6, CU11 = minors(12, 9), minors(12, 6), minors(11, 20)


@pytest.mark.parametrize(
    ("supported_properties", "driver", "sm_arch"),
    [
        (supported(CU12_6, GPU_86), "12.6", "8.6"),  # toolkit bound not used
        (supported(CU12_9 + CU11, GPU_90), "12.9", "9.0"),  # driver policy value changed
        (supported(CU12_9, ["120_real", "120_virtual"]), "12.9", "12.0"),  # 3 digits misread
        (supported(CU12_9, ["103_real", "100_virtual"]), "12.9", "10.3"),  # 103 -> 1.03
        (supported(CU12_6, ["90_virtual"]), "12.6", "9.0"),  # virtual-only GPU list dropped
        (supported(["12.6", "12.10", "12"]), "12.10", NO_GPU_ARCH),  # minor compared as text
        (supported(["12"]), "12.0", NO_GPU_ARCH),  # major-only value not usable by uv
        (supported(CU12_6), "12.6", NO_GPU_ARCH),  # no __cuda_arch lets uv detect the GPU
        (supported(), NO_CUDA, NO_CUDA),  # no __cuda lets uv detect the driver
        (supported([], GPU_90), NO_CUDA, NO_CUDA),  # no lower bound: uv must not guess
    ],
)
def test_nvidia_values(
    supported_properties: SupportedProperties, driver: str, sm_arch: str
) -> None:
    settings = uv_settings(environment(cuda="12.9"), supported_properties)
    values = settings.as_dict()
    assert values[DRIVER_VARIABLE] == driver
    assert values[SM_ARCH_VARIABLE] == sm_arch


def test_no_cuda_switches_uv_off_without_a_note() -> None:
    settings = uv_settings(environment(), supported())
    assert settings.as_dict()[DRIVER_VARIABLE] == "none"
    assert settings.notes == ()  # nothing uv could disagree on


def test_gpu_without_lower_bound_notes_what_uv_refuses() -> None:
    # e.g. a cuda-version 13.0 toolkit under a CUDA 12.9 driver: no lower bound fits both.
    settings = uv_settings(environment(cuda="12.9", toolkit="13.0"), supported([], GPU_90))
    assert settings.as_dict()[DRIVER_VARIABLE] == "none"
    (note,) = settings.notes
    assert "wheels that need only sm_arch are refused by uv" in note


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({}, "wheel-variants"),  # uv ignores variants without the preview feature
        ({PREVIEW_VARIABLE: ""}, "wheel-variants"),  # empty value kept -> uv rejects ''
        ({PREVIEW_VARIABLE: "python-upgrade"}, "python-upgrade,wheel-variants"),  # user's lost
        ({PREVIEW_VARIABLE: "wheel-variants"}, "wheel-variants"),  # duplicated
        ({PREVIEW_VARIABLE: " a , wheel-variants"}, "a,wheel-variants"),  # spaces kept
    ],
)
def test_preview_features_extend_the_users(environ: dict[str, str], expected: str) -> None:
    settings = uv_settings(environment(cuda="12.9"), supported(minors(12, 9)), environ=environ)
    assert settings.as_dict()[PREVIEW_VARIABLE] == expected


def test_variables_come_in_a_stable_order() -> None:
    settings = uv_settings(environment(cuda="12.9"), supported(minors(12, 9)))
    assert [name for name, _ in settings.variables] == [
        DRIVER_VARIABLE,
        SM_ARCH_VARIABLE,
        PREVIEW_VARIABLE,
    ]


def test_toolkit_policy_notes_what_uv_cannot_express() -> None:
    env = environment(cuda="12.9", toolkit="12.6")
    settings = uv_settings(env, supported(minors(12, 6), sm_values("9.0"), policy="toolkit"))
    older, upper = settings.notes
    assert "CUDA 11 and older" in older
    assert "above 12.6 but not above 12.9" in upper


def test_toolkit_newer_than_driver_notes_the_upper_bound_gap() -> None:
    env = environment(cuda="12.4", toolkit="12.6")
    settings = uv_settings(env, supported(minors(12, 4), policy="toolkit"))
    assert settings.as_dict()[DRIVER_VARIABLE] == "12.4"
    assert any("above 12.4 but not above 12.6" in note for note in settings.notes)


@pytest.mark.parametrize(
    ("env", "policy", "lower"),
    [
        (environment(cuda="12.9"), "driver", minors(12, 9) + minors(11, 20)),  # no toolkit
        (environment(cuda="12.9", toolkit="12.6"), "driver", minors(12, 9) + minors(11, 20)),  # off
        (environment(cuda="11.8", toolkit="11.8"), "toolkit", minors(11, 8)),  # nothing older
    ],
)
def test_no_notes_where_uv_agrees(env: Environment, policy: str, lower: list[str]) -> None:
    settings = uv_settings(env, supported(lower, sm_values("9.0"), policy=policy))  # type: ignore[arg-type]
    assert settings.notes == ()


@pytest.mark.parametrize(
    ("source", "noted"),
    [
        (Source.DETECTED, False),  # uv detects the same CPU itself
        (Source.TARGET, True),  # another machine's CPU silently ignored by uv
        (Source.override("CONDA_OVERRIDE_ARCHSPEC"), True),  # an override uv never sees
    ],
)
def test_cpu_overrides_are_noted(source: Source, noted: bool) -> None:
    env = environment(cuda="12.9", archspec=("haswell", source))
    settings = uv_settings(env, supported(minors(12, 9) + minors(11, 20)))
    assert any("__archspec=haswell" in note for note in settings.notes) is noted


def test_applied_to_overrides_and_keeps_the_rest() -> None:
    settings = UvSettings(((DRIVER_VARIABLE, "12.6"),))
    environ = {DRIVER_VARIABLE: "12.9", "PATH": "/bin"}
    assert settings.applied_to(environ) == {DRIVER_VARIABLE: "12.6", "PATH": "/bin"}
    assert environ[DRIVER_VARIABLE] == "12.9"


# -- shell formats ------------------------------------------------------------------------------

D, P = DRIVER_VARIABLE, PREVIEW_VARIABLE
PAIRS = [(D, "12.6"), (P, "a,wheel-variants")]


@pytest.mark.parametrize(
    ("shell", "expected"),
    [
        ("sh", f"export {D}='12.6'\nexport {P}='a,wheel-variants'\n"),  # unquoted
        ("fish", f"set -gx {D} '12.6'\nset -gx {P} 'a,wheel-variants'\n"),  # bash syntax
        ("powershell", f"$env:{D} = '12.6'\n$env:{P} = 'a,wheel-variants'\n"),  # cmd syntax
        ("dotenv", f"{D}=12.6\n{P}=a,wheel-variants\n"),  # needless quotes or export
    ],
)
def test_formats(shell: str, expected: str) -> None:
    assert format_variables(PAIRS, shell) == expected  # type: ignore[arg-type]


def test_json_format_is_one_object() -> None:
    assert json.loads(format_variables(PAIRS, "json")) == dict(PAIRS)


TRICKY = ["it's", 'say "hi"', "$HOME `id` $(id)", "back\\slash", "two\nlines", "", "a b  c"]


# Every character a variable's value can hold (no NUL), weighted towards the ones shells treat
# specially: backslashes, quotes of every kind, $, backticks, line breaks, non-ASCII.
_SPECIAL = "\\'\"$`!*?[]{}();&|<> \t\n\r#~%^\u2018\u2019\u201a\u201b\u00e9\u4e2d"
VALUES = st.text(
    alphabet=st.one_of(
        st.sampled_from(_SPECIAL),
        st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)),
    ),
    max_size=40,
)
_REAL_SHELLS = {"dash": ("sh", "dash"), "bash": ("sh", "bash"), "fish": ("fish", "fish")}


@pytest.mark.parametrize("shell", sorted(_REAL_SHELLS))
@settings(max_examples=25, deadline=None)
@given(values=st.lists(VALUES, min_size=1, max_size=12))
def test_every_value_survives_the_real_shell_byte_for_byte(shell: str, values: list[str]) -> None:
    form, program = _REAL_SHELLS[shell]
    executable = shutil.which(program)
    if executable is None:
        pytest.skip(f"{program} not installed")
    pairs = [(f"VB_{i}", v) for i, v in enumerate(values)]
    show = "".join(f'printf "%s\\0" "$VB_{i}"; ' for i in range(len(values)))
    script = format_variables(pairs, form) + show  # type: ignore[arg-type]
    result = subprocess.run([executable, "-c", script], capture_output=True, check=True)
    assert result.stdout.decode("utf-8", "surrogateescape").split("\0")[:-1] == values


def _read_powershell(line: str) -> tuple[str, str]:
    r"""``$env:NAME = '...'`` read by PowerShell's rule for single-quoted strings: any of the four
    single quotation marks ends it, and a doubled one stands for itself (about_Quoting_Rules)."""
    name, _, literal = line.partition(" = ")
    quotes = "'\u2018\u2019\u201a\u201b"
    assert literal[0] in quotes
    assert literal[-1] in quotes
    body, out, i = literal[1:-1], [], 0
    while i < len(body):
        if body[i] in quotes:
            assert i + 1 < len(body), "an unescaped quote ends the string"
            assert body[i + 1] in quotes, "an unescaped quote ends the string"
            i += 1
        out.append(body[i])
        i += 1
    return name.removeprefix("$env:"), "".join(out)


def _read_dotenv(line: str) -> tuple[str, str]:
    r"""``NAME=value`` read by dotenvy's rules (uv's --env-file): single quotes literal; double
    quotes with backslash escapes of \\ \" \$ and \n; unquoted: no quotes, spaces, #, $ or \\."""
    name, _, value = line.partition("=")
    if value[:1] == "'":
        assert value.endswith("'")
        assert "'" not in value[1:-1]
        assert "\\" not in value[1:-1]
        return name, value[1:-1]
    if value[:1] == '"':
        assert value.endswith('"')
        out, i, body = [], 0, value[1:-1]
        while i < len(body):
            c = body[i]
            assert c not in '"$\n', f"unescaped {c!r}"
            if c == "\\":
                i += 1
                c = {"n": "\n"}.get(body[i], body[i])
                assert body[i] in '\\"$n'
            out.append(c)
            i += 1
        return name, "".join(out)
    assert not any(c in value for c in " '\"#$\\\n")
    return name, value


@settings(max_examples=300)
@given(value=VALUES)
def test_powershell_and_dotenv_read_back_every_value(value: str) -> None:
    assert _read_powershell(format_variables([("K", value)], "powershell")[:-1]) == ("K", value)
    text = format_variables([("K", value)], "dotenv")
    assert text.endswith("\n")
    assert text.count("\n") == 1
    assert _read_dotenv(text[:-1]) == ("K", value)


@pytest.mark.parametrize("shell", ["sh", "bash"])
@pytest.mark.parametrize("value", TRICKY)
def test_sh_quoting_survives_a_real_shell(shell: str, value: str) -> None:
    executable = shutil.which("dash" if shell == "sh" else "bash")
    if executable is None:
        pytest.skip(f"{shell} not installed")
    script = format_variables([("VB_TEST", value)], "sh") + 'printf %s "$VB_TEST"'
    result = subprocess.run([executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout == value


@pytest.mark.parametrize(
    ("shell", "value", "expected"),
    [
        ("fish", "it's", "set -gx K 'it\\'s'\n"),  # fish: \' inside single quotes
        ("fish", "a\\b", "set -gx K 'a\\\\b'\n"),  # fish: \\ is one backslash
        ("powershell", "it's", "$env:K = 'it''s'\n"),  # PowerShell doubles the quote
        ("powershell", "$HOME", "$env:K = '$HOME'\n"),  # single quotes: no expansion
        ("dotenv", "a b", "K='a b'\n"),  # space needs quoting
        ("dotenv", "it's", 'K="it\'s"\n'),  # a quote switches to double quotes
        ("dotenv", "x\ny", 'K="x\\ny"\n'),  # newline escaped, one line per variable
    ],
)
def test_other_shells_quote_literally(shell: str, value: str, expected: str) -> None:
    assert format_variables([("K", value)], shell) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["1ABC", "A-B", "A B", ""])
def test_bad_variable_names_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="invalid environment variable name"):
        format_variables([(name, "x")], "sh")


def test_every_format_is_covered() -> None:
    assert set(SHELL_FORMATS) == {"sh", "fish", "powershell", "dotenv", "json"}


# -- through the real translator ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("facts", "policy", "expected"),
    [
        (("12.9", "8.6", "12.6"), None, ("12.6", "8.6")),  # toolkit policy by default
        (("12.9", "8.6", "12.6"), "driver", ("12.9", "8.6")),  # policy ignored
        (("12.4", "9.0", "12.6"), None, ("12.4", "9.0")),  # driver older than toolkit
        (("13.0", "10.0", "12.8"), None, ("12.8", "10.0")),  # newer driver major leaks 13.x
        (("12.9", "12.0", "13.0"), None, (NO_CUDA, NO_CUDA)),  # no lower bound fits both
        (("12.9", None, None), None, ("12.9", NO_GPU_ARCH)),  # unknown GPU: uv would detect
        (("12.9", "3.5", None), None, ("12.9", NO_GPU_ARCH)),  # below 5.0: no sm_arch value
        (("10.2", "7.0", None), None, (NO_CUDA, NO_CUDA)),  # driver outside provider range
        ((None, None, "12.6"), None, (NO_CUDA, NO_CUDA)),  # toolkit but no driver
    ],
)
def test_values_from_translated_environments(
    facts: tuple[str | None, str | None, str | None], policy: str | None, expected: tuple[str, str]
) -> None:
    from variant_bridge.translate import supported_properties

    cuda, arch, toolkit = facts
    env = environment(cuda=cuda, toolkit=toolkit)
    if arch is not None:
        env = env.with_virtual_packages([VirtualPackage("__cuda_arch", arch)])
    bridged = supported_properties(env, policy=policy)  # type: ignore[arg-type]
    values = uv_settings(env, bridged).as_dict()
    assert (values[DRIVER_VARIABLE], values[SM_ARCH_VARIABLE]) == expected
