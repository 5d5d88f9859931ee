"""The mapping tables (``mappings/*.yaml``): the one source of the bridge's facts.

The YAML files are data: namespaces, features, value ranges, which virtual package each feature
maps to, reverse spec templates, override variables, subdirs and platform tags, and the PyPI <->
conda name table. :func:`load_tables` reads the packaged files once and checks every key
(:mod:`variant_bridge.mappings._schema`); a broken edit is reported in one go, each problem with
its file and key path. A process that finds the files unchanged takes the same tables from
``_compiled.py`` instead (generated from them, keyed by their size and CRC-32: see
``_compiler``), which skips PyYAML. Microarchitecture facts are not here:
:mod:`variant_bridge.translate` asks archspec. Nothing is read at import time.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from variant_bridge.errors import MappingTableError
from variant_bridge.mappings.tables import (
    CPU_TABLE_FILES,
    TABLE_FILES,
    AmdFeature,
    AmdTable,
    CpuTable,
    FamilyKey,
    IntelTable,
    IntRange,
    LabelConvention,
    MappingTables,
    NameKind,
    NameMapping,
    NameTable,
    NvccRelease,
    NvidiaFeature,
    NvidiaRule,
    NvidiaTable,
    OperatingSystem,
    OverrideVariable,
    PlatformTable,
    PlatformTagRule,
    SubdirInfo,
    TagAlias,
    ToolkitTable,
)

if TYPE_CHECKING:
    from variant_bridge.mappings._schema import NVIDIA_RULES

__all__ = [
    "CPU_TABLE_FILES",
    "NVIDIA_RULES",
    "TABLE_FILES",
    "AmdFeature",
    "AmdTable",
    "CpuTable",
    "FamilyKey",
    "IntRange",
    "IntelTable",
    "LabelConvention",
    "MappingTables",
    "NameKind",
    "NameMapping",
    "NameTable",
    "NvccRelease",
    "NvidiaFeature",
    "NvidiaRule",
    "NvidiaTable",
    "OperatingSystem",
    "OverrideVariable",
    "PlatformTable",
    "PlatformTagRule",
    "SubdirInfo",
    "TagAlias",
    "ToolkitTable",
    "compiled_tables",
    "load_tables",
    "parse_tables",
    "read_tables",
]


def __getattr__(name: str) -> Any:
    if name == "NVIDIA_RULES":  # the schema's, imported only when asked for
        from variant_bridge.mappings import _schema

        return _schema.NVIDIA_RULES
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@functools.cache
def load_tables() -> MappingTables:
    """The packaged tables, read and validated once per process.

    :raises MappingTableError: listing every problem, when a file is missing or invalid.
    """
    compiled = compiled_tables(Path(__file__).parent)
    if compiled is not None:
        return compiled
    from importlib import resources

    return read_tables(resources.files(__name__))


def compiled_tables(directory: Path) -> MappingTables | None:
    """The tables from ``_compiled.py`` when it was generated from the files in *directory*
    (same size and CRC-32), else ``None``: the YAML is then read, so an edit is never shadowed."""
    from variant_bridge.mappings import _compiled
    from variant_bridge.mappings._compiler import fingerprint

    try:
        for name in TABLE_FILES:
            if _compiled.FINGERPRINTS.get(name) != fingerprint((directory / name).read_bytes()):
                return None
    except OSError:  # not plain files (a zip): read_tables() says what is wrong, if anything
        return None
    return _compiled.build()


def read_tables(directory: Any) -> MappingTables:
    """Read and validate the tables in *directory* (a path or an importlib resource)."""
    import yaml  # lazy: only once a command needs the tables

    # libyaml's safe loader when pyyaml was built with it: about 10x faster start-up.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    raw: dict[str, Any] = {}
    problems: list[str] = []
    for name in TABLE_FILES:
        path = directory / name
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as e:
            problems.append(f"{name}: cannot read {path}: {e.strerror or e}")
            continue
        try:
            raw[name] = yaml.load(text, Loader=loader)
        except yaml.YAMLError as e:
            detail = " ".join(str(e).split())
            problems.append(f"{name}: invalid YAML: {detail}")
    if problems:
        raise MappingTableError(problems)
    return parse_tables(raw)


def parse_tables(raw: Mapping[str, Any]) -> MappingTables:
    """Build the frozen tables from decoded YAML (file name -> document).

    :raises MappingTableError: with every problem found, e.g.
        ``nvidia.yaml: features.sm_arch.virtual_package: expected a string starting with '__'``.
    """
    from variant_bridge.mappings._schema import tables_from_documents

    tables, problems = tables_from_documents(raw)
    if tables is None:
        raise MappingTableError(problems or ["no tables"])
    return tables
