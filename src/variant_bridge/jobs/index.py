"""The ``index`` use case: variant wheels as ``v3.whl`` records in a conda channel.

Wheels come from the command context's sources (find-links directories: every project in them;
simple indexes: the projects named, consulted as its index strategy says) and from wheel files
named one by one; every download goes through the context's one ``Downloads`` (cache,
``--verbose``, deadlines). Each project version is read as ``select`` reads it (its
``*-variants.json``, completed from the wheels' ``variant.json``; each wheel's core metadata for
its requirements and toolkit evidence), turned into records for the context's target platform
(:mod:`variant_bridge.solve.records`) and merged into the channel after ``rattler.index`` has
indexed its conda packages (:mod:`variant_bridge.solve.channel`). Local wheels are copied into the
channel's ``wheels/`` folder (records name them ``../wheels/<file>``); remote ones are named by
their URL.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import MappingProxyType

from packaging.utils import canonicalize_name

from variant_bridge._values import value
from variant_bridge.errors import (
    IndexReadError,
    InvalidMetadata,
    InvalidWheelFilename,
    NotRegularFileError,
    SolveError,
)
from variant_bridge.filenames import WheelFilename
from variant_bridge.indexes import (
    Candidate,
    CoreMetadataReader,
    Downloads,
    IndexFile,
    IndexStrategy,
    file_sha256,
    read_wheel_metadata,
    url_to_path,
)
from variant_bridge.indexes.findlinks import list_find_links
from variant_bridge.indexes.local import check_regular
from variant_bridge.indexes.variant_files import complete_metadata, read_variants_files
from variant_bridge.jobs.context import Context, Sources
from variant_bridge.mappings import MappingTables, load_tables
from variant_bridge.priority import Encoding
from variant_bridge.solve.channel import place_wheel, write_channel
from variant_bridge.solve.records import (
    Form,
    IndexSettings,
    Release,
    ReleaseRecords,
    WheelFile,
    release_records,
    release_toolkits,
)

__all__ = ["Gathered", "IndexReport", "IndexRequest", "gather", "index_wheels"]

WHEELS = "wheels"
"""The channel folder local wheels are copied into."""
_VARIANTS_JSON_RE = re.compile(r"(?P<name>[^/]+?)-(?P<version>[^-/]+)-variants\.json")


@value
class IndexRequest:
    """What to index, and how (where from: the context's sources; for which platform: its
    target's).

    :param files: wheel files named one by one (their ``*-variants.json`` beside them is read).
    :param projects: the projects to index from simple indexes; also a filter for the others.
    :param copy: copy local wheels into the channel's ``wheels/`` folder (records then name
        them by a relative URL); ``False``: records name them by their ``file://`` URL.
    """

    channel: Path
    files: tuple[Path, ...] = ()
    projects: tuple[str, ...] = ()
    encoding: Encoding = Encoding.CELLS
    form: Form = "rattler"
    copy: bool = True
    index_conda: bool = True
    allow_mix: bool = False
    """Write no one-stack ties: a CUDA build's dependency on another indexed CUDA project takes
    any build of it (``--allow-mix``)."""


@value
class Gathered:
    """One release as read, with the candidates its records point to (by record ``url``)."""

    release: Release
    candidates: tuple[tuple[str, Candidate], ...]
    skipped: tuple[tuple[str, str], ...] = ()


@value
class IndexReport:
    """What ``index`` wrote."""

    channel: Path
    subdir: str
    encoding: Encoding
    releases: tuple[ReleaseRecords, ...]
    notes: tuple[str, ...] = ()

    @property
    def record_count(self) -> int:
        return sum(len(r.records) for r in self.releases)


def _explicit(path: Path) -> list[IndexFile]:
    try:
        info = check_regular(path)  # a FIFO named *.whl would block the zip reader forever
    except NotRegularFileError as e:
        raise SolveError(str(e)) from e
    except OSError as e:
        raise SolveError(f"{path}: no such wheel file ({e.strerror or e})") from e
    path = path.absolute()
    files = [IndexFile(path.name, path.as_uri(), str(path.parent), size=info.st_size,
                       path=path, flat=True)]  # fmt: skip
    for sibling in sorted(path.parent.glob("*-variants.json")):
        files.append(IndexFile(sibling.name, sibling.as_uri(), str(path.parent), path=sibling))
    return files


def _listing(
    request: IndexRequest, sources: Sources, downloads: Downloads
) -> tuple[list[IndexFile], list[str]]:
    """Every find-links location's files, then each project's from the indexes (the first that
    has it only, under ``first-index``), then the files named."""
    transport = downloads.transport
    files: list[IndexFile] = []
    notes: list[str] = []
    for links in sources.find_links:
        files += list_find_links(links.location, lazy=True, transport=transport)
    for project in map(canonicalize_name, request.projects):
        for index in sources.indexes:
            listed = index.list_files(project, transport=transport)
            if listed is None:
                notes.append(index.missing(project))
                continue
            files += listed
            if sources.strategy is IndexStrategy.FIRST_INDEX:
                break
    for path in request.files:
        files += _explicit(path)
    return files, notes


_Wheels = dict[tuple[str, str], list[tuple[WheelFilename, IndexFile]]]
_Documents = dict[tuple[str, str], list[IndexFile]]


def _groups(
    files: Iterable[IndexFile], projects: Sequence[str]
) -> tuple[_Wheels, _Documents, list[tuple[str, str]]]:
    """Wheels and ``*-variants.json`` files by (project, version); invalid wheel names."""
    wanted = {canonicalize_name(p) for p in projects}
    wheels: _Wheels = {}
    documents: _Documents = {}
    skipped: list[tuple[str, str]] = []
    seen: set[str] = set()
    for file in files:
        if file.url in seen:
            continue
        seen.add(file.url)
        match = _VARIANTS_JSON_RE.fullmatch(file.filename)
        if match is not None:
            key = (canonicalize_name(match["name"]), match["version"])
            documents.setdefault(key, []).append(file)
            continue
        if not file.filename.endswith(".whl"):
            continue
        try:
            wheel = WheelFilename.parse(file.filename)
        except InvalidWheelFilename as e:
            skipped.append((file.filename, str(e)))
            continue
        if wanted and wheel.project not in wanted:
            continue
        wheels.setdefault((wheel.project, wheel.version), []).append((wheel, file))
    return wheels, documents, skipped


def _candidate(wheel: WheelFilename, file: IndexFile) -> Candidate:
    return Candidate(
        filename=wheel,
        url=file.url,
        source=file.source,
        sha256=file.sha256,
        requires_python=file.requires_python,
        size=file.size,
        core_metadata=file.core_metadata,
        core_metadata_sha256=file.core_metadata_sha256,
    )


class _Reader:
    """Hashes, sizes and core metadata of the wheels, each read once."""

    def __init__(self, downloads: Downloads) -> None:
        self.downloads = downloads
        self.metadata = CoreMetadataReader(downloads, download_wheels=True)

    def local(self, candidate: Candidate) -> Path | None:
        if candidate.url.startswith("file:"):
            return url_to_path(candidate.url)
        return None

    def digest(self, candidate: Candidate) -> tuple[str, int]:
        path = self.local(candidate)
        if path is None and candidate.sha256 is not None and candidate.size is not None:
            return candidate.sha256, candidate.size
        if path is None:
            path = self.downloads.get(candidate)  # hash-checked when the index gave one
        return file_sha256(path), path.stat().st_size

    def requirements(self, candidate: Candidate) -> tuple[tuple[str, ...], str | None]:
        path = self.local(candidate)
        meta = read_wheel_metadata(path) if path is not None else self.metadata.read(candidate)
        if meta is None:  # pragma: no cover - download_wheels makes it readable
            return (), candidate.requires_python
        return meta.requires_dist, meta.requires_python or candidate.requires_python


def _skip(candidate: Candidate, reason: str, named: set[str]) -> tuple[str, str]:
    """A wheel left out, with why; a wheel the user named one by one is an error instead."""
    if candidate.url in named:
        raise SolveError(_why(str(url_to_path(candidate.url)), reason))
    return candidate.name, reason


def require_wheels(gathered: Sequence[Gathered], verb: str) -> None:
    """Refuse to write a channel (or packages) when every wheel found was left out; before
    anything is copied.

    :raises SolveError: naming the first wheel left out and why.
    """
    if not gathered or any(one.release.wheels for one in gathered):
        return  # none found at all is the caller's own message
    left = [_why(name, reason) for one in gathered for name, reason in one.skipped]
    more = f" (and {len(left) - 1} more)" if left[1:] else ""
    raise SolveError(f"no wheel could be {verb}" + (f": {left[0]}{more}" if left else ""))


def _why(name: str, reason: str) -> str:
    """*reason*, led by *name* unless it already names the file."""
    return reason if name in reason else f"{name}: {reason}"


def gather(request: IndexRequest, ctx: Context) -> tuple[list[Gathered], list[str]]:
    """Every release the request names in the context's sources, read (variant metadata,
    hashes, requirements) through its downloads.

    :raises IndexReadError: a source cannot be read; :raises InvalidMetadata: a malformed
        ``*-variants.json``; :raises SolveError: a named wheel file is missing or unreadable.
    """
    downloads = ctx.downloads
    files, notes = _listing(request, ctx.sources, downloads)
    named = {path.absolute().as_uri() for path in request.files}
    wheels, documents, skipped = _groups(files, request.projects)
    reader = _Reader(downloads)
    gathered: list[Gathered] = []
    for (project, version), members in sorted(wheels.items()):
        candidates = [_candidate(w, f) for w, f in members]
        meta, where = read_variants_files(
            documents.get((project, version), []), downloads.transport
        )
        meta, problems, _ = complete_metadata(candidates, meta, where, downloads)
        variants = {d.label: d for d in meta.variants} if meta is not None else {}
        entries: list[WheelFile] = []
        pointed: list[tuple[str, Candidate]] = []
        release_skipped = [
            _skip(c, str(p), named) for c in candidates if (p := problems.get(c.label or ""))
        ]
        for candidate in candidates:
            if candidate.label in problems:
                continue
            try:
                sha256, size = reader.digest(candidate)
                requires, requires_python = reader.requirements(candidate)
            except (IndexReadError, InvalidMetadata) as e:
                release_skipped.append(_skip(candidate, str(e), named))
                continue
            variant = variants.get(candidate.label) if candidate.label else None
            entries.append(WheelFile(candidate.filename, candidate.url, sha256, size, requires,
                                     requires_python, variant))  # fmt: skip
            pointed.append((candidate.url, candidate))
        release = Release(project, version, tuple(entries), meta)
        gathered.append(Gathered(release, tuple(pointed), tuple(release_skipped)))
    notes += [f"{name}: {reason}" for name, reason in skipped]
    return gathered, notes


def _placed(gathered: Gathered, request: IndexRequest) -> Release:
    """The release with each wheel's record URL: ``../wheels/<file>`` once copied into the
    channel's ``wheels/`` folder (shared by every subdir; ``rattler.index`` refuses ``.whl``
    files inside a subdir), else its URL."""
    release = gathered.release
    if not request.copy:
        return release
    target = request.channel / WHEELS
    target.mkdir(parents=True, exist_ok=True)
    placed = []
    for wheel in release.wheels:
        url = wheel.url
        if url.startswith("file:"):
            place_wheel(url_to_path(url), target / str(wheel.filename), wheel.sha256)
            url = f"../{WHEELS}/{wheel.filename}"
        placed.append(dataclasses.replace(wheel, url=url))
    return Release(release.project, release.version, tuple(placed), release.metadata)


def records_of(
    gathered: Sequence[Gathered],
    request: IndexRequest,
    subdir: str,
    *,
    tables: MappingTables | None = None,
    conda_names: Mapping[str, str] | None = None,
) -> list[ReleaseRecords]:
    """The records of every gathered release for *subdir* (wheels copied first when the
    request says so).

    :param conda_names: ``convert``'s names (see :attr:`IndexSettings.conda_names`).
    """
    tables = tables if tables is not None else load_tables()
    stacks = {} if request.allow_mix else {
        g.release.project: kits
        for g in gathered
        if (kits := release_toolkits(g.release, subdir, tables=tables))
    }  # fmt: skip
    settings = IndexSettings(
        subdir, request.encoding, request.form,
        frozenset(g.release.project for g in gathered), conda_names, MappingProxyType(stacks),
    )  # fmt: skip
    found = []
    for one in gathered:
        made = release_records(_placed(one, request), settings, tables=tables)
        if one.skipped:
            made = dataclasses.replace(made, skipped=one.skipped + made.skipped)
        found.append(made)
    return found


def index_wheels(request: IndexRequest, ctx: Context) -> IndexReport:
    """Index the request's wheels (from the context's sources and the files named) into its
    channel, for the context's target platform (the use case behind ``index``).

    :raises SolveError: nothing to index, a channel that cannot be written or indexed.
    :raises IndexReadError, InvalidMetadata: see :func:`gather`.
    """
    if not ctx.sources and not request.files:
        raise SolveError("nothing to index: pass wheel files, directories or index URLs")
    subdir = ctx.target.env.platform
    gathered, notes = gather(request, ctx)
    if not gathered:
        raise SolveError(
            "no wheels found to index in "
            + ", ".join([s.name for s in ctx.sources] + [str(p) for p in request.files])
        )
    require_wheels(gathered, "indexed")
    releases = records_of(gathered, request, subdir)
    records = [r for release in releases for r in release.records]
    notes += write_channel(
        request.channel, subdir, records,
        projects={r.project for r in releases}, index_conda=request.index_conda,
    )  # fmt: skip
    return IndexReport(request.channel, subdir, request.encoding, tuple(releases), tuple(notes))
