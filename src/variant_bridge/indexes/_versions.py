"""Sorting one project's files into kinds and choosing the version (PEP 825 steps 1-3).

1. Keep the files of the project from every source (find-links first, then indexes, in the order
   given); the first copy of a filename wins.
2. Leave out files an installer would not use, each with a :class:`Problem`: not a wheel, an
   invalid filename, ``requires-python`` excluding the target interpreter, yanked (PEP 592: only
   an exact ``==`` pin may still use a yanked file).
3. Offer the versions that match the specifier and have a usable wheel (for the target's tags,
   when given, as pip does), highest first (:func:`usable_versions`: the finder takes the first, a
   resolver may go further down). Versions are examined from the highest down, and
   a local wheel is opened only when its version is examined: the cost of a big directory is its
   listing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.tags import Tag
from packaging.utils import canonicalize_name
from packaging.version import Version

from variant_bridge._values import value
from variant_bridge.errors import InvalidWheelFilename, SelectionError
from variant_bridge.filenames import WheelFilename
from variant_bridge.indexes.candidates import IndexFile, Problem, ProblemKind, Skipped
from variant_bridge.indexes.findlinks import read_local_wheel
from variant_bridge.markers import unreadable_version

__all__ = [
    "VARIANTS_JSON_SUFFIX",
    "Listing",
    "Wheel",
    "no_version_error",
    "usable_versions",
    "version_wheels",
]

VARIANTS_JSON_SUFFIX = "-variants.json"
_SDIST_SUFFIXES = (".tar.gz", ".zip", ".tar.bz2", ".tar.xz", ".tgz", ".tar")
_SEPARATORS = re.compile(r"[-_.]+")
_MAX_REASONS = 6


@value
class Wheel:
    """A wheel of the project with its parsed filename and version."""

    file: IndexFile
    filename: WheelFilename
    version: Version


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
    except ValueError:  # InvalidVersion, or a number too long to convert
        return None


def _version_hint(filename: str) -> Version | None:
    """The version a file's name states, whatever the kind of file; ``None`` when unclear."""
    if filename.endswith(".whl"):
        try:
            return WheelFilename.parse(filename).parsed_version
        except InvalidWheelFilename:
            return None
    return _non_wheel_version(filename)


def _variants_json_version(filename: str, project: str) -> Version | None:
    """The version of ``{name}-{version}-variants.json`` when it belongs to *project*."""
    if not filename.endswith(VARIANTS_JSON_SUFFIX):
        return None
    name, _, version = filename[: -len(VARIANTS_JSON_SUFFIX)].rpartition("-")
    if canonicalize_name(name) != project:
        return None
    try:
        return Version(version)
    except ValueError:  # InvalidVersion, or a number too long to convert
        return None


def _requires_python_excludes(requires_python: str | None, python: Version) -> bool:
    if not requires_python:
        return False
    try:
        spec = SpecifierSet(requires_python)
    except InvalidSpecifier:
        return False  # pip and uv ignore an invalid requires-python rather than the file
    if unreadable_version(spec) is not None:  # a 5,000-digit version: invalid, likewise
        return False
    return not spec.contains(python, prereleases=True)


def _yanked(yanked: str | bool | None) -> Problem:
    text = f"yanked ({yanked})" if isinstance(yanked, str) and yanked else "yanked"
    return Problem(ProblemKind.YANKED, text)


def _join_reasons(pairs: Sequence[tuple[str, Problem]]) -> str:
    shown = "; ".join(f"{name}: {problem}" for name, problem in pairs[:_MAX_REASONS])
    more = len(pairs) - _MAX_REASONS
    return f"{shown}; and {more} more" if more > 0 else shown


