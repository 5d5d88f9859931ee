"""``convert`` keeps every requirement, on conda names, and refuses hostile wheels before it writes
anything (issues 17 and 22): torch-shaped wheels become ``pytorch`` and ``torchvision`` packages
whose dependencies (filelock, triton, the CUDA library wheels, pillow ``!=8.3.*``) solve from the
same channel and install with rattler."""

from __future__ import annotations

import hashlib
import json
import random
import tarfile
import zipfile
from pathlib import Path

import pytest

from tests.cli.conftest import Cli
from tests.worlds.channel import Channel, Pkg, cuda_packages
from tests.worlds.channel import solve as rattler_solve
from tests.worlds.prefix import install_prefix
from tests.worlds.wheels import make_wheel

VPS = ("__unix=0", "__linux=6.1", "__glibc=2.36", "__cuda=12.9", "__cuda_arch=9.0")
# torch 2.9.0's cuda12.8 build as published (variants-index-test): lower bound 12.0, sm list.
TORCH_PROPERTIES = [
    "nvidia :: cuda_version_lower_bound :: 12.0",
    "nvidia :: sm_arch :: 80_real",
    "nvidia :: sm_arch :: 90_real",
]
TORCH_REQUIRES = [
    "filelock",
    "sympy>=1.13.3",
    'nvidia-cublas-cu12==12.8.4.1; platform_system == "Linux"',
    'triton==3.5.0; platform_system == "Linux"',
    'opt-einsum>=3.3; extra == "opt-einsum"',
]


def _wheels(root: Path, *, cublas: bool = True) -> Path:
    make_wheel(root, "torch", "2.9.0", label="cuda12.8", properties=TORCH_PROPERTIES,
               requires=TORCH_REQUIRES, namespace_priorities=["nvidia"])  # fmt: skip
    make_wheel(root, "torchvision", "0.24.0", requires=["torch==2.9.0", "pillow!=8.3.*,>=5.3.0"])
    make_wheel(root, "pillow", "11.0.0")
    make_wheel(root, "pillow", "8.3.2")  # excluded by !=8.3.*: the solve must not take it
    make_wheel(root, "filelock", "3.20.0")
    make_wheel(root, "sympy", "1.14.0")
    make_wheel(root, "triton", "3.5.0", tags="cp312-cp312-manylinux_2_27_x86_64")
    if cublas:
        make_wheel(root, "nvidia-cublas-cu12", "12.8.4.1", tags="py3-none-manylinux_2_27_x86_64")
    return root


