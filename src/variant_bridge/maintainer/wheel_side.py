"""The wheel side of a release: its variants, their wheels' tags and their toolkit evidence.

From a wheels directory or an index URL (the readers ``select`` uses: find-links listing or a
simple index page, ``*-variants.json`` first, a wheel's own ``variant.json`` for labels it lacks,
core metadata by the cheapest way the index allows); from a ``*-variants.json`` alone (no tags,
no ``Requires-Dist``); or from a declaration (:mod:`.declarations`). Each variant's
``Requires-Dist`` are evaluated for that variant on the target (a platform and Python taken from
its wheels' tags, else the defaults given) and turned into toolkit evidence
(:func:`~variant_bridge.translate.evidence.toolkit_evidence`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from packaging.tags import parse_tag
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from variant_bridge.environment import Environment
from variant_bridge.errors import (
    IndexReadError,
    InvalidMetadata,
    InvalidWheelFilename,
    ReleaseInputError,
    quote,
)
from variant_bridge.filenames import WheelFilename
from variant_bridge.indexes import (
    Candidate,
    CoreMetadataReader,
    Downloads,
    FindLinks,
    IndexFile,
    SimpleIndex,
)
from variant_bridge.indexes.variant_files import complete_metadata, read_variants_files
from variant_bridge.maintainer._files import read_input
from variant_bridge.markers import VariantValues, evaluate_dependencies, target_environment
from variant_bridge.metadata import VariantMetadata
from variant_bridge.metadata.parse import read_variant_json
from variant_bridge.platform_tags import TargetPython, conda_platform
from variant_bridge.properties import VariantDescription
from variant_bridge.release import WheelSide, WheelVariant
from variant_bridge.translate.evidence import ToolkitEvidence, toolkit_evidence

__all__ = ["WheelTarget", "evidence_for", "read_variants_file", "read_wheels", "with_tags"]

_VARIANTS_SUFFIX = "-variants.json"


@dataclass(frozen=True, slots=True)
class WheelTarget:
    """Where ``Requires-Dist`` markers are evaluated when a wheel's tags do not say."""

    platform: str = "linux-64"
    python: str = "3.12"


def _target(files: Sequence[WheelFilename], default: WheelTarget) -> tuple[str, str]:
    platform, python = default.platform, default.python
    for wheel in files:
        for tag in wheel.tags:
            needs = conda_platform(tag.platform)
            if needs is not None and len(needs.subdirs) == 1:
                platform = needs.subdirs[0]
            if tag.interpreter.startswith("cp3") and tag.interpreter[3:].isdigit():
                python = f"3.{tag.interpreter[3:]}"
        return platform, python
    return platform, python


def evidence_for(
    description: VariantDescription,
    requires_dist: Sequence[str],
    files: Sequence[WheelFilename],
    default: WheelTarget,
) -> tuple[ToolkitEvidence, tuple[str, ...]]:
    """The toolkit evidence of one variant from its ``Requires-Dist``, and why it may be
    incomplete (lines that cannot be evaluated, names-table gaps)."""
    platform, python = _target(files, default)
    environment = target_environment(Environment(platform=platform), TargetPython.parse(python))
    evaluated = evaluate_dependencies(requires_dist, environment, VariantValues.of(description))
    found = toolkit_evidence(description, [d.requirement for d in evaluated.applying])
    return found, evaluated.problems + found.gaps


def read_variants_file(path: Path) -> tuple[VariantMetadata, str | None, str | None]:
    """A ``{name}-{version}-variants.json``: its metadata, project and version (from its name).

    :raises ReleaseInputError: unreadable; :raises InvalidMetadata: malformed.
    """
    data = read_input(path)
    meta = read_variant_json(data, source=str(path))
    name, _, version = path.name.removesuffix(_VARIANTS_SUFFIX).rpartition("-")
    return meta, (str(canonicalize_name(name)) if name else None), (version or None)