class Listing:
    """The files of one project gathered from every source, sorted into kinds.

    :param log: told ``  skipped FILE: reason`` for every file left out (``--verbose``).
    """

    def __init__(
        self,
        project: str,
        python: Version,
        python_text: str,
        *,
        log: Callable[[str], None] | None = None,
    ) -> None:
        self.project = project
        self.log = log
        self.python = python
        self.python_text = python_text
        self.wheels: list[Wheel] = []
        """Usable wheels (yanked ones included) of the versions examined so far."""
        self.variants_files: list[tuple[Version, IndexFile]] = []
        # (version or None, filename, problem): files an installer would not use.
        self.rejected: list[tuple[Version | None, str, Problem]] = []
        self._seen: dict[str, int] = {}
        """Filename -> position in the listing (messages list files in that order)."""
        # Every wheel of the project by version, usable or not ("available: ..." in errors).
        self._by_version: dict[Version, list[Wheel]] = {}
        self._examined: set[Version] = set()

    @property
    def wheel_versions(self) -> set[Version]:
        return set(self._by_version)

    def position(self, filename: str) -> int:
        return self._seen[filename]

    def _see(self, file: IndexFile) -> None:
        self._seen[file.filename] = len(self._seen)

    def _reject(self, version: Version | None, file: IndexFile, problem: Problem) -> None:
        self._see(file)
        self._left_out(version, file.filename, problem)

    def _left_out(self, version: Version | None, filename: str, problem: Problem) -> None:
        self.rejected.append((version, filename, problem))
        if self.log is not None:
            self.log(f"  skipped {filename}: {problem}")

    def _add_non_wheel(self, file: IndexFile) -> None:
        if file.flat and not _belongs(file.filename, self.project):
            return
        text = (
            "not a wheel (source distributions are not built)"
            if file.filename.endswith(_SDIST_SUFFIXES)
            else "not a wheel"
        )
        version = _non_wheel_version(file.filename)
        self._reject(version, file, Problem(ProblemKind.NOT_A_WHEEL, text))

    def add(self, file: IndexFile) -> None:
        if file.filename in self._seen:
            return  # the first source listing a filename wins, as with pip's ordering
        if file.problem is not None:  # refused when listed (a file: link on a remote page...)
            if not (file.flat and not _belongs(file.filename, self.project)):
                self._reject(_version_hint(file.filename), file, file.problem)
            return
        json_version = _variants_json_version(file.filename, self.project)
        if json_version is not None:
            self._see(file)
            self.variants_files.append((json_version, file))
            return
        if not file.filename.endswith(".whl"):
            self._add_non_wheel(file)
            return
        try:
            parsed = WheelFilename.parse(file.filename)
        except InvalidWheelFilename as e:
            if not (file.flat and not _belongs(file.filename, self.project)):
                self._reject(None, file, Problem(ProblemKind.INVALID_FILENAME, str(e)))
            return
        if parsed.project != self.project:
            if not file.flat:
                text = f"a wheel of {parsed.project!r}, not {self.project!r}"
                self._reject(None, file, Problem(ProblemKind.OTHER_PROJECT, text))
            return
        self._see(file)
        version = parsed.parsed_version
        self._by_version.setdefault(version, []).append(Wheel(file, parsed, version))

    def examine(self, version: Version) -> None:
        """Read the wheels of *version* (opening local ones) and sort them into kinds."""
        if version in self._examined:
            return
        self._examined.add(version)
        for wheel in self._by_version.get(version, ()):
            file = read_local_wheel(wheel.file) if wheel.file.unread else wheel.file
            if file.problem:
                self._left_out(version, file.filename, file.problem)
            elif _requires_python_excludes(file.requires_python, self.python):
                text = (
                    f"requires-python {file.requires_python!r} excludes Python {self.python_text}"
                )
                problem = Problem(ProblemKind.REQUIRES_PYTHON, text)
                self._left_out(version, file.filename, problem)
            else:
                self.wheels.append(Wheel(file, wheel.filename, version))

    def wheels_of(self, version: Version) -> list[Wheel]:
        """The usable wheels of an examined *version* (yanked ones included)."""
        return [w for w in self.wheels if w.version == version]

    @property
    def empty(self) -> bool:
        return not (self._by_version or self.variants_files or self.rejected)


def _usable_wheels(listing: Listing, version: Version, *, exact: bool) -> list[Wheel]:
    """The wheels of an examined *version* an installer would use: not yanked, or yanked ones
    when an exact pin allows them (PEP 592) and nothing else is left."""
    wheels = listing.wheels_of(version)
    usable = [w for w in wheels if not w.file.yanked]
    return usable or (wheels if exact else [])


