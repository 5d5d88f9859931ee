"""The wheels of the best version of one project, with their variant metadata (PEP 825 steps 1-5).

:func:`find_files` lists every source, chooses the version (:mod:`._versions`), reads that
version's variant metadata (:mod:`.variant_files`) and resolves each variant wheel's label
through it; a label the metadata lacks leaves the wheel in place with a :class:`Problem` so
selection can say why it is incompatible. :func:`find_candidates` is the same for callers that
start from text (checked there, once).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from packaging.specifiers import SpecifierSet
from packaging.tags import Tag
from packaging.utils import canonicalize_name
from packaging.version import Version

from variant_bridge._patterns import Lazy
from variant_bridge.errors import InvalidTarget, SelectionError, quote
from variant_bridge.indexes._versions import (
    Listing,
    Wheel,
    no_version_error,
    usable_versions,
    version_wheels,
)
from variant_bridge.indexes.candidates import Candidate, PackageFiles, Problem, ProblemKind
from variant_bridge.indexes.download import Downloads
from variant_bridge.indexes.sources import IndexSource, IndexStrategy, open_sources
from variant_bridge.indexes.transport import Transport
from variant_bridge.indexes.variant_files import complete_metadata, read_variants_files
from variant_bridge.metadata import VariantMetadata
from variant_bridge.properties import VariantDescription

__all__ = ["ProjectListing", "find_candidates", "find_files"]

_PROJECT_RE = Lazy(r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?")


class ProjectListing:
    """Every file of one project from the sources the :class:`IndexStrategy` consults.

    Find-links locations are always read and merged; indexes are read in order and, under
    ``first-index``, the first one that has a page for the project is the only one consulted
    (as uv does: a later index can neither add versions nor shadow it). Made once per project
    and command: versions and their files are then read from it (:meth:`versions`,
    :meth:`files`).

    :param transport: the command's HTTP requests (``downloads.transport``).
    :raises IndexReadError: a source cannot be read (naming the URL or path and the reason).
    """

    def __init__(
        self,
        project: str,
        sources: Sequence[IndexSource],
        *,
        python: Version,
        strategy: IndexStrategy = IndexStrategy.FIRST_INDEX,
        transport: Transport,
    ) -> None:
        self.listing = Listing(canonicalize_name(project), python, str(python), log=transport.log)
        self.strategy = strategy
        self.notes: list[str] = []
        # Each release's *-variants.json, read once however often its files are asked for
        # (select for several node classes asks once per class).
        self._variants: dict[Version, tuple[VariantMetadata | None, list[str]]] = {}
        consulted: list[str] = []
        found_on: str | None = None
        passed: list[str] = []
        for source in sources:
            if not source.flat and found_on is not None and strategy is IndexStrategy.FIRST_INDEX:
                passed.append(source.name)
                continue
            consulted.append(source.name)
            files = source.list_files(self.listing.project, transport=transport)
            if files is None:
                self.notes.append(source.missing(self.listing.project))
                continue
            if not source.flat:
                found_on = source.name
            for file in files:
                self.listing.add(file)
        self.sources = tuple(consulted)
        """The find-links locations and indexes read, in order."""
        self.hint = (
            f"; {self.listing.project!r} was found on {found_on}, so later indexes "
            f"({', '.join(passed)}) were not consulted for it (--index-strategy first-index, as "
            "uv; --index-strategy unsafe-best-match merges every index when all are equally "
            "trusted)"
            if passed
            else ""
        )

    @property
    def project(self) -> str:
        return self.listing.project

    @property
    def where(self) -> str:
        return ", ".join(self.sources)

    def versions(self, spec: SpecifierSet, *, tags: frozenset[Tag] | None) -> Iterator[Version]:
        """The versions matching *spec* with a usable wheel, highest first (lazily examined)."""
        return usable_versions(self.listing, spec, tags=tags)

    def no_version(self, spec: SpecifierSet) -> SelectionError:
        """Why no version matching *spec* can be used, every file's reason listed."""
        return no_version_error(self.listing, spec, self.where, self.notes, self.hint)

    def files(
        self,
        version: Version,
        spec: SpecifierSet,
        *,
        downloads: Downloads,
        tags: frozenset[Tag] | None,
    ) -> PackageFiles:
        """The wheels of *version* (one :meth:`versions` gave) with their variant metadata.

        :raises InvalidMetadata: a ``variants.json`` or ``variant.json`` is malformed.
        :raises HashMismatch: a file read for its metadata does not match its advertised hash.
        """
        listing = self.listing
        wheels, skipped = version_wheels(listing, spec, version, tags=tags)
        read = self._variants.get(version)
        if read is None:
            files = sorted(
                (f for v, f in listing.variants_files if v == version), key=lambda f: f.filename
            )
            read = self._variants[version] = read_variants_files(files, downloads.transport)
        meta, where = read[0], list(read[1])
        plain = [_candidate(w) for w in wheels]
        meta, problems, read_from = complete_metadata(plain, meta, where, downloads)
        variants = {d.label: d for d in meta.variants} if meta is not None else {}
        candidates = tuple(
            sorted(
                (_resolve(c, variants, problems, where, read_from) for c in plain),
                key=lambda c: c.name,
            )
        )
        return PackageFiles(
            project=listing.project,
            version=str(version),
            candidates=candidates,
            metadata=meta,
            skipped=tuple(skipped),
            sources=self.sources,
            metadata_sources=tuple(where),
        )


