"""Finding the wheels of one project version and their variant metadata (PEP 825 steps 1-3).

1. List every source (find-links first, then indexes, in the order given) and keep the files of
   the project; the first copy of a filename wins.
2. Leave out files an installer would not use, each with a reason: not a wheel, an invalid
   filename, ``requires-python`` excluding the target interpreter, yanked (PEP 592: only an exact
   ``==`` pin may still use a yanked file).
3. Choose the highest version that has a wheel and matches the requested specifier.
4. Read that version's variant metadata from ``{name}-{version}-variants.json`` when a source has
   it, and from the ``variant.json`` inside one wheel per label the file lacks (PEP 825 PR #5100);
   remote wheels are downloaded (hash-checked) for that.
5. Resolve each variant wheel's label through the metadata; a label the metadata lacks leaves
   the wheel in place with a ``problem`` so selection can say why it is incompatible.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.tags import Tag
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from variant_bridge.errors import (
    IndexReadError,
    InstallError,
    InvalidMetadata,
    InvalidTarget,
    InvalidWheelFilename,
    SelectionError,
)
from variant_bridge.filenames import WheelFilename
from variant_bridge.indexes import findlinks, simple
from variant_bridge.indexes.candidates import Candidate, IndexFile, PackageFiles
from variant_bridge.indexes.download import download, fetch, url_to_path
from variant_bridge.metadata import VariantMetadata, merge_metadata, read_variant_json

__all__ = ["find_candidates", "variants_json_name"]

VARIANTS_JSON_SUFFIX = "-variants.json"
_SDIST_SUFFIXES = (".tar.gz", ".zip", ".tar.bz2", ".tar.xz", ".tgz", ".tar")
_SEPARATORS = re.compile(r"[-_.]+")
_MAX_REASONS = 6


def variants_json_name(name: str, version: str) -> str:
    """``{name}-{version}-variants.json`` with wheel-style name normalisation."""
    return f"{canonicalize_name(name).replace('-', '_')}-{version}{VARIANTS_JSON_SUFFIX}"


@dataclass(frozen=True, slots=True)
class _Wheel:
    file: IndexFile
    filename: WheelFilename
    version: Version


def _parse_specifier(project: str, version: str | None) -> SpecifierSet:
    if version is None or not version.strip():
        return SpecifierSet()
    text = version.strip()
    try:
        Version(text)
    except InvalidVersion:
        pass
    else:
        text = f"=={text}"
    try:
        return SpecifierSet(text)
    except InvalidSpecifier:
        raise SelectionError(
            f"invalid version {version!r} for {project!r}: expected a version or a PEP 440 "
            "specifier such as '==1.2' or '>=1,<2'"
        ) from None


def _is_exact_pin(spec: SpecifierSet) -> bool:
    """``==X`` (no wildcard) or ``===X``: PEP 592 lets such a pin use a yanked file."""
    specs = list(spec)
    return len(specs) == 1 and (
        specs[0].operator == "===" or (specs[0].operator == "==" and "*" not in specs[0].version)
    )


def _belongs(filename: str, project: str) -> bool:
    """Whether a non-wheel file in a flat listing looks like one of *project*'s files."""
    normalized = _SEPARATORS.sub("-", filename.lower())
    prefix = f"{project}-"
    return normalized.startswith(prefix) and normalized[len(prefix) : len(prefix) + 1].isdigit()


def _non_wheel_version(filename: str) -> Version | None:
    stem = filename
    for suffix in (*_SDIST_SUFFIXES, VARIANTS_JSON_SUFFIX):
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    _, _, tail = stem.rpartition("-")
    try:
        return Version(tail)
    except InvalidVersion:
        return None


def _variants_json_version(filename: str, project: str) -> Version | None:
    """The version of ``{name}-{version}-variants.json`` when it belongs to *project*."""
    if not filename.endswith(VARIANTS_JSON_SUFFIX):
        return None
    name, _, version = filename[: -len(VARIANTS_JSON_SUFFIX)].rpartition("-")
    if canonicalize_name(name) != project:
        return None
    try:
        return Version(version)
    except InvalidVersion:
        return None


def _requires_python_excludes(requires_python: str | None, python: Version) -> bool:
    if not requires_python:
        return False
    try:
        spec = SpecifierSet(requires_python)
    except InvalidSpecifier:
        return False  # pip and uv ignore an invalid requires-python rather than the file
    return not spec.contains(python, prereleases=True)


