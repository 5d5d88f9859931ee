"""The commands that fix a finding, for the place that was examined.

A prefix or an interpreter is fixed in place: wheels removed with the installer that put them
there (``uv pip uninstall --python PY`` when uv wrote their ``INSTALLER``, else
``PY -m pip uninstall -y``), builds re-selected with ``variant-bridge install PKG==VER --prefix P``
(or ``--python PY``) from the find-links directory each was installed from. A pixi.lock is fixed
through its manifest: ``pixi remove --pypi``, ``variant-bridge select ... --lockfile``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from packaging.utils import canonicalize_name

from variant_bridge.environment import PythonDistribution
from variant_bridge.health.model import Fix, FixKind, Place, PlaceKind

__all__ = ["reinstall_fix", "toolkit_fix", "uninstall_fix"]

_TOOL = "variant-bridge"


def uninstall_fix(place: Place, dists: Sequence[PythonDistribution]) -> Fix:
    """Remove *dists* (PyPI distributions) from *place*."""
    names = tuple(dict.fromkeys(d.name for d in dists))
    if place.kind is PlaceKind.LOCKFILE:
        note = "in the workspace of the lock; then pixi install"
        return Fix(FixKind.UNINSTALL, names, ("pixi", "remove", "--pypi", *names), note=note)
    python = place.python or place.path
    if any(d.installer == "uv" for d in dists):
        argv = ("uv", "pip", "uninstall", "--python", python, *names)
    else:
        argv = (python, "-m", "pip", "uninstall", "-y", *names)
    return Fix(FixKind.UNINSTALL, names, argv)


def _where(place: Place) -> tuple[str, ...]:
    if place.kind is PlaceKind.PREFIX:
        return ("--prefix", place.path)
    if place.kind is PlaceKind.INTERPRETER:
        return ("--python", place.path)
    environment = ("-e", place.environment) if place.environment else ()
    return ("--lockfile", place.path, *environment)


def reinstall_fix(
    place: Place,
    dists: Sequence[PythonDistribution],
    local_origins: Mapping[str, str],
) -> Fix:
    """Re-select *dists* at their installed versions, from where they were installed.

    :param local_origins: canonical name -> the local directory its recorded origin (PEP 610
        ``direct_url.json``, a ``file://`` URL) is in: passed as ``-f DIR``.
    """
    pins = tuple(dict.fromkeys(f"{d.name}=={d.version}" for d in dists))
    directories = [local_origins.get(canonicalize_name(d.name)) for d in dists]
    sources: list[str] = []
    for directory in dict.fromkeys(d for d in directories if d is not None):
        sources += ["-f", directory]
    remote = [d for d, directory in zip(dists, directories, strict=True) if directory is None]
    command = "select" if place.kind is PlaceKind.LOCKFILE else "install"
    argv = (_TOOL, command, *pins, *_where(place), *sources)
    note: str | None = None
    if remote:
        said = "; ".join(
            f"{d.name} {d.version} from {d.direct_url}" if d.direct_url else f"{d.name} {d.version}"
            for d in remote
        )
        note = f"add the --index-url or -f it came from: {said}"
    elif place.kind is PlaceKind.LOCKFILE:
        note = "shows the build that agrees; then pin it in the manifest and run pixi lock"
    return Fix(FixKind.REINSTALL, pins, argv, complete=not remote, note=note)


def toolkit_fix(place: Place, toolkit: str, package: str) -> Fix | None:
    """Make the conda side's toolkit (*package*, ``cuda-version``) *toolkit* instead (``None``
    for an interpreter: it has no conda side)."""
    spec = f"{package}={toolkit}"
    if place.kind is PlaceKind.PREFIX:
        return Fix(FixKind.SET_TOOLKIT, (spec,), ("conda", "install", "-p", place.path, spec))
    if place.kind is PlaceKind.LOCKFILE:
        note = "in the workspace of the lock"
        return Fix(FixKind.SET_TOOLKIT, (spec,), ("pixi", "add", spec), note=note)
    return None
