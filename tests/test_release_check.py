"""The comparison rules of ``check``, on sides built by hand (pure core)."""

from __future__ import annotations

from packaging.requirements import Requirement

from variant_bridge.cuda_archs import parse_arch_list
from variant_bridge.filenames import WheelFilename
from variant_bridge.properties import VariantDescription
from variant_bridge.release import (
    CondaBuild,
    CondaSide,
    CudaVersion,
    ToolkitBasis,
    WheelSide,
    WheelVariant,
)
from variant_bridge.release_check import Finding, Level, Rule, Topic, check_release
from variant_bridge.translate.evidence import toolkit_evidence


def build(cuda: str | None, archs: str | None = None, **kw: object) -> CondaBuild:
    version = CudaVersion(*map(int, cuda.split("."))) if cuda else None
    return CondaBuild(
        where=f"ci/{cuda}.yaml",
        cuda=version,
        archs=parse_arch_list(archs) if archs else None,
        glibc=kw.pop("glibc", (2, 17)),  # type: ignore[arg-type]
        **kw,  # type: ignore[arg-type]
    )


def wheel(text: str, *, tags: str = "", requires: tuple[str, ...] = ()) -> WheelVariant:
    description = VariantDescription.parse(text)
    evidence = (
        toolkit_evidence(description, [Requirement(r) for r in requires]) if requires else None
    )
    files = tuple(
        WheelFilename.parse(f"demo-1.0-{tag}-{description.label}.whl")
        for tag in tags.split()
        if tag
    )
    return WheelVariant(description, evidence, files)


def cu(version: str, sm: str, bound: str | None = None, label: str | None = None) -> str:
    label = label or f"cu{version.replace('.', '')}"
    props = [f"nvidia :: cuda_version_lower_bound :: {bound or version}"]
    props += [f"nvidia :: sm_arch :: {v}" for v in sm.split()]
    return f"{label}: " + "; ".join(props)


def problems(conda: list[CondaBuild], wheels: list[WheelVariant], **kw: object) -> list[Finding]:
    report = check_release(
        CondaSide(tuple(conda)),
        WheelSide(tuple(wheels), files_known=kw.pop("files", False)),  # type: ignore[arg-type]
    )
    return [f for f in report.findings if f.level >= Level.WARN]


def topics(found: list[Finding]) -> set[tuple[Topic, str]]:
    return {(f.topic, f.subject) for f in found}


def test_matching_sides_have_no_problem() -> None:
    conda = [build(None), build("12.8", "80-real;90"), build("13.0", "80-real;90", glibc=(2, 28))]
    wheels = [
        wheel("null:", tags="py3-none-manylinux_2_17_x86_64"),
        wheel(cu("12.8", "80_real 90_real 90_virtual"), tags="py3-none-manylinux_2_17_x86_64"),
        wheel(cu("13.0", "80_real 90_real 90_virtual"), tags="py3-none-manylinux_2_28_x86_64"),
    ]
    report = check_release(CondaSide(tuple(conda)), WheelSide(tuple(wheels), files_known=True))
    assert report.worst is Level.OK
    assert {f.topic for f in report.findings} >= {Topic.CUDA, Topic.SM_ARCH, Topic.GLIBC, Topic.CPU}


def test_a_minor_missing_on_one_side_is_a_warning_a_major_an_error() -> None:
    conda = [build("12.8", "80-real"), build("12.9", "80-real")]
    wheels = [wheel(cu("12.8", "80_real")), wheel(cu("13.0", "80_real"))]
    found = {(f.level, f.subject) for f in problems(conda, wheels)}
    assert (Level.WARN, "conda CUDA 12.9") in found
    assert (Level.ERROR, "wheel cu130") in found


def test_a_conda_major_with_no_wheel_is_an_error_saying_what_to_change() -> None:
    (finding,) = [
        f
        for f in problems([build("13.0", "80-real")], [wheel(cu("12.8", "80_real"))])
        if f.subject == "conda CUDA 13.0"
    ]
    assert finding.level is Level.ERROR
    assert (
        finding.fix == "add a wheel variant built with CUDA 13.0 or drop 13.0 from the conda matrix"
    )


def test_torch_lower_bound_trap_by_label_and_by_pins() -> None:
    by_label = wheel(cu("12.8", "80_real", bound="12.0", label="cuda12.8"))
    by_pins = wheel(
        cu("12.6", "80_real", bound="12.0", label="cuda12.6"),
        requires=("nvidia-cublas==12.6.4.1",),
    )
    found = [
        f
        for f in problems([build("12.8", "80-real")], [by_label, by_pins])
        if f.topic is Topic.LOWER_BOUND
    ]
    assert [(f.level, f.subject) for f in found] == [
        (Level.WARN, "wheel cuda12.8"),
        (Level.WARN, "wheel cuda12.6"),
    ]
    assert "its label 'cuda12.8' says CUDA 12.8" in found[0].message
    assert "pins nvidia-cublas 12.6.4.1" in found[1].message
    assert found[1].fix == (
        "declare nvidia :: cuda_version_lower_bound :: 12.6, which also raises the driver pip "
        "users need from 12.0 to 12.6 (keep 12.0 if CUDA minor-version compatibility is meant)"
    )


