"""Real conda with this plugin, for the tests that run it (and bench/bench_conda_plugin.py).

conda is on no package registry, so CI has none: a developer points
``$VARIANT_BRIDGE_CONDA_PYTHON`` at a Python with conda installed (e.g. conda from its source in
a venv; docs/conda.md, "Testing against real conda"), or runs the tests from such a Python. The plugin is made
visible to that conda without installing anything into it: a launcher appends this checkout's
``src`` and this interpreter's ``site-packages`` (the package's entry point and its
dependencies) to conda's ``sys.path``, after conda's own. Everything conda writes goes to a
scratch directory (condarc, HOME, package cache, envs), offline, from local channels only.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import sysconfig
from collections.abc import Mapping
from pathlib import Path

__all__ = ["CONDA_PYTHON_VARIABLE", "RealConda", "conda_python", "missing"]

CONDA_PYTHON_VARIABLE = "VARIANT_BRIDGE_CONDA_PYTHON"
SRC = Path(__file__).resolve().parents[2] / "src"


def conda_python() -> Path | None:
    """A Python that has conda: ``$VARIANT_BRIDGE_CONDA_PYTHON``, else this one if it has."""
    given = os.environ.get(CONDA_PYTHON_VARIABLE)
    if given:
        return Path(given) if Path(given).is_file() else None
    return Path(sys.executable) if importlib.util.find_spec("conda") is not None else None


def missing() -> str:
    """The one line a real-conda test skips with."""
    return (
        f"real conda not found: set {CONDA_PYTHON_VARIABLE} to a Python with conda installed "
        "(conda is on no package registry; docs/conda.md)"
    )


# conda's package extraction spawns workers that import the main script again: the guard keeps
# them from running conda a second time.
_LAUNCHER = """\
import sys

sys.path += {paths!r}

if __name__ == "__main__":
    from conda.cli.main import main

    sys.exit(main())
"""


class RealConda:
    """conda in a scratch place, with the plugin (``plugin=False``: stock conda, same place)."""

    def __init__(self, python: Path, scratch: Path, *, plugin: bool = True) -> None:
        self.python = python
        self.scratch = scratch
        for sub in ("home", "pkgs", "envs", "root", "bin"):
            (scratch / sub).mkdir(parents=True, exist_ok=True)
        self.condarc = scratch / "condarc"
        self.condarc.write_text(
            "channels: []\ndefault_channels: []\nsolver: classic\noffline: true\n"
            "register_envs: false\nadd_pip_as_python_dependency: false\n"
            f"pkgs_dirs: [{scratch / 'pkgs'}]\nenvs_dirs: [{scratch / 'envs'}]\n"
            "auto_update_conda: false\nnotify_outdated_conda: false\nreport_errors: false\n"
            "always_yes: true\n"
        )
        paths: list[str] = []
        if plugin and python != Path(sys.executable):  # venvs share one resolved interpreter
            paths = [str(SRC), sysconfig.get_paths()["purelib"]]
        self.launcher = scratch / "bin" / ("conda" if plugin else "conda-stock")
        if plugin:
            self.launcher.write_text(_LAUNCHER.format(paths=paths))
        else:  # stock conda: never this checkout's entry point
            self.launcher.write_text(_LAUNCHER.format(paths=[]))

    def environ(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        home = self.scratch / "home"
        base = {name: os.environ[name] for name in ("PATH", "LANG") if name in os.environ}
        return {
            **base,
            "CONDARC": str(self.condarc),
            "CONDA_ROOT_PREFIX": str(self.scratch / "root"),
            "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_DATA_HOME": str(home / ".local/share"),
            "VARIANT_BRIDGE_CACHE_DIR": str(self.scratch / "vb-cache"),
            "PIP_CONFIG_FILE": os.devnull,
            "PIP_NO_INPUT": "1",
            **(extra or {}),
        }

    def command(self, *args: str) -> list[str]:
        return [str(self.python), str(self.launcher), *args]

    def __call__(
        self, *args: str, env: Mapping[str, str] | None = None, stdin: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.command(*args),
            capture_output=True,
            text=True,
            check=False,
            env=self.environ(env),
            input=stdin,
            timeout=300,
        )