def _yanked_reason(yanked: str | bool | None) -> str:
    return f"yanked ({yanked})" if isinstance(yanked, str) and yanked else "yanked"


def _join_reasons(pairs: Sequence[tuple[str, str]]) -> str:
    shown = "; ".join(f"{name}: {reason}" for name, reason in pairs[:_MAX_REASONS])
    more = len(pairs) - _MAX_REASONS
    return f"{shown}; and {more} more" if more > 0 else shown


class _Listing:
    """The files of one project gathered from every source, sorted into kinds."""

    def __init__(self, project: str, python: Version, python_text: str) -> None:
        self.project = project
        self.python = python
        self.python_text = python_text
        self.wheels: list[_Wheel] = []
        self.variants_files: list[tuple[Version, IndexFile]] = []
        # (version or None, filename, reason): files an installer would not use.
        self.rejected: list[tuple[Version | None, str, str]] = []
        self.seen: set[str] = set()
        # Versions of every wheel of the project, usable or not ("available: ..." in errors).
        self.wheel_versions: set[Version] = set()

    def add(self, file: IndexFile) -> None:
        if file.filename in self.seen:
            return  # the first source listing a filename wins, as with pip's ordering
        json_version = _variants_json_version(file.filename, self.project)
        if json_version is not None:
            self.seen.add(file.filename)
            self.variants_files.append((json_version, file))
            return
        if not file.filename.endswith(".whl"):
            if file.flat and not _belongs(file.filename, self.project):
                return
            self.seen.add(file.filename)
            reason = (
                "not a wheel (source distributions are not built)"
                if file.filename.endswith(_SDIST_SUFFIXES)
                else "not a wheel"
            )
            self.rejected.append((_non_wheel_version(file.filename), file.filename, reason))
            return
        try:
            parsed = WheelFilename.parse(file.filename)
        except InvalidWheelFilename as e:
            if file.flat and not _belongs(file.filename, self.project):
                return
            self.seen.add(file.filename)
            self.rejected.append((None, file.filename, str(e)))
            return
        if parsed.project != self.project:
            if not file.flat:
                self.seen.add(file.filename)
                self.rejected.append(
                    (None, file.filename, f"a wheel of {parsed.project!r}, not {self.project!r}")
                )
            return
        self.seen.add(file.filename)
        version = parsed.parsed_version
        self.wheel_versions.add(version)
        if file.problem:
            self.rejected.append((version, file.filename, file.problem))
        elif _requires_python_excludes(file.requires_python, self.python):
            self.rejected.append(
                (
                    version,
                    file.filename,
                    f"requires-python {file.requires_python!r} excludes Python {self.python_text}",
                )
            )
        else:
            self.wheels.append(_Wheel(file, parsed, version))

    @property
    def empty(self) -> bool:
        return not (self.wheels or self.variants_files or self.rejected)


def _gather(
    project: str,
    listing: _Listing,
    find_links: Sequence[str | os.PathLike[str]],
    index_urls: Sequence[str],
) -> tuple[list[str], list[str]]:
    """Fill *listing* from every source; return the source names and notes on missing pages."""
    sources: list[str] = []
    notes: list[str] = []
    for location in find_links:
        sources.append(findlinks.location_name(location))
        for file in findlinks.list_find_links(location, project=project):
            listing.add(file)
    for index_url in index_urls:
        sources.append(index_url)
        files = simple.list_project_files(index_url, project)
        if files is None:
            notes.append(f"{simple.project_url(index_url, project)}: HTTP 404 Not Found")
            continue
        for file in files:
            listing.add(file)
    return sources, notes


