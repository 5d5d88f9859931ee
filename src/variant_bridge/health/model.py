"""What an environment's health check finds, as values: kinds, severities, fixes, findings.

Every finding has a :class:`FindingKind` (control flow reads it, never the message), a subject
(the canonical PyPI name it is about), a message, its fixes (best first) and structured details
(one class per kind). :attr:`Finding.id` (``kind:subject``) is stable: the same problem in the same
environment keeps its id, for ``--json`` consumers and for the conda plugin's fixer.
"""

from __future__ import annotations

import enum
import shlex
from collections.abc import Iterable
from typing import Union

from variant_bridge._values import value

__all__ = [
    "Basis",
    "Detail",
    "Disagreement",
    "Finding",
    "FindingKind",
    "Fix",
    "FixKind",
    "HealthReport",
    "LibraryCopies",
    "Orphan",
    "Place",
    "PlaceKind",
    "Reason",
    "ReasonKind",
    "Severity",
]


class Severity(enum.Enum):
    """How bad a finding is; the value is how ``--json`` names it."""

    INFO = "info"
    """Worth knowing, nothing breaks (a second copy of a library at the same CUDA minor)."""
    WARNING = "warning"
    """The environment disagrees with itself or carries dead weight; it may misbehave."""
    ERROR = "error"
    """A fact of this machine contradicts what is installed (a wheel built for a newer driver)."""

    @property
    def rank(self) -> int:
        return _RANKS[self]

    def at_least(self, other: Severity) -> bool:
        return self.rank >= other.rank


_RANKS = {Severity.INFO: 0, Severity.WARNING: 1, Severity.ERROR: 2}


class FindingKind(enum.Enum):
    """What was found; the value is the first half of :attr:`Finding.id`."""

    DISAGREEING_VARIANT = "disagreeing-variant"
    """An installed variant wheel whose build the environment no longer supports."""
    MISMATCHED_LIBRARY = "mismatched-library"
    """A CUDA library installed by conda and by a PyPI wheel, at different CUDA minors."""
    DUPLICATE_LIBRARY = "duplicate-library"
    """The same, at the same CUDA minor (or library version): a second copy."""
    ORPHANED_WHEEL = "orphaned-wheel"
    """An ``nvidia-*`` (CUDA library) wheel that no installed distribution requires."""

    @property
    def order(self) -> int:
        return _KIND_ORDER[self]


_KIND_ORDER = {kind: i for i, kind in enumerate(FindingKind)}


class FixKind(enum.Enum):
    """What a fix does; the value is how ``--json`` names it."""

    REINSTALL = "reinstall"
    """Re-select and reinstall packages with ``variant-bridge install`` (the build that agrees)."""
    UNINSTALL = "uninstall"
    """Remove PyPI distributions (pip or uv; ``pixi remove --pypi`` for a lock)."""
    SET_TOOLKIT = "set-toolkit"
    """Make conda's ``cuda-version`` agree with the installed wheel instead."""


class PlaceKind(enum.Enum):
    """What was examined, which decides how fix commands address it."""

    PREFIX = "prefix"
    INTERPRETER = "interpreter"
    LOCKFILE = "lockfile"


@value
class Place:
    """Where the fix commands act."""

    kind: PlaceKind
    path: str
    """The prefix directory, the interpreter or the pixi.lock."""
    python: str | None = None
    """The interpreter that uninstall commands run (a prefix's ``bin/python``); ``None``: the
    :attr:`path` itself is used (an interpreter)."""
    environment: str | None = None
    """The pixi.lock environment (``None``: the default one)."""


@value
class Fix:
    """One way to fix a finding: what it does, to what, and the command that does it."""

    kind: FixKind
    packages: tuple[str, ...]
    """What it acts on: names to remove, ``name==version`` to re-select, ``cuda-version=X.Y``."""
    argv: tuple[str, ...]
    complete: bool = True
    """``False``: the command lacks a package source the environment does not record (a wheel
    installed from an index: add ``--index-url``); :attr:`note` says which."""
    note: str | None = None

    @property
    def command(self) -> str:
        """The command as one shell line."""
        return shlex.join(self.argv)

    def __str__(self) -> str:
        return self.command if self.note is None else f"{self.command}  ({self.note})"


