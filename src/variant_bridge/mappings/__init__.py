"""The mapping tables (``mappings/*.yaml``): the one source of the bridge's facts.

The YAML files are data: namespaces, features, value ranges, which virtual package each feature
maps to, reverse spec templates, override variables, subdirs and platform tags, and the PyPI <->
conda name table. :func:`load_tables` reads the packaged files once and checks every key
(:mod:`variant_bridge.mappings._schema`); a broken edit is reported in one go, each problem with
its file and key path. Microarchitecture facts are not here: :mod:`variant_bridge.translate` asks
archspec. Nothing is read at import time.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from importlib import resources
from typing import Any

from variant_bridge.errors import MappingTableError
from variant_bridge.mappings._schema import (
    CPU_TABLE_FILES,
    NVIDIA_RULES,
    TABLE_FILES,
    tables_from_documents,
)
from variant_bridge.mappings.tables import (
    CpuTable,
    IntRange,
    MappingTables,
    NameKind,
    NameMapping,
    NameTable,
    NvidiaFeature,
    NvidiaRule,
    NvidiaTable,
    OperatingSystem,
    OverrideVariable,
    PlatformTable,
    PlatformTagRule,
    SubdirInfo,
    TagAlias,
)

__all__ = [
    "CPU_TABLE_FILES",
    "NVIDIA_RULES",
    "TABLE_FILES",
    "CpuTable",
    "IntRange",
    "MappingTables",
    "NameKind",
    "NameMapping",
    "NameTable",
    "NvidiaFeature",
    "NvidiaRule",
    "NvidiaTable",
    "OperatingSystem",
    "OverrideVariable",
    "PlatformTable",
    "PlatformTagRule",
    "SubdirInfo",
    "TagAlias",
    "load_tables",
    "parse_tables",
    "read_tables",
]


@functools.cache
def load_tables() -> MappingTables:
    """The packaged tables, read and validated once per process.

    :raises MappingTableError: listing every problem, when a file is missing or invalid.
    """
    return read_tables(resources.files(__name__))


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
    tables, problems = tables_from_documents(raw)
    if tables is None:
        raise MappingTableError(problems or ["no tables"])
    return tables
