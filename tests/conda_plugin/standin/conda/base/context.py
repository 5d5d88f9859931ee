"""conda's ``context`` as plugins read it: the plugin manager, the target prefix (``-n``/``-p``,
else the active environment, else base), the subdir and channels, output switches, the
plugins' settings (``.condarc`` ``plugins:`` and ``CONDA_PLUGINS_<NAME>``)."""

from __future__ import annotations

import os
from argparse import Namespace
from pathlib import Path
from typing import Any

from conda.exceptions import CondaValueError
from conda.plugins.manager import CondaPluginManager

RESERVED_ENV_NAMES = ("base", "root")


class PluginSettings:
    """``context.plugins.NAME``: the environment variable, else .condarc, else the default."""

    def __init__(self, manager: CondaPluginManager, condarc: dict[str, Any]) -> None:
        self._manager = manager
        self._condarc = condarc

    def __getattr__(self, name: str) -> Any:
        setting = self._manager.get_settings().get(name)
        if setting is None:
            raise AttributeError(name)
        given = os.environ.get(f"CONDA_PLUGINS_{name.upper()}")
        if given is not None:
            return setting.parameter.parse(given)
        return self._condarc.get(name, setting.parameter.default)


class Context:
    def __init__(self) -> None:
        self.reset(root_prefix=Path("/nonexistent/standin-root"))

    def reset(
        self,
        *,
        root_prefix: Path,
        envs_dirs: tuple[Path, ...] = (),
        subdir: str = "linux-64",
        channels: tuple[str, ...] = (),
        argparse_args: Namespace | None = None,
        condarc_plugins: dict[str, Any] | None = None,
        override_virtual_packages: dict[str, str] | None = None,
        quiet: bool = False,
        dry_run: bool = False,
    ) -> None:
        self.plugin_manager = CondaPluginManager()
        self.root_prefix = str(root_prefix)
        self.envs_dirs = tuple(str(d) for d in envs_dirs)
        self.subdir = subdir
        self.channels = channels
        self._argparse_args = argparse_args or Namespace()
        self._condarc_plugins = dict(condarc_plugins or {})
        self.override_virtual_packages = dict(override_virtual_packages or {})
        self.quiet = quiet
        self.json = False
        self.verbose = False
        self.dry_run = dry_run

    @property
    def plugins(self) -> PluginSettings:
        return PluginSettings(self.plugin_manager, self._condarc_plugins)

    @property
    def active_prefix(self) -> str | None:
        return os.environ.get("CONDA_PREFIX")

    @property
    def default_prefix(self) -> str:
        return self.active_prefix or self.root_prefix

    @property
    def target_prefix(self) -> str:
        return determine_target_prefix(self)


def determine_target_prefix(ctx: Context, args: Namespace | None = None) -> str:
    """``-p PATH`` (expanded), ``-n NAME`` (base, else the first envs dir that has it, else
    where it would be created: in the first envs dir), else the default prefix."""
    args = args if args is not None else ctx._argparse_args
    name, path = getattr(args, "name", None), getattr(args, "prefix", None)
    if path is not None:
        return os.path.abspath(os.path.expanduser(path))
    if name is None:
        return ctx.default_prefix
    if name in RESERVED_ENV_NAMES:
        return ctx.root_prefix
    if "/" in name:
        raise CondaValueError("Environment names cannot contain path separators")
    for envs_dir in ctx.envs_dirs:
        if os.path.isdir(os.path.join(envs_dir, name)):
            return os.path.abspath(os.path.join(envs_dir, name))
    return os.path.abspath(os.path.join(ctx.envs_dirs[0], name))


context = Context()
