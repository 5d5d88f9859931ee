"""The warning after a conda change to a prefix holding variant wheels: a few lines naming the
wheel and the ``conda variant`` command that fixes it when agreement broke; silence when all
agree, in a prefix without variant wheels, or when turned off; and conda's command never fails
because of it."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr
from pathlib import Path

import pytest

from tests.conda_plugin.conftest import Conda, GpuWorld


def _after(conda: Conda, command: str, prefix: Path) -> str:
    """``conda COMMAND -p PREFIX`` has just succeeded: conda runs the post-command hooks."""
    conda.args(prefix=str(prefix))
    err = io.StringIO()
    with redirect_stderr(err):
        conda.manager.invoke_post_commands(command)
    return err.getvalue()


@pytest.mark.slow
def test_a_toolkit_older_than_the_wheels_build_is_named_with_its_fix(
    conda: Conda, gpu_world: GpuWorld, tmp_path: Path
) -> None:
    prefix = gpu_world.copy(tmp_path)
    conda.reset(override_virtual_packages={"cuda": "12.9"})
    assert _after(conda, "install", prefix) == ""  # all agree: silent
    gpu_world.set_toolkit(prefix, tmp_path, "12.4")  # conda install cuda-version=12.4
    lines = _after(conda, "install", prefix).splitlines()
    assert lines[0] == (
        f"warning: variant-bridge: after this change 2 PyPI wheels no longer agree with {prefix}:"
    )
    assert lines[1].startswith("  gpulib 1.0 [cu126] no longer agrees with the environment")
    assert f"fix: conda variant install gpulib==1.0 -p {prefix} -f {gpu_world.wheels}" in lines[2]
    assert lines[3] == f"    or:  conda install -p {prefix} cuda-version=12.6"
    assert lines[4].startswith("  nvidia-cublas-cu12 12.6.4.1 (PyPI, CUDA 12.6) and libcublas 12.4")
    assert lines[5:] == [lines[2]]  # its fix is gpulib's re-selection too
    # Not for commands that change nothing (conda list), nor when turned off.
    assert _after(conda, "list", prefix) == ""
    conda.reset(override_virtual_packages={"cuda": "12.9"},
                condarc_plugins={"variant_bridge_check_after_change": False})  # fmt: skip
    assert _after(conda, "install", prefix) == ""


def test_a_prefix_without_variant_wheels_is_not_examined(conda: Conda, prefix_126: Path) -> None:
    assert _after(conda, "install", prefix_126) == ""


def test_whatever_fails_is_one_warning_line_and_never_condas_failure(
    conda: Conda, tmp_path: Path
) -> None:
    prefix = tmp_path / "broken"
    site = prefix / "lib" / "python3.12" / "site-packages" / "pkg-1.0.dist-info"
    site.mkdir(parents=True)
    (site / "METADATA").write_text("Metadata-Version: 2.1\nName: pkg\nVersion: 1.0\n")
    (site / "variant.json").write_text("{not json")  # a variant wheel's file, corrupt
    (prefix / "conda-meta").mkdir()
    (prefix / "conda-meta" / "bad-1.0-0.json").write_text(json.dumps({"name": 1}))
    (line,) = _after(conda, "update", prefix).splitlines()  # no exception reaches conda
    assert line.startswith("warning: variant-bridge: could not check the variant wheels: ")
    assert str(prefix) in line


def test_the_hook_itself_swallows_a_failing_check(
    conda: Conda, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from variant_bridge.conda_plugin import after_change

    def broken(command: str) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(after_change, "warn", broken)
    assert _after(conda, "install", tmp_path) == ""  # conda's command still succeeds
