"""``check`` across platforms, build families and per-major wheels (pure core, sides built by
hand in the shapes of the real feedstocks: pytorch-cpu's linux-64/linux-aarch64/tegra/win-64
builds, cupy's and cudf's one-wheel-per-CUDA-major)."""

from __future__ import annotations

from variant_bridge.cuda_archs import parse_arch_list
from variant_bridge.filenames import WheelFilename
from variant_bridge.properties import VariantDescription
from variant_bridge.release import CondaBuild, CondaSide, CudaVersion, WheelSide, WheelVariant
from variant_bridge.release_check import CheckReport, Finding, Level, Rule, check_release

TORCH_SM_12_9 = "5.0;6.0;7.0;7.5;8.0;8.6;9.0;10.0;12.0+PTX"


def build(cuda: str | None, platform: str = "linux-64", **kw: object) -> CondaBuild:
    version = CudaVersion(*map(int, cuda.split("."))) if cuda else None
    archs = kw.pop("archs", None)
    return CondaBuild(
        where=f"ci/{platform}_{cuda}.yaml",
        platform=platform,
        cuda=version,
        archs=parse_arch_list(archs) if archs else None,  # type: ignore[arg-type]
        glibc=kw.pop("glibc", (2, 17) if platform.startswith("linux") else None),  # type: ignore[arg-type]
        **kw,  # type: ignore[arg-type]
    )


def wheel(text: str, tags: str = "") -> WheelVariant:
    description = VariantDescription.parse(text)
    files = tuple(
        WheelFilename.parse(f"demo-1.0-{tag}-{description.label}.whl") for tag in tags.split()
    )
    return WheelVariant(description, None, files)


def torch_like(label: str, bound: str, sm: str, tags: str = "") -> WheelVariant:
    props = [f"nvidia :: cuda_version_lower_bound :: {bound}"]
    props += [f"nvidia :: sm_arch :: {v}" for v in sm.split()]
    return wheel(f"{label}: " + "; ".join(props), tags)


def check(conda: list[CondaBuild], wheels: list[WheelVariant], files: bool = False) -> CheckReport:
    return check_release(CondaSide(tuple(conda)), WheelSide(tuple(wheels), files_known=files))


def of(report: CheckReport, rule: Rule) -> list[Finding]:
    return [f for f in report.findings if f.rule is rule]


CU128_SM = "70_real 75_real 80_real 86_real 90_real 100_real 120_real"
CU126_SM = "50_real 60_real 70_real 75_real 80_real 86_real 90_real"


def test_a_build_pairs_with_the_wheels_of_its_own_platform() -> None:
    """pytorch-cpu 2.10.0: linux-64 builds 12.9, win-64 builds 12.8. The win-64 12.8 build must
    not keep the linux-64 12.9 build from pairing with cuda12.8 (issue 21)."""
    conda = [build("12.9", archs=TORCH_SM_12_9), build("12.8", "win-64")]
    wheels = [
        torch_like("cuda12.6", "12.0", CU126_SM),
        torch_like("cuda12.8", "12.0", CU128_SM),
    ]
    report = check(conda, wheels)
    linux = next(p for p in report.pairs if p.build.platform == "linux-64")
    assert linux.wheel is not None
    assert linux.wheel.label == "cuda12.8"
    (differ,) = of(report, Rule.SM_ARCH_DIFFER)
    assert differ.subject == "CUDA 12.9 <-> cuda12.8"
    assert differ.conda_only == ("50_real", "60_real", "120_virtual")
    assert differ.fix == "add sm_arch 50_real 60_real 120_virtual to the wheel variant"
    # on win-64, cuda12.8 has its own conda build: the OK names that platform
    ok = {f.subject for f in of(report, Rule.CUDA_MATCH)}
    assert ok == {"conda CUDA 12.8 (win-64)"}


def test_no_fix_asks_for_targets_the_wheels_toolkit_cannot_compile() -> None:
    """Were the 12.9 build compared with a 12.6 wheel, sm_100/sm_120 could not be its fix."""
    conda = [build("12.9", archs=TORCH_SM_12_9)]
    report = check(conda, [torch_like("cuda12.6", "12.0", CU126_SM)])
    (differ,) = of(report, Rule.SM_ARCH_DIFFER)
    assert differ.fix == (
        "nvcc 12.6 of cuda12.6 cannot compile 100_real 120_real 120_virtual: drop 100-real;120 "
        "from the conda build or compare it with a newer wheel"
    )


