"""``check`` on the real data of one release: conda-forge's pytorch-cpu (rendered .ci_support of
2.10.0 and 2.13.0, the arch lists of its build.sh) against torch 2.10.0's published variants
(wheelnext/variant-repack). Every disagreement the maintainers' scouting found is named."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from variant_bridge.jobs import check as check_job
from variant_bridge.jobs.check import CheckRequest
from variant_bridge.jobs.context import open_downloads
from variant_bridge.jobs.specs import FetchSpec
from variant_bridge.release_check import CheckReport, Level, Rule, Topic

# torch 2.10.0's wheels as published: manylinux_2_28 x86_64 for CPython 3.10 .. 3.14 (the tags
# are not in the variants.json; the scouting read them from the index, maintainers.md §2.6).
TORCH_TAGS = tuple(f"cp3{m}-cp3{m}-manylinux_2_28_x86_64" for m in (10, 11, 12, 13, 14))


def run_check(request: CheckRequest) -> CheckReport:
    """The job as ``check`` runs it: through the command's one downloads."""
    with open_downloads(FetchSpec(no_cache=True, quiet=True)) as downloads:
        return check_job.run_check(request, downloads)


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


# -- whole real feedstocks: every platform of a .ci_support folder (issue 21) -------------------

FINAL = "pytorch-cpu-2.10.0-final/.ci_support"
TORCH_ALL_TAGS = tuple(
    f"cp3{m}-cp3{m}{t}-manylinux_2_28_{arch}"
    for arch in ("x86_64", "aarch64")
    for m, t in ((10, ""), (11, ""), (12, ""), (13, ""), (14, ""), (13, "t"), (14, "t"))
)
TEGRA = "linux-aarch64,arm_variant_type=tegra:12.9=8.7;10.1+PTX"  # its build.sh


def whole(corpus: Path, folder: str, wheels: Path, **kw: Any) -> CheckReport:
    lists = (*arch_options(corpus, "2.13.0"), TEGRA)
    return run_check(
        CheckRequest(conda=(corpus / "maint" / folder,), wheels=str(wheels), arch_lists=lists, **kw)
    )


@pytest.fixture(scope="module")
def final(corpus: Path) -> CheckReport:
    wheels = corpus / "maint" / "variant-repack" / "torch-2.10.0-variants.json"
    return whole(corpus, FINAL, wheels, wheel_tags=TORCH_ALL_TAGS)


def test_final_2_10_0_pairs_each_build_with_the_wheels_of_its_platform(final: CheckReport) -> None:
    paired = {(p.build.where_built, str(p.build.cuda)): p.wheel and p.wheel.label
              for p in final.pairs}  # fmt: skip
    assert paired == {
        ("linux-64", "12.9"): "cuda12.8",  # the win-64 12.8 build no longer takes it away
        ("linux-64", "13.0"): "cuda13.0",
        ("linux-64", "None"): "null",
        ("linux-aarch64", "12.9"): "cuda12.8",
        ("linux-aarch64", "13.0"): "cuda13.0",
        ("linux-aarch64", "None"): "null",
        ("linux-aarch64 arm_variant_type=tegra", "12.9"): None,
        ("osx-64", "None"): None,
        ("osx-arm64", "None"): None,
        ("win-64", "12.8"): None,
        ("win-64", "13.0"): None,
        ("win-64", "None"): None,
    }
    assert final.worst is Level.WARN  # no error: the release builds CUDA 12 and 13 on both sides