def _candidate(wheel: Wheel) -> Candidate:
    file = wheel.file
    return Candidate(
        filename=wheel.filename,
        url=file.url,
        source=file.source,
        sha256=file.sha256,
        requires_python=file.requires_python,
        yanked=file.yanked or None,
        size=file.size,
        core_metadata=file.core_metadata,
        core_metadata_sha256=file.core_metadata_sha256,
    )


def _resolve(
    candidate: Candidate,
    variants: Mapping[str, VariantDescription],
    problems: Mapping[str, Problem],
    where: Sequence[str],
    read_from: Mapping[str, str],
) -> Candidate:
    label = candidate.label
    if label is None:
        return candidate
    if label in problems:
        return replace(candidate, problem=problems[label])
    variant = variants.get(label)
    if variant is None:
        listed = f" (read from {', '.join(where)})" if where else ""
        text = f"label {label!r} is not in the variant metadata{listed}"
        return replace(candidate, problem=Problem(ProblemKind.UNKNOWN_LABEL, text))
    # The index's files, unless this label was completed from a wheel's own variant.json.
    source = read_from.get(label) or ", ".join(w for w in where if w not in read_from.values())
    return replace(candidate, variant=variant, variant_source=source or None)


def find_files(
    project: str,
    sources: Sequence[IndexSource],
    *,
    spec: SpecifierSet,
    python: Version,
    downloads: Downloads,
    tags: Iterable[Tag] | None = None,
    strategy: IndexStrategy = IndexStrategy.FIRST_INDEX,
) -> PackageFiles:
    """The wheels of the best version of *project* and their variant metadata.

    :param project: a valid project name (any spelling; it is normalised).
    :param spec: the versions allowed; the highest with a usable wheel is chosen.
    :param python: the target interpreter's version, for ``requires-python``.
    :param downloads: where remote variant wheels are downloaded when their metadata must be read
        from inside them (and found again by whoever needs them next).
    :param tags: the target interpreter's tags: the version chosen is then the highest with a
        wheel for them (older versions are not considered when no version has one).
    :param strategy: which indexes are consulted for the project (see :class:`ProjectListing`).
    :raises SelectionError: no files for the project, or none usable (the message lists why).
    :raises IndexReadError: a source cannot be read (naming the URL or path and the reason).
    :raises InvalidMetadata: a ``variants.json`` or ``variant.json`` is malformed (naming it).
    :raises HashMismatch: a file read for its metadata does not match its advertised hash.
    """
    found = ProjectListing(
        project, sources, python=python, strategy=strategy, transport=downloads.transport
    )
    target = frozenset(tags) if tags is not None else None
    chosen = next(found.versions(spec, tags=target), None)
    if chosen is None:
        raise found.no_version(spec)
    return found.files(chosen, spec, downloads=downloads, tags=target)


def _parse_specifier(project: str, version: str | None) -> SpecifierSet:
    if version is None or not version.strip():
        return SpecifierSet()
    text = version.strip()
    try:
        Version(text)
    except ValueError:  # InvalidVersion, or a number too long to convert
        pass
    else:
        text = f"=={text}"
    try:
        spec = SpecifierSet(text)
        list(spec.filter([Version("0")]))  # reads the versions it names (a 5,000-digit one fails)
    except ValueError:  # InvalidSpecifier, or a number too long to convert
        raise SelectionError(
            f"invalid version {quote(version)} for {project!r}: expected a version or a PEP 440 "
            "specifier such as '==1.2' or '>=1,<2'"
        ) from None
    return spec


def find_candidates(
    project: str,
    *,
    find_links: Sequence[str | os.PathLike[str]] = (),
    index_urls: Sequence[str] = (),
    version: str | None = None,
    python_version: str,
    cache_dir: Path | None = None,
    tags: Iterable[Tag] | None = None,
    transport: Transport,
) -> PackageFiles:
    """:func:`find_files` from text: every argument is checked here.

    :param find_links: directories (or ``file://`` URLs) and ``http(s)://`` pages of links.
    :param index_urls: PEP 503 / PEP 691 simple index roots, e.g. ``https://pypi.org/simple``.
    :param version: a version (``1.2``, meaning ``==1.2``) or a PEP 440 specifier; ``None``
        means the highest version that has a usable wheel.
    :param python_version: the target interpreter's version, for ``requires-python``.
    :param cache_dir: the content-addressed cache (:class:`~variant_bridge.indexes.cache.Cache`)
        to read from and add to; ``None``: no cache (wheels downloaded to read their metadata
        go to a temporary directory removed afterwards).
    :raises InvalidTarget: a malformed Python version or URL.
    :raises SelectionError: see :func:`find_files`; also an invalid project name or version.
    """
    if not _PROJECT_RE.fullmatch(canonicalize_name(project)):
        raise SelectionError(f"invalid project name {quote(project)}")
    spec = _parse_specifier(project, version)
    try:
        python = Version(python_version)
    except ValueError:  # InvalidVersion, or a number too long to convert
        raise InvalidTarget(
            f"invalid Python version {quote(python_version)}: expected e.g. '3.12' or '3.12.4'"
        ) from None
    if not find_links and not index_urls:
        raise SelectionError(f"no find-links directory or index URL to look for {project!r} in")
    sources = open_sources(find_links, index_urls)
    from variant_bridge.indexes.cache import Cache

    cache = Cache(cache_dir) if cache_dir is not None else None
    with Downloads.temporary(cache=cache, transport=transport) as downloads:
        return find_files(
            project, sources, spec=spec, python=python, downloads=downloads, tags=tags
        )
