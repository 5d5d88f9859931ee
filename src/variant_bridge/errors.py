"""The one exception tree of variant-bridge.

Every error a user can cause derives from :class:`VariantBridgeError`; the CLI maps it to one
line on stderr and exit status 1. Messages quote the offending input with ``!r``, say where it
came from and what was expected.
"""

from __future__ import annotations

import errno

__all__ = [
    "ConflictingOptions",
    "DetectionError",
    "ExportError",
    "HashMismatch",
    "IndexReadError",
    "InstallError",
    "InvalidArchList",
    "InvalidMetadata",
    "InvalidProperty",
    "InvalidTarget",
    "InvalidWheelFilename",
    "MappingTableError",
    "NotRegularFileError",
    "ReleaseInputError",
    "RequirementError",
    "SelectionError",
    "SolveError",
    "TruncatedRead",
    "UnsafeArchive",
    "UnverifiedFile",
    "VariantBridgeError",
    "VariantMismatch",
    "clip",
    "one_line",
    "quote",
]

QUOTE_LIMIT = 80
"""Characters of user input a message quotes before it shortens the rest to ``…``."""
LINE_LIMIT = 2000
"""Characters of one error line (the CLI's ``error: ...``, the conda plugin's): a message that
lists many reasons is cut there, saying how long it was, so no input can flood a log."""


def one_line(message: str, *, limit: int = LINE_LIMIT) -> str:
    """*message* as one error line: its lines joined with ``; ``, cut after *limit* characters
    (``… (12345 characters in all)``)."""
    lines = [line.strip() for line in str(message).splitlines() if line.strip()]
    joined = "; ".join(lines) or "failed"
    if len(joined) <= limit:
        return joined
    return f"{joined[:limit]}… ({len(joined)} characters in all)"


def clip(text: str, *, limit: int = QUOTE_LIMIT) -> str:
    """*text* (a path, say) as a message shows it unquoted, shortened like :func:`quote`."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text)} characters)"


def quote(text: str, *, limit: int = QUOTE_LIMIT) -> str:
    """*text* as a message quotes it (``repr``), shortened when longer than *limit* characters:
    ``'1000000…' (5002 characters)``, so one bad argument cannot flood a one-line error."""
    if len(text) <= limit:
        return repr(text)
    shown = repr(text[:limit])
    return f"{shown[:-1]}…{shown[-1]} ({len(text)} characters)"


class VariantBridgeError(Exception):
    """Base class of every error variant-bridge raises on purpose."""


class InvalidProperty(VariantBridgeError, ValueError):
    """A variant property, feature, label or description is not well formed."""


class InvalidWheelFilename(VariantBridgeError, ValueError):
    """A wheel filename (variant or not) cannot be parsed."""


class InvalidMetadata(VariantBridgeError, ValueError):
    """A ``variant.json`` / ``*-variants.json`` document is malformed or of an unknown schema."""


class MappingTableError(VariantBridgeError):
    """A mapping table under ``mappings/`` is invalid; the message lists every problem."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = tuple(problems)
        super().__init__("; ".join(problems))


class RequirementError(VariantBridgeError, ValueError):
    """A ``Requires-Dist`` line, or its marker, cannot be parsed or evaluated for the target."""


class InvalidTarget(VariantBridgeError, ValueError):
    """A declared target (``--target K=V``) or an override variable has an invalid value."""


class ConflictingOptions(InvalidTarget):
    """Options that contradict each other (a usage error: the CLI exits 2).

    :attr:`kind` says which contradiction it is, so a shell can word it its own way.
    """

    def __init__(self, kind: object, message: str) -> None:
        super().__init__(message)
        self.kind = kind


class DetectionError(VariantBridgeError):
    """The environment (machine, prefix, lock file) could not be read."""


class IndexReadError(VariantBridgeError):
    """A package index or find-links directory could not be read."""


class TruncatedRead(IndexReadError):
    """A download or a read ended before the size its server announced (or its index listed)."""


class SelectionError(VariantBridgeError):
    """No wheel could be selected (unknown package, nothing compatible)."""


class SolveError(VariantBridgeError):
    """A channel, a solve, a lock file or a conversion that cannot be done (``index``,
    ``solve``, ``convert``)."""


class InstallError(VariantBridgeError):
    """Installing the selected wheel failed (hash mismatch, installer error)."""


class ExportError(VariantBridgeError):
    """An environment could not be exported."""


class NotRegularFileError(VariantBridgeError, OSError):
    """A file to write or read exists and is not a regular file (a device, a FIFO, a directory).

    Renaming over it would replace ``/dev/full`` or a named pipe with a plain file, so it is
    refused. :attr:`kind` says what it is (``"a FIFO"``).
    """

    def __init__(self, path: str, kind: str) -> None:
        super().__init__(errno.EINVAL, f"{kind}, not a regular file", path)
        self.kind = kind

    def __str__(self) -> str:
        """``…/x.yaml: a FIFO, not a regular file`` (one line, as every command says it)."""
        return f"{clip(str(self.filename), limit=300)}: {self.strerror}"


class HashMismatch(VariantBridgeError, ValueError):
    """Bytes read or copied do not have the expected sha256."""

    def __init__(self, source: str, expected: str, actual: str) -> None:
        super().__init__(f"{source}: expected sha256 {expected}, got {actual}")
        self.source, self.expected, self.actual = source, expected, actual


class UnsafeArchive(VariantBridgeError, ValueError):
    """An archive (a wheel, a conda package) names a path outside its root (``..``, an absolute
    path, a link that leaves it) or exceeds a documented cap (members, size, compression
    ratio, entry points); refused before anything of it is written (docs/security.md)."""


class InvalidArchList(VariantBridgeError, ValueError):
    """A CUDA architecture list in no spelling the bridge reads (maintainer commands)."""


class ReleaseInputError(VariantBridgeError):
    """A maintainer input (a recipe, a variant config, a matrix, built packages or wheels) that
    cannot be read or does not describe one release."""


class UnverifiedFile(VariantBridgeError):
    """A file to install has no hash to check it against, and hashes are required."""


class VariantMismatch(InvalidMetadata):
    """A wheel's own ``variant.json`` disagrees with the index's ``variants.json`` for its label."""
