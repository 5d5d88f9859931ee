"""AMD and Intel facts in detection: rattler's rules for __amdgpu/__amdgpu_arch, the providers'
variables, the ROCm runtime (a real prefix with rocm-core, the machine's version file), several
GPUs, KFD's topology, and the installed Intel provider."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.worlds.channel import Channel, Pkg, base_packages
from tests.worlds.prefix import HOST_VIRTUAL_PACKAGES, install_prefix, solve
from variant_bridge.detect import detect_environment
from variant_bridge.detect.machine import AmdGpu, amd_gpus, rocm_version_file
from variant_bridge.environment import Environment, Source, SourceKind
from variant_bridge.errors import InvalidTarget


def _vp(env: Environment, name: str) -> tuple[str, str] | None:
    vp = env.virtual_package(name)
    return None if vp is None else (vp.version, str(vp.source))


def _rattler(environ: dict[str, str]) -> dict[str, str]:
    """What py-rattler itself detects with *environ* (its from_env overrides)."""
    import os

    import rattler

    saved = {k: os.environ.get(k) for k in environ}
    os.environ.update(environ)
    try:
        detected = rattler.VirtualPackage.detect(rattler.VirtualPackageOverrides.from_env())
        return {
            str(v.into_generic().name.normalized): str(v.into_generic().version) for v in detected
        }
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


# -- __amdgpu and __amdgpu_arch as rattler checks them ----------------------------------------------


@pytest.mark.parametrize(
    "environ",
    [
        {"CONDA_OVERRIDE_AMDGPU": "0", "CONDA_OVERRIDE_AMDGPU_ARCH": "9.4.2"},
        {"CONDA_OVERRIDE_AMDGPU": "0", "CONDA_OVERRIDE_AMDGPU_ARCH": "9.0.10"},
        {"CONDA_OVERRIDE_AMDGPU": "0"},
        {"CONDA_OVERRIDE_AMDGPU": "", "CONDA_OVERRIDE_AMDGPU_ARCH": "9.4.2"},
        {"CONDA_OVERRIDE_AMDGPU_ARCH": "9.4.2"},  # needs __amdgpu (this machine has no AMD GPU)
    ],
)
def test_overrides_give_what_rattler_gives(environ: dict[str, str]) -> None:
    env = detect_environment(env=environ)
    expected = _rattler(environ)
    for name in ("__amdgpu", "__amdgpu_arch"):
        got = env.virtual_package(name)
        assert (got.version if got else None) == expected.get(name), name


@pytest.mark.parametrize(
    ("environ", "message"),
    [
        (
            {"CONDA_OVERRIDE_AMDGPU": "1.2"},
            "CONDA_OVERRIDE_AMDGPU='1.2': expected 0 (an AMD GPU is present)",
        ),
        (
            {"CONDA_OVERRIDE_AMDGPU": "0", "CONDA_OVERRIDE_AMDGPU_ARCH": "gfx942"},
            "CONDA_OVERRIDE_AMDGPU_ARCH='gfx942': expected an AMD GPU ISA like 9.4.2",
        ),
        (
            {"CONDA_OVERRIDE_AMDGPU": "0", "CONDA_OVERRIDE_AMDGPU_ARCH": "9.4"},
            "CONDA_OVERRIDE_AMDGPU_ARCH='9.4': expected an AMD GPU ISA like 9.4.2",
        ),
        (
            {"AMD_VARIANT_PROVIDER_FORCE_GFX_ARCH": "mi300"},
            "AMD_VARIANT_PROVIDER_FORCE_GFX_ARCH='mi300': expected gfx names like gfx942",
        ),
        (
            {"AMD_VARIANT_PROVIDER_FORCE_ROCM_VERSION": "seven"},
            "AMD_VARIANT_PROVIDER_FORCE_ROCM_VERSION='seven': expected a ROCm version like 6.4",
        ),
    ],
)
def test_what_rattler_refuses_is_one_clear_error(environ: dict[str, str], message: str) -> None:
    with pytest.raises(InvalidTarget) as info:
        detect_environment(env=environ)
    assert str(info.value).startswith(message)


def test_an_arch_without_the_gpu_is_dropped_with_a_note() -> None:
    env = detect_environment(env={"CONDA_OVERRIDE_AMDGPU_ARCH": "9.4.2"})
    assert env.virtual_package("__amdgpu_arch") is None
    assert "__amdgpu_arch from CONDA_OVERRIDE_AMDGPU_ARCH dropped: no __amdgpu" in env.notes


def test_target_takes_gfx_names_and_implies_the_gpu() -> None:
    env = detect_environment(targets=["amdgpu_arch=gfx90a"], env={})
    assert _vp(env, "__amdgpu") == ("0", "--target")
    assert _vp(env, "__amdgpu_arch") == ("9.0.10", "--target")


def test_target_amdgpu_absent_with_an_arch_is_an_error() -> None:
    with pytest.raises(InvalidTarget, match="needs __amdgpu"):
        detect_environment(targets=["amdgpu=", "amdgpu_arch=9.4.2"], env={})


def test_the_providers_variables_are_facts() -> None:
    env = detect_environment(
        env={
            "AMD_VARIANT_PROVIDER_FORCE_GFX_ARCH": "gfx942;gfx90a",
            "AMD_VARIANT_PROVIDER_FORCE_ROCM_VERSION": "7.0.0",
        }
    )
    variable = "AMD_VARIANT_PROVIDER_FORCE_GFX_ARCH"
    assert _vp(env, "__amdgpu_arch") == ("9.4.2", variable)
    assert [g.version for g in env.gpus] == ["9.4.2", "9.0.10"]
    assert env.rocm is not None
    assert (env.rocm.version, str(env.rocm.source)) == (
        "7.0.0",
        "AMD_VARIANT_PROVIDER_FORCE_ROCM_VERSION",
    )


def test_conda_override_wins_over_the_provider_variable() -> None:
    env = detect_environment(
        env={
            "CONDA_OVERRIDE_AMDGPU": "0",
            "CONDA_OVERRIDE_AMDGPU_ARCH": "11.0.0",
            "AMD_VARIANT_PROVIDER_FORCE_GFX_ARCH": "gfx942",
        }
    )
    assert _vp(env, "__amdgpu_arch") == ("11.0.0", "CONDA_OVERRIDE_AMDGPU_ARCH")


# -- several GPUs ------------------------------------------------------------------------------


def test_several_cuda_gpus_keep_each_and_conda_sees_the_lowest() -> None:
    env = detect_environment(targets=["cuda=12.8", "cuda_arch=9.0,8.0"], env={})
    assert _vp(env, "__cuda_arch") == ("8.0", "--target")
    assert [g.version for g in env.gpus_of("__cuda_arch")] == ["9.0", "8.0"]


@pytest.mark.parametrize(
    ("items", "message"),
    [
        (["cuda=12.8", "cuda_arch=9.0,"], "--target cuda_arch='9.0,': an empty value in the list"),
        (
            ["cuda=12.8", "cuda_arch=9.0,90"],
            "--target cuda_arch='90': expected a compute capability",
        ),
        (
            ["amdgpu_arch=gfx942,mi250"],
            "--target amdgpu_arch='mi250': expected a gfx name like gfx942 or an ISA like 9.4.2",
        ),
        (["rocm_version=6"], "--target rocm_version='6': expected a ROCm version like 6.4"),
        (["device_ip=20.1"], "--target device_ip='20.1': expected Intel GPU device IPs"),
    ],
)
def test_bad_lists_and_values(items: list[str], message: str) -> None:
    with pytest.raises(InvalidTarget) as info:
        detect_environment(targets=items, env={})
    assert str(info.value).startswith(message)


# -- the ROCm runtime ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def rocm_prefix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real prefix (rattler-solved and installed) holding conda-forge's rocm-core 6.4.3, with
    the ROCm version file rocm-core installs."""
    root = tmp_path_factory.mktemp("rocm-prefix")
    rocm_core = Pkg("rocm-core", "6.4.3", "h0_0", files={".info/version": "6.4.3-0\n"})
    channel = Channel(root / "channel").add([rocm_core, *base_packages()])
    specs = ["rocm-core 6.4.*", "python"]
    records = solve([channel], specs, HOST_VIRTUAL_PACKAGES)
    return install_prefix(records, root / "env", root / "pkgs", specs)


