"""Applying an export to an existing ``pixi.toml`` or ``pyproject.toml`` ``[tool.pixi]`` in place,
with tomlkit. The export changes only entries it wrote itself, which end with the
``# variant-bridge`` marker (:data:`~.render.MARKER`); everything else is the user's and stays
byte for byte in its table. A missing entry is added (marked); an entry of the user's that the
export would write differently is left as it is, and a note says which value the export wants and
why. A workspace with other platforms gets the pins in ``[target.<subdir>.*]``; top-level entries
are never moved, except the export's own (docs/share.md, "Updating an existing manifest").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import tomlkit
from tomlkit.exceptions import TOMLKitError
from tomlkit.items import Array

from variant_bridge.errors import ExportError
from variant_bridge.export.channels import normalize_channel
from variant_bridge.export.model import ExportModel
from variant_bridge.export.pixi_toml.items import (
    TABLES,
    add_all_marked,
    add_marked,
    as_written,
    has_comments,
    is_owned,
    plain,
    set_marked,
    table_at,
    toml_item,
)
from variant_bridge.export.pixi_toml.judge import Judge
from variant_bridge.export.pixi_toml.render import (
    MIN_PIXI,
    activation,
    check_declarable,
    comments,
    table_lines,
    to_dict,
    toml_value,
)
from variant_bridge.export.pixi_toml.render import notes as pixi_notes
from variant_bridge.uv_settings import EXPORTED_PINS_VARIABLE, exported_pins_value

__all__ = [
    "ManifestKind",
    "ManifestUpdate",
    "apply",
    "manifest_kind",
    "own_copies",
    "parse",
    "update",
]

ManifestKind = Literal["pixi", "pyproject"]


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


def update(
    text: str,
    model: ExportModel,
    *,
    kind: ManifestKind,
    path: str = "pixi.toml",
    feature: str | None = None,
) -> str:
    """*text* (a pixi.toml or a pyproject.toml) with the export applied (see :func:`apply`).

    :raises ExportError: see :func:`apply`.
    """
    return apply(text, model, kind=kind, path=path, feature=feature).text


def apply(
    text: str,
    model: ExportModel,
    *,
    kind: ManifestKind,
    path: str = "pixi.toml",
    feature: str | None = None,
) -> ManifestUpdate:
    """*text* (a pixi.toml or a pyproject.toml) with the export applied (module docstring).

    :param feature: the pixi feature whose tables get the environment's entries
        (``[feature.<name>.pypi-dependencies]``, its ``pypi-options``, ``activation``,
        ``system-requirements`` and ``target`` tables): an environment other than ``default``
        is its features, and the top-level tables (the default feature) would change every
        environment. Its driver floor goes to the feature's ``[system-requirements]``, never to
        the workspace's platform entry, which every environment shares. ``None``: the top level.
    :raises ExportError: *text* is not TOML, a table we must edit has another type, the
        workspace does not list the exported platform and the platforms are the user's, or the
        wheels need a platform pixi cannot declare.
    """
    check_declarable(model)
    doc = parse(text, path=path)
    editor = _Editor(path, _prefix(kind), Judge(model))
    root = _pixi_root(doc, kind=kind, path=path)
    if feature is None:
        rich = model.strict_host_requirements or _uses_rich_platforms(root)
    else:
        rich = model.strict_host_requirements
    data = to_dict(model, rich=rich)
    workspace = editor.workspace(root, model, data, kind=kind)
    scope = root
    if feature is not None:
        features = editor.table(root, "feature", editor.prefix, super_table=True)
        scope = editor.table(features, feature, f"{editor.prefix}feature.", super_table=True)
        editor.prefix = f"{editor.prefix}feature.{feature}."
    if "system-requirements" in data or "system-requirements" in scope:
        editor.system_requirements(scope, data.get("system-requirements", {}))
    base, base_prefix = editor.pin_tables(scope, workspace, model, data)
    reasons = comments(model)
    for name in ("dependencies", "pypi-dependencies"):
        wanted = data.get(name, {})
        if base is not scope:
            # A top-level entry of the user's applies on this platform too: it is judged, and
            # the export adds no target entry that would override it.
            wanted = editor.judge_top_level(scope, name, wanted)
        if wanted or name in base:
            editor.merge(base, name, wanted, reasons[name], prefix=base_prefix)
    if "pypi-options" in data or "pypi-options" in scope:
        editor.options(scope, data.get("pypi-options", {}))
    editor.activation(base, activation(model, rich=rich), prefix=base_prefix)
    notes = [*editor.notes, *(f"{path}: {n}" for n in pixi_notes(model, rich=rich))]
    return ManifestUpdate(_spaced(tomlkit.dumps(doc), text), tuple(notes))


def _uses_rich_platforms(root: Any) -> bool:
    """Whether the export declares a rich platform entry here: the workspace (or project) lists
    one already, or has no platforms yet (the export writes them, as in a new manifest). A
    manifest of plain subdirs gets ``[system-requirements]`` instead."""
    for key in ("workspace", "project"):
        table = root.get(key)
        if not isinstance(table, TABLES):
            continue
        platforms = table.get("platforms")
        if platforms is None:
            return True
        return isinstance(platforms, (list, Array)) and any(
            isinstance(plain(e), dict) for e in platforms
        )
    return True


def _spaced(text: str, original: str) -> str:
    """*text* with a blank line between the update's new lines and a table header (tomlkit puts
    a new table right after the previous table's last line, and the next table right after it,
    when the tables it extends are not the file's last); the user's own lines are not touched."""
    known = set(original.splitlines())
    out: list[str] = []
    for line in text.splitlines(keepends=True):
        header = line.startswith("[")
        before = out[-1].rstrip("\r\n") if out else ""
        added = line.rstrip("\r\n") not in known or before not in known
        if header and before.strip() and added:
            out.append("\n")
        out.append(line)
    return "".join(out)


@dataclass(slots=True)
class _Editor:
    """The edits of one update: the file's name and ``[tool.pixi]`` prefix for messages, what
    the user's own entries are judged against, and the notes."""

    path: str
    prefix: str
    judge: Judge
    notes: list[str] = field(default_factory=list)

    def note(self, text: str) -> None:
        self.notes.append(f"{self.path}: {text}")

    def table(self, parent: Any, key: str, prefix: str, *, super_table: bool = False) -> Any:
        return table_at(parent, key, path=self.path, prefix=prefix, super_table=super_table)

    # -- the workspace -------------------------------------------------------------------------

    def workspace(
        self, root: Any, model: ExportModel, data: dict[str, Any], *, kind: ManifestKind
    ) -> Any:
        """The workspace (or, before pixi 0.40, project) table, with the export's channels,
        platform entry and minimum pixi where they are the export's to write (and its name
        when the export creates the table)."""
        key = "workspace" if "workspace" in root or "project" not in root else "project"
        new = key not in root
        workspace = self.table(root, key, self.prefix)
        where = f"{self.prefix}{key}"
        if kind == "pixi" and new:
            add_marked(workspace, "name", model.name)  # else pixi names it after the folder
        self.channels(workspace, data["workspace"]["channels"], where)
        rich = self.platform(workspace, data["workspace"]["platforms"][0], where)
        if rich and "requires-pixi" not in workspace:
            add_marked(workspace, "requires-pixi", f">={MIN_PIXI}")
        return workspace

    def channels(self, workspace: Any, channels: list[str], where: str) -> None:
        if "channels" not in workspace:
            add_marked(workspace, "channels", channels)
            return
        existing = workspace["channels"]
        present = {
            normalize_channel(str(c if not isinstance(c, dict) else c.get("channel", "")))
            for c in existing
        }
        missing = [c for c in channels if normalize_channel(c) not in present]
        if not missing:
            return
        if is_owned(workspace, "channels"):
            for channel in missing:
                existing.append(channel)
            return
        self.note(
            f"{where}.channels is yours and does not list {', '.join(missing)}, which the "
            "exported packages come from: add it to solve the pins"
        )

    def platform(self, workspace: Any, entry: str | dict[str, Any], where: str) -> bool:
        """Set the exported subdir's platform entry where it is the export's; returns whether a
        rich entry was written.

        :raises ExportError: the user's platforms do not list the subdir at all.
        """
        subdir = entry if isinstance(entry, str) else entry["platform"]
        if "platforms" not in workspace:
            add_marked(workspace, "platforms", [entry])
            return not isinstance(entry, str)
        platforms = workspace["platforms"]
        if not isinstance(platforms, Array):
            raise ExportError(f"cannot update {self.path!r}: {where}.platforms is not an array")
        matches = [i for i, e in enumerate(platforms) if _subdir_of(e) == subdir]
        if is_owned(workspace, "platforms"):
            if not matches:
                platforms.append(toml_item(entry))
            elif plain(platforms[matches[0]]) != entry:
                platforms[matches[0]] = toml_item(entry)
            return not isinstance(entry, str)
        if not matches:
            raise ExportError(
                f"cannot update {self.path!r}: {where}.platforms is yours and does not list "
                f"{subdir}, the exported environment's platform: add it (e.g. `pixi workspace "
                f"platform add {subdir}`) and run the export again"
            )
        if not isinstance(entry, str) and not any(
            _declares(plain(platforms[i]), entry) for i in matches
        ):
            self.note(
                f"{where}.platforms is yours, left as it is: the export would declare "
                f"{toml_value(entry)} for {subdir} (what the environment needs)"
            )
        return False

    # -- where the pins go ---------------------------------------------------------------------

    def pin_tables(
        self, root: Any, workspace: Any, model: ExportModel, data: dict[str, Any]
    ) -> tuple[Any, str]:
        """The top level, or ``[target.<subdir>]`` when the workspace declares other subdirs
        too; then the export's own top-level pins for this platform move there (a note says
        so) and every other top-level entry stays."""
        others = sorted(
            {str(s) for s in map(_subdir_of, workspace.get("platforms", [])) if s}
            - {model.platform}
        )
        if not others:
            return root, self.prefix
        target = self.table(root, "target", self.prefix, super_table=True)
        base_prefix = f"{self.prefix}target.{model.platform}."
        base = self.table(target, model.platform, f"{self.prefix}target.", super_table=True)
        wanted = {
            "dependencies": data.get("dependencies", {}),
            "pypi-dependencies": data.get("pypi-dependencies", {}),
            "activation.env": dict(data.get("activation", {}).get("env", {})),
        }
        moved = _remove_own(root, wanted)
        if moved:
            self.note(
                f"the workspace also declares {', '.join(others)}: the export's own top-level "
                f"pins for {model.platform} moved to [{base_prefix}*] ({', '.join(moved)})"
            )
        return base, base_prefix

    # -- tables of entries ---------------------------------------------------------------------

    def merge(
        self, base: Any, name: str, wanted: dict[str, Any], reasons: dict[str, str], *, prefix: str
    ) -> None:
        """Table *name* of *base*: the export's entries set (added when missing, rewritten when
        marked, removed when marked and no longer wanted); the user's left, judged."""
        if name not in base:
            # One parse of the whole new table: tomlkit's per-key appends are quadratic.
            snippet = "\n".join(table_lines(name, wanted, reasons)) + "\n"
            base[name] = tomlkit.parse(snippet)[name]
            return
        table = self.table(base, name, prefix)
        for key in [k for k in table if k not in wanted and is_owned(table, k)]:
            del table[key]  # the export's, and no longer in the environment
        missing: dict[str, Any] = {}
        for key, value in wanted.items():
            if key not in table:
                missing[key] = value
            elif is_owned(table, key):
                set_marked(table, key, value, reasons.get(key))
            else:
                self.judge_user(name, key, table.item(key), value, prefix)
        add_all_marked(table, missing, reasons)

    def judge_top_level(self, root: Any, name: str, wanted: dict[str, Any]) -> dict[str, Any]:
        """*wanted* without the keys the user's top-level table *name* has (judged here)."""
        table = root.get(name)
        if not isinstance(table, TABLES):
            return wanted
        theirs = [k for k in wanted if k in table and not is_owned(table, k)]
        for key in theirs:
            self.judge_user(name, key, table.item(key), wanted[key], self.prefix)
        return {k: v for k, v in wanted.items() if k not in theirs}

    def judge_user(self, name: str, key: str, item: Any, wanted: Any, prefix: str) -> None:
        why = self.judge.why(name, key, plain(item), wanted)
        if why is not None:
            self.note(
                f"{prefix}{name}.{key} = {as_written(item)} is yours (no `# variant-bridge` "
                f"marker), left as it is: {why}; the export would write {toml_value(wanted)}"
            )

    def system_requirements(self, root: Any, wanted: dict[str, str]) -> None:
        """``[system-requirements]``: the driver floor (and glibc) where the entry is the
        export's; the user's own judged (a lower driver lets pixi solve for a machine the
        wheels do not run on)."""
        table = self.table(root, "system-requirements", self.prefix)
        where = f"{self.prefix}system-requirements"
        for key in [k for k in table if k not in wanted and is_owned(table, k)]:
            del table[key]
        for key, value in wanted.items():
            if key not in table:
                add_marked(table, key, value)
            elif is_owned(table, key):
                set_marked(table, key, value)
            elif _below(plain(table.item(key)), value):
                self.note(
                    f"{where}.{key} = {as_written(table.item(key))} is yours, left as it is: the "
                    f"environment needs at least {value}, and pixi solves for the declared value"
                )
        if not table and not has_comments(table):
            del root["system-requirements"]

    def options(self, root: Any, wanted: dict[str, Any]) -> None:
        """``[pypi-options]``: the index keys the export owns, find-links merged. The user's
        ``index-url`` is never replaced: the export's indexes are extra ones."""
        options = self.table(root, "pypi-options", self.prefix)
        for key in [k for k in options if k not in wanted and is_owned(options, k)]:
            del options[key]  # an earlier export's (an index-url it no longer writes)
        for key, value in wanted.items():
            if key not in options:
                add_marked(options, key, value)
                continue
            current = plain(options.item(key))
            if current == value:
                continue
            owned = is_owned(options, key)
            if isinstance(value, list) and isinstance(current, list):
                missing = [v for v in value if v not in current]
                if owned:
                    for element in missing:
                        options[key].append(toml_item(element))
                elif missing:
                    self.note(
                        f"{self.prefix}pypi-options.{key} is yours and lacks "
                        f"{', '.join(map(toml_value, missing))}, where the exported wheels are"
                    )
            elif owned:
                set_marked(options, key, value)
            else:
                self.note(
                    f"{self.prefix}pypi-options.{key} = {as_written(options.item(key))} is "
                    f"yours, left as it is; the export used {toml_value(value)}"
                )
        if not options and not has_comments(options):
            del root["pypi-options"]

    def activation(self, base: Any, wanted: dict[str, str], *, prefix: str) -> None:
        """``[activation.env]``: the pins for uv. A variable the user set stays (noted); only
        the pins the export owns are listed in :data:`EXPORTED_PINS_VARIABLE`."""
        activation = base.get("activation")
        if not wanted and not isinstance(activation, TABLES):
            return
        activation = self.table(base, "activation", prefix, super_table=True)
        # Inside the user's own [activation] table, the new sub-table sits before what follows.
        spaced = "env" not in activation and not activation.is_super_table()
        env = self.table(activation, "env", f"{prefix}activation.")
        ours = self.own_pins(env, wanted, prefix)
        merged = dict(ours)
        if ours:
            merged[EXPORTED_PINS_VARIABLE] = exported_pins_value(ours.items())
        for key in [k for k in env if k not in merged and is_owned(env, k)]:
            del env[key]
        for key, value in merged.items():
            if key not in env:
                add_marked(env, key, value)
            elif is_owned(env, key):
                set_marked(env, key, value)
        if spaced and env:
            env.add(tomlkit.nl())
        if not env and not has_comments(env):
            del activation["env"]
            if not activation and not has_comments(activation):
                del base["activation"]

    def own_pins(self, env: Any, wanted: dict[str, str], prefix: str) -> dict[str, str]:
        """The pins of *wanted* the export may write: not those the user set (noted)."""
        ours: dict[str, str] = {}
        for key, value in wanted.items():
            if key == EXPORTED_PINS_VARIABLE:
                continue
            if key in env and not is_owned(env, key):
                if str(plain(env.item(key))) != value:
                    self.note(
                        f"{prefix}activation.env.{key} = {as_written(env.item(key))} is yours, "
                        "left as it is: it steers uv in the environment; the export would pin "
                        f"{value!r}"
                    )
                continue
            ours[key] = value
        return ours


