"""Acceptance (issue 16) through ``solve``: torch + torchvision in one conda solve.

Real parts: the real ``torch-2.9.0`` and ``torchvision-0.24.0`` variants files (torch's wheels
pin their CUDA components as the torch 2.10 declaration does, torchvision's pin none), a local
conda channel of conda-forge-shaped ``cuda-version`` packages with a python record and a conda
``numpy``, py-rattler's solve over ``index``'s ``v3.whl`` records, and ``select`` for the same
environment and toolkit. torchvision's records tie each CUDA build to torch's builds of the same
toolkit, so the solver cannot mix them.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.cli.conftest import Cli
from tests.jobs.conftest import choose
from tests.jobs.test_torch_index import PY, environment
from tests.worlds.channel import Channel, Pkg, cuda_packages
from tests.worlds.torch_index import add_torchvision, build_torch_index

HERE_PYTHON = "{}.{}.{}".format(*sys.version_info[:3])
BASE = ("--strict", "--platform", "linux-64", "-t", "glibc=2.36", "-t", "cuda_arch=9.0")


def machine(driver: str) -> tuple[str, ...]:
    return (*BASE, "-t", f"cuda={driver}")


@pytest.fixture(scope="module")
def conda(tmp_path_factory: pytest.TempPathFactory) -> Channel:
    python = Pkg("python", HERE_PYTHON, "h0_0_cpython", depends=("__glibc >=2.17,<3.0.a0",))
    numpy = Pkg("numpy", "2.3.4", "py_0", depends=("python",))
    return Channel(tmp_path_factory.mktemp("conda")).add([*cuda_packages(), python, numpy])


@pytest.fixture(scope="module")
def world(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return add_torchvision(corpus, build_torch_index(corpus, tmp_path_factory.mktemp("world")))


def _solve(cli: Cli, world: Path, conda: Channel, *args: str) -> dict[str, object]:
    result = cli("solve", "torch", "torchvision", "-f", str(world), "-c", str(conda.path),
                 "--json", *args)  # fmt: skip
    assert result.exit_code == 0, result.stderr
    solved: dict[str, object] = json.loads(result.stdout)
    return solved


def _labels(solved: dict[str, object]) -> dict[str, str | None]:
    wheels: list[dict[str, object]] = solved["wheels"]  # type: ignore[assignment]
    return {str(w["name"]): w["label"] for w in wheels if w["name"] in ("torch", "torchvision")}  # type: ignore[misc]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("pin", "driver", "label", "toolkit"),
    [
        ("12.6", "12.9", "cuda12.6", "12.6"),
        ("12.8", "12.9", "cuda12.8", "12.8"),
        ("12.9", "12.9", "cuda12.8", "12.9"),
        ("13.0", "13.0", "cuda13.0", "13.0"),
        (None, "12.9", "cuda12.8", "12.9"),
    ],
)
def test_the_solve_puts_torch_and_torchvision_on_one_toolkit_as_select_does(
    cli: Cli, world: Path, conda: Channel, *, pin: str | None, driver: str, label: str,
    toolkit: str,
) -> None:  # fmt: skip
    specs = [f"cuda-version {pin}.*"] if pin else []
    solved = _solve(cli, world, conda, *specs, *machine(driver))
    assert solved["toolkit"] == toolkit
    assert _labels(solved) == {"torch": label, "torchvision": label}
    # select, for the same machine and the toolkit the solve chose, takes the same builds.
    tree = {
        c.files.project: c
        for c in choose(
            ["torch", "torchvision"],
            env=environment(driver=driver, toolkit=toolkit),
            python=PY,
            find_links=[world],
        )
    }
    assert {p: c.selected.label if c.selected else None for p, c in tree.items()
            if p in ("torch", "torchvision")} == _labels(solved)  # fmt: skip
    why = next(w for w in solved["wheels"] if w["name"] == "torchvision")["why"]  # type: ignore[attr-defined,index]
    assert f"its label '{label}' says CUDA {label[4:]}" in why


def test_the_records_tie_torchvision_to_torchs_builds_of_its_toolkit(
    cli: Cli, world: Path, tmp_path: Path
) -> None:
    channel = tmp_path / "channel"
    result = cli("index", str(world), "-o", str(channel), "--subdir", "linux-64")
    assert result.exit_code == 0, result.stderr
    repodata = json.loads((channel / "linux-64" / "repodata.json").read_text())
    depends = {
        r["build"]: [d for d in r["depends"] if d.startswith(("torch ", "cuda-version"))]
        for r in repodata["v3"]["whl"].values()
        if r["name"] == "torchvision"
    }
    tied = next(b for b in depends if b.startswith("cuda12.6_sm75"))
    assert depends[tied] == [
        "cuda-version >=12.0,<13",
        "cuda-version >=12.6,<13",  # its label says CUDA 12.6
        "torch ==2.9.0 ^(cuda12\\.6)_.*$",
    ]
    assert next(d for b, d in depends.items() if b.startswith("null")) == ["torch ==2.9.0"]


@pytest.mark.slow
def test_cuda_asks_the_solve_for_that_toolkit(cli: Cli, world: Path, conda: Channel) -> None:
    solved = _solve(cli, world, conda, "--cuda", "12.6", *machine("12.9"))
    assert solved["toolkit"] == "12.6"
    assert _labels(solved) == {"torch": "cuda12.6", "torchvision": "cuda12.6"}
    both = cli("solve", "torch", "cuda-version 12.8.*", "-f", str(world), "-c", str(conda.path),
               "--cuda", "12.6", *machine("12.9"))  # fmt: skip
    assert both.exit_code == 2
    assert "--cuda 12.6 and a cuda-version spec both ask for the toolkit" in both.stderr


@pytest.mark.slow
def test_conda_packages_win_over_wheels_of_the_same_name_unless_wheels_are_preferred(
    cli: Cli, world: Path, conda: Channel
) -> None:
    solved = _solve(cli, world, conda, *machine("12.9"))
    conda_names = {p["name"] for p in solved["conda"]}  # type: ignore[attr-defined]
    wheel_names = {w["name"] for w in solved["wheels"]}  # type: ignore[attr-defined]
    assert "numpy" in conda_names
    assert "numpy" not in wheel_names
    assert "cuda-bindings" in wheel_names  # what conda does not have comes from the wheels
    flipped = _solve(cli, world, conda, "--prefer-wheels", *machine("12.9"))
    assert "numpy" in {w["name"] for w in flipped["wheels"]}  # type: ignore[attr-defined]


@pytest.mark.slow
def test_a_cpu_build_beside_a_driver_is_a_warning_in_the_solve_too(
    cli: Cli, world: Path, conda: Channel
) -> None:
    result = cli("solve", "torch", "torchvision", "cuda-version 11.8.*", "-f", str(world), "-c",
                 str(conda.path), *machine("12.9"))  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert result.stderr.splitlines() == [
        f"warning: {name}: the null variant (a CPU build) was chosen although the CUDA driver is "
        "present (__cuda=12.9): cuda-version 11.8 (--from-conda) is older than every CUDA build "
        "(cuda12.6 CUDA 12.6, cuda12.8 CUDA 12.8, cuda13.0 CUDA 13.0)"
        for name in ("torch 2.9.0", "torchvision 0.24.0")
    ]


@pytest.mark.slow
def test_a_stack_without_a_common_toolkit_fails_unless_the_mix_is_allowed(
    cli: Cli, corpus: Path, conda: Channel, tmp_path: Path
) -> None:
    root = add_torchvision(corpus, build_torch_index(corpus, tmp_path / "w"),
                           labels=("cuda13.0", "null"))  # fmt: skip
    args = ("solve", "torch", "torchvision", "-f", str(root), "-c", str(conda.path),
            *machine("12.9"))  # fmt: skip
    failed = cli(*args)
    assert failed.exit_code == 1
    assert failed.stderr == (
        "error: torchvision 0.24.0 takes its CPU build (null) beside torch 2.9.0 cuda12.8: no "
        "CUDA build of torchvision shares torch's toolkit here; pass --allow-mix to solve it "
        "anyway\n"
    )
    mixed = cli(*args, "--allow-mix")
    assert mixed.exit_code == 0, mixed.stderr
    assert "warning: torchvision 0.24.0 takes its CPU build (null) beside torch 2.9.0" in (
        mixed.stderr
    )


@pytest.mark.slow
def test_solve_on_a_channel_index_wrote_installs_and_locks_the_wheels_it_holds(
    cli: Cli, world: Path, conda: Channel, tmp_path: Path
) -> None:
    # One channel serves both: the conda packages, then `index` adds the wheels' records.
    channel = tmp_path / "channel"
    shutil.copytree(conda.path, channel)
    indexed = cli("index", str(world), "-o", str(channel), "--subdir", "linux-64")
    assert indexed.exit_code == 0, indexed.stderr
    prefix, lock = tmp_path / "env", tmp_path / "pixi.lock"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(prefix)], check=True)
    result = cli("solve", "torch", "torchvision", "python", "-c", str(channel), "--cuda", "12.6",
                 *machine("12.9"), "--into", str(prefix), "--write-lock", str(lock),
                 "--installer", "uv", "--json")  # fmt: skip
    assert result.exit_code == 0, result.stderr
    solved = json.loads(result.stdout)
    assert _labels(solved) == {"torch": "cuda12.6", "torchvision": "cuda12.6"}
    torch = next(w for w in solved["wheels"] if w["name"] == "torch")
    assert torch["url"].startswith("file://")
    assert torch["url"].endswith("-cuda12.6.whl")
    assert "of channel" in torch["why"]
    detected = cli("detect", "--prefix", str(prefix), "--json")
    labels = {d["name"]: d["label"] for d in json.loads(detected.stdout)["variant_wheels"]}
    assert labels == {"torch": "cuda12.6", "torchvision": "cuda12.6"}
    # The lock names the variant wheels by their plain-named copies beside it (pixi's installer
    # accepts those): the channel's cuda12.6 files with their variant markers decided (uv cannot
    # read them), each locked with its own sha256.
    text = lock.read_text()
    assert "variant-wheels/torch-2.9.0-py3-none-any.whl" in text
    copy = tmp_path / "variant-wheels" / "torch-2.9.0-py3-none-any.whl"
    original = channel / "wheels" / "torch-2.9.0-py3-none-any-cuda12.6.whl"
    with zipfile.ZipFile(copy) as ours, zipfile.ZipFile(original) as theirs:
        variant = "torch-2.9.0.dist-info/variant.json"
        assert ours.read(variant) == theirs.read(variant)
        metadata = ours.read("torch-2.9.0.dist-info/METADATA").decode()
    assert "variant_label" not in metadata
    assert "Requires-Dist: nvidia-cublas==12.6.4.1" in metadata
    assert "nvidia-cublas==12.8.4.1" not in metadata
    assert f"sha256: {hashlib.sha256(copy.read_bytes()).hexdigest()}" in text
    assert text.count("sha256:") >= 4
    relocked = cli("detect", "--lockfile", str(lock), "--json")
    assert relocked.exit_code == 0, relocked.stderr
    locked = {d["name"]: d["label"] for d in json.loads(relocked.stdout)["variant_wheels"]}
    assert locked == {"torch": "cuda12.6", "torchvision": "cuda12.6"}


@pytest.mark.slow
def test_a_channel_wheel_that_changed_since_indexing_is_refused_and_no_wheel_installed(
    cli: Cli, world: Path, conda: Channel, tmp_path: Path
) -> None:
    channel = tmp_path / "channel"
    shutil.copytree(conda.path, channel)
    assert cli("index", str(world), "-o", str(channel), "--subdir", "linux-64").exit_code == 0
    wheel = channel / "wheels" / "torchvision-0.24.0-py3-none-any-cuda12.8.whl"
    wheel.write_bytes(wheel.read_bytes() + b"tampered")
    prefix = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(prefix)], check=True)
    result = cli("solve", "torchvision", "python", "-c", str(channel), *machine("12.9"),
                 "--into", str(prefix), "--installer", "uv")  # fmt: skip
    assert result.exit_code == 1
    assert "hash mismatch" in result.stderr
    assert wheel.name in result.stderr
    assert not list(prefix.glob("lib/python*/site-packages/torch*"))  # no wheel installed
