"""A pixi workspace found the way pixi finds it, its environments and what its manifest declares.

pixi runs an extension (``pixi variant ...`` runs ``pixi-variant ...``) with the remaining
arguments only: no manifest path, no environment, no ``PIXI_*`` variable outside ``pixi run`` /
``pixi shell``. So the extension finds the workspace itself, as pixi does
(``pixi_manifest::discovery``):

- ``--manifest-path`` (a manifest, or a folder holding one) wins; else ``$PIXI_PROJECT_MANIFEST``
  (set by ``pixi run`` and ``pixi shell``); else every folder from the working directory upwards:
  a ``pixi.toml`` with a ``[workspace]`` (or, before pixi 0.40, ``[project]``) table, else a
  ``pyproject.toml`` with ``[tool.pixi]``; a ``pixi.toml`` without one is a package's manifest
  and the search goes on above it;
- the environments are ``default`` and the keys of ``[environments]``, installed under
  ``.pixi/envs/<name>`` beside the manifest and locked in ``pixi.lock`` there;
- the manifest's declared machine (``[system-requirements]``, the rich platform's ``cuda``,
  ``glibc``) stands in for facts this machine does not have (a GPU-less CI runner), as pixi solves
  for the declared values.

Reads files only (tomlkit, and rattler for the lock's environment names, both lazily).
"""

from __future__ import annotations

import enum
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from variant_bridge.environment import Source, VirtualPackage
from variant_bridge.errors import DetectionError, NotRegularFileError, clip, quote
from variant_bridge.indexes.local import check_regular, read_text
from variant_bridge.virtual_packages import VERSION_SHAPES

__all__ = [
    "DEFAULT_ENVIRONMENT",
    "ENVIRONMENT_VARIABLE",
    "MANIFEST_VARIABLE",
    "PIXI_SOURCE",
    "Workspace",
    "WorkspaceEnvironment",
    "WorkspaceError",
    "WorkspaceProblem",
    "environment_name",
    "find_workspace",
]

DEFAULT_ENVIRONMENT = "default"
MANIFEST_VARIABLE = "PIXI_PROJECT_MANIFEST"
"""Set by ``pixi run`` / ``pixi shell`` to the workspace's manifest."""
ENVIRONMENT_VARIABLE = "PIXI_ENVIRONMENT_NAME"
"""Set by ``pixi run`` / ``pixi shell`` to the environment it runs in."""
PIXI_SOURCE = Source.supplied("pixi manifest")
"""Where a fact the manifest declares came from (``detect`` shows it)."""


class WorkspaceProblem(enum.Enum):
    """Why a workspace or one of its environments cannot be used."""

    NOT_FOUND = "no workspace"
    BAD_MANIFEST = "bad manifest"
    UNKNOWN_ENVIRONMENT = "unknown environment"
    NOT_INSTALLED = "not installed"
    NOT_LOCKED = "not locked"


class WorkspaceError(DetectionError):
    """A workspace that cannot be found or used; :attr:`kind` says why."""

    def __init__(self, kind: WorkspaceProblem, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True, slots=True)
class WorkspaceEnvironment:
    """One environment of a workspace: where pixi installs it and whether it is there."""

    workspace: Workspace
    name: str
    features: tuple[str, ...]
    """Its features as ``[environments]`` lists them (``default``: none)."""
    installed: bool

    @property
    def prefix(self) -> Path:
        return self.workspace.envs_dir / self.name

    @property
    def lockfile(self) -> Path:
        return self.workspace.lockfile

    def feature(self, wanted: str | None = None) -> str | None:
        """The feature whose tables an edit of this environment goes to: ``None`` (the
        top-level tables, pixi's default feature) for ``default``; *wanted* when it is one of
        the environment's features; else the feature named like the environment, or its only
        feature.

        :raises WorkspaceError: no single feature is the environment's own (name one).
        """
        if wanted is not None:
            if wanted == DEFAULT_ENVIRONMENT:
                return None
            if wanted in self.features:
                return wanted
            raise WorkspaceError(
                WorkspaceProblem.UNKNOWN_ENVIRONMENT,
                f"{self.workspace.manifest}: environment {self.name!r} has no feature "
                f"{quote(wanted)} (its features: {', '.join(self.features) or 'none'})",
            )
        if self.name == DEFAULT_ENVIRONMENT and not self.features:
            return None
        if self.name in self.features:
            return self.name
        if len(self.features) == 1:
            return self.features[0]
        raise WorkspaceError(
            WorkspaceProblem.UNKNOWN_ENVIRONMENT,
            f"{self.workspace.manifest}: environment {self.name!r} combines the features "
            f"{', '.join(self.features) or 'none'}; name the one to record the wheels in with "
            "--feature",
        )

    def declared(self, platform: str) -> tuple[VirtualPackage, ...]:
        """The machine the manifest declares for this environment on *platform*: the rich
        platform entry's ``cuda`` (driver and GPU) and ``glibc``, and ``[system-requirements]``
        (top level unless ``no-default-feature``, and this environment's features); the
        highest of each, as pixi solves for all of them."""
        found: dict[str, str] = {}
        data = self.workspace.data
        manifest = self.workspace.manifest
        tables: list[tuple[object, str]] = (
            [] if self.workspace.no_default_feature(self.name) else [(data, "")]
        )
        features = data.get("feature")
        if isinstance(features, Mapping):
            tables += [(features.get(f), f"feature.{f}.") for f in self.features]
        for table, prefix in tables:
            if isinstance(table, Mapping):
                where = f"{manifest}: [{prefix}system-requirements]"
                _system_requirements(table.get("system-requirements"), found, where)
        where = f"{manifest}: the platform entry {platform!r}"
        _rich_platform(self.workspace.platform_entry(platform), found, where)
        return tuple(
            VirtualPackage(name, version, "0", PIXI_SOURCE) for name, version in found.items()
        )


