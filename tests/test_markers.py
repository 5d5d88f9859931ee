"""Layer 1: Requires-Dist with PEP 825 variant markers, read and evaluated for a target."""

from __future__ import annotations

import platform
import sys
from pathlib import Path

import pytest
import tomlkit
from hypothesis import given
from hypothesis import strategies as st
from packaging.markers import Marker, default_environment
from packaging.requirements import Requirement

from variant_bridge.environment import Environment
from variant_bridge.errors import RequirementError
from variant_bridge.markers import (
    VariantValues,
    evaluate_dependencies,
    parse_dependency,
    target_environment,
    variant_lines,
)
from variant_bridge.platform_tags import TargetPython
from variant_bridge.properties import VariantDescription

PY312 = TargetPython.parse("3.12.4")
LINUX = target_environment(Environment("linux-64"), PY312)
CUDA128 = VariantValues.of(
    VariantDescription.parse(
        "cuda12.8: nvidia :: cuda_version_lower_bound :: 12.0; nvidia :: sm_arch :: 90_real"
    )
)
XPU = VariantValues.of(VariantDescription.parse("xpu: intel :: device_ip :: 20.1.0"))


def torch_210_lines(corpus: Path) -> list[str]:
    """The Requires-Dist lines the torch 2.10 variant wheels were given (real data)."""
    config = tomlkit.parse(
        (corpus / "maint/variant-repack/torch-2.10_variant_config.toml").read_text()
    )
    return [str(x) for x in config["metadata_configs"]["torch"]["deps_add_list"]]  # type: ignore[index,union-attr]


def names(lines: list[str], values: VariantValues, env: dict[str, str] = LINUX) -> dict[str, str]:
    evaluated = evaluate_dependencies(lines, env, values)
    assert evaluated.problems == ()
    return {d.name: str(d.requirement.specifier) for d in evaluated.applying}


def test_the_torch_210_declaration_evaluates_per_variant(corpus: Path) -> None:
    lines = torch_210_lines(corpus)
    cuda128 = names(lines, CUDA128)
    assert cuda128["nvidia-cublas"] == "==12.8.4.1"
    assert cuda128["nvidia-cuda-runtime"] == "==12.8.90"
    assert cuda128["nvidia-cudnn"] == "==9.10.2.21"  # shared by cuda12.6 and cuda12.8
    assert cuda128["triton"] == "==3.6.0"  # 'nvidia' in variant_namespaces
    assert not any(name.startswith(("intel", "onemkl")) for name in cuda128)
    xpu = names(lines, XPU)
    assert "intel-openmp" in xpu
    assert not any(name.startswith("nvidia") for name in xpu)
    assert names(lines, VariantValues.of(VariantDescription.null())) == {}


def test_the_target_decides_the_ordinary_markers(corpus: Path) -> None:
    windows = target_environment(Environment("win-64"), PY312)
    assert windows["platform_machine"] == "AMD64"
    assert names(torch_210_lines(corpus), CUDA128, windows) == {}  # CUDA pins are Linux-only


@pytest.mark.parametrize(
    ("marker", "values", "expected"),
    [
        ("variant_label == 'cuda12.8'", CUDA128, True),
        ("variant_label != 'cuda12.8'", CUDA128, False),
        ("'nvidia' in variant_namespaces", CUDA128, True),
        ("'nvidia' not in variant_namespaces", XPU, True),
        ("'nvidia::sm_arch' in variant_features", CUDA128, True),  # spaces around :: ignored
        ('"nvidia :: sm_arch :: 90_real" in variant_properties', CUDA128, True),
        ("'nvidia :: sm_arch :: 80_real' in variant_properties", CUDA128, False),
        ("variant_label == ''", VariantValues(), True),  # a non-variant wheel
        (
            "(variant_label == 'a' or variant_label == 'cuda12.8') and sys_platform == 'linux'",
            CUDA128,
            True,
        ),
        ("python_version < '3.12' or variant_label == 'cuda12.8'", CUDA128, True),
    ],
)
def test_variant_markers(marker: str, values: VariantValues, expected: bool) -> None:
    assert parse_dependency(f"x; {marker}").applies(LINUX, values) is expected


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("x; variant_namespaces == 'nvidia'", "variant_namespaces is a set"),
        ("x; variant_label >= 'a'", "variant_label compares with ==, !=, in or not in"),
        ("x; platform_release >= '5'", "platform_release is not known for the target"),
        ("x; variant_label == 'a' and", "invalid marker"),
        ("x; (variant_label == 'a'", "a parenthesis is not closed"),
        ("x; variant_label = 'a'", "invalid marker"),
        ("x;;", "invalid marker"),
        ("==1.0; variant_label == 'a'", "invalid requirement"),
    ],
)
def test_bad_lines_are_one_clear_line(line: str, message: str) -> None:
    with pytest.raises(RequirementError) as info:
        parse_dependency(line).applies(LINUX, CUDA128)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_a_bad_line_is_a_problem_and_the_others_are_still_read() -> None:
    evaluated = evaluate_dependencies(
        ["a==1; platform_release >= '5'", "b==2; variant_label == 'cuda12.8'", "c[ ==1"],
        LINUX,
        CUDA128,
    )
    assert [d.name for d in evaluated.applying] == ["b"]
    assert len(evaluated.problems) == 2