def usable_versions(
    listing: Listing, spec: SpecifierSet, *, tags: frozenset[Tag] | None = None
) -> Iterator[Version]:
    """The versions matching *spec* that have a usable wheel, highest first, examined lazily.

    With *tags*, only versions with a wheel for them, as pip chooses; when no version has one,
    the highest usable version comes alone, so that selection can say why each file does not fit.
    """
    exact = _is_exact_pin(spec)
    fallback: Version | None = None
    fitted = False
    for version in sorted(spec.filter(listing.wheel_versions), reverse=True):
        listing.examine(version)
        usable = _usable_wheels(listing, version, exact=exact)
        if not usable:
            continue
        if tags is None or any(w.filename.tags & tags for w in usable):
            fitted = True
            yield version
        elif fallback is None:
            fallback = version
    if not fitted and fallback is not None:
        yield fallback


def no_version_error(
    listing: Listing, spec: SpecifierSet, where: str, notes: Sequence[str], hint: str = ""
) -> SelectionError:
    """Why no version of the project can be used for *spec* (every version examined).

    :param hint: appended to the message when versions exist but none fits (e.g. that later
        indexes were not consulted).
    """
    project = listing.project
    if listing.empty:
        extra = f" ({'; '.join(notes)})" if notes else ""
        return SelectionError(f"no files for {project!r} in {where}{extra}")
    available = listing.wheel_versions
    matching = set(spec.filter(available))
    if available and not matching:
        shown = ", ".join(str(v) for v in sorted(available))
        return SelectionError(
            f"no version of {project!r} matches {str(spec)!r} in {where} (available: {shown}){hint}"
        )
    for version in matching:
        listing.examine(version)
    # Every file left out that could have been used: of a matching version, or, when no
    # version has a usable wheel at all, of any version the specifier allows (a file: link).
    reasons = [
        (name, problem)
        for version, name, problem in listing.rejected
        if version is None
        or version in matching
        or (not matching and spec.contains(version, prereleases=True))
    ]
    reasons.sort(key=lambda pair: listing.position(pair[0]))
    yanked = [w for w in listing.wheels if w.file.yanked and w.version in matching]
    reasons += sorted(
        ((w.file.filename, _yanked(w.file.yanked)) for w in yanked),
        key=lambda pair: listing.position(pair[0]),
    )
    detail = f": {_join_reasons(reasons)}" if reasons else ""
    return SelectionError(f"no usable wheel for {project!r} in {where}{detail}{hint}")


def version_wheels(
    listing: Listing,
    spec: SpecifierSet,
    chosen: Version,
    *,
    tags: frozenset[Tag] | None = None,
) -> tuple[list[Wheel], list[Skipped]]:
    """The wheels of *chosen* (a version :func:`usable_versions` gave) and the files worth
    reporting as skipped: unusable ones that could have been chosen, and newer versions passed
    over for having no wheel for the target's tags."""
    chosen_wheels = _usable_wheels(listing, chosen, exact=_is_exact_pin(spec))
    passed_over: list[Wheel] = []
    if tags is not None:
        matching = set(spec.filter(listing.wheel_versions))
        newer = [
            w
            for w in listing.wheels
            if w.version > chosen and not w.file.yanked and w.version in matching
        ]
        unfit = {w.version for w in newer} - {w.version for w in newer if w.filename.tags & tags}
        passed_over = [w for w in newer if w.version in unfit]
    return chosen_wheels, _skipped(listing, spec, chosen, chosen_wheels, passed_over)


def _skipped(
    listing: Listing,
    spec: SpecifierSet,
    chosen: Version,
    chosen_wheels: Sequence[Wheel],
    passed_over: Sequence[Wheel],
) -> list[Skipped]:
    def relevant(version: Version | None) -> bool:
        # Files that could have been chosen: unknown version, or matching and not older.
        return version is None or (version >= chosen and spec.contains(version, prereleases=True))

    taken = {id(w) for w in chosen_wheels}
    skipped = [
        Skipped(name, problem) for version, name, problem in listing.rejected if relevant(version)
    ]
    skipped += [
        Skipped(w.file.filename, _yanked(w.file.yanked))
        for w in listing.wheels
        if w.file.yanked and id(w) not in taken and relevant(w.version)
    ]
    skipped += [
        Skipped(
            w.file.filename,
            Problem(
                ProblemKind.PASSED_OVER, f"no wheel of {w.version} fits the target's platform tags"
            ),
        )
        for w in passed_over
    ]
    return sorted(skipped, key=lambda s: (s.filename, s.problem.text))
