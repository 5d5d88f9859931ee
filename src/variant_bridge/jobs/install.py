"""The ``install`` use case: the wheels ``select`` chose for the whole tree, handed to uv or pip.

``select`` decides the files; :mod:`variant_bridge.install` installs candidates. This wires the
two over the command's :class:`~variant_bridge.jobs.context.Context`: what counts as installed
(the interpreter is asked for a real install; a dry run knows the prefix's only), a package
without a compatible wheel stops everything before anything is downloaded, a dependency kept as
installed needs no file, and every file comes through the context's one ``Downloads`` (a wheel
read to choose is the file installed).
"""

from __future__ import annotations

from collections.abc import Sequence

from variant_bridge._values import value
from variant_bridge.errors import InstallError
from variant_bridge.install import Installer, InstallPlan, InstallResult, State, plan_install
from variant_bridge.jobs._choice import PackageChoice
from variant_bridge.jobs.context import Context
from variant_bridge.jobs.select import PackageRequest, select
from variant_bridge.platform_tags import TargetPython

__all__ = ["PreparedInstall", "plan", "prepare_install", "run_install"]


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


@value
class PreparedInstall:
    """The tree chosen and the plan to install it, before anything is installed."""

    choices: tuple[PackageChoice, ...]
    plan: InstallPlan
    state: State | None = None
    """What the target interpreter had installed, when it was asked (not for a dry run)."""


def prepare_install(
    requests: Sequence[PackageRequest],
    ctx: Context,
    *,
    deps: bool = True,
    installer: Installer | None = None,
    dry_run: bool = False,
) -> PreparedInstall:
    """Choose the tree for the target interpreter and plan its install.

    A real install asks the interpreter what it has installed (a dependency there that
    satisfies the tree is kept); a dry run runs nothing and knows the prefix's only.

    :raises ConflictingOptions, SelectionError, IndexReadError: see
        :func:`~variant_bridge.jobs.select.select`; :raises InstallError: see :func:`plan`.
    """
    python = ctx.target.python
    state = None
    if not dry_run and python.executable is not None:
        from variant_bridge.install import read_state

        state = read_state(python.executable)
    choices = select(
        requests,
        ctx,
        fetch_chosen=True,  # install needs the requirements: fetch what it installs anyway
        deps=deps,
        installed=state.distributions.values() if state is not None else None,
    )
    install_plan = plan(
        choices,
        python=python,
        installer=installer,
        platform=ctx.target.env.platform,
        require_hashes=ctx.fetch.require_hashes,
    )
    return PreparedInstall(choices, install_plan, state)


def run_install(prepared: PreparedInstall, ctx: Context, *, dry_run: bool = False) -> InstallResult:
    """Install what :func:`prepare_install` planned, every file through the context's
    downloads (see :func:`variant_bridge.install.install`)."""
    from variant_bridge.install import install as run

    return run(prepared.plan, downloads=ctx.downloads, dry_run=dry_run, state=prepared.state)