def test_extras_never_apply() -> None:
    evaluated = evaluate_dependencies(["a; extra == 'cuda'", "b"], LINUX, CUDA128)
    assert [d.name for d in evaluated.applying] == ["b"]


@pytest.mark.parametrize(
    ("line", "values", "resolved"),
    [
        (
            "nvidia-cublas==12.8.4.1; platform_system == 'Linux' and variant_label == 'cuda12.8'",
            CUDA128,
            "nvidia-cublas==12.8.4.1; platform_system == 'Linux'",
        ),
        (
            "nvidia-cublas==12.6.4.1; platform_system == 'Linux' and variant_label == 'cuda12.6'",
            CUDA128,
            None,
        ),
        ("triton==3.6.0; 'nvidia' in variant_namespaces", CUDA128, "triton==3.6.0"),
        ("filelock; python_version >= '3.9'", CUDA128, "filelock; python_version >= '3.9'"),
        ("x; variant_label == 'a' or python_version < '3.9'", CUDA128, "x; python_version < '3.9'"),
    ],
)
def test_for_variant_leaves_a_line_installers_read(
    line: str, values: VariantValues, resolved: str | None
) -> None:
    assert parse_dependency(line).for_variant(values) == resolved
    if resolved is not None:
        Requirement(resolved)  # packaging (and so pip) reads it


def test_variant_lines_keeps_unreadable_lines_for_the_installer_to_report() -> None:
    assert variant_lines(["a; variant_label == 'x'", "b[ ==1"], CUDA128) == ["b[ ==1"]


_ATOMS = [
    "variant_label == 'cuda12.8'",
    "variant_label == 'cuda12.6'",
    "'nvidia' in variant_namespaces",
    "'intel' in variant_namespaces",
    "python_version >= '3.10'",
    "platform_system == 'Windows'",
    "sys_platform == 'linux'",
]


@st.composite
def markers(draw: st.DrawFn, depth: int = 0) -> str:
    if depth >= 2 or draw(st.booleans()):
        return draw(st.sampled_from(_ATOMS))
    op = draw(st.sampled_from(["and", "or"]))
    items = draw(st.lists(markers(depth + 1), min_size=2, max_size=3))
    return "(" + f" {op} ".join(items) + ")"


@given(marker=markers(), values=st.sampled_from([CUDA128, XPU, VariantValues()]))
def test_resolving_variant_variables_keeps_the_meaning(marker: str, values: VariantValues) -> None:
    """Deciding only the variant comparisons, then letting packaging evaluate what is left,
    gives the same answer as evaluating the whole marker."""
    dependency = parse_dependency(f"x; {marker}")
    whole = dependency.applies(LINUX, values)
    resolved = dependency.for_variant(values)
    if resolved is None:
        assert not whole
        return
    requirement = Requirement(resolved)
    rest = True if requirement.marker is None else Marker(str(requirement.marker)).evaluate(LINUX)
    assert rest is whole


def test_target_environment_of_this_machine_is_what_packaging_says() -> None:
    if platform.system() != "Linux" or platform.machine() != "x86_64":
        pytest.skip("checked on linux-64")
    version = platform.python_version()
    env = target_environment(
        Environment("linux-64"), TargetPython.parse(version, executable=sys.executable)
    )
    here = default_environment()
    assert {k: here[k] for k in env} == env  # type: ignore[literal-required]
    assert "platform_release" not in env  # never this machine's kernel for a target


@pytest.mark.parametrize(
    ("line", "extras"),
    [
        ("nvidia-cublas-cu12==12.6.4.1", set()),
        ("cupy-cuda12x; extra == 'cuda'", {"cuda"}),
        ("x; (extra == \"gpu\" or 'cu12' == extra) and sys_platform == 'linux'", {"gpu", "cu12"}),
        ("x; sys_platform == 'linux' and variant_label == 'cuda12.8'", set()),
    ],
)
def test_marker_extras_names_the_extras_a_line_belongs_to(line: str, extras: set[str]) -> None:
    assert parse_dependency(line).marker_extras == extras