def test_a_tegra_build_is_a_family_of_its_own() -> None:
    conda = [
        build("12.9", "linux-aarch64", archs=TORCH_SM_12_9),
        build("12.9", "linux-aarch64", archs="8.7;10.1+PTX", glibc=(2, 34),
              family=(("arm_variant_type", "tegra"),)),
    ]  # fmt: skip
    wheels = [torch_like("cuda12.8", "12.0", CU128_SM, "cp312-cp312-manylinux_2_28_aarch64")]
    report = check(conda, wheels, files=True)
    (family,) = of(report, Rule.FAMILY_WITHOUT_WHEELS)
    assert family.level is Level.INFO
    assert family.subject == "CUDA 12.9 (linux-aarch64 arm_variant_type=tegra)"
    tegra = next(p for p in report.pairs if p.build.family)
    assert tegra.wheel is None
    # only the sbsa build is compared: one SM finding, for linux-aarch64
    assert [f.subject for f in of(report, Rule.SM_ARCH_DIFFER)] == [
        "CUDA 12.9 (linux-aarch64) <-> cuda12.8"
    ]


def test_the_same_finding_on_two_platforms_is_one_naming_both() -> None:
    conda = [build("12.9"), build("12.9", "linux-aarch64")]
    wheels = [torch_like("cuda12.8", "12.0", CU128_SM)]
    (minor,) = of(check(conda, wheels), Rule.CONDA_MINOR_WITHOUT_WHEEL)
    assert minor.subject == "conda CUDA 12.9 (linux-64, linux-aarch64)"
    assert minor.platforms == ("linux-64", "linux-aarch64")
    assert minor.conda_builds == ("ci/linux-64_12.9.yaml", "ci/linux-aarch64_12.9.yaml")


def test_conda_platforms_without_wheels_and_wheels_without_conda() -> None:
    conda = [build("12.9"), build(None, "osx-arm64")]
    wheels = [
        torch_like("cuda12.9", "12.9", CU128_SM,
                   "cp312-cp312-manylinux_2_28_x86_64 cp312-cp312-win_amd64"),
    ]  # fmt: skip
    report = check(conda, wheels, files=True)
    (no_wheels,) = of(report, Rule.PLATFORM_WITHOUT_WHEELS)
    assert no_wheels.subject == "conda builds (osx-arm64)"
    assert no_wheels.message.startswith("CPU, but no wheel read is for osx-arm64")
    (no_conda,) = of(report, Rule.PLATFORM_WITHOUT_CONDA)
    assert no_conda.platforms == ("win-64",)


CUPY_12 = "cu12: nvidia :: cuda_version_lower_bound :: 12.0; nvidia :: sm_arch :: 80_real"
CUPY_13 = "cu13: nvidia :: cuda_version_lower_bound :: 13.0; nvidia :: sm_arch :: 80_real"


def test_per_major_wheels_are_compared_at_the_major() -> None:
    """cupy 13.6.0: conda builds 12.9 and 13.0, the wheels are cu12 and cu13 (lower bounds
    12.0, 13.0). Nothing asks for a CUDA 12.0 conda build."""
    conda = [build("12.9", archs="8.0"), build("13.0", archs="8.0", glibc=(2, 28))]
    report = check(conda, [wheel(CUPY_12), wheel(CUPY_13)])
    assert report.worst is Level.INFO  # the wheels' glibc is unknown from their metadata
    assert not [f for f in report.findings if "12.0" in f.message and f.level >= Level.WARN]
    covered = of(report, Rule.CUDA_PER_MAJOR)
    assert [f.message for f in covered] == [
        "wheel variant cu12 (CUDA 12.x) holds for it",
        "wheel variant cu13 (CUDA 13.x) holds for it",
    ]
    bounds = of(report, Rule.LOWER_BOUND_PER_MAJOR)
    assert [f.label for f in bounds] == ["cu12", "cu13"]
    # a per-major wheel pairs with every minor of its major
    assert [p.wheel.label for p in report.pairs if p.wheel] == ["cu12", "cu13"]


