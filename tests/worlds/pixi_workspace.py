"""A pixi workspace built from real parts, as pixi would leave it: its ``pixi.toml``, a
``pixi.lock`` written by rattler from real solves of its two environments, and
``.pixi/envs/<env>`` installed by rattler (each a venv of this interpreter, so wheels install
into it).

- ``default``: ``cuda-version 12.6.*``, ``libcublas``, ``python``; the top-level
  ``[system-requirements] cuda = "12.8"`` declares the driver;
- ``legacy``: its own feature, ``no-default-feature``: ``cuda-version 12.4.*``, declared driver
  ``12.4`` in ``[feature.legacy.system-requirements]``.

The wheels (``wheels/``) are :func:`~tests.worlds.gpu_env.gpulib_wheels`: a ``gpulib`` variant per
CUDA minor, each pinning its ``nvidia-cublas-cu12``.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.worlds.channel import Channel
from tests.worlds.gpu_env import gpu_channel, gpulib_wheels
from tests.worlds.lockfile import LockedPlatform, write_lockfile
from tests.worlds.prefix import HOST_VIRTUAL_PACKAGES, install_prefix, solve
from variant_bridge.install import find_uv

__all__ = ["ENVIRONMENTS", "PixiWorkspace", "make_workspace", "manifest_text"]

ENVIRONMENTS = {"default": "12.6", "legacy": "12.4"}
"""Each environment's CUDA toolkit (cuda-version)."""


def manifest_text(channel: str) -> str:
    return f"""\
[workspace]
name = "proj"
channels = ["{channel}"]
platforms = ["linux-64"]

[dependencies]
python = "*"
libcublas = "*"
cuda-version = "12.6.*"  # the team's toolkit

[system-requirements]
cuda = "12.8"

[feature.legacy.dependencies]
python = "*"
libcublas = "*"
cuda-version = "12.4.*"

[feature.legacy.system-requirements]
cuda = "12.4"

[environments]
legacy = {{ features = ["legacy"], no-default-feature = true }}

[tasks]
hello = "python -c 'print(1)'"
"""


@dataclass(frozen=True)
class PixiWorkspace:
    root: Path
    channel: Channel
    wheels: Path

    @property
    def manifest(self) -> Path:
        return self.root / "pixi.toml"

    @property
    def lockfile(self) -> Path:
        return self.root / "pixi.lock"

    def prefix(self, env: str) -> Path:
        return self.root / ".pixi" / "envs" / env

    @property
    def subdir(self) -> Path:
        """A folder deep inside the workspace, to run from."""
        path = self.root / "src" / "proj" / "deep"
        path.mkdir(parents=True, exist_ok=True)
        return path


def _specs(toolkit: str) -> list[str]:
    return [f"cuda-version {toolkit}.*", "libcublas", "python"]


def make_workspace(
    root: Path, *, installed: tuple[str, ...] = tuple(ENVIRONMENTS)
) -> PixiWorkspace:
    """The workspace at ``root/proj`` (module docstring), with *installed* environments under
    ``.pixi/envs``; the channel and wheels beside it."""
    channel = gpu_channel(root / "channel")
    workspace = root / "proj"
    workspace.mkdir()
    (workspace / "pixi.toml").write_text(manifest_text(channel.url), encoding="utf-8")
    solved = {
        env: solve([channel], _specs(toolkit), (*HOST_VIRTUAL_PACKAGES, "__cuda=12.9"))
        for env, toolkit in ENVIRONMENTS.items()
    }
    write_lockfile(
        workspace / "pixi.lock",
        {env: [LockedPlatform("linux-64", records)] for env, records in solved.items()},
        channels=[channel.url],
    )
    uv = find_uv()
    assert uv is not None
    for env in installed:
        prefix = workspace / ".pixi" / "envs" / env
        prefix.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(prefix)], check=True)
        install_prefix(solved[env], prefix, root / "pkgs", _specs(ENVIRONMENTS[env]))
    wheels = gpulib_wheels(root / "wheels", ("12.4", "12.6"))
    return PixiWorkspace(workspace, channel, wheels)
