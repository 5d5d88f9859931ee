"""One pixi manifest for a cluster's node classes: a named rich platform per class, what every
class shares at the top, each class's own pins under ``[target.<class>]`` (docs/clusters.md).

Each class's export is an :class:`~variant_bridge.export.model.ExportModel` whose
:attr:`~variant_bridge.export.model.ExportModel.platform_declaration` is the class's platform
entry (named after the class: pixi's ``[target.<name>]`` tables select platforms by name). A
dependency whose entry is the same in every class goes to ``[dependencies]`` /
``[pypi-dependencies]``; any other goes to the class's target table, as do its uv pins
(``[target.<class>.activation.env]``).

pixi checks a host against each platform entry in order and takes the first the host satisfies;
it checks the driver, the GPU and glibc as minimums, the CPU by presence only, and no AMD or
Intel GPU. :func:`class_notes` says when a class listed earlier would be taken on the nodes of a
later one; :func:`check_classes` refuses what pixi itself refuses (a name that is no platform name,
two names for one definition).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from packaging.version import Version

from variant_bridge.errors import ExportError, quote
from variant_bridge.export._header import copies_kind, implied_lines
from variant_bridge.export.model import ExportModel, PlatformDeclaration
from variant_bridge.export.pixi_toml.render import (
    MIN_PIXI,
    check_declarable,
    comments,
    platform_entry_of,
    table_lines,
    to_dict,
    unstated,
)
from variant_bridge.virtual_packages import KNOWN_PLATFORMS

__all__ = [
    "check_classes",
    "class_notes",
    "classes_to_dict",
    "render_classes",
]

_NAME_RE = re.compile(r"[a-zA-Z](?:[a-zA-Z0-9-]{0,62}[a-zA-Z0-9])?")
"""pixi's platform names (its JSON schema's pattern, at most 64 characters)."""
_RESERVED = frozenset({"linux", "macos", "osx", "unix", "win"})
_PIXI_DEFAULT_GLIBC = "2.28"


def check_classes(where: str, classes: Sequence[tuple[str, PlatformDeclaration]]) -> None:
    """Refuse classes pixi cannot hold in one manifest: a name that is no pixi platform name
    (``[target.<name>]`` selects by it), and two classes whose entries are the same definition
    (pixi refuses two names for one).

    :raises ExportError: naming the file and the class(es).
    """
    seen: dict[tuple[Any, ...], str] = {}
    for name, declaration in classes:
        if _NAME_RE.fullmatch(name) is None or name in _RESERVED or name in KNOWN_PLATFORMS:
            raise ExportError(
                f"{where}: class {quote(name)} cannot name a pixi platform (letters, digits and "
                "'-', starting with a letter, at most 64; not linux, osx, macos, unix, win or a "
                "conda platform): rename the class, or export one file per class "
                "(--format environment-yml or pylock)"
            )
        key = _definition(declaration)
        if key in seen:
            raise ExportError(
                f"{where}: classes {quote(seen[key])} and {quote(name)} declare the same pixi "
                f"platform ({_described(declaration)}), and pixi refuses two names for one "
                "definition: declare a fact that tells them apart (glibc, archspec, the GPU), or "
                "export one file per class (--format environment-yml or pylock)"
            )
        seen[key] = name


def _definition(d: PlatformDeclaration) -> tuple[Any, ...]:
    return (d.subdir, d.cuda, d.cuda_arch, d.archspec, d.glibc, tuple(sorted(d.raw)))


def _described(d: PlatformDeclaration) -> str:
    entry = _entry(d.name or d.subdir, d)
    return ", ".join(f"{k} {v}" for k, v in entry.items() if k != "name") or d.subdir


def _entry(name: str, declaration: PlatformDeclaration) -> dict[str, Any]:
    """The class's platform entry, always a table with its name (a class declaring nothing is
    still a platform of its own)."""
    return {"name": name, **platform_entry_of(declaration)}


def _at_least(lower: str | None, higher: str | None) -> bool:
    """Whether a host with *higher* (``None``: not declared) satisfies a declared *lower*."""
    if lower is None:
        return True
    if higher is None:
        return False
    try:
        return Version(higher) >= Version(lower)
    except ValueError:  # InvalidVersion, or a number past int()'s 4300 digits
        return higher == lower


def _satisfied_by(first: PlatformDeclaration, later: PlatformDeclaration) -> bool:
    """Whether every host pixi admits to *later* is also admitted to *first* (the same subdir;
    the driver, GPU and glibc as minimums; a CPU by presence; no AMD or Intel GPU checked)."""
    default = _PIXI_DEFAULT_GLIBC if first.subdir.startswith("linux") else None
    return (
        first.subdir == later.subdir
        and _at_least(first.cuda, later.cuda)
        and _at_least(first.cuda_arch, later.cuda_arch)
        and _at_least(first.glibc, later.glibc or default)
    )


def class_notes(classes: Sequence[tuple[str, ExportModel]]) -> list[str]:
    """What the manifest cannot say for the classes: a class pixi would take on the nodes of a
    later one, and each class's requirements its entry cannot state."""
    notes: list[str] = []
    declarations = [(name, model.platform_declaration) for name, model in classes]
    checks = (
        "it checks the driver, the GPU and glibc as minimums, a CPU by presence, no AMD or "
        "Intel GPU"
    )
    for i, (later, declaration) in enumerate(declarations):
        found = next(((n, d) for n, d in declarations[:i] if _satisfied_by(d, declaration)), None)
        if found is None:
            continue
        taken, first = found
        if _satisfied_by(declaration, first):
            notes.append(
                f"pixi cannot tell the nodes of classes {taken!r} and {later!r} apart ({checks}): "
                f"it takes the first platform a host satisfies, {taken!r}, on both; export one "
                "file per class for them (--format environment-yml or pylock), or declare a "
                "fact pixi checks"
            )
        else:
            notes.append(
                f"every node of class {later!r} also satisfies {taken!r}, listed before it, and "
                f"pixi takes the first platform a host satisfies ({checks}): list {later!r} "
                f"before {taken!r}"
            )
    for name, model in classes:
        notes += [
            f"class {name!r}: {', '.join(h.wheels)} needs {h.rattler_spec}, which its platform "
            "entry cannot state (pixi checks each declared virtual package as a minimum): stated "
            "in the header, not checked by pixi (--strict-host-requirements refuses instead)"
            for h in unstated(model, rich=True)
        ]
        notes += [f"class {name!r}: {note}" for note in model.notes]
    return notes


