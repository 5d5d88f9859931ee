"""Acceptance (issue 16): no silent downgrades, no silent leftovers.

The torch world (the real ``torch-2.9.0-variants.json``; each build pins its CUDA component wheels
as the torch 2.10 declaration does) installed with uv into a throwaway venv for a toolkit of
12.6, then again after the toolkit became 11.8: the CPU build replaces the CUDA one, said per
package before anything runs, and the 15 ``nvidia-*`` wheels the CUDA build required are listed
afterwards with the command that removes them, or removed with ``--remove-leftovers``. A dry run
in a conda prefix whose toolkit went from 12.6 to 12.4 says the same from the prefix's
``site-packages``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import run_script
from tests.worlds.channel import Channel
from tests.worlds.prefix import (
    HOST_VIRTUAL_PACKAGES,
    add_dist_info,
    install_prefix,
    site_packages,
    solve,
    variant_json,
)
from tests.worlds.torch_index import build_torch_index, declared_lines, real_document
from variant_bridge.install import find_uv

pytestmark = pytest.mark.slow

MACHINE = {"CONDA_OVERRIDE_CUDA": "12.9", "CONDA_OVERRIDE_CUDA_ARCH": "9.0"}
CUDA126 = [
    "nvidia-cublas", "nvidia-cuda-cupti", "nvidia-cuda-nvrtc", "nvidia-cuda-runtime",
    "nvidia-cudnn", "nvidia-cufft", "nvidia-cufile", "nvidia-curand", "nvidia-cusolver",
    "nvidia-cusparse", "nvidia-cusparselt", "nvidia-nccl", "nvidia-nvjitlink", "nvidia-nvshmem",
    "nvidia-nvtx",
]  # fmt: skip


@pytest.fixture(scope="module")
def world(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_torch_index(corpus, tmp_path_factory.mktemp("torch"))


def _venv(path: Path) -> Path:
    uv = find_uv()
    assert uv is not None
    subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(path)], check=True)
    return path / "bin" / "python"


def _names(python: Path) -> set[str]:
    code = "import importlib.metadata as m; print('\\n'.join(d.metadata['Name'] for d in m.distributions()))"
    run = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True)
    return set(run.stdout.split())


def _install(
    world: Path, python: Path, toolkit: str, *extra: str
) -> subprocess.CompletedProcess[str]:
    return run_script(
        "install", "torch", "-f", str(world), "--python", str(python), "--installer", "uv",
        "-t", f"cuda_version={toolkit}", *extra, env={**MACHINE, "UV_CACHE_DIR": str(python.parents[2] / "uv-cache")},
    )  # fmt: skip


def test_a_cpu_build_replacing_a_cuda_one_is_said_and_its_leftovers_listed_then_removed(
    world: Path, tmp_path: Path
) -> None:
    python = _venv(tmp_path / "venv")
    first = _install(world, python, "12.6")
    assert first.returncode == 0, first.stderr
    assert set(CUDA126) <= _names(python)

    second = _install(world, python, "11.8")
    assert second.returncode == 0, second.stderr
    lines = second.stderr.splitlines()
    assert (
        "warning: torch: replaces the installed 2.9.0 cuda12.6 build by 2.9.0 null (a CPU build)"
    ) in lines
    assert any(
        line.startswith("warning: torch 2.9.0: the null variant (a CPU build)") for line in lines
    )
    out = second.stdout
    assert "Left behind (the replaced builds required them, nothing requires them now): " in out
    for name in CUDA126:
        assert f"{name} " in out.split("Left behind", 1)[1]
    command = next(line for line in out.splitlines() if "remove them with:" in line)
    assert f"pip uninstall --python {python} nvidia-" in command
    assert set(CUDA126) <= _names(python)  # listed, not removed

    third = _install(world, python, "11.8", "--remove-leftovers", "--json")
    assert third.returncode == 0, third.stderr
    result = json.loads(third.stdout)
    assert result["replaces"] == []  # already the CPU build
    assert result["leftovers"]["removed"] is True
    assert sorted(w["name"] for w in result["leftovers"]["wheels"]) == CUDA126
    assert not set(CUDA126) & _names(python)
    assert "torch" in _names(python)


@pytest.fixture(scope="module")
def prefix_124(
    corpus: Path, cuda_channel: Channel, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """A prefix that had torch cuda12.6 and its CUDA wheels installed, after `conda install
    cuda-version=12.4` (rattler-installed; the wheels' dist-infos as uv leaves them)."""
    root = tmp_path_factory.mktemp("prefix124")
    specs = ["cuda-version 12.4.*", "python"]
    records = solve([cuda_channel], specs, (*HOST_VIRTUAL_PACKAGES, "__cuda=12.9"))
    prefix = install_prefix(records, root / "env", root / "cache", specs)
    # The channel's python is a stand-in without an executable; a dry run never runs it.
    (prefix / "bin").mkdir(exist_ok=True)
    (prefix / "bin" / "python").symlink_to(sys.executable)
    site = site_packages(prefix)
    document = real_document(corpus)
    lines = declared_lines(corpus)
    add_dist_info(site, "torch", "2.9.0", requires=lines,
                  variant=variant_json("cuda12.6", document["variants"]["cuda12.6"]))  # fmt: skip
    applying = [line for line in lines if "'cuda12.6'" in line or "'nvidia' in" in line]
    for pin in dict.fromkeys(line.split(";")[0].strip() for line in applying):
        name, version = pin.split("==")
        add_dist_info(site, name, version)
    return prefix


def test_a_dry_run_says_the_replacement_and_what_would_be_left(
    world: Path, prefix_124: Path
) -> None:
    result = run_script("install", "torch", "-f", str(world), "--prefix", str(prefix_124),
                        "--dry-run", env=MACHINE)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert (
        "warning: torch: would replace the installed 2.9.0 cuda12.6 build by 2.9.0 null (a CPU "
        "build)"
    ) in result.stderr.splitlines()
    assert "cuda-version 12.4 (conda-meta) is older than every CUDA build" in result.stderr
    out = result.stdout
    left = out.split(
        "Left behind (the replaced builds required them, nothing would require them now): ", 1
    )[1]
    assert [n for n in CUDA126 if f"{n} " in left.splitlines()[0]] == CUDA126
    assert "Nothing was installed (--dry-run)." in out
