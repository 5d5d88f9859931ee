"""Fetching a dependency tree's index documents ahead of the resolver, a few at a time.

The tree resolver (:mod:`variant_bridge.jobs._tree`) asks for one project at a time: its page,
then its chosen version's ``*-variants.json`` and core metadata, then the projects those name. A
distant index answers each request after a round trip, so a tree of 25 projects waited for 50
of them one after another. :class:`Prefetch` asks for them before the resolver does, on the
transport's small pool of threads (:meth:`Transport.submit
<variant_bridge.indexes.transport.Transport.submit>`, :data:`~.transport.WORKERS` at once, over
kept-alive connections): for each project named, its pages on the indexes the strategy would
consult; for the version the finder would choose, its ``*-variants.json`` files and, when every
wheel of it that fits the target is a plain one, their PEP 658 metadata; then, from the
``Requires-Dist`` lines that apply on the target, the same for each dependency.

Only documents are fetched ahead, into the transport (:meth:`Transport.prefetch
<variant_bridge.indexes.transport.Transport.prefetch>`): the resolver still reads everything
itself, in its own order, and finds each answer waiting (or waits for it). So what a command
decides and prints is the same as without prefetching, and no document is fetched twice. A
guess that turns out wrong (a version the resolver does not take) costs a request, never a
result. Variant wheels' metadata is left to the resolver: which variants it reads depends on
the target's properties, decided above this layer. A failed prefetch is dropped: the resolver
meets the same error itself and reports it.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from packaging.specifiers import SpecifierSet
from packaging.tags import Tag
from packaging.utils import canonicalize_name
from packaging.version import Version

from variant_bridge.errors import VariantBridgeError
from variant_bridge.indexes._versions import Listing, usable_versions
from variant_bridge.indexes.core_metadata import MAX_CORE_METADATA, CoreMetadata
from variant_bridge.indexes.members import MetadataSource
from variant_bridge.indexes.simple import ACCEPT, parse_project_page, project_url
from variant_bridge.indexes.sources import IndexSource, IndexStrategy, SimpleIndex
from variant_bridge.indexes.transport import MAX_DOCUMENT, Transport
from variant_bridge.properties import NULL_LABEL

if TYPE_CHECKING:
    from concurrent.futures import Future

    from variant_bridge.markers import Dependency

__all__ = ["MAX_PROJECTS", "Prefetch"]

MAX_PROJECTS = 2000
"""Projects one command fetches ahead at most (a guard against a runaway guess)."""


class Prefetch:
    """Fetches the documents of projects a tree will need (see the module docstring).

    :param sources: where to look, in order of precedence (as :class:`ProjectListing` takes).
    :param markers: the target's PEP 508 marker values (``Requires-Dist`` lines are followed
        when they apply there).
    """

    def __init__(
        self,
        sources: Sequence[IndexSource],
        *,
        python: Version,
        strategy: IndexStrategy,
        tags: frozenset[Tag],
        markers: Mapping[str, str],
        transport: Transport,
    ) -> None:
        self._indexes = [s for s in sources if isinstance(s, SimpleIndex)]
        self._python = python
        self._strategy = strategy
        self._tags = tags
        self._markers = markers
        self._transport = transport
        self._lock = threading.Lock()
        self._seen: set[str] = set()
        self._tasks: list[Future[object]] = []
        self.started = 0
        """Projects whose documents were asked for ahead."""

    def projects(self, wanted: Iterable[tuple[str, SpecifierSet]]) -> None:
        """Start fetching each ``(project, specifier)`` not asked for yet (returns at once)."""
        if not any(not s.url.startswith("file:") for s in self._indexes):
            return  # local pages cost no round trip
        for name, spec in wanted:
            project = canonicalize_name(name)
            with self._lock:
                if project in self._seen or len(self._seen) >= MAX_PROJECTS:
                    continue
                self._seen.add(project)
                self.started += 1
            task = self._transport.submit(lambda p=project, s=spec: self._run(p, s))  # type: ignore[misc]
            with self._lock:
                self._tasks.append(task)

    def wait(self) -> None:
        """Return once everything asked for ahead has been fetched (or failed)."""
        while True:
            with self._lock:
                pending = [t for t in self._tasks if not t.done()]
            if not pending:
                return
            for task in pending:
                task.exception()  # waits; a task's own errors are dropped already

    def dependencies(self, dependencies: Iterable[Dependency]) -> None:
        """:meth:`projects` for the requirements of a chosen wheel (those that apply)."""
        self.projects((d.requirement.name, d.requirement.specifier) for d in dependencies)

    def _run(self, project: str, spec: SpecifierSet) -> None:
        # A failed guess is dropped: the resolver meets the same error itself, and reports it.
        with contextlib.suppress(VariantBridgeError, ValueError, OSError):
            listing = self._listing(project)
            version = next(usable_versions(listing, spec, tags=self._tags), None)
            if version is not None:
                self._release(listing, version)

    def _listing(self, project: str) -> Listing:
        """The project's files on the indexes the strategy consults (their pages fetched)."""
        listing = Listing(project, self._python, str(self._python))
        for index in self._indexes:
            if index.url.startswith("file:"):
                continue
            response = self._transport.prefetch(project_url(index.url, project), accept=ACCEPT)
            if response is None:
                continue  # no such project there (or taken already): the next index
            for file in parse_project_page(response, project, source=index.url):
                listing.add(file)
            if self._strategy is IndexStrategy.FIRST_INDEX:
                break
        return listing

    def _release(self, listing: Listing, version: Version) -> None:
        """The version's variant files; with plain wheels only, their metadata, then their
        dependencies."""
        for found, file in listing.variants_files:
            if found == version and file.path is None:
                self._transport.prefetch(file.url, max_bytes=MAX_DOCUMENT)
        wheels = [w for w in listing.wheels_of(version) if w.filename.tags & self._tags]
        if any(w.filename.label not in (None, NULL_LABEL) for w in wheels):
            return  # which variants are read is decided above: left to the resolver
        requires: tuple[str, ...] | None = None
        for wheel in wheels:
            if wheel.file.core_metadata and not wheel.file.yanked:
                url = wheel.file.url + ".metadata"
                answer = self._transport.prefetch(url, max_bytes=MAX_CORE_METADATA)
                if answer is not None and requires is None:
                    text = answer.body.decode("utf-8", "replace")
                    requires = CoreMetadata.parse(text, MetadataSource.PEP658, url).requires_dist
        if requires:
            from variant_bridge.markers import VariantValues, evaluate_dependencies

            applying = evaluate_dependencies(requires, self._markers, VariantValues()).applying
            self.dependencies(applying)
