"""The conda plugin's tests: its hooks, through pluggy, against a stand-in of conda's plugin API
(``standin/conda``, written here; conda is on no package registry, so CI has none). The stand-in
is on ``sys.path`` only inside these tests (the ``conda`` fixture), and every module of it and
of the plugin is forgotten afterwards, so a real conda, if installed, is untouched."""

from __future__ import annotations

import contextlib
import importlib
import io
import sys
from argparse import Namespace
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

STANDIN = Path(__file__).resolve().parent / "standin"
_OURS = ("conda", "variant_bridge.conda_plugin")


def _ours(name: str) -> bool:
    return any(name == prefix or name.startswith(prefix + ".") for prefix in _OURS)


@dataclass
class Ran:
    code: int
    out: str
    err: str


@dataclass
class Conda:
    """The stand-in conda with the plugin registered, as a test drives it."""

    context: Any
    hooks: ModuleType
    root: Path
    envs: Path

    @property
    def manager(self) -> Any:
        return self.context.plugin_manager

    def reset(self, **given: Any) -> None:
        """A fresh context (and plugin manager) with conda's built-ins and the plugin."""
        given.setdefault("root_prefix", self.root)
        given.setdefault("envs_dirs", (self.envs,))
        self.context.reset(**given)
        self.manager.register(importlib.import_module("conda.plugins.builtin"))
        self.manager.register(self.hooks)

    def args(self, **given: Any) -> None:
        """conda's parsed arguments of the running command (``--file``, ``-n``...)."""
        self.context._argparse_args = Namespace(**given)

    def variant(self, *argv: str) -> Ran:
        """``conda variant ARGV``: the subcommand's action, as conda calls a greedy one."""
        action = self.manager.get_subcommands()["variant"].action
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = action(tuple(argv))
        return Ran(code, out.getvalue(), err.getvalue())


@pytest.fixture
def conda(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Conda]:
    saved = {name: module for name, module in sys.modules.items() if _ours(name)}
    for name in saved:
        del sys.modules[name]
    monkeypatch.syspath_prepend(str(STANDIN))
    try:
        context = importlib.import_module("conda.base.context").context
        assert Path(importlib.import_module("conda").__file__ or "").is_relative_to(STANDIN)
        hooks = importlib.import_module("variant_bridge.conda_plugin.hooks")
        (tmp_path / "envs").mkdir()
        handle = Conda(context, hooks, tmp_path / "root", tmp_path / "envs")
        handle.reset()
        yield handle
    finally:
        for name in [n for n in sys.modules if _ours(n)]:
            del sys.modules[name]
        sys.modules.update(saved)


@dataclass(frozen=True)
class GpuWorld:
    """A prefix as ``conda variant install`` leaves it: cuda-version 12.6 from a rattler-indexed
    channel, a real interpreter, ``gpulib`` cu126 and its ``nvidia-cublas-cu12`` wheel installed
    by the bridge from ``wheels`` (hash-checked, origins recorded)."""

    channel: Any
    wheels: Path
    prefix: Path

    def copy(self, tmp_path: Path) -> Path:
        """A copy of the prefix to change (a conda install of another toolkit, a fix)."""
        import shutil

        copy = tmp_path / "env"
        shutil.copytree(self.prefix, copy, symlinks=True)
        return copy

    def set_toolkit(self, prefix: Path, tmp_path: Path, toolkit: str) -> None:
        """``conda install -p PREFIX cuda-version=TOOLKIT``, done by rattler."""
        from tests.worlds.gpu_env import set_toolkit

        set_toolkit(self.channel, prefix, tmp_path / "pkgs", toolkit)


@pytest.fixture(scope="session")
def gpu_world(tmp_path_factory: pytest.TempPathFactory) -> GpuWorld:
    from tests.cli.conftest import run_script
    from tests.worlds.gpu_env import gpu_channel, gpulib_wheels, make_env

    root = tmp_path_factory.mktemp("conda-plugin-gpu")
    channel = gpu_channel(root / "channel")
    wheels = gpulib_wheels(root / "wheels")
    prefix = make_env(channel, root / "a", "12.6")
    result = run_script("install", "gpulib", "-f", str(wheels), "--prefix", str(prefix),
                        env={"CONDA_OVERRIDE_CUDA": "12.9"})  # fmt: skip
    assert result.returncode == 0, result.stderr
    return GpuWorld(channel, wheels, prefix)
