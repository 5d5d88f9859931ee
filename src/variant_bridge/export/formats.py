"""The file formats an export is written in, ``environment-yml``, ``pixi-toml`` and ``pylock``
(PEP 751): choosing one from a file name, and rendering a model in it (docs/share.md,
"environment.yml", "pixi", "pylock.toml")."""

from __future__ import annotations

import os
from typing import Any, Literal

from variant_bridge.errors import ExportError
from variant_bridge.export import environment_yml, pixi_toml, pylock
from variant_bridge.export.model import ExportModel
from variant_bridge.export.pixi_toml.render import notes as pixi_notes

__all__ = ["FORMATS", "ExportFormat", "format_for", "format_notes", "render", "to_dict"]

ExportFormat = Literal["environment-yml", "pixi-toml", "pylock"]
FORMATS: tuple[ExportFormat, ...] = ("environment-yml", "pixi-toml", "pylock")


def format_for(path: str | os.PathLike[str] | None) -> ExportFormat | None:
    """The format a file name implies (``pylock.toml``, ``pylock.NAME.toml``: pylock; other
    ``*.toml``: pixi-toml; ``*.yml``/``*.yaml``: environment-yml), or ``None``."""
    if path is None:
        return None
    name = os.path.basename(path).lower()
    if name.startswith("pylock.") and name.endswith(".toml"):
        return "pylock"
    if name.endswith(".toml"):
        return "pixi-toml"
    if name.endswith((".yml", ".yaml")):
        return "environment-yml"
    return None


def render(model: ExportModel, format: ExportFormat) -> str:
    """The text of a new file in *format*."""
    if format == "environment-yml":
        return environment_yml.render(model)
    if format == "pixi-toml":
        return pixi_toml.render(model)
    if format == "pylock":
        return pylock.render(model)
    raise ExportError(f"unknown export format {format!r}: expected one of {', '.join(FORMATS)}")


def to_dict(model: ExportModel, format: ExportFormat) -> dict[str, Any]:
    """The content of a new file in *format*, as plain data."""
    if format == "environment-yml":
        return environment_yml.to_dict(model)
    if format == "pylock":
        return pylock.to_dict(model)
    return pixi_toml.to_dict(model)


def format_notes(model: ExportModel, format: ExportFormat) -> list[str]:
    """What a new file in *format* leaves unsaid (said on stderr, and in the file's header): the
    requirements its client cannot check by itself."""
    if format == "environment-yml":
        return environment_yml.notes(model)
    if format == "pixi-toml":
        return pixi_notes(model, rich=True)
    return []
