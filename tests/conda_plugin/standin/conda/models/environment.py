"""conda's ``Environment`` as an exporter receives it (the fields the export reads)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Environment:
    platform: str
    name: str | None = None
    prefix: str | None = None
    virtual_packages: list[Any] = field(default_factory=list)
    external_packages: dict[str, list[str]] = field(default_factory=dict)
