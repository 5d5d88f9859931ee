"""Write a mixed conda + PyPI environment back as ``environment.yml``, a pixi manifest or a
``pylock.toml``: build the :class:`ExportModel` of an environment snapshot
(:func:`build_export`), print it in a format (:func:`render`), write or update a file
atomically (:func:`write_export`, :func:`update_manifest`), and ship the variant wheels under
names every installer accepts (:func:`copy_wheels`). :mod:`variant_bridge.jobs.export` reads an
environment and wires these (docs/share.md).
"""

from __future__ import annotations

from variant_bridge.export.build import Pinning, build_export
from variant_bridge.export.files import (
    UpdateResult,
    check_target,
    read_manifest,
    update_manifest,
    update_manifest_text,
    write_export,
)
from variant_bridge.export.formats import (
    FORMATS,
    ExportFormat,
    format_for,
    format_notes,
    render,
    to_dict,
)
from variant_bridge.export.model import ExportModel, IndexOptions, PinMode, PipRequirement
from variant_bridge.export.wheels_dir import copied_wheels, copy_wheels

__all__ = [
    "FORMATS",
    "ExportFormat",
    "ExportModel",
    "IndexOptions",
    "PinMode",
    "Pinning",
    "PipRequirement",
    "UpdateResult",
    "build_export",
    "check_target",
    "copied_wheels",
    "copy_wheels",
    "format_for",
    "format_notes",
    "read_manifest",
    "render",
    "to_dict",
    "update_manifest",
    "update_manifest_text",
    "write_export",
]


def __dir__() -> list[str]:
    return __all__
