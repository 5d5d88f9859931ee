"""Every hook against real conda, when a conda is at hand (``$VARIANT_BRIDGE_CONDA_PYTHON``;
skipped with one line otherwise: conda is on no package registry, so CI has none). conda loads
the plugin through its entry point and runs it as a user would: ``conda variant``, ``conda
doctor`` and ``--fix``, ``conda install`` (the post-command warning), ``conda export``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conda_plugin.conftest import GpuWorld
from tests.conda_plugin.real_conda import RealConda, conda_python, missing

pytestmark = pytest.mark.slow

DRIVER = {"CONDA_OVERRIDE_CUDA": "12.9"}


@pytest.fixture(scope="module")
def conda(tmp_path_factory: pytest.TempPathFactory) -> RealConda:
    python = conda_python()
    if python is None:
        pytest.skip(missing())
    return RealConda(python, tmp_path_factory.mktemp("real-conda"))


def test_conda_loads_the_plugin_and_lists_conda_variant(conda: RealConda) -> None:
    ran = conda("--help")
    assert ran.returncode == 0, ran.stderr
    assert re.search(r"^ +variant( \(vb\))? ", ran.stdout, re.MULTILINE), ran.stdout
    ran = conda("variant", "--help")
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.startswith("Usage: conda variant [OPTIONS] COMMAND [ARGS]...")


def test_every_hook_on_a_prefix_with_a_variant_wheel(
    conda: RealConda, gpu_world: GpuWorld, tmp_path: Path
) -> None:
    prefix = gpu_world.copy(tmp_path)
    channel = gpu_world.channel.path.as_uri()

    ran = conda("variant", "detect", "-p", str(prefix), "--json", env=DRIVER)
    assert ran.returncode == 0, ran.stderr
    sources = {v["name"]: v["source"] for v in json.loads(ran.stdout)["virtual_packages"]}
    assert sources["__glibc"] == "conda"
    assert sources["__conda"] == "conda"  # only conda reports this one

    ran = conda("doctor", "-p", str(prefix), "variant-consistency", env=DRIVER)
    assert ran.returncode == 0, ran.stderr
    assert "✅ 1 variant-wheel finding (1 info; 2 PyPI distributions checked):" in ran.stdout

    ran = conda("install", "-p", str(prefix), "--override-channels", "-c", channel,
                "cuda-version=12.4", env=DRIVER)  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert (
        f"warning: variant-bridge: after this change 2 PyPI wheels no longer agree with {prefix}:"
    ) in ran.stderr
    assert f"fix: conda variant install gpulib==1.0 -p {prefix}" in ran.stderr

    ran = conda("doctor", "-p", str(prefix), "variant-consistency", env=DRIVER)
    assert "❌ 2 variant-wheel findings (2 warning; 2 PyPI distributions checked):" in ran.stdout
    assert "warning: nvidia-cublas-cu12 12.6.4.1 (PyPI, CUDA 12.6) and libcublas 12.4" in (
        ran.stdout
    )

    ran = conda("export", "-p", str(prefix), "--format", "variant-yaml", env=DRIVER)
    assert ran.returncode == 0, ran.stderr
    assert "#   driver: __cuda=12.9 (CONDA_OVERRIDE_CUDA)" in ran.stdout
    assert "#   C library: __glibc=2.36 (conda)" in ran.stdout or "(conda)" in ran.stdout

    ran = conda("doctor", "-p", str(prefix), "--fix", "variant-consistency", env=DRIVER)
    assert ran.returncode == 0, ran.stderr
    assert "    gpulib 1.0: cu126 -> cu124" in ran.stdout
    ran = conda("doctor", "-p", str(prefix), "variant-consistency", env=DRIVER)
    assert "✅ 1 variant-wheel finding (1 info;" in ran.stdout


def test_errors_are_condas_one_line_never_a_traceback(conda: RealConda, tmp_path: Path) -> None:
    ran = conda("export", "-p", str(tmp_path), "--format", "variant-pylock")
    assert ran.returncode == 1
    assert "CondaVariantError: --format variant-pylock needs --file FILE" in ran.stderr
    assert "Traceback" not in ran.stderr
    ran = conda("variant", "detect", "-n", "nope")
    assert ran.returncode == 1
    assert "EnvironmentLocationNotFound: Not a conda environment: " in ran.stderr
    assert "Traceback" not in ran.stderr
