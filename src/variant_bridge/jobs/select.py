"""The ``select`` use case: for each requested package, the wheel that agrees with the environment.

It reads as the spec's steps over two abstractions (the shape of pypa/installer's ``install()``):
the index sources (:mod:`variant_bridge.indexes`) give each package's files and variant metadata;
the pure core ranks the variants (:mod:`variant_bridge.ranking`) and chooses a wheel
(:mod:`variant_bridge.wheel_selection`); then the chosen wheel's requirements are compared with
the prefix's conda CUDA libraries. Inputs arrive checked (:func:`parse_requests`, the sources'
own ``parse``); every download goes to the one :class:`~variant_bridge.indexes.Downloads`.
See docs/semantics.md §6.
"""

from __future__ import annotations

import functools
import zipfile
from collections.abc import Iterable, Sequence
from email.parser import HeaderParser
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from variant_bridge._values import value
from variant_bridge.environment import Environment
from variant_bridge.errors import InvalidTarget, InvalidWheelFilename, SelectionError
from variant_bridge.filenames import WheelFilename
from variant_bridge.indexes import (
    Candidate,
    Downloads,
    IndexSource,
    PackageFiles,
    ProblemKind,
    find_files,
    url_to_path,
)
from variant_bridge.indexes.download import fetch
from variant_bridge.mappings import MappingTables, load_tables
from variant_bridge.platform_tags import TargetPython, target_tags
from variant_bridge.properties import NULL_LABEL
from variant_bridge.ranking import Priorities, VariantRanker
from variant_bridge.translate import explain_unsupported
from variant_bridge.translate.supported import SupportedProperties
from variant_bridge.wheel_selection import Selection, Verdict, select_wheel

__all__ = [
    "Duplicate",
    "PackageChoice",
    "PackageRequest",
    "Target",
    "parse_request",
    "parse_requests",
    "select",
    "wheel_requirements",
]


@value
class Target:
    """What the wheels are chosen for: the environment, its interpreter and what it supports."""

    env: Environment
    python: TargetPython
    supported: SupportedProperties
    """Computed once from :attr:`env` (its ``policy`` is the CUDA policy decided then)."""


@value
class PackageRequest:
    """One requested package, as typed and as parsed."""

    text: str
    requirement: Requirement


@value
class Duplicate:
    """A ``Requires-Dist`` of the chosen wheel whose library the conda prefix already has."""

    requirement: str
    """The requirement as the wheel states it, e.g. ``nvidia-cublas-cu12==12.6.4.1``."""
    pypi: str
    conda: str
    conda_version: str
    required_by: str

    @property
    def message(self) -> str:
        return (
            f"{self.required_by} requires {self.requirement} (PyPI), but the environment already "
            f"has {self.conda} {self.conda_version} (conda): the same CUDA library would load "
            "twice"
        )


@value
class PackageChoice:
    """What was found and chosen for one requested package."""

    request: str
    files: PackageFiles
    selection: Selection[Candidate]
    duplicates: tuple[Duplicate, ...] = ()
    requirements: tuple[str, ...] | None = None
    """The chosen wheel's ``Requires-Dist`` (``None`` when it could not be read cheaply)."""

    @property
    def selected(self) -> Candidate | None:
        return self.selection.selected

    @property
    def chosen(self) -> Verdict[Candidate] | None:
        return self.selection.chosen

    def failure(self) -> str:
        """One line saying why nothing was chosen, listing every rejected file's reason."""
        reasons = "; ".join(f"{v.filename}: {v.reason}" for v in self.selection.verdicts)
        return f"no compatible wheel for {self.request} {self.files.version}: {reasons}"


def parse_request(text: str) -> Requirement:
    """``torch``, ``torch==2.9.0`` or ``torch>=2.8``; markers and URLs are refused.

    :raises InvalidTarget: naming the request and the expected form.
    """
    try:
        requirement = Requirement(text)
    except InvalidRequirement as e:
        raise InvalidTarget(
            f"invalid package request {text!r}: expected NAME or NAME==VERSION"
        ) from e
    if requirement.url or requirement.marker:
        raise InvalidTarget(
            f"invalid package request {text!r}: URLs and markers are not supported; use "
            "--find-links or --index-url"
        )
    if requirement.extras:
        raise InvalidTarget(
            f"invalid package request {text!r}: extras are not supported; request the package, "
            "then the extra's requirements by name"
        )
    return requirement


def parse_requests(texts: Iterable[str]) -> tuple[PackageRequest, ...]:
    """Each request parsed once; a project may be requested once.

    :raises InvalidTarget: a malformed request, or a project named twice.
    """
    requests = tuple(PackageRequest(text, parse_request(text)) for text in texts)
    seen: set[str] = set()
    for request in requests:
        name = canonicalize_name(request.requirement.name)
        if name in seen:
            raise InvalidTarget(f"{request.requirement.name!r} is requested more than once")
        seen.add(name)
    return requests