def with_tags(side: WheelSide, tags: Sequence[str]) -> WheelSide:
    """*side* with wheels of *tags* (``cp312-cp312-manylinux_2_28_x86_64``) for every variant:
    the tags the wheels are published with, when only their metadata was read.

    :raises ReleaseInputError: a malformed tag.
    """
    if not tags:
        return side
    name, version = side.project or "project", side.version or "0"
    variants = []
    for variant in side.variants:
        files = []
        for tag in tags:
            try:
                parse_tag(tag)
                py, abi, plat = tag.split("-")
                label = None if variant.is_null and variant.label != "null" else variant.label
                files.append(
                    WheelFilename(name.replace("-", "_"), version, None, py, abi, plat, label)
                )
            except ValueError:
                raise ReleaseInputError(
                    f"--wheel-tag {quote(tag)}: expected PYTHON-ABI-PLATFORM, e.g. "
                    "cp312-cp312-manylinux_2_28_x86_64"
                ) from None
        variants.append(WheelVariant(variant.description, variant.evidence, tuple(files)))
    return WheelSide(tuple(variants), side.sources, side.project, side.version, files_known=True)


# -- wheels in a directory or on an index ----------------------------------------------------


def _project_of(directory: Path) -> str:
    names = set()
    for path in directory.iterdir():
        try:
            if path.name.endswith(".whl"):
                names.add(str(WheelFilename.parse(path.name).project))
        except InvalidWheelFilename:
            continue
    if not names:
        raise ReleaseInputError(f"{directory!s}: no wheels in this directory")
    if len(names) > 1:
        raise ReleaseInputError(
            f"{directory!s}: wheels of several projects ({', '.join(sorted(names))}); "
            "name one with --project"
        )
    return names.pop()


def _by_version(files: Iterable[IndexFile], project: str) -> dict[Version, list[IndexFile]]:
    found: dict[Version, list[IndexFile]] = {}
    for file in files:
        name = file.filename
        try:
            if name.endswith(".whl"):
                wheel = WheelFilename.parse(name)
                if wheel.project != project:
                    continue  # a flat folder or page holds other projects too
                version = wheel.parsed_version
            elif name.endswith(_VARIANTS_SUFFIX):
                stem, _, text = name.removesuffix(_VARIANTS_SUFFIX).rpartition("-")
                if canonicalize_name(stem) != project:
                    continue
                version = Version(text)
            else:
                continue
        except (InvalidWheelFilename, InvalidVersion):
            continue
        found.setdefault(version, []).append(file)
    return found


def _choose(found: dict[Version, list[IndexFile]], version: str | None, where: str) -> Version:
    if version is not None:
        try:
            wanted = Version(version)
        except ValueError:  # InvalidVersion, or a number past int()'s 4300 digits
            raise ReleaseInputError(f"--version {quote(version)} is no version") from None
        if wanted not in found:
            raise ReleaseInputError(f"{where}: no wheels of version {version}")
        return wanted
    wheels = {v: [f for f in files if f.filename.endswith(".whl")] for v, files in found.items()}
    versions = sorted(v for v, files in wheels.items() if files)
    if len(versions) > 1:
        counts = ", ".join(f"{v} ({len(wheels[v])} wheels)" for v in versions)
        raise ReleaseInputError(
            f"{where}: wheels of different versions ({counts}); check one release: pass --version"
        )
    if not versions:
        raise ReleaseInputError(f"{where}: no wheels")
    return versions[0]


def _candidates(files: Iterable[IndexFile]) -> list[Candidate]:
    out = []
    for file in files:
        if not file.filename.endswith(".whl"):
            continue
        out.append(
            Candidate(
                WheelFilename.parse(file.filename), file.url, file.source, file.sha256,
                file.requires_python, size=file.size, core_metadata=file.core_metadata,
                core_metadata_sha256=file.core_metadata_sha256,
            )
        )  # fmt: skip
    return out


