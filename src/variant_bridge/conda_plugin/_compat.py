"""conda's plugin types as the running conda has them (conda 25.x to 26.x), found by looking.

Fields were added across releases: subcommand ``aliases`` (26.x), the health check's ``fixer``,
``summary`` and ``fix`` (``conda doctor --fix``, 26.x), the environment exporters themselves
(25.x) with ``environment_format`` and ``multiplatform_export`` later, setting ``aliases``. conda
26.9 removed the types' re-exports from ``conda.plugins``, so the types are read from
``conda.plugins.types``, where every release has had them. Each builder keeps the keywords the
running conda's dataclass declares and drops the rest, so one plugin serves every release instead
of pinning one (docs/conda.md, "Supported conda versions").
"""

from __future__ import annotations

import dataclasses
from typing import Any

__all__ = [
    "environment_format",
    "exporter",
    "fields_of",
    "health_check",
    "post_command",
    "setting",
    "subcommand",
    "virtual_package",
]


def _types() -> Any:
    from conda.plugins import types

    return types


def fields_of(cls: type) -> frozenset[str]:
    """The fields a conda plugin dataclass declares (``init=False`` classes included)."""
    return frozenset(f.name for f in dataclasses.fields(cls))


def _build(cls: type, **given: Any) -> Any:
    known = fields_of(cls)
    return cls(**{name: value for name, value in given.items() if name in known})


def subcommand(**given: Any) -> Any:
    """A ``CondaSubcommand`` (``aliases`` kept where supported; no ``configure_parser``: the
    action receives the remaining argv, as conda's greedy subcommands do)."""
    return _build(_types().CondaSubcommand, **given)


def health_check(**given: Any) -> Any:
    """A ``CondaHealthCheck`` (``fixer``, ``summary``, ``fix`` kept where supported)."""
    return _build(_types().CondaHealthCheck, **given)


def post_command(**given: Any) -> Any:
    return _build(_types().CondaPostCommand, **given)


def setting(**given: Any) -> Any:
    return _build(_types().CondaSetting, **given)


def virtual_package(**given: Any) -> Any:
    return _build(_types().CondaVirtualPackage, **given)


def exporter(**given: Any) -> Any | None:
    """A ``CondaEnvironmentExporter``; ``None`` where conda has no exporters (before 25.x)."""
    cls = getattr(_types(), "CondaEnvironmentExporter", None)
    return None if cls is None else _build(cls, **given)


def environment_format(kind: str) -> Any | None:
    """conda's ``EnvironmentFormat`` member *kind* (``environment``, ``lockfile``); ``None``
    where conda has no such enum (the exporter then keeps conda's default)."""
    formats = getattr(_types(), "EnvironmentFormat", None)
    return None if formats is None else getattr(formats, kind, None)
