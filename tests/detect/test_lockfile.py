"""Reading a real pixi.lock (variant_bridge.detect.lockfile, through detect_environment)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.worlds.channel import Channel
from tests.worlds.lockfile import LockedPlatform, write_lockfile
from tests.worlds.prefix import HOST_VIRTUAL_PACKAGES, solve
from tests.worlds.wheels import make_wheel
from variant_bridge.detect import detect_environment
from variant_bridge.detect.machine import host_platform
from variant_bridge.environment import Environment, PythonDistribution, Source, Toolkit
from variant_bridge.errors import DetectionError, InvalidTarget

TORCH_SHA = "b" * 64
TORCH_URL = (
    "https://download.example.org/whl/torch-2.9.0-cp312-cp312-manylinux_2_28_x86_64.whl"
    f"#sha256={TORCH_SHA}"
)

linux_host = pytest.mark.skipif(
    host_platform() != "linux-64", reason="the lock's first platform is linux-64"
)


@dataclass(frozen=True)
class LockWorld:
    lock: Path
    records: list[Any]


@pytest.fixture(scope="module")
def world(cuda_channel: Channel, tmp_path_factory: pytest.TempPathFactory) -> LockWorld:
    """Environments: default (linux-64 + a rich `mac` platform), cpu, multi (no linux), maconly."""
    root = tmp_path_factory.mktemp("lock-world")
    specs = ["libcublas", "cuda-version 12.6.*", "python"]
    records = solve([cuda_channel], specs, [*HOST_VIRTUAL_PACKAGES, "__cuda=12.8"])
    mac_records = solve(
        [cuda_channel], ["cuda-version 12.8.*"], ["__unix=0", "__osx=14.1"], platform="osx-arm64"
    )
    win_records = solve([cuda_channel], ["cuda-version 12.8.*"], [], platform="win-64")
    python = [r for r in records if r.name.normalized == "python"]
    mac = LockedPlatform(
        "mac",
        mac_records,
        subdir="osx-arm64",
        virtual_packages=["__osx=14.1", "__archspec=1=m2"],
    )
    lock = write_lockfile(
        root / "pixi.lock",
        {
            "default": [
                LockedPlatform("linux-64", records, [("torch", "2.9.0", TORCH_URL)]),
                mac,
            ],
            "cpu": [LockedPlatform("linux-64", python)],
            "multi": [mac, LockedPlatform("win-64", win_records)],
            "maconly": [mac],
        },
        channels=[cuda_channel.url],
    )
    return LockWorld(lock, records)


@pytest.fixture(scope="module")
def default(world: LockWorld) -> Environment:
    return detect_environment(lockfile=world.lock, platform="linux-64", env={})


def test_locked_conda_packages(default: Environment, world: LockWorld) -> None:
    assert [str(r) for r in default.conda_packages] == sorted(str(r) for r in world.records)
    cublas = default.conda_package("libcublas")
    solved = next(r for r in world.records if r.name.normalized == "libcublas")
    assert cublas is not None
    assert cublas.sha256 == solved.sha256.hex()
    assert cublas.md5 == solved.md5.hex()
    assert cublas.depends == ("cuda-version >=12.6,<12.7.0a0", "__glibc >=2.17,<3.0.a0")
    assert cublas.subdir == "linux-64"
    # Plain text, comparable and JSON-serialisable like a prefix's records (not rattler objects).
    assert type(cublas.build) is str
    assert cublas.build == "h0_0"


def test_toolkit_python_origin(default: Environment) -> None:
    assert default.toolkit == Toolkit("cuda-version", "12.6", Source.LOCKFILE)
    assert default.python == "3.12.7"
    assert default.platform == "linux-64"
    assert default.origin == "pixi.lock default/linux-64"


def test_locked_pypi_packages(default: Environment) -> None:
    assert default.python_packages == (
        PythonDistribution(name="torch", version="2.9.0", location=TORCH_URL, sha256=TORCH_SHA),
    )


@linux_host
def test_host_platform_is_the_default_and_detects(world: LockWorld) -> None:
    import rattler

    env = detect_environment(lockfile=world.lock, env={})
    assert env.origin == "pixi.lock default/linux-64"
    detected = {str(vp.into_generic()) for vp in rattler.VirtualPackage.detect()}
    assert {str(vp) for vp in env.virtual_packages} == detected


def test_overrides_apply_to_a_lock(world: LockWorld) -> None:
    env = detect_environment(
        lockfile=world.lock, platform="linux-64", env={"CONDA_OVERRIDE_CUDA": "12.8"}
    )
    assert env.cuda is not None
    assert (str(env.cuda), env.cuda.source) == (
        "__cuda=12.8=0",
        Source.override("CONDA_OVERRIDE_CUDA"),
    )


@pytest.mark.parametrize(
    "platform",
    [
        "mac",  # by the lock's name for the platform
        "osx-arm64",  # by its subdir
    ],
)
def test_rich_platform_of_another_os(world: LockWorld, platform: str) -> None:
    env = detect_environment(lockfile=world.lock, platform=platform, env={})
    assert env.platform == "osx-arm64"
    assert env.origin == "pixi.lock default/mac"
    assert env.toolkit == Toolkit("cuda-version", "12.8", Source.LOCKFILE)
    # Nothing from this machine: the lock's declarations, then the platform's defaults.
    assert {vp.name: (str(vp), vp.source) for vp in env.virtual_packages} == {
        "__archspec": ("__archspec=1=m2", Source.LOCKFILE),
        "__osx": ("__osx=14.1=0", Source.LOCKFILE),
        "__unix": ("__unix=0=0", Source.PLATFORM_DEFAULT),
    }


def test_lock_declarations_describe_the_platform_even_on_this_machine(
    cuda_channel: Channel, tmp_path: Path
) -> None:
    host = host_platform()
    records = solve([cuda_channel], ["cuda-version 12.8.*"], [], platform=host)
    lock = write_lockfile(
        tmp_path / "pixi.lock",
        {"default": [LockedPlatform("gpu", records, subdir=host, virtual_packages=["__cuda=12"])]},
    )
    env = detect_environment(lockfile=lock, env={})
    assert env.origin == "pixi.lock default/gpu"
    assert env.cuda is not None
    assert (env.cuda.version, env.cuda.source) == ("12", Source.LOCKFILE)  # not measured here
    assert all(vp.source != Source.DETECTED for vp in env.virtual_packages)
    # Overrides still win over what the lock declares, as over detection.
    overridden = detect_environment(lockfile=lock, env={"CONDA_OVERRIDE_CUDA": ""})
    assert overridden.cuda is None


def test_targets_beat_lock_declarations(world: LockWorld) -> None:
    env = detect_environment(lockfile=world.lock, platform="mac", targets=["osx=15.0"], env={})
    assert env.virtual_package("__osx") is not None
    assert str(env.virtual_package("__osx")) == "__osx=15.0=0"


def test_other_environment(world: LockWorld) -> None:
    env = detect_environment(lockfile=world.lock, environment="cpu", platform="linux-64", env={})
    assert [r.name for r in env.conda_packages] == ["python"]
    assert env.toolkit is None
    assert env.origin == "pixi.lock cpu/linux-64"


def test_only_platform_is_the_default(world: LockWorld) -> None:
    env = detect_environment(lockfile=world.lock, environment="maconly", env={})
    assert env.platform == "osx-arm64"


def test_lockfile_wins_over_conda_prefix(world: LockWorld, tmp_path: Path) -> None:
    env = detect_environment(
        lockfile=world.lock, platform="linux-64", env={"CONDA_PREFIX": str(tmp_path)}
    )
    assert env.origin == "pixi.lock default/linux-64"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (  # unknown environment must list the real ones
            {"environment": "gpu"},
            "pixi.lock: no environment 'gpu' (available: cpu, default, maconly, multi)",
        ),
        (  # unknown platform must list the locked ones
            {"platform": "linux-aarch64"},
            (
                "pixi.lock: environment 'default' does not lock platform 'linux-aarch64' "
                "(available: linux-64, mac)"
            ),
        ),
        (  # several platforms, none the host's: ask instead of guessing
            {"environment": "multi"},
            "pixi.lock: environment 'multi' locks several platforms and none is this machine's",
        ),
    ],
)
def test_unknown_environment_or_platform(
    world: LockWorld, kwargs: dict[str, str], message: str
) -> None:
    if "platform" not in kwargs and host_platform() in ("osx-arm64", "win-64"):
        pytest.skip("the host is one of the locked platforms")
    with pytest.raises(DetectionError) as info:
        detect_environment(lockfile=world.lock, env={}, **kwargs)  # type: ignore[arg-type]
    assert message in str(info.value)


def test_target_platform_must_match_the_lock(world: LockWorld) -> None:
    with pytest.raises(InvalidTarget, match=r"does not match the locked platform 'linux-64'"):
        detect_environment(
            lockfile=world.lock, platform="linux-64", targets=["platform=osx-arm64"], env={}
        )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"version: 7\nplatforms: [\n", "not a readable lock file: did not find expected node"),
        (b"version: 99\n", "not a readable lock file: found newer lockfile format version 99"),
        (b"\xff\xfe\x00garbage", "not a readable lock file: stream did not contain valid UTF-8"),
        (b"", "not a readable lock file"),  # an empty file
        (b"version: 7\nplatforms: []\nenvironments: {}\npackages: []\n", "no environment"),
    ],
)
def test_corrupt_lock_is_one_clean_line(tmp_path: Path, content: bytes, message: str) -> None:
    lock = tmp_path / "pixi.lock"
    lock.write_bytes(content)
    with pytest.raises(DetectionError) as info:
        detect_environment(lockfile=lock, env={})
    text = str(info.value)
    assert text.startswith(f"{lock}: ")
    assert message in text
    assert "\n" not in text
    assert "panicked" not in text
    assert "Traceback" not in text


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p, "no such file"),  # missing lock
        (lambda p: p.mkdir() or p, "a directory, not a regular file"),  # a directory
    ],
)
def test_missing_lock(tmp_path: Path, make: Any, message: str) -> None:
    lock = make(tmp_path / "pixi.lock")
    with pytest.raises(DetectionError, match=message):
        detect_environment(lockfile=lock, env={})


# -- locked variant wheels ----------------------------------------------------------------------

CU126 = "nvidia :: cuda_version_lower_bound :: 12.6"
REMOTE_VARIANT = "https://pypi.example.org/whl/remotevar-1.0-py3-none-any-cu129.whl"


@pytest.fixture(scope="module")
def variant_lock(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A lock of local and remote wheels: variant (file URL, relative path, missing) and plain."""
    root = tmp_path_factory.mktemp("variant-lock")
    wheels = root / "wheels"
    tinyvar = make_wheel(wheels, "tinyvar", "0.1.0", label="cu126", properties=[CU126])
    relvar = make_wheel(wheels, "relvar", "0.2.0", label="cu126", properties=[CU126])
    plain = make_wheel(wheels, "plain", "1.0")
    pypi = [
        ("tinyvar", "0.1.0", tinyvar.as_uri()),  # file:// URL
        ("relvar", "0.2.0", f"./wheels/{relvar.name}"),  # relative to the lock, as pixi writes
        ("gonevar", "0.3.0", str(wheels / "gonevar-0.3.0-py3-none-any-cu128.whl")),  # missing
        ("remotevar", "1.0", f"{REMOTE_VARIANT}#sha256={'c' * 64}"),  # on an index
        ("plain", "1.0", plain.as_uri()),  # not a variant wheel
        ("torch", "2.9.0", TORCH_URL),  # a remote non-variant wheel
    ]
    return write_lockfile(root / "pixi.lock", {"default": [LockedPlatform("linux-64", (), pypi)]})


