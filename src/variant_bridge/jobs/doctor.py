"""The ``doctor`` use case: an environment's health, and the fixer that re-selects what disagrees.

:func:`examine_environment` reads what the pure check needs (a prefix's or lock's facts were
read by detection; ``--python`` reads that interpreter's ``site-packages``, headers only) and
runs :func:`variant_bridge.health.examine`. :func:`health_of` is the same for a snapshot already
read, with no process started (``detect`` shows it). :func:`fix` re-selects the disagreeing
wheels at their installed versions and installs them through the ``install`` job: every file
hash-checked, the installer resolving nothing (docs/semantics.md §6.1); the sources are the
caller's, :func:`origin_sources` gives those the installed wheels recorded.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from packaging.utils import canonicalize_name

from variant_bridge._values import value
from variant_bridge.environment import CudaPolicy, Environment, PythonDistribution, Source
from variant_bridge.errors import InvalidTarget
from variant_bridge.health import HealthReport, Place, PlaceKind, examine, marker_environment
from variant_bridge.platform_tags import TargetPython
from variant_bridge.translate.supported import SupportedProperties

if TYPE_CHECKING:
    from variant_bridge.indexes import Downloads, IndexSource
    from variant_bridge.install import Installer, InstallResult
    from variant_bridge.jobs.context import Sources
    from variant_bridge.jobs.select import PackageChoice

__all__ = [
    "Change",
    "Examined",
    "FixResult",
    "OriginSources",
    "examine_environment",
    "fix",
    "health_of",
    "local_origins",
    "origin_sources",
    "prefix_of",
]


@value
class Examined:
    """An environment as the check saw it, and what it found."""

    env: Environment
    """The snapshot examined (with ``--python``, that interpreter's distributions)."""
    supported: SupportedProperties
    report: HealthReport
    python: TargetPython | None = None
    """The interpreter fixes install into; ``None`` for a lock (nothing installed)."""


def _origin(dist: PythonDistribution) -> str | None:
    """The wheel a distribution came from: its PEP 610 URL, or a locked wheel's location."""
    if dist.direct_url is not None:
        return dist.direct_url
    location = dist.location
    return location if location is not None and location.endswith(".whl") else None


def _file_path(url: str) -> Path:
    """The path of a ``file://`` URL, as ``indexes.url_to_path`` reads it (importing the
    ``indexes`` package would cost ``detect`` ~20 ms for this)."""
    from urllib.parse import unquote, urlsplit

    if os.name == "nt":  # drive letters and UNC hosts: urllib knows them
        from urllib.request import url2pathname

        return Path(url2pathname(urlsplit(url).path))
    return Path(unquote(urlsplit(url).path))


def _local_directory(origin: str | None) -> str | None:
    """The directory of a local wheel (a ``file://`` URL or an absolute path), else ``None``."""
    if origin is None:
        return None
    if origin.startswith("file:"):
        return str(_file_path(origin).parent)
    path = Path(origin)
    return str(path.parent) if "://" not in origin and path.is_absolute() else None


def local_origins(dists: Iterable[PythonDistribution]) -> dict[str, str]:
    """Canonical name -> the directory of the local wheel each distribution came from (its PEP
    610 ``direct_url.json``, which ``install`` writes for every variant; a locked wheel's path)."""
    found: dict[str, str] = {}
    for dist in dists:
        directory = _local_directory(_origin(dist))
        if directory is not None:
            found[canonicalize_name(dist.name)] = directory
    return found


def _prefix_python(prefix: str, platform: str) -> str:
    """The prefix's interpreter; where conda puts it when there is none (uninstall commands
    name it either way)."""
    conventional = Path(prefix) / ("python.exe" if platform.startswith("win") else "bin/python")
    for candidate in (Path(prefix) / "bin" / "python", Path(prefix) / "python.exe"):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return str(conventional)


def _place(
    env: Environment, lockfile: str | os.PathLike[str] | None, environment: str | None
) -> Place | None:
    if env.prefix is not None:
        return Place(PlaceKind.PREFIX, env.prefix, _prefix_python(env.prefix, env.platform))
    if lockfile is not None:
        return Place(PlaceKind.LOCKFILE, str(lockfile), environment=environment)
    return None


def prefix_of(python: str) -> Path | None:
    """The conda prefix the interpreter *python* belongs to (``PREFIX/bin/python`` beside
    ``PREFIX/conda-meta/``), or ``None`` (a venv, a system Python)."""
    import shutil

    found = shutil.which(python) or python
    for root in (Path(found).parent.parent, Path(found).parent):  # bin/python; python.exe
        if (root / "conda-meta").is_dir():
            return root
    return None


def health_of(
    env: Environment,
    supported: SupportedProperties,
    *,
    lockfile: str | os.PathLike[str] | None = None,
    environment: str | None = None,
) -> HealthReport:
    """The health of a snapshot detection already read (a prefix's or lock's PyPI side): nothing
    is read again and no process starts, so ``detect`` can show it.

    :param lockfile: the pixi.lock *env* was read from (fix commands then address it).
    """
    place = _place(env, lockfile, environment)
    origins = local_origins(env.python_packages) if place is not None else {}
    return examine(env, supported, place, local_origins=origins)


def _with_interpreter(env: Environment, python: str) -> tuple[Environment, TargetPython]:
    """*env* with the PyPI side of the interpreter *python* (its ``site-packages``)."""
    from variant_bridge.detect.interpreter import resolve_target_python, site_packages
    from variant_bridge.detect.prefix import read_site_packages

    target = resolve_target_python(python, env)
    assert target.executable is not None  # a path or a name on PATH: resolved to a file
    notes: list[str] = []
    dists: dict[str, PythonDistribution] = {}
    for site in site_packages(target.executable):
        for dist in read_site_packages(site, notes=notes):
            dists.setdefault(canonicalize_name(dist.name), dist)  # the first wins, as imports do
    examined = replace(
        env,
        python_packages=tuple(sorted(dists.values(), key=lambda d: d.name.lower())),
        python=str(target.version),
        python_source=Source.DETECTED,
        notes=(*env.notes, *notes),
    )
    return examined, target


def examine_environment(
    env: Environment,
    *,
    policy: CudaPolicy | None = None,
    python: str | None = None,
    lockfile: str | os.PathLike[str] | None = None,
    environment: str | None = None,
) -> Examined:
    """Examine *env* (read by detection from a prefix or a lock), or the interpreter *python*
    beside it.

    :param python: an interpreter whose ``site-packages`` is examined (a venv: its conda side,
        if any, is *env*'s).
    :param lockfile: the pixi.lock *env* was read from.
    :raises InvalidTarget: nothing to examine (no prefix, lock or interpreter), or *python* is
        not a runnable interpreter.
    :raises DetectionError: a dist-info of the interpreter cannot be read.
    """
    from variant_bridge.translate import supported_properties

    if python is not None:
        env, target = _with_interpreter(env, python)
        assert target.executable is not None
        place: Place | None = Place(PlaceKind.INTERPRETER, target.executable, target.executable)
        interpreter: TargetPython | None = target
    else:
        place = _place(env, lockfile, environment)
        if place is None:
            raise InvalidTarget(
                "nothing to examine: pass --prefix, --lockfile or --python (or activate a conda "
                "environment)"
            )
        interpreter = None
        if place.kind is PlaceKind.PREFIX:
            from variant_bridge.detect.interpreter import resolve_target_python

            interpreter = resolve_target_python(None, env, prefix=env.prefix)
    supported = supported_properties(env, policy=policy)
    report = examine(env, supported, place, local_origins=local_origins(env.python_packages))
    return Examined(env, supported, report, interpreter)


@value
class OriginSources:
    """Where the packages to re-select were installed from, as package sources."""

    sources: tuple[IndexSource, ...]
    """A find-links source per local directory the recorded origins are in."""
    unknown: tuple[str, ...] = ()
    """``name version`` (``from URL`` when recorded) of those installed from elsewhere: an index
    the environment does not record; the caller must name it."""


def origin_sources(examined: Examined, packages: Iterable[str] | None = None) -> OriginSources:
    """The sources the wheels to re-select came from (default: every package of the report's
    re-install fixes), from their recorded origins."""
    from variant_bridge.indexes import FindLinks

    wanted = examined.report.reinstall() if packages is None else tuple(packages)
    by_name = {canonicalize_name(d.name): d for d in examined.env.python_packages}
    directories: list[str] = []
    unknown: list[str] = []
    for package in wanted:
        dist = by_name.get(canonicalize_name(package.partition("==")[0]))
        if dist is None:
            continue
        origin = _origin(dist)
        directory = _local_directory(origin)
        if directory is not None:
            directories.append(directory)
        else:
            where = f" from {origin}" if origin else ""
            unknown.append(f"{dist.name} {dist.version}{where}")
    sources = tuple(FindLinks.parse(d) for d in dict.fromkeys(directories))
    return OriginSources(sources, tuple(unknown))


@value
class Change:
    """One re-selected package: the build it had and the one it got."""

    name: str
    version: str
    before: str | None
    """The installed variant label (``None``: a non-variant wheel)."""
    after: str | None
    """The chosen label; ``None``: the non-variant wheel."""

    @property
    def changed(self) -> bool:
        return self.before != self.after


@value
class FixResult:
    """What :func:`fix` did."""

    requests: tuple[str, ...]
    """``name==version`` re-selected (empty: nothing disagreed)."""
    changes: tuple[Change, ...] = ()
    choices: tuple[PackageChoice, ...] = ()
    """The whole tree ``select`` chose for the requests."""
    result: InstallResult | None = None
    leftovers: tuple[PythonDistribution, ...] = ()
    """CUDA wheels nothing requires after the install (what the replaced builds needed)."""


def _changes(
    requests: Sequence[str], choices: Sequence[PackageChoice], env: Environment
) -> tuple[Change, ...]:
    installed = {canonicalize_name(d.name): d for d in env.python_packages}
    chosen = {canonicalize_name(c.files.project): c for c in choices}
    changes = []
    for request in requests:
        name = canonicalize_name(request.partition("==")[0])
        dist, choice = installed.get(name), chosen.get(name)
        if dist is None or choice is None or choice.selected is None:
            continue
        changes.append(Change(dist.name, dist.version, dist.variant_label, choice.selected.label))
    return tuple(changes)


def fix(
    examined: Examined,
    sources: Sources | Sequence[IndexSource],
    downloads: Downloads,
    *,
    installer: Installer | None = None,
    require_hashes: bool = True,
    dry_run: bool = False,
) -> FixResult:
    """Re-select every package the report's fixes re-install (``name==version``: the build
    changes, never the version) for the environment examined, and install the tree ``select``
    chooses, exactly as ``install`` does: each file hash-checked before anything is installed.

    :param sources: where to look (e.g. :func:`origin_sources` plus the index the user names),
        in uv's order; a plain sequence is consulted with the ``first-index`` strategy.
    :param dry_run: fetch and check the files, install nothing.
    :raises InstallError: there is no interpreter (a lock), a package has no compatible wheel, a
        hash mismatch, or the installer failed; :raises InvalidTarget: no source;
        :raises SelectionError: an unknown package or a conflict; :raises IndexReadError: an
        unreachable source.
    """
    from variant_bridge.errors import InstallError
    from variant_bridge.install import install, read_state
    from variant_bridge.jobs.context import Context, Sources
    from variant_bridge.jobs.install import plan
    from variant_bridge.jobs.select import parse_requests, select
    from variant_bridge.jobs.specs import FetchSpec
    from variant_bridge.jobs.target import Target

    requests = examined.report.reinstall()
    if not requests:
        return FixResult(())
    python = examined.python
    if python is None:
        raise InstallError(
            f"{examined.env.origin}: no interpreter to reinstall into; install the environment "
            "first (pixi install), then examine its prefix"
        )
    if python.executable is None:  # never the running interpreter instead
        raise InstallError(
            f"{examined.env.origin}: no interpreter to reinstall into ({python}); nothing was "
            "installed"
        )
    target = Target(examined.env, python, examined.supported)
    state = None if dry_run else read_state(python.executable)
    installed = state.distributions.values() if state is not None else examined.env.python_packages
    if not isinstance(sources, Sources):
        sources = Sources(tuple(sources))
    ctx = Context(sources, downloads, target, FetchSpec(require_hashes=require_hashes))
    choices = select(parse_requests(requests), ctx, fetch_chosen=True, installed=installed)
    install_plan = plan(
        choices,
        python=python,
        installer=installer,
        platform=examined.env.platform,
        require_hashes=require_hashes,
    )
    result = install(install_plan, downloads=downloads, dry_run=dry_run, state=state)
    leftovers: tuple[PythonDistribution, ...] = ()
    if not dry_run:
        from variant_bridge.health import orphaned_wheels

        after = read_state(python.executable).distributions.values()
        leftovers, _ = orphaned_wheels(after, marker_environment(examined.env))
    changes = _changes(requests, choices, examined.env)
    return FixResult(requests, changes, tuple(choices), result, leftovers)
