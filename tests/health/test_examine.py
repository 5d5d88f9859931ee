"""The pure health check: findings, severities, ids and fix commands from an environment's facts.

The environments are built as detection builds them (records and distributions with their real
``Requires-Dist`` shapes); the end-to-end runs on rattler-installed prefixes are in
tests/jobs/test_doctor.py and tests/cli/test_doctor.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest

from variant_bridge.environment import (
    CondaRecord,
    Environment,
    PythonDistribution,
    Source,
    Toolkit,
    VirtualPackage,
)
from variant_bridge.health import (
    Basis,
    Disagreement,
    FindingKind,
    FixKind,
    HealthReport,
    LibraryCopies,
    Place,
    PlaceKind,
    ReasonKind,
    Severity,
    examine,
    marker_environment,
    orphaned_wheels,
)
from variant_bridge.properties import VariantDescription
from variant_bridge.translate import supported_properties

PREFIX = Place(PlaceKind.PREFIX, "/envs/ml", "/envs/ml/bin/python")
LOCK = Place(PlaceKind.LOCKFILE, "/ws/pixi.lock", environment="cuda")
VENV = Place(PlaceKind.INTERPRETER, "/ws/.venv/bin/python", "/ws/.venv/bin/python")

TORCH_126 = VariantDescription.parse(
    "cuda12.6: nvidia :: cuda_version_lower_bound :: 12.0; nvidia :: sm_arch :: 90_real; "
    "priority :: order :: 2"
)
TORCH_LINES = (
    "nvidia-cublas-cu12==12.6.4.1; platform_system == 'Linux'",
    "nvidia-cudnn-cu12==9.10.2.21; platform_system == 'Linux'",
    "filelock",
)


def vp(name: str, version: str, build: str = "0") -> VirtualPackage:
    return VirtualPackage(name, version, build, Source.TARGET)


def record(name: str, version: str) -> CondaRecord:
    return CondaRecord(name, version, "h0_0", 0, "linux-64")


def dist(
    name: str,
    version: str,
    *requires: str,
    variant: str | None = None,
    installer: str | None = "uv",
    origin: str | None = None,
) -> PythonDistribution:
    return PythonDistribution(
        name,
        version,
        VariantDescription.parse(variant) if variant is not None else None,
        tuple(requires),
        installer=installer,
        direct_url=origin,
    )


def environment(
    *dists: PythonDistribution,
    toolkit: str | None = "12.6",
    cuda: str | None = "12.9",
    cuda_arch: str | None = "9.0",
    conda: Sequence[CondaRecord] = (),
) -> Environment:
    packages = [vp("__unix", "0"), vp("__linux", "6.1"), vp("__glibc", "2.36")]
    packages += [vp("__archspec", "1", "haswell")]
    if cuda is not None:
        packages.append(vp("__cuda", cuda))
        if cuda_arch is not None:
            packages.append(vp("__cuda_arch", cuda_arch))
    records = list(conda)
    if toolkit is not None:
        records.append(record("cuda-version", toolkit))
    return Environment(
        "linux-64",
        tuple(sorted(packages, key=lambda p: p.name)),
        Toolkit("cuda-version", toolkit, Source.PREFIX) if toolkit else None,
        tuple(records),
        tuple(dists),
        python="3.12.7",
        prefix=PREFIX.path,
    )


def check(env: Environment, place: Place | None = PREFIX, **origins: str) -> HealthReport:
    return examine(env, supported_properties(env), place, local_origins=origins)


def kinds(report: HealthReport) -> list[tuple[str, str]]:
    return [(f.kind.value, f.subject) for f in report.findings]


# -- CUDA libraries present twice ---------------------------------------------------------


def test_the_same_cuda_minor_twice_is_info_and_needs_nothing_while_required() -> None:
    env = environment(
        dist("torch", "2.9.0", *TORCH_LINES, variant=str(TORCH_126)),
        dist("nvidia-cublas-cu12", "12.6.4.1"),
        dist("nvidia-cudnn-cu12", "9.10.2.21", "nvidia-cublas-cu12"),
        dist("filelock", "3.16.1"),
        conda=[record("libcublas", "12.6.77")],
    )
    report = check(env)
    (finding,) = report.findings
    assert finding.id == "duplicate-library:nvidia-cublas-cu12"
    assert (finding.kind, finding.severity, finding.fixes) == (
        FindingKind.DUPLICATE_LIBRARY, Severity.INFO, (),
    )  # fmt: skip
    assert finding.detail == LibraryCopies(
        "nvidia-cublas-cu12", "12.6.4.1", "libcublas", "12.6.77", Basis.CUDA, "12.6", "12.6",
        ("torch 2.9.0", "nvidia-cudnn-cu12 9.10.2.21"),
    )  # fmt: skip
    assert finding.message == (
        "nvidia-cublas-cu12 12.6.4.1 (PyPI, CUDA 12.6) and libcublas 12.6.77 (conda, CUDA 12.6) "
        "are the same library twice: wasted space, whichever loads first serves; required by "
        "torch 2.9.0, nvidia-cudnn-cu12 9.10.2.21"
    )
    assert report.healthy
    assert report.checked == 4


def test_a_minor_mismatch_is_fixed_by_reselecting_the_variant_that_requires_it() -> None:
    torch = dist(
        "torch", "2.9.0", "nvidia-cublas-cu12==12.8.4.1",
        variant="cuda12.8: nvidia :: cuda_version_lower_bound :: 12.8",
        origin="file:///wheels/torch-2.9.0-py3-none-any-cuda12.8.whl",
    )  # fmt: skip
    env = environment(
        torch, dist("nvidia-cublas-cu12", "12.8.4.1"), conda=[record("libcublas", "12.6.77")]
    )
    report = check(env, torch="/wheels")
    mismatch = report.of_kind(FindingKind.MISMATCHED_LIBRARY)[0]
    assert mismatch.severity is Severity.WARNING
    assert "are the same library at different CUDA minors: the wheel's copy may shadow" in (
        mismatch.message
    )
    assert [str(f) for f in mismatch.fixes] == [
        "variant-bridge install torch==2.9.0 --prefix /envs/ml -f /wheels"
    ]
    assert not report.healthy


def test_a_copy_nothing_requires_goes_and_is_an_orphan_too() -> None:
    env = environment(
        dist("nvidia-cublas-cu12", "12.8.4.1", installer="pip"),
        conda=[record("libcublas", "12.6.77")],
    )
    report = check(env)
    assert kinds(report) == [
        ("mismatched-library", "nvidia-cublas-cu12"),
        ("orphaned-wheel", "nvidia-cublas-cu12"),
    ]
    remove = "/envs/ml/bin/python -m pip uninstall -y nvidia-cublas-cu12"  # pip installed it
    assert [str(f.fix) for f in report.findings] == [remove, remove]


def test_a_mismatch_only_plain_packages_require_names_them_in_its_fix() -> None:
    env = environment(
        dist("cupy-cuda12x", "13.6.0", "nvidia-cublas-cu12>=12"),
        dist("nvidia-cublas-cu12", "12.8.4.1"),
        conda=[record("libcublas", "12.6.77")],
    )
    (finding,) = check(env).findings
    assert finding.fix is not None
    assert finding.fix.kind is FixKind.UNINSTALL
    assert str(finding.fix) == (
        "uv pip uninstall --python /envs/ml/bin/python nvidia-cublas-cu12  (required by "
        "cupy-cuda12x 13.6.0; conda's libcublas 12.6.77 serves them instead)"
    )


def test_libraries_whose_versions_do_not_follow_cuda_compare_their_own_versions() -> None:
    env = environment(
        dist("torch", "2.9.0", "nvidia-cudnn-cu12==9.13.0.50", variant=str(TORCH_126)),
        dist("nvidia-cudnn-cu12", "9.13.0.50"),
        conda=[record("cudnn", "9.10.1.4")],  # conda-forge's other name for libcudnn
    )
    (finding,) = check(env).of_kind(FindingKind.MISMATCHED_LIBRARY)
    assert isinstance(finding.detail, LibraryCopies)
    assert (finding.detail.basis, finding.detail.pypi_said, finding.detail.conda_said) == (
        Basis.VERSION, "9.13", "9.10",
    )  # fmt: skip
    said = (
        "(PyPI, 9.13) and cudnn 9.10.1.4 (conda, 9.10) are the same library at different versions"
    )
    assert said in finding.message


def test_a_wheel_no_conda_package_provides_is_no_duplicate() -> None:
    env = environment(
        dist("torch", "2.9.0", *TORCH_LINES, variant=str(TORCH_126)),
        dist("nvidia-cublas-cu12", "12.6.4.1"),
        dist("nvidia-cudnn-cu12", "9.10.2.21", "nvidia-cublas-cu12"),
        conda=[record("cuda-cudart", "12.6.77")],
    )
    assert check(env).findings == ()


# -- variant wheels that no longer agree --------------------------------------------------


def test_a_build_whose_pins_are_newer_than_the_toolkit_disagrees_with_two_fixes() -> None:
    torch = dist(
        "torch", "2.9.0", *TORCH_LINES, variant=str(TORCH_126),
        origin="file:///wheels/torch-2.9.0-py3-none-any-cuda12.6.whl",
    )  # fmt: skip
    env = environment(torch, toolkit="12.4")
    (finding,) = check(env, torch="/wheels").findings
    assert finding.id == "disagreeing-variant:torch"
    assert finding.severity is Severity.WARNING  # it runs: it brings its own CUDA libraries
    assert finding.message == (
        "torch 2.9.0 [cuda12.6] no longer agrees with the environment: cuda12.6 pins "
        "nvidia-cublas-cu12 12.6.4.1 (conda: libcublas, CUDA 12.6) but the prefix's toolkit is "
        "cuda-version 12.4"
    )
    detail = finding.detail
    assert isinstance(detail, Disagreement)
    assert [r.kind for r in detail.reasons] == [ReasonKind.TOOLKIT]
    assert (detail.runs_here, detail.toolkit_only, detail.toolkit) == (True, True, "12.6")
    assert detail.origin == "file:///wheels/torch-2.9.0-py3-none-any-cuda12.6.whl"
    assert [(f.kind, str(f)) for f in finding.fixes] == [
        (FixKind.REINSTALL, "variant-bridge install torch==2.9.0 --prefix /envs/ml -f /wheels"),
        (FixKind.SET_TOOLKIT, "conda install -p /envs/ml cuda-version=12.6"),
    ]
    assert check(env).reinstall() == ("torch==2.9.0",)


def test_a_build_the_driver_cannot_run_is_an_error() -> None:
    gpulib = dist("gpulib", "1.0", variant="cu129: nvidia :: cuda_version_lower_bound :: 12.9")
    env = environment(gpulib, toolkit=None, cuda="12.6")  # driver policy: no toolkit
    (finding,) = check(env).findings
    assert finding.severity is Severity.ERROR
    assert finding.message.endswith("needs CUDA driver >= 12.9 but __cuda is 12.6")
    assert isinstance(finding.detail, Disagreement)
    assert (finding.detail.runs_here, finding.detail.toolkit_only) == (False, False)
    # conda could not solve cuda-version 12.9 beside a 12.6 driver anyway: only the re-selection.
    assert [f.kind for f in finding.fixes] == [FixKind.REINSTALL]


def test_a_fact_that_is_unknown_is_no_contradiction() -> None:
    # No __cuda_arch detected: sm_arch cannot be judged, so the build may well run here.
    env = environment(dist("torch", "2.9.0", *TORCH_LINES, variant=str(TORCH_126)), cuda_arch=None)
    (finding,) = check(env).findings
    assert finding.severity is Severity.WARNING
    assert isinstance(finding.detail, Disagreement)
    assert (finding.detail.runs_here, finding.detail.toolkit_only) == (True, False)
    assert [f.kind for f in finding.fixes] == [FixKind.REINSTALL]  # a toolkit would not help


def test_static_and_unmapped_namespaces_are_not_judged() -> None:
    xpu = "xpu: intel :: device_ip :: 20.1.0; priority :: order :: 3"
    env = environment(
        dist("torch", "2.9.0", *TORCH_LINES, variant=str(TORCH_126)),
        dist("intel-thing", "1.0", variant=xpu),
        dist("cpu-thing", "1.0", variant="null:"),
    )
    assert check(env).of_kind(FindingKind.DISAGREEING_VARIANT) == ()


def test_a_cpu_level_above_the_machine_is_an_error() -> None:
    env = environment(dist("fastlib", "1.0", variant="v4: x86_64 :: level :: v4"))
    (finding,) = check(env).findings
    assert finding.severity is Severity.ERROR
    assert "v4" in finding.message


# -- orphans ------------------------------------------------------------------------------


def test_orphans_are_found_through_chains_and_removed_by_one_command() -> None:
    env = environment(
        dist("torch", "2.9.0", "filelock", variant="null:"),  # the CPU build replaced the CUDA one
        dist("filelock", "3.16.1"),
        dist("nvidia-cudnn-cu12", "9.10.2.21", "nvidia-cublas-cu12"),
        dist("nvidia-cublas-cu12", "12.6.4.1"),
        dist("nvidia-ml-py", "12.575.51"),  # a tool users install themselves: never an orphan
    )
    report = check(env)
    assert kinds(report) == [
        ("orphaned-wheel", "nvidia-cublas-cu12"),
        ("orphaned-wheel", "nvidia-cudnn-cu12"),
    ]
    command = "uv pip uninstall --python /envs/ml/bin/python nvidia-cudnn-cu12 nvidia-cublas-cu12"
    assert {str(f.fix) for f in report.findings} == {command}
    assert (
        report.findings[0].message
        == "nothing installed requires nvidia-cublas-cu12 12.6.4.1 any more"
    )


def test_a_requirement_of_an_extra_or_of_an_undecided_marker_still_counts() -> None:
    env = environment(
        dist("jaxlib", "0.7.0", "nvidia-cublas-cu12; extra == 'cuda12'"),
        dist("oddlib", "1.0", "nvidia-cudnn-cu12; platform_release >= '6'"),
        dist("nvidia-cublas-cu12", "12.6.4.1"),
        dist("nvidia-cudnn-cu12", "9.10.2.21"),
        dist("nvidia-nccl-cu12", "2.27.3", "nvidia-cublas-cu12"),
    )
    report = check(env)
    assert kinds(report) == [("orphaned-wheel", "nvidia-nccl-cu12")]
    (problem,) = report.problems
    assert problem.startswith("oddlib 1.0: marker ")
    assert "platform_release is not known for the target" in problem


def test_orphaned_wheels_is_reusable_on_any_installed_set() -> None:
    env = environment()
    after = [
        PythonDistribution("torch", "2.9.0", None, ("filelock",), unknown_variant_label="null"),
        PythonDistribution("nvidia-cublas-cu12", "12.6.4.1"),
        PythonDistribution(
            "nvidia-cufile-cu12", "1.11.1.6", None, ("nvidia-nvjitlink-cu12; extra == 'x'",)
        ),
        PythonDistribution("nvidia-nvjitlink-cu12", "12.6.85"),
    ]
    orphans, problems = orphaned_wheels(after, marker_environment(env))
    assert [d.name for d in orphans] == [
        "nvidia-cublas-cu12", "nvidia-cufile-cu12", "nvidia-nvjitlink-cu12",
    ]  # fmt: skip
    assert problems == ()


# -- places, ids, order -------------------------------------------------------------------


def test_fix_commands_follow_the_place() -> None:
    torch = dist("torch", "2.9.0", *TORCH_LINES, variant=str(TORCH_126),
                 origin="https://example.org/files/torch-2.9.0-py3-none-any-cuda12.6.whl")  # fmt: skip
    env = environment(torch, dist("nvidia-nccl-cu12", "2.27.3"), toolkit="12.4")
    by_place = {
        place.kind: {f.id: [str(x) for x in f.fixes] for f in check(env, place).findings}
        for place in (PREFIX, LOCK, VENV)
    }
    remote = (
        "  (add the --index-url or -f it came from: torch 2.9.0 from "
        "https://example.org/files/torch-2.9.0-py3-none-any-cuda12.6.whl)"
    )
    assert by_place[PlaceKind.PREFIX]["disagreeing-variant:torch"] == [
        "variant-bridge install torch==2.9.0 --prefix /envs/ml" + remote,
        "conda install -p /envs/ml cuda-version=12.6",
    ]
    assert by_place[PlaceKind.LOCKFILE] == {
        "disagreeing-variant:torch": [
            "variant-bridge select torch==2.9.0 --lockfile /ws/pixi.lock -e cuda" + remote,
            "pixi add cuda-version=12.6  (in the workspace of the lock)",
        ],
        "orphaned-wheel:nvidia-nccl-cu12": [
            "pixi remove --pypi nvidia-nccl-cu12  (in the workspace of the lock; then pixi install)"
        ],
    }
    assert by_place[PlaceKind.INTERPRETER] == {
        "disagreeing-variant:torch": [
            "variant-bridge install torch==2.9.0 --python /ws/.venv/bin/python" + remote
        ],  # no conda side to change
        "orphaned-wheel:nvidia-nccl-cu12": [
            "uv pip uninstall --python /ws/.venv/bin/python nvidia-nccl-cu12"
        ],
    }
    incomplete = check(env).findings[0].fixes[0]
    assert not incomplete.complete
    assert all(not f.fixes for f in check(env, None).findings)  # nowhere to act


def test_findings_are_worst_first_with_stable_ids() -> None:
    env = environment(
        dist("gpulib", "1.0", variant="cu129: nvidia :: cuda_version_lower_bound :: 12.9"),
        dist("nvidia-nccl-cu12", "2.27.3"),
        dist("nvidia-cublas-cu12", "12.6.4.1", installer="pip"),
        conda=[record("libcublas", "12.6.77")],
        cuda="12.6",
        toolkit=None,
    )
    report = check(env)
    assert [f.id for f in report.findings] == [
        "disagreeing-variant:gpulib",  # error
        "orphaned-wheel:nvidia-cublas-cu12",  # warnings, by subject
        "orphaned-wheel:nvidia-nccl-cu12",
        "duplicate-library:nvidia-cublas-cu12",  # info
    ]
    assert report.worst is Severity.ERROR
    assert report.counts() == {Severity.ERROR: 1, Severity.WARNING: 2, Severity.INFO: 1}
    # An orphan's fix removes every orphan, whichever installed them (uv when any did).
    assert str(report.findings[1].fix) == (
        "uv pip uninstall --python /envs/ml/bin/python nvidia-nccl-cu12 nvidia-cublas-cu12"
    )
    reversed_env = replace(env, python_packages=env.python_packages[::-1])
    assert [f.id for f in check(reversed_env).findings] == [f.id for f in report.findings]


def test_an_environment_without_pypi_packages_is_healthy() -> None:
    report = check(environment(conda=[record("libcublas", "12.6.77")]))
    assert (report.findings, report.checked, report.healthy) == ((), 0, True)


@pytest.mark.parametrize("python", [None, "3.12.7"])
def test_marker_environment_never_uses_this_machines_python(python: str | None) -> None:
    env = replace(environment(), python=python)
    assert ("python_version" in marker_environment(env)) is (python is not None)
