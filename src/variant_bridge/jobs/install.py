"""The ``install`` use case: the wheels ``select`` chose for the whole tree, handed to uv or pip.

``select`` decides the files; :mod:`variant_bridge.install` installs candidates. This wires the
two over the command's :class:`~variant_bridge.jobs.context.Context`: what counts as installed
(the interpreter is asked for a real install; a dry run knows the prefix's only), a package
without a compatible wheel stops everything before anything is downloaded, a dependency kept as
installed needs no file, and every file comes through the context's one ``Downloads`` (a wheel
read to choose is the file installed).

Nothing changes silently (docs/semantics.md §6.1): an installed variant replaced by another
build of it (another label, or a CPU build) is a :class:`Replacement`, said before the install
runs (and by a dry run); the CUDA wheels that the replaced builds required and that nothing
requires any more are :class:`Leftovers`, listed with the command that removes them, and removed
only when asked (:func:`remove_leftovers`).
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Sequence

from packaging.utils import canonicalize_name

from variant_bridge._values import value
from variant_bridge.environment import PythonDistribution
from variant_bridge.errors import InstallError
from variant_bridge.install import Installer, InstallPlan, InstallResult, State, plan_install
from variant_bridge.jobs._choice import PackageChoice
from variant_bridge.jobs.context import Context
from variant_bridge.jobs.select import PackageRequest, select
from variant_bridge.platform_tags import TargetPython

__all__ = [
    "Leftovers",
    "PreparedInstall",
    "Replacement",
    "leftovers",
    "plan",
    "prepare_install",
    "remove_leftovers",
    "replacements",
    "run_install",
]


@value
class Replacement:
    """An installed variant that the install replaces by another build of it."""

    installed: PythonDistribution
    version: str
    """The version chosen (the same, unless the tree asks for another)."""
    label: str | None
    """The label chosen; ``None``: the non-variant wheel."""
    cpu: bool
    """The build chosen is a CPU build (the null variant, the plain wheel, no CUDA)."""

    @property
    def name(self) -> str:
        return self.installed.name

    def describe(self, *, dry_run: bool = False) -> str:
        """``torch: replaces the installed 2.9.0 cuda12.6 build by 2.9.0 null (a CPU build)``
        (``would replace`` for a dry run)."""
        dist = self.installed
        now = "the non-variant wheel" if self.label is None else self.label
        what = f"{now} (a CPU build)" if self.cpu else now
        verb = "would replace" if dry_run else "replaces"
        return (
            f"{dist.name}: {verb} the installed {dist.version} {dist.variant_label} build by "
            f"{self.version} {what}"
        )

    def __str__(self) -> str:
        return self.describe()


def replacements(
    choices: Sequence[PackageChoice], installed: Iterable[PythonDistribution], *, namespace: str
) -> tuple[Replacement, ...]:
    """The installed variants the chosen files replace by another build (*namespace*: the CUDA
    one, to tell a CPU build)."""
    have = {canonicalize_name(d.name): d for d in installed}
    found: list[Replacement] = []
    for choice in choices:
        selected = choice.selected
        dist = have.get(canonicalize_name(choice.files.project))
        if selected is None or dist is None or dist.variant_label is None:
            continue
        if selected.label == dist.variant_label:
            continue
        variant = selected.variant
        cpu = variant is None or namespace not in variant.namespaces
        found.append(Replacement(dist, choice.files.version, selected.label, cpu))
    return tuple(found)


@value
class Leftovers:
    """CUDA wheels the replaced builds required that nothing requires after the install."""

    wheels: tuple[PythonDistribution, ...]
    command: tuple[str, ...]
    """What removes them (the installer that installs, for the target interpreter)."""
    removed: bool = False

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(d.name for d in self.wheels)

    @property
    def shell(self) -> str:
        return shlex.join(self.command)


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
    before: tuple[PythonDistribution, ...] = ()
    """What it had installed as far as known (a dry run: the prefix's ``site-packages``)."""
    replacements: tuple[Replacement, ...] = ()
    """Installed variants the install replaces by another build, said before it runs."""


def prepare_install(
    requests: Sequence[PackageRequest],
    ctx: Context,
    *,
    deps: bool = True,
    installer: Installer | None = None,
    dry_run: bool = False,
    allow_mix: bool = False,
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
    before = tuple(state.distributions.values()) if state is not None else ctx.target.installed
    choices = select(
        requests,
        ctx,
        fetch_chosen=True,  # install needs the requirements: fetch what it installs anyway
        deps=deps,
        installed=state.distributions.values() if state is not None else None,
        allow_mix=allow_mix,
    )
    install_plan = plan(
        choices,
        python=python,
        installer=installer,
        platform=ctx.target.env.platform,
        require_hashes=ctx.fetch.require_hashes,
    )
    from variant_bridge.mappings import load_tables

    replaced = replacements(choices, before, namespace=load_tables().nvidia.namespace)
    return PreparedInstall(choices, install_plan, state, before, replaced)


def run_install(prepared: PreparedInstall, ctx: Context, *, dry_run: bool = False) -> InstallResult:
    """Install what :func:`prepare_install` planned, every file through the context's
    downloads (see :func:`variant_bridge.install.install`)."""
    from variant_bridge.install import install as run

    return run(prepared.plan, downloads=ctx.downloads, dry_run=dry_run, state=prepared.state)


def _after(prepared: PreparedInstall, result: InstallResult) -> list[PythonDistribution]:
    """What is installed after *result*: the interpreter's answer, or (a dry run) what was
    there with each chosen package as chosen."""
    if result.after is not None:
        return list(result.after.distributions.values())
    chosen = {
        canonicalize_name(c.files.project): PythonDistribution(
            c.files.project, c.files.version, c.selected.variant, c.requirements or ()
        )
        for c in prepared.choices
        if c.selected is not None
    }
    kept = [d for d in prepared.before if canonicalize_name(d.name) not in chosen]
    return [*kept, *chosen.values()]


def leftovers(
    prepared: PreparedInstall, result: InstallResult, ctx: Context, *, every: bool = False
) -> Leftovers:
    """The CUDA wheels that something required before the install and nothing requires after it
    (:func:`~variant_bridge.health.orphaned_wheels` of both states); for a dry run, those the
    real run would leave.

    :param every: every CUDA wheel nothing requires after the install, the leftovers of earlier
        replacements too (what ``--remove-leftovers`` removes).
    """
    from variant_bridge.health import orphaned_wheels
    from variant_bridge.markers import target_environment

    if not prepared.replacements and not every:
        return Leftovers((), ())
    environment = target_environment(ctx.target.env, ctx.target.python)
    orphans = orphaned_wheels(_after(prepared, result), environment)[0]
    already = set()
    if not every:
        already = {
            canonicalize_name(d.name) for d in orphaned_wheels(prepared.before, environment)[0]
        }
    new = tuple(d for d in orphans if canonicalize_name(d.name) not in already)
    if not new:
        return Leftovers((), ())
    return Leftovers(new, tuple(prepared.plan.uninstall_command([d.name for d in new])))


def remove_leftovers(
    prepared: PreparedInstall, found: Leftovers, result: InstallResult | None = None
) -> Leftovers:
    """Remove *found* with the installer that installed (``--remove-leftovers``).

    :param result: the install that ran before: a failure then says what it installed.
    :raises InstallError: the installer failed (saying what the install had changed, and what
        the removal changed).
    """
    from variant_bridge.install import uninstall

    if not found.wheels:
        return found
    before = result.after if result is not None else None
    try:
        command = uninstall(prepared.plan, found.names, before=before)
    except InstallError as e:
        if result is None or not result.installed:
            raise
        where = prepared.plan.python.executable
        raise InstallError(
            f"installed {', '.join(result.installed)} into {where}, then removing the "
            f"leftovers failed: {e}"
        ) from e
    return Leftovers(found.wheels, command, removed=True)