def read_wheels(
    location: str,
    *,
    project: str | None = None,
    version: str | None = None,
    default: WheelTarget | None = None,
    downloads: Downloads,
    download: bool = False,
) -> WheelSide:
    """The variants of one release from a wheels directory or a simple index URL.

    Every file is listed and read through the command's *downloads* (its transport, cache and
    ``--verbose``). Each variant's core metadata is read from one of its wheels by PEP 658 or
    range requests;
    with *download* a wheel is downloaded whole where the index offers neither, else it is left
    unopened (named in :attr:`WheelSide.unread`) and its toolkit comes from its properties and
    label.

    :raises ReleaseInputError: no wheels, several projects or versions, a variant wheel whose
        label no metadata describes.
    :raises IndexReadError, InvalidMetadata: a source or a metadata file cannot be read.
    """
    is_url = "://" in location and not location.startswith("file:")
    source: FindLinks | SimpleIndex
    if is_url:
        if project is None:
            raise ReleaseInputError(f"{location}: an index URL needs --project NAME")
        source = SimpleIndex.parse(location, option="--wheels")
    else:
        directory = Path(location.removeprefix("file://"))
        if not directory.is_dir():
            raise ReleaseInputError(f"{location}: no such wheels directory")
        project = project or _project_of(directory)
        source = FindLinks.parse(directory)
    project = str(canonicalize_name(project))
    listed = source.list_files(project, transport=downloads.transport)
    by_version = _by_version(listed or [], project)
    chosen = _choose(by_version, version, location)
    release = _Release(by_version[chosen], project, str(chosen), location, download)
    return release.read(default or WheelTarget(), downloads)


@dataclass(frozen=True, slots=True)
class _Release:
    """The files of one version of one project, and where they were listed."""

    files: list[IndexFile]
    project: str
    version: str
    location: str
    download: bool = False

    def read(self, default: WheelTarget, downloads: Downloads) -> WheelSide:
        return _read_release(self, default, downloads)


def _read_release(release: _Release, default: WheelTarget, downloads: Downloads) -> WheelSide:
    files, project, version, location = (
        release.files,
        release.project,
        release.version,
        release.location,
    )
    meta, where = read_variants_files(
        (f for f in files if f.filename.endswith(_VARIANTS_SUFFIX)), downloads.transport
    )
    candidates = [c for c in _candidates(files) if c.label is not None]
    meta, problems, _ = complete_metadata(candidates, meta, where, downloads)
    if problems:
        label, problem = next(iter(sorted(problems.items())))
        raise ReleaseInputError(f"{location}: variant {label!r}: {problem}")
    if meta is None:
        raise ReleaseInputError(f"{location}: no variant wheels of {project} {version}")
    reader = CoreMetadataReader(downloads, download_wheels=release.download)
    variants = []
    unread: list[str] = []
    for description in meta.variants:
        mine = [c for c in candidates if c.label == description.label]
        if not mine:
            continue  # described but not published here: the metadata covers more labels
        try:
            core = reader.read(mine[0])
        except (IndexReadError, InvalidMetadata) as e:
            raise ReleaseInputError(f"{mine[0].name}: {e}") from None
        wheels = tuple(c.filename for c in mine)
        if core is None:  # neither PEP 658 nor ranges, and no whole download allowed
            unread.append(mine[0].name)
            variants.append(WheelVariant(description, None, wheels))
            continue
        evidence, _ = evidence_for(description, core.requires_dist, wheels, default)
        variants.append(WheelVariant(description, evidence, wheels))
    unknown = sorted({c.label or "" for c in candidates} - {v.label for v in variants})
    if unknown:
        raise ReleaseInputError(f"{location}: no variant metadata for labels {unknown}")
    return WheelSide(
        tuple(variants), tuple(where) or (location,), project, version, True, tuple(unread)
    )
