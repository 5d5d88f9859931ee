"""One release's wheel chosen by the bridged rules: :class:`PackageChoice`, :func:`choose_files`.

Given one project version's files (:class:`~variant_bridge.indexes.PackageFiles`), the variants
the target's properties allow are judged by their CUDA toolkit evidence too (one core metadata
read per variant; :mod:`.toolkits`), ranked (:mod:`variant_bridge.ranking`) and a wheel chosen
(:mod:`variant_bridge.wheel_selection`); the chosen wheel's ``Requires-Dist`` (variant markers
decided for it) are read and compared with the prefix's conda CUDA libraries. :class:`Choosing`
is what every choice of one command shares, computed once. :mod:`._releases` asks here, and
``select`` reads the results; nothing here calls back into either (docs/semantics.md §6).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import field
from types import MappingProxyType

from packaging.tags import Tag
from packaging.utils import canonicalize_name
from packaging.version import Version

from variant_bridge._values import value
from variant_bridge.environment import Environment, PythonDistribution
from variant_bridge.errors import (
    IndexReadError,
    InvalidMetadata,
    InvalidWheelFilename,
    SelectionError,
)
from variant_bridge.filenames import WheelFilename
from variant_bridge.health.pairs import conda_copy
from variant_bridge.indexes import (
    Candidate,
    CoreMetadataReader,
    Downloads,
    PackageFiles,
    Problem,
    ProblemKind,
)
from variant_bridge.indexes.members import MemberTooLarge
from variant_bridge.jobs._follow import Follow, Option, is_cuda
from variant_bridge.jobs.target import Target
from variant_bridge.jobs.toolkits import VariantToolkit, read_toolkits, toolkit_judge
from variant_bridge.mappings import MappingTables, load_tables
from variant_bridge.markers import (
    Dependency,
    VariantValues,
    evaluate_dependencies,
    target_environment,
)
from variant_bridge.platform_tags import target_tags
from variant_bridge.properties import NULL_LABEL, VariantDescription
from variant_bridge.ranking import Judge, Judgement, Priorities, VariantRanker
from variant_bridge.translate import explain_unsupported
from variant_bridge.translate.evidence import toolkit_bound, toolkit_evidence, wheel_toolkit
from variant_bridge.translate.gpus import CudaBuild, cuda_fallback
from variant_bridge.wheel_selection import Selection, Verdict, select_wheel

__all__ = [
    "Choosing",
    "Duplicate",
    "PackageChoice",
    "RequiredBy",
    "choose_files",
    "cpu_fallback",
    "kept_choice",
]

_MAX_REASONS = 8
"""Files named in a one-line failure (the report lists every one)."""


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
    follows: Follow | None = None
    """The toolkit its stack shares, when it was chosen for it (semantics.md §6.6)."""
    mixed: str | None = None
    """Why its stack shares no CUDA toolkit, when the mix was allowed (said on one member)."""

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


@value
class Choosing:
    """What every package of one command is chosen with, computed once (:meth:`of`)."""

    target: Target
    tables: MappingTables
    tags: tuple[Tag, ...]
    markers: Mapping[str, str]
    """The target's PEP 508 marker values."""
    reader: CoreMetadataReader
    downloads: Downloads
    fetch_chosen: bool
    """Download a chosen wheel to read its requirements when nothing cheaper can (see
    :func:`~variant_bridge.jobs.select.select`)."""

    @property
    def python(self) -> Version:
        return self.target.python.version

    @property
    def tag_set(self) -> frozenset[Tag]:
        return frozenset(self.tags)

    @classmethod
    def of(cls, target: Target, downloads: Downloads, *, fetch_chosen: bool) -> Choosing:
        tables = load_tables()
        return cls(
            target,
            tables,
            target_tags(target.python, target.env),
            target_environment(target.env, target.python, tables=tables),
            CoreMetadataReader(downloads),
            downloads,
            fetch_chosen,
        )


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
        pair = conda_copy(requirement.name, env, tables)  # the health check's lookup too
        if pair is not None:
            record = pair[1]
            stated = dependency.text.split(";")[0].strip()
            pypi = canonicalize_name(requirement.name)
            found.append(Duplicate(stated, pypi, record.name, record.version, required_by))
    return tuple(found)


def _toolkits(files: PackageFiles, base: VariantRanker, ctx: Choosing) -> dict[str, VariantToolkit]:
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


