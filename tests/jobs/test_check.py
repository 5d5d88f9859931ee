"""``check`` on the real data of one release: conda-forge's pytorch-cpu (rendered .ci_support of
2.10.0 and 2.13.0, the arch lists of its build.sh) against torch 2.10.0's published variants
(wheelnext/variant-repack). Every disagreement the maintainers' scouting found is named."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from variant_bridge.jobs.check import CheckRequest, run_check
from variant_bridge.release_check import CheckReport, Level, Topic

# torch 2.10.0's wheels as published: manylinux_2_28 x86_64 for CPython 3.10 .. 3.14 (the tags
# are not in the variants.json; the scouting read them from the index, maintainers.md §2.6).
TORCH_TAGS = tuple(f"cp3{m}-cp3{m}-manylinux_2_28_x86_64" for m in (10, 11, 12, 13, 14))


def arch_options(corpus: Path, release: str) -> tuple[str, ...]:
    facts: dict[str, Any] = yaml.safe_load((corpus / "maint" / "cuda-arch-lists.yaml").read_text())
    lists = facts["pytorch-cpu-feedstock"][release]["linux-64"]
    return tuple(f"{cuda}={text}" for cuda, text in lists.items())


def check(corpus: Path, release: str, wheels: str, **kw: Any) -> CheckReport:
    folder = "pytorch-cpu-2.10.0" if release == "2.10.0" else "pytorch-cpu"
    request = CheckRequest(
        conda=(corpus / "maint" / folder,),
        wheels=str(corpus / "maint" / "variant-repack" / wheels),
        arch_lists=arch_options(corpus, release),
        **kw,
    )
    return run_check(request)


def named(report: CheckReport, level: Level = Level.WARN) -> dict[tuple[Topic, str], str]:
    return {(f.topic, f.subject): f.message for f in report.findings if f.level >= level}


@pytest.fixture(scope="module")
def same_release(corpus: Path) -> CheckReport:
    return check(corpus, "2.10.0", "torch-2.10.0-variants.json", wheel_tags=TORCH_TAGS)


def test_cuda_majors_and_minors(same_release: CheckReport) -> None:
    found = named(same_release)
    assert "no wheel variant has toolkit 12.9" in found[(Topic.CUDA, "conda CUDA 12.9")]
    assert "toolkit 12.6 has no conda build" in found[(Topic.CUDA, "wheel cuda12.6")]
    assert "toolkit 12.8 has no conda build" in found[(Topic.CUDA, "wheel cuda12.8")]
    errors = named(same_release, Level.ERROR)
    assert errors == {
        (Topic.CUDA, "wheel cuda13.0"): (
            "toolkit 13.0 and its whole major have no conda build (conda: 12.9)"
        )
    }


def test_the_lower_bound_trap(same_release: CheckReport) -> None:
    found = named(same_release)
    for label, toolkit in (("cuda12.6", "12.6"), ("cuda12.8", "12.8")):
        message = found[(Topic.LOWER_BOUND, f"wheel {label}")]
        assert message.startswith(f"declares cuda_version_lower_bound 12.0 but its label '{label}'")
        assert f"cuda-version >={toolkit}" in message
    assert (Topic.LOWER_BOUND, "wheel cuda13.0") not in found


def test_sm_archs_glibc_cpu_and_python(same_release: CheckReport) -> None:
    found = named(same_release)
    assert found[(Topic.SM_ARCH, "CUDA 12.9 <-> cuda12.8")] == (
        "SM architectures differ: conda only 50_real 60_real 120_virtual; wheel only -"
    )
    assert found[(Topic.GLIBC, "CUDA 12.9 <-> cuda12.8")].startswith(
        "the wheels need glibc >=2.28 (manylinux_2_28), the conda build 2.17"
    )
    assert "no CPU build" in found[(Topic.CPU, "CPU <-> null")]
    assert found[(Topic.PYTHON, "python")] == (
        "Python versions differ: conda only -; wheels only 3.14"
    )
    # neither side builds per x86-64 level: nothing to compare
    assert not [f for f in same_release.findings if f.topic is Topic.X86_64_LEVEL]
    assert same_release.worst is Level.ERROR


def test_the_declaration_gives_the_pins_as_evidence(corpus: Path) -> None:
    report = check(corpus, "2.10.0", "torch-2.10_variant_config.toml", project="torch")
    message = named(report)[(Topic.LOWER_BOUND, "wheel cuda12.8")]
    assert "pins nvidia-cublas 12.8.4.1 (conda: libcublas, CUDA 12.8)" in message


def test_against_2_13_the_13_0_build_and_its_arch_list(corpus: Path) -> None:
    report = check(corpus, "2.13.0", "torch-2.10.0-variants.json", wheel_tags=TORCH_TAGS)
    found = named(report)
    assert (Topic.CUDA, "wheel cuda13.0") not in found  # conda builds 13.0 now
    assert found[(Topic.SM_ARCH, "CUDA 13.0 <-> cuda13.0")] == (
        "SM architectures differ: conda only 110_real; wheel only -"
    )
    ok = {(f.topic, f.subject) for f in report.findings if f.level is Level.OK}
    assert (Topic.GLIBC, "CUDA 13.0 <-> cuda13.0") in ok  # 2.28 on both sides
