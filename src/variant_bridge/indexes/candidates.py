"""What an index or a find-links directory offers for one project version.

A :class:`Candidate` is one wheel file with where it lives, its advertised hash, the index's
``requires-python`` / ``yanked`` attributes and, for a variant wheel, the variant its label stands
for. :class:`PackageFiles` groups the candidates of the chosen version with the merged variant
metadata and the files that were left out, each with a :class:`Problem`: a kind to act on and the
reason in words.
"""

from __future__ import annotations

import enum
from pathlib import Path

from variant_bridge._values import value
from variant_bridge.filenames import WheelFilename
from variant_bridge.metadata.model import VariantMetadata
from variant_bridge.properties import VariantDescription

__all__ = ["Candidate", "IndexFile", "PackageFiles", "Problem", "ProblemKind", "Skipped"]


class ProblemKind(enum.Enum):
    """Why a file cannot be used; code tests the kind, people read :attr:`Problem.text`."""

    NOT_A_WHEEL = "not a wheel"
    INVALID_FILENAME = "invalid filename"
    OTHER_PROJECT = "another project's wheel"
    UNREADABLE_WHEEL = "not a readable wheel"
    REQUIRES_PYTHON = "excluded by requires-python"
    YANKED = "yanked"
    PASSED_OVER = "a newer version without a wheel for the target"
    INVALID_VARIANT_METADATA = "invalid variant metadata"
    UNKNOWN_LABEL = "label not in the variant metadata"
    REFUSED_URL = "a URL the index may not point to"
    METADATA_REFUSED = "METADATA larger than what is read"


@value
class Problem:
    """Why one file cannot be used: its :attr:`kind` and the reason in words."""

    kind: ProblemKind
    text: str

    def __str__(self) -> str:
        return self.text


@value
class Skipped:
    """A file of the project that was left out, and why."""

    filename: str
    problem: Problem

    @property
    def reason(self) -> str:
        return self.problem.text


@value
class IndexFile:
    """A file as a find-links directory or a simple index page lists it, before any filtering.

    :param filename: the file's name as listed (the link text of an HTML page).
    :param url: absolute URL without the hash fragment (``file://`` for local files).
    :param source: the find-links location or index URL that listed it.
    :param path: the local file, for find-links directories.
    :param flat: ``True`` when listed by a flat page or directory holding many projects (files of
        other projects are ignored there), ``False`` on a simple index's project page.
    :param problem: why a local file cannot be used although its name looks right (e.g. an
        unreadable wheel), or ``None``.
    :param unread: a local wheel whose ``Requires-Python`` (and readability) is not known yet:
        the finder reads it only when its version is considered (see
        :func:`variant_bridge.indexes.findlinks.read_local_wheel`).
    :param core_metadata: the index advertises the wheel's PEP 658 ``.metadata`` file.
    :param core_metadata_sha256: its advertised sha256, when given.
    """

    filename: str
    url: str
    source: str
    sha256: str | None = None
    requires_python: str | None = None
    yanked: str | bool | None = None
    size: int | None = None
    path: Path | None = None
    flat: bool = False
    problem: Problem | None = None
    unread: bool = False
    core_metadata: bool = False
    core_metadata_sha256: str | None = None


@value
class Candidate:
    """One wheel file that could be installed.

    :param filename: the parsed wheel filename (``filename.label`` is ``None`` for a non-variant
        wheel).
    :param url: where to get it: ``file://`` for a find-links directory, ``http(s)://`` for an
        index (without the ``#sha256=`` fragment).
    :param source: the find-links directory or index URL that listed it.
    :param sha256: the hex digest the index advertised; ``None`` when it gave none (find-links).
    :param requires_python: the index's ``requires-python`` (or the wheel's ``Requires-Python``
        for find-links); ``None`` when absent.
    :param yanked: ``None`` when not yanked; ``True`` when yanked without a reason; the reason
        string otherwise (PEP 592). Only present on a candidate when an exact ``==`` pin allowed it.
    :param variant: the variant the label stands for, resolved through the package's variant
        metadata; ``None`` for a non-variant wheel and for a variant wheel whose label the
        metadata lacks (then :attr:`problem` says why).
    :param problem: why this variant wheel cannot be considered; ``None`` when usable.
    :param size: the size in bytes when known.
    :param core_metadata: the index advertises a PEP 658 ``.metadata`` file (only then is it
        fetched); :param core_metadata_sha256: its advertised sha256.
    :param variant_source: where :attr:`variant` was read (the ``*-variants.json`` URLs or
        paths, or the wheel whose ``variant.json`` completed them): what the wheel's own
        ``variant.json`` is compared with before it is installed.
    """

    filename: WheelFilename
    url: str
    source: str
    sha256: str | None = None
    requires_python: str | None = None
    yanked: str | bool | None = None
    variant: VariantDescription | None = None
    problem: Problem | None = None
    size: int | None = None
    core_metadata: bool = False
    core_metadata_sha256: str | None = None
    variant_source: str | None = None

    @property
    def name(self) -> str:
        """The wheel's filename as text."""
        return str(self.filename)

    @property
    def label(self) -> str | None:
        """The variant label; ``None`` for a non-variant wheel."""
        return self.filename.label

    @property
    def is_variant(self) -> bool:
        return self.filename.label is not None

    @property
    def is_yanked(self) -> bool:
        return self.yanked is not None and self.yanked is not False

    def __str__(self) -> str:
        return self.name


@value
class PackageFiles:
    """The wheels of one project version, their variant metadata and what was left out.

    :param project: the canonical project name (``Foo_Bar`` -> ``foo-bar``).
    :param version: the chosen version, as the filenames spell it.
    :param candidates: every usable wheel of that version, sorted by filename.
    :param metadata: the merged variant metadata of the version (from the
        ``{name}-{version}-variants.json`` file, completed from the ``variant.json`` of wheels
        whose labels it lacks); ``None`` when the version has neither.
    :param skipped: the files that were left out, each with its problem: yanked, excluded by
        ``requires-python``, not a wheel, an invalid filename...
    :param sources: the find-links directories and index URLs searched, in order.
    :param metadata_sources: where :attr:`metadata` was read from (URLs or paths), in order.
    """

    project: str
    version: str
    candidates: tuple[Candidate, ...]
    metadata: VariantMetadata | None = None
    skipped: tuple[Skipped, ...] = ()
    sources: tuple[str, ...] = ()
    metadata_sources: tuple[str, ...] = ()

    @property
    def variant_candidates(self) -> tuple[Candidate, ...]:
        return tuple(c for c in self.candidates if c.is_variant)

    @property
    def labels(self) -> tuple[str, ...]:
        """The distinct variant labels among the candidates, sorted."""
        return tuple(sorted({c.label for c in self.candidates if c.label is not None}))

    def refusing(self, candidate: Candidate, problem: Problem) -> PackageFiles:
        """These files with *candidate* moved from the candidates to the skipped files."""
        return PackageFiles(
            self.project, self.version,
            tuple(c for c in self.candidates if c.url != candidate.url),
            self.metadata,
            tuple(sorted((*self.skipped, Skipped(candidate.name, problem)),
                         key=lambda s: (s.filename, s.problem.text))),
            self.sources, self.metadata_sources,
        )  # fmt: skip

    def candidate(self, filename: str) -> Candidate | None:
        """The candidate called *filename*, or ``None``."""
        for c in self.candidates:
            if c.name == filename:
                return c
        return None
