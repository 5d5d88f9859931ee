"""What the tree is resolved over (:class:`._tree.Catalog`): the sources, and what is installed.

One :class:`~variant_bridge.indexes.ProjectListing` per project and one choice per project
version, each made at most once per command. A dependency (not a requested package) that is
installed in the target and satisfies every requirement on it is offered first, as uv and pip
keep an installed requirement without ``--upgrade``: a plain one stays as installed (a conda
package is never replaced by a wheel of the same requirement); an installed *variant* is
offered at its version, but its file is chosen by the bridged rules like any other, so a build
the environment no longer supports is replaced (``install`` leaves an identical one alone).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from variant_bridge.environment import PythonDistribution
from variant_bridge.errors import SelectionError
from variant_bridge.indexes import ProjectListing
from variant_bridge.indexes.prefetch import Prefetch
from variant_bridge.jobs._choice import Choosing, PackageChoice, choose_files, kept_choice
from variant_bridge.jobs._follow import Follow
from variant_bridge.jobs.context import Sources
from variant_bridge.markers import Dependency, VariantValues, evaluate_dependencies

__all__ = ["Releases"]


def _version(dist: PythonDistribution) -> Version | None:
    try:
        return Version(dist.version)
    except ValueError:  # InvalidVersion, or a number past int()'s 4300 digits
        return None


class Releases:
    """The sources and the installed distributions, as the tree resolver asks for them
    (:class:`._tree.Catalog`): each version's wheel chosen by :func:`._choice.choose_files`.

    :param requested: the canonical names requested (always chosen from the sources).
    :param installed: canonical name -> what the target has installed.
    """

    def __init__(
        self,
        sources: Sources,
        choosing: Choosing,
        *,
        requested: frozenset[str],
        installed: Mapping[str, PythonDistribution],
    ) -> None:
        self._sources = sources
        self._choosing = choosing
        self._tags = choosing.tag_set
        self._markers = choosing.markers
        self._requested = requested
        self._installed = installed
        self._listings: dict[str, ProjectListing] = {}
        self._choices: dict[tuple[str, Version], PackageChoice] = {}
        # The documents of the tree are fetched ahead, concurrently (the choices stay ours).
        self._prefetch = Prefetch(
            sources.locations, python=choosing.python, strategy=sources.strategy,
            tags=self._tags, markers=self._markers, transport=choosing.downloads.transport,
        )  # fmt: skip
        self._prefetch.projects((p, SpecifierSet()) for p in sorted(requested))
        self._follows: dict[str, Follow] = {}

    def follow(self, follows: Mapping[str, Follow]) -> None:
        """Choose these projects again for their stack's toolkit (one stack, one toolkit): their
        choices so far are dropped, the listings kept."""
        changed = {p for p, f in follows.items() if self._follows.get(p) != f}
        self._follows.update(follows)
        for key in [k for k in self._choices if k[0] in changed]:
            del self._choices[key]

    def _listing(self, project: str) -> ProjectListing:
        found = self._listings.get(project)
        if found is None:
            found = self._listings[project] = self._sources.listing(
                project, python=self._choosing.python, downloads=self._choosing.downloads
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
                return kept_choice(dist)
        files = self._listing(project).files(
            version, spec, downloads=self._choosing.downloads, tags=self._tags
        )
        return choose_files(files, self._choosing, follow=self._follows.get(project))

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
