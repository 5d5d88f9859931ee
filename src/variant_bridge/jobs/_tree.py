"""The dependency tree of the requested packages: resolvelib (pip's resolver) over our releases.

The resolver only ever sees ``(project, version)`` candidates; what a candidate *is* comes from
:class:`Catalog`: the versions a project offers for the target (highest first, lazily), and for
one version the wheel chosen by the bridged rules with the ``Requires-Dist`` lines that apply to
that wheel on the target (variant markers decided for its variant). So a variant package reached
through a dependency is chosen exactly as a requested one, and a version's dependencies are the
chosen variant's. A version whose wheels are all incompatible still resolves (with no
dependencies): variants never change the version (docs/semantics.md §6.3); the caller reports it.

Extras are separate identifiers (``name[extra]``) whose candidates depend on the plain project at
the same version, as pip models them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol

from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from variant_bridge._values import value
from variant_bridge.errors import SelectionError
from variant_bridge.markers import Dependency

__all__ = ["MAX_ROUNDS", "Catalog", "Need", "Resolved", "resolve_tree"]

MAX_ROUNDS = 20_000
"""resolvelib's rounds before giving up (pip uses 200,000; trees here are small)."""


@value
class Need:
    """One requirement on a project: requested, or a dependency of a chosen release."""

    project: str
    """The canonical project name."""
    extras: frozenset[str]
    specifier: SpecifierSet
    text: str
    """As written: the request, or the ``Requires-Dist`` line (marker included)."""
    parent: str | None = None
    """``name version`` of the release that requires it; ``None`` when requested."""

    @property
    def key(self) -> str:
        return _key(self.project, self.extras)

    @classmethod
    def of(cls, requirement: Requirement, text: str, parent: str | None = None) -> Need:
        extras = frozenset(canonicalize_name(e) for e in requirement.extras)
        name = canonicalize_name(requirement.name)
        return cls(name, extras, requirement.specifier, text, parent)

    def __str__(self) -> str:
        return self.text if self.parent is None else f"{self.text} (required by {self.parent})"


def _key(project: str, extras: Iterable[str]) -> str:
    ordered = sorted(extras)
    return f"{project}[{','.join(ordered)}]" if ordered else project


class _Candidate:
    """A version of a project (with extras); equal when project, version and extras are."""

    __slots__ = ("extras", "project", "spec", "version")

    def __init__(
        self, project: str, version: Version, extras: frozenset[str], spec: SpecifierSet
    ) -> None:
        self.project = project
        self.version = version
        self.extras = extras
        self.spec = spec
        """The requirements' combined specifier when the candidate was offered."""

    @property
    def key(self) -> str:
        return _key(self.project, self.extras)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Candidate) and (self.key, self.version) == (
            other.key,
            other.version,
        )

    def __hash__(self) -> int:
        return hash((self.key, self.version))

    def __repr__(self) -> str:
        return f"{self.key} {self.version}"


class Catalog(Protocol):
    """What the tree is resolved over (:class:`._releases.Releases` for the ``select`` job)."""

    def versions(self, project: str, spec: SpecifierSet) -> Iterator[Version]:
        """*project*'s usable versions matching *spec*, highest first.

        :raises SelectionError: the project has no files at all in the sources consulted.
        """

    def dependencies(
        self, project: str, version: Version, spec: SpecifierSet, extras: frozenset[str]
    ) -> Sequence[Dependency]:
        """The lines of the chosen wheel of *version* that apply on the target: the plain ones,
        or with *extras* those that only these extras add. Empty when no wheel is compatible."""

    def no_version(self, project: str, spec: SpecifierSet) -> SelectionError:
        """Why no version of *project* matching *spec* can be used."""


@value
class Resolved:
    """The tree: every project's version and extras, and the requirements that brought it."""

    versions: Mapping[str, Version]
    """Canonical project -> version, in the order the tree reaches them (requested first)."""
    extras: Mapping[str, frozenset[str]]
    needs: Mapping[str, tuple[Need, ...]]
    """Canonical project -> every requirement on it in the final tree."""


