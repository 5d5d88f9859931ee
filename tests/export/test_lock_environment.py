"""``install``/``select``/``export --lockfile pixi.lock`` find the environment pixi installed from
the lock, ``.pixi/envs/<env>`` beside it (issue 17)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import Cli
from tests.export.conftest import OVERRIDES, ExportWorld
from variant_bridge.detect.lockfile import pixi_environment_prefix

pytestmark = pytest.mark.slow


@pytest.fixture
def project(export_world: ExportWorld, tmp_path: Path) -> Path:
    """The world's lock in a project folder whose `.pixi/envs/default` has an interpreter."""
    shutil.copy(export_world.lockfile, tmp_path / "pixi.lock")
    env = tmp_path / ".pixi" / "envs" / "default"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    return tmp_path


def test_the_helper_finds_only_an_existing_environment(project: Path) -> None:
    lock = project / "pixi.lock"
    assert pixi_environment_prefix(lock) == project / ".pixi" / "envs" / "default"
    assert pixi_environment_prefix(lock, "cuda") is None
    assert pixi_environment_prefix(lock, "../../etc") is None


def test_select_and_install_target_the_lock_environment(
    project: Path, export_world: ExportWorld
) -> None:
    lock = str(project / "pixi.lock")
    wheels = str(export_world.wheels)
    selected = Cli()("select", "tinyvar", "--lockfile", lock, "-f", wheels, env=OVERRIDES)
    assert selected.exit_code == 0, selected.output
    python = project / ".pixi" / "envs" / "default" / "bin" / "python"
    assert f"at {python} (prefix)" in selected.stdout
    installed = Cli()("install", "tinyvar", "--lockfile", lock, "-f", wheels,
                      "--installer", "uv", env=OVERRIDES)  # fmt: skip
    assert installed.exit_code == 0, installed.output
    site = next((project / ".pixi" / "envs" / "default" / "lib").glob("python*/site-packages"))
    assert (site / "tinyvar-1.0.dist-info" / "variant.json").is_file()