def _choose_version(
    project: str,
    listing: _Listing,
    spec: SpecifierSet,
    where: str,
    notes: Sequence[str],
    *,
    tags: frozenset[Tag] | None = None,
) -> tuple[Version, list[_Wheel], list[tuple[str, str]]]:
    """Pick the version and its wheels; return them with the files worth reporting as skipped."""
    if listing.empty:
        extra = f" ({'; '.join(notes)})" if notes else ""
        raise SelectionError(f"no files for {project!r} in {where}{extra}")
    usable = [w for w in listing.wheels if not w.file.yanked]
    yanked = [w for w in listing.wheels if w.file.yanked]
    matching = set(spec.filter(listing.wheel_versions))
    if listing.wheel_versions and not matching:
        available = ", ".join(str(v) for v in sorted(listing.wheel_versions))
        raise SelectionError(
            f"no version of {project!r} matches {str(spec)!r} in {where} (available: {available})"
        )
    versions = {w.version for w in usable} & matching
    if not versions and _is_exact_pin(spec):
        versions = {w.version for w in yanked} & matching
    if not versions:
        reasons = [
            (name, reason)
            for version, name, reason in listing.rejected
            if version is None or version in matching
        ]
        reasons += [(w.file.filename, _yanked_reason(w.file.yanked)) for w in yanked]
        detail = f": {_join_reasons(reasons)}" if reasons else ""
        raise SelectionError(f"no usable wheel for {project!r} in {where}{detail}")
    passed_over: list[_Wheel] = []
    if tags is not None:
        # As pip does: the highest version with a wheel for the target. When none has one, keep
        # the highest anyway so that selection can say why each of its files does not fit.
        fitting = {w.version for w in usable if w.version in versions and w.filename.tags & tags}
        if fitting:
            passed_over = [w for w in usable if w.version > max(fitting) and w.version in versions]
            versions = fitting
    chosen = max(versions)
    chosen_wheels = [w for w in usable if w.version == chosen]
    if not chosen_wheels:  # an exact pin of a version whose every wheel is yanked
        chosen_wheels = [w for w in yanked if w.version == chosen]

    def relevant(version: Version | None) -> bool:
        # Files that could have been chosen: unknown version, or matching and not older.
        return version is None or (version >= chosen and spec.contains(version, prereleases=True))

    skipped = [(name, reason) for version, name, reason in listing.rejected if relevant(version)]
    skipped += [
        (w.file.filename, _yanked_reason(w.file.yanked))
        for w in yanked
        if w not in chosen_wheels and relevant(w.version)
    ]
    skipped += [
        (w.file.filename, f"no wheel of {w.version} fits the target's platform tags")
        for w in passed_over
    ]
    return chosen, chosen_wheels, sorted(skipped)


def _read_variants_files(files: Iterable[IndexFile]) -> tuple[VariantMetadata | None, list[str]]:
    merged: VariantMetadata | None = None
    where: list[str] = []
    for file in files:
        location = str(file.path) if file.path is not None else file.url
        if file.path is not None:
            try:
                body = file.path.read_bytes()
            except OSError as e:
                raise IndexReadError(f"cannot read {location}: {e.strerror}") from e
        else:
            response = fetch(file.url)
            assert response is not None  # fetch returns None only when not_found_ok
            body = response.body
            actual = hashlib.sha256(body).hexdigest()
            if file.sha256 is not None and actual != file.sha256:
                raise InstallError(
                    f"hash mismatch for {file.filename} from {file.url}: expected sha256 "
                    f"{file.sha256}, got {actual}"
                )
        meta = read_variant_json(body, source=location)
        merged = meta if merged is None else merge_metadata(merged, meta, source=location)
        where.append(location)
    return merged, where


def _wheel_path(wheel: _Wheel, work_dir: Path) -> Path:
    """A local copy of *wheel*: the find-links file itself, else a hash-checked download."""
    if wheel.file.path is not None:
        return wheel.file.path
    if wheel.file.url.startswith("file:"):
        return url_to_path(wheel.file.url)
    return download(_candidate(wheel), work_dir)


def _candidate(wheel: _Wheel) -> Candidate:
    file = wheel.file
    return Candidate(
        filename=wheel.filename,
        url=file.url,
        source=file.source,
        sha256=file.sha256,
        requires_python=file.requires_python,
        yanked=file.yanked or None,
        size=file.size,
    )


def _read_cost(wheel: _Wheel) -> tuple[bool, int, str]:
    remote = wheel.file.path is None and not wheel.file.url.startswith("file:")
    size = wheel.file.size if wheel.file.size is not None else sys.maxsize
    return (remote, size if remote else 0, str(wheel.filename))