def _remove_own(root: Any, wanted: dict[str, dict[str, Any]]) -> list[str]:
    """Remove the export's own top-level entries that it now writes per platform (they would
    apply to every platform); a table emptied by it goes too. Returns their dotted names."""
    removed: list[str] = []
    for dotted, keys in wanted.items():
        *parents, name = dotted.split(".")
        parent = root
        for part in parents:
            parent = parent.get(part) if isinstance(parent, TABLES) else None
        table = parent.get(name) if isinstance(parent, TABLES) else None
        if not isinstance(table, TABLES):
            continue
        ours = [
            k for k in table if is_owned(table, k) and (k in keys or dotted == "activation.env")
        ]
        for key in ours:
            del table[key]
            removed.append(f"{dotted}.{key}")
        if ours and not table and not has_comments(table):
            del parent[name]
            if parents and not parent and not has_comments(parent):
                del root[parents[0]]
    return removed


def _below(current: Any, wanted: str) -> bool:
    """Whether a declared version (``"12"``, ``12.0``, a libc table) is below *wanted*."""
    if isinstance(current, dict):
        current = current.get("version")
    try:
        have = tuple(int(p) for p in str(current).split("."))
        need = tuple(int(p) for p in wanted.split("."))
    except ValueError:
        return False
    return have < need


