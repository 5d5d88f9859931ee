"""Applying an export to an existing ``pixi.toml`` or ``pyproject.toml`` ``[tool.pixi]`` in place,
with tomlkit, touching only what an export owns: the workspace channels (missing ones appended),
the platform entry of the exported subdir, the entries it pins in ``[dependencies]`` and
``[pypi-dependencies]``, the index keys of ``[pypi-options]`` and the NVIDIA provider's
``[activation.env]`` variables; every other key, table, comment and order stays. A workspace with
more platforms gets the pins in ``[target.<platform>.*]`` (docs/share.md, "Updating an existing
manifest").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import tomlkit
from tomlkit.container import Container
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import Array, InlineTable, Item, Table

from variant_bridge.errors import ExportError
from variant_bridge.export.channels import normalize_channel
from variant_bridge.export.model import ExportModel
from variant_bridge.export.pixi_toml.render import (
    MIN_PIXI,
    comments,
    platform_entry,
    table_lines,
    to_dict,
    toml_value,
)
from variant_bridge.uv_settings import DRIVER_VARIABLE, SM_ARCH_VARIABLE

__all__ = ["ManifestKind", "ManifestUpdate", "apply", "manifest_kind", "parse", "update"]

ManifestKind = Literal["pixi", "pyproject"]

_OWNED_VARIABLES = (DRIVER_VARIABLE, SM_ARCH_VARIABLE)
"""The ``[activation.env]`` keys an export writes, and may remove when no longer true."""


def manifest_kind(filename: str) -> ManifestKind:
    """``pyproject`` for a ``pyproject.toml``, else ``pixi``."""
    return "pyproject" if filename.rsplit("/", 1)[-1] == "pyproject.toml" else "pixi"


def parse(text: str, *, path: str) -> tomlkit.TOMLDocument:
    """*text* parsed, keeping comments and layout.

    :raises ExportError: *text* is not TOML (naming *path*).
    """
    try:
        return tomlkit.parse(text)
    except TOMLKitError as e:
        raise ExportError(f"cannot update {path!r}: not valid TOML ({e})") from e


@dataclass(frozen=True, slots=True)
class ManifestUpdate:
    """The updated manifest text and what the update wants the user to know."""

    text: str
    notes: tuple[str, ...] = ()


def update(text: str, model: ExportModel, *, kind: ManifestKind, path: str = "pixi.toml") -> str:
    """*text* (a pixi.toml or a pyproject.toml) with the export applied (see :func:`apply`).

    :raises ExportError: *text* is not TOML, or a table we must edit has another type.
    """
    return apply(text, model, kind=kind, path=path).text


def apply(
    text: str, model: ExportModel, *, kind: ManifestKind, path: str = "pixi.toml"
) -> ManifestUpdate:
    """*text* (a pixi.toml or a pyproject.toml) with the export applied (module docstring).

    When the workspace declares other platforms than the exported one, the exact pins (linux-64
    builds) would be wrong for them: they go to ``[target.<platform>.dependencies]``,
    ``[target.<platform>.pypi-dependencies]`` and ``[target.<platform>.activation.env]``, and the
    top-level tables are left alone, except for entries written exactly as this export writes them
    (an earlier single-platform export's), which move to the target tables with a note. A spec
    that is not an exact pin is never replaced without a note saying so.

    :raises ExportError: *text* is not TOML, or a table we must edit has another type.
    """
    doc = parse(text, path=path)
    data = to_dict(model)
    prefix = _prefix(kind)
    root = _pixi_root(doc, kind=kind, path=path)
    workspace = _merge_workspace(root, model, data, kind=kind, path=path, prefix=prefix)
    base, base_prefix, notes = _pin_tables(root, workspace, model, data, path=path, prefix=prefix)
    notes_by_table = comments(model)
    for name in ("dependencies", "pypi-dependencies"):
        if name in data:
            notes += _merge_pins(
                base, name, data[name], notes_by_table[name], path=path, prefix=base_prefix
            )
    if "pypi-options" in data:
        options = _table(root, "pypi-options", path=path, prefix=prefix)
        _merge_options(options, data["pypi-options"])
    if "activation" in data:
        _merge_activation(base, data["activation"]["env"], path=path, prefix=base_prefix)
    return ManifestUpdate(tomlkit.dumps(doc), tuple(notes))


def _merge_workspace(
    root: Any,
    model: ExportModel,
    data: dict[str, Any],
    *,
    kind: ManifestKind,
    path: str,
    prefix: str,
) -> Any:
    """The workspace (or, before pixi 0.40, project) table with the export's name, channels,
    platform entry and minimum pixi merged in."""
    workspace_key = "workspace" if "workspace" in root or "project" not in root else "project"
    workspace = _table(root, workspace_key, path=path, prefix=prefix)
    if kind == "pixi" and "name" not in workspace:
        workspace["name"] = model.name
    _merge_channels(workspace, data["workspace"]["channels"])
    _merge_platform(workspace, platform_entry(model), path=path)
    if model.platform_declaration.is_rich and "requires-pixi" not in workspace:
        workspace["requires-pixi"] = f">={MIN_PIXI}"
    return workspace


def _pin_tables(
    root: Any, workspace: Any, model: ExportModel, data: dict[str, Any], *, path: str, prefix: str
) -> tuple[Any, str, list[str]]:
    """Where the pins go: the top level, or ``[target.<platform>]`` when the workspace declares
    other platforms too (then this export's own earlier top-level pins move there, with a note).

    :returns: the table, its dotted prefix for messages, and the notes.
    """
    others = sorted(
        {str(s) for s in map(_subdir_of, workspace["platforms"]) if s} - {model.platform}
    )
    if not others:
        return root, prefix, []
    target = _table(root, "target", path=path, prefix=prefix, super_table=True)
    base_prefix = f"{prefix}target.{model.platform}."
    base = _table(target, model.platform, path=path, prefix=f"{prefix}target.", super_table=True)
    moved = _remove_own_top_level(root, data)
    kept = (
        f"; this export's earlier top-level pins moved there too ({', '.join(moved)}), "
        "the rest of the top-level tables was left as it was"
        if moved
        else "; the top-level tables were left as they were"
    )
    note = (
        f"{path}: the workspace also declares {', '.join(others)}: the {model.platform} pins "
        f"went to [{base_prefix}dependencies] and [{base_prefix}pypi-dependencies]{kept}"
    )
    return base, base_prefix, [note]


def _merge_pins(
    base: Any,
    name: str,
    wanted: dict[str, Any],
    notes_by_key: dict[str, str],
    *,
    path: str,
    prefix: str,
) -> list[str]:
    """Table *name* of *base* with the *wanted* pins set; notes for replaced loose specs."""
    if name not in base:
        # One parse of the whole new table: tomlkit's per-key appends are quadratic.
        snippet = "\n".join(table_lines(name, wanted, notes_by_key)) + "\n"
        base[name] = tomlkit.parse(snippet)[name]
        return []
    notes: list[str] = []
    table = _table(base, name, path=path, prefix=prefix)
    for key, value in wanted.items():
        old = _upsert(table, key, value)
        if old is not None and not _is_pin(old):
            notes.append(
                f"{path}: replaced {prefix}{name}.{key} = {_show(old)} (not an exact "
                f"pin) by the exported {_show(value)}"
            )
    for key, note in notes_by_key.items():
        if key in table:
            _set_comment(table, key, note)
    return notes


def _merge_activation(base: Any, wanted: dict[str, Any], *, path: str, prefix: str) -> None:
    activation = _table(base, "activation", path=path, prefix=prefix, super_table=True)
    env = _table(activation, "env", path=path, prefix=f"{prefix}activation.")
    for key in [k for k in env if k in _OWNED_VARIABLES and k not in wanted]:
        del env[key]  # ours, and no longer true of the environment
    for key, value in wanted.items():
        _upsert(env, key, value)


def _remove_own_top_level(root: Any, data: dict[str, Any]) -> list[str]:
    """Remove the top-level entries written exactly as this export writes them for its platform:
    an earlier export put them there when the workspace had only that platform, and left there
    they would apply to every platform (linux-64 builds on osx-arm64). Anything else stays, an
    equal value written by hand (other spacing, key order) included.

    :returns: the removed entries (``dependencies.python``), for the note.
    """
    removed: list[str] = []
    places: list[tuple[Any, str, dict[str, Any]]] = [
        (root, name, data[name]) for name in ("dependencies", "pypi-dependencies") if name in data
    ]
    activation = root.get("activation")
    if "activation" in data and isinstance(activation, (Table, InlineTable, Container)):
        places.append((activation, "env", data["activation"]["env"]))
    for parent, name, wanted in places:
        table = parent.get(name)
        if not isinstance(table, (Table, InlineTable, Container)):
            continue
        ours = [k for k in table if k in wanted and _as_written(table.item(k), wanted[k])]
        for key in ours:
            del table[key]
            removed.append(f"activation.env.{key}" if name == "env" else f"{name}.{key}")
        if ours and not table:
            del parent[name]  # emptied by us: no empty table left behind
            if parent is activation and not activation:
                del root["activation"]
    return removed


def _as_written(item: Any, value: Any) -> bool:
    """Whether *item*'s text is exactly what an export writes for *value*: :func:`render`'s
    form or tomlkit's (an earlier ``--update``); a comment after it does not matter."""
    if not isinstance(item, Item) or isinstance(item, Table):
        return False
    return item.as_string().strip() in (toml_value(value), tomlkit.item(_item(value)).as_string())


def _show(value: Any) -> str:
    try:
        return toml_value(value)
    except TypeError:
        return repr(value)


def _is_pin(value: Any) -> bool:
    """An exact pin (``==1.0``, ``{ version = "==1.0", build = ... }``) or a file/URL source:
    what an export writes, and may replace without a note."""
    if isinstance(value, str):
        return value.startswith("==")
    if isinstance(value, dict):
        if any(key in value for key in ("path", "url", "git")):
            return True
        return str(value.get("version", "")).startswith("==")
    return False


def _prefix(kind: ManifestKind) -> str:
    return "tool.pixi." if kind == "pyproject" else ""


def _pixi_root(doc: tomlkit.TOMLDocument, *, kind: ManifestKind, path: str) -> Any:
    if kind == "pixi":
        return doc
    tool = _table(doc, "tool", path=path, prefix="", super_table=True)
    return _table(tool, "pixi", path=path, prefix="tool.", super_table=True)


def _table(parent: Any, key: str, *, path: str, prefix: str, super_table: bool = False) -> Any:
    if key not in parent:
        parent[key] = tomlkit.table(is_super_table=super_table)
        return parent[key]
    value = parent[key]
    if not isinstance(value, (Table, InlineTable, Container)):
        found = "an array" if isinstance(value, (list, Array)) else f"a {type(value).__name__}"
        raise ExportError(f"cannot update {path!r}: {prefix}{key} must be a table, found {found}")
    return value


def _upsert(table: Any, key: str, value: Any) -> Any:
    """Set *key* to *value*; the plain value it replaced, or ``None`` (absent or unchanged)."""
    current = table.get(key)
    plain = current.unwrap() if isinstance(current, Item) else current
    if plain == value:
        return None  # unchanged: keep the user's exact formatting
    table[key] = _item(value)
    return plain


def _merge_channels(workspace: Any, channels: list[str]) -> None:
    if "channels" not in workspace:
        workspace["channels"] = _item(channels)
        return
    existing = workspace["channels"]
    present = {
        normalize_channel(str(c if not isinstance(c, dict) else c.get("channel", "")))
        for c in existing
    }
    for channel in channels:
        if normalize_channel(channel) not in present:
            existing.append(channel)


def _subdir_of(entry: Any) -> str | None:
    if isinstance(entry, str):
        return entry
    if isinstance(entry, dict):
        value = entry.get("platform")
        return str(value) if value is not None else None
    return None


def _merge_platform(workspace: Any, entry: str | dict[str, Any], *, path: str) -> None:
    subdir = entry if isinstance(entry, str) else entry["platform"]
    if "platforms" not in workspace:
        workspace["platforms"] = _item([entry])
        return
    platforms = workspace["platforms"]
    if not isinstance(platforms, Array):
        raise ExportError(f"cannot update {path!r}: workspace platforms is not an array")
    matches = [i for i, e in enumerate(platforms) if _subdir_of(e) == subdir]
    if isinstance(entry, str):
        if not matches:
            platforms.append(entry)
        return
    with_cuda = [i for i in matches if isinstance(platforms[i], dict) and "cuda" in platforms[i]]
    if with_cuda:
        _update_rich(platforms, with_cuda[0], entry)
    elif len(matches) == 1:
        _update_rich(platforms, matches[0], entry)
    else:
        platforms.append(_item(entry))


def _update_rich(platforms: Array, index: int, entry: dict[str, Any]) -> None:
    current = platforms[index]
    if isinstance(current, str):
        platforms[index] = _item(entry)
        return
    table = current
    for key, value in entry.items():
        if key == "cuda" and isinstance(value, str) and isinstance(table.get("cuda"), dict):
            # Keep a GPU architecture the user declared; only the driver is ours to raise.
            old = table["cuda"].unwrap() if isinstance(table["cuda"], Item) else table["cuda"]
            _upsert(table, key, {**old, "driver": value})
        else:
            _upsert(table, key, value)


def _merge_options(options: Any, wanted: dict[str, Any]) -> None:
    for key, value in wanted.items():
        if isinstance(value, list) and key in options:
            existing = options[key]
            plain = existing.unwrap() if isinstance(existing, Item) else existing
            for element in value:
                if element not in plain:
                    existing.append(_item(element))
        else:
            _upsert(options, key, value)


def _item(value: Any) -> Any:
    """A tomlkit value: dicts become inline tables (recursively), lists arrays."""
    if isinstance(value, dict):
        table = tomlkit.inline_table()
        for key, inner in value.items():
            table[key] = _item(inner)
        return table
    if isinstance(value, list):
        array = tomlkit.array()
        for inner in value:
            array.append(_item(inner))
        return array
    return value


def _set_comment(table: Table | Container, key: str, comment: str) -> None:
    item = table.item(key)
    if isinstance(item, Item) and item.trivia.comment.lstrip("# ").strip() != comment.strip():
        item.comment(comment)  # an unchanged comment keeps the user's spacing