class _Provider:
    """resolvelib's provider protocol (``AbstractProvider``'s methods) over a :class:`Catalog`."""

    def __init__(self, releases: Catalog, *, follow: bool) -> None:
        self.releases = releases
        self.follow = follow

    def identify(self, requirement_or_candidate: Need | _Candidate) -> str:
        return requirement_or_candidate.key

    def get_preference(
        self,
        identifier: str,
        resolutions: Mapping[str, _Candidate],
        candidates: Mapping[str, Iterator[_Candidate]],
        information: Mapping[str, Iterator[Any]],
        backtrack_causes: Sequence[Any],
    ) -> tuple[bool, bool, bool, str]:
        """Backtracking causes first, then exact pins, then requested projects, then by name."""
        infos = list(information[identifier])
        pinned = any(
            s.operator in ("==", "===") and "*" not in s.version
            for info in infos
            for s in info.requirement.specifier
        )
        requested = any(info.parent is None for info in infos)
        cause = any(c.requirement.key == identifier for c in backtrack_causes)
        return (not cause, not pinned, not requested, identifier)

    def narrow_requirement_selection(
        self,
        identifiers: Iterable[str],
        resolutions: Mapping[str, _Candidate],
        candidates: Mapping[str, Iterator[_Candidate]],
        information: Mapping[str, Iterator[Any]],
        backtrack_causes: Sequence[Any],
    ) -> Iterable[str]:
        return identifiers  # every identifier stays a choice (resolvelib's default)

    def find_matches(
        self,
        identifier: str,
        requirements: Mapping[str, Iterator[Need]],
        incompatibilities: Mapping[str, Iterator[_Candidate]],
    ) -> Callable[[], Iterator[_Candidate]]:
        needs = list(requirements[identifier])
        bad = {c.version for c in incompatibilities[identifier]}
        project, extras = needs[0].project, needs[0].extras
        spec = _combined(needs)
        try:
            versions = self.releases.versions(project, spec)
        except SelectionError as e:
            parents = sorted({n.parent for n in needs if n.parent is not None})
            if not parents:
                raise
            raise SelectionError(f"{e} (required by {', '.join(parents)})") from e

        def offered() -> Iterator[_Candidate]:  # lazy: versions are examined on demand
            for version in versions:
                if version not in bad:
                    yield _Candidate(project, version, extras, spec)

        return offered

    def is_satisfied_by(self, requirement: Need, candidate: _Candidate) -> bool:
        return requirement.specifier.contains(candidate.version, prereleases=True)

    def get_dependencies(self, candidate: _Candidate) -> list[Need]:
        parent = f"{candidate.project} {candidate.version}"
        needs: list[Need] = []
        if candidate.extras:  # an extra depends on its project at the same version
            same = SpecifierSet(f"=={candidate.version}")
            needs.append(Need(candidate.project, frozenset(), same, parent, parent))
        if not self.follow:
            return needs
        lines = self.releases.dependencies(
            candidate.project, candidate.version, candidate.spec, candidate.extras
        )
        for dependency in lines:
            if dependency.requirement.url:
                raise SelectionError(
                    f"{parent} requires {dependency.stated}: direct URL dependencies are not "
                    "followed; install that one separately"
                )
            needs.append(Need.of(dependency.requirement, dependency.text, parent))
        return needs


def _combined(needs: Iterable[Need]) -> SpecifierSet:
    spec = SpecifierSet()
    for need in needs:
        spec &= need.specifier
    return spec


def resolve_tree(requested: Sequence[Need], releases: Catalog, *, follow: bool = True) -> Resolved:
    """Resolve *requested* and (with *follow*) their dependencies over *releases*.

    :raises SelectionError: no set of versions meets every requirement (each conflicting
        requirement named with who stated it), a project without files, a direct URL dependency.
    """
    from resolvelib import BaseReporter, ResolutionImpossible, ResolutionTooDeep, Resolver

    provider: Any = _Provider(releases, follow=follow)
    resolver: Any = Resolver(provider, BaseReporter())
    try:
        result = resolver.resolve(requested, max_rounds=MAX_ROUNDS)
    except ResolutionImpossible as e:
        raise _conflict(e.causes, releases) from None
    except ResolutionTooDeep:
        raise SelectionError(
            f"the dependency tree could not be resolved in {MAX_ROUNDS} rounds (too many "
            "conflicting versions): pin some packages, e.g. NAME==VERSION"
        ) from None
    return _tree(requested, result)


def _conflict(causes: Iterable[Any], releases: Catalog) -> SelectionError:
    """One line naming every requirement that could not be met together, and who stated each."""
    by_project: dict[str, list[Need]] = {}
    for cause in causes:
        need: Need = cause.requirement
        by_project.setdefault(need.project, []).append(need)
    parts: list[str] = []
    for project, needs in by_project.items():
        spec = _combined(needs)
        if len(by_project) == 1 and all(n.parent is None for n in needs):
            return releases.no_version(project, spec)  # a request alone: the finder's words
        stated = "; ".join(str(n) for n in dict.fromkeys(needs))
        if next(releases.versions(project, spec), None) is None:
            parts.append(f"{releases.no_version(project, spec)} [{stated}]")
        else:  # versions exist, but each leads to a conflict further down
            parts.append(f"no version of {project!r} fits the rest of the tree [{stated}]")
    return SelectionError(f"cannot resolve the dependency tree: {' / '.join(parts)}")


def _walk(graph: object, mapping: Mapping[str, _Candidate]) -> list[str]:
    """Identifiers in breadth-first order from the requested ones."""
    order: list[str] = []
    queue: list[str | None] = [None]
    seen: set[str | None] = {None}
    children: Callable[[str | None], Iterable[str]] = graph.iter_children  # type: ignore[attr-defined]
    while queue:
        node = queue.pop(0)
        for child in sorted(children(node)):
            if child not in seen and child in mapping:
                seen.add(child)
                order.append(child)
                queue.append(child)
    return order


def _tree(requested: Sequence[Need], result: object) -> Resolved:
    mapping: Mapping[str, _Candidate] = result.mapping  # type: ignore[attr-defined]
    criteria: Mapping[str, object] = result.criteria  # type: ignore[attr-defined]
    first = [n.key for n in requested]
    rest = [k for k in _walk(result.graph, mapping) if k not in first]  # type: ignore[attr-defined]
    versions: dict[str, Version] = {}
    extras: dict[str, frozenset[str]] = {}
    needs: dict[str, tuple[Need, ...]] = {}
    for key in [*first, *rest]:
        candidate = mapping[key]
        project = candidate.project
        versions.setdefault(project, candidate.version)
        extras[project] = extras.get(project, frozenset()) | candidate.extras
        stated = [
            info.requirement
            for info in criteria[key].information  # type: ignore[attr-defined]
            if not (info.parent is not None and info.parent.project == project)
        ]
        needs[project] = tuple(dict.fromkeys([*needs.get(project, ()), *stated]))
    return Resolved(versions, extras, needs)
