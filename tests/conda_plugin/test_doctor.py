"""``conda doctor variant-consistency`` and its fixer: the environment's health findings with
conda's marks and commands spelled for conda; ``--fix`` re-selects after conda's confirmation,
hash-checked, through the doctor job."""

from __future__ import annotations

import io
import json
from argparse import Namespace
from contextlib import redirect_stdout, suppress
from pathlib import Path

import pytest

from tests.conda_plugin.conftest import Conda, GpuWorld
from tests.worlds.gpu_env import CUBLAS
from tests.worlds.prefix import running_has

pytestmark = pytest.mark.slow


def _check(conda: Conda, prefix: Path, verbose: bool = False) -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        conda.manager.get_health_checks()["variant-consistency"].action(str(prefix), verbose)
    return out.getvalue()


def _fix(conda: Conda, prefix: Path, answer: bool) -> tuple[int | None, str, list[str]]:
    from conda.exceptions import CondaSystemExit

    asked: list[str] = []

    def confirm(message: str) -> None:  # conda's: declining raises CondaSystemExit
        asked.append(message)
        if not answer:
            raise CondaSystemExit("Exiting.")

    check = conda.manager.get_health_checks()["variant-consistency"]
    out = io.StringIO()
    code = None
    with redirect_stdout(out), suppress(CondaSystemExit):
        code = check.fixer(str(prefix), Namespace(), confirm)
    return code, out.getvalue(), asked


def test_a_healthy_prefix_is_one_ok_line(conda: Conda, gpu_world: GpuWorld) -> None:
    conda.reset(override_virtual_packages={"cuda": "12.9"})
    out = _check(conda, gpu_world.prefix)
    lines = out.splitlines()
    assert lines[0] == "✅ 1 variant-wheel finding (1 info; 2 PyPI distributions checked):"
    assert lines[1].startswith(f"    info: nvidia-cublas-cu12 {CUBLAS['12.6']} (PyPI, CUDA 12.6)")


def test_a_duplicate_and_a_mismatch_with_their_fixes_in_condas_spelling(
    conda: Conda, gpu_world: GpuWorld, tmp_path: Path
) -> None:
    """After `conda install cuda-version=12.4`: gpulib cu126 disagrees, and its cuBLAS wheel
    (CUDA 12.6) mismatches conda's libcublas (now 12.4)."""
    prefix = gpu_world.copy(tmp_path)
    gpu_world.set_toolkit(prefix, tmp_path, "12.4")
    conda.reset(override_virtual_packages={"cuda": "12.9"})
    out = _check(conda, prefix, verbose=True)
    lines = out.splitlines()
    assert lines[0] == "❌ 2 variant-wheel findings (2 warning; 2 PyPI distributions checked):"
    assert lines[1].startswith(
        "    warning: gpulib 1.0 [cu126] no longer agrees with the environment"
    )
    reinstall = f"conda variant install gpulib==1.0 -p {prefix} -f {gpu_world.wheels}"
    assert lines[2] == f"        fix: {reinstall}"
    assert lines[3] == f"        or:  conda install -p {prefix} cuda-version=12.6"
    assert lines[4].startswith(
        f"    warning: nvidia-cublas-cu12 {CUBLAS['12.6']} (PyPI, CUDA 12.6)"
    )
    assert "libcublas 12.4" in lines[4]
    assert lines[5] == f"        fix: {reinstall}"
    assert (
        lines[-1]
        == "    examined with: linux-64, cuda-version=12.4 (conda-meta), __cuda=12.9 (conda)"
    )


def test_an_unreadable_prefix_is_the_checks_own_line(conda: Conda, tmp_path: Path) -> None:
    out = _check(conda, tmp_path / "missing")
    (line,) = out.splitlines()
    assert line.startswith(f"❌ variant-consistency: cannot examine {tmp_path / 'missing'}: ")