class Basis(enum.Enum):
    """What two copies of a library were compared by."""

    CUDA = "cuda"
    """The CUDA minor each version ships with (``names.yaml``)."""
    VERSION = "version"
    """The library's own ``major.minor`` (cuDNN, NCCL: versions that do not follow CUDA)."""


@value
class LibraryCopies:
    """The details of :attr:`FindingKind.DUPLICATE_LIBRARY` and
    :attr:`FindingKind.MISMATCHED_LIBRARY`."""

    pypi: str
    """The wheel's canonical name (``nvidia-cublas-cu12``)."""
    pypi_version: str
    conda: str
    """The conda package (``libcublas``)."""
    conda_version: str
    basis: Basis
    pypi_said: str
    """What was compared, per side: a CUDA ``major.minor`` or the library's ``major.minor``."""
    conda_said: str
    required_by: tuple[str, ...] = ()
    """``name version`` of every installed distribution that requires the wheel."""

    @property
    def same(self) -> bool:
        return self.pypi_said == self.conda_said


class ReasonKind(enum.Enum):
    """Why an installed variant disagrees."""

    PROPERTIES = "properties"
    """Its variant properties are not supported (driver, GPU, CPU, toolkit floor, ABI)."""
    TOOLKIT = "toolkit"
    """Its toolkit evidence (pins, lower bound) is newer than, or another major than, the
    environment's ``cuda-version``."""


@value
class Reason:
    kind: ReasonKind
    text: str


@value
class Disagreement:
    """The details of :attr:`FindingKind.DISAGREEING_VARIANT`."""

    name: str
    version: str
    label: str
    reasons: tuple[Reason, ...]
    runs_here: bool
    """``False``: a fact of this machine itself (driver, GPU, CPU, an installed ABI) excludes the
    build; ``True``: nothing known does (the toolkit policy, or a fact that is unknown)."""
    toolkit_only: bool
    """Only the toolkit policy refuses it: under the driver policy every property it declares
    is supported (a ``cuda-version`` it was built for would make it agree)."""
    toolkit: str | None = None
    """The CUDA toolkit its evidence says it was built against (``12.6``), when known."""
    origin: str | None = None
    """The URL it was installed from (PEP 610 ``direct_url.json``), when recorded."""
    sha256: str | None = None


@value
class Orphan:
    """The details of :attr:`FindingKind.ORPHANED_WHEEL`."""

    name: str
    version: str
    installer: str | None = None


Detail = Union[LibraryCopies, Disagreement, Orphan]  # noqa: UP007 - a runtime alias


@value
class Finding:
    """One problem of an environment, with what fixes it."""

    kind: FindingKind
    severity: Severity
    subject: str
    """The canonical PyPI name it is about."""
    message: str
    detail: Detail
    fixes: tuple[Fix, ...] = ()
    """Best first; empty when nothing needs doing (a harmless same-minor copy that is required)."""

    @property
    def id(self) -> str:
        return f"{self.kind.value}:{self.subject}"

    @property
    def fix(self) -> Fix | None:
        return self.fixes[0] if self.fixes else None

    @property
    def sort_key(self) -> tuple[int, int, str]:
        return (-self.severity.rank, self.kind.order, self.subject)


@value
class HealthReport:
    """Everything found in one environment."""

    place: Place | None
    findings: tuple[Finding, ...] = ()
    """Worst first, then by kind and subject."""
    checked: int = 0
    """PyPI distributions examined."""
    problems: tuple[str, ...] = ()
    """What could not be read or evaluated (a requirement whose marker the target does not
    decide); the check then assumed the safer answer (the line applies)."""

    @property
    def healthy(self) -> bool:
        """No finding of warning level or above."""
        return not any(f.severity.at_least(Severity.WARNING) for f in self.findings)

    @property
    def worst(self) -> Severity | None:
        return max((f.severity for f in self.findings), key=lambda s: s.rank, default=None)

    def of_kind(self, *kinds: FindingKind) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.kind in kinds)

    def reinstall(self) -> tuple[str, ...]:
        """``name==version`` of every package a :attr:`FixKind.REINSTALL` fix re-selects (the
        first fix of each finding), once each, in finding order."""
        return _unique(
            package
            for finding in self.findings
            if finding.fix is not None and finding.fix.kind is FixKind.REINSTALL
            for package in finding.fix.packages
        )

    def counts(self) -> dict[Severity, int]:
        found = dict.fromkeys(Severity, 0)
        for finding in self.findings:
            found[finding.severity] += 1
        return found


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))