def _chosen_requirements(selected: Candidate, ctx: Choosing) -> _Read:
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


def _stack_judge(
    judge: Judge, follow: Follow, toolkits: Mapping[str, VariantToolkit], tables: MappingTables
) -> Judge:
    """*judge*, then the stack's toolkit: a build of another toolkit is refused (one stack, one
    toolkit); the one taken says whom it follows. Only ever asked with a toolkit that some
    compatible build of the package matches (:func:`._stack.plan_stacks`)."""
    namespace = tables.nvidia.namespace

    def judged(description: VariantDescription) -> Judgement | None:
        first = judge(description)
        if first is not None and not first.compatible:
            return first
        read = toolkits.get(description.label)
        said = read.toolkit if read is not None else wheel_toolkit(description, tables=tables)
        cuda = is_cuda(description, namespace) or said is not None
        option = Option(description.label, said if cuda else None, cuda)
        if not option.agrees(follow.toolkit):
            return Judgement(follow.refusal(option), compatible=False)
        reason = follow.reason() if first is None else f"{first.reason}; {follow.reason()}"
        return Judgement(reason)

    return judged


def choose_files(
    files: PackageFiles, ctx: Choosing, *, follow: Follow | None = None
) -> PackageChoice:
    """The wheel of one project version chosen by the bridged rules, its requirements read.

    :param follow: the toolkit its stack shares (a build of another is refused).
    """
    target = ctx.target
    # The one place the caller's words for an unsupported property are wired in.
    explain = functools.partial(explain_unsupported, supported=target.supported, tables=ctx.tables)
    priorities = Priorities.of(files.metadata)
    toolkits = _toolkits(files, VariantRanker(target.supported, priorities, explain=explain), ctx)
    judge = toolkit_judge(toolkits, ctx.tables.nvidia.namespace)
    if follow is not None:
        judge = _stack_judge(judge, follow, toolkits, ctx.tables)
    ranker = VariantRanker(target.supported, priorities, explain=explain, judge=judge)
    files, selection, (requirements, applying, problems) = _readable_choice(files, ranker, ctx)
    _refuse_damaged(files, selection.selected, ranker)
    duplicates: tuple[Duplicate, ...] = ()
    if selection.selected is not None:
        duplicates = _duplicates(applying, target.env, ctx.tables, selection.selected.name)
    return PackageChoice(
        files.project, files, selection, duplicates, requirements,
        MappingProxyType(toolkits), problems, follows=follow,
    )  # fmt: skip


def _readable_choice(
    files: PackageFiles, ranker: VariantRanker, ctx: Choosing
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


def kept_choice(dist: PythonDistribution) -> PackageChoice:
    """An installed dependency kept as it is: no file, its installed requirements."""
    project = canonicalize_name(dist.name)
    files = PackageFiles(project=project, version=dist.version, candidates=())
    return PackageChoice(
        project, files, Selection(None, ()), requirements=dist.requires, installed=dist
    )


def cpu_fallback(choice: PackageChoice, env: Environment, tables: MappingTables) -> str | None:
    """Why *choice* is a CPU build on a machine whose CUDA driver is present, when the package
    publishes CUDA builds and the target excluded every one (semantics.md §6.6); ``None`` when it
    is a CUDA build, a kept one, or some CUDA build was compatible (its stack chose)."""
    chosen = choice.chosen
    if chosen is None or choice.installed is not None:
        return None
    namespace = tables.nvidia.namespace
    description = chosen.variant.description if chosen.variant is not None else None
    if is_cuda(description, namespace):
        return None
    builds: list[CudaBuild] = []
    for verdict in choice.selection.verdicts:
        variant = verdict.variant.description if verdict.variant is not None else None
        if (
            variant is None
            or not is_cuda(variant, namespace)
            or variant.label in {b.label for b in builds}
        ):
            continue
        if verdict.compatible:
            return None
        read = choice.toolkits.get(variant.label)
        toolkit = read.toolkit if read is not None else wheel_toolkit(variant, tables=tables)
        floor = toolkit_evidence(variant, (), tables=tables).toolkit
        builds.append(CudaBuild(variant.label, toolkit, floor, verdict.reason))
    return cuda_fallback(
        f"{choice.files.project} {choice.files.version}", description, builds,
        driver=env.cuda, toolkit=env.toolkit,
    )  # fmt: skip