@pytest.fixture(scope="module")
def variant_env(variant_lock: Path) -> Environment:
    return detect_environment(lockfile=variant_lock, platform="linux-64", env={})


def _dist(env: Environment, name: str) -> PythonDistribution:
    return next(d for d in env.python_packages if d.name == name)


@pytest.mark.parametrize(
    "name",
    [
        "tinyvar",  # a file:// wheel was never recognised as a variant wheel
        "relvar",  # nor a path relative to the lock file
    ],
)
def test_local_locked_variant_wheel_has_its_properties(variant_env: Environment, name: str) -> None:
    dist = _dist(variant_env, name)
    assert dist.variant is not None
    assert dist.variant.label == "cu126"
    assert [str(p) for p in dist.variant.properties] == [CU126]
    assert dist.unknown_variant_label is None
    assert dist.variant_label == "cu126"


@pytest.mark.parametrize(
    ("name", "label", "note"),
    [
        (
            "remotevar",
            "cu129",
            (
                "locked variant wheel(s) on an index, properties unknown: remotevar==1.0 [cu129] "
                "(variant.json is inside the wheel, which detection does not download)"
            ),
        ),  # listed as nothing at all before
        (
            "gonevar",
            "cu128",
            "gonevar 0.3.0: locked variant wheel 'cu128' with unknown properties: ",
        ),  # a local wheel that is gone must not fail detection
    ],
)
def test_unread_locked_variant_wheel_keeps_its_label(
    variant_env: Environment, name: str, label: str, note: str
) -> None:
    dist = _dist(variant_env, name)
    assert dist.variant is None
    assert dist.unknown_variant_label == label
    assert str(dist).endswith(f"[{label}]")
    assert any(n.startswith(note) for n in variant_env.notes), variant_env.notes


@pytest.mark.parametrize("name", ["plain", "torch"])
def test_locked_non_variant_wheels_stay_plain(variant_env: Environment, name: str) -> None:
    dist = _dist(variant_env, name)
    assert (dist.variant, dist.variant_label) == (None, None)
