"""The variant providers a generated ``[variant]`` table names (``mappings/providers.yaml``)."""

from __future__ import annotations

import functools
from importlib import resources
from typing import Any

from variant_bridge.errors import MappingTableError

__all__ = ["provider_tables"]

_CHOICES = ("upstream", "bridge")


@functools.cache
def _table() -> dict[str, dict[str, dict[str, Any]]]:
    import yaml

    text = resources.files("variant_bridge.mappings").joinpath("providers.yaml").read_text()
    data = yaml.safe_load(text)
    problems = []
    if not isinstance(data, dict) or data.get("schema") != 1:
        problems.append("providers.yaml: expected schema: 1")
    for choice in _CHOICES:
        entries = data.get(choice) if isinstance(data, dict) else None
        if not isinstance(entries, dict):
            problems.append(f"providers.yaml: {choice} must map namespaces to providers")
            continue
        for ns, entry in entries.items():
            if not isinstance(entry, dict) or set(entry) != {"requires", "plugin-api"}:
                problems.append(f"providers.yaml: {choice}.{ns} needs requires and plugin-api")
    if problems:
        raise MappingTableError(problems)
    return {choice: data[choice] for choice in _CHOICES}


def provider_tables(choice: str) -> dict[str, dict[str, Any]]:
    """Namespace -> ``{"requires": [...], "plugin-api": "..."}`` for ``upstream`` or ``bridge``;
    a namespace ``bridge`` has no plugin for (intel) takes its ``upstream`` entry."""
    table = _table()
    merged = {**table["upstream"], **table[choice]}
    return {ns: dict(entry) for ns, entry in merged.items()}
