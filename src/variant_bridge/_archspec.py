"""archspec's microarchitecture database as the core reads it: through archspec, or through a
generated snapshot of archspec's answers when that provably still holds.

``import archspec.cpu`` costs ~7 ms (it imports its host detection: platform, subprocess,
ctypes) and its first lookup parses the whole database (~2 ms); detection needs one profile and
checking a declared ``--target archspec=NAME`` needs the names. ``_archspec_snapshot.py`` holds
both, keyed by what they were computed from: archspec's version and the size and CRC-32 of the
database file it reads (``json/cpu/microarchitectures.json``). :func:`snapshot` returns it only
when these match and archspec is not told to read another database (``ARCHSPEC_CPU_DIR``,
``ARCHSPEC_EXTENSION_CPU_DIR``); otherwise callers ask archspec, so the snapshot can be outdated
but never wrong. ``tests/translate/test_archspec_snapshot.py`` fails until it is regenerated
(``python -m variant_bridge.translate._archspec_compiler``).

archspec's database is package data (as the mapping tables are ours): reading it, and archspec's
two variables that replace it, is the one file and environment access of the pure core.
"""

from __future__ import annotations

import functools
import os
import zlib
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType

__all__ = ["DATABASE_VARIABLES", "database_path", "families", "fingerprint", "snapshot", "version"]

DATABASE_VARIABLES = ("ARCHSPEC_CPU_DIR", "ARCHSPEC_EXTENSION_CPU_DIR")
"""archspec reads another database (or extends its own) when one of these is set."""


def version() -> str:
    """The installed archspec's version."""
    import archspec  # the package alone: a version string, no detection, no database

    return str(getattr(archspec, "__version__", "?"))


def database_path() -> Path:
    """The microarchitecture database archspec ships (and reads, unless told otherwise)."""
    import archspec

    return Path(archspec.__file__).parent / "json" / "cpu" / "microarchitectures.json"


def fingerprint(data: bytes) -> tuple[int, int]:
    """What the snapshot records of the database file: (size, CRC-32)."""
    return len(data), zlib.crc32(data)


def snapshot(
    *, environ: Mapping[str, str] = os.environ, database: Path | None = None
) -> ModuleType | None:
    """``_archspec_snapshot`` when it holds the answers archspec would give here and now (the
    same archspec version, the same database file, no database variable set), else ``None``."""
    if any(environ.get(name) for name in DATABASE_VARIABLES):
        return None
    return _snapshot_of(database or database_path())


@functools.cache
def _snapshot_of(database: Path) -> ModuleType | None:
    # Once per process and file, as archspec reads its database once per process.
    from variant_bridge import _archspec_snapshot

    if version() != _archspec_snapshot.ARCHSPEC_VERSION:
        return None
    try:
        data = database.read_bytes()
    except OSError:
        return None
    if fingerprint(data) != _archspec_snapshot.DATABASE:
        return None
    return _archspec_snapshot


def families() -> Mapping[str, str]:
    """Every microarchitecture archspec knows -> its family (``haswell`` -> ``x86_64``)."""
    found = snapshot()
    if found is not None:
        names: Mapping[str, str] = found.FAMILIES
        return names
    import archspec.cpu

    return {name: target.family.name for name, target in archspec.cpu.TARGETS.items()}