def _refuse_damaged(files: PackageFiles, selected: Candidate | None, ranker: VariantRanker) -> None:
    """Refuse to choose around a damaged file of the chosen version that could have won.

    A corrupt file that could never beat the selection (a plain wheel when a variant was chosen,
    a variant the environment does not support) stays a ``skipped`` entry; one that might be the
    best match is an error, since choosing around it would install something worse silently.
    """
    chosen_label = selected.label if selected is not None else None
    variants = {d.label: d for d in files.metadata.variants} if files.metadata else {}
    for skipped in files.skipped:
        if skipped.problem.kind is not ProblemKind.UNREADABLE_WHEEL:
            continue
        try:
            wheel = WheelFilename.parse(skipped.filename)
        except InvalidWheelFilename:
            continue
        if wheel.version != files.version:
            continue
        if wheel.label is None:  # non-variant wheels rank after every variant wheel
            harmless = chosen_label is not None
        elif wheel.label == NULL_LABEL:  # the null variant ranks after compatible variants
            harmless = chosen_label not in (None, NULL_LABEL)
        else:
            description = variants.get(wheel.label)
            harmless = description is None or not ranker.assess(description).compatible
        if not harmless:
            raise SelectionError(
                f"{skipped.filename} in {', '.join(files.sources)}: {skipped.reason}; replace or "
                "remove it (it may be the best match for this environment)"
            )


def _metadata_text(path: Path) -> str | None:
    try:
        with zipfile.ZipFile(path) as zf:
            name = next(
                (
                    n
                    for n in zf.namelist()
                    if n.count("/") == 1 and n.endswith(".dist-info/METADATA")
                ),
                None,
            )
            return zf.read(name).decode("utf-8", "replace") if name is not None else None
    except (OSError, zipfile.BadZipFile):
        return None


def wheel_requirements(
    candidate: Candidate, downloads: Downloads, *, fetch_wheel: bool = False
) -> tuple[str, ...] | None:
    """``Requires-Dist`` of a wheel: from its local file, a copy this command already
    downloaded, or a PEP 658 ``.metadata`` file.

    :param fetch_wheel: download the wheel (hash-checked, into *downloads*) when nothing cheaper
        has its requirements; ``install`` asks for this, since it needs the file anyway.
    :returns: ``None`` when the requirements cannot be read that way.
    """
    local = (
        url_to_path(candidate.url)
        if candidate.url.startswith("file:")
        else downloads.fetched(candidate)
    )
    text: str | None = None
    if local is not None:
        text = _metadata_text(local)
    else:
        response = fetch(candidate.url + ".metadata", not_found_ok=True)
        if response is not None:
            text = response.body.decode("utf-8", "replace")
        elif fetch_wheel:
            text = _metadata_text(downloads.get(candidate))
    if text is None:
        return None
    return tuple(HeaderParser().parsestr(text).get_all("Requires-Dist") or ())


def _duplicates(
    requirements: Sequence[str], env: Environment, tables: MappingTables, required_by: str
) -> tuple[Duplicate, ...]:
    found: list[Duplicate] = []
    for line in requirements:
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            continue
        if requirement.marker is not None and "extra" in str(requirement.marker):
            continue
        mapping = tables.names.conda_for_pypi(requirement.name)
        if mapping is None or mapping.kind != "cuda-library":
            continue
        for conda_name in (mapping.conda, *mapping.also_conda):
            record = env.conda_package(conda_name)
            if record is not None:
                stated = line.split(";")[0].strip()
                pypi = canonicalize_name(requirement.name)
                found.append(Duplicate(stated, pypi, conda_name, record.version, required_by))
                break
    return tuple(found)


def select(
    requests: Sequence[PackageRequest],
    sources: Sequence[IndexSource],
    target: Target,
    downloads: Downloads,
    *,
    fetch_chosen: bool = False,
) -> tuple[PackageChoice, ...]:
    """Find and rank the wheels of every requested package for *target*.

    :param sources: where to look, in order (at least one).
    :param downloads: where remote wheels land when their variant metadata or requirements must
        be read from them; ``install`` then finds them there.
    :param fetch_chosen: download a chosen remote wheel to read its requirements (for the
        duplicate check) when the index has no PEP 658 metadata.
    :raises InvalidTarget: no source; :raises SelectionError: an unknown package or a damaged
        file that could be the best match; :raises IndexReadError: an unreachable source.
    """
    if not sources:
        raise InvalidTarget("no package source: pass --find-links DIR or --index-url URL")
    env, python = target.env, target.python
    tables = load_tables()
    # The one place the caller's words for an unsupported property are wired in.
    explain = functools.partial(explain_unsupported, supported=target.supported, tables=tables)
    tags = target_tags(python, env)
    try:
        python_version = Version(python.version)
    except InvalidVersion:
        raise InvalidTarget(
            f"invalid Python version {python.version!r}: expected e.g. '3.12' or '3.12.4'"
        ) from None
    choices: list[PackageChoice] = []
    for request in requests:
        files = find_files(
            request.requirement.name,
            sources,
            spec=request.requirement.specifier,
            python=python_version,
            downloads=downloads,
            tags=tags,
        )
        if not files.candidates:
            raise SelectionError(f"no wheels for {request.text} in {', '.join(files.sources)}")
        ranker = VariantRanker(target.supported, Priorities.of(files.metadata), explain=explain)
        selection = select_wheel(files.candidates, ranker, tags)
        _refuse_damaged(files, selection.selected, ranker)
        requirements: tuple[str, ...] | None = None
        duplicates: tuple[Duplicate, ...] = ()
        if selection.selected is not None:
            requirements = wheel_requirements(
                selection.selected, downloads, fetch_wheel=fetch_chosen
            )
            if requirements:
                duplicates = _duplicates(requirements, env, tables, selection.selected.name)
        choices.append(PackageChoice(request.text, files, selection, duplicates, requirements))
    return tuple(choices)
