"""A pixi workspace's environment as what a command reads, and ``pixi variant add``.

:func:`open_environment` finds the workspace (:mod:`variant_bridge.detect.workspace`) and one of
its environments; :func:`workspace_spec` makes an
:class:`~variant_bridge.jobs.specs.EnvironmentSpec` read it: the installed ``.pixi/envs/<env>``
(its conda-meta and site-packages), else the environment as ``pixi.lock`` locks it (a note says
so), with the facts the manifest declares standing in for those this machine lacks. Every
command of the pixi extension runs on that spec, through the very jobs the CLI runs.

:func:`add` is ``pixi variant add``: the ``install`` job into the installed environment, then the
``export`` job's update of the manifest (the PyPI side it installed, the CUDA toolkit pin, the
indexes as extra indexes, the declared driver floor; every line of the user's kept), so that the
next ``pixi install`` installs the same files. ``pixi.lock`` is never edited: pixi re-locks from
the manifest.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from variant_bridge._values import value
from variant_bridge.detect.workspace import (
    DEFAULT_ENVIRONMENT,
    WorkspaceEnvironment,
    WorkspaceError,
    WorkspaceProblem,
    environment_name,
    find_workspace,
)
from variant_bridge.environment import VirtualPackage
from variant_bridge.errors import ExportError, VariantBridgeError
from variant_bridge.export.wheels_dir import DEFAULT_WHEELS_DIR
from variant_bridge.install import Installer, InstallResult
from variant_bridge.jobs.context import Context
from variant_bridge.jobs.export import ExportOutput, ExportRequest, ExportResult, run_export
from variant_bridge.jobs.install import (
    Leftovers,
    PreparedInstall,
    leftovers,
    prepare_install,
    run_install,
)
from variant_bridge.jobs.install import remove_leftovers as remove_leftovers_from
from variant_bridge.jobs.select import PackageRequest
from variant_bridge.jobs.specs import EnvironmentSpec
from variant_bridge.jobs.target import Target

__all__ = [
    "AddResult",
    "WorkspaceSpec",
    "add",
    "copies_dir",
    "lock_advice",
    "open_environment",
    "require_installed",
    "workspace_spec",
]


def open_environment(
    *,
    manifest_path: str | os.PathLike[str] | None = None,
    environment: str | None = None,
    cwd: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> WorkspaceEnvironment:
    """The workspace environment a command names: ``--manifest-path`` (else
    ``$PIXI_PROJECT_MANIFEST``, else the search upwards from *cwd*) and ``-e`` (else
    ``$PIXI_ENVIRONMENT_NAME`` under ``pixi run``, else ``default``).

    :raises WorkspaceError: no workspace, an unknown environment, one neither installed nor
        locked.
    """
    workspace = find_workspace(cwd, manifest_path=manifest_path, environ=environ)
    return workspace.environment(environment_name(environment, environ))


@value
class WorkspaceSpec:
    """What a command reads for a workspace environment, and what to tell the user first."""

    spec: EnvironmentSpec
    notes: tuple[str, ...] = ()


def workspace_spec(spec: EnvironmentSpec, env: WorkspaceEnvironment) -> WorkspaceSpec:
    """*spec* (as the command's options made it, without ``--prefix``/``--lockfile``) reading
    *env*: its installed prefix, else its lock (said in a note). The facts the manifest declares
    for the platform (its ``[system-requirements]``, its rich platform's ``cuda`` and ``glibc``)
    stand in for those this machine lacks (a GPU-less runner), as pixi solves for them; this
    machine's own facts, ``CONDA_OVERRIDE_*`` and ``--target`` still win.

    :raises DetectionError: this machine's virtual packages cannot be detected.
    """
    notes: list[str] = []
    if env.installed:
        spec = replace(spec, prefix=env.prefix, lockfile=None, environment=None)
    else:
        spec = replace(spec, prefix=None, lockfile=env.lockfile, environment=env.name)
        notes.append(
            f"environment {env.name!r} is not installed yet ({_shown(env.prefix, env)} does not "
            f"exist): read from {env.lockfile.name}; `pixi install{_flag(env.name)}` installs it"
        )
    supplied = _declared_over_machine(spec, env)
    if supplied is not None:
        spec = replace(spec, virtual_packages=supplied)
    return WorkspaceSpec(spec, tuple(notes))


def _declared_over_machine(
    spec: EnvironmentSpec, env: WorkspaceEnvironment
) -> tuple[VirtualPackage, ...] | None:
    """This machine's virtual packages completed by the manifest's declared ones, when the
    manifest declares one this machine lacks (``None``: nothing to add, detection as usual)."""
    from variant_bridge.detect.machine import detect_virtual_packages, host_platform

    if spec.strict or spec.virtual_packages is not None:
        return None
    platform = host_platform()
    if spec.platform not in (None, platform):
        return None
    declared = env.declared(platform)
    if not declared:
        return None
    machine = detect_virtual_packages()
    have = {vp.name for vp in machine}
    missing = [vp for vp in declared if vp.name not in have]
    return (*machine, *missing) if missing else None


def _flag(name: str) -> str:
    return "" if name == DEFAULT_ENVIRONMENT else f" -e {name}"


def _shown(path: Path, env: WorkspaceEnvironment) -> str:
    try:
        return str(path.relative_to(env.workspace.root))
    except ValueError:
        return str(path)


# -- pixi variant add ---------------------------------------------------------------------------


@value
class AddResult:
    """What ``pixi variant add`` did: the tree installed, and the manifest's update."""

    target: Target
    """What the tree was chosen for (the environment before the install)."""
    prepared: PreparedInstall
    installed: InstallResult
    recorded: ExportResult
    feature: str | None
    """The feature whose tables got the entries (``None``: the top level)."""
    leftovers: Leftovers = Leftovers((), ())
    """CUDA wheels the replaced builds required that nothing requires any more (removed with
    ``--remove-leftovers``: :attr:`Leftovers.removed`)."""


def add(
    requests: Sequence[PackageRequest],
    ctx: Context,
    env: WorkspaceEnvironment,
    spec: EnvironmentSpec,
    *,
    feature: str | None = None,
    deps: bool = True,
    installer: Installer | None = None,
    no_copy: bool = False,
    remove_leftovers: bool = False,
    producer: str = "pixi variant add",
) -> AddResult:
    """Install the tree chosen for *env* (the context's target) into it, then record the
    environment's PyPI side in the manifest (:func:`run_export`'s update, *feature*'s tables).

    :param spec: the spec the context's target was made from: read again after the install.
    :param feature: :meth:`WorkspaceEnvironment.feature` decided it (checked before anything
        is installed).
    :param no_copy: pin the variant files themselves (URL or path with sha256) instead of
        copies under ``variant-wheels/``.
    :param remove_leftovers: remove the CUDA wheels nothing requires after the install (as
        ``install --remove-leftovers``), before the manifest records the environment.
    :raises WorkspaceError: *env* is not installed (``pixi install`` first).
    :raises InstallError, SelectionError, ExportError: see the ``install`` and ``export`` jobs.
    """
    require_installed(env)
    from variant_bridge.export import read_manifest

    manifest = env.workspace.manifest
    read_manifest(manifest)  # a broken or read-only manifest fails before anything is installed
    output = ExportOutput(
        "pixi-toml",
        update=manifest,
        wheels_dir=None if no_copy else copies_dir(env),
        pin_filenames=no_copy,
        feature=feature,
    )
    prepared = prepare_install(requests, ctx, deps=deps, installer=installer)
    installed = run_install(prepared, ctx)
    left = leftovers(prepared, installed, ctx, every=remove_leftovers)
    if remove_leftovers:
        left = remove_leftovers_from(prepared, left, installed)
    # The environment as it is now (the wheels just installed), through the same downloads: a
    # wheel fetched to install is the file the export compares and copies.
    after = Context(ctx.sources, ctx.downloads, Target.of(spec), ctx.fetch)
    request = ExportRequest(toolkit_only=True, producer=producer)
    try:
        recorded = run_export(request, output, after)
    except VariantBridgeError as e:
        done = ", ".join(installed.installed) or "nothing new"
        raise ExportError(
            f"{e} (installed {done} into {_shown(env.prefix, env)}, but {manifest.name} was left "
            "as it was: once that is fixed, `pixi variant add` again records it and keeps what "
            "is installed)"
        ) from e
    return AddResult(ctx.target, prepared, installed, recorded, feature, left)


def require_installed(env: WorkspaceEnvironment) -> WorkspaceEnvironment:
    """*env*, which ``add`` installs into.

    :raises WorkspaceError: it is not installed (``pixi install`` first).
    """
    if not env.installed:
        raise WorkspaceError(
            WorkspaceProblem.NOT_INSTALLED,
            f"environment {env.name!r} is not installed yet ({_shown(env.prefix, env)} does not "
            f"exist): run `pixi install{_flag(env.name)}` first; `pixi variant add` installs "
            "into it",
        )
    return env


def copies_dir(env: WorkspaceEnvironment) -> Path:
    """Where the variant wheels' copies go: ``variant-wheels/`` beside the manifest (as
    ``export`` puts them), in a folder of its own for an environment other than ``default``
    (two environments may hold two variants of one release under the same plain name)."""
    base = env.workspace.root / DEFAULT_WHEELS_DIR
    return base if env.name == DEFAULT_ENVIRONMENT else base / env.name


def lock_advice(result: AddResult, env: WorkspaceEnvironment) -> str:
    """What to run so that ``pixi.lock`` records what the manifest now says (it was not edited)."""
    lock = env.workspace.lockfile.name
    if not result.recorded.changed:
        return f"{lock} was not changed; the manifest already records this environment"
    return (
        f"{lock} was not changed: run `pixi install{_flag(env.name)}` (or `pixi lock`) so that "
        f"it records the manifest's new entries; pixi re-locks at its next install or run anyway"
    )