def _complete_metadata(
    wheels: Sequence[_Wheel],
    meta: VariantMetadata | None,
    where: list[str],
    cache_dir: Path | None,
) -> tuple[VariantMetadata | None, dict[str, str]]:
    """Read ``variant.json`` from one wheel per label *meta* lacks; return problems per label."""
    from variant_bridge.indexes import variant_files as metadata_io

    known = set(meta.labels) if meta is not None else set()
    # Every wheel of a label carries the same variant.json (PEP 825), so one per label will do:
    # a local one first, else the smallest download.
    first_per_label: dict[str, _Wheel] = {}
    for wheel in sorted(wheels, key=_read_cost):
        label = wheel.filename.label
        if label is not None and label not in known:
            first_per_label.setdefault(label, wheel)
    problems: dict[str, str] = {}
    if not first_per_label:
        return meta, problems
    with tempfile.TemporaryDirectory(prefix="variant-bridge-") as scratch:
        work_dir = cache_dir if cache_dir is not None else Path(scratch)
        for label, wheel in sorted(first_per_label.items()):
            location = str(wheel.file.path) if wheel.file.path is not None else wheel.file.url
            path = _wheel_path(wheel, work_dir)
            try:
                wheel_meta = metadata_io.read_wheel_variant_metadata(path)
                if wheel_meta is None:  # pragma: no cover - a labelled wheel never gives None
                    raise InvalidMetadata(f"{path}: no variant.json")
                merged = (
                    wheel_meta
                    if meta is None
                    else merge_metadata(meta, wheel_meta, source=location)
                )
            except InvalidMetadata as e:
                # One broken wheel makes its label unusable, not the whole release: selection
                # reports it as the reason that wheel is incompatible.
                problems[label] = str(e).replace(str(path), location)
                continue
            meta = merged
            where.append(location)
    return meta, problems


def _resolve(
    wheel: _Wheel, meta: VariantMetadata | None, problems: dict[str, str], where: Sequence[str]
) -> Candidate:
    candidate = _candidate(wheel)
    label = wheel.filename.label
    if label is None:
        return candidate
    if label in problems:
        return replace(candidate, problem=problems[label])
    variant = meta.variant(label) if meta is not None else None
    if variant is None:
        listed = f" (read from {', '.join(where)})" if where else ""
        return replace(candidate, problem=f"label {label!r} is not in the variant metadata{listed}")
    return replace(candidate, variant=variant)


def find_candidates(
    project: str,
    *,
    find_links: Sequence[str | os.PathLike[str]] = (),
    index_urls: Sequence[str] = (),
    version: str | None = None,
    python_version: str,
    cache_dir: Path | None = None,
    tags: Iterable[Tag] | None = None,
) -> PackageFiles:
    """The wheels of the best version of *project* and their variant metadata.

    :param project: the project name (any spelling; it is normalised).
    :param find_links: directories (or ``file://`` URLs) and ``http(s)://`` pages of links.
    :param index_urls: PEP 503 / PEP 691 simple index roots, e.g. ``https://pypi.org/simple``.
    :param version: a version (``1.2``, meaning ``==1.2``) or a PEP 440 specifier; ``None``
        means the highest version that has a usable wheel.
    :param python_version: the target interpreter's version, for ``requires-python``.
    :param cache_dir: where remote variant wheels are downloaded when their metadata must be
        read from inside them; ``None`` means a temporary directory removed afterwards.
    :param tags: the target interpreter's tags: the version chosen is then the highest with a
        wheel for them (older versions are not considered when no version has one).
    :raises SelectionError: no files for the project, or none usable (the message lists why).
    :raises IndexReadError: a source cannot be read (naming the URL or path and the reason).
    :raises InvalidMetadata: a ``variants.json`` or ``variant.json`` is malformed (naming it).
    :raises InstallError: a wheel downloaded for its metadata does not match its hash.
    """
    canonical = canonicalize_name(project)
    if not re.fullmatch(r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?", canonical):
        raise SelectionError(f"invalid project name {project!r}")
    spec = _parse_specifier(project, version)
    try:
        python = Version(python_version)
    except InvalidVersion:
        raise InvalidTarget(
            f"invalid Python version {python_version!r}: expected e.g. '3.12' or '3.12.4'"
        ) from None
    if not find_links and not index_urls:
        raise SelectionError(f"no find-links directory or index URL to look for {project!r} in")

    listing = _Listing(canonical, python, python_version)
    sources, notes = _gather(canonical, listing, find_links, index_urls)
    where = ", ".join(sources)
    target = frozenset(tags) if tags is not None else None
    chosen, wheels, skipped = _choose_version(canonical, listing, spec, where, notes, tags=target)

    files = sorted((f for v, f in listing.variants_files if v == chosen), key=lambda f: f.filename)
    meta, meta_where = _read_variants_files(files)
    meta, problems = _complete_metadata(wheels, meta, meta_where, cache_dir)
    candidates = tuple(
        sorted(
            (_resolve(w, meta, problems, meta_where) for w in wheels),
            key=lambda c: c.name,
        )
    )
    return PackageFiles(
        project=canonical,
        version=str(chosen),
        candidates=candidates,
        metadata=meta,
        skipped=tuple(skipped),
        sources=tuple(sources),
        metadata_sources=tuple(meta_where),
    )
