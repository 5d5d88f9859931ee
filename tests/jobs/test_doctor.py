"""The doctor use case on real parts: rattler-installed prefixes with a real interpreter, wheels
installed by the bridge's own install (uv, hash-checked), the toolkit changed by a second rattler
install, and the fixer re-selecting through the install job."""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.cli.conftest import run_script
from tests.worlds.channel import Channel
from tests.worlds.gpu_env import CUBLAS, gpu_channel, gpulib_wheels, make_env, set_toolkit
from variant_bridge.detect import detect_environment
from variant_bridge.errors import InstallError, InvalidTarget
from variant_bridge.health import FindingKind, FixKind, PlaceKind, Severity
from variant_bridge.indexes import Downloads
from variant_bridge.indexes.transport import Transport
from variant_bridge.install import find_uv
from variant_bridge.jobs.doctor import (
    Change,
    Examined,
    examine_environment,
    fix,
    origin_sources,
    prefix_of,
)

pytestmark = pytest.mark.slow

DRIVER = ["cuda=12.9"]  # no GPU here: the driver is declared, as CONDA_OVERRIDE_CUDA would


@dataclass(frozen=True)
class World:
    channel: Channel
    wheels: Path
    """gpulib cu124 + cu126 + null, and nvidia-cublas-cu12 of 12.4, 12.6, 12.8."""
    only_126: Path
    """gpulib cu126 + null only: after a change to 12.4, only the CPU build agrees."""
    prefix: Path
    """cuda-version 12.6, gpulib cu126 installed from `wheels` by `variant-bridge install`."""
    prefix_cpu_only: Path
    """The same, gpulib installed from `only_126`."""


def _installed(channel: Channel, root: Path, wheels: Path) -> Path:
    prefix = make_env(channel, root, "12.6")
    result = run_script("install", "gpulib", "-f", str(wheels), "--prefix", str(prefix),
                        env={"CONDA_OVERRIDE_CUDA": "12.9"})  # fmt: skip
    assert result.returncode == 0, result.stderr
    return prefix


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    root = tmp_path_factory.mktemp("doctor")
    channel = gpu_channel(root / "channel")
    wheels = gpulib_wheels(root / "wheels")
    only_126 = gpulib_wheels(root / "only-126", minors=("12.6",))
    return World(
        channel, wheels, only_126,
        _installed(channel, root / "a", wheels), _installed(channel, root / "b", only_126),
    )  # fmt: skip