@dataclass(frozen=True, slots=True)
class Workspace:
    """A pixi workspace: its manifest (a ``pixi.toml``, or a ``pyproject.toml`` whose
    ``[tool.pixi]`` is read as :attr:`data`) and how it was found."""

    manifest: Path
    """Absolute."""
    data: Mapping[str, Any] = field(repr=False)
    """The pixi tables (a ``pyproject.toml``'s ``[tool.pixi]``)."""
    found_by: str = "search"
    """``--manifest-path``, ``$PIXI_PROJECT_MANIFEST``, or the search upwards."""

    @property
    def root(self) -> Path:
        return self.manifest.parent

    @property
    def lockfile(self) -> Path:
        return self.root / "pixi.lock"

    @property
    def envs_dir(self) -> Path:
        return self.root / ".pixi" / "envs"

    @property
    def manifest_environments(self) -> dict[str, tuple[str, ...]]:
        """``default`` and every ``[environments]`` entry, with its features."""
        found: dict[str, tuple[str, ...]] = {DEFAULT_ENVIRONMENT: ()}
        table = self.data.get("environments")
        for name, entry in table.items() if isinstance(table, Mapping) else ():
            features = entry.get("features") if isinstance(entry, Mapping) else entry
            found[str(name)] = tuple(str(f) for f in features or ()) if _is_list(features) else ()
        return found

    def no_default_feature(self, name: str) -> bool:
        table = self.data.get("environments")
        entry = table.get(name) if isinstance(table, Mapping) else None
        return isinstance(entry, Mapping) and entry.get("no-default-feature") is True

    def locked_environments(self) -> tuple[str, ...]:
        """The environments ``pixi.lock`` has (none without a lock).

        :raises DetectionError: the lock cannot be read.
        """
        if not _regular(self.lockfile):
            return ()
        from variant_bridge.detect.lockfile import check_lock

        check_lock(self.lockfile)
        import rattler

        try:
            lock = rattler.LockFile.from_path(self.lockfile)
            return tuple(sorted(name for name, _ in lock.environments()))
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as e:  # pyo3 panics derive from BaseException
            line = (str(e).strip().splitlines() or [type(e).__name__])[0]
            raise DetectionError(f"{self.lockfile}: not a readable lock file: {line}") from e

    def platform_entry(self, platform: str) -> Mapping[str, Any] | None:
        """The workspace's rich platform entry for *platform* (``None``: a plain subdir)."""
        for key in ("workspace", "project"):
            table = self.data.get(key)
            if not isinstance(table, Mapping):
                continue
            for entry in table.get("platforms") or ():
                if isinstance(entry, Mapping) and entry.get("platform") == platform:
                    return entry
        return None

    def environment(self, name: str | None = None) -> WorkspaceEnvironment:
        """The environment *name* (default ``default``): installed when ``.pixi/envs/<name>``
        has ``conda-meta``.

        :raises WorkspaceError: *name* is neither in the manifest nor in the lock (the message
            lists the known ones); it is not installed and not locked either.
        """
        wanted = name or DEFAULT_ENVIRONMENT
        declared = self.manifest_environments
        locked: tuple[str, ...] | None = None
        if wanted not in declared:
            locked = self.locked_environments()
            if wanted not in locked:
                known = ", ".join(sorted({*declared, *locked}))
                raise WorkspaceError(
                    WorkspaceProblem.UNKNOWN_ENVIRONMENT,
                    f"{self.manifest}: no environment {quote(wanted)} (known: {known}); "
                    "pass one with -e/--environment",
                )
        env = WorkspaceEnvironment(
            self, wanted, declared.get(wanted, ()), (self.envs_dir / wanted / "conda-meta").is_dir()
        )
        if env.installed:
            return env
        if locked is None:
            locked = self.locked_environments()
        if wanted not in locked:
            problem, what = (
                (WorkspaceProblem.NOT_LOCKED, f"{self.lockfile.name} does not lock it yet")
                if self.lockfile.is_file()
                else (WorkspaceProblem.NOT_INSTALLED, f"there is no {self.lockfile.name}")
            )
            raise WorkspaceError(
                problem,
                f"environment {wanted!r} of {self.manifest} is not installed "
                f"({_relative(env.prefix, self.root)} does not exist) and {what}: run "
                f"`pixi install{_e(wanted)}` first",
            )
        return env


