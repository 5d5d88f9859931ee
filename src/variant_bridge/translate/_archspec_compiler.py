"""Write archspec's answers as Python (``variant_bridge/_archspec_snapshot.py``): every
microarchitecture's family, and the CPU profile each CPU table sees (generation values, flags).

When the snapshot applies, and why it is never wrong, is :mod:`variant_bridge._archspec`'s
business; each table's profiles also carry the table's ``repr``, since they depend on its fields.
``tests/translate/test_archspec_snapshot.py`` fails until the file is regenerated:

    python -m variant_bridge.translate._archspec_compiler
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from variant_bridge import _archspec
from variant_bridge.mappings import CpuTable
from variant_bridge.translate.microarchitectures import profiles

__all__ = ["REFRESH", "SNAPSHOT", "render"]

SNAPSHOT = Path(_archspec.__file__).with_name("_archspec_snapshot.py")
REFRESH = "python -m variant_bridge.translate._archspec_compiler"

_HEADER = '''"""archspec's answers (variant_bridge._archspec): GENERATED, do not edit.

Refresh with `{refresh}` (tests/translate/test_archspec_snapshot.py checks it is current).
Every microarchitecture's family; per CPU table namespace, (generic, generation values, flags)
of each microarchitecture of its family.
"""

# ruff: noqa: E501

from __future__ import annotations

__all__ = ["ARCHSPEC_VERSION", "DATABASE", "FAMILIES", "PROFILES", "TABLES"]

ARCHSPEC_VERSION = {version!r}
DATABASE = {database!r}
"""(size, CRC-32) of archspec's microarchitectures.json."""
FAMILIES: dict[str, str] = {{
{families}}}
"""Every microarchitecture -> its family."""
TABLES = {{
{tables}}}
"""Each CPU table's repr: the profiles depend on its fields."""
PROFILES: dict[str, dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]]] = {{
{profiles}}}
'''


def render(tables: Iterable[CpuTable]) -> str:
    """``_archspec_snapshot.py`` for *tables*, from the archspec installed here."""
    import archspec.cpu

    listed = list(tables)
    families = "".join(
        f"    {name!r}: {target.family.name!r},\n"
        for name, target in sorted(archspec.cpu.TARGETS.items())
    )
    table_lines = "".join(f"    {t.namespace!r}: {repr(t)!r},\n" for t in listed)
    profile_lines = ""
    for table in listed:
        profile_lines += f"    {table.namespace!r}: {{\n"
        for name, p in sorted(profiles(table).items()):
            profile_lines += f"        {name!r}: ({p.generic!r}, {p.generations!r}, {p.flags!r}),\n"
        profile_lines += "    },\n"
    return _HEADER.format(
        refresh=REFRESH,
        version=_archspec.version(),
        database=_archspec.fingerprint(_archspec.database_path().read_bytes()),
        families=families,
        tables=table_lines,
        profiles=profile_lines,
    )


def main() -> None:
    from variant_bridge.mappings import load_tables

    SNAPSHOT.write_text(render(load_tables().cpus), encoding="utf-8")
    print(f"wrote {SNAPSHOT}")


if __name__ == "__main__":
    main()
