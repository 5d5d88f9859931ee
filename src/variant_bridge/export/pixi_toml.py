"""pixi manifests: a new ``pixi.toml`` (:func:`to_dict`, :func:`render`) and in-place updates of an
existing ``pixi.toml`` or ``pyproject.toml`` ``[tool.pixi]`` (:func:`update`).

The CUDA requirement uses pixi's rich platforms (pixi >= 0.71; ``[system-requirements]`` is
deprecated there): ``platforms = [{ platform = "linux-64", cuda = "12.8" }]``, or
``cuda = { driver = "12.8", arch = "9.0" }`` when the wheels need a GPU architecture, plus
``archspec``/``glibc`` keys when needed. A manifest with a rich platform says
``requires-pixi = ">=0.71"``.

:func:`update` edits with tomlkit and touches only what an export owns: the workspace
``channels`` (missing ones appended), the platform entry for the environment's subdir, the
entries of ``[dependencies]``/``[pypi-dependencies]`` it pins, the index keys of
``[pypi-options]`` and the ``NV_VARIANT_PROVIDER_FORCE_*`` keys of ``[activation.env]``. Every
other key, table, comment and the order of everything are left as they were. When the workspace
declares more platforms than the exported one, the pins and the activation variables go to the
exported platform's ``[target.<platform>.*]`` tables instead, since exact linux-64 builds are
wrong for osx-arm64; top-level entries written exactly as the export writes them (an earlier
single-platform export's) move there too.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

import tomlkit
from tomlkit.container import Container
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import Array, InlineTable, Item, Table

from variant_bridge.errors import ExportError
from variant_bridge.export.model import CondaDependency, ExportModel, PipRequirement
from variant_bridge.export.model import normalize_channel as _normalize

__all__ = [
    "MIN_PIXI",
    "ManifestKind",
    "ManifestUpdate",
    "apply",
    "manifest_kind",
    "platform_entry",
    "render",
    "to_dict",
    "update",
]

MIN_PIXI = "0.71"
"""The first pixi with rich platforms (``platforms = [{ platform = ..., cuda = ... }]``)."""

ManifestKind = Literal["pixi", "pyproject"]

_OWNED_VARIABLES = (
    "NV_VARIANT_PROVIDER_FORCE_CUDA_DRIVER_VERSION",
    "NV_VARIANT_PROVIDER_FORCE_SM_ARCH",
)


def manifest_kind(filename: str) -> ManifestKind:
    """``pyproject`` for a ``pyproject.toml``, else ``pixi``."""
    return "pyproject" if filename.rsplit("/", 1)[-1] == "pyproject.toml" else "pixi"


# -- plain data --------------------------------------------------------------------------------


def platform_entry(model: ExportModel) -> str | dict[str, Any]:
    """The ``workspace.platforms`` entry: a bare subdir, or a rich platform table."""
    d = model.platform_declaration
    if not d.is_rich:
        return d.subdir
    entry: dict[str, Any] = {"platform": d.subdir}
    if d.cuda is not None:
        entry["cuda"] = d.cuda if d.cuda_arch is None else {"driver": d.cuda, "arch": d.cuda_arch}
    if d.archspec is not None:
        entry["archspec"] = d.archspec
    if d.glibc is not None:
        entry["glibc"] = d.glibc
    return entry


def _dependency_value(dep: CondaDependency) -> str | dict[str, str]:
    if dep.build is None and dep.channel is None:
        return dep.version or "*"
    value = {"version": dep.version or "*"}
    if dep.build is not None:
        value["build"] = dep.build
    if dep.channel is not None:
        value["channel"] = dep.channel
    return value


def _local_path(url: str) -> str | None:
    if not url.startswith("file:"):
        return None
    from urllib.parse import unquote, urlsplit

    return unquote(urlsplit(url).path)


def _pypi_value(requirement: PipRequirement) -> str | dict[str, str]:
    if requirement.url is None:
        return f"=={requirement.version}"
    if requirement.copy is not None:
        return {"path": requirement.copy_relative or requirement.copy}
    path = _local_path(requirement.url)
    return {"path": path} if path is not None else {"url": requirement.url}


def _pypi_comment(requirement: PipRequirement) -> str | None:
    parts = []
    if requirement.label is not None:
        parts.append(f"variant {requirement.label}")
    if requirement.sha256:
        parts.append(f"sha256={requirement.sha256}")
    if requirement.url is None and requirement.label is not None:
        parts.append("NOT pinned to a file")
    return ", ".join(parts) or None


def _pypi_options(model: ExportModel) -> dict[str, Any]:
    options: dict[str, Any] = {}
    idx = model.index_options
    if idx.index_url:
        options["index-url"] = idx.index_url
    if idx.extra_index_urls:
        options["extra-index-urls"] = list(idx.extra_index_urls)
    if idx.find_links:
        options["find-links"] = [
            {"url": loc}
            if "://" in loc and not loc.startswith("file:")
            else {"path": _local_path(loc) or loc}
            for loc in idx.find_links
        ]
    return options


def to_dict(model: ExportModel) -> dict[str, Any]:
    """A new pixi manifest as plain data (what ``tomllib.loads`` of :func:`render` gives)."""
    workspace: dict[str, Any] = {
        "name": model.name,
        "channels": list(model.channels),
        "platforms": [platform_entry(model)],
    }
    if model.platform_declaration.is_rich:
        workspace["requires-pixi"] = f">={MIN_PIXI}"
    manifest: dict[str, Any] = {
        "workspace": workspace,
        "dependencies": {d.name: _dependency_value(d) for d in model.dependencies},
    }
    if model.pip:
        manifest["pypi-dependencies"] = {p.name: _pypi_value(p) for p in model.pip}
    options = _pypi_options(model)
    if options and model.pip:
        manifest["pypi-options"] = options
    if model.activation_env:
        manifest["activation"] = {"env": dict(model.activation_env)}
    return manifest


# -- rendering ---------------------------------------------------------------------------------


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


def header(model: ExportModel) -> list[str]:
    from variant_bridge.export.environment_yml import copies_lines, view_intro

    lines = [
        f"Produced by {model.producer}",
        f"from {model.origin} ({model.platform}).",
        view_intro(model, "[pypi-dependencies]"),
        *(f"  {line}" for line in model.view.lines()),
    ]
    d = model.platform_declaration
    if d.is_rich:
        lines.append(
            f"The {d.subdir} platform declares the lowest machine that satisfies the pinned "
            f"packages and the wheels' host requirements (needs pixi >= {MIN_PIXI})."
        )
    if model.host_requirements:
        lines.append("Host requirements implied by the variant wheels:")
        lines += [
            f"  {h.rattler_spec if len(h.rattler_spec) < 80 else h.spec}  <- " + ", ".join(h.wheels)
            for h in model.host_requirements
        ]
    if model.activation_env:
        lines.append(
            "[activation.env] tells uv's NVIDIA provider the declared platform (not the machine "
            "that exported it), so `uv pip install --preview-features wheel-variants` inside "
            "this environment chooses for it."
        )
    lines += copies_lines(model, "the [pypi-dependencies] paths")
    lines += [f"Note: {note}" for note in model.notes]
    return [" ".join(line.split()) if not line.startswith("  ") else line for line in lines]


def render(model: ExportModel) -> str:
    """A new pixi.toml text (with the comment header and per-line comments).

    Written directly rather than through tomlkit, whose table appends are quadratic (a
    1,000-package environment took 2 s); ``tomllib.loads(render(m)) == to_dict(m)`` is tested.
    """
    data = to_dict(model)
    comments = _comments(model)
    out = [f"# {line}".rstrip() for line in header(model)]
    for name, table in data.items():
        out.append("")
        if name == "activation":
            out += _table_lines("activation.env", table["env"], {})
        else:
            out += _table_lines(name, table, comments.get(name, {}))
    return "\n".join(out) + "\n"


def _comments(model: ExportModel) -> dict[str, dict[str, str]]:
    return {
        "dependencies": {d.name: d.comment for d in model.dependencies if d.comment},
        "pypi-dependencies": {p.name: c for p in model.pip if (c := _pypi_comment(p)) is not None},
    }


def _table_lines(name: str, table: dict[str, Any], notes: dict[str, str]) -> list[str]:
    out = [f"[{name}]"]
    for key, value in table.items():
        text = f"{_key(key)} = {_value(value)}"
        if key == "channels" and isinstance(value, list) and len(value) > 2:
            text = f"{_key(key)} = [\n" + "".join(f"  {_value(v)},\n" for v in value) + "]"
        note = notes.get(key)
        out.append(f"{text}  # {' '.join(note.split())}" if note else text)
    return out


_BARE_KEY_RE = re.compile(r"[A-Za-z0-9_-]+")


def _key(key: str) -> str:
    return key if _BARE_KEY_RE.fullmatch(key) else _string(key)


def _string(text: str) -> str:
    # A JSON string is a TOML basic string, except that TOML also wants DEL escaped.
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def _value(value: Any) -> str:
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, dict):
        if not value:
            return "{}"
        return "{ " + ", ".join(f"{_key(k)} = {_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def _set_comment(table: Table | Container, key: str, comment: str) -> None:
    item = table.item(key)
    if isinstance(item, Item) and item.trivia.comment.lstrip("# ").strip() != comment.strip():
        item.comment(comment)  # an unchanged comment keeps the user's spacing


# -- updating ----------------------------------------------------------------------------------


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
    try:
        doc = tomlkit.parse(text)
    except TOMLKitError as e:
        raise ExportError(f"cannot update {path!r}: not valid TOML ({e})") from e
    data = to_dict(model)
    prefix = _prefix(kind)
    root = _pixi_root(doc, kind=kind, path=path)
    workspace_key = "workspace" if "workspace" in root or "project" not in root else "project"
    workspace = _table(root, workspace_key, path=path, prefix=prefix)
    if kind == "pixi" and "name" not in workspace:
        workspace["name"] = model.name
    _merge_channels(workspace, data["workspace"]["channels"])
    _merge_platform(workspace, platform_entry(model), path=path)
    if model.platform_declaration.is_rich and "requires-pixi" not in workspace:
        workspace["requires-pixi"] = f">={MIN_PIXI}"
    others = sorted(
        {str(s) for s in map(_subdir_of, workspace["platforms"]) if s} - {model.platform}
    )
    base, base_prefix = root, prefix
    notes: list[str] = []
    if others:
        target = _table(root, "target", path=path, prefix=prefix, super_table=True)
        base_prefix = f"{prefix}target.{model.platform}."
        base = _table(
            target, model.platform, path=path, prefix=f"{prefix}target.", super_table=True
        )
        moved = _remove_own_top_level(root, data)
        kept = (
            f"; this export's earlier top-level pins moved there too ({', '.join(moved)}), "
            "the rest of the top-level tables was left as it was"
            if moved
            else "; the top-level tables were left as they were"
        )
        notes.append(
            f"{path}: the workspace also declares {', '.join(others)}: the {model.platform} pins "
            f"went to [{base_prefix}dependencies] and [{base_prefix}pypi-dependencies]{kept}"
        )
    comments = _comments(model)
    for name in ("dependencies", "pypi-dependencies"):
        if name not in data:
            continue
        if name not in base:
            # One parse of the whole new table: tomlkit's per-key appends are quadratic.
            snippet = "\n".join(_table_lines(name, data[name], comments[name])) + "\n"
            base[name] = tomlkit.parse(snippet)[name]
            continue
        table = _table(base, name, path=path, prefix=base_prefix)
        for key, value in data[name].items():
            old = _upsert(table, key, value)
            if old is not None and not _is_pin(old):
                notes.append(
                    f"{path}: replaced {base_prefix}{name}.{key} = {_show(old)} (not an exact "
                    f"pin) by the exported {_show(value)}"
                )
        for key, note in comments[name].items():
            if key in table:
                _set_comment(table, key, note)
    if "pypi-options" in data:
        options = _table(root, "pypi-options", path=path, prefix=prefix)
        _merge_options(options, data["pypi-options"])
    if "activation" in data:
        activation = _table(base, "activation", path=path, prefix=base_prefix, super_table=True)
        env = _table(activation, "env", path=path, prefix=f"{base_prefix}activation.")
        wanted = data["activation"]["env"]
        for key in [k for k in env if k in _OWNED_VARIABLES and k not in wanted]:
            del env[key]  # ours, and no longer true of the environment
        for key, value in wanted.items():
            _upsert(env, key, value)
    return ManifestUpdate(tomlkit.dumps(doc), tuple(notes))


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
    return item.as_string().strip() in (_value(value), tomlkit.item(_item(value)).as_string())


def _show(value: Any) -> str:
    try:
        return _value(value)
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
        _normalize(str(c if not isinstance(c, dict) else c.get("channel", ""))) for c in existing
    }
    for channel in channels:
        if _normalize(channel) not in present:
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
