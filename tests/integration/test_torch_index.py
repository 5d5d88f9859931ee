"""Acceptance (issue 8), end to end with real tools on the torch-shaped index world.

- ``variant-bridge install torch`` into a throwaway venv for a rattler-installed prefix whose
  solved toolkit is ``cuda-version 12.6`` (driver 12.9, GPU 9.0 through ``CONDA_OVERRIDE_*``):
  uv installs the ``cuda12.6`` build and the CUDA component wheels of CUDA 12.6, from the loopback
  index with PEP 658 metadata.
- Without a toolkit, ``select`` agrees with what uv 0.13.9 picks for the same driver and GPU. uv
  reads neither dialect of the real ``torch-2.9.0-variants.json`` (it refuses
  ``default-priorities.feature`` / ``property``) and skips the NVIDIA provider as the real file
  declares it (``>=0.0.2``), so uv runs on the same variants and priorities written in the dialect
  it reads (``uv_readable_document``); the bridge runs on the real file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import run_script
from tests.worlds.index_server import IndexServer
from tests.worlds.torch_index import (
    build_torch_index,
    publish_components_as_variants,
    real_document,
    uv_readable_document,
)
from tests.worlds.wheels import make_wheel

pytestmark = pytest.mark.slow

UV = Path(sys.executable).with_name("uv")
GPU = {"CONDA_OVERRIDE_CUDA_ARCH": "9.0"}


def _venv(path: Path) -> Path:
    subprocess.run([str(UV), "venv", "-q", "--python", sys.executable, str(path)], check=True)
    return path / "bin" / "python"


def _installed(python: Path) -> dict[str, tuple[str, str | None]]:
    code = (
        "import importlib.metadata as m, json\n"
        "out = {}\n"
        "for d in m.distributions():\n"
        "    v = d.read_text('variant.json')\n"
        "    out[d.metadata['Name']] = [d.version, next(iter(json.loads(v)['variants'])) if v else None]\n"
        "print(json.dumps(out))\n"
    )
    run = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True)
    return {k: (v[0], v[1]) for k, v in json.loads(run.stdout).items()}


def test_install_puts_the_cuda126_build_and_its_cuda126_components_in(
    corpus: Path, prefix_126: Path, tmp_path: Path
) -> None:
    world = build_torch_index(corpus, tmp_path / "index")
    python = _venv(tmp_path / "venv")
    env = {"CONDA_OVERRIDE_CUDA": "12.9", **GPU, "UV_CACHE_DIR": str(tmp_path / "uv-cache")}
    with IndexServer(world, core_metadata=True) as index:
        result = run_script(
            "install", "torch", "--index-url", index.url, "--prefix", str(prefix_126),
            "--python", str(python), "--installer", "uv", "--json", env=env,
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    package, *components = json.loads(result.stdout)["packages"]
    assert package["selected"]["label"] == "cuda12.6"
    # The whole tree was chosen and installed by the bridge, each file hash-checked.
    assert {c["package"] for c in components} >= {"nvidia-cublas", "nvidia-cuda-runtime"}
    for file in (package, *components):  # compared with the index's sha256, dependencies too
        assert file["sha256_checked"] is True
        assert len(file["sha256"]) == 64
    installed = _installed(python)
    assert installed["torch"] == ("2.9.0", "cuda12.6")
    assert installed["nvidia-cublas"][0] == "12.6.4.1"
    assert installed["nvidia-cuda-runtime"][0] == "12.6.77"
    assert installed["nvidia-cufft"][0] == "11.3.0.4"
    assert installed["nvidia-cudnn"][0] == "9.10.2.21"
    assert not any(name.startswith("intel") for name in installed)  # xpu's pins stayed out
    # The installed METADATA is readable by installers again (variant markers decided).
    check = subprocess.run(
        [str(UV), "pip", "check", "--python", str(python)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert check.returncode == 0, check.stdout + check.stderr


def test_install_bridges_the_components_published_as_variants(
    corpus: Path, prefix_126: Path, tmp_path: Path
) -> None:
    # The real index publishes nvidia-cublas & co. as `cu12` variants: uv alone, without the
    # preview, could not install them; the bridge chooses and installs each one, then a second
    # run has nothing to do.
    world = build_torch_index(corpus, tmp_path / "index")
    publish_components_as_variants(corpus, world)
    python = _venv(tmp_path / "venv")
    env = {"CONDA_OVERRIDE_CUDA": "12.9", **GPU, "UV_CACHE_DIR": str(tmp_path / "uv-cache")}
    args = ("install", "torch", "--index-url", "", "--prefix", str(prefix_126),
            "--python", str(python), "--installer", "uv", "--json")  # fmt: skip
    with IndexServer(world, core_metadata=True) as index:
        command = [a if a else index.url for a in args]
        first = run_script(*command, env=env)
        assert first.returncode == 0, first.stderr
        second = run_script(*command, env=env)
    assert second.returncode == 0, second.stderr
    installed = _installed(python)
    assert installed["torch"] == ("2.9.0", "cuda12.6")
    assert installed["nvidia-cublas"] == ("12.6.4.1", "cu12")
    assert installed["nvidia-cuda-runtime"] == ("12.6.77", "cu12")
    assert json.loads(second.stdout)["installed"] == []  # idempotent


def _uv_world(corpus: Path, root: Path) -> Path:
    """The torch variants in the dialect uv reads, one tiny wheel per label."""
    document = uv_readable_document(real_document(corpus))
    root.mkdir(parents=True)
    (root / "torch-2.9.0-variants.json").write_text(json.dumps(document, indent=4))
    for label, properties in document["variants"].items():
        one = {**document, "variants": {label: properties}}
        make_wheel(root, "torch", "2.9.0", label=label, variant_json=json.dumps(one))
    return root


def _uv_label(world: Path, venv: Path, environ: dict[str, str]) -> str:
    subprocess.run(
        [str(UV), "pip", "install", "--preview-features", "wheel-variants", "--no-index",
         "--find-links", str(world), "--python", str(venv), "torch"],
        check=True, env=environ, capture_output=True,
    )  # fmt: skip
    return _installed(venv)["torch"][1] or ""


@pytest.mark.parametrize("driver", ["12.9", "13.0", "12.4"])
def test_without_a_toolkit_select_agrees_with_uv(corpus: Path, tmp_path: Path, driver: str) -> None:
    world = build_torch_index(corpus, tmp_path / "index")
    base = {k: os.environ[k] for k in ("PATH", "HOME") if k in os.environ}
    uv_env = {
        **base,
        "UV_CACHE_DIR": str(tmp_path / "uv-cache"),
        "UV_NO_CONFIG": "1",
        "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION": driver,
        "NV_VARIANT_PROVIDER_FORCE_SM_ARCH": "9.0",
    }
    uv_picks = _uv_label(_uv_world(corpus, tmp_path / "uv"), _venv(tmp_path / "venv"), uv_env)
    result = run_script(
        "select", "torch", "-f", str(world), "-t", f"cuda={driver}", "-t", "cuda_arch=9.0",
        "--python", "3.12", "--json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    choice, *_ = json.loads(result.stdout)
    assert choice["selected"]["label"] == uv_picks
    assert uv_picks == {"12.9": "cuda12.8", "13.0": "cuda13.0", "12.4": "cuda12.8"}[driver]


def test_uv_skips_the_amd_provider_where_select_picks_rocm(corpus: Path, tmp_path: Path) -> None:
    """What `variant-bridge env` tells uv users: uv 0.13.9 has no amd provider, so with the AMD
    provider's own variables set it still installs the null variant; select picks rocm6.4."""
    base = {k: os.environ[k] for k in ("PATH", "HOME") if k in os.environ}
    amd = {
        "AMD_VARIANT_PROVIDER_FORCE_GFX_ARCH": "gfx942",
        "AMD_VARIANT_PROVIDER_FORCE_ROCM_VERSION": "6.4.0",
    }
    uv_env = {**base, "UV_CACHE_DIR": str(tmp_path / "uv-cache"), "UV_NO_CONFIG": "1", **amd}
    uv_picks = _uv_label(_uv_world(corpus, tmp_path / "uv"), _venv(tmp_path / "venv"), uv_env)
    world = build_torch_index(corpus, tmp_path / "index")
    result = run_script(
        "select", "torch", "-f", str(world), "--no-deps", "--python", "3.12", "--json", env=amd
    )
    assert result.returncode == 0, result.stderr
    choice, *_ = json.loads(result.stdout)
    assert (uv_picks, choice["selected"]["label"]) == ("null", "rocm6.4")