def test_a_per_major_wheel_whose_major_has_no_conda_build_is_an_error() -> None:
    report = check([build("12.9", archs="8.0")], [wheel(CUPY_12), wheel(CUPY_13)])
    (missing,) = of(report, Rule.WHEEL_MAJOR_WITHOUT_CONDA)
    assert missing.level is Level.ERROR
    assert missing.message == "CUDA 13.x has no conda build of CUDA 13 (conda: 12.9)"


def test_a_lower_bound_alone_is_information_not_a_12_0_build() -> None:
    gpu = "gpu: nvidia :: cuda_version_lower_bound :: 12.0; nvidia :: sm_arch :: 80_real"
    report = check([build("12.9", archs="8.0")], [wheel(gpu)])
    assert report.worst is Level.INFO
    (info,) = of(report, Rule.TOOLKIT_FROM_LOWER_BOUND)
    assert "compared with conda at CUDA 12" in info.message


def test_glibc_floor_of_the_cuda_major() -> None:
    conda = [build("13.0", archs="8.0", glibc=(2, 17))]
    wheels = [wheel(CUPY_13, "cp312-cp312-manylinux_2_17_x86_64")]
    report = check(conda, wheels, files=True)
    floors = of(report, Rule.GLIBC_BELOW_CUDA_FLOOR)
    assert [(f.subject, f.message) for f in floors] == [
        ("CUDA 13.0", "CUDA 13 needs glibc >=2.28, the conda build has c_stdlib_version 2.17"),
        ("wheel cu13", "CUDA 13 needs glibc >=2.28, the wheels are tagged manylinux_2_17"),
    ]
    # and no other glibc fix suggests going below the floor
    conda = [build("13.0", archs="8.0", glibc=(2, 28))]
    wheels = [wheel(CUPY_13, "cp312-cp312-manylinux_2_34_x86_64")]
    (newer,) = of(check(conda, wheels, files=True), Rule.GLIBC_WHEELS_NEWER)
    assert newer.fix == "build the wheels for manylinux_2_28 or raise c_stdlib_version to 2.34"
    conda = [build("13.0", archs="8.0", glibc=(2, 34))]
    wheels = [wheel(CUPY_13, "cp312-cp312-manylinux_2_17_x86_64")]
    (older,) = of(check(conda, wheels, files=True), Rule.GLIBC_CONDA_NEWER)
    assert older.fix == "tag the wheels manylinux_2_34"


def test_a_conda_arch_list_nvcc_cannot_compile_is_an_error() -> None:
    report = check([build("13.0", archs="5.0;8.0", glibc=(2, 28))], [wheel(CUPY_13)])
    (bad,) = of(report, Rule.SM_ARCH_NOT_COMPILABLE)
    assert bad.level is Level.ERROR
    assert bad.message.startswith("nvcc 13.0 cannot compile 50_real")


def test_free_threaded_python_is_its_own_version() -> None:
    conda = [build("12.8", archs="8.0", python=("3.13",))]
    tags = "cp313-cp313-manylinux_2_17_x86_64 cp313-cp313t-manylinux_2_17_x86_64"
    report = check(conda, [torch_like("cu128", "12.8", "80_real", tags)], files=True)
    (python,) = of(report, Rule.PYTHON_DIFFER)
    assert python.message == "Python versions differ: conda only -; wheels only 3.13t"
    assert python.wheel_only == ("3.13t",)
    # conda's free-threaded build matches it
    conda = [build("12.8", archs="8.0", python=("3.13", "3.13t"))]
    report = check(conda, [torch_like("cu128", "12.8", "80_real", tags)], files=True)
    assert [f.message for f in of(report, Rule.PYTHON_MATCH)] == ["Python 3.13, 3.13t"]


def test_variants_with_the_same_properties() -> None:
    amd = "amd :: gfx_arch :: gfx942; amd :: rocm_version :: 7.0"
    report = check([build(None)], [wheel("null:"), wheel(f"rocm7.0: {amd}"),
                                    wheel(f"rocm7.1: {amd}")])  # fmt: skip
    (same,) = of(report, Rule.VARIANTS_IDENTICAL)
    assert same.subject == "wheels rocm7.0, rocm7.1"
    assert same.level is Level.WARN


def test_every_rule_has_a_topic_and_a_distinct_id() -> None:
    ids = [rule.value for rule in Rule]
    assert len(ids) == len(set(ids))
    assert all(rule.topic for rule in Rule)
