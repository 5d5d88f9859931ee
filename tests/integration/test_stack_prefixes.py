"""Acceptance (issue 16) in real conda prefixes: torch + torchvision selected and (dry-run)
installed in rattler-installed prefixes whose solved toolkit is ``cuda-version`` 12.6, 12.8,
12.9, 13.0, or none, from the torch world (the real ``torch-2.9.0`` and ``torchvision-0.24.0``
variants files; torch pins its CUDA components, torchvision pins none)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import run_script
from tests.worlds.channel import Channel
from tests.worlds.prefix import HOST_VIRTUAL_PACKAGES, install_prefix, solve
from tests.worlds.torch_index import add_torchvision, build_torch_index

pytestmark = pytest.mark.slow

CASES = [  # (cuda-version of the prefix, driver, the build both take)
    ("12.6", "12.9", "cuda12.6"),
    ("12.8", "12.9", "cuda12.8"),
    ("12.9", "12.9", "cuda12.8"),
    ("13.0", "13.0", "cuda13.0"),
    (None, "12.9", "cuda12.8"),
]


@pytest.fixture(scope="module")
def world(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return add_torchvision(corpus, build_torch_index(corpus, tmp_path_factory.mktemp("world")))


def _prefix(channel: Channel, root: Path, toolkit: str | None, driver: str) -> Path:
    specs = ([f"cuda-version {toolkit}.*"] if toolkit else []) + ["python"]
    records = solve([channel], specs, (*HOST_VIRTUAL_PACKAGES, f"__cuda={driver}"))
    prefix = install_prefix(records, root / "env", root / "cache", specs)
    # The channel's python is a stand-in without an executable; neither command runs it.
    (prefix / "bin").mkdir(exist_ok=True)
    (prefix / "bin" / "python").symlink_to(sys.executable)
    return prefix


@pytest.mark.parametrize(("toolkit", "driver", "label"), CASES)
def test_select_and_install_take_one_toolkit_for_the_stack(
    world: Path, cuda_channel: Channel, tmp_path: Path, *, toolkit: str | None, driver: str,
    label: str,
) -> None:  # fmt: skip
    prefix = _prefix(cuda_channel, tmp_path, toolkit, driver)
    env = {"CONDA_OVERRIDE_CUDA": driver, "CONDA_OVERRIDE_CUDA_ARCH": "9.0"}
    args = ("torch", "torchvision", "-f", str(world), "--prefix", str(prefix), "--json")
    selected = run_script("select", *args, env=env)
    assert selected.returncode == 0, selected.stderr
    assert selected.stderr == ""
    chosen = {c["package"]: c for c in json.loads(selected.stdout)}
    assert (
        chosen["torch"]["selected"]["label"]
        == chosen["torchvision"]["selected"]["label"]
        == (label)
    )
    assert chosen["torchvision"]["follows"]["anchor"] == f"torch 2.9.0 {label}"
    installed = run_script("install", *args, "--dry-run", env=env)
    assert installed.returncode == 0, installed.stderr
    packages = {p["package"]: p for p in json.loads(installed.stdout)["packages"]}
    assert {packages[n]["selected"]["label"] for n in ("torch", "torchvision")} == {label}
    cuda = label.removeprefix("cuda")
    pinned = packages["nvidia-cuda-runtime"]["version"]  # the chosen torch build's pin
    assert pinned.startswith(f"{cuda}.")
