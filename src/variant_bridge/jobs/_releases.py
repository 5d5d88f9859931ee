"""What the tree is resolved over (:class:`._tree.Releases`): the sources, and what is installed.

One :class:`~variant_bridge.indexes.ProjectListing` per project and one choice per project
version, each made at most once per command. A dependency (not a requested package) that is
installed in the target and satisfies every requirement on it is offered first, as uv and pip
keep an installed requirement without ``--upgrade``: a plain one stays as installed (a conda
package is never replaced by a wheel of the same requirement); an installed *variant* is
offered at its version, but its file is chosen by the bridged rules like any other, so a build
the environment no longer supports is replaced (``install`` leaves an identical one alone).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING

from packaging.specifiers import SpecifierSet
from packaging.tags import Tag
from packaging.version import InvalidVersion, Version

from variant_bridge.errors import SelectionError
from variant_bridge.indexes import (
    Downloads,
    IndexSource,
    IndexStrategy,
    PackageFiles,
    ProjectListing,
)
from variant_bridge.indexes.prefetch import Prefetch
from variant_bridge.markers import Dependency, VariantValues, evaluate_dependencies

if TYPE_CHECKING:
    from variant_bridge.environment import PythonDistribution
    from variant_bridge.jobs.select import PackageChoice

__all__ = ["Releases"]


def _version(dist: PythonDistribution) -> Version | None:
    try:
        return Version(dist.version)
    except InvalidVersion:
        return None


class Releases:
    """The sources and the installed distributions, as the tree resolver asks for them."""

    def __init__(
        self,
        sources: Sequence[IndexSource],
        *,
        python: Version,
        strategy: IndexStrategy,
        tags: frozenset[Tag],
        downloads: Downloads,
        markers: Mapping[str, str],
        choose: Callable[[PackageFiles], PackageChoice],
        keep: Callable[[PythonDistribution], PackageChoice],
        requested: frozenset[str],
        installed: Mapping[str, PythonDistribution],
    ) -> None:
        self._sources = sources
        self._python = python
        self._strategy = strategy
        self._tags = tags
        self._downloads = downloads
        self._markers = markers
        self._choose = choose
        self._keep = keep
        self._requested = requested
        self._installed = installed
        self._listings: dict[str, ProjectListing] = {}
        self._choices: dict[tuple[str, Version], PackageChoice] = {}
        # The documents of the tree are fetched ahead, concurrently (the choices stay ours).
        self._prefetch = Prefetch(
            sources, python=python, strategy=strategy, tags=tags, markers=markers,
            transport=downloads.transport,
        )  # fmt: skip
        self._prefetch.projects((p, SpecifierSet()) for p in sorted(requested))

    def _listing(self, project: str) -> ProjectListing:
        found = self._listings.get(project)
        if found is None:
            found = self._listings[project] = ProjectListing(
                project,
                self._sources,
                python=self._python,
                strategy=self._strategy,
                transport=self._downloads.transport,
            )
        return found

    def _kept(self, project: str) -> tuple[PythonDistribution, Version] | None:
        """The installed distribution of a dependency, with its version."""
        if project in self._requested:
            return None  # a requested package is always chosen from the sources
        dist = self._installed.get(project)
        version = _version(dist) if dist is not None else None
        return (dist, version) if dist is not None and version is not None else None

    def versions(self, project: str, spec: SpecifierSet) -> Iterator[Version]:
        kept = self._kept(project)
        if kept is None or not spec.contains(kept[1], prereleases=True):
            listing = self._listing(project)
            if listing.listing.empty:
                raise listing.no_version(spec)
            return listing.versions(spec, tags=self._tags)
        return self._installed_first(project, spec, kept[1])

    def _installed_first(
        self, project: str, spec: SpecifierSet, installed: Version
    ) -> Iterator[Version]:
        yield installed  # then what the sources offer (nothing when no source has the project)
        yield from (
            v for v in self._listing(project).versions(spec, tags=self._tags) if v != installed
        )

    def no_version(self, project: str, spec: SpecifierSet) -> SelectionError:
        return self._listing(project).no_version(spec)

    def choice(self, project: str, version: Version, spec: SpecifierSet) -> PackageChoice:
        key = (project, version)
        found = self._choices.get(key)
        if found is None:
            found = self._choices[key] = self._make_choice(project, version, spec)
        return found

    def _make_choice(self, project: str, version: Version, spec: SpecifierSet) -> PackageChoice:
        kept = self._kept(project)
        if kept is not None and kept[1] == version:
            dist = kept[0]
            if dist.variant_label is None or not self._offers(project, version):
                return self._keep(dist)
        files = self._listing(project).files(
            version, spec, downloads=self._downloads, tags=self._tags
        )
        return self._choose(files)

    def _offers(self, project: str, version: Version) -> bool:
        pinned = SpecifierSet(f"=={version}")
        try:
            return version in self._listing(project).versions(pinned, tags=self._tags)
        except SelectionError:
            return False

    def dependencies(
        self, project: str, version: Version, spec: SpecifierSet, extras: frozenset[str]
    ) -> Sequence[Dependency]:
        choice = self.choice(project, version, spec)
        if choice.installed is not None:
            dist = choice.installed
            lines: Sequence[str] | None = dist.requires
            values = (
                VariantValues.of(dist.variant)
                if dist.variant is not None or dist.variant_label is None
                else VariantValues(label=dist.variant_label)
            )
        elif choice.selected is not None:
            lines = choice.requirements
            values = VariantValues.of(choice.selected.variant)
        else:
            lines = None
        if not lines:
            return ()
        plain = evaluate_dependencies(lines, self._markers, values).applying
        self._prefetch.dependencies(plain)
        if not extras:
            return plain
        known = {d.text for d in plain}
        added: list[Dependency] = []
        for extra in sorted(extras):
            evaluated = evaluate_dependencies(lines, self._markers, values, extra)
            added += [d for d in evaluated.applying if d.text not in known]
        return added
