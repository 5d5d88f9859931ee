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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from packaging.requirements import InvalidRequirement, Requirement
from packaging.tags import Tag
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from variant_bridge._values import value
from variant_bridge.environment import Environment
from variant_bridge.errors import (
    IndexReadError,
    InvalidMetadata,
    InvalidTarget,
    InvalidWheelFilename,
    SelectionError,
)
from variant_bridge.filenames import WheelFilename
from variant_bridge.indexes import (
    Candidate,
    CoreMetadataReader,
    Downloads,
    IndexSource,
    PackageFiles,
    ProblemKind,
    find_files,
)
from variant_bridge.jobs.toolkits import VariantToolkit, read_toolkits, toolkit_judge
from variant_bridge.mappings import MappingTables, load_tables
from variant_bridge.markers import (
    Dependency,
    VariantValues,
    evaluate_dependencies,
    target_environment,
)
from variant_bridge.platform_tags import TargetPython, target_tags
from variant_bridge.properties import NULL_LABEL
from variant_bridge.ranking import Priorities, VariantRanker
from variant_bridge.translate import explain_unsupported
from variant_bridge.translate.evidence import toolkit_bound
from variant_bridge.translate.supported import SupportedProperties
from variant_bridge.wheel_selection import Selection, Verdict, select_wheel

__all__ = [
    "Duplicate",
    "PackageChoice",
    "PackageRequest",
    "Target",
    "VariantToolkit",
    "parse_request",
    "parse_requests",
    "select",
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
    toolkits: Mapping[str, VariantToolkit] = field(
        default_factory=lambda: MappingProxyType({}), hash=False
    )
    """Label -> CUDA toolkit evidence, for every variant the target's properties allow."""
    problems: tuple[str, ...] = ()
    """Why the chosen wheel's requirements could not all be read (lines, markers)."""

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


def _duplicates(
    dependencies: Sequence[Dependency], env: Environment, tables: MappingTables, required_by: str
) -> tuple[Duplicate, ...]:
    found: list[Duplicate] = []
    for dependency in dependencies:
        requirement = dependency.requirement
        line = dependency.text
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


@dataclass(frozen=True, slots=True)
class _Context:
    """What every requested package is chosen with, computed once per call."""

    target: Target
    tables: MappingTables
    tags: tuple[Tag, ...]
    python_version: Version
    markers: Mapping[str, str]
    reader: CoreMetadataReader
    downloads: Downloads
    fetch_chosen: bool

    @classmethod
    def of(cls, target: Target, downloads: Downloads, *, fetch_chosen: bool) -> _Context:
        try:
            python_version = Version(target.python.version)
        except InvalidVersion:
            raise InvalidTarget(
                f"invalid Python version {target.python.version!r}: expected e.g. '3.12' or "
                "'3.12.4'"
            ) from None
        tables = load_tables()
        return cls(
            target,
            tables,
            target_tags(target.python, target.env),
            python_version,
            target_environment(target.env, target.python, tables=tables),
            CoreMetadataReader(downloads),
            downloads,
            fetch_chosen,
        )


def _toolkits(files: PackageFiles, base: VariantRanker, ctx: _Context) -> dict[str, VariantToolkit]:
    """The toolkit evidence of every variant the target's properties allow."""
    if files.metadata is None:
        return {}
    allowed = [d for d in files.metadata.variants if base.assess(d).compatible]
    return read_toolkits(
        allowed,
        files.candidates,
        tags=ctx.tags,
        reader=ctx.reader,
        environment=ctx.markers,
        bound=toolkit_bound(ctx.target.supported, tables=ctx.tables),
        tables=ctx.tables,
    )


def _chosen_requirements(
    selected: Candidate, ctx: _Context
) -> tuple[tuple[str, ...] | None, tuple[Dependency, ...], tuple[str, ...]]:
    """The chosen wheel's ``Requires-Dist``, those that apply to it on the target, problems."""
    try:
        metadata = ctx.reader.read(selected, download=ctx.fetch_chosen)
    except (IndexReadError, InvalidMetadata) as e:
        return None, (), (f"cannot read the requirements of {selected.name}: {e}",)
    if metadata is None:
        return None, (), ()
    evaluated = evaluate_dependencies(
        metadata.requires_dist, ctx.markers, VariantValues.of(selected.variant)
    )
    problems = tuple(f"{selected.name}: {p}" for p in evaluated.problems)
    return metadata.requires_dist, evaluated.applying, problems


def _choose_one(
    request: PackageRequest, sources: Sequence[IndexSource], ctx: _Context
) -> PackageChoice:
    target = ctx.target
    files = find_files(
        request.requirement.name,
        sources,
        spec=request.requirement.specifier,
        python=ctx.python_version,
        downloads=ctx.downloads,
        tags=ctx.tags,
    )
    if not files.candidates:
        raise SelectionError(f"no wheels for {request.text} in {', '.join(files.sources)}")
    # The one place the caller's words for an unsupported property are wired in.
    explain = functools.partial(explain_unsupported, supported=target.supported, tables=ctx.tables)
    priorities = Priorities.of(files.metadata)
    toolkits = _toolkits(files, VariantRanker(target.supported, priorities, explain=explain), ctx)
    judge = toolkit_judge(toolkits, ctx.tables.nvidia.namespace)
    ranker = VariantRanker(target.supported, priorities, explain=explain, judge=judge)
    selection = select_wheel(files.candidates, ranker, ctx.tags)
    _refuse_damaged(files, selection.selected, ranker)
    requirements: tuple[str, ...] | None = None
    duplicates: tuple[Duplicate, ...] = ()
    problems: tuple[str, ...] = ()
    if selection.selected is not None:
        requirements, applying, problems = _chosen_requirements(selection.selected, ctx)
        duplicates = _duplicates(applying, target.env, ctx.tables, selection.selected.name)
    return PackageChoice(
        request.text, files, selection, duplicates, requirements,
        MappingProxyType(toolkits), problems,
    )  # fmt: skip


def select(
    requests: Sequence[PackageRequest],
    sources: Sequence[IndexSource],
    target: Target,
    downloads: Downloads,
    *,
    fetch_chosen: bool = False,
) -> tuple[PackageChoice, ...]:
    """Find and rank the wheels of every requested package for *target*.

    Each variant the target's properties allow is judged by its CUDA toolkit evidence too
    (semantics.md §8): one core metadata read per variant, PEP 658 when the index advertises it,
    else HTTP range requests; no wheel is downloaded to choose.

    :param sources: where to look, in order (at least one).
    :param downloads: where remote wheels land when their variant metadata or requirements must
        be read from them; ``install`` then finds them there.
    :param fetch_chosen: download a chosen remote wheel to read its requirements (for the
        duplicate check) when the index offers neither PEP 658 metadata nor range requests.
    :raises InvalidTarget: no source; :raises SelectionError: an unknown package or a damaged
        file that could be the best match; :raises IndexReadError: an unreachable source.
    """
    if not sources:
        raise InvalidTarget("no package source: pass --find-links DIR or --index-url URL")
    ctx = _Context.of(target, downloads, fetch_chosen=fetch_chosen)
    return tuple(_choose_one(request, sources, ctx) for request in requests)
