"""The ``select`` use case: the dependency tree of the requested packages, each package's wheel
chosen to agree with the environment.

It reads as the spec's steps over two abstractions (the shape of pypa/installer's ``install()``):
the index sources (:mod:`variant_bridge.indexes`) give each package's files and variant metadata;
the pure core ranks the variants (:mod:`variant_bridge.ranking`) and chooses a wheel
(:mod:`variant_bridge.wheel_selection`); the chosen wheel's ``Requires-Dist`` (variant markers
decided for it) are resolved the same way, the whole tree by :mod:`._tree` (resolvelib); then each
chosen wheel's requirements are compared with the prefix's conda CUDA libraries. Inputs arrive
checked (:func:`parse_requests`, the sources' own ``parse``); every download goes to the one
:class:`~variant_bridge.indexes.Downloads`. See docs/semantics.md §6.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import field, replace
from types import MappingProxyType

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.tags import Tag
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from variant_bridge._values import value
from variant_bridge.environment import Environment, PythonDistribution
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
    IndexStrategy,
    PackageFiles,
    Problem,
    ProblemKind,
)
from variant_bridge.indexes.members import MemberTooLarge
from variant_bridge.jobs._releases import Releases
from variant_bridge.jobs._tree import Need, resolve_tree
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
    "RequiredBy",
    "Target",
    "VariantToolkit",
    "parse_request",
    "parse_requests",
    "select",
]


_MAX_REASONS = 8
"""Files named in a one-line failure (the report lists every one)."""


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
class RequiredBy:
    """Why a package is in the tree: one requirement on it and who stated it."""

    requirement: str
    """As written: the request, or the dependent's ``Requires-Dist`` line (marker included)."""
    package: str | None = None
    """``name version`` of the dependent; ``None`` when requested on the command line."""

    def __str__(self) -> str:
        if self.package is None:
            return f"requested as {self.requirement}"
        return f"{self.package} requires {self.requirement}"


@value
class PackageChoice:
    """What was found and chosen for one package of the tree."""

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
    required_by: tuple[RequiredBy, ...] = ()
    """Every requirement on the package in the resolved tree (the request for a named one)."""
    extras: tuple[str, ...] = ()
    """The extras the tree asks of it."""
    installed: PythonDistribution | None = None
    """A dependency kept as installed (it satisfies every requirement on it): no file chosen."""

    @property
    def failed(self) -> bool:
        """No compatible wheel, and nothing installed to keep."""
        return self.selected is None and self.installed is None

    @property
    def requested(self) -> bool:
        """Named on the command line (else reached through dependencies)."""
        return any(r.package is None for r in self.required_by)

    @property
    def selected(self) -> Candidate | None:
        return self.selection.selected

    @property
    def chosen(self) -> Verdict[Candidate] | None:
        return self.selection.chosen

    def failure(self) -> str:
        """One line saying why nothing was chosen, listing every rejected file's reason."""
        reasons = [f"{v.filename}: {v.reason}" for v in self.selection.verdicts]
        reasons += [f"{s.filename}: skipped: {s.reason}" for s in self.files.skipped]
        shown = "; ".join(reasons[:_MAX_REASONS])
        more = f"; and {len(reasons) - _MAX_REASONS} more" if len(reasons) > _MAX_REASONS else ""
        return f"no compatible wheel for {self.request} {self.files.version}: {shown}{more}"


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


@value
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
    strategy: IndexStrategy

    @property
    def tag_set(self) -> frozenset[Tag]:
        return frozenset(self.tags)

    @classmethod
    def of(
        cls,
        target: Target,
        downloads: Downloads,
        *,
        fetch_chosen: bool,
        strategy: IndexStrategy = IndexStrategy.FIRST_INDEX,
    ) -> _Context:
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
            strategy,
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


_Read = tuple[tuple[str, ...] | None, tuple[Dependency, ...], tuple[str, ...]]


def _chosen_requirements(selected: Candidate, ctx: _Context) -> _Read:
    """The chosen wheel's ``Requires-Dist``, those that apply to it on the target, problems.

    :raises MemberTooLarge: its ``METADATA`` is refused for its size (the wheel with it).
    """
    try:
        metadata = ctx.reader.read(selected, download=ctx.fetch_chosen)
    except MemberTooLarge:
        raise
    except (IndexReadError, InvalidMetadata) as e:
        return None, (), (f"cannot read the requirements of {selected.name}: {e}",)
    if metadata is None:
        return None, (), ()
    evaluated = evaluate_dependencies(
        metadata.requires_dist, ctx.markers, VariantValues.of(selected.variant)
    )
    problems = tuple(f"{selected.name}: {p}" for p in evaluated.problems)
    return metadata.requires_dist, evaluated.applying, problems