def _e(name: str) -> str:
    return "" if name == DEFAULT_ENVIRONMENT else f" -e {name}"


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def _is_list(value: object) -> bool:
    return isinstance(value, (list, tuple))


def _version(value: object) -> str | None:
    text = str(value).strip() if isinstance(value, (str, int, float)) else ""
    return text or None


def _raise(found: dict[str, str], name: str, value: object, where: str) -> None:
    """Keep the highest declaration of *name* (pixi solves for all of them).

    :param where: the manifest and key, for the error.
    :raises WorkspaceError: the value is no version of *name*'s shape (``cuda = "abc"``, or a
        5,000-digit number): pixi refuses such a manifest too.
    """
    version = _version(value)
    if version is None:
        return
    shape = VERSION_SHAPES.get(name)
    if shape is not None and not shape.matches(version):
        raise WorkspaceError(
            WorkspaceProblem.BAD_MANIFEST,
            f"{where} declares {name} {quote(version)}: expected {shape.expected}",
        )
    current = found.get(name)
    if current is None or _key(version) > _key(current):
        found[name] = version


def _key(version: str) -> tuple[int, ...]:
    parts = []
    for part in version.split("."):
        parts.append(int(part) if part.isdigit() else -1)
    return tuple(parts)


def _system_requirements(table: object, found: dict[str, str], where: str) -> None:
    if not isinstance(table, Mapping):
        return
    _raise(found, "__cuda", table.get("cuda"), where)
    libc = table.get("libc")
    if isinstance(libc, Mapping):
        if str(libc.get("family", "glibc")).lower() == "glibc":
            _raise(found, "__glibc", libc.get("version"), where)
    else:
        _raise(found, "__glibc", libc, where)


def _rich_platform(entry: Mapping[str, Any] | None, found: dict[str, str], where: str) -> None:
    if entry is None:
        return
    cuda = entry.get("cuda")
    if isinstance(cuda, Mapping):
        _raise(found, "__cuda", cuda.get("driver"), where)
        _raise(found, "__cuda_arch", cuda.get("arch"), where)
    else:
        _raise(found, "__cuda", cuda, where)
    _raise(found, "__glibc", entry.get("glibc"), where)


# -- finding the workspace ------------------------------------------------------------------


def find_workspace(
    start: str | os.PathLike[str] | None = None,
    *,
    manifest_path: str | os.PathLike[str] | None = None,
    environ: Mapping[str, str] | None = None,
) -> Workspace:
    """The workspace pixi would use from *start* (default: the working directory).

    :param manifest_path: ``--manifest-path``: a manifest, or a folder with one.
    :param environ: where ``$PIXI_PROJECT_MANIFEST`` is read (default :data:`os.environ`).
    :raises WorkspaceError: none is found (one line naming where the search started), or the
        manifest named is missing or no pixi manifest.
    """
    variables = os.environ if environ is None else environ
    if manifest_path is not None:
        return _explicit(Path(manifest_path), "--manifest-path")
    if variables.get(MANIFEST_VARIABLE):
        return _explicit(Path(variables[MANIFEST_VARIABLE]), f"${MANIFEST_VARIABLE}")
    folder = Path(start if start is not None else os.getcwd()).absolute()
    for directory in (folder, *folder.parents):
        found = _in_folder(directory, search=True)
        if found is not None:
            return found
    raise WorkspaceError(
        WorkspaceProblem.NOT_FOUND,
        f"no pixi workspace in {clip(str(folder))} or any folder above it (no pixi.toml, nor "
        "pyproject.toml with [tool.pixi]); run inside a workspace or pass --manifest-path",
    )


