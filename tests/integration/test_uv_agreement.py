"""The real uv 0.13.9 agrees with variant-bridge when run through ``variant-bridge run``.

World: a conda prefix whose solved toolkit is ``cuda-version 12.6``, a driver claimed at CUDA 12.9
(``CONDA_OVERRIDE_CUDA``), and find-links wheels ``pkg`` labelled cu129 (lower bound 12.9), cu126
(lower bound 12.6), null and a non-variant wheel, with a PEP 850 ``pkg-1.0-variants.json`` whose
NVIDIA provider uv treats as built in. Everything is offline (``--no-index --find-links``); the
label uv installed is read from the ``variant.json`` uv keeps in the installed dist-info.

A fake ``nvidia-smi`` (uv's GPU probe; the only mocked part, standing in for a GPU driver) shows
that an absent ``__cuda`` keeps uv off CUDA builds even on a machine with a GPU.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

from tests.worlds.wheels import Release, make_release

pytestmark = pytest.mark.slow

SCRIPT = Path(sys.executable).with_name("variant-bridge")
UV = Path(sys.executable).with_name("uv")
PACKAGE = "pkg"
DRIVER = "12.9"

FAKE_NVIDIA_SMI = """#!/bin/sh
# Answers the three queries uv 0.13.9 makes: driver version, `-q` (CUDA version), compute cap.
case "$*" in
  *driver_version*) echo "575.51.03" ;;
  *compute_cap*) echo "9.0" ;;
  *) printf 'Driver Version                            : 575.51.03\\n'
     printf 'CUDA Version                              : 12.9\\n' ;;
esac
"""


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Release:
    lower = "nvidia :: cuda_version_lower_bound :: {}"
    return make_release(
        tmp_path_factory.mktemp("find-links"),
        PACKAGE,
        "1.0",
        {"cu129": [lower.format("12.9")], "cu126": [lower.format("12.6")], "null": []},
        dialect="pep850",  # the schema URL uv 0.13.9 accepts
    )


@pytest.fixture(scope="module")
def fake_gpu(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory with a fake ``nvidia-smi`` reporting CUDA 12.9 and compute capability 9.0."""
    bin_dir = tmp_path_factory.mktemp("fake-gpu")
    smi = bin_dir / "nvidia-smi"
    smi.write_text(FAKE_NVIDIA_SMI)
    smi.chmod(0o755)
    return bin_dir


def base_environ(tmp_path: Path, *, path_first: Path | None = None) -> dict[str, str]:
    """A clean environment: no CONDA_*/NV_* from the host, uv isolated from user config/cache."""
    keep = ("PATH", "HOME", "LANG", "PYTHONPATH", "SYSTEMROOT")
    environ = {name: os.environ[name] for name in keep if name in os.environ}
    if path_first is not None:
        environ["PATH"] = os.pathsep.join([str(path_first), environ.get("PATH", "")])
    environ.update(
        UV_CACHE_DIR=str(tmp_path / "uv-cache"),
        UV_NO_CONFIG="1",
        UV_PYTHON_DOWNLOADS="never",
        UV_NO_PROGRESS="1",
    )
    return environ


def uv_install(release: Release, venv: Path) -> list[str]:
    """The uv command a user runs (the preview flag is also in UV_PREVIEW_FEATURES via `run`)."""
    find_links = next(iter(release.wheels.values())).parent
    return [
        str(UV), "pip", "install", "--preview-features", "wheel-variants",
        "--no-index", "--find-links", str(find_links),
        "--python", str(venv / "bin" / "python"), PACKAGE,
    ]  # fmt: skip


def make_venv(tmp_path: Path, environ: Mapping[str, str]) -> Path:
    venv = tmp_path / "venv"
    subprocess.run(
        [str(UV), "venv", "--quiet", "--python", sys.executable, str(venv)],
        check=True,
        env=dict(environ),
        capture_output=True,
    )
    return venv


def installed_label(venv: Path) -> str | None:
    """The label in the installed dist-info's ``variant.json`` (``None``: non-variant wheel)."""
    dist_infos = list(venv.glob(f"lib/python*/site-packages/{PACKAGE}-*.dist-info"))
    assert len(dist_infos) == 1, dist_infos
    variant_json = dist_infos[0] / "variant.json"
    if not variant_json.exists():
        return None
    (label,) = json.loads(variant_json.read_text())["variants"]
    return str(label)


def run(command: list[str], environ: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        command, env=dict(environ), capture_output=True, text=True, check=False, timeout=300
    )
    assert result.returncode == 0, result.stderr
    return result


def bridged_choice(release: Release, prefix: Path, environ: Mapping[str, str]) -> str:
    """The label ``variant-bridge select`` picks for this world."""
    find_links = next(iter(release.wheels.values())).parent
    command = [str(SCRIPT), "select", PACKAGE, "--find-links", str(find_links),
               "--prefix", str(prefix), "--json"]  # fmt: skip
    (choice,) = json.loads(run(command, environ).stdout)
    return str(choice["selected"]["label"])


def test_run_makes_uv_pick_the_bridged_label_and_plain_uv_does_not(
    prefix_126: Path, release: Release, tmp_path: Path
) -> None:
    environ = {**base_environ(tmp_path), "CONDA_OVERRIDE_CUDA": DRIVER}
    expected = bridged_choice(release, prefix_126, environ)
    assert expected == "cu126"  # the world is built so that the toolkit decides

    through_bridge = make_venv(tmp_path / "bridge", environ)
    command = uv_install(release, through_bridge)
    run([str(SCRIPT), "run", "--prefix", str(prefix_126), "--", *command], environ)
    assert installed_label(through_bridge) == expected

    # uv alone, told only the driver (what it would detect on this machine), picks by driver.
    plain = make_venv(tmp_path / "plain", environ)
    driver_only = {
        **base_environ(tmp_path),
        "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION": DRIVER,
    }
    run(uv_install(release, plain), driver_only)
    assert installed_label(plain) == "cu129"


def test_env_output_sourced_by_a_shell_makes_uv_agree(
    prefix_126: Path, release: Release, tmp_path: Path
) -> None:
    environ = {**base_environ(tmp_path), "CONDA_OVERRIDE_CUDA": DRIVER}
    exports = run([str(SCRIPT), "env", "--prefix", str(prefix_126)], environ).stdout
    venv = make_venv(tmp_path, environ)
    # Without the flag: UV_PREVIEW_FEATURES from `env` must turn variant selection on.
    command = [arg for arg in uv_install(release, venv) if arg not in ("--preview-features",)]
    command.remove("wheel-variants")
    script = exports + " ".join(f"'{arg}'" for arg in command)
    run(["sh", "-c", script], environ)
    assert installed_label(venv) == "cu126"


@pytest.mark.parametrize(
    ("bridge_args", "expected"),
    [
        (["--target", "cuda="], "null"),  # "no CUDA" let uv detect the (fake) GPU
        (["--target", f"cuda={DRIVER}", "--target", "cuda_arch=9.0"], "cu129"),  # driver only
    ],
)
def test_uv_on_a_gpu_machine_follows_the_bridge(
    bridge_args: list[str], expected: str, release: Release, fake_gpu: Path, tmp_path: Path
) -> None:
    environ = base_environ(tmp_path, path_first=fake_gpu)
    seen = make_venv(tmp_path / "plain", environ)
    run(uv_install(release, seen), environ)
    assert installed_label(seen) == "cu129"  # uv does see the fake GPU

    venv = make_venv(tmp_path / "bridge", environ)
    run([str(SCRIPT), "run", *bridge_args, "--", *uv_install(release, venv)], environ)
    assert installed_label(venv) == expected
