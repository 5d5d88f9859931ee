"""Write the CPU profiles archspec gives each CPU table as Python (``_archspec_snapshot.py``).

A cold ``detect`` needs one microarchitecture's profile (its generation values and flags), but
asking archspec for it costs ~10 ms: ``archspec.cpu`` imports its host detection (platform,
subprocess, ctypes) and parses its whole database. The snapshot holds the same profiles, keyed by
what they were computed from: archspec's version, the size and CRC-32 of the database file it
reads (``json/cpu/microarchitectures.json``), and each table's ``repr``.
:func:`~variant_bridge.translate.microarchitectures.profile` uses it only when all of these
still match and archspec is not told to read another database (``ARCHSPEC_CPU_DIR``,
``ARCHSPEC_EXTENSION_CPU_DIR``); otherwise it asks archspec, so the snapshot can be outdated but
never wrong. ``tests/translate/test_archspec_snapshot.py`` fails until it is regenerated:

    python -m variant_bridge.translate._archspec_compiler
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from variant_bridge.mappings import CpuTable
from variant_bridge.mappings._compiler import fingerprint
from variant_bridge.translate.microarchitectures import archspec_version, database_path, profiles

__all__ = ["REFRESH", "SNAPSHOT", "render"]

SNAPSHOT = Path(__file__).with_name("_archspec_snapshot.py")
REFRESH = "python -m variant_bridge.translate._archspec_compiler"

_HEADER = '''"""archspec's CPU profiles per CPU table: GENERATED, do not edit.

Refresh with `{refresh}` (tests/translate/test_archspec_snapshot.py checks it is current).
Per table namespace: (generic, generation values, flags) of each microarchitecture.
"""

# ruff: noqa: E501

from __future__ import annotations

__all__ = ["ARCHSPEC_VERSION", "DATABASE", "PROFILES", "TABLES"]

ARCHSPEC_VERSION = {version!r}
DATABASE = {database!r}
"""(size, CRC-32) of archspec's microarchitectures.json."""
TABLES = {{
{tables}}}
"""Each CPU table's repr: the profiles depend on its fields."""
PROFILES: dict[str, dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]]] = {{
{profiles}}}
'''


def render(tables: Iterable[CpuTable]) -> str:
    """``_archspec_snapshot.py`` for *tables*, from the archspec installed here."""
    listed = list(tables)
    table_lines = "".join(f"    {t.namespace!r}: {repr(t)!r},\n" for t in listed)
    profile_lines = ""
    for table in listed:
        profile_lines += f"    {table.namespace!r}: {{\n"
        for name, p in sorted(profiles(table).items()):
            profile_lines += f"        {name!r}: ({p.generic!r}, {p.generations!r}, {p.flags!r}),\n"
        profile_lines += "    },\n"
    return _HEADER.format(
        refresh=REFRESH,
        version=archspec_version(),
        database=fingerprint(database_path().read_bytes()),
        tables=table_lines,
        profiles=profile_lines,
    )


def main() -> None:
    from variant_bridge.mappings import load_tables

    SNAPSHOT.write_text(render(load_tables().cpus), encoding="utf-8")
    print(f"wrote {SNAPSHOT}")


if __name__ == "__main__":
    main()