def _explicit(path: Path, by: str) -> Workspace:
    path = path.absolute()
    if path.is_dir():
        found = _in_folder(path, search=False)
        if found is None:
            raise WorkspaceError(
                WorkspaceProblem.NOT_FOUND,
                f"{by} {clip(str(path))}: no pixi.toml, nor pyproject.toml with [tool.pixi], "
                "in that folder",
            )
        return Workspace(found.manifest, found.data, by)
    if not _regular(path):
        raise WorkspaceError(WorkspaceProblem.NOT_FOUND, f"{by} {clip(str(path))}: no such file")
    data = _pixi_tables(path)
    if data is None or not _is_workspace(data):
        raise WorkspaceError(
            WorkspaceProblem.BAD_MANIFEST,
            f"{by} {clip(str(path))}: not a pixi workspace manifest (expected a pixi.toml with "
            "[workspace], or a pyproject.toml with [tool.pixi])",
        )
    return Workspace(path, data, by)


def _in_folder(directory: Path, *, search: bool) -> Workspace | None:
    """The workspace whose manifest is in *directory*: its ``pixi.toml`` if there is one (a
    ``pixi.toml`` without a workspace is a package's manifest, and pixi then reads nothing
    else in that folder), else its ``pyproject.toml`` if that has ``[tool.pixi]``."""
    path = directory / "pixi.toml"
    if not _regular(path):
        path = directory / "pyproject.toml"
        if not _regular(path) or "[tool.pixi" not in _text(path):  # pixi's own cheap check
            return None
    data = _pixi_tables(path)
    if data is None or not _is_workspace(data):
        return None
    return Workspace(path, data, "search" if search else "--manifest-path")


def _is_workspace(data: Mapping[str, Any]) -> bool:
    if "workspace" in data or "project" in data:
        return True
    return "package" not in data  # [tool.pixi] of a pyproject.toml without a package section


MAX_MANIFEST = 64 * 1024 * 1024
"""The largest pixi manifest read (a real one is a few KB)."""


def _regular(path: Path) -> bool:
    """Whether the manifest or lock *path* is there (a regular file).

    :raises WorkspaceError: it is there but a FIFO, a device or a directory (reading it would
        block or never end).
    """
    try:
        check_regular(path)
    except NotRegularFileError as e:
        raise WorkspaceError(WorkspaceProblem.BAD_MANIFEST, str(e)) from e
    except OSError:
        return False  # missing (or unreadable: said when it is read)
    return True


def _text(path: Path) -> str:
    try:
        return read_text(path, max_bytes=MAX_MANIFEST)
    except (OSError, UnicodeDecodeError) as e:
        said = str(e) if isinstance(e, NotRegularFileError) else f"cannot read: {e}"
        raise WorkspaceError(WorkspaceProblem.BAD_MANIFEST, f"{clip(str(path))}: {said}") from e


def _pixi_tables(path: Path) -> Mapping[str, Any] | None:
    """The pixi tables of *path* (``None``: a pyproject.toml without ``[tool.pixi]``).

    :raises WorkspaceError: not TOML.
    """
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        data: Mapping[str, Any] = tomlkit.parse(_text(path)).unwrap()
    except (TOMLKitError, RecursionError, ValueError) as e:  # nesting, 5,000-digit numbers
        reason = "nested too deeply" if isinstance(e, RecursionError) else clip(str(e), limit=200)
        raise WorkspaceError(
            WorkspaceProblem.BAD_MANIFEST, f"{clip(str(path))}: not valid TOML ({reason})"
        ) from e
    if path.name != "pyproject.toml":
        return data
    tool = data.get("tool")
    pixi = tool.get("pixi") if isinstance(tool, Mapping) else None
    return pixi if isinstance(pixi, Mapping) else None


def environment_name(given: str | None, environ: Mapping[str, str] | None = None) -> str | None:
    """``-e``, else the environment ``pixi run``/``pixi shell`` runs in
    (``$PIXI_ENVIRONMENT_NAME``), else ``None`` (``default``)."""
    variables = os.environ if environ is None else environ
    return given or variables.get(ENVIRONMENT_VARIABLE) or None
