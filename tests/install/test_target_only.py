"""A command that writes into an environment writes only into the one named (or detected), and
refuses before writing anything when that environment has no interpreter, or one that installs
elsewhere: never into variant-bridge's own interpreter, which is not the target.

Real parts: rattler-solved prefixes and a rattler-written pixi.lock, real wheels, the installed
``variant-bridge`` script, real uv.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import run_script
from tests.worlds.channel import Channel, cuda_packages
from tests.worlds.lockfile import LockedPlatform, write_lockfile
from tests.worlds.prefix import HOST_VIRTUAL_PACKAGES, install_prefix, running_has, solve
from tests.worlds.wheels import make_wheel

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform != "linux", reason="linux-64 worlds; bin/python layout"),
]

STRAY = "straytarget"
"""A project no interpreter here has: finding it in this one means a write went astray."""


def _tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("wheels")
    make_wheel(root, STRAY, "1.0")
    return root


@pytest.fixture(scope="module")
def no_python(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A conda prefix without Python (cuda-version only) and a pixi.lock of the same solve,
    whose environment is not installed."""
    root = tmp_path_factory.mktemp("nopython")
    channel = Channel(root / "channel").add(cuda_packages(("12.6",)))
    specs = ["cuda-version 12.6.*"]
    records = solve([channel], specs, (*HOST_VIRTUAL_PACKAGES, "__cuda=12.9"))
    prefix = install_prefix(records, root / "env", root / "pkgs", specs)
    workspace = root / "ws"
    workspace.mkdir()
    lock = write_lockfile(
        workspace / "pixi.lock", {"default": [LockedPlatform("linux-64", records)]},
        channels=[channel.url],
    )  # fmt: skip
    return prefix, lock


def test_install_into_a_prefix_without_python_refuses_and_changes_nothing(
    wheels: Path, no_python: tuple[Path, Path]
) -> None:
    prefix, _ = no_python
    before = _tree(prefix)
    result = run_script("install", STRAY, "-f", str(wheels), "--prefix", str(prefix))
    assert result.returncode == 1, result.stdout
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: no interpreter to install into")
    assert f"{prefix} has no bin/python" in line
    assert "nothing was installed; pass --python PATH" in line
    assert _tree(prefix) == before
    assert not running_has(STRAY)
    # Choosing for it still works (for the running Python's version, said as such).
    chose = run_script("select", STRAY, "-f", str(wheels), "--prefix", str(prefix))
    assert chose.returncode == 0, chose.stderr
    assert f"({prefix} has no bin/python; the running version)" in chose.stdout


def test_install_from_a_lock_whose_environment_is_not_installed_refuses(
    wheels: Path, no_python: tuple[Path, Path]
) -> None:
    _, lock = no_python
    result = run_script("install", STRAY, "-f", str(wheels), "--lockfile", str(lock))
    assert result.returncode == 1, result.stdout
    assert result.stderr.startswith("error: no interpreter to install into")
    assert f"{lock.parent / '.pixi' / 'envs' / 'default'} does not exist" in result.stderr
    assert not (lock.parent / ".pixi").exists()
    assert not running_has(STRAY)


def test_a_prefix_whose_python_installs_elsewhere_is_refused(wheels: Path, tmp_path: Path) -> None:
    """``bin/python`` a link to an interpreter whose site-packages lie outside the prefix (here:
    the base interpreter of the tests' venv, whose prefix is not this one)."""
    prefix = tmp_path / "env"
    (prefix / "conda-meta").mkdir(parents=True)
    (prefix / "bin").mkdir()
    base = Path(os.path.realpath(sys.executable))
    (prefix / "bin" / "python").symlink_to(base)
    before = _tree(prefix)
    result = run_script("install", STRAY, "-f", str(wheels), "--prefix", str(prefix))
    assert result.returncode == 1, result.stdout
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"error: {prefix / 'bin' / 'python'} installs into ")
    assert f"outside its prefix {prefix.resolve()}: nothing was installed" in line
    assert _tree(prefix) == before
    assert not running_has(STRAY)


def test_the_doctors_fix_of_a_prefix_without_python_refuses(tmp_path: Path) -> None:
    """A prefix whose interpreter is gone (its records say Python, bin/python is missing): the
    fixer has nowhere to install and says so; nothing is installed anywhere."""
    from tests.worlds.gpu_env import gpu_channel, gpulib_wheels, make_env, set_toolkit
    from variant_bridge.errors import InstallError
    from variant_bridge.indexes import FindLinks
    from variant_bridge.jobs.context import open_downloads
    from variant_bridge.jobs.doctor import examine_environment, fix
    from variant_bridge.jobs.specs import EnvironmentSpec, FetchSpec
    from variant_bridge.jobs.target import detect

    channel = gpu_channel(tmp_path / "channel")
    wheels = gpulib_wheels(tmp_path / "wheels")
    prefix = make_env(channel, tmp_path / "a", "12.6")
    done = run_script("install", "gpulib", "-f", str(wheels), "--prefix", str(prefix),
                      env={"CONDA_OVERRIDE_CUDA": "12.9"})  # fmt: skip
    assert done.returncode == 0, done.stderr
    set_toolkit(channel, prefix, tmp_path / "pkgs", "12.4")  # gpulib cu126 now disagrees
    for link in (prefix / "bin").glob("python*"):
        link.unlink()
    before = _tree(prefix)
    spec = EnvironmentSpec(prefix=prefix, environ={"CONDA_OVERRIDE_CUDA": "12.9"})
    examined = examine_environment(detect(spec))
    assert examined.report.reinstall() == ("gpulib==1.0",)
    with (
        open_downloads(FetchSpec(quiet=True)) as downloads,
        pytest.raises(InstallError, match="no interpreter to reinstall into"),
    ):
        fix(examined, [FindLinks.parse(str(wheels))], downloads)
    assert _tree(prefix) == before
    assert not running_has("gpulib")
