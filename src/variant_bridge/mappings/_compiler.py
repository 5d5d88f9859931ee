"""Write the validated tables as Python (``_compiled.py``), so a process can skip YAML.

Reading the YAML costs PyYAML's import plus parsing and checking every key (~20 ms per process);
importing the same tables as constructor calls from a cached ``.pyc`` costs well under 1 ms.
``_compiled.py`` records the size and CRC-32 of each YAML file it was generated from:
:func:`~variant_bridge.mappings.load_tables` uses it only when every file still has them, and
reads the YAML otherwise, so an edited table is never shadowed by a stale copy. (CRC-32, not
sha256: the check guards against edits, not attacks, and hashlib's import alone would cost more
than the whole check; CI compares the generated text exactly.)
``tests/mappings/test_compiled.py`` fails until the file is regenerated:

    python -m variant_bridge.mappings._compiler
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from variant_bridge.mappings.tables import TABLE_FILES, MappingTables

__all__ = ["COMPILED", "REFRESH", "fingerprint", "render"]

COMPILED = Path(__file__).with_name("_compiled.py")
REFRESH = "python -m variant_bridge.mappings._compiler"

_HEADER = '''"""The mapping tables as Python: GENERATED from the YAML files beside it, do not edit.

Refresh with `{refresh}` (tests/mappings/test_compiled.py checks it is current).
"""

# ruff: noqa: E501

from __future__ import annotations

from types import MappingProxyType

from variant_bridge.mappings.tables import (
{imports}
)

__all__ = ["FINGERPRINTS", "build"]

FINGERPRINTS = {fingerprints}
"""(size, CRC-32) of each YAML file these tables were generated from."""


def build() -> MappingTables:
    return {tables}
'''


def fingerprint(data: bytes) -> tuple[int, int]:
    """What ``_compiled.py`` records of a YAML file's bytes: (size, CRC-32)."""
    return len(data), zlib.crc32(data)


def render(tables: MappingTables, sources: Mapping[str, tuple[int, int]]) -> str:
    """``_compiled.py`` for *tables*, read from files with the fingerprints *sources*."""
    classes: set[str] = set()
    body = _source(tables, classes, indent=1)
    return _HEADER.format(
        refresh=REFRESH,
        imports="\n".join(f"    {name}," for name in sorted(classes)),
        fingerprints=_source(dict(sources), classes, indent=0),
        tables=body,
    )


def _source(value: Any, classes: set[str], indent: int) -> str:
    """*value* as a Python expression that rebuilds it (init fields only; the rest is derived):
    on one line when it fits in 100 columns, else one item per line."""
    pad, inner = "    " * indent, "    " * (indent + 1)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        classes.add(type(value).__name__)
        fields = [
            (f"{f.name}=", _source(getattr(value, f.name), classes, indent + 1))
            for f in dataclasses.fields(value)
            if f.init
        ]
        return _enclose(f"{type(value).__name__}(", fields, ")", pad, inner)
    if isinstance(value, MappingProxyType):
        return f"MappingProxyType({_source(dict(value), classes, indent)})"
    if isinstance(value, dict):
        items = [(f"{k!r}: ", _source(v, classes, indent + 1)) for k, v in value.items()]
        return _enclose("{", items, "}", pad, inner)
    if isinstance(value, tuple):
        parts = [("", _source(v, classes, indent + 1)) for v in value]
        return _enclose("(", parts, ",)", pad, inner) if parts else "()"
    if isinstance(value, frozenset):
        return f"frozenset({sorted(value)!r})"
    if value is None or isinstance(value, (str, int, bool)):
        return repr(value)
    raise TypeError(f"cannot write {type(value).__name__} as a literal")


def _enclose(head: str, items: list[tuple[str, str]], tail: str, pad: str, inner: str) -> str:
    line = head + ", ".join(key + text for key, text in items) + tail
    if len(pad) + len(line) <= 100 and "\n" not in line:
        return line
    lines = "".join(f"{inner}{key}{text},\n" for key, text in items)
    return f"{head}\n{lines}{pad}{tail.lstrip(',')}"


def main() -> None:
    from importlib import resources

    from variant_bridge.mappings import read_tables

    directory = Path(str(resources.files("variant_bridge.mappings")))
    sources = {name: fingerprint((directory / name).read_bytes()) for name in TABLE_FILES}
    COMPILED.write_text(render(read_tables(directory), sources), encoding="utf-8")
    print(f"wrote {COMPILED}")


if __name__ == "__main__":
    main()
