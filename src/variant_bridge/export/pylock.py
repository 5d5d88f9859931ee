"""``pylock.toml`` (PEP 751) for the PyPI part of an environment: every wheel pinned to its file
(url or path, sha256, size), the variant label and properties of each variant wheel in
``[packages.tool.variant-bridge]`` (PEP 751 has no field for them; PEP 825's draft
``variants-json`` is not read by any installer yet), and the bridged view in
``[tool.variant-bridge]`` (docs/share.md, "pylock.toml").

A wheel whose file name carries a variant label cannot be in a pylock.toml today: packaging
(PEP 751's reference) refuses the name as a wheel filename, and uv 0.13.9 refuses to install it,
even with ``--preview-features wheel-variants``. The lock therefore always names the
installable copies under their non-variant names (``--wheels-dir``, by default
``variant-wheels/`` beside the lock), which install with any uv; the variant files they are
copies of are recorded in the tool table.
"""

from __future__ import annotations

import posixpath
from typing import Any
from urllib.parse import unquote, urlsplit

from variant_bridge._version import __version__
from variant_bridge.errors import ExportError
from variant_bridge.export._header import copies_lines, intro_lines
from variant_bridge.export.model import ExportModel, PipRequirement
from variant_bridge.export.pixi_toml.render import toml_value
from variant_bridge.indexes import url_to_path

__all__ = ["LOCK_VERSION", "TOOL", "check", "header", "render", "to_dict"]

LOCK_VERSION = "1.0"
TOOL = "variant-bridge"
"""The ``[tool]`` table name (PEP 751: a tool's own name)."""


def _file_name(location: str) -> str:
    return unquote(posixpath.basename(urlsplit(location).path))


def _wheel(model: ExportModel, requirement: PipRequirement) -> dict[str, Any]:
    assert requirement.url is not None
    wheel: dict[str, Any]
    if requirement.copy is not None:
        wheel = {"name": _file_name(requirement.copy)}
        wheel["path"] = requirement.copy_relative or requirement.copy
    elif requirement.url.startswith("file:"):
        path = str(url_to_path(requirement.url))
        wheel = {"name": _file_name(path), "path": model.local_reference(path)}
    else:
        wheel = {"name": _file_name(requirement.url), "url": requirement.url}
    if requirement.size is not None:
        wheel["size"] = requirement.size
    wheel["hashes"] = {"sha256": requirement.file_sha256}
    return wheel


def _variant(requirement: PipRequirement) -> dict[str, Any]:
    assert requirement.url is not None
    assert requirement.label is not None
    tool: dict[str, Any] = {"label": requirement.label, "properties": list(requirement.properties)}
    tool["variant-file"] = _file_name(requirement.url)
    tool["installed-from"] = requirement.url
    return tool


def _package(model: ExportModel, requirement: PipRequirement) -> dict[str, Any]:
    package: dict[str, Any] = {"name": requirement.name, "version": requirement.version}
    package["wheels"] = [_wheel(model, requirement)]
    if requirement.label is not None:
        package["tool"] = {TOOL: _variant(requirement)}
    return package


def to_dict(model: ExportModel) -> dict[str, Any]:
    """The pylock.toml content as plain data (what ``tomllib.loads`` of :func:`render` gives).
    Wheels that could not be pinned (``--allow-unpinned``) are left out: a lock has no
    ``name==version`` form."""
    lock: dict[str, Any] = {
        "lock-version": LOCK_VERSION,
        "created-by": TOOL,
        "packages": [_package(model, p) for p in model.pip if p.url is not None and p.sha256],
    }
    tool: dict[str, Any] = {
        "version": __version__,
        "exported-from": f"{model.origin} ({model.platform})",
        "bridged-view": list(model.view.lines()),
        "host-requirements": [h.spec for h in model.host_requirements if h.expressible],
    }
    lock["tool"] = {TOOL: tool}
    return lock


def header(model: ExportModel) -> list[str]:
    """The comment block: producer, source, bridged view and notes."""
    lines = intro_lines(model, "this lock")
    lines.append(
        "Install into an environment with: uv pip install -r pylock.toml (uv reads the paths "
        "relative to this file)."
    )
    unpinned = [p for p in model.pip if p.url is None or not p.sha256]
    if unpinned:
        lines.append(
            "Left out (no file to pin; install them separately): "
            + ", ".join(f"{p.name}=={p.version}" for p in unpinned)
        )
    lines += copies_lines(model, "the wheel paths")
    lines += [f"Note: {note}" for note in model.notes]
    return [" ".join(line.split()) if not line.startswith("  ") else line for line in lines]


def check(data: dict[str, Any]) -> None:
    """Refuse to write a lock ``packaging.pylock`` (the PEP 751 reference) does not accept.

    :raises ExportError: naming what packaging found wrong.
    """
    from packaging.pylock import Pylock, PylockValidationError

    if not data["packages"]:
        raise ExportError(
            "cannot write pylock.toml: no PyPI package has a file to pin, and a lock needs one"
        )
    try:
        Pylock.from_dict(data).validate()
    except PylockValidationError as e:
        raise ExportError(f"cannot write pylock.toml: it would not be valid ({e})") from e


def render(model: ExportModel) -> str:
    """The pylock.toml text (PEP 751), written by hand like the pixi manifest and checked with
    :func:`check` before it is returned."""
    data = to_dict(model)
    check(data)
    out = [f"# {line}".rstrip() for line in header(model)]
    out += [f"lock-version = {toml_value(data['lock-version'])}"]
    out += [f"created-by = {toml_value(data['created-by'])}"]
    for package in data["packages"]:
        out += ["", "[[packages]]"]
        out += [f"{key} = {toml_value(package[key])}" for key in ("name", "version")]
        for wheel in package["wheels"]:
            out += ["", "[[packages.wheels]]"]
            out += [f"{key} = {toml_value(value)}" for key, value in wheel.items()]
        for name, table in package.get("tool", {}).items():
            out += ["", f"[packages.tool.{name}]"]
            out += [f"{key} = {toml_value(value)}" for key, value in table.items()]
    for name, table in data["tool"].items():
        out += ["", f"[tool.{name}]"]
        out += [f"{key} = {toml_value(value)}" for key, value in table.items()]
    return "\n".join(out) + "\n"