def test_the_runtime_comes_from_the_prefix(rocm_prefix: Path) -> None:
    env = detect_environment(prefix=rocm_prefix, env={})
    assert env.rocm is not None
    assert (env.rocm.package, env.rocm.version, env.rocm.source) == (
        "rocm-core",
        "6.4.3",
        Source.PREFIX,
    )


def test_a_declared_runtime_wins_over_the_prefix_with_a_note(rocm_prefix: Path) -> None:
    env = detect_environment(prefix=rocm_prefix, targets=["rocm_version=7.0"], env={})
    assert env.rocm is not None
    assert (env.rocm.version, env.rocm.source) == ("7.0", Source.TARGET)
    assert any("overridden by --target rocm_version" in n for n in env.notes)


def test_the_machines_runtime_as_the_provider_reads_it(tmp_path: Path) -> None:
    (tmp_path / ".info").mkdir()
    (tmp_path / ".info" / "version").write_text("6.4.2-120\n")
    env = detect_environment(env={"ROCM_PATH": str(tmp_path)})
    assert env.rocm is not None
    assert env.rocm.version == "6.4.2"
    assert env.rocm.source.kind is SourceKind.DETECTED
    assert str(env.rocm.source) == str(tmp_path / ".info" / "version")


def test_another_machine_never_reads_this_ones_runtime(tmp_path: Path) -> None:
    (tmp_path / ".info").mkdir()
    (tmp_path / ".info" / "version").write_text("6.4.2\n")
    env = detect_environment(platform="linux-aarch64", env={"ROCM_PATH": str(tmp_path)})
    assert env.rocm is None