@pytest.fixture(scope="module")
def converted(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    wheels = _wheels(tmp_path_factory.mktemp("wheels"))
    channel = tmp_path_factory.mktemp("channel")
    result = Cli()("convert", str(wheels), "-o", str(channel), "--subdir", "linux-64", "--json")
    assert result.exit_code == 0, result.output
    return channel, json.loads(result.stdout)


def _records(channel: Path) -> dict[str, dict[str, object]]:
    found = {}
    for subdir in ("noarch", "linux-64"):
        repodata = json.loads((channel / subdir / "repodata.json").read_text())
        for record in repodata["packages"].values():
            found[f"{record['name']} {record['version']} {record['build']}"] = record
    return found


def test_torch_is_named_pytorch_and_keeps_every_requirement(
    converted: tuple[Path, dict[str, object]],
) -> None:
    channel, report = converted
    assert report["names"] == {"torch": "pytorch"}
    records = _records(channel)
    torch = [r for r in records.values() if r["name"] == "pytorch"]
    assert torch
    assert not any(r["name"] == "torch" for r in records.values())
    for record in torch:
        depends = record["depends"]
        assert isinstance(depends, list)
        for spec in ("filelock", "sympy >=1.13.3", "nvidia-cublas-cu12 ==12.8.4.1",
                     "triton ==3.5.0"):  # fmt: skip
            assert spec in depends, depends
        assert not any(d.startswith("opt-einsum") for d in depends)  # an extra's requirement
    (vision,) = [r for r in records.values() if r["name"] == "torchvision"]
    assert "pytorch ==2.9.0" in vision["depends"]  # type: ignore[operator]
    assert "pillow !=8.3.*,>=5.3.0" in vision["depends"]  # type: ignore[operator]


def test_the_converted_tree_solves_from_the_same_channel_and_installs(
    converted: tuple[Path, dict[str, object]], tmp_path: Path
) -> None:
    channel, _ = converted
    python = Pkg("python", "3.12.7", "h0_0_cpython", depends=("__glibc >=2.17,<3.0.a0",))
    conda = Channel(tmp_path / "conda").add([*cuda_packages(["12.9"]), python])
    records = rattler_solve([Channel(channel), conda], ["torchvision", "python 3.12.*"], VPS)
    chosen = {r.name.normalized: str(r.version) for r in records}
    assert chosen["pytorch"] == "2.9.0"
    assert chosen["pillow"] == "11.0.0"  # 8.3.2 is excluded by !=8.3.*
    for name in ("filelock", "sympy", "triton", "nvidia-cublas-cu12"):
        assert name in chosen
    prefix = install_prefix(records, tmp_path / "env", tmp_path / "cache", ["torchvision"])
    site = prefix / "lib" / "python3.12" / "site-packages"
    assert (site / "torch" / "__init__.py").is_file()
    assert (site / "torchvision" / "__init__.py").is_file()
    assert (site / "filelock" / "__init__.py").is_file()


def test_a_cuda_library_not_converted_is_listed_per_package(tmp_path: Path) -> None:
    wheels = _wheels(tmp_path / "wheels", cublas=False)
    torch = next(wheels.glob("torch-*.whl"))
    result = Cli()("convert", str(torch), "-o", str(tmp_path / "ch"), "--subdir", "linux-64",
                   "--json")  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    (release,) = report["releases"]
    listed = {(e["requirement"], e["reason"]) for e in release["not_dependencies"]}
    assert any(
        req == "nvidia-cublas-cu12==12.8.4.1" and "libcublas" in why for req, why in listed
    ), listed
    assert "'nvidia-cublas-cu12==12.8.4.1' is not a conda dependency" in result.stderr
    depends = release["records"][0]["depends"]
    assert "filelock" in depends
    assert "triton ==3.5.0" in depends


def test_a_requirement_conda_cannot_express_is_refused_with_its_text(tmp_path: Path) -> None:
    wheel = make_wheel(tmp_path / "w", "oddreq", "1.0", requires=["foo===1.0@local"])
    result = Cli()("convert", str(wheel), "-o", str(tmp_path / "ch"), "--subdir", "linux-64")
    assert result.exit_code == 1
    assert "requirement 'foo===1.0@local' has no conda form" in result.stderr
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    "member",
    [
        "../../../../OUTSIDE_trav",
        "/tmp/OUTSIDE_abs",
        "tinyvar/../../../../OUTSIDE",
        "tinyvar-1.0.data/scripts/../../../../OUTSIDE_data",
    ],
)
def test_convert_refuses_a_wheel_with_a_path_outside_its_root_and_writes_nothing(
    tmp_path: Path, member: str
) -> None:
    wheels = tmp_path / "wheels"
    make_wheel(wheels, "plainpkg", "1.0")  # an honest wheel in the same run: not written either
    wheel = make_wheel(wheels, "tinyvar", "1.0")
    with zipfile.ZipFile(wheel, "a") as zf:
        zf.writestr(member, "pwned\n")
    channel = tmp_path / "channel"
    result = Cli()("convert", str(wheels), "-o", str(channel), "--subdir", "linux-64")
    assert result.exit_code == 1, result.output
    assert result.stderr.startswith(f"error: {wheel.name}: member ")
    assert result.stderr.rstrip().endswith("refused")
    assert not list(channel.rglob("*.tar.bz2"))
    assert not (tmp_path / "OUTSIDE_trav").exists()


def test_a_converted_member_is_streamed_byte_for_byte(tmp_path: Path) -> None:
    payload = random.Random(0).randbytes(10_000_000)  # incompressible: under the ratio cap
    wheel = make_wheel(tmp_path / "w", "bigpkg", "1.0", files={"bigpkg/blob.bin": payload})
    channel = tmp_path / "ch"
    result = Cli()("convert", str(wheel), "-o", str(channel), "--subdir", "linux-64")
    assert result.exit_code == 0, result.output
    (package,) = channel.glob("noarch/bigpkg-*.tar.bz2")
    with tarfile.open(package) as archive:
        blob = archive.extractfile("site-packages/bigpkg/blob.bin")
        assert blob is not None
        assert blob.read() == payload
        paths = json.loads(archive.extractfile("info/paths.json").read())  # type: ignore[union-attr]
    entry = next(p for p in paths["paths"] if p["_path"] == "site-packages/bigpkg/blob.bin")
    assert entry["sha256"] == hashlib.sha256(payload).hexdigest()
    assert entry["size_in_bytes"] == len(payload)