def classes_to_dict(name: str, classes: Sequence[tuple[str, ExportModel]]) -> dict[str, Any]:
    """The manifest as plain data (what ``tomllib.loads`` of :func:`render_classes` gives)."""
    per_class = [(n, to_dict(model)) for n, model in classes]
    channels = list(dict.fromkeys(c for _, d in per_class for c in d["workspace"]["channels"]))
    manifest: dict[str, Any] = {
        "workspace": {
            "name": name,
            "channels": channels,
            "platforms": [_entry(n, m.platform_declaration) for n, m in classes],
            "requires-pixi": f">={MIN_PIXI}",
        }
    }
    for table in ("dependencies", "pypi-dependencies"):
        shared = _shared([d.get(table, {}) for _, d in per_class])
        if shared:
            manifest[table] = shared
    options = next((d["pypi-options"] for _, d in per_class if "pypi-options" in d), None)
    if options:
        manifest["pypi-options"] = options
    targets: dict[str, Any] = {}
    for n, data in per_class:
        own: dict[str, Any] = {}
        for table in ("dependencies", "pypi-dependencies"):
            shared = manifest.get(table, {})
            rest = {k: v for k, v in data.get(table, {}).items() if k not in shared}
            if rest:
                own[table] = rest
        pins = data.get("activation", {}).get("env")
        if pins:
            own["activation"] = {"env": pins}
        if own:
            targets[n] = own
    if targets:
        manifest["target"] = targets
    return manifest


def _shared(tables: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The entries every class has, with the same value (in the first class's order)."""
    first, *rest = tables
    return {k: v for k, v in first.items() if all(t.get(k) == v for t in rest)}


def header(where: str, producer: str, classes: Sequence[tuple[str, ExportModel]]) -> list[str]:
    lines = [
        f"Produced by {producer}",
        f"from the node classes of {where}: one platform per class (pixi >= {MIN_PIXI}), each",
        "declaring what the class declares as far as pixi can state it; [target.<class>] holds",
        "each class's own pins, the tables above what every class shares.",
    ]
    for name, model in classes:
        has_variants = any(p.label is not None for p in model.pip)
        lines.append(
            f"Class {name} ({model.platform}): "
            + ("its variant wheels were chosen for" if has_variants else "no variant wheels; for")
        )
        lines += [f"  {line}" for line in model.view.lines()]
        if model.host_requirements:
            lines.append("  host requirements implied by its variant wheels:")
            lines += [
                f"    {h.rattler_spec if len(h.rattler_spec) < 80 else h.spec}  <- "
                + ", ".join(h.wheels)
                for h in model.host_requirements
            ]
        lines += [f"  {line}" for line in implied_lines(model, "in its dependencies")]
        missing = unstated(model, rich=True)
        if missing:
            lines.append("  not enforced by its platform entry (pixi cannot state them):")
            lines += [f"    {h.rattler_spec}  <- {', '.join(h.wheels)}" for h in missing]
        copied = [p for p in model.pip if p.copy is not None]
        if copied:
            lines.append(f"  its paths name {copies_kind(copied)} of the variant wheels:")
            lines += [f"    {p.reference} [{p.label}]" for p in copied]
    lines.append(
        "Entries marked `# variant-bridge` are the export's; remove the marker to make an "
        "entry yours."
    )
    lines += [f"Note: {note}" for note in class_notes(classes)]
    return lines


def render_classes(
    where: str, name: str, producer: str, classes: Sequence[tuple[str, ExportModel]]
) -> str:
    """The manifest's text: the comment header, then the tables, every entry marked.

    :raises ExportError: see :func:`check_classes`; in the strict mode, a class whose wheels
        need what its platform entry cannot state.
    """
    check_classes(where, [(n, m.platform_declaration) for n, m in classes])
    for _, model in classes:
        check_declarable(model)
    data = classes_to_dict(name, classes)
    reasons = [(n, comments(model)) for n, model in classes]
    out = [f"# {line}".rstrip() for line in header(where, producer, classes)]
    for table in ("workspace", "dependencies", "pypi-dependencies", "pypi-options"):
        if table in data:
            out.append("")
            out += table_lines(table, data[table], _first_reasons(reasons, table))
    for n, own in data.get("target", {}).items():
        notes = dict(reasons)[n]
        for table, entries in own.items():
            out.append("")
            if table == "activation":
                out += table_lines(f"target.{n}.activation.env", entries["env"], {})
            else:
                out += table_lines(f"target.{n}.{table}", entries, notes.get(table, {}))
    return "\n".join(out) + "\n"


def _first_reasons(
    reasons: Sequence[tuple[str, dict[str, dict[str, str]]]], table: str
) -> dict[str, str]:
    found: dict[str, str] = {}
    for _, per_table in reasons:
        for key, text in per_table.get(table, {}).items():
            found.setdefault(key, text)
    return found