@pytest.mark.parametrize("text", ["", "garbage", "\x00\x01"])
def test_an_unreadable_version_file_is_no_runtime(tmp_path: Path, text: str) -> None:
    (tmp_path / ".info").mkdir()
    (tmp_path / ".info" / "version").write_text(text)
    found = rocm_version_file(
        {"ROCM_PATH": str(tmp_path)},
        root_variable="ROCM_PATH",
        default_root="/nonexistent",
        version_file=".info/version",
    )
    assert found is None


# -- KFD topology: every AMD GPU -------------------------------------------------------------------


def _node(root: Path, name: str, **properties: int) -> None:
    (root / name).mkdir(parents=True)
    text = "".join(f"{k} {v}\n" for k, v in properties.items())
    (root / name / "properties").write_text(text)


def test_kfd_lists_gpus_most_compute_units_first(tmp_path: Path) -> None:
    _node(tmp_path, "0", cpu_cores_count=64, simd_count=0, gfx_target_version=0)  # the CPU
    _node(tmp_path, "1", simd_count=416, simd_per_cu=4, gfx_target_version=90010)  # MI250X GCD
    _node(tmp_path, "2", simd_count=1216, simd_per_cu=4, gfx_target_version=90402)  # MI300X
    _node(tmp_path, "3", simd_count=192, simd_per_cu=2, gfx_target_version=110000)  # RX 7900
    assert amd_gpus(tmp_path) == (
        AmdGpu((9, 4, 2), 304, "2"),
        AmdGpu((9, 0, 10), 104, "1"),
        AmdGpu((11, 0, 0), 96, "3"),
    )


def test_no_kfd_no_gpus(tmp_path: Path) -> None:
    assert amd_gpus(tmp_path / "missing") == ()
    (tmp_path / "5").mkdir()  # a node without properties
    assert amd_gpus(tmp_path) == ()


# -- Intel -------------------------------------------------------------------------------------


def test_device_ip_from_target_and_the_providers_variable() -> None:
    env = detect_environment(targets=["device_ip=20.1.0,12.55.8"], env={})
    (declared,) = env.declared_features
    assert (declared.values, declared.source) == (("20.1.0", "12.55.8"), Source.TARGET)
    env = detect_environment(env={"INTEL_VARIANT_PROVIDER_FORCE_DEVICE_IP": "30.0.4"})
    (declared,) = env.declared_features
    assert str(declared.source) == "INTEL_VARIANT_PROVIDER_FORCE_DEVICE_IP"


PLUGIN = """
from dataclasses import dataclass

@dataclass
class VariantFeatureConfig:
    name: str
    values: list
    multi_value: bool = True

class IntelVariantPlugin:
    namespace = "intel"
    @classmethod
    def get_supported_configs(cls):
        return [VariantFeatureConfig("device_ip", ["20.1.0", "12.60.7"])]
"""


def test_the_installed_intel_provider_is_asked_on_this_machine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A stand-in with the real provider's module path and return shape (the provider needs Level
    Zero and is on no registry)."""
    package = tmp_path / "intel_variant_provider"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "plugin.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        env = detect_environment(env={})
        other = detect_environment(platform="linux-aarch64", env={})
    finally:  # no later test may find the stand-in
        for name in ("intel_variant_provider.plugin", "intel_variant_provider"):
            sys.modules.pop(name, None)
    (declared,) = env.declared_features
    assert declared.values == ("20.1.0", "12.60.7")
    assert str(declared.source) == "intel_variant_provider.plugin:IntelVariantPlugin"
    assert other.declared_features == ()  # another machine is never asked about