def test_the_fixer_asks_then_reselects_hash_checked(
    conda: Conda, gpu_world: GpuWorld, tmp_path: Path
) -> None:
    prefix = gpu_world.copy(tmp_path)
    gpu_world.set_toolkit(prefix, tmp_path, "12.4")
    conda.reset(override_virtual_packages={"cuda": "12.9"})

    code, out, asked = _fix(conda, prefix, answer=False)
    assert (code, asked) == (None, ["Re-select and reinstall these variant wheels?"])
    assert "    gpulib==1.0 [cu126]" in out
    assert "❌" in _check(conda, prefix)  # declined: nothing changed

    code, out, asked = _fix(conda, prefix, answer=True)
    assert code == 0, out
    assert "    gpulib 1.0: cu126 -> cu124" in out
    after = _check(conda, prefix)
    assert after.startswith("✅ 1 variant-wheel finding (1 info;")  # cuBLAS 12.4 twice: info
    code, out, asked = _fix(conda, prefix, answer=True)
    assert (code, asked) == (0, [])
    assert out.startswith("No variant wheel disagrees with this environment")


def test_a_wheel_from_an_unknown_index_needs_the_setting(
    conda: Conda, gpu_world: GpuWorld, tmp_path: Path
) -> None:
    prefix = gpu_world.copy(tmp_path)
    gpu_world.set_toolkit(prefix, tmp_path, "12.4")
    (direct,) = prefix.glob("lib/python*/site-packages/gpulib-1.0.dist-info/direct_url.json")
    url = "https://example.org/gpulib-1.0-py3-none-any-cu126.whl"
    direct.write_text(json.dumps({"url": url, "archive_info": {}}))
    conda.reset(override_virtual_packages={"cuda": "12.9"})
    code, out, asked = _fix(conda, prefix, answer=True)
    assert (code, asked) == (1, [])
    assert "plugins.variant_bridge_index_url" in out
    assert "gpulib 1.0 from https://example.org/gpulib-1.0-py3-none-any-cu126.whl" in out
    # With the setting, the configured source is consulted (here: the wheels directory).
    conda.reset(override_virtual_packages={"cuda": "12.9"},
                condarc_plugins={"variant_bridge_find_links": (str(gpu_world.wheels),)})  # fmt: skip
    code, out, asked = _fix(conda, prefix, answer=True)
    assert code == 0, out
    assert "    gpulib 1.0: cu126 -> cu124" in out


def test_a_fix_that_cannot_be_done_is_one_conda_error(
    conda: Conda, gpu_world: GpuWorld, tmp_path: Path
) -> None:
    from conda import CondaError

    prefix = gpu_world.copy(tmp_path)
    gpu_world.set_toolkit(prefix, tmp_path, "12.4")
    empty = tmp_path / "moved"
    empty.mkdir()  # the directory gpulib was installed from no longer has it
    (direct,) = prefix.glob("lib/python*/site-packages/gpulib-1.0.dist-info/direct_url.json")
    moved = (empty / "gpulib-1.0-py3-none-any-cu126.whl").as_uri()
    direct.write_text(json.dumps({"url": moved, "archive_info": {}}))
    conda.reset(override_virtual_packages={"cuda": "12.9"})
    with pytest.raises(CondaError) as failed:
        _fix(conda, prefix, answer=True)
    message = str(failed.value)
    assert type(failed.value).__name__ == "CondaVariantError"
    assert message.startswith(f"variant-consistency fix of {prefix}: ")
    assert "gpulib" in message
    assert "\n" not in message


def test_the_fixer_of_an_environment_without_its_interpreter_refuses(
    conda: Conda, gpu_world: GpuWorld, tmp_path: Path
) -> None:
    """bin/python removed (the records still say Python): the fix has nowhere to install, says
    so as conda's one line, and installs nothing (never into conda's own interpreter)."""
    from conda import CondaError

    prefix = gpu_world.copy(tmp_path)
    gpu_world.set_toolkit(prefix, tmp_path, "12.4")
    for link in (prefix / "bin").glob("python*"):
        link.unlink()
    before = sorted(str(p) for p in prefix.rglob("*"))
    conda.reset(override_virtual_packages={"cuda": "12.9"})
    with pytest.raises(CondaError) as failed:
        _fix(conda, prefix, answer=True)
    message = str(failed.value)
    assert message.startswith(f"variant-consistency fix of {prefix}: ")
    assert "no interpreter to reinstall into" in message
    assert "nothing was installed" in message
    assert sorted(str(p) for p in prefix.rglob("*")) == before
    assert not running_has("gpulib")