def _choose_files(files: PackageFiles, ctx: _Context) -> PackageChoice:
    """The wheel of one project version chosen by the bridged rules, its requirements read."""
    target = ctx.target
    # The one place the caller's words for an unsupported property are wired in.
    explain = functools.partial(explain_unsupported, supported=target.supported, tables=ctx.tables)
    priorities = Priorities.of(files.metadata)
    toolkits = _toolkits(files, VariantRanker(target.supported, priorities, explain=explain), ctx)
    judge = toolkit_judge(toolkits, ctx.tables.nvidia.namespace)
    ranker = VariantRanker(target.supported, priorities, explain=explain, judge=judge)
    files, selection, (requirements, applying, problems) = _readable_choice(files, ranker, ctx)
    _refuse_damaged(files, selection.selected, ranker)
    duplicates: tuple[Duplicate, ...] = ()
    if selection.selected is not None:
        duplicates = _duplicates(applying, target.env, ctx.tables, selection.selected.name)
    return PackageChoice(
        files.project, files, selection, duplicates, requirements,
        MappingProxyType(toolkits), problems,
    )  # fmt: skip


def _readable_choice(
    files: PackageFiles, ranker: VariantRanker, ctx: _Context
) -> tuple[PackageFiles, Selection[Candidate], _Read]:
    """The best wheel whose metadata is not refused, and what it requires: a wheel whose
    ``METADATA`` is too large to read is no candidate (installing it would cost gigabytes); it
    is skipped with its reason and the next best is chosen."""
    while True:
        selection = select_wheel(files.candidates, ranker, ctx.tags)
        if selection.selected is None:
            return files, selection, (None, (), ())
        try:
            return files, selection, _chosen_requirements(selection.selected, ctx)
        except MemberTooLarge as e:
            problem = Problem(ProblemKind.METADATA_REFUSED, str(e))
            files = files.refusing(selection.selected, problem)
            if ctx.downloads.transport.log is not None:  # --verbose lists every refusal
                ctx.downloads.transport.log(f"  skipped {selection.selected.name}: {problem}")


def _kept_choice(dist: PythonDistribution) -> PackageChoice:
    """An installed dependency kept as it is: no file, its installed requirements."""
    project = canonicalize_name(dist.name)
    files = PackageFiles(project=project, version=dist.version, candidates=())
    return PackageChoice(
        project, files, Selection(None, ()), requirements=dist.requires, installed=dist
    )


def select(
    requests: Sequence[PackageRequest],
    sources: Sequence[IndexSource],
    target: Target,
    downloads: Downloads,
    *,
    fetch_chosen: bool = False,
    strategy: IndexStrategy = IndexStrategy.FIRST_INDEX,
    deps: bool = True,
    installed: Iterable[PythonDistribution] = (),
) -> tuple[PackageChoice, ...]:
    """Resolve the dependency tree of *requests* for *target*, choosing every package's wheel.

    Every package reached, requested or not, gets its wheel by the same bridged rules: the
    version (the highest that every requirement on it allows and the tree agrees with), then
    the variant. Each variant the target's properties allow is judged by its CUDA toolkit
    evidence too (semantics.md §8): one core metadata read per variant, PEP 658 when the index
    advertises it, else HTTP range requests; no wheel is downloaded to choose.

    :param sources: where to look, in order of precedence (at least one).
    :param downloads: where remote wheels land when their variant metadata or requirements must
        be read from them; ``install`` then finds them there.
    :param fetch_chosen: download a chosen remote wheel to read its requirements when the index
        offers neither PEP 658 metadata nor range requests (without it, the dependencies of such
        a wheel stay unknown: its :attr:`PackageChoice.requirements` is ``None``).
    :param strategy: which indexes are consulted for each project (uv's ``--index-strategy``).
    :param deps: resolve the dependencies too (``False``: the requested packages only).
    :param installed: what the target interpreter has installed: a dependency found there that
        satisfies every requirement on it is kept (see :mod:`._releases`).
    :returns: one choice per package of the tree: the requested ones first, in request order,
        then the others in the order the tree reaches them.
    :raises InvalidTarget: no source; :raises SelectionError: an unknown package, requirements
        that cannot all be met (each named with who stated it), or a damaged file that could be
        the best match; :raises IndexReadError: an unreachable source.
    """
    if not sources:
        raise InvalidTarget("no package source: pass --find-links DIR or --index-url URL")
    ctx = _Context.of(target, downloads, fetch_chosen=fetch_chosen, strategy=strategy)
    releases = Releases(
        sources,
        python=ctx.python_version,
        strategy=strategy,
        tags=ctx.tag_set,
        downloads=downloads,
        markers=ctx.markers,
        choose=functools.partial(_choose_files, ctx=ctx),
        keep=_kept_choice,
        requested=frozenset(_canonical(r) for r in requests),
        installed={canonicalize_name(d.name): d for d in installed},
    )
    tree = resolve_tree([Need.of(r.requirement, r.text) for r in requests], releases, follow=deps)
    choices: list[PackageChoice] = []
    for project, version in tree.versions.items():
        needs = tree.needs[project]
        spec = SpecifierSet()
        for need in needs:
            spec &= need.specifier
        choice = releases.choice(project, version, spec)
        named = next((r.text for r in requests if _canonical(r) == project), project)
        required_by = tuple(RequiredBy(n.text, n.parent) for n in needs)
        extras = tuple(sorted(tree.extras.get(project, ())))
        choices.append(replace(choice, request=named, required_by=required_by, extras=extras))
    return tuple(choices)


def _canonical(request: PackageRequest) -> str:
    return canonicalize_name(request.requirement.name)
