"""``run -- uv pip install`` says what uv will do differently from ``select``, before it runs:
variant wheels it cannot see, metadata it cannot read, and builds its own rules pick instead.

Real uv 0.13.9 on a loopback index: without ``{name}-{version}-variants.json`` uv installs the
non-variant wheel while ``select`` reads each wheel's ``variant.json`` and picks a variant; with a
file listing only some labels uv never sees the others. ``run`` must say so on stderr, and stay
quiet (and off the network) when uv sees what select sees or the command is not a uv install.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.conftest import run_script
from tests.worlds.index_server import IndexServer
from tests.worlds.torch_index import build_torch_index, build_uv_stack
from tests.worlds.wheels import make_release
from variant_bridge.install import find_uv

pytestmark = pytest.mark.slow

LOWER = "nvidia :: cuda_version_lower_bound :: {}"
CUDA = {"cu129": [LOWER.format("12.9")], "cu126": [LOWER.format("12.6")]}
DRIVER = ["-t", "cuda=12.9", "-t", "cuda_arch=9.0"]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[IndexServer]:
    root = tmp_path_factory.mktemp("run-variants")
    make_release(root, "hidden", "1.0", CUDA, variants_json=False)
    make_release(root, "partial", "1.0", CUDA, variants_json=["cu126"])
    make_release(root, "listed", "1.0", CUDA, dialect="pep850")
    with IndexServer(root) as server:
        yield server


def _uv_install(index: IndexServer, venv: Path, *packages: str) -> list[str]:
    uv = find_uv()
    assert uv is not None
    return [uv, "pip", "install", "--python", str(venv / "bin" / "python"),
            "--index-url", index.url, *packages]  # fmt: skip


def _venv(path: Path) -> Path:
    uv = find_uv()
    assert uv is not None
    import subprocess

    subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(path)], check=True)
    return path


def _label(venv: Path, name: str) -> str | None:
    (dist_info,) = venv.glob(f"lib/python*/site-packages/{name}-*.dist-info")
    variant = dist_info / "variant.json"
    return next(iter(json.loads(variant.read_text())["variants"])) if variant.exists() else None


def _selected(index: IndexServer, name: str) -> str:
    result = run_script("select", name, "--index-url", index.url, *DRIVER, "--json")
    assert result.returncode == 0, result.stderr
    return str(json.loads(result.stdout)[0]["selected"]["label"])


def test_no_variants_json_is_said_and_uv_indeed_disagrees(
    index: IndexServer, tmp_path: Path
) -> None:
    venv = _venv(tmp_path / "venv")
    env = {"UV_CACHE_DIR": str(tmp_path / "uv"), "UV_NO_CONFIG": "1"}
    result = run_script("run", *DRIVER, "--", *_uv_install(index, venv, "hidden"), env=env)
    assert result.returncode == 0, result.stderr
    notes = [line for line in result.stderr.splitlines() if "uv cannot see" in line]
    expected = (
        "note: uv cannot see hidden 1.0's variant wheels cu126, cu129 on "
        f"{index.url}: no hidden-1.0-variants.json. uv installs another wheel (or none) where "
        "`variant-bridge select` reads each wheel's variant.json; use `variant-bridge install`, "
        "or publish the variants.json"
    )
    assert notes == [expected]
    assert _label(venv, "hidden") is None  # what the note warned about: the plain wheel
    assert _selected(index, "hidden") == "cu129"


def test_labels_missing_from_variants_json_are_named(index: IndexServer, tmp_path: Path) -> None:
    venv = _venv(tmp_path / "venv")
    env = {"UV_CACHE_DIR": str(tmp_path / "uv"), "UV_NO_CONFIG": "1"}
    result = run_script(
        "run", *DRIVER, "--", *_uv_install(index, venv, "partial", "listed"), env=env
    )
    assert result.returncode == 0, result.stderr
    notes = [line for line in result.stderr.splitlines() if "uv cannot see" in line]
    assert len(notes) == 1  # nothing about `listed`: uv sees all of it
    assert "partial 1.0's variant wheels cu129" in notes[0]
    assert "its partial-1.0-variants.json does not list cu129" in notes[0]
    assert (_label(venv, "partial"), _selected(index, "partial")) == ("cu126", "cu129")
    assert _label(venv, "listed") == _selected(index, "listed") == "cu129"


def test_other_commands_are_not_looked_into(index: IndexServer) -> None:
    index.requests.clear()
    code = "print('ok')"
    result = run_script("run", *DRIVER, "--", sys.executable, "-c", code, "--index-url", index.url)
    assert (result.returncode, result.stdout) == (0, "ok\n")
    assert "uv cannot see" not in result.stderr
    assert index.requests == []


@pytest.fixture(scope="module")
def uv_stack(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_uv_stack(corpus, tmp_path_factory.mktemp("uv-stack"))


def _uv_find_links(world: Path, venv: Path, *packages: str) -> list[str]:
    uv = find_uv()
    assert uv is not None
    return [uv, "pip", "install", "--python", str(venv / "bin" / "python"), "--no-index",
            "--find-links", str(world), "--preview-features", "wheel-variants", *packages]  # fmt: skip


GPU = {"CONDA_OVERRIDE_CUDA": "12.9", "CONDA_OVERRIDE_CUDA_ARCH": "9.0"}


def test_where_uv_will_pick_another_build_both_are_named_with_the_command(
    uv_stack: Path, tmp_path: Path
) -> None:
    # `--cuda 12.6` lowers uv's driver to 12.6, but both CUDA 12 builds declare lower bound 12.0,
    # so uv still takes the builds its static priority prefers (cuda12.8).
    venv = _venv(tmp_path / "venv")
    env = {**GPU, "UV_CACHE_DIR": str(tmp_path / "uv"), "UV_NO_CONFIG": "1"}
    command = _uv_find_links(uv_stack, venv, "torch", "torchvision")
    result = run_script("run", "--cuda", "12.6", "--", *command, env=env)
    assert result.returncode == 0, result.stderr
    notes = [line for line in result.stderr.splitlines() if line.startswith("note: uv will")]
    assert [n.split(" where ")[0] for n in notes] == [
        "note: uv will install torch 2.9.0 cuda12.8",
        "note: uv will install torchvision 0.24.0 cuda12.8",
    ]
    assert (
        "where `variant-bridge select` chooses cuda12.6 (toolkit CUDA 12.6: its label" in (notes[0])
    )
    assert "follows torch 2.9.0 cuda12.6 (CUDA 12.6)" in notes[1]
    (advice,) = [line for line in result.stderr.splitlines() if "to install what select" in line]
    assert advice == (
        "note: to install what select chooses instead: variant-bridge install torch==2.9.0 "
        f"torchvision==0.24.0 -f {uv_stack} --cuda 12.6"
    )
    # The notes said what uv did.
    assert (_label(venv, "torch"), _label(venv, "torchvision")) == ("cuda12.8", "cuda12.8")
    # And the command they give installs select's builds.
    argv = advice.split("instead: ")[1].split()[1:]
    done = run_script(*argv, "--python", str(venv / "bin" / "python"), "--installer", "uv",
                      env=env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (_label(venv, "torch"), _label(venv, "torchvision")) == ("cuda12.6", "cuda12.6")


def test_when_uv_and_select_agree_nothing_is_said(uv_stack: Path, tmp_path: Path) -> None:
    venv = _venv(tmp_path / "venv")
    env = {**GPU, "UV_CACHE_DIR": str(tmp_path / "uv"), "UV_NO_CONFIG": "1"}
    command = _uv_find_links(uv_stack, venv, "torch", "torchvision", "--dry-run")
    result = run_script("run", "--", *command, env=env)
    assert result.returncode == 0, result.stderr
    assert "note: uv will" not in result.stderr


def test_a_variants_json_uv_cannot_read_is_said_before_uv_refuses_it(
    corpus: Path, tmp_path: Path
) -> None:
    world = build_torch_index(corpus, tmp_path / "world")  # the real v0.0.3 file
    venv = _venv(tmp_path / "venv")
    env = {**GPU, "UV_CACHE_DIR": str(tmp_path / "uv"), "UV_NO_CONFIG": "1"}
    result = run_script("run", "--", *_uv_find_links(world, venv, "torch", "--dry-run"), env=env)
    assert result.returncode != 0  # uv refuses the file
    lines = result.stderr.splitlines()
    (note,) = [line for line in lines if "cannot read" in line]
    assert note.startswith("note: uv 0.13.9 cannot read torch-2.9.0-variants.json (torch 2.9.0 on ")
    assert "uv will refuse torch 2.9.0" in note
    assert lines.index(note) < next(
        i for i, line in enumerate(lines) if "Failed to parse variant metadata" in line
    )