def _declares(current: Any, entry: dict[str, Any]) -> bool:
    """Whether a platform entry already declares what *entry* does (its name aside)."""
    if not isinstance(current, dict):
        return False
    return {k: v for k, v in current.items() if k != "name"} == entry


def own_copies(text: str, *, kind: ManifestKind, path: str) -> tuple[str, ...]:
    """The ``path`` of every PyPI entry the export owns (marked), in any table of the manifest
    (the top level, features, targets): the copies an earlier export wrote, which the export
    may replace when the build it pins changed (a user's entry, and so its file, is never
    touched)."""
    found: list[str] = []

    def walk(table: Any) -> None:
        for key in list(table):
            value = table[key]
            if not isinstance(value, TABLES):
                continue
            if key != "pypi-dependencies":
                walk(value)
                continue
            for name in list(value):
                entry = value[name]
                if is_owned(value, name) and isinstance(entry, TABLES) and "path" in entry:
                    found.append(str(entry["path"]))

    walk(_pixi_root(parse(text, path=path), kind=kind, path=path))
    return tuple(found)


def _prefix(kind: ManifestKind) -> str:
    return "tool.pixi." if kind == "pyproject" else ""


def _pixi_root(doc: tomlkit.TOMLDocument, *, kind: ManifestKind, path: str) -> Any:
    if kind == "pixi":
        return doc
    tool = table_at(doc, "tool", path=path, prefix="", super_table=True)
    return table_at(tool, "pixi", path=path, prefix="tool.", super_table=True)


def _subdir_of(entry: Any) -> str | None:
    if isinstance(entry, str):
        return entry
    if isinstance(entry, dict):
        value = entry.get("platform")
        return str(value) if value is not None else None
    return None