def _copy(prefix: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "env"
    shutil.copytree(prefix, copy, symlinks=True)
    return copy


def _examine(prefix: Path, *targets: str) -> Examined:
    env = detect_environment(prefix=prefix, targets=[*DRIVER, *targets], env={})
    return examine_environment(env)


def _uv_install(prefix: Path, wheels: Path, requirement: str) -> None:
    uv = find_uv()
    assert uv is not None
    subprocess.run([uv, "pip", "install", "-q", "--python", str(prefix / "bin" / "python"),
                    "--no-index", "-f", str(wheels), requirement], check=True)  # fmt: skip


def test_the_same_cuda_minor_from_both_sides_is_a_harmless_duplicate(world: World) -> None:
    examined = _examine(world.prefix)
    report = examined.report
    assert [f.id for f in report.findings] == ["duplicate-library:nvidia-cublas-cu12"]
    (finding,) = report.findings
    assert finding.severity is Severity.INFO
    assert finding.message == (
        f"nvidia-cublas-cu12 {CUBLAS['12.6']} (PyPI, CUDA 12.6) and libcublas 12.6.77 (conda, "
        "CUDA 12.6) are the same library twice: wasted space, whichever loads first serves; "
        "required by gpulib 1.0"
    )
    assert report.healthy
    assert report.place is not None
    assert report.place.kind is PlaceKind.PREFIX
    assert examined.python is not None
    assert examined.python.executable == str(world.prefix / "bin" / "python")


def test_a_wheel_of_another_cuda_minor_mismatches(world: World, tmp_path: Path) -> None:
    prefix = _copy(world.prefix, tmp_path)
    _uv_install(prefix, world.wheels, f"nvidia-cublas-cu12=={CUBLAS['12.8']}")
    (finding,) = _examine(prefix).report.findings
    assert finding.id == "mismatched-library:nvidia-cublas-cu12"
    assert finding.severity is Severity.WARNING
    assert f"nvidia-cublas-cu12 {CUBLAS['12.8']} (PyPI, CUDA 12.8) and libcublas 12.6.77" in (
        finding.message
    )
    assert finding.fix is not None
    assert finding.fix.argv == ("variant-bridge", "install", "gpulib==1.0", "--prefix",
                                str(prefix), "-f", str(world.wheels))  # fmt: skip


def test_a_toolkit_change_is_found_and_the_fixer_reselects_the_build(
    world: World, tmp_path: Path
) -> None:
    prefix = _copy(world.prefix, tmp_path)
    set_toolkit(world.channel, prefix, tmp_path / "pkgs", "12.4")  # conda install cuda-version=12.4
    examined = _examine(prefix)
    assert [(f.id, f.severity) for f in examined.report.findings] == [
        ("disagreeing-variant:gpulib", Severity.WARNING),
        ("mismatched-library:nvidia-cublas-cu12", Severity.WARNING),
    ]
    disagreeing = examined.report.findings[0]
    assert "gpulib 1.0 [cu126] no longer agrees with the environment: needs " in (
        disagreeing.message
    )
    assert [f.kind for f in disagreeing.fixes] == [FixKind.REINSTALL, FixKind.SET_TOOLKIT]
    assert disagreeing.fixes[1].command == f"conda install -p {prefix} cuda-version=12.6"

    origins = origin_sources(examined)
    assert (len(origins.sources), origins.unknown) == (1, ())
    done = fix(examined, origins.sources, Downloads(tmp_path / "downloads", transport=Transport()))
    assert done.requests == ("gpulib==1.0",)
    assert done.changes == (Change("gpulib", "1.0", "cu126", "cu124"),)
    assert done.result is not None
    assert sorted(done.result.installed) == [
        "gpulib-1.0-py3-none-any-cu124.whl",
        f"nvidia_cublas_cu12-{CUBLAS['12.4']}-py3-none-any.whl",
    ]
    assert done.leftovers == ()  # the 12.6 cuBLAS wheel was replaced by 12.4's
    after = _examine(prefix).report
    assert [f.id for f in after.findings] == ["duplicate-library:nvidia-cublas-cu12"]
    assert after.healthy


def test_a_cuda_build_replaced_by_the_cpu_build_leaves_an_orphan_and_its_command_removes_it(
    world: World, tmp_path: Path
) -> None:
    prefix = _copy(world.prefix_cpu_only, tmp_path)
    set_toolkit(world.channel, prefix, tmp_path / "pkgs", "12.4")
    examined = _examine(prefix)
    done = fix(
        examined,
        origin_sources(examined).sources,
        Downloads(tmp_path / "downloads", transport=Transport()),
    )
    assert done.changes == (Change("gpulib", "1.0", "cu126", "null"),)
    assert [d.name for d in done.leftovers] == ["nvidia-cublas-cu12"]

    report = _examine(prefix).report
    assert [f.id for f in report.findings] == [
        "mismatched-library:nvidia-cublas-cu12",  # 12.6's wheel beside conda's 12.4 ...
        "orphaned-wheel:nvidia-cublas-cu12",  # ... which nothing requires any more
    ]
    orphan = report.of_kind(FindingKind.ORPHANED_WHEEL)[0]
    assert orphan.fix is not None
    assert orphan.fix.argv[:4] == ("uv", "pip", "uninstall", "--python")  # uv installed it
    uv = find_uv()
    assert uv is not None
    subprocess.run([uv, *orphan.fix.argv[1:]], check=True, capture_output=True)  # the fix, run
    assert _examine(prefix).report.findings == ()


def test_a_dry_run_fix_checks_the_files_and_changes_nothing(world: World, tmp_path: Path) -> None:
    prefix = _copy(world.prefix, tmp_path)
    set_toolkit(world.channel, prefix, tmp_path / "pkgs", "12.4")
    examined = _examine(prefix)
    done = fix(
        examined,
        origin_sources(examined).sources,
        Downloads(tmp_path / "dl", transport=Transport()),
        dry_run=True,
    )
    assert done.result is not None
    assert done.result.dry_run
    assert all(v.checked for v in done.result.verified)  # hash-checked like a real run
    assert [f.id for f in _examine(prefix).report.findings] == [
        "disagreeing-variant:gpulib", "mismatched-library:nvidia-cublas-cu12",
    ]  # fmt: skip


def test_an_interpreter_is_examined_with_the_prefix_it_lives_in(world: World) -> None:
    python = str(world.prefix / "bin" / "python")
    assert prefix_of(python) == world.prefix
    env = detect_environment(prefix=prefix_of(python), targets=DRIVER, env={})
    examined = examine_environment(env, python=python)
    assert examined.report.place is not None
    assert (examined.report.place.kind, examined.report.place.path) == (
        PlaceKind.INTERPRETER, python,
    )  # fmt: skip
    assert [f.id for f in examined.report.findings] == ["duplicate-library:nvidia-cublas-cu12"]
    assert {d.name for d in examined.env.python_packages} == {"gpulib", "nvidia-cublas-cu12"}


def test_a_venv_without_conda_is_examined_alone(tmp_path: Path, world: World) -> None:
    uv = find_uv()
    assert uv is not None
    venv = tmp_path / "venv"
    subprocess.run([uv, "venv", "-q", str(venv)], check=True)
    _uv_install(venv, world.wheels, f"nvidia-cublas-cu12=={CUBLAS['12.8']}")
    python = str(venv / "bin" / "python")
    assert prefix_of(python) is None
    report = examine_environment(detect_environment(env={}), python=python).report
    assert [f.id for f in report.findings] == ["orphaned-wheel:nvidia-cublas-cu12"]
    assert report.findings[0].fix is not None
    assert (
        report.findings[0].fix.command == f"uv pip uninstall --python {python} nvidia-cublas-cu12"
    )


def test_nothing_to_examine_and_nothing_to_fix_are_clear_errors(world: World) -> None:
    with pytest.raises(InvalidTarget, match="nothing to examine: pass --prefix, --lockfile"):
        examine_environment(detect_environment(env={}))
    examined = _examine(world.prefix)
    unchanged = fix(
        examined, (), Downloads(Path("/nonexistent"), transport=Transport())
    )  # nothing disagrees
    assert unchanged.requests == ()


def test_a_lock_cannot_be_fixed_in_place(world: World, tmp_path: Path) -> None:
    prefix = _copy(world.prefix, tmp_path)
    set_toolkit(world.channel, prefix, tmp_path / "pkgs", "12.4")
    examined = _examine(prefix)
    locked = Examined(examined.env, examined.supported, examined.report, None)
    with pytest.raises(InstallError, match="no interpreter to reinstall into"):
        fix(
            locked,
            origin_sources(examined).sources,
            Downloads(tmp_path / "dl", transport=Transport()),
        )


def test_origins_not_on_this_machine_are_named_for_the_caller(world: World, tmp_path: Path) -> None:
    prefix = _copy(world.prefix, tmp_path)
    set_toolkit(world.channel, prefix, tmp_path / "pkgs", "12.4")
    (direct,) = prefix.glob("lib/python*/site-packages/gpulib-1.0.dist-info/direct_url.json")
    url = "https://example.org/files/gpulib-1.0-py3-none-any-cu126.whl"
    direct.write_text(json.dumps({"url": url, "archive_info": {}}))
    examined = _examine(prefix)
    origins = origin_sources(examined)
    assert (origins.sources, origins.unknown) == ((), (f"gpulib 1.0 from {url}",))
    reinstall = examined.report.findings[0].fixes[0]
    assert not reinstall.complete
    assert reinstall.note == f"add the --index-url or -f it came from: gpulib 1.0 from {url}"


def test_real_torch_after_a_toolkit_downgrade_the_fix_says_what_it_left_behind(
    corpus: Path, world: World, tmp_path: Path
) -> None:
    """Issue 16's case on the real torch 2.9.0 metadata: torch cuda12.6 (its real variant entry,
    the real component pins) installed for cuda-version 12.6, then `conda install
    cuda-version=12.4`. Its pins say 12.6 (both CUDA 12 builds declare lower bound 12.0), so it
    disagrees; no CUDA build fits 12.4, so the fixer's re-selection is the CPU build, and the
    component wheels the CUDA build pinned are what it leaves behind."""
    from tests.worlds.torch_index import build_torch_index

    index = build_torch_index(corpus, tmp_path / "torch")
    prefix = make_env(world.channel, tmp_path / "p", "12.6")
    override = {"CONDA_OVERRIDE_CUDA": "12.9", "CONDA_OVERRIDE_CUDA_ARCH": "9.0"}
    result = run_script("install", "torch", "-f", str(index), "--prefix", str(prefix),
                        "--json", env=override)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "torch-2.9.0-py3-none-any-cuda12.6.whl" in json.loads(result.stdout)["installed"]
    before = _examine(prefix, "cuda_arch=9.0")
    assert [f.id for f in before.report.findings] == ["duplicate-library:nvidia-cublas"]

    set_toolkit(world.channel, prefix, tmp_path / "pkgs", "12.4")
    examined = _examine(prefix, "cuda_arch=9.0")
    torch = examined.report.findings[0]
    assert (torch.id, torch.severity) == ("disagreeing-variant:torch", Severity.WARNING)
    assert torch.message.endswith(
        "cuda12.6 pins nvidia-cublas 12.6.4.1 (conda: libcublas, CUDA 12.6) but the prefix's "
        "toolkit is cuda-version 12.4"
    )
    assert [str(f) for f in torch.fixes] == [
        f"variant-bridge install torch==2.9.0 --prefix {prefix} -f {index}",
        f"conda install -p {prefix} cuda-version=12.6",
    ]
    done = fix(
        examined,
        origin_sources(examined).sources,
        Downloads(tmp_path / "dl", transport=Transport()),
    )
    assert done.changes == (Change("torch", "2.9.0", "cuda12.6", "null"),)
    left = sorted(d.name for d in done.leftovers)
    assert left == [  # every component the cuda12.6 build pinned; triton is no CUDA wheel
        "nvidia-cublas", "nvidia-cuda-cupti", "nvidia-cuda-nvrtc", "nvidia-cuda-runtime",
        "nvidia-cudnn", "nvidia-cufft", "nvidia-cufile", "nvidia-curand", "nvidia-cusolver",
        "nvidia-cusparse", "nvidia-cusparselt", "nvidia-nccl", "nvidia-nvjitlink",
        "nvidia-nvshmem", "nvidia-nvtx",
    ]  # fmt: skip
    orphans = _examine(prefix, "cuda_arch=9.0").report.of_kind(FindingKind.ORPHANED_WHEEL)
    assert sorted(f.subject for f in orphans) == left


def test_a_real_lock_of_37_pypi_packages_has_nothing_to_report(corpus: Path) -> None:
    # pixi's detectron2 example: a CPU torch stack from PyPI beside conda's; no CUDA wheel.
    lock = corpus / "real/pixi-locks/pixi__examples__detectron2-from-source/pixi.lock"
    env = detect_environment(lockfile=lock, platform="linux-64", env={})
    report = examine_environment(env, lockfile=lock).report
    assert (report.checked, report.findings, report.problems) == (37, (), ())
    assert report.place is not None
    assert (report.place.kind, report.place.path) == (PlaceKind.LOCKFILE, str(lock))
