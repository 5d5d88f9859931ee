"""The ``install`` use case: the wheels ``select`` chose for the whole tree, handed to uv or pip.

``select`` decides the files; :mod:`variant_bridge.install` installs candidates. This wires the
two: a package without a compatible wheel stops everything before anything is downloaded, and a
dependency kept as installed needs no file.
"""

from __future__ import annotations

from collections.abc import Sequence

from variant_bridge.errors import InstallError
from variant_bridge.install import Installer, InstallPlan, plan_install
from variant_bridge.jobs.select import PackageChoice
from variant_bridge.platform_tags import TargetPython

__all__ = ["plan"]


def plan(
    choices: Sequence[PackageChoice],
    *,
    python: TargetPython,
    installer: Installer | None = None,
    platform: str | None = None,
    require_hashes: bool = True,
) -> InstallPlan:
    """The plan to install every chosen wheel (see :func:`~variant_bridge.install.plan_install`).

    :param require_hashes: see :attr:`~variant_bridge.install.InstallPlan.require_hashes`.
    :raises InstallError: a package has no compatible wheel (every rejection listed), or
        :func:`~variant_bridge.install.plan_install` refuses.
    """
    missing = [c for c in choices if c.failed]
    if missing:
        raise InstallError("; ".join(c.failure() for c in missing))
    candidates = [c.selected for c in choices if c.selected is not None]
    return plan_install(
        candidates,
        python=python,
        installer=installer,
        platform=platform,
        require_hashes=require_hashes,
    )