def test_pins_contradicting_the_label_are_an_error() -> None:
    liar = wheel(cu("12.6", "80_real", label="cu126"), requires=("nvidia-cublas==12.8.4.1",))
    assert liar.claim() is not None
    assert liar.claim().basis is ToolkitBasis.PINS
    found = [f for f in problems([build("12.8", "80-real")], [liar]) if f.level is Level.ERROR]
    assert any(
        "its label says CUDA 12.6 but it pins nvidia-cublas 12.8.4.1" in f.message for f in found
    )


def test_sm_lists_compare_per_pair_nearest_minor_when_no_exact_one() -> None:
    conda = [build("12.9", "5.0;8.0;12.0+PTX")]
    wheels = [wheel(cu("12.6", "80_real")), wheel(cu("12.8", "80_real 120_real 130_real"))]
    impossible, arch = [f for f in problems(conda, wheels) if f.topic is Topic.SM_ARCH]
    assert arch.subject == "CUDA 12.9 <-> cu128"
    assert (
        arch.message
        == "SM architectures differ: conda only 50_real 120_virtual; wheel only 130_real"
    )
    # no fix asks for what nvcc cannot build: 12.9 has no sm_130
    assert arch.fix == (
        "add sm_arch 50_real 120_virtual to the wheel variant; nvcc 12.9 cannot compile "
        "130_real: drop it from the wheel"
    )
    assert (impossible.level, impossible.rule, impossible.subject) == (
        Level.ERROR, Rule.SM_ARCH_NOT_COMPILABLE, "wheel cu128",
    )  # fmt: skip
    assert impossible.message == (
        "declares sm_arch 130_real, which nvcc 12.8 cannot compile (its label 'cu128' says "
        "CUDA 12.8)"
    )


def test_an_unknown_conda_arch_list_is_information_naming_the_option() -> None:
    report = check_release(CondaSide((build("12.8"),)), WheelSide((wheel(cu("12.8", "80_real")),)))
    (info,) = [f for f in report.findings if f.topic is Topic.SM_ARCH]
    assert info.level is Level.INFO
    assert info.fix == (
        "pass --arch-list 12.8=LIST (PLATFORM:12.8=LIST for one platform) from the recipe's "
        "build script"
    )


def test_glibc_floor_of_the_wheels_against_c_stdlib_version() -> None:
    conda = [build("12.8", "80-real", glibc=(2, 17))]
    wheels = [wheel(cu("12.8", "80_real"), tags="cp312-cp312-manylinux_2_28_x86_64")]
    (glibc,) = [f for f in problems(conda, wheels, files=True) if f.topic is Topic.GLIBC]
    assert "the wheels need glibc >=2.28 (manylinux_2_28), the conda build 2.17" in glibc.message
    # a legacy tag means the same floor
    wheels = [wheel(cu("12.8", "80_real"), tags="cp312-cp312-manylinux2014_x86_64")]
    assert not [f for f in problems(conda, wheels, files=True) if f.topic is Topic.GLIBC]


def test_x86_64_level_against_microarch_level() -> None:
    conda = [build(None, microarch_level=3)]
    wheels = [wheel("v2: x86_64 :: level :: v2")]
    (level,) = [f for f in problems(conda, wheels) if f.topic is Topic.X86_64_LEVEL]
    assert level.message == "the conda build has microarch_level 3, the wheel x86_64 :: level :: v2"
    assert level.fix == "declare x86_64 :: level :: v3 on the wheel"


def test_cpu_build_and_null_variant() -> None:
    (cpu,) = [
        f for f in problems([build(None)], [wheel(cu("12.8", "80_real"))]) if f.topic is Topic.CPU
    ]
    assert "no null variant" in cpu.message
    (cpu,) = [
        f
        for f in problems(
            [build("12.8", "80-real")], [wheel("null:"), wheel(cu("12.8", "80_real"))]
        )
        if f.topic is Topic.CPU
    ]
    assert "no CPU build" in cpu.message


def test_python_versions_from_tags_and_conda_python() -> None:
    conda = [build("12.8", "80-real", python=("3.11", "3.12"))]
    wheels = [
        wheel(
            cu("12.8", "80_real"),
            tags="cp312-cp312-manylinux_2_17_x86_64 cp313-cp313-manylinux_2_17_x86_64",
        )
    ]
    (python,) = [f for f in problems(conda, wheels, files=True) if f.topic is Topic.PYTHON]
    assert python.message == "Python versions differ: conda only 3.11; wheels only 3.13"


def test_tied_build_numbers_across_minors() -> None:
    conda = [build("12.6", "80-real", build_number=200), build("12.8", "80-real", build_number=200)]
    wheels = [wheel(cu("12.6", "80_real")), wheel(cu("12.8", "80_real"))]
    (tied,) = [f for f in problems(conda, wheels) if f.topic is Topic.BUILD_NUMBER]
    assert tied.message.startswith("CUDA 12.6, 12.8 share build number 200")


def test_versions_of_the_two_sides() -> None:
    report = check_release(
        CondaSide((build(None),), version="2.0"), WheelSide((wheel("null:"),), version="2.1")
    )
    assert [f.level for f in report.findings if f.topic is Topic.VERSION] == [Level.ERROR]
