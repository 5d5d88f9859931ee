"""Hand the chosen wheels of the whole tree to uv or pip: exactly those files, hash-checked.

:func:`plan_install` checks that everything is there; :func:`install` (:mod:`._run`) runs it.
Every chosen wheel is downloaded (or copied from find-links) and checked against the sha256 the
index advertised *before* the installer runs, so a mismatch installs nothing. The installer
resolves nothing: ``select`` resolved the tree, and the installer gets only the staged files,
offline, each pinned by hash, without dependencies (``--no-deps --no-index --require-hashes``).

pip and uv (without its preview feature) refuse variant filenames (``-cu126.whl``), so each file
is staged under its non-variant name: ``variant.json`` stays inside, which is how an installed
variant is recognised later. Afterwards each variant's PEP 610 ``direct_url.json`` records the
file's real origin, so ``export`` can pin it.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from variant_bridge._values import value
from variant_bridge.detect.machine import host_platform as host_subdir
from variant_bridge.errors import InstallError
from variant_bridge.indexes import Candidate
from variant_bridge.install._run import REQUIREMENTS, InstallResult, install, uninstall
from variant_bridge.install._state import State, read_state
from variant_bridge.platform_tags import TargetPython

__all__ = [
    "InstallPlan",
    "InstallResult",
    "Installer",
    "State",
    "find_uv",
    "install",
    "plan_install",
    "read_state",
    "uninstall",
]

Installer = Literal["uv", "pip"]


def find_uv() -> str | None:
    """The uv executable: on PATH, beside this interpreter (where the ``uv`` Python package puts
    it: found without importing that package), or the one the ``uv`` package ships elsewhere."""
    found = shutil.which("uv")
    if found:
        return found
    beside = shutil.which("uv", path=os.path.dirname(sys.executable))
    if beside:
        return beside
    try:
        from uv import find_uv_bin  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    try:
        return str(find_uv_bin())
    except FileNotFoundError:
        return None


@value
class InstallPlan:
    """What will run: the installer, the interpreter, and the exact files of the whole tree."""

    installer: Installer
    python: TargetPython
    candidates: tuple[Candidate, ...]
    uv: str | None = None
    """The uv executable found when planning (looking it up again costs ~2 ms)."""
    require_hashes: bool = True
    """Refuse a remote wheel whose index lists no sha256 (``--no-require-hashes`` turns it
    off: see :func:`variant_bridge.indexes.trust.verify`)."""

    def command(self, staging: Path, candidates: Sequence[Candidate]) -> list[str]:
        """The installer command for *candidates* staged in *staging* (with its requirements
        file pinning each by sha256): offline, no resolution, nothing but those files."""
        assert self.python.executable is not None  # plan_install() guarantees it
        pinned = [
            "--no-deps",
            "--no-index",
            "--find-links",
            str(staging),
            "--require-hashes",
            "-r",
            str(staging / REQUIREMENTS),
        ]
        if self.installer == "uv":
            uv = self.uv or find_uv()
            assert uv is not None  # plan_install() guarantees it
            head = [uv, "pip", "install", "--python", self.python.executable]
            # The chosen files replace whatever build of the same version is installed.
            for candidate in candidates:
                head += ["--reinstall-package", candidate.filename.name]
            return [*head, *pinned]
        return [
            self.python.executable, "-m", "pip", "install", "--disable-pip-version-check",
            "--force-reinstall", *pinned,
        ]  # fmt: skip

    def uninstall_command(self, names: Sequence[str]) -> list[str]:
        """The command that removes the distributions *names* from the target interpreter, with
        the installer that installs (``uv pip uninstall --python PY``, ``PY -m pip uninstall
        -y``)."""
        assert self.python.executable is not None  # plan_install() guarantees it
        if self.installer == "uv":
            uv = self.uv or find_uv()
            assert uv is not None  # plan_install() guarantees it
            return [uv, "pip", "uninstall", "--python", self.python.executable, *names]
        return [self.python.executable, "-m", "pip", "uninstall", "-y", *names]


def plan_install(
    candidates: Sequence[Candidate],
    *,
    python: TargetPython,
    installer: Installer | None = None,
    platform: str | None = None,
    require_hashes: bool = True,
) -> InstallPlan:
    """Check that everything needed to install *candidates* is there; nothing runs yet.

    :param platform: the conda platform the wheels were chosen for; it must be this machine's,
        where the target interpreter runs.
    :param require_hashes: see :attr:`InstallPlan.require_hashes`.
    :raises InstallError: there is no interpreter to install into, the wheels were chosen for
        another platform, or the requested installer is missing.
    """
    if python.executable is None:
        raise InstallError(
            f"no interpreter to install into (target is {python}): nothing was installed; "
            "pass --python PATH"
        )
    if platform is not None:
        host = host_subdir()
        if platform != host:
            raise InstallError(
                f"the wheels were chosen for {platform}, but {python.executable} runs on "
                f"{host}: install on a machine of that platform, or choose with --platform {host}"
            )
    uv = find_uv() if installer in (None, "uv") else None
    if installer is None:
        installer = "uv" if uv is not None else "pip"
    elif installer == "uv" and uv is None:
        raise InstallError("--installer uv: uv is not installed (pip install uv, or use pip)")
    return InstallPlan(
        installer, python, tuple(candidates), uv if installer == "uv" else None, require_hashes
    )
