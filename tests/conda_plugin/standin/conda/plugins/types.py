"""The dataclasses plugin hooks yield, with conda 26.x's documented fields (keyword-only
``CondaSubcommand`` with ``aliases``; the health check's ``fixer``/``summary``/``fix``; the
exporters with ``environment_format``)."""

from __future__ import annotations

import enum
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from conda.auxlib import NULL
from conda.exceptions import PluginError


@dataclass
class CondaPlugin:
    name: str

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise PluginError(f"Invalid plugin name for {self!r}")
        self.name = self.name.lower().strip()


@dataclass(init=False)
class CondaSubcommand(CondaPlugin):
    summary: str
    action: Callable[..., int | None]
    aliases: tuple[str, ...] = field(default_factory=tuple)
    configure_parser: Callable[..., None] | None = None

    def __init__(
        self,
        *,
        name: str,
        summary: str,
        action: Callable[..., int | None],
        configure_parser: Callable[..., None] | None = None,
        aliases: str | Iterable[str] = (),
    ) -> None:
        super().__init__(name=name)
        self.summary = summary
        self.action = action
        self.configure_parser = configure_parser
        aliases = (aliases,) if isinstance(aliases, str) else aliases
        self.aliases = tuple(dict.fromkeys(a.lower().strip() for a in aliases))
        if self.name in self.aliases or any(not a for a in self.aliases):
            raise PluginError(f"Invalid plugin aliases for {self!r}")


@dataclass
class CondaVirtualPackage(CondaPlugin):
    """version/build: a value or a callable evaluated late; ``NULL`` means absent. With
    ``override_entity``, ``CONDA_OVERRIDE_<NAME>`` (or the context's
    ``override_virtual_packages``) replaces that entity without evaluating it; an empty override
    is ``empty_override``."""

    version: Any
    build: Any
    override_entity: str | None = None
    empty_override: Any = NULL
    version_validation: Callable[[str], str | None] | None = None

    def to_virtual_package(self) -> Any:
        from conda.base.context import context
        from conda.models.records import PackageRecord

        version, build = self.version, self.build
        if self.override_entity:
            given = os.environ.get(f"CONDA_OVERRIDE_{self.name}".upper())
            if given is None:
                given = (context.override_virtual_packages or {}).get(self.name)
            if given is not None:
                value = given.strip() or self.empty_override
                if self.override_entity == "version":
                    version = value
                else:
                    build = value
        version = version() if callable(version) else version
        build = build() if callable(build) else build
        if version is NULL or build is NULL:
            return NULL
        return PackageRecord.virtual_package(f"__{self.name}", version, build)


@dataclass
class CondaPreCommand(CondaPlugin):
    action: Callable[[str], None]
    run_for: set[str]


@dataclass
class CondaPostCommand(CondaPlugin):
    action: Callable[[str], None]
    run_for: set[str]


@dataclass
class CondaHealthCheck(CondaPlugin):
    action: Callable[[str, bool], None]
    fixer: Callable[..., int] | None = None
    summary: str | None = None
    fix: str | None = None


@dataclass
class CondaSetting(CondaPlugin):
    description: str
    parameter: Any
    aliases: tuple[str, ...] = ()


class EnvironmentFormat(enum.Enum):
    lockfile = "lockfile"
    environment = "environment"


@dataclass
class CondaEnvironmentExporter(CondaPlugin):
    aliases: tuple[str, ...]
    default_filenames: tuple[str, ...]
    export: Callable[[Any], str] | None = None
    multiplatform_export: Callable[[Iterable[Any]], str] | None = None
    description: str | None = None
    environment_format: EnvironmentFormat = EnvironmentFormat.environment

    def __post_init__(self) -> None:
        super().__post_init__()
        self.aliases = tuple(dict.fromkeys(a.lower().strip() for a in self.aliases))
        if bool(self.export) == bool(self.multiplatform_export):
            raise PluginError(f"Exactly one of export or multiplatform_export for {self!r}")
        if self.description is None:
            self.description = self.name