def test_final_2_10_0_findings(final: CheckReport) -> None:
    found = named(final)
    assert found[(Topic.SM_ARCH, "CUDA 12.9 (linux-64, linux-aarch64) <-> cuda12.8")] == (
        "SM architectures differ: conda only 50_real 60_real 120_virtual; wheel only -"
    )
    assert found[(Topic.SM_ARCH, "CUDA 13.0 (linux-64, linux-aarch64) <-> cuda13.0")] == (
        "SM architectures differ: conda only 110_real; wheel only -"
    )
    # nothing is compared with cuda12.6, so no fix asks nvcc 12.6 for sm_100/sm_120
    assert not [f for f in final.findings if f.topic is Topic.SM_ARCH and "cuda12.6" in f.subject]
    assert found[(Topic.PYTHON, "python (linux-64, linux-aarch64)")] == (
        "Python versions differ: conda only -; wheels only 3.13t, 3.14t"
    )
    platforms = {
        f.subject: f.message for f in final.findings if f.rule is Rule.PLATFORM_WITHOUT_WHEELS
    }
    assert platforms["conda builds (win-64)"].startswith("CUDA 12.8, CUDA 13.0, CPU, but no wheel")
    assert set(platforms) == {
        "conda builds (osx-64)",
        "conda builds (osx-arm64)",
        "conda builds (win-64)",
    }
    (tegra,) = [f for f in final.findings if f.rule is Rule.FAMILY_WITHOUT_WHEELS]
    assert tegra.subject == "CUDA 12.9 (linux-aarch64 arm_variant_type=tegra)"
    tegra_build = next(b for b in final.conda.builds if b.family)
    assert tegra_build.arch_source == "--arch-list linux-aarch64,arm_variant_type=tegra:12.9"
    assert tegra_build.glibc == (2, 34)


def test_one_platform_of_the_whole_folder(corpus: Path) -> None:
    wheels = corpus / "maint" / "variant-repack" / "torch-2.10.0-variants.json"
    report = whole(corpus, FINAL, wheels, wheel_tags=TORCH_ALL_TAGS, platforms=("linux-64",))
    assert {b.platform for b in report.conda.builds} == {"linux-64"}
    assert not [f for f in report.findings if f.topic is Topic.PLATFORM]
    assert all(f.platforms in ((), ("linux-64",)) for f in report.findings)
    subjects = {f.subject for f in report.findings}
    assert "CUDA 12.9 <-> cuda12.8" in subjects


def test_2_9_1_whole_folder(corpus: Path) -> None:
    wheels = corpus / "real/variants-index-test/v0.0.3/torch/torch-2.9.0-variants.json"
    report = whole(corpus, "pytorch-cpu-2.9.1/.ci_support", wheels, wheel_tags=TORCH_TAGS)
    errors = named(report, Level.ERROR)
    assert errors == {
        (Topic.CUDA, "wheel cuda13.0"): (
            "toolkit 13.0 and its whole major have no conda build (conda: 12.9)"
        )
    }
    linux = next(p for p in report.pairs if p.build.platform == "linux-64" and p.build.cuda)
    assert linux.wheel is not None
    assert linux.wheel.label == "cuda12.8"


def cupy_tags(corpus: Path) -> tuple[str, ...]:
    page = (corpus / "real/variants-index-test/v0.0.3/cupy/index.html").read_text()
    names = set(re.findall(r"cupy-13\.6\.0-([^\"<]+)-cu1[123]\.whl", page))
    return tuple(sorted(names))


def test_cupy_13_6_0_per_major_wheels_on_every_platform(corpus: Path) -> None:
    wheels = corpus / "real/variants-index-test/v0.0.3/cupy/cupy-13.6.0-variants.json"
    report = run_check(
        CheckRequest(
            conda=(corpus / "maint/cupy-13.6.0/.ci_support",),
            wheels=str(wheels),
            wheel_tags=cupy_tags(corpus),
        )
    )
    assert {b.platform for b in report.conda.builds} == {"linux-64", "linux-aarch64", "win-64"}
    # no false alarm: no CUDA 12.0 asked for, the majors agree on every platform
    problems = report.at_least(Level.WARN)
    assert [f.rule for f in problems] == [Rule.PYTHON_DIFFER]  # the test index stops at cp313
    assert not [f for f in report.findings if "12.0 to the conda matrix" in (f.fix or "")]
    covered = [f.subject for f in report.findings if f.rule is Rule.CUDA_PER_MAJOR]
    assert covered == [
        f"conda CUDA {v} (linux-64, linux-aarch64, win-64)" for v in ("11.8", "12.9", "13.0")
    ]
